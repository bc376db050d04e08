package parquet_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// stringColumn is rows strings of 10 to 120 bytes (random, seeded), every 50th null — or,
// with distinct > 0, drawn from distinct such strings — as a record of one column s.
func stringColumn(rows, distinct int) arrow.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	value := func() string {
		b := make([]byte, 10+rng.IntN(111))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	var pool []string
	for range distinct {
		pool = append(pool, value())
	}
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	defer bld.Release()
	for i := range rows {
		switch {
		case i%50 == 7:
			bld.AppendNull()
		case distinct > 0:
			bld.Append(pool[rng.IntN(distinct)])
		default:
			bld.Append(value())
		}
	}
	col := bld.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: col.DataType(), Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{col}, int64(rows))
}

// resultBytes is what a string array holds: its offsets, data and validity.
func resultBytes(a arrow.Array) int64 {
	s := a.(*array.String)
	n := int64(s.Len())
	return (n+1)*4 + int64(len(s.ValueBytes())) + (n+7)/8
}

// BenchmarkReadStrings reads a column of 1M strings of 10 to 120 bytes (about 64 MiB of
// values, every 50th null) written by pqarrow in one row group — PLAIN, and dictionary-encoded
// (4096 distinct strings), uncompressed and Snappy — through the direct path and through
// pqarrow alone (ReadGeneral); GB/s counts the result's bytes (offsets, data, validity),
// peak-MiB the heap above the start, peak/result the two's ratio.
func BenchmarkReadStrings(b *testing.B) {
	const rows = 1 << 20
	for _, kind := range []struct {
		name     string
		distinct int
	}{{"plain", 0}, {"dictionary", 4096}} {
		rec := stringColumn(rows, kind.distinct)
		result := resultBytes(rec.Column(0))
		for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
			var buf bytes.Buffer
			props := pq.NewWriterProperties(pq.WithCompression(codec), pq.WithDictionaryDefault(kind.distinct > 0),
				pq.WithMaxRowGroupLength(rows), pq.WithDictionaryPageSizeLimit(8<<20))
			w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			readBothWays(b, fmt.Sprintf("%s/%s", kind.name, codec), buf.Bytes(), result, func(b *testing.B) {
				b.ReportMetric(float64(result)/(1<<20), "result-MiB")
			})
		}
		rec.Release()
	}
}
