package parquet_test

import (
	"fmt"
	mrand "math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/parquet"
)

// appendRandom appends one random value of type t to b: lists of 0–4 elements, nulls one in
// nullOneIn (none when 0) where t allows them (a fixed-size list is never null: pqarrow
// refuses to write one).
func appendRandom(rng *mrand.Rand, b array.Builder, t arrow.DataType, nullOneIn int) {
	null := nullOneIn > 0 && rng.IntN(nullOneIn) == 0
	switch t := t.(type) {
	case *arrow.ListType, *arrow.LargeListType:
		lb := b.(interface {
			Append(bool)
			AppendNull()
			ValueBuilder() array.Builder
		})
		if null {
			lb.AppendNull()
			return
		}
		lb.Append(true)
		for range rng.IntN(5) {
			appendRandom(rng, lb.ValueBuilder(), t.(arrow.ListLikeType).Elem(), nullOneIn)
		}
	case *arrow.FixedSizeListType:
		fb := b.(*array.FixedSizeListBuilder)
		fb.Append(true)
		for range t.Len() {
			appendRandom(rng, fb.ValueBuilder(), t.Elem(), nullOneIn)
		}
	default:
		if null {
			b.AppendNull()
			return
		}
		switch vb := b.(type) {
		case *array.Float32Builder:
			vb.Append(float32(rng.IntN(2000)) / 8)
		case *array.Float64Builder:
			vb.Append(rng.NormFloat64())
		case *array.Int32Builder:
			vb.Append(rng.Int32())
		case *array.Int64Builder:
			vb.Append(rng.Int64() - 1<<62)
		case *array.BooleanBuilder:
			vb.Append(rng.IntN(3) == 0)
		default:
			panic(fmt.Sprintf("appendRandom: %T", b))
		}
	}
}

// TestNestedRaggedReadDirectly writes nested list columns — what ndarrow writes for ragged
// arrays of ragged rank two and three, and for variable rows of fixed-size cells — with and
// without nulls at every level and empty lists, and reads them through the direct path and
// through pqarrow: the same arrays, every column read directly.
func TestNestedRaggedReadDirectly(t *testing.T) {
	types := []arrow.DataType{
		arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float32)),
		arrow.LargeListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)),
		arrow.ListOf(arrow.LargeListOf(arrow.ListOf(arrow.FixedWidthTypes.Boolean))),
		arrow.ListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)),
		arrow.FixedSizeListOf(2, arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		arrow.LargeListOf(arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64))),
	}
	for ti, typ := range types {
		for _, nullOneIn := range []int{0, 5} {
			t.Run(fmt.Sprintf("%v/nulls-1-in-%d", typ, nullOneIn), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				rng := mrand.New(mrand.NewPCG(uint64(ti), uint64(nullOneIn)))
				b := array.NewBuilder(mem, typ)
				for range 3000 {
					appendRandom(rng, b, typ, nullOneIn)
				}
				col := b.NewArray()
				b.Release()
				schema := arrow.NewSchema([]arrow.Field{{Name: "r", Type: typ, Nullable: true}}, nil)
				rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
				col.Release()
				defer rec.Release()
				for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Snappy} {
					file := writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{Compression: c, RowGroupBytes: 16 << 10}, true)
					direct, err := parquet.NewReader(file, parquet.ReaderOptions{Allocator: mem, Parallelism: 1})
					require.NoError(t, err)
					general, err := parquet.NewReader(file, parquet.ReaderOptions{Allocator: mem, Parallelism: 1})
					require.NoError(t, err)
					parquet.ReadGeneral(general)
					require.Greater(t, direct.NumRowGroups(), 1)
					rows := int64(0)
					for i := range direct.NumRowGroups() {
						d, err := direct.ReadRowGroup(i)
						require.NoError(t, err)
						g, err := general.ReadRowGroup(i)
						require.NoError(t, err)
						assert.True(t, array.RecordEqual(d, g), "row group %d\n%v\n%v", i, d, g)
						want := array.NewSlice(rec.Column(0), rows, rows+d.NumRows())
						assert.True(t, array.Equal(want, d.Column(0)), "row group %d against what was written", i)
						want.Release()
						rows += d.NumRows()
						d.Release()
						g.Release()
					}
					assert.Equal(t, direct.NumRowGroups(), parquet.DirectReads(direct), "every row group read directly")
				}
			})
		}
	}
}

// TestDuckDBNestedLists reads DuckDB's nested lists (testdata/duckdb/README.md): a ragged
// array of ragged rank two with nulls at every level, and rows of DOUBLE[3] points, written
// PLAIN (ZSTD) and as data page v2 with BYTE_STREAM_SPLIT values. The direct path reads every
// column of both; the first equals pqarrow's read, the second (which pqarrow cannot decode)
// the first; the row lengths add up to what DuckDB counts (4089 and 7500).
func TestDuckDBNestedLists(t *testing.T) {
	read := func(file string, general bool) arrow.Record {
		b, err := os.ReadFile("testdata/duckdb/" + file)
		require.NoError(t, err)
		r, err := parquet.NewReader(b, parquet.ReaderOptions{Parallelism: 1})
		require.NoError(t, err)
		if general {
			parquet.ReadGeneral(r)
		}
		var recs []arrow.Record
		for i := range r.NumRowGroups() {
			rec, err := r.ReadRowGroup(i)
			require.NoError(t, err)
			recs = append(recs, rec)
		}
		if !general {
			require.Equal(t, r.NumRowGroups()*2, parquet.DirectReads(r), "%s: every column read directly", file)
		}
		return concat(t, recs)
	}
	plain, general, split := read("nested.parquet", false), read("nested.parquet", true), read("nested_v2.parquet", false)
	defer plain.Release()
	defer general.Release()
	defer split.Release()
	require.EqualValues(t, 3000, plain.NumRows())
	assert.True(t, array.RecordEqual(plain, general), "the direct path and pqarrow")
	assert.True(t, array.RecordEqual(plain, split), "PLAIN and BYTE_STREAM_SPLIT")
	for i, want := range []int64{4089, 7500} {
		l := plain.Column(i).(*array.List)
		total := int64(0)
		for r := range l.Len() {
			if l.IsValid(r) {
				start, end := l.ValueOffsets(r)
				total += end - start
			}
		}
		assert.Equal(t, want, total, plain.ColumnName(i))
	}
}

// nestedFile returns a Parquet file (pqarrow's, Snappy) of rows rows of two nested ragged
// columns, list<list<float32>> and large_list<fixed_size_list<int64, 2>>, with nulls one in
// nullOneIn where they may be.
func nestedFile(t testing.TB, rows, nullOneIn int) []byte {
	rng := mrand.New(mrand.NewPCG(uint64(rows), uint64(nullOneIn)))
	types := []arrow.DataType{
		arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float32)),
		arrow.LargeListOf(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64)),
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, typ := range types {
		b := array.NewBuilder(memory.DefaultAllocator, typ)
		for range rows {
			appendRandom(rng, b, typ, nullOneIn)
		}
		cols = append(cols, b.NewArray())
		b.Release()
		fields = append(fields, arrow.Field{Name: fmt.Sprint("r", i), Type: typ, Nullable: true})
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	return writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{Compression: parquet.Snappy}, true)
}
