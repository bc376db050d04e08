package parquet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pqparquet "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// everyTensorColumn is table's batch with the other column types the writer takes: a
// variable_shape_tensor, a plain fixed-size list, a nested list and a list of strings.
func everyTensorColumn(t *testing.T, mem memory.Allocator, rows int64) arrow.Record {
	base := table(t, mem, rows)
	defer base.Release()
	var tensors []*ndarray.Dense[int32]
	for i := range rows {
		d := ndarray.Must(ndarray.Arange[int32](0, int32(i%3*2), 1))
		tensors = append(tensors, ndarray.Must(d.Reshape(i%3, 2)))
	}
	vst, err := arrowtensor.NewVariableShapeTensorArray(mem, tensors, []string{"r", "c"})
	require.NoError(t, err)
	defer vst.Release()

	emb := array.NewFixedSizeListBuilder(mem, 3, arrow.PrimitiveTypes.Float64)
	defer emb.Release()
	nested := array.NewListBuilder(mem, arrow.ListOf(arrow.PrimitiveTypes.Int16))
	defer nested.Release()
	words := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	defer words.Release()
	for i := range rows {
		emb.Append(true)
		emb.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{float64(i), -float64(i), 0.5}, nil)
		nested.Append(true)
		inner := nested.ValueBuilder().(*array.ListBuilder)
		for j := range i % 3 {
			inner.Append(true)
			inner.ValueBuilder().(*array.Int16Builder).AppendValues(make([]int16, j), nil)
		}
		words.Append(true)
		for range i % 2 {
			words.ValueBuilder().(*array.StringBuilder).Append("w")
		}
	}
	cols := append(base.Columns(), vst, emb.NewArray(), nested.NewArray(), words.NewArray())
	for _, c := range cols[len(cols)-3:] {
		defer c.Release()
	}
	fields := append(base.Schema().Fields(),
		arrow.Field{Name: "shapes", Type: vst.DataType(), Nullable: true},
		arrow.Field{Name: "emb", Type: cols[len(cols)-3].DataType(), Nullable: true},
		arrow.Field{Name: "nested", Type: cols[len(cols)-2].DataType(), Nullable: true},
		arrow.Field{Name: "words", Type: cols[len(cols)-1].DataType(), Nullable: true})
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, rows)
}

func writeParquet(t testing.TB, rec arrow.Record, opts parquet.WriterOptions) []byte {
	var buf bytes.Buffer
	w, err := parquet.NewWriter(&buf, rec.Schema(), opts)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readAll reads every row group of b; the records must be released.
func readAll(t *testing.T, b []byte, opts parquet.ReaderOptions) (*arrow.Schema, []arrow.Record) {
	r, err := parquet.NewReader(b, opts)
	require.NoError(t, err)
	var recs []arrow.Record
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		require.NoError(t, err, "row group %d", i)
		assert.Equal(t, r.RowGroupRows(i), rec.NumRows())
		recs = append(recs, rec)
	}
	return r.Schema(), recs
}

func TestReadsWhatTheWriterWrote(t *testing.T) {
	for _, c := range []parquet.Compression{parquet.Zstd, parquet.Snappy, parquet.Gzip, parquet.Uncompressed} {
		for _, rows := range []int64{0, 7, 1000} {
			t.Run(fmt.Sprintf("%s/%d", c, rows), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				full := everyTensorColumn(t, mem, max(rows, 7))
				rec := full.NewSlice(0, rows)
				full.Release()
				defer rec.Release()
				b := writeParquet(t, rec, parquet.WriterOptions{Compression: c, Allocator: mem, RowGroupBytes: 4 << 10})

				schema, recs := readAll(t, b, parquet.ReaderOptions{Allocator: mem})
				for _, r := range recs {
					defer r.Release()
				}
				require.Equal(t, rec.Schema().NumFields(), schema.NumFields())
				for i, f := range rec.Schema().Fields() {
					assert.True(t, arrow.TypeEqual(f.Type, schema.Field(i).Type), "column %s: %s read as %s", f.Name, f.Type, schema.Field(i).Type)
					assert.Equal(t, f.Name, schema.Field(i).Name)
				}
				var start int64
				for _, got := range recs {
					want := rec.NewSlice(start, start+got.NumRows())
					for i := range want.Columns() {
						assert.True(t, array.Equal(want.Column(i), got.Column(i)), "rows %d+%d of %s:\n%v\n%v", start, got.NumRows(), want.ColumnName(i), want.Column(i), got.Column(i))
					}
					want.Release()
					start += got.NumRows()
				}
				assert.Equal(t, rows, start)
				if rows == 1000 {
					assert.Greater(t, len(recs), 1, "row groups of 4 KiB")
				}
			})
		}
	}
}

func TestColumnSelection(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := everyTensorColumn(t, mem, 20)
	defer rec.Release()
	b := writeParquet(t, rec, parquet.WriterOptions{Allocator: mem})

	schema, recs := readAll(t, b, parquet.ReaderOptions{Allocator: mem, Columns: []string{"words", "images"}})
	require.Len(t, recs, 1)
	defer recs[0].Release()
	assert.Equal(t, []string{"words", "images"}, []string{schema.Field(0).Name, schema.Field(1).Name})
	assert.True(t, array.Equal(rec.Column(0), recs[0].Column(1)))
	assert.True(t, array.Equal(rec.Column(5), recs[0].Column(0)))

	_, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{"nope"}})
	assert.ErrorIs(t, err, parquet.ErrNoColumn)
}

// leafBytes returns the leaf values of a column that starts at offset 0, as stored.
func leafBytes(arr arrow.Array) []byte {
	n := int64(arr.Len())
	for {
		switch a := arr.(type) {
		case array.ExtensionArray:
			arr = a.Storage()
			continue
		case array.ListLike:
			if n > 0 {
				_, n = a.ValueOffsets(int(n) - 1)
			}
			arr = a.ListValues()
			continue
		}
		break
	}
	d := arr.Data()
	w := int64(arr.DataType().(arrow.FixedWidthDataType).BitWidth() / 8)
	return d.Buffers()[1].Bytes()[int64(d.Offset())*w : (int64(d.Offset())+n)*w]
}

func TestReadsArrowCpp17Goldens(t *testing.T) {
	for _, base := range []string{"tensors", "tensors_snappy", "dtypes"} {
		t.Run(base, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b, err := os.ReadFile(filepath.Join("testdata/arrow-cpp-17-parquet", base+".parquet"))
			require.NoError(t, err)
			schema, recs := readAll(t, b, parquet.ReaderOptions{Allocator: mem})
			for _, f := range schema.Fields() {
				var chunks []arrow.Array
				for _, r := range recs {
					chunks = append(chunks, r.Column(schema.FieldIndices(f.Name)[0]))
				}
				col, err := array.Concatenate(chunks, mem)
				require.NoError(t, err)
				want, err := os.ReadFile(filepath.Join("testdata/arrow-cpp-17-parquet", base+"."+f.Name+".bin"))
				require.NoError(t, err)
				if f.Name != "perm" { // the .bin holds perm's logical order: see the dataset tests
					assert.Equal(t, want, leafBytes(col), "%s.%s", base, f.Name)
				}
				col.Release()
			}
			for _, r := range recs {
				r.Release()
			}
		})
	}
}

// TestReadsDuckDBFiles reads files DuckDB wrote (see testdata/duckdb/README.md).
func TestReadsDuckDBFiles(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b, err := os.ReadFile("testdata/duckdb/lists.parquet")
	require.NoError(t, err)
	schema, recs := readAll(t, b, parquet.ReaderOptions{Allocator: mem})
	require.Len(t, recs, 1)
	defer recs[0].Release()
	assert.Equal(t, []string{"emb", "ids", "n"}, []string{schema.Field(0).Name, schema.Field(1).Name, schema.Field(2).Name})
	var emb []float32
	var ids []int64
	for i := range int64(10) {
		emb = append(emb, float32(i)*1.5, float32(i)*2.5, 0.25)
		ids = append(ids, []int64{i, i + 1}[:i%3]...)
	}
	assert.Equal(t, emb, arrow.Float32Traits.CastFromBytes(leafBytes(recs[0].Column(0))))
	assert.Equal(t, ids, arrow.Int64Traits.CastFromBytes(leafBytes(recs[0].Column(1))))

	// BYTE_STREAM_SPLIT pages in a list<double>: the direct list reader's (arrow-go v17 reads
	// none of their values).
	b, err = os.ReadFile("testdata/duckdb/lists_v2.parquet")
	require.NoError(t, err)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
	require.NoError(t, err)
	var v []float64
	for i := range 1000 {
		v = append(v, float64(i)*1.5, float64(i)*2.5)
	}
	var got []float64
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		require.NoError(t, err)
		l := rec.Column(0).(*array.List)
		for row := range l.Len() {
			lo, hi := l.ValueOffsets(row)
			require.Equal(t, int64(2), hi-lo, "row %d", row)
		}
		got = append(got, arrow.Float64Traits.CastFromBytes(leafBytes(rec.Column(0)))...)
		rec.Release()
	}
	assert.Equal(t, v, got)
	assert.Equal(t, r.NumRowGroups(), parquet.DirectReads(r))
}

// TestStructColumnsInManyRowGroups: a struct column (read child by child) of a file of several
// row groups reads in each, however many row groups are decoded at once — each decoding
// reader's schema holds the struct's children as the first reader's does.
func TestStructColumnsInManyRowGroups(t *testing.T) {
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: st, Nullable: true}}, nil)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, pqparquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	for g := range 3 {
		i, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64, strings.NewReader(fmt.Sprintf("[%d, %d]", 2*g, 2*g+1)))
		require.NoError(t, err)
		s, _, err := array.FromJSON(memory.DefaultAllocator, st, strings.NewReader(fmt.Sprintf(`[{"a": %d}, null]`, g)))
		require.NoError(t, err)
		require.NoError(t, w.Write(array.NewRecord(schema, []arrow.Array{i, s}, 2)))
	}
	require.NoError(t, w.Close())
	for _, parallel := range []int{1, 3} {
		r, err := parquet.NewReader(buf.Bytes(), parquet.ReaderOptions{Parallelism: parallel})
		require.NoError(t, err)
		var got []string
		require.NoError(t, r.ReadRowGroups(context.Background(), 0, r.NumRowGroups(), func(g int, rec arrow.Record) error {
			defer rec.Release()
			got = append(got, fmt.Sprint(rec.Column(1)))
			return nil
		}))
		assert.Equal(t, []string{"{[0 (null)]}", "{[1 (null)]}", "{[2 (null)]}"}, got, "parallelism %d", parallel)
	}
}
