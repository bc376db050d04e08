package dataset_test

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
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// userTable is a table as users have them: an embedding beside a label with a null, a score,
// a name, raw bytes, a dictionary-encoded category and a struct, in two record batches.
func userTable(t *testing.T) (*arrow.Schema, []arrow.Record) {
	mem := memory.DefaultAllocator
	fromJSON := func(typ arrow.DataType, s string) arrow.Array {
		a, _, err := array.FromJSON(mem, typ, strings.NewReader(s))
		require.NoError(t, err)
		return a
	}
	embType, err := arrowtensor.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{2}, nil, nil)
	require.NoError(t, err)
	catType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	structType := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: embType, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "cat", Type: catType, Nullable: true},
		{Name: "s", Type: structType, Nullable: true},
	}, nil)
	batch := func(emb, label, score, name, raw, idx, s string, n int64) arrow.Record {
		storage := fromJSON(embType.StorageType(), emb)
		dict := fromJSON(arrow.BinaryTypes.String, `["red", "green"]`)
		cat := array.NewDictionaryArray(catType, fromJSON(arrow.PrimitiveTypes.Int32, idx), dict)
		cols := []arrow.Array{array.NewExtensionArrayWithStorage(embType, storage), fromJSON(arrow.PrimitiveTypes.Int64, label),
			fromJSON(arrow.PrimitiveTypes.Float64, score), fromJSON(arrow.BinaryTypes.String, name),
			fromJSON(arrow.BinaryTypes.Binary, raw), cat, fromJSON(structType, s)}
		return array.NewRecord(schema, cols, n)
	}
	return schema, []arrow.Record{
		batch(`[[1, 2], [3, 4]]`, `[10, null]`, `[0.5, 1.5]`, `["a", "b"]`, `["AP8=", ""]`, `[0, 1]`, `[{"a": 1}, {"a": 2}]`, 2),
		batch(`[[5, 6]]`, `[30]`, `[2.5]`, `["c"]`, `["YWI="]`, `[1]`, `[{"a": 3}]`, 1),
	}
}

// checkUserTable checks that ts, lo read from a file of userTable, hold every column but the
// struct, with its values, and name the struct.
func checkUserTable(t *testing.T, tab *dataset.Table) {
	t.Helper()
	assert.Equal(t, int64(3), tab.Rows)
	assert.Equal(t, []string{"emb", "label", "score", "name", "raw", "cat"}, tab.Names(), "every column but the struct, in order")
	emb, err := tab.Column("emb")
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, must(dataset.DenseOf[float32](emb)).Data())
	label, err := tab.Column("label")
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{3}, label.Shape())
	assert.Equal(t, []bool{true, false, true}, label.Valid, "the null label is not a silent zero")
	assert.Equal(t, int64(1), label.NullCount())
	l := must(dataset.DenseOf[int64](label)).Data()
	assert.Equal(t, []int64{10, 30}, []int64{l[0], l[2]})
	score, err := tab.Column(tab.Name + ".score")
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 1.5, 2.5}, must(dataset.DenseOf[float64](score)).Data())
	assert.Nil(t, score.Valid)
	for col, want := range map[string][]string{"name": {"a", "b", "c"}, "raw": {"\x00\xff", "", "ab"}, "cat": {"red", "green", "green"}} {
		c, err := tab.Column(col)
		require.NoError(t, err)
		assert.Equal(t, ndarray.String, c.DType(), col)
		assert.Equal(t, want, must(dataset.DenseOf[string](c)).Data(), col)
	}
	require.Len(t, tab.LeftOut, 1)
	assert.Equal(t, "s", tab.LeftOut[0].Column)
	assert.Contains(t, tab.LeftOut[0].Type, "struct<a")
	assert.Contains(t, tab.LeftOut[0].String(), "left out: a struct has no tensor form")
	_, err = tab.Column("s")
	assert.ErrorIs(t, err, dataset.ErrNoTensor)
	assert.ErrorContains(t, err, "a struct has no tensor form")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTablesAsUsersHaveThem: a table of a tensor, plain, string, binary, dictionary and struct
// columns, in an Arrow IPC stream and file and in Parquet, reads as a table of every column
// but the struct, which is named; written back as Arrow and Parquet, its columns keep their
// names, order, types (int64 stays int64, a string column a string one, a dictionary a
// dictionary of its type) and values, nulls included, and read back the same.
func TestTablesAsUsersHaveThem(t *testing.T) {
	schema, recs := userTable(t)
	pq := parquetOf(t, schema, recs)
	inputs := map[string][]byte{"t.parquet": pq, "t.arrows": stream(t, schema, recs...)} // stream releases recs
	for name, b := range inputs {
		t.Run(name, func(t *testing.T) {
			ts, left, err := dataset.Read(b, "t", limits.Limits{})
			require.NoError(t, err)
			tab, err := dataset.TableOf("t", ts, left)
			require.NoError(t, err)
			checkUserTable(t, tab)

			for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet} {
				b := written(t, format, tab.Columns)
				back, left, err := dataset.Read(b, "t", limits.Limits{})
				require.NoError(t, err, format)
				assert.Empty(t, left, "%s: what was read is written", format)
				again, err := dataset.TableOf("t", back, tab.LeftOut)
				require.NoError(t, err)
				checkUserTable(t, again)
				types := schemaOf(t, format, b)
				assert.Equal(t, "int64", types["label"], format)
				assert.Equal(t, "float64", types["score"], format)
				assert.Equal(t, "utf8", types["name"], format)
				assert.Equal(t, "binary", types["raw"], format)
				assert.Equal(t, "dictionary<values=utf8, indices=int32, ordered=false>", types["cat"], format)
			}
		})
	}
}

// TestRankOneIsAPlainColumn: a tensor of one dimension is written as a plain column of its
// values — int64, not a list of one — and read back as it went; the files ndarrow wrote before
// (fixed_size_list of one, marked a fixed_shape_tensor of shape []) still read as a tensor of
// one dimension.
func TestRankOneIsAPlainColumn(t *testing.T) {
	x := dataset.Tensor{Name: "a", Dense: ndarray.Must(ndarray.Arange[int64](0, 10, 1))}
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{x})
	require.NoError(t, err)
	defer rec.Release()
	assert.Equal(t, arrow.PrimitiveTypes.Int64, rec.Schema().Field(0).Type)
	ts, _, err := dataset.FromRecords(rec.Schema(), []arrow.Record{rec}, "a")
	require.NoError(t, err)
	assert.Equal(t, x.Dense.(*ndarray.Dense[int64]).Data(), must(dataset.DenseOf[int64](ts[0])).Data())

	old, err := arrowtensor.NewFixedShapeTensorArray(memory.DefaultAllocator, x.Dense.(*ndarray.Dense[int64]), nil)
	require.NoError(t, err)
	defer old.Release()
	oldSchema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: old.DataType(), Nullable: true}}, nil)
	oldRec := array.NewRecord(oldSchema, []arrow.Array{old}, 10)
	defer oldRec.Release()
	ts, _, err = dataset.FromRecords(oldSchema, []arrow.Record{oldRec}, "f")
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{10}, ts[0].Shape())
	assert.Equal(t, x.Dense.(*ndarray.Dense[int64]).Data(), must(dataset.DenseOf[int64](ts[0])).Data())
}

// TestStringCells: string tensors of more than one dimension go as fixed-size lists of
// strings, their cell shape kept, and read back as they went.
func TestStringCells(t *testing.T) {
	words := ndarray.Must(ndarray.FromSlice([]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}, 2, 2, 3))
	pairs := ndarray.Must(ndarray.FromSlice([]string{"x", "\xff", "z", "w"}, 2, 2))
	for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet} {
		b := written(t, format, []dataset.Tensor{{Name: "w", Column: "w", Dense: words}, {Name: "p", Column: "p", Dense: pairs}})
		ts, _, err := dataset.Read(b, "f", limits.Limits{})
		require.NoError(t, err)
		require.Len(t, ts, 2)
		assert.Equal(t, words.Shape(), ts[0].Shape(), format)
		assert.Equal(t, words.Data(), must(dataset.DenseOf[string](ts[0])).Data(), format)
		assert.Equal(t, pairs.Data(), must(dataset.DenseOf[string](ts[1])).Data(), format)
	}
}

// TestEmptyCells: a tensor whose cells hold no value — shape [rows, 0] (a feature every
// Example holds empty: an empty bytes_list, float_list…) — of numbers, bools or strings is
// written as a list column of empty rows (arrow-go makes no fixed_size_list of size 0), its
// cell shape in the field, and reads back as the dense tensor it was; TFRecord keeps it too.
func TestEmptyCells(t *testing.T) {
	for _, a := range []ndarray.Array{ndarray.New[float32](3, 0), ndarray.New[int64](2, 0, 4), ndarray.New[bool](2, 0), ndarray.New[string](3, 0), ndarray.New[string](0, 0)} {
		for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet, dataset.FormatTFRecord} {
			t.Run(fmt.Sprintf("%v%v/%s", a.DType(), a.Shape(), format), func(t *testing.T) {
				words := ndarray.Must(ndarray.FromSlice([]string{"a", "b", "c"}[:a.Shape()[0]], a.Shape()[0]))
				b := written(t, format, []dataset.Tensor{{Name: "e", Column: "e", Dense: a}, {Name: "w", Column: "w", Dense: words}})
				if format == dataset.FormatTFRecord && a.Shape()[0] == 0 {
					assert.Empty(t, b, "no rows, no Examples")
					return
				}
				ts, left, err := dataset.Read(b, "f", limits.Limits{})
				require.NoError(t, err)
				assert.Empty(t, left)
				if format == dataset.FormatTFRecord {
					require.Len(t, ts, 2)
					assert.Equal(t, ndarray.Shape{a.Shape()[0], 0}, ts[0].Shape(), "an Example holds a row's values")
					return
				}
				require.Len(t, ts, 2)
				assert.Equal(t, dataset.KindDense, ts[0].Kind)
				assert.Equal(t, a.DType(), ts[0].DType())
				assert.Equal(t, a.Shape(), ts[0].Shape())
				assert.Equal(t, words.Data(), must(dataset.DenseOf[string](ts[1])).Data(), "the columns beside it")
				if format != dataset.FormatParquet {
					assert.Contains(t, schemaOf(t, format, b)["e"], "list<", "a list column other readers read")
				}
			})
		}
	}
}

// TestNullsWhereFormatsHoldNone: a column with null rows is refused by the formats that hold
// no nulls, naming its null count, unless it is filled; Filled gives the null rows a value
// parsed as the column's type.
func TestNullsWhereFormatsHoldNone(t *testing.T) {
	label := dataset.Tensor{Name: "t.label", Column: "label", Dense: ndarray.Must(ndarray.FromSlice([]int64{1, 0, 3}, 3)), Valid: []bool{true, false, true}}
	for _, format := range []dataset.Format{dataset.FormatNpy, dataset.FormatTensor, dataset.FormatTFRecord} {
		err := dataset.Write(&bytes.Buffer{}, format, []dataset.Tensor{label}, dataset.WriteOptions{})
		assert.ErrorIs(t, err, arrowtensor.ErrNull, format)
		assert.ErrorContains(t, err, "t.label: 1 null rows", format)
	}
	filled, err := label.Filled("-1")
	require.NoError(t, err)
	assert.Nil(t, filled.Valid)
	assert.Equal(t, []int64{1, -1, 3}, must(dataset.DenseOf[int64](filled)).Data())
	assert.Equal(t, []int64{1, 0, 3}, must(dataset.DenseOf[int64](label)).Data(), "a copy")
	require.NoError(t, dataset.Write(&bytes.Buffer{}, dataset.FormatNpy, []dataset.Tensor{filled}, dataset.WriteOptions{}))
	_, err = label.Filled("many")
	assert.ErrorIs(t, err, ndarray.ErrDType)

	names := dataset.Tensor{Name: "n", Dense: ndarray.Must(ndarray.FromSlice([]string{"a", ""}, 2)), Valid: []bool{true, false}}
	named, err := names.Filled("?")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "?"}, must(dataset.DenseOf[string](named)).Data())
}

// parquetOf writes recs as a Parquet file with pqarrow, as arrow-go's users write one (the
// Arrow schema stored).
func parquetOf(t *testing.T, schema *arrow.Schema, recs []arrow.Record) []byte {
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, pqparquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// schemaOf returns the Arrow type of each column of a file ndarrow wrote in format, by name:
// of a Parquet file, the type its stored Arrow schema gives (a dictionary's, which the reader
// decodes as its values).
func schemaOf(t *testing.T, format dataset.Format, b []byte) map[string]string {
	var schema *arrow.Schema
	var r *parquet.Reader
	var err error
	if format == dataset.FormatParquet {
		r, err = parquet.NewReader(b, parquet.ReaderOptions{})
		if err == nil {
			schema = r.Schema()
		}
	} else {
		schema, err = ipc.ReadSchema(b, ipc.BatchOptions{})
	}
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range schema.Fields() {
		out[f.Name] = f.Type.String()
		if r != nil && r.DictionaryType(f.Name) != nil {
			out[f.Name] = r.DictionaryType(f.Name).String()
		}
	}
	return out
}

// written returns the bytes of a file tensors are saved to in format.
func written(t *testing.T, format dataset.Format, tensors []dataset.Tensor) []byte {
	path := filepath.Join(t.TempDir(), "out."+string(format))
	require.NoError(t, dataset.Save(path, tensors, dataset.WriteOptions{}), format)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestBytesStayBytes: a column of bytes (binary, a dictionary of binary, a list of binary)
// whose values all happen to be valid UTF-8 is written back as bytes (a dictionary of them),
// not as a string column;
// and a Source of a Parquet file's column says the schema every one of its row groups is sent
// with, although one row group's bytes are UTF-8 and another's are not.
func TestBytesStayBytes(t *testing.T) {
	mem := memory.DefaultAllocator
	fromJSON := func(typ arrow.DataType, s string) arrow.Array {
		a, _, err := array.FromJSON(mem, typ, strings.NewReader(s))
		require.NoError(t, err)
		return a
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.Binary}
	listType := arrow.ListOf(arrow.BinaryTypes.Binary)
	fields := []arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.Binary, Nullable: true},  // UTF-8 all
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true}, // UTF-8 in the first batch only
		{Name: "parts", Type: listType, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "kind", Type: dictType, Nullable: true}, // not in the Parquet file: arrow-go v17 panics writing it
	}
	schema := arrow.NewSchema(fields, nil)
	batch := func(schema *arrow.Schema, id, raw, parts, text, idx string) arrow.Record {
		cols := []arrow.Array{fromJSON(arrow.BinaryTypes.Binary, id), fromJSON(arrow.BinaryTypes.Binary, raw),
			fromJSON(listType, parts), fromJSON(arrow.BinaryTypes.String, text)}
		if schema.NumFields() == len(fields) {
			dict := fromJSON(arrow.BinaryTypes.Binary, `["eA==", "eQ=="]`) // x, y
			defer dict.Release()
			indices := fromJSON(arrow.PrimitiveTypes.Int32, idx)
			defer indices.Release()
			cols = append(cols, array.NewDictionaryArray(dictType, indices, dict))
		}
		defer func() {
			for _, c := range cols {
				c.Release()
			}
		}()
		return array.NewRecord(schema, cols, 2)
	}
	batches := func(schema *arrow.Schema) []arrow.Record {
		return []arrow.Record{
			batch(schema, `["YWI=", "Y2Q="]`, `["YWI=", "Y2Q="]`, `[["YQ=="], []]`, `["a", "b"]`, `[0, 1]`),
			batch(schema, `["ZWY=", "Z2g="]`, `["/w==", "AP8="]`, `[["Yg==", "Yw=="], null]`, `["c", "d"]`, `[1, 0]`),
		}
	}
	want := map[string]string{"id": "binary", "raw": "binary", "parts": "list<item: binary, nullable>", "text": "utf8",
		"kind": "dictionary<values=binary, indices=int32, ordered=false>"}

	ts, _, err := dataset.Read(stream(t, schema, batches(schema)...), "t", limits.Limits{})
	require.NoError(t, err)
	for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet} {
		assert.Equal(t, want, schemaOf(t, format, written(t, format, ts)), format)
	}

	pqSchema := arrow.NewSchema(fields[:4], nil)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(pqSchema, &buf, pqparquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	for _, rec := range batches(pqSchema) { // a row group each
		w.NewBufferedRowGroup()
		require.NoError(t, w.WriteBuffered(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.parquet"), buf.Bytes(), 0o644))
	d, err := dataset.ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	require.Len(t, d.Sources, pqSchema.NumFields())
	for _, s := range d.Sources {
		schema, err := s.Schema(s.Column)
		require.NoError(t, err)
		assert.Equal(t, want[s.Column], schema.Field(0).Type.String(), s.Name)
		chunks := 0
		for c, err := range s.Chunks(context.Background()) {
			require.NoError(t, err)
			rec, err := c.Record(mem, s.Column)
			require.NoError(t, err)
			assert.True(t, schema.Equal(rec.Schema()), "%s, row group %d: sent as %v, the stream's schema says %v", s.Name, chunks, rec.Schema(), schema)
			rec.Release()
			chunks++
		}
		assert.Equal(t, 2, chunks, s.Name)
	}
}

// TestSourcesOfTables: ScanDir says which table each Source is a column of — a Parquet file's,
// an Arrow stream's, a directory's table of parts — and none for a tensor of its own; a column
// of bytes is announced as binary (Source.Schema) even where its values happen to be text,
// and text as utf8; a column of strings is read chunk by chunk within an estimate that counts
// its strings.
func TestSourcesOfTables(t *testing.T) {
	dir := t.TempDir()
	schema, recs := userTable(t)
	pq := parquetOf(t, schema, recs)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.parquet"), pq, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "parts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "parts", "part-0.parquet"), pq, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "parts", "part-1.parquet"), pq, 0o644))
	_, recs = userTable(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "u.arrows"), stream(t, schema, recs...), 0o644))
	require.NoError(t, dataset.Save(filepath.Join(dir, "x.npy"), []dataset.Tensor{{Dense: ndarray.New[float32](3, 2)}}, dataset.WriteOptions{}))
	d, err := dataset.ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	tables := map[string]string{}
	for _, src := range d.Sources {
		tables[src.Name] = src.Table
	}
	for _, table := range []string{"t", "u", "parts"} {
		for _, col := range []string{"emb", "label", "name", "raw", "cat"} {
			assert.Equal(t, table, tables[table+"."+col], "%s.%s", table, col)
		}
	}
	assert.Equal(t, "", tables["x"], "a tensor of its own")
	for _, src := range d.Sources {
		if src.Column != "raw" && src.Column != "name" {
			continue
		}
		s, err := src.Schema(src.Column)
		require.NoError(t, err)
		want := map[string]arrow.Type{"raw": arrow.BINARY, "name": arrow.STRING}[src.Column]
		assert.Equal(t, want, s.Field(0).Type.ID(), src.Name)
		if src.Table != "u" { // a Parquet column's strings: its chunk's bytes counted, not one byte a row
			for _, b := range src.DecodeBytes() {
				assert.Greater(t, b, int64(16*2), src.Name)
			}
		}
	}

	// Strings never go into storage outside the Go heap, where the collector cannot see them.
	_, err = dataset.NewMappedStacker(dataset.Tensor{Name: "s", Dense: ndarray.New[string](0)}, nil)
	assert.ErrorIs(t, err, ndarray.ErrDType)
}

// TestEveryPlainDTypeRoundTrips: a table of one plain column of every dtype — bool, each
// integer width, float16, float32, float64, text and bytes — keeps its names, order, dtypes
// and values through Arrow IPC files and streams, Parquet and .npz (which holds strings as
// NumPy's |S and <U), as ndarrow writes and reads them; text stays text (utf8) and bytes
// bytes (binary, Tensor.Bytes) — bytes that are valid UTF-8 too.
func TestEveryPlainDTypeRoundTrips(t *testing.T) {
	const rows = 5
	var tensors []dataset.Tensor
	for _, d := range []ndarray.DType{ndarray.Bool, ndarray.Int8, ndarray.Int16, ndarray.Int32, ndarray.Int64,
		ndarray.Uint8, ndarray.Uint16, ndarray.Uint32, ndarray.Uint64, ndarray.Float16, ndarray.Float32, ndarray.Float64} {
		ramp := ndarray.Must(ndarray.Arange[float64](-2, rows-2, 1))
		if !d.IsSigned() && d != ndarray.Bool {
			ramp = ndarray.Must(ndarray.Arange[float64](250, 250+rows, 1))
		}
		values, err := ndarray.ConvertTo(ramp, d)
		require.NoError(t, err)
		tensors = append(tensors, dataset.Tensor{Name: "t." + d.String(), Column: d.String(), Dense: values})
	}
	text := ndarray.Must(ndarray.FromSlice([]string{"a", "ü", "", "dd", "e"}, rows))
	raw := ndarray.Must(ndarray.FromSlice([]string{"\x00\xff", "", "ab", "\xfe", "z"}, rows))
	ascii := ndarray.Must(ndarray.FromSlice([]string{"ab", "", "c", "dd", "e"}, rows))
	tensors = append(tensors, dataset.Tensor{Name: "t.text", Column: "text", Dense: text},
		dataset.Tensor{Name: "t.raw", Column: "raw", Dense: raw, Bytes: true},
		dataset.Tensor{Name: "t.ascii", Column: "ascii", Dense: ascii, Bytes: true})
	arrowTypes := map[string]arrow.Type{"text": arrow.STRING, "raw": arrow.BINARY, "ascii": arrow.BINARY}
	for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet, dataset.FormatNpz} {
		b := written(t, format, tensors)
		got, _, err := dataset.Read(b, "t", limits.Limits{})
		require.NoError(t, err, format)
		require.Len(t, got, len(tensors), format)
		batch, err := dataset.Batch(memory.NewGoAllocator(), got)
		require.NoError(t, err, format)
		for i, want := range tensors {
			what := fmt.Sprintf("%v: %s", format, want.Column)
			assert.Equal(t, want.Column, got[i].Column, what)
			assert.Equal(t, want.DType(), got[i].DType(), what)
			assert.Equal(t, want.Bytes, got[i].Bytes, "%s: text or bytes", what)
			if id, ok := arrowTypes[want.Column]; ok {
				assert.Equal(t, id, batch.Schema().Field(i).Type.ID(), "%s: as Arrow: %v", what, batch.Schema().Field(i).Type)
			}
			assert.Equal(t, ndarray.Shape{rows}, got[i].Shape(), what)
			var a, b bytes.Buffer
			_, err := want.WriteValues(&a, 0)
			require.NoError(t, err, what)
			_, err = got[i].WriteValues(&b, 0)
			require.NoError(t, err, what)
			assert.Equal(t, a.Bytes(), b.Bytes(), what)
		}
		batch.Release()
	}
}
