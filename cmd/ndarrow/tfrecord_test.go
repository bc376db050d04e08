package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/tfio"
	"github.com/ndarrow/ndarrow/tfrecord"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// tfGolden is the folder of TFRecord files written by TensorFlow's projects.
const tfGolden = "../../tfrecord/testdata/tensorflow"

// tfExpected returns tfrecord/testdata/expected.jsonl (written by Python's protobuf runtime
// with TensorFlow's own .proto files) as each file's record count and feature lines.
func tfExpected(t *testing.T) (records map[string]int, features map[string][]inspection) {
	f, err := os.Open("../../tfrecord/testdata/expected.jsonl")
	require.NoError(t, err)
	defer f.Close()
	records, features = map[string]int{}, map[string][]inspection{}
	var file string
	s := bufio.NewScanner(f)
	for s.Scan() {
		var head struct {
			File    string `json:"file"`
			Records int    `json:"records"`
		}
		require.NoError(t, json.Unmarshal(s.Bytes(), &head))
		if head.File != "" {
			file = head.File
			records[file] = head.Records
			continue
		}
		var in inspection
		require.NoError(t, json.Unmarshal(s.Bytes(), &in))
		features[file] = append(features[file], in)
	}
	return records, features
}

func TestInspectTensorFlowFiles(t *testing.T) {
	records, features := tfExpected(t)
	require.Len(t, records, 4)
	for file, n := range records {
		path := filepath.Join(tfGolden, file)
		want := features[file]
		if len(want) == 0 {
			// Raw strings and tensorflow.Event records: one line, status 0, in both modes.
			code, stdout, stderr := runCLI("inspect", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			assert.Equal(t, path+": a TFRecord file of "+itoa(n)+" records of a type ndarrow does not map (not tf.train.Example, SequenceExample or TensorProto)\n", stdout)
			code, stdout, _ = runCLI("inspect", "--json", path)
			require.Equal(t, exitOK, code)
			var line unmappedLine
			require.NoError(t, json.Unmarshal([]byte(stdout), &line))
			assert.Equal(t, n, line.Records)
			assert.Equal(t, "tfrecord", line.Format)
			continue
		}
		got := inspectJSON(t, path)
		require.Len(t, got, len(want), file)
		for i := range want {
			w, g := want[i], got[i]
			assert.Equal(t, w.Name, g.Name, file)
			assert.Equal(t, w.Column, g.Column, w.Name)
			if w.Kind == "ragged" {
				w.NRows, w.NVals = g.NRows, g.NVals // checked through the row splits
				assert.Equal(t, int64(n), *g.NRows, w.Name)
				assert.Equal(t, w.NNZ, *g.NVals, w.Name)
			}
			w.DimNames = []string{}
			assertSame(t, w, g, false, w.Name)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestCompressionFlagOverridesTheName(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz"))
	require.NoError(t, err)
	renamed := filepath.Join(dir, "penguins.bin")
	require.NoError(t, os.WriteFile(renamed, data, 0o644))
	code, _, stderr := runCLI("inspect", renamed)
	assert.Equal(t, exitFail, code, "GZIP bytes under a name that does not say so are no tensor file")
	assert.Contains(t, stderr, "not a tensor file")
	got := inspectJSON(t, filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz"))
	code, stdout, stderr := runCLI("inspect", "--json", "--compression", "gzip", renamed)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 5, strings.Count(stdout, "\n"))
	assert.Contains(t, stdout, got[0].SHA256)
	code, _, stderr = runCLI("inspect", "--compression", "zlib", renamed)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	code, _, stderr = runCLI("inspect", "--compression", "lz4", renamed)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, `compression "lz4": not none, gzip or zlib`)
}

func TestConvertToTFRecordRoundTrips(t *testing.T) {
	dir := t.TempDir()
	lingvo := filepath.Join(tfGolden, "lingvo_wmt14_ende_wpm_32k_test.tfrecord")
	want := inspectJSON(t, lingvo)
	for _, out := range []string{"copy.tfrecord", "copy.tfrecord.gz", "copy.tfrecords"} {
		path := filepath.Join(dir, out)
		code, _, stderr := runCLI("convert", lingvo, path)
		require.Equal(t, exitOK, code, stderr)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, strings.HasSuffix(out, ".gz"), bytes.HasPrefix(b, []byte{0x1f, 0x8b}), "%s: GZIP exactly when the name ends in .gz", out)
		got := inspectJSON(t, path)
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, "copy."+want[i].Column, got[i].Name)
			assertSame(t, want[i], got[i], false, out+": "+want[i].Column)
		}
	}
	// Tensors of different row counts make no table.
	mixed := filepath.Join(dir, "mixed")
	require.NoError(t, os.Mkdir(mixed, 0o755))
	for name, rows := range map[string]int64{"a.npy": 3, "b.npy": 4} {
		f, err := os.Create(filepath.Join(mixed, name))
		require.NoError(t, err)
		_, err = npy.Write(f, ndarray.New[float32](rows, 2))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	code, _, stderr := runCLI("convert", "--to", "tfrecord", mixed, filepath.Join(dir, "mixed.tfrecord"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, `column "b" has 4 rows, column "a" 3: one Example per row needs equal row counts`)
	assert.Equal(t, 1, strings.Count(stderr, "\n"))
	assert.NoFileExists(t, filepath.Join(dir, "mixed.tfrecord"))
	// A ragged tensor has no TensorProto.
	code, _, stderr = runCLI("convert", "--to", "tensorproto", lingvo, filepath.Join(dir, "ragged.tfrecord"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "a ragged array has no dense form")
	assert.NoFileExists(t, filepath.Join(dir, "ragged.tfrecord"))
}

// TestEveryGoldenTensorThroughExamples writes every golden tensor as Examples, one per row,
// and reads them back: a dense or fixed_shape_tensor tensor of shape [rows, ...] comes back
// dense [rows, n] of its values in row-major order — [rows] when a row holds one value, as a
// [rows] was — a ragged one ragged with its rows' flat values, a sparse one as the index and
// value features tf.io.SparseFeature parses, all in the dtypes of the three list kinds; convert
// says on stderr which shape an Example does not keep.
func TestEveryGoldenTensorThroughExamples(t *testing.T) {
	dir := t.TempDir()
	for _, file := range goldenTensorFiles(t) {
		f, err := dataset.Open(file, limits.Limits{})
		require.NoError(t, err)
		for _, orig := range f.Tensors {
			t.Run(filepath.Base(file)+"/"+orig.Name, func(t *testing.T) {
				out := filepath.Join(dir, orig.Name+filepath.Ext(file)+".tfrecord")
				code, _, stderr := runCLI("convert", "--to", "tfrecord", "--tensor", orig.Name, file, out)
				if orig.Shape().Rank() == 0 {
					assert.Equal(t, exitFail, code)
					assert.Contains(t, stderr, "a scalar has no rows")
					assert.NoFileExists(t, out)
					return
				}
				require.Equal(t, exitOK, code, stderr)
				if orig.Rows() == 0 && orig.Sparse == nil || orig.Sparse != nil && orig.Shape()[0] == 0 {
					st, err := os.Stat(out)
					require.NoError(t, err)
					assert.Zero(t, st.Size(), "no rows, no Examples")
					return
				}
				back, err := dataset.Open(out, limits.Limits{})
				require.NoError(t, err)
				defer back.Release()
				feature := orig.Column
				if feature == "" {
					feature = orig.Name
				}
				got := map[string]tensor{}
				for _, b := range back.Tensors {
					got[b.Column] = b
				}
				switch {
				case orig.Sparse != nil:
					values, ok := got[feature+"/values"]
					require.True(t, ok, "%v", got)
					assert.Equal(t, orig.Sparse.NNZ(), values.NNZ())
					for k := 1; k < orig.Shape().Rank(); k++ {
						_, ok := got[feature+"/index/"+itoa(k)]
						assert.True(t, ok, "index feature of axis %d", k)
					}
				case orig.Ragged != nil:
					g := got[feature]
					require.NotNil(t, g.Ragged)
					assert.Equal(t, orig.Ragged.NumRows(), g.Ragged.NumRows())
					assert.Equal(t, orig.NNZ(), g.NNZ(), "every flat value")
					if orig.Ragged.RaggedRank() == 1 && orig.Ragged.InnerShape().Size() == 1 {
						assert.Equal(t, orig.Ragged.RowSplits(), g.Ragged.RowSplits())
					}
					if orig.DType() == g.DType() {
						assert.Equal(t, hashOf(t, orig.Ragged), hashOf(t, g.Ragged))
					}
				default:
					g := got[feature]
					require.NotNil(t, g.Dense, "%+v", g)
					rows := orig.Shape()[0]
					want := ndarray.Shape{rows, orig.Dense.Size() / rows}
					if want[1] == 1 {
						want = want[:1] // one value an Example: [rows]
					}
					assert.Equal(t, want, g.Dense.Shape())
					if !slices.Equal(want, orig.Shape()) {
						assert.Contains(t, stderr, fmt.Sprintf("%s: a tf.train.Example records no shape: %s reads back as %s", orig.Name, rowsShape(orig.Shape()), rowsShape(want)))
					} else {
						assert.NotContains(t, stderr, "records no shape")
					}
					assert.Equal(t, tfrecord.FeatureDType(orig.DType()), g.DType())
					assert.Equal(t, hashOf(t, converted(t, orig.Dense, g.DType())), hashOf(t, g.Dense))
				}
			})
		}
		f.Release()
	}
}

// rowsShape writes a shape as convert's warnings do: [rows, d1, …].
func rowsShape(s ndarray.Shape) string {
	out := "[rows"
	for _, d := range s[1:] {
		out += fmt.Sprintf(", %d", d)
	}
	return out + "]"
}

// converted returns a converted to dtype d.
func converted(t *testing.T, a ndarray.Array, d ndarray.DType) ndarray.Array {
	c, err := ndarray.ConvertTo(a, d)
	require.NoError(t, err)
	return c
}

// hashOf returns the sha256 of what a writes.
func hashOf(t *testing.T, a io.WriterTo) string {
	h := sha256.New()
	_, err := a.WriteTo(h)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

func TestServeStreamsToTensorFlowIO(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "penguins.tfrecord.gz"), data, 0o644))
	sock := filepath.Join(t.TempDir(), "tfio.sock")
	s := startServe(t, dir, "--tfio", "unix://"+sock, "--tfio-tensors", "penguins.species,penguins.body_mass_g", "--tfio-batch-rows", "30")
	assert.Contains(t, s.stdout.String(), "streaming 100 rows of 2 columns to tensorflow-io on unix://"+sock)
	for range 3 {
		conn, err := net.Dial("unix", sock)
		require.NoError(t, err)
		b, err := io.ReadAll(conn)
		conn.Close()
		require.NoError(t, err)
		assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, b[len(b)-8:], "the end-of-stream marker")
		r, err := arrowipc.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		rows, batches := 0, 0
		for r.Next() {
			require.NoError(t, tfio.CheckTensorFlowIO(r.Schema(), r.Record()))
			rows += int(r.Record().NumRows())
			batches++
		}
		require.NoError(t, r.Err())
		assert.Equal(t, []string{"species", "body_mass_g"}, []string{r.Schema().Field(0).Name, r.Schema().Field(1).Name})
		r.Release()
		assert.Equal(t, 100, rows)
		assert.Equal(t, 4, batches)
	}
	assert.Equal(t, exitOK, s.stop())

	code, _, stderr := runCLI("serve", "--addr", "127.0.0.1:0", "--tfio", "tcp://localhost:1", dir)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "want tcp://A.B.C.D:PORT")
}

func TestInspectSequenceExamples(t *testing.T) {
	floats := func(v ...float32) *tfpb.Feature {
		return &tfpb.Feature{Kind: &tfpb.Feature_FloatList{FloatList: &tfpb.FloatList{Value: v}}}
	}
	path := filepath.Join(t.TempDir(), "seq.tfrecord")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := tfrecord.NewWriter(f, tfrecord.None)
	require.NoError(t, err)
	for _, steps := range [][]*tfpb.Feature{{floats(1, 2), floats(3)}, {floats(), floats(4), floats(5, 6)}} {
		b, err := proto.Marshal(&tfpb.SequenceExample{
			Context:      &tfpb.Features{Feature: map[string]*tfpb.Feature{"len": floats(float32(len(steps)))}},
			FeatureLists: &tfpb.FeatureLists{FeatureList: map[string]*tfpb.FeatureList{"frames": {Feature: steps}}},
		})
		require.NoError(t, err)
		require.NoError(t, w.WriteRecord(b))
	}
	require.NoError(t, f.Close())
	got := inspectJSON(t, path)
	require.Len(t, got, 2)
	frames, ctx := got[0], got[1]
	assert.Equal(t, "seq.frames", frames.Name)
	assert.Equal(t, "ragged", frames.Kind)
	assert.Equal(t, []int64{2, -1, -1}, frames.Shape)
	assert.Equal(t, [][]int64{{0, 2, 5}, {0, 2, 3, 3, 4, 6}}, frames.RowSplits, "records → steps → values")
	assert.Equal(t, int64(6), frames.NNZ)
	h := sha256.New()
	for _, v := range []float32{1, 2, 3, 4, 5, 6} {
		_ = binary.Write(h, binary.LittleEndian, v)
	}
	assert.Equal(t, hex.EncodeToString(h.Sum(nil)), frames.SHA256)
	assert.Equal(t, "seq.len", ctx.Name)
	assert.Equal(t, "dense", ctx.Kind)
	assert.Equal(t, []int64{2}, ctx.Shape, "one value a record")
}

// writeBytesExamples writes Examples with bytes features as tf.train.Example producers write
// them — an id (UTF-8), an encoded image (any bytes, one empty), a feature every Example holds
// empty, an empty value, text and raw tokens of as many values as each Example has — beside an
// int64 label, into path.
func writeBytesExamples(t *testing.T, path string) {
	list := func(v ...string) *tfpb.Feature {
		b := make([][]byte, len(v))
		for i, s := range v {
			b[i] = []byte(s)
		}
		return &tfpb.Feature{Kind: &tfpb.Feature_BytesList{BytesList: &tfpb.BytesList{Value: b}}}
	}
	label := func(v int64) *tfpb.Feature {
		return &tfpb.Feature{Kind: &tfpb.Feature_Int64List{Int64List: &tfpb.Int64List{Value: []int64{v}}}}
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := tfrecord.NewWriter(f, tfrecord.None)
	require.NoError(t, err)
	for _, features := range []map[string]*tfpb.Feature{
		{"id": list("a-1"), "image": list("\x89PNG\r\n\x1a\n\x00\xff"), "empty_bytes": list(), "blank": list(""),
			"text": list("x", "héllo"), "tokens": list("\xff\xfe", ""), "label": label(1)},
		{"id": list(""), "image": list(""), "empty_bytes": list(), "blank": list(""),
			"text": list(), "tokens": list("\x00"), "label": label(2)},
		{"id": list("c-3"), "image": list("\xff\xd8\xff\xe0"), "empty_bytes": list(), "blank": list(""),
			"text": list("z"), "tokens": list(), "label": label(-3)},
	} {
		b, err := proto.Marshal(&tfpb.Example{Features: &tfpb.Features{Feature: features}})
		require.NoError(t, err)
		require.NoError(t, w.WriteRecord(b))
	}
	require.NoError(t, w.Close())
}

// TestExamplesThroughTables: TFRecord Examples — TensorFlow's projects' (text as bytes_list,
// ragged), ndarrow's (every list kind) and Examples with bytes features of every shape (one
// value, empty lists, empty values, any bytes, ragged) — convert to Parquet and Arrow, with
// their bytes features as utf8 columns, or binary where a value is not UTF-8, and back to
// Examples of the same features and values.
func TestExamplesThroughTables(t *testing.T) {
	dir := t.TempDir()
	crafted := filepath.Join(dir, "bytes.tfrecord")
	writeBytesExamples(t, crafted)
	for _, src := range []string{
		filepath.Join(tfGolden, "lingvo_wmt14_ende_wpm_32k_test.tfrecord"),
		filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz"),
		"../../tfrecord/testdata/ndarrow-written/examples.tfrecord",
		crafted,
	} {
		want := examplesOf(t, src)
		require.NotEmpty(t, want)
		for _, via := range []string{"parquet", "arrow", "arrows"} {
			t.Run(filepath.Base(src)+"/"+via, func(t *testing.T) {
				mid := filepath.Join(t.TempDir(), "t."+via)
				code, _, stderr := runCLI("convert", src, mid)
				require.Equal(t, exitOK, code, stderr)
				assert.Empty(t, stderr)
				back := filepath.Join(t.TempDir(), "back.tfrecord")
				code, _, stderr = runCLI("convert", mid, back)
				require.Equal(t, exitOK, code, stderr)
				assert.Empty(t, stderr)
				got := examplesOf(t, back)
				require.Len(t, got, len(want))
				for i := range want {
					assert.True(t, proto.Equal(want[i], got[i]), "Example %d:\n%v\n%v", i, want[i], got[i])
				}
				if src != crafted {
					return
				}
				types := columnTypes(t, mid)
				for col, typ := range map[string]string{
					"id": "binary", "blank": "binary", "image": "binary", // one value an Example: a plain column
					"empty_bytes": "list<item: binary, nullable>", "text": "large_list<item: binary, nullable>",
					"tokens": "large_list<item: binary, nullable>", // TensorFlow's int64 row splits
				} {
					assert.Equal(t, typ, types[col], col)
				}
			})
		}
	}
}

// TestFeatureSpec: --spec reads TFX's penguin Examples as tf.io.parse_example would with that
// spec — a scalar feature (100,), as the Examples alone give one value a record, and a feature
// of shape [1] (100, 1), the same values, in the spec's order — names each feature the spec leaves out, in inspect and on convert's stderr,
// and writes what it read; a spec file that is missing or wrong, a record that does not fit
// it, and --spec on a directory are one line naming what is wrong.
func TestFeatureSpec(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz")
	specFile := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	spec := specFile("spec.json", `{"species": {"dtype": "int64", "shape": []}, "body_mass_g": {"dtype": "float32", "shape": [1]}}`)

	plain := map[string]inspection{}
	for _, in := range inspectJSON(t, in) {
		plain[in.Name] = in
	}
	tensors, leftOut := inspectColumns(t, in, "--spec", spec)
	var left []string
	for _, l := range leftOut {
		left = append(left, l.Column+": "+l.Why)
	}
	require.Len(t, tensors, 2)
	shapes := map[string][]int64{"tfx_penguin_eval.species": {100}, "tfx_penguin_eval.body_mass_g": {100, 1}}
	for i, name := range []string{"tfx_penguin_eval.species", "tfx_penguin_eval.body_mass_g"} {
		assert.Equal(t, name, tensors[i].Name)
		assert.Equal(t, shapes[name], tensors[i].Shape, "%s by the spec", name)
		assert.Equal(t, []int64{100}, plain[name].Shape, "%s without a spec: one value a record", name)
		assert.Equal(t, plain[name].SHA256, tensors[i].SHA256, "the same values")
		assert.Equal(t, plain[name].DType, tensors[i].DType)
	}
	assert.Equal(t, []string{
		"culmen_depth_mm: the feature spec does not name it",
		"culmen_length_mm: the feature spec does not name it",
		"flipper_length_mm: the feature spec does not name it",
	}, left)

	out := filepath.Join(dir, "penguins.npz")
	code, _, stderr := runCLI("convert", "--spec", spec, in, out)
	require.Equal(t, exitOK, code, stderr)
	for _, feature := range []string{"culmen_depth_mm", "culmen_length_mm", "flipper_length_mm"} {
		assert.Contains(t, stderr, feature, "convert names what it left out")
	}
	arrays, err := npy.OpenNpz(out, npy.Limits{})
	require.NoError(t, err)
	require.Len(t, arrays, 2)
	for _, a := range arrays {
		assert.Equal(t, ndarray.Shape(shapes["tfx_penguin_eval."+a.Name]), a.Shape(), a.Name)
	}

	s := startServe(t, t.TempDir(), "--writable")
	code, _, stderr = runCLI("put", "--spec", spec, s.uri, in)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "flipper_length_mm", "put names what it left out")
	back := filepath.Join(dir, "species.npy")
	code, _, stderr = runCLI("get", s.uri, "tfx_penguin_eval.species", back)
	require.Equal(t, exitOK, code, stderr)
	got := inspectJSON(t, back)
	require.Len(t, got, 1)
	assert.Equal(t, []int64{100}, got[0].Shape)
	assert.Equal(t, plain["tfx_penguin_eval.species"].SHA256, got[0].SHA256)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a missing spec file", []string{"--spec", filepath.Join(dir, "none.json"), in},
			"open " + filepath.Join(dir, "none.json") + ": no such file or directory"},
		{"a spec that is not one", []string{"--spec", specFile("bad.json", `{"species": {"dtype": "int128"}}`), in},
			filepath.Join(dir, "bad.json") + `: feature "species": dtype "int128": an Example holds int64, float32 or string: tfrecord: feature spec`},
		{"records the spec does not fit", []string{"--spec", specFile("wrong.json", `{"species": {"dtype": "int64", "shape": [2]}}`), in},
			`feature "species": record 0 has 1 values, rows of shape (2,) have 2`},
		{"a directory", []string{"--spec", spec, dir},
			dir + ": --spec is for a TFRecord file of Examples, not a directory"},
	} {
		code, stdout, stderr := runCLI(append([]string{"inspect"}, tc.args...)...)
		assert.Equal(t, exitFail, code, tc.name)
		assert.Empty(t, stdout, tc.name)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%s: %s", tc.name, stderr)
		assert.True(t, strings.HasPrefix(stderr, "ndarrow inspect: "), stderr)
		assert.Contains(t, stderr, tc.want, tc.name)
	}
}

// TestOneValueColumnsThroughTFRecord: a table of plain columns — an int64 label, a float32
// score, a bytes id — and an int64 [rows, 1] converted to TFRecord and back to Parquet come
// back as plain columns [rows] of the same values (no list column: what DuckDB reads as
// numbers), convert saying on stderr, once, that the [rows, 1] reads back as [rows]; and
// --spec gives the [rows, 1] back.
func TestOneValueColumnsThroughTFRecord(t *testing.T) {
	dir := t.TempDir()
	const rows = 5
	in := filepath.Join(dir, "t.arrow")
	require.NoError(t, dataset.Save(in, []tensor{
		{Name: "t.label", Column: "label", Dense: ndarray.FromFunc(func(i []int64) int64 { return i[0] - 2 }, rows)},
		{Name: "t.score", Column: "score", Dense: ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]) / 2 }, rows)},
		{Name: "t.id", Column: "id", Bytes: true, Dense: ndarray.FromFunc(func(i []int64) string { return "\xffid" + itoa(int(i[0])) }, rows)},
		{Name: "t.col", Column: "col", Dense: ndarray.FromFunc(func(i []int64) int64 { return i[0] * 3 }, rows, 1)},
	}, dataset.WriteOptions{}))
	examples := filepath.Join(dir, "t.tfrecord")
	code, _, stderr := runCLI("convert", in, examples)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "ndarrow convert: warning: t.col: a tf.train.Example records no shape: [rows, 1] reads back as [rows] (a feature spec gives the shape back)\n"+
		"ndarrow convert: warning: a tf.train.Example keeps no order of its features: they read back by name, not in the order written\n", stderr)

	orig := map[string]inspection{}
	for _, in := range inspectJSON(t, in) {
		orig[strings.TrimPrefix(in.Name, "t.")] = in
	}
	for _, got := range inspectJSON(t, examples) {
		col := strings.TrimPrefix(got.Name, "t.")
		assert.Equal(t, []int64{rows}, got.Shape, col)
		assert.Equal(t, "dense", got.Kind, col)
		assert.Equal(t, orig[col].SHA256, got.SHA256, "%s: the same values", col)
	}
	back := filepath.Join(dir, "back.parquet")
	code, _, stderr = runCLI("convert", examples, back)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, map[string]string{"label": "int64", "score": "float32", "id": "binary", "col": "int64"}, columnTypes(t, back))

	spec := filepath.Join(dir, "spec.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"col": {"dtype": "int64", "shape": [1]}}`), 0o644))
	got, _ := inspectColumns(t, examples, "--spec", spec)
	require.Len(t, got, 1)
	assert.Equal(t, []int64{rows, 1}, got[0].Shape, "the spec's shape")
	assert.Equal(t, orig["col"].SHA256, got[0].SHA256)
}
