package parquet_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strings"
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
		case *array.Uint32Builder:
			vb.Append(rng.Uint32())
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
				for _, o := range []parquet.WriterOptions{
					{Compression: parquet.Uncompressed, RowGroupBytes: 16 << 10},
					{Compression: parquet.Snappy, RowGroupBytes: 16 << 10},
					{Compression: parquet.Uncompressed, RowGroupBytes: 16 << 10, PageBytes: 300}, // pages of a few rows
				} {
					file := writeRecords(t, []arrow.Record{rec}, o, true)
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

// TestNestedWrittenDirectly writes nested ragged columns (nulls at every level, empty lists,
// bools among them) with the direct writer: the file is pqarrow's in schema, row groups, value
// counts, null counts and statistics (sameFile), and reads back — through pqarrow and through
// the direct reader — as the rows written. A null fixed-size list is refused, naming its row.
func TestNestedWrittenDirectly(t *testing.T) {
	types := []arrow.DataType{
		arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float32)),
		arrow.LargeListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)),
		arrow.ListOf(arrow.LargeListOf(arrow.ListOf(arrow.FixedWidthTypes.Boolean))),
		arrow.ListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)),
		arrow.FixedSizeListOf(2, arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		arrow.LargeListOf(arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64))),
		arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Uint32)),
	}
	for ti, typ := range types {
		for _, nullOneIn := range []int{0, 4} {
			t.Run(fmt.Sprintf("%v/nulls-1-in-%d", typ, nullOneIn), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				rng := mrand.New(mrand.NewPCG(uint64(ti), 77))
				b := array.NewBuilder(mem, typ)
				for range 2500 {
					appendRandom(rng, b, typ, nullOneIn)
				}
				col := b.NewArray()
				b.Release()
				schema := arrow.NewSchema([]arrow.Field{{Name: "r", Type: typ, Nullable: true}}, nil)
				rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
				col.Release()
				defer rec.Release()
				for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
					opts := parquet.WriterOptions{Compression: c, RowGroupBytes: 12 << 10}
					var buf bytes.Buffer
					w, err := parquet.NewWriter(&buf, schema, opts)
					require.NoError(t, err)
					require.True(t, parquet.WritesDirectly(w))
					require.NoError(t, w.Write(rec))
					require.NoError(t, w.Close())
					direct := buf.Bytes()
					sameFile(t, direct, writeRecords(t, []arrow.Record{rec}, opts, true))
					for _, general := range []bool{true, false} {
						got := readRowGroups(t, direct, general)
						back := concat(t, got)
						assert.True(t, array.RecordEqual(rec, back), "read back (pqarrow alone: %v)", general)
						back.Release()
						for _, g := range got {
							g.Release()
						}
					}
				}
			})
		}
	}

	// a null fixed-size list inside a list: refused, as pqarrow refuses it
	typ := arrow.ListOf(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32))
	b := array.NewListBuilder(memory.DefaultAllocator, typ.Elem())
	defer b.Release()
	fb := b.ValueBuilder().(*array.FixedSizeListBuilder)
	ib := fb.ValueBuilder().(*array.Int32Builder)
	b.Append(true)
	fb.Append(true)
	ib.AppendValues([]int32{1, 2}, nil)
	b.Append(true)
	fb.Append(true)
	ib.AppendValues([]int32{3, 4}, nil)
	fb.AppendNull()
	ib.AppendValues([]int32{0, 0}, nil)
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "pts", Type: typ, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, 2)
	defer rec.Release()
	w, err := parquet.NewWriter(&bytes.Buffer{}, schema, parquet.WriterOptions{})
	require.NoError(t, err)
	err = w.Write(rec)
	require.ErrorIs(t, err, parquet.ErrUnsupported)
	require.ErrorContains(t, err, `column "pts", row 1: a null fixed-size list`)
}

// nestedTables are nested ragged columns without nulls, each alone in a table, as the direct
// writer writes them for Arrow C++ 17 to read (TestArrowCppReadsNestedWeWrite): a ragged
// array of ragged rank two (list<list<float32>>), of rank three (large_list<list<list<int64>>>)
// and variable rows of fixed-size cells (list<fixed_size_list<float64, 3>>), empty lists among
// them. Release them.
func nestedTables(t testing.TB, mem memory.Allocator) map[string]arrow.Record {
	out := map[string]arrow.Record{}
	for name, typ := range map[string]arrow.DataType{
		"list-list-f32":            arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float32)),
		"large-list-list-list-i64": arrow.LargeListOf(arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64))),
		"list-fixed3-f64":          arrow.ListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64)),
	} {
		rng := mrand.New(mrand.NewPCG(uint64(len(name)), 11))
		b := array.NewBuilder(mem, typ)
		for range 3000 {
			appendRandom(rng, b, typ, 0)
		}
		col := b.NewArray()
		b.Release()
		out[name] = array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "r", Type: typ, Nullable: true}}, nil), []arrow.Array{col}, int64(col.Len()))
		col.Release()
	}
	return out
}

// TestArrowCppReadsNestedWeWrite: Arrow C++ 17 read the nested tables the direct writer writes
// (nestedTables, row groups of 20 KiB, uncompressed and ZSTD) — testdata/arrow-cpp-17-parquet/
// read-ndarrow-nested.jsonl, recorded with `parquet_golden read FILE DIR`: each file's sha256,
// and the sha256 of the leaf values Arrow C++ dumped and of its row splits, every level's (as
// JSON, rebased to the column's start). The writer writes those bytes today, and ndarrow reads
// the same values and splits from them.
func TestArrowCppReadsNestedWeWrite(t *testing.T) {
	f, err := os.Open("testdata/arrow-cpp-17-parquet/read-ndarrow-nested.jsonl")
	require.NoError(t, err)
	defer f.Close()
	type record struct {
		File            string `json:"file"`
		FileSHA256      string `json:"file_sha256"`
		Rows            int64  `json:"rows"`
		Values          int64  `json:"nvals"`
		ValuesSHA256    string `json:"values_sha256"`
		RowSplitsSHA256 string `json:"row_splits_sha256"`
	}
	recorded := map[string]record{}
	dec := json.NewDecoder(f)
	for dec.More() {
		var r record
		require.NoError(t, dec.Decode(&r))
		recorded[r.File] = r
	}
	checked := 0
	for name, rec := range nestedTables(t, memory.DefaultAllocator) {
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
			file := name + "." + c.String() + ".parquet"
			want, ok := recorded[file]
			require.True(t, ok, file)
			checked++
			b := writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{Compression: c, RowGroupBytes: 20 << 10}, false)
			sum := sha256.Sum256(b)
			require.Equal(t, want.FileSHA256, hex.EncodeToString(sum[:]), "%s: not the bytes Arrow C++ read", file)
			got := readRowGroups(t, b, false)
			col := concat(t, got)
			for _, g := range got {
				g.Release()
			}
			require.Equal(t, want.Rows, col.NumRows())
			leaf := leafValues(t, col.Column(0))
			vs := sha256.Sum256(leaf)
			assert.Equal(t, want.ValuesSHA256, hex.EncodeToString(vs[:]), file)
			splits, err := json.Marshal(rowSplits(col.Column(0).Data()))
			require.NoError(t, err)
			ss := sha256.Sum256(splits)
			assert.Equal(t, want.RowSplitsSHA256, hex.EncodeToString(ss[:]), file)
			col.Release()
		}
		rec.Release()
	}
	assert.Equal(t, len(recorded), checked, "every recorded file written again")
}

// rowSplits returns the row splits of every list level of d, outer to inner, each from 0.
func rowSplits(d arrow.ArrayData) [][]int64 {
	var out [][]int64
	start, count := int64(d.Offset()), int64(d.Len())
	for {
		var splits []int64
		switch t := d.DataType().(type) {
		case *arrow.ListType:
			o := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[start : start+count+1]
			for _, v := range o {
				splits = append(splits, int64(v-o[0]))
			}
		case *arrow.LargeListType:
			o := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[start : start+count+1]
			for _, v := range o {
				splits = append(splits, v-o[0])
			}
		case *arrow.FixedSizeListType:
			for i := range count + 1 {
				splits = append(splits, i*int64(t.Len()))
			}
		default:
			return out
		}
		out = append(out, splits)
		child := d.Children()[0]
		first := splits[0]
		switch t := d.DataType().(type) {
		case *arrow.ListType:
			first = int64(arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[start])
		case *arrow.LargeListType:
			first = arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[start]
		case *arrow.FixedSizeListType:
			first = start * int64(t.Len())
		}
		start, count = int64(child.Offset())+first, splits[len(splits)-1]
		d = child
	}
}

// binaryTable is a fixed_size_binary(5) column with nulls and a fixed_size_list of two
// fixed_size_binary(3) without, of rows rows. Release it.
func binaryTable(t testing.TB, rows int, nulls bool) arrow.Record {
	rng := mrand.New(mrand.NewPCG(uint64(rows), 5))
	flat := array.NewFixedSizeBinaryBuilder(memory.DefaultAllocator, &arrow.FixedSizeBinaryType{ByteWidth: 5})
	defer flat.Release()
	pairs := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 2, &arrow.FixedSizeBinaryType{ByteWidth: 3})
	defer pairs.Release()
	inner := pairs.ValueBuilder().(*array.FixedSizeBinaryBuilder)
	for r := range rows {
		if nulls && r%7 == 3 {
			flat.AppendNull()
		} else {
			v := make([]byte, 5)
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			flat.Append(v)
		}
		pairs.Append(true)
		for range 2 {
			inner.Append([]byte{byte(r), byte(r >> 8), byte(rng.Uint32())})
		}
	}
	a, b := flat.NewArray(), pairs.NewArray()
	defer a.Release()
	defer b.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "flba5", Type: a.DataType(), Nullable: true}, {Name: "pairs", Type: b.DataType(), Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{a, b}, int64(rows))
}

// TestFixedSizeBinaryWrittenDirectly: fixed_size_binary columns, flat with nulls and in
// fixed-size lists, are written by the direct writer as pqarrow writes them (schema,
// statistics in unsigned byte order) and read back both ways; BYTE_STREAM_SPLIT of them, which
// pqarrow cannot read, reads back through the direct reader.
func TestFixedSizeBinaryWrittenDirectly(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		rec := binaryTable(t, 3000, nulls)
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Snappy} {
			opts := parquet.WriterOptions{Compression: c, RowGroupBytes: 10 << 10}
			var buf bytes.Buffer
			w, err := parquet.NewWriter(&buf, rec.Schema(), opts)
			require.NoError(t, err)
			require.True(t, parquet.WritesDirectly(w))
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())
			sameFile(t, buf.Bytes(), writeRecords(t, []arrow.Record{rec}, opts, true))
			for _, general := range []bool{true, false} {
				got := readRowGroups(t, buf.Bytes(), general)
				back := concat(t, got)
				assert.True(t, array.RecordEqual(rec, back), "pqarrow alone: %v", general)
				back.Release()
				for _, g := range got {
					g.Release()
				}
			}
			opts.Encoding = parquet.ByteStreamSplit
			split := writeRecords(t, []arrow.Record{rec}, opts, false)
			got := readRowGroups(t, split, false)
			back := concat(t, got)
			assert.True(t, array.RecordEqual(rec, back), "BYTE_STREAM_SPLIT, nulls %v", nulls)
			back.Release()
			for _, g := range got {
				g.Release()
			}
		}
		rec.Release()
	}
}

// TestArrowCppReadsFixedSizeBinaryWeWrite: Arrow C++ 17 read the fixed_size_binary table
// (binaryTable, 3000 rows, no nulls) the direct writer writes with ZSTD, PLAIN and
// BYTE_STREAM_SPLIT, every row group, restoring both types (`parquet_golden read`, which reads
// such columns whole and dumps no values of them): testdata/arrow-cpp-17-parquet/
// read-ndarrow-flba.jsonl. The writer writes those bytes today, and both read back the same.
func TestArrowCppReadsFixedSizeBinaryWeWrite(t *testing.T) {
	lines := readJSONLines(t, "testdata/arrow-cpp-17-parquet/read-ndarrow-flba.jsonl")
	rec := binaryTable(t, 3000, false)
	defer rec.Release()
	var files [][]byte
	for i, e := range []parquet.Encoding{parquet.Plain, parquet.ByteStreamSplit} {
		var want struct {
			File       string `json:"file"`
			FileSHA256 string `json:"file_sha256"`
			ArrowCpp   []struct {
				Name string `json:"name"`
				Type string `json:"type"`
				Rows int64  `json:"rows"`
			} `json:"arrow_cpp"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &want))
		require.Equal(t, "flba.zstd."+e.String()+".parquet", want.File)
		b := writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{Compression: parquet.Zstd, Encoding: e, RowGroupBytes: 10 << 10}, false)
		sum := sha256.Sum256(b)
		require.Equal(t, want.FileSHA256, hex.EncodeToString(sum[:]), "%s: not the bytes Arrow C++ read", want.File)
		require.Len(t, want.ArrowCpp, 2)
		assert.Equal(t, "fixed_size_binary[5]", want.ArrowCpp[0].Type)
		assert.Equal(t, "fixed_size_list<element: fixed_size_binary[3]>[2]", want.ArrowCpp[1].Type)
		assert.EqualValues(t, 3000, want.ArrowCpp[1].Rows)
		files = append(files, b)
	}
	plain, split := concat(t, readRowGroups(t, files[0], false)), concat(t, readRowGroups(t, files[1], false))
	defer plain.Release()
	defer split.Release()
	assert.True(t, array.RecordEqual(plain, split))
	assert.True(t, array.RecordEqual(rec, split))
}

// readJSONLines returns the lines of a JSON-lines file.
func readJSONLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
