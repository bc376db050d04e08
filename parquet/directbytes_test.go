package parquet_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// bytesTable is rows rows of a string, binary, large_string and large_binary column each,
// nullable (every seventh row null) when nulls, of 0 to 40 bytes repeating every 50 rows, so a
// dictionary stays small.
func bytesTable(t testing.TB, rows int, nulls bool) arrow.Record {
	mem := memory.DefaultAllocator
	types := []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeBinary}
	fields := make([]arrow.Field, len(types))
	cols := make([]arrow.Array, len(types))
	for k, typ := range types {
		bld := array.NewBuilder(mem, typ)
		for i := range rows {
			if nulls && i%7 == 3 {
				bld.AppendNull()
				continue
			}
			v := strings.Repeat(string(rune('a'+k)), i%50%41) + fmt.Sprint(i%50)
			switch b := bld.(type) {
			case *array.StringBuilder:
				b.Append(v)
			case *array.LargeStringBuilder:
				b.Append(v)
			case *array.BinaryBuilder:
				b.Append([]byte(v))
			}
		}
		cols[k] = bld.NewArray()
		bld.Release()
		fields[k] = arrow.Field{Name: fmt.Sprintf("c%d", k), Type: typ, Nullable: nulls}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// bytesFile writes rec with pqarrow (the Arrow schema stored), in encoding enc (PLAIN with
// dictionary: dictionaries of dictLimit bytes, then PLAIN pages).
func bytesFile(t testing.TB, rec arrow.Record, codec compress.Compression, version pq.DataPageVersion, enc pq.Encoding, dict bool, dictLimit int64) []byte {
	var buf bytes.Buffer
	opts := []pq.WriterProperty{pq.WithCompression(codec), pq.WithDataPageSize(2 << 10), pq.WithDictionaryDefault(dict),
		pq.WithDataPageVersion(version), pq.WithMaxRowGroupLength(1500), pq.WithBatchSize(100), pq.WithDictionaryPageSizeLimit(dictLimit)}
	if !dict {
		opts = append(opts, pq.WithEncoding(enc))
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, pq.NewWriterProperties(opts...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestBytesReadDirectly: string, binary, large_string and large_binary columns, required and
// optional, in data pages v1 and v2, uncompressed or not, PLAIN, dictionary-encoded (wholly,
// or falling back to PLAIN partway), DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (arrow-go's
// writer), written by pqarrow, are read by the direct path, to what pqarrow reads (the direct
// path alone reads DELTA_BYTE_ARRAY: compared with itself there) and to the values written.
func TestBytesReadDirectly(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		rec := bytesTable(t, 4000, nulls)
		for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd} {
			for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
				for _, enc := range []struct {
					name      string
					enc       pq.Encoding
					dict      bool
					dictLimit int64
				}{
					{"PLAIN", pq.Encodings.Plain, false, 0},
					{"DELTA_LENGTH_BYTE_ARRAY", pq.Encodings.DeltaLengthByteArray, false, 0},
					{"DELTA_BYTE_ARRAY", pq.Encodings.DeltaByteArray, false, 0},
					{"RLE_DICTIONARY", pq.Encodings.Plain, true, 1 << 20},
					{"RLE_DICTIONARY then PLAIN", pq.Encodings.Plain, true, 300},
				} {
					name := fmt.Sprintf("nulls=%v/%s/v%d/%s", nulls, codec, version, enc.name)
					t.Run(name, func(t *testing.T) {
						b := bytesFile(t, rec, codec, version, enc.enc, enc.dict, enc.dictLimit)
						r, err := parquet.NewReader(b, parquet.ReaderOptions{})
						require.NoError(t, err)
						require.Equal(t, 3, r.NumRowGroups())
						assert.Equal(t, 4*r.NumRowGroups(), compareDirect(t, b, limits.Limits{}), "every column read directly")
						back := concat(t, readRowGroups(t, b, false))
						defer back.Release()
						assert.True(t, array.RecordEqual(rec, back), "the values written")
					})
				}
			}
		}
		rec.Release()
	}
}

// TestBytesCorpusReadDirectly: the string and binary columns of the corpus files (parquet-mr's,
// Impala's, Arrow C++'s, DuckDB's: PLAIN, PLAIN_DICTIONARY and RLE_DICTIONARY, data pages v1
// and v2, DELTA_LENGTH_BYTE_ARRAY; Snappy, ZSTD, GZIP, LZ4) are read by the direct path, to
// what pqarrow reads.
func TestBytesCorpusReadDirectly(t *testing.T) {
	for _, name := range []string{
		"duckdb/delta_v2.parquet", // DELTA_LENGTH_BYTE_ARRAY, v2, Snappy
		"pageindex/alltypes_tiny_pages.parquet",
		"pageindex/data_index_bloom_encoding_stats.parquet", // GZIP
		"pageindex/data_index_bloom_encoding_with_length.parquet",
		"take/cpp17-none.parquet",
		"take/cpp17-zstd.parquet",
		"parquet-testing/data/alltypes_plain.parquet", // PLAIN_DICTIONARY
		"parquet-testing/data/alltypes_plain.snappy.parquet",
		"parquet-testing/data/datapage_v2.snappy.parquet",      // RLE_DICTIONARY, v2
		"parquet-testing/data/delta_length_byte_array.parquet", // ZSTD
		"parquet-testing/data/hadoop_lz4_compressed.parquet",
		"parquet-testing/data/hadoop_lz4_compressed_larger.parquet",
		"parquet-testing/data/lz4_raw_compressed.parquet",
		"parquet-testing/data/lz4_raw_compressed_larger.parquet",
		"parquet-testing/data/non_hadoop_lz4_compressed.parquet",
		"parquet-testing/data/rle-dict-snappy-checksum.parquet",
	} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			all, err := parquet.NewReader(b, parquet.ReaderOptions{})
			require.NoError(t, err)
			var cols []string
			for _, f := range all.Schema().Fields() {
				switch f.Type.ID() {
				case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
					cols = append(cols, f.Name)
				}
			}
			require.NotEmpty(t, cols)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: cols})
			require.NoError(t, err)
			for rg := range r.NumRowGroups() {
				rec, err := r.ReadRowGroup(rg)
				require.NoError(t, err)
				rec.Release()
			}
			assert.Equal(t, len(cols)*r.NumRowGroups(), parquet.DirectReads(r), "%v read directly", cols)
			assert.Positive(t, compareDirect(t, b, limits.Limits{}))
		})
	}
}

// TestBytesLeaksNothing: what the direct path allocates for byte-array columns (offsets, data,
// validity) is released with the records. (Only the direct path's reader counts: arrow-go
// v17 keeps a buffer of some v2 pages.)
func TestBytesLeaksNothing(t *testing.T) {
	rec := bytesTable(t, 2000, true)
	defer rec.Release()
	for _, dict := range []bool{false, true} {
		for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			b := bytesFile(t, rec, compress.Codecs.Snappy, version, pq.Encodings.Plain, dict, 1<<20)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
			require.NoError(t, err)
			for rg := range r.NumRowGroups() {
				got, err := r.ReadRowGroup(rg)
				require.NoError(t, err)
				got.Release()
			}
			require.Equal(t, 4*r.NumRowGroups(), parquet.DirectReads(r))
			mem.AssertSize(t, 0)
		}
	}
}

// TestBytesWithinLimits: a column whose values would take more than MaxCopySize is not
// decoded by the direct path, which leaves it to the checks before pqarrow.
func TestBytesWithinLimits(t *testing.T) {
	rec := bytesTable(t, 4000, false)
	defer rec.Release()
	b := bytesFile(t, rec, compress.Codecs.Uncompressed, pq.DataPageV1, pq.Encodings.Plain, true, 1<<20)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Limits: limits.Limits{MaxCopySize: 40 << 10}})
	require.NoError(t, err)
	for rg := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(rg)
		if err != nil {
			assert.ErrorIs(t, err, limits.ErrExceeded)
			continue
		}
		rec.Release()
	}
}

// TestBytesExpansionBounded: a few kilobytes of DELTA_BYTE_ARRAY or dictionary pages that
// expand to megabytes of strings, in four columns, are bounded by what MaxCopySize leaves the
// row group — all its columns together, not each column alone.
func TestBytesExpansionBounded(t *testing.T) {
	mem := memory.NewGoAllocator()
	const rows = 3000
	prefix := strings.Repeat("p", 300)
	var cols []arrow.Array
	var fields []arrow.Field
	for k := range 4 {
		b := array.NewStringBuilder(mem)
		for i := range rows {
			b.Append(prefix + string(rune('a'+i%26)))
		}
		cols = append(cols, b.NewArray())
		b.Release()
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("s%d", k), Type: arrow.BinaryTypes.String})
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, rows)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	for _, enc := range []struct {
		name string
		enc  pq.Encoding
		dict bool
	}{{"DELTA_BYTE_ARRAY", pq.Encodings.DeltaByteArray, false}, {"RLE_DICTIONARY", pq.Encodings.Plain, true}} {
		b := bytesFile(t, rec, compress.Codecs.Snappy, pq.DataPageV1, enc.enc, enc.dict, 1<<20)
		require.Less(t, len(b), 64<<10, enc.name)
		r, err := parquet.NewReader(b, parquet.ReaderOptions{Limits: limits.Limits{MaxCopySize: 1 << 20}})
		require.NoError(t, err)
		_, err = r.ReadRowGroup(0) // 1500 rows × 301 bytes × 4 columns: 1.8 MB
		require.ErrorIs(t, err, limits.ErrExceeded, enc.name)
		r, err = parquet.NewReader(b, parquet.ReaderOptions{Limits: limits.Limits{MaxCopySize: 8 << 20}})
		require.NoError(t, err)
		got, err := r.ReadRowGroup(0)
		require.NoError(t, err, enc.name)
		assert.Equal(t, 4, parquet.DirectReads(r), enc.name)
		got.Release()
	}
}
