package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pqparquet "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/tfrecord"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// tableColumns are the columns of userTable that have a tensor form, in order.
var tableColumns = []string{"emb", "label", "score", "name", "raw", "cat"}

// userTable returns a table as users have them — an embedding beside a label with a null, a
// score, a name, raw bytes (not UTF-8), a dictionary-encoded category and a struct — as record
// batches of rows[0], rows[1], … rows (of the 4 rows it has; all 4 in one batch by default),
// each built on its own (pqarrow writes a slice of a fixed_size_list column with the values
// of its first rows), released by the caller.
func userTable(t *testing.T, rows ...int) (*arrow.Schema, []arrow.Record) {
	mem := memory.DefaultAllocator
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
	// Each column's rows as JSON values.
	emb := []string{"[1, 2]", "[3, 4]", "[5, 6]", "[7, 8]"}
	label := []string{"10", "null", "30", "40"}
	score := []string{"0.5", "1.5", "2.5", "3.5"}
	name := []string{`"a"`, `"b"`, `"c"`, `"d"`}
	raw := []string{`"AP8="`, `""`, `"YWI="`, `"/w=="`} // 00 ff, "", ab, ff
	cat := []string{"0", "1", "1", "0"}
	st := []string{`{"a": 1}`, `{"a": 2}`, `{"a": 3}`, `{"a": 4}`}
	if len(rows) == 0 {
		rows = []int{4}
	}
	var recs []arrow.Record
	lo := 0
	for _, n := range rows {
		hi := lo + n
		fromJSON := func(typ arrow.DataType, values []string) arrow.Array {
			a, _, err := array.FromJSON(mem, typ, strings.NewReader("["+strings.Join(values[lo:hi], ", ")+"]"))
			require.NoError(t, err)
			return a
		}
		storage := fromJSON(embType.StorageType(), emb)
		indices := fromJSON(arrow.PrimitiveTypes.Int32, cat)
		dict, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["red", "green"]`))
		require.NoError(t, err)
		cols := []arrow.Array{array.NewExtensionArrayWithStorage(embType, storage), fromJSON(arrow.PrimitiveTypes.Int64, label),
			fromJSON(arrow.PrimitiveTypes.Float64, score), fromJSON(arrow.BinaryTypes.String, name),
			fromJSON(arrow.BinaryTypes.Binary, raw), array.NewDictionaryArray(catType, indices, dict), fromJSON(structType, st)}
		recs = append(recs, array.NewRecord(schema, cols, int64(n)))
		for _, c := range append(cols, storage, indices, dict) {
			c.Release()
		}
		lo = hi
	}
	return schema, recs
}

// writeUserTable writes userTable's batches of rows into path as Parquet (pqarrow, the Arrow
// schema stored), an Arrow IPC file or stream, as path's extension says, with arrow-go as its
// users write them.
func writeUserTable(t *testing.T, path string, rows ...int) {
	schema, recs := userTable(t, rows...)
	writeRecords(t, path, schema, recs...)
}

// writeRecords writes recs, which it releases, into path as writeUserTable does.
func writeRecords(t *testing.T, path string, schema *arrow.Schema, recs ...arrow.Record) {
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	switch filepath.Ext(path) {
	case ".parquet":
		w, err := pqarrow.NewFileWriter(schema, f, pqparquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
	case ".arrow":
		w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(schema))
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
	case ".arrows":
		w := arrowipc.NewWriter(f, arrowipc.WithSchema(schema))
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
	default:
		t.Fatalf("writeRecords: %s", path)
	}
}

// columnTypes returns the Arrow type of each column of an Arrow IPC file or stream, or a
// Parquet file's stored Arrow schema (a dictionary's type, which the reader decodes as its
// values), by name.
func columnTypes(t *testing.T, path string) map[string]string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var schema *arrow.Schema
	var r *parquet.Reader
	if filepath.Ext(path) == ".parquet" {
		r, err = parquet.NewReader(b, parquet.ReaderOptions{})
		require.NoError(t, err)
		schema = r.Schema()
	} else {
		schema, err = ipc.ReadSchema(b, ipc.BatchOptions{})
		require.NoError(t, err)
	}
	out := map[string]string{}
	for _, f := range schema.Fields() {
		out[f.Name] = f.Type.String()
		if r != nil && r.DictionaryType(f.Name) != nil {
			out[f.Name] = r.DictionaryType(f.Name).String()
		}
	}
	return out
}

// stringsHash returns the sha256 inspect gives string values: each a 4-byte little-endian
// length, then its bytes.
func stringsHash(values ...string) string {
	h := sha256.New()
	for _, v := range values {
		_ = binary.Write(h, binary.LittleEndian, uint32(len(v)))
		h.Write([]byte(v))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestInspectListsEveryColumn: inspect lists every column of a table — Parquet, Arrow IPC file
// and stream, in one batch or several — in order: plain and string columns as tensors of one
// dimension (dtype string for utf8, binary and dictionary-encoded strings, hashed as lengths
// and bytes), a column with null rows with their count, the struct as left out with its Arrow
// type and why; nothing on stderr, status 0; the text table has a NULLS column and the left-out
// column a line after it.
func TestInspectListsEveryColumn(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		rows []int
	}{
		{"t.parquet", nil}, {"t.arrow", []int{3, 1}}, {"t.arrows", []int{1, 3}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			writeUserTable(t, path, tc.rows...)
			code, stdout, stderr := runCLI("inspect", "--json", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			tensors, left := inspectColumns(t, path)
			var names []string
			for _, c := range tensors {
				names = append(names, c.Column)
				assert.Equal(t, "t."+c.Column, c.Name)
			}
			assert.Equal(t, tableColumns, names, "every column but the struct, in order")
			byName := map[string]inspection{}
			for _, c := range tensors {
				byName[c.Column] = c
			}
			assert.Equal(t, []int64{4, 2}, byName["emb"].Shape)
			for _, col := range tableColumns[1:] {
				assert.Equal(t, []int64{4}, byName[col].Shape, col)
				assert.Equal(t, "dense", byName[col].Kind, col)
			}
			assert.Equal(t, int64(1), byName["label"].Nulls)
			assert.Contains(t, stdout, `"column":"label","dtype":"int64","shape":[4],"dim_names":[],"nnz":4,"sha256":"`)
			assert.Equal(t, 1, strings.Count(stdout, `"nulls":`), "only a column with null rows says so")
			assert.Equal(t, "float64", byName["score"].DType)
			for col, values := range map[string][]string{"name": {"a", "b", "c", "d"}, "raw": {"\x00\xff", "", "ab", "\xff"}, "cat": {"red", "green", "green", "red"}} {
				assert.Equal(t, "string", byName[col].DType, col)
				assert.Equal(t, stringsHash(values...), byName[col].SHA256, col)
			}
			require.Len(t, left, 1)
			assert.Equal(t, leftOutLine{Name: "t.s", Column: "s", LeftOut: "struct<a: int32>",
				Why: "a struct has no tensor form (read its fields as columns of their own)"}, left[0])

			code, stdout, stderr = runCLI("inspect", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			require.Len(t, lines, 8, stdout)
			assert.Regexp(t, `^NAME +KIND +DTYPE +SHAPE +NNZ +NULLS +DIM NAMES +SHA256$`, lines[0])
			assert.Regexp(t, `^t\.label +dense +int64 +\(4,\) +4 +1 `, lines[2])
			assert.Regexp(t, `^t\.name +dense +string +\(4,\) +4 +0 `, lines[4])
			assert.Equal(t, "t.s: struct<a: int32> left out: a struct has no tensor form (read its fields as columns of their own)", lines[7])
		})
	}
}

// structLeftOut is what convert says of userTable's struct column, named t.s.
const structLeftOut = "ndarrow convert: t.s: struct<a: int32> left out: a struct has no tensor form (read its fields as columns of their own)\n"

// TestConvertKeepsEveryColumn: convert of a table — Parquet, Arrow IPC file or stream, one
// batch or several, or a directory of its parts — to Arrow or Parquet keeps every column that
// has a tensor form, in order, with its dtype, shape, values and null rows; the written types
// are the columns' (int64 stays int64, a string column utf8, bytes binary, a dictionary of
// strings a dictionary of utf8 — in Parquet its stored Arrow schema's); the struct is named
// once on stderr, status 0.
func TestConvertKeepsEveryColumn(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts", "t") // a directory that is one table, t, of two parts
	require.NoError(t, os.MkdirAll(parts, 0o755))
	schema, recs := userTable(t, 3, 1)
	writeRecords(t, filepath.Join(parts, "part-0.parquet"), schema, recs[0])
	writeRecords(t, filepath.Join(parts, "part-1.parquet"), schema, recs[1])
	inputs := map[string]string{"parts": parts}
	for file, rows := range map[string][]int{"t.parquet": {2, 2}, "t.arrow": {3, 1}, "t.arrows": nil} {
		inputs[file] = filepath.Join(dir, file)
		writeUserTable(t, inputs[file], rows...)
	}
	want, _ := inspectColumns(t, inputs["t.arrows"])
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			got, left := inspectColumns(t, in)
			require.Len(t, left, 1, "the struct, once")
			assert.Equal(t, "t.s", left[0].Name)
			assertSameColumns(t, want, got)
			for _, to := range []string{"arrow", "arrows", "parquet"} {
				out := filepath.Join(t.TempDir(), "t."+to)
				code, stdout, stderr := runCLI("convert", in, out)
				require.Equal(t, exitOK, code, stderr)
				assert.Empty(t, stdout)
				assert.Equal(t, structLeftOut, stderr, to)
				got, left := inspectColumns(t, out)
				assert.Empty(t, left, "%s: what was read is written", to)
				assertSameColumns(t, want, got)
				types := columnTypes(t, out)
				for col, typ := range map[string]string{"label": "int64", "score": "float64", "name": "utf8", "raw": "binary",
					"cat": "dictionary<values=utf8, indices=int32, ordered=false>"} {
					assert.Equal(t, typ, types[col], "%s: %s", to, col)
				}
				assert.Contains(t, types["emb"], "fixed_shape_tensor", to)
			}
		})
	}
}

// assertSameColumns checks that got are the columns of want, in order, with the same dtype,
// shape, values and null rows.
func assertSameColumns(t *testing.T, want, got []inspection) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		assert.Equal(t, w.Column, g.Column)
		assert.Equal(t, w.DType, g.DType, w.Column)
		assert.Equal(t, w.Shape, g.Shape, w.Column)
		assert.Equal(t, w.SHA256, g.SHA256, w.Column)
		assert.Equal(t, w.Nulls, g.Nulls, w.Column)
	}
}

// TestConvertNullsAndStrings: a format that holds no nulls refuses a column with null rows,
// naming it, its null count and --fill; --fill VALUE gives them a value parsed as each
// column's dtype; a format that holds no strings (Tensor messages) refuses a string column
// naming it, where .npy and .npz hold NumPy's text and bytes; --skip-unsupported leaves them out, each named; a left-out column named
// with --tensor says it is left out. A failure writes nothing and says so in one line.
func TestConvertNullsAndStrings(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.arrow")
	writeUserTable(t, in, 2, 2)
	for _, tc := range []struct {
		name   string
		args   []string
		out    string
		fail   string // the error's words, when it fails (OUT: the output's path)
		stderr string // what it says otherwise
	}{
		{name: "npy refuses null rows", args: []string{"--tensor", "t.label"}, out: "x.npy",
			fail: "OUT: t.label: 1 null rows, and npy output holds no nulls: give them a value with --fill VALUE (arrow, arrows and parquet keep them)"},
		{name: "tfrecord refuses null rows", out: "x.tfrecord", fail: "OUT: t.label: 1 null rows, and tfrecord output holds no nulls: give them a value with --fill VALUE"},
		{name: "--fill gives them a value", args: []string{"--tensor", "t.label", "--fill", "-1"}, out: "x.npy"},
		{name: "--fill in every format", args: []string{"--fill", "0"}, out: "x.parquet", stderr: structLeftOut},
		{name: "--fill is parsed as the column's dtype", args: []string{"--fill", "many"}, out: "x.tfrecord", fail: `--fill "many": dataset: t.label: filling its 1 null rows: "many" is not a int64`},
		{name: "npy holds strings", args: []string{"--tensor", "t.name"}, out: "x.npy"},
		{name: "npz holds strings", args: []string{"--fill", "0"}, out: "x.npz", stderr: structLeftOut},
		{name: "tensor refuses strings", args: []string{"--tensor", "t.raw"}, out: "x.tensor", fail: "OUT: t.raw: string tensors cannot be Arrow tensors"},
		{name: "--skip-unsupported leaves them out, named", args: []string{"--skip-unsupported"}, out: "x.npz",
			stderr: "ndarrow convert: warning: t.label: skipped: 1 null rows: npz holds no nulls (give them a value: Tensor.Filled, convert --fill VALUE): null values\n" +
				structLeftOut},
		{name: "a left-out column is no tensor", args: []string{"--tensor", "t.s"}, out: "x.arrow",
			fail: in + ": t.s: struct<a: int32> left out: a struct has no tensor form (read its fields as columns of their own)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tc.out)
			code, _, stderr := runCLI(append(append([]string{"convert"}, tc.args...), in, out)...)
			if tc.fail != "" {
				assert.Equal(t, exitFail, code)
				assert.True(t, strings.HasPrefix(stderr, "ndarrow convert: "+strings.ReplaceAll(tc.fail, "OUT", out)), "%q", stderr)
				assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
				assert.NoFileExists(t, out)
				return
			}
			require.Equal(t, exitOK, code, stderr)
			assert.Equal(t, tc.stderr, stderr)
		})
	}

	// What --fill wrote: the value where the null was, in .npy and in Parquet (no null left).
	out := filepath.Join(dir, "label.npy")
	code, _, stderr := runCLI("convert", "--tensor", "t.label", "--fill", "-1", in, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "one tensor asked for: the other columns are not left out")
	f, err := dataset.Open(out, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	assert.Equal(t, []int64{10, -1, 30, 40}, must(dataset.DenseOf[int64](f.Tensors[0])).Data())
	out = filepath.Join(dir, "filled.parquet")
	code, _, stderr = runCLI("convert", "--fill", "-1", in, out)
	require.Equal(t, exitOK, code, stderr)
	p, err := dataset.Open(out, limits.Limits{})
	require.NoError(t, err)
	defer p.Release()
	label, err := p.Tensor("filled.label")
	require.NoError(t, err)
	assert.Nil(t, label.Valid)
	assert.Equal(t, []int64{10, -1, 30, 40}, must(dataset.DenseOf[int64](label)).Data())
	name, err := p.Tensor("filled.name")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d"}, must(dataset.DenseOf[string](name)).Data(), "no null: unchanged")

	// Strings in an .npz archive: text as NumPy's str (<U), bytes as its bytes (|S), each read
	// back as it was.
	out = filepath.Join(dir, "strings.npz")
	code, _, stderr = runCLI("convert", "--fill", "-1", in, out)
	require.Equal(t, exitOK, code, stderr)
	z, err := dataset.Open(out, limits.Limits{})
	require.NoError(t, err)
	defer z.Release()
	for _, c := range []struct {
		name  string
		bytes bool
	}{{"strings.name", false}, {"strings.raw", true}, {"strings.cat", false}} {
		got, err := z.Tensor(c.name)
		require.NoError(t, err)
		was, err := p.Tensor("filled." + strings.TrimPrefix(c.name, "strings."))
		require.NoError(t, err)
		assert.Equal(t, must(dataset.DenseOf[string](was)).Data(), must(dataset.DenseOf[string](got)).Data(), c.name)
		assert.Equal(t, c.bytes, got.Bytes, c.name)
	}
}

// TestTableToExamples: a table's plain columns (shape [rows]) become one value per Example —
// strings and bytes a bytes_list of one, the label an int64_list of one — its embedding a
// float_list of a row's values; the struct is left out, named; the float64 score rounded to
// float32 and the features' order, which an Example does not keep, are said on stderr.
func TestTableToExamples(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet")
	writeUserTable(t, in)
	out := filepath.Join(dir, "t.tfrecord")
	code, _, stderr := runCLI("convert", "--fill", "-1", in, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "ndarrow convert: warning: t.score: a tf.train.Example holds float32: float64 values rounded to float32 (precision lost)\n"+
		"ndarrow convert: warning: a tf.train.Example keeps no order of its features: they read back by name, not in the order written\n"+
		structLeftOut, stderr)
	examples := examplesOf(t, out)
	require.Len(t, examples, 4)
	bytesOf := func(f *tfpb.Feature) []string {
		var out []string
		for _, b := range f.GetBytesList().GetValue() {
			out = append(out, string(b))
		}
		return out
	}
	raw := []string{"\x00\xff", "", "ab", "\xff"}
	for i, ex := range examples {
		f := ex.GetFeatures().GetFeature()
		assert.Len(t, f, len(tableColumns), "a feature per column")
		assert.Equal(t, []string{string(rune('a' + i))}, bytesOf(f["name"]))
		assert.Equal(t, []string{raw[i]}, bytesOf(f["raw"]))
		assert.Equal(t, []string{[]string{"red", "green", "green", "red"}[i]}, bytesOf(f["cat"]))
		assert.Equal(t, []int64{[]int64{10, -1, 30, 40}[i]}, f["label"].GetInt64List().GetValue())
		assert.Equal(t, []float32{float32(2*i + 1), float32(2*i + 2)}, f["emb"].GetFloatList().GetValue())
		assert.Equal(t, []float32{float32(i) + 0.5}, f["score"].GetFloatList().GetValue())
	}
}

// examplesOf returns the Examples of a TFRecord file (.gz: GZIP).
func examplesOf(t *testing.T, path string) []*tfpb.Example {
	f, err := tfrecord.Open(path, tfrecord.Options{Compression: tfrecord.CompressionOf(path)})
	require.NoError(t, err)
	defer f.Release()
	var out []*tfpb.Example
	for _, r := range f.Records {
		var ex tfpb.Example
		require.NoError(t, proto.Unmarshal(r, &ex))
		out = append(out, &ex)
	}
	return out
}

// must returns v, panicking on err: for values a test has checked the kind of.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
