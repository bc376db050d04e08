package main

import (
	"bytes"
	"encoding/json"
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
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/flightreplay"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// writeLabelledTable writes, at path, a Parquet table as pyarrow writes one, of rows rows in
// row groups of 100: an embedding (arrow.fixed_shape_tensor float32 [3]), an int64 label with
// a null every fifth row, a utf8 name, a dictionary-encoded category and a struct column,
// which has no tensor form.
func writeLabelledTable(t *testing.T, path string, rows int) {
	t.Helper()
	embType, err := arrowtensor.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{3}, nil, nil)
	require.NoError(t, err)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: embType, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "meta", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	emb := b.Field(0).(*array.ExtensionBuilder).StorageBuilder().(*array.FixedSizeListBuilder)
	meta := b.Field(4).(*array.StructBuilder)
	for r := range rows {
		emb.Append(true)
		for k := range 3 {
			emb.ValueBuilder().(*array.Float32Builder).Append(float32(r*3 + k))
		}
		if r%5 == 2 {
			b.Field(1).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(int64(r % 4))
		}
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("item %d", r))
		require.NoError(t, b.Field(3).(*array.BinaryDictionaryBuilder).AppendString([]string{"cat", "dog"}[r%2]))
		meta.Append(true)
		meta.FieldBuilder(0).(*array.Int32Builder).Append(int32(r))
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, pqparquet.NewWriterProperties(pqparquet.WithMaxRowGroupLength(100)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// requireSameColumns checks that the file at got holds the columns of the file at want: the
// same names, order, dtypes, shapes, null rows and values.
func requireSameColumns(t *testing.T, want, got string) {
	t.Helper()
	w, err := dataset.Open(want, limits.Limits{})
	require.NoError(t, err)
	defer w.Release()
	g, err := dataset.Open(got, limits.Limits{})
	require.NoError(t, err, got)
	defer g.Release()
	require.Len(t, g.Tensors, len(w.Tensors), got)
	for i, wt := range w.Tensors {
		gt := g.Tensors[i]
		require.Equal(t, wt.Column, gt.Column, got)
		require.Equal(t, wt.DType(), gt.DType(), "%s: %s", got, wt.Column)
		require.Equal(t, wt.Shape(), gt.Shape(), "%s: %s", got, wt.Column)
		require.Equal(t, wt.Valid, gt.Valid, "%s: %s: its null rows", got, wt.Column)
		var wb, gb bytes.Buffer
		fill := map[bool]string{true: "", false: "0"}[wt.DType() == ndarray.String]
		wf, err := wt.Filled(fill)
		require.NoError(t, err)
		gf, err := gt.Filled(fill)
		require.NoError(t, err)
		_, err = wf.WriteValues(&wb, 0)
		require.NoError(t, err)
		_, err = gf.WriteValues(&gb, 0)
		require.NoError(t, err)
		require.True(t, bytes.Equal(wb.Bytes(), gb.Bytes()), "%s: %s: values differ", got, wt.Column)
	}
}

// TestTablesOverFlightInTheCLI: `put` of a Parquet table uploads it as one table — the struct
// column it leaves out named on stderr — and `get` of the table writes every column, labels
// and strings included, into each format that holds several; `ls` lists the table and its
// columns. `serve` of the file serves the table the same, naming the struct column it leaves
// out, as `get` does.
func TestTablesOverFlightInTheCLI(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t.parquet")
	writeLabelledTable(t, src, 450)

	s := startServe(t, t.TempDir(), "--writable")
	code, stdout, stderr := runCLI("put", s.uri, src)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "t: table of 4 columns, 450 rows")
	assert.Contains(t, stdout, "t.label: dense int64 (450,)")
	assert.Contains(t, stderr, "ndarrow put: t.meta: struct<a: int32> left out: a struct has no tensor form")

	code, stdout, stderr = runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	for _, line := range []string{
		"t        table               -        (450,)    450   16169",
		"t.emb    fixed_shape_tensor  float32  (450, 3)  450   5400",
		"t.label  dense               int64    (450,)    450   3657", // and its validity bitmap
		"t.name   dense               string   (450,)    450   5294",
		"t.cat    dense               string   (450,)    450   1818", // a dictionary: int32 indices and its two values
	} {
		assert.Contains(t, stdout, line)
	}
	code, stdout, stderr = runCLI("ls", "--json", s.uri)
	require.Equal(t, exitOK, code, stderr)
	var table lsLine
	require.NoError(t, json.Unmarshal([]byte(strings.Split(stdout, "\n")[0]), &table))
	assert.Equal(t, "table", table.Kind)
	assert.Equal(t, []string{"t.emb", "t.label", "t.name", "t.cat"}, table.Columns)

	dir := t.TempDir()
	for _, out := range []string{"out.parquet", "out.arrow", "out.arrows"} {
		path := filepath.Join(dir, out)
		code, stdout, stderr = runCLI("get", s.uri, "t", path)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, 4, strings.Count(stdout, "→ "+path), stdout)
		requireSameColumns(t, src, path)
	}
	code, _, stderr = runCLI("get", s.uri, "t", filepath.Join(dir, "out.tfrecord"))
	require.Equal(t, exitFail, code, "TFRecord holds no nulls")
	assert.Contains(t, stderr, "null")
	code, _, stderr = runCLI("get", s.uri, "t", filepath.Join(dir, "out.npy"))
	require.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "t is a table of 4 tensors (emb, label, name, cat)")

	// The file served: the same table flight, its struct named by serve and by get.
	served := t.TempDir()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(served, "t.parquet"), b, 0o644))
	s2 := startServe(t, served, "--log-level", "debug") // the banner lists the flights
	assert.Contains(t, s2.stdout.String(), "serving 4 tensors and 1 table")
	assert.Contains(t, s2.stdout.String(), "  t (table: its columns together)")
	assert.Contains(t, s2.stderr.String(), "ndarrow serve: t.meta: struct<a: int32> left out")
	path := filepath.Join(dir, "served.parquet")
	code, _, stderr = runCLI("get", s2.uri, "t", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "t.meta: struct<a: int32> left out")
	requireSameColumns(t, src, path)
	code, _, stderr = runCLI("ls", s2.uri)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "ndarrow ls: t.meta: struct<a: int32> left out")

	// A directory's table of parts is put as one table too.
	parts := filepath.Join(t.TempDir(), "train")
	writeLabelledTable(t, filepath.Join(parts, "part-0.parquet"), 120)
	writeLabelledTable(t, filepath.Join(parts, "part-1.parquet"), 80)
	code, stdout, stderr = runCLI("put", s.uri, parts)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "train: table of 4 columns, 200 rows")
	code, _, stderr = runCLI("get", s.uri, "train", filepath.Join(dir, "train.arrow"))
	require.Equal(t, exitOK, code, stderr)
}

// TestArrowCppTableInTheCLI: `get` of Arrow C++ 17's server's table (replayed) of an int64
// label and a utf8 name, both with nulls, keeps every column, its type and its nulls, in
// Parquet and Arrow — the same table Arrow C++'s own client wrote (recorded).
func TestArrowCppTableInTheCLI(t *testing.T) {
	rec, err := flightreplay.Read("../../flight/testdata/arrow-cpp-17/labels.bin.zst")
	require.NoError(t, err)
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	z, err := os.ReadFile("../../flight/testdata/arrow-cpp-17/labels_fetched_by_cpp.arrow.zst")
	require.NoError(t, err)
	zr, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer zr.Close()
	b, err := zr.DecodeAll(z, nil)
	require.NoError(t, err)
	dir := t.TempDir()
	cpp := filepath.Join(dir, "cpp.arrow")
	require.NoError(t, os.WriteFile(cpp, b, 0o644))

	code, stdout, stderr := runCLI("ls", srv.URI())
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "labels        table               -        (20000,)    20000")
	assert.Contains(t, stdout, "labels.label  dense               int64    (20000,)    20000  160000")
	for _, out := range []string{"labels.parquet", "labels.arrow"} {
		path := filepath.Join(dir, out)
		code, _, stderr = runCLI("get", srv.URI(), "labels", path)
		require.Equal(t, exitOK, code, stderr)
		requireSameColumns(t, cpp, path)
		f, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err)
		label, err := f.Tensor("labels.label")
		require.NoError(t, err)
		assert.Equal(t, ndarray.Int64, label.DType())
		assert.Equal(t, int64(2222), label.NullCount())
		name, err := f.Tensor("labels.name")
		require.NoError(t, err)
		assert.Equal(t, ndarray.String, name.DType())
		assert.Equal(t, int64(1538), name.NullCount())
		f.Release()
	}
}
