package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
)

// inspectJSON returns the inspect --json lines of a file's tensors.
func inspectJSON(t *testing.T, path string) []inspection {
	tensors, _ := inspectColumns(t, path)
	return tensors
}

// inspectColumns returns the inspect --json lines of a file, read with flags: its tensors',
// and its columns' left out.
func inspectColumns(t *testing.T, path string, flags ...string) ([]inspection, []leftOutLine) {
	code, stdout, stderr := runCLI(append(append([]string{"inspect", "--json", "--splits"}, flags...), path)...)
	require.Equal(t, exitOK, code, stderr)
	var tensors []inspection
	var left []leftOutLine
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.Contains(line, `"left_out":`) {
			var l leftOutLine
			require.NoError(t, json.Unmarshal([]byte(line), &l))
			left = append(left, l)
			continue
		}
		var in inspection
		require.NoError(t, json.Unmarshal([]byte(line), &in))
		tensors = append(tensors, in)
	}
	return tensors, left
}

func TestConvertKeepsDimNames(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.arrow")
	code, _, stderr := runCLI("convert", "--to", "arrow", "../../ipc/testdata/arrow-cpp-17/dense_float_rank3.tensor", out)
	require.Equal(t, exitOK, code, stderr)
	got := inspectJSON(t, out)[0]
	assert.Equal(t, []string{"batch", "row", "col"}, got.DimNames, "the rows' name travels in the field metadata")
	back := filepath.Join(dir, "x.tensor")
	code, _, stderr = runCLI("convert", "--to", "tensor", out, back)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{"batch", "row", "col"}, inspectJSON(t, back)[0].DimNames)
}

func TestConvertMultiTensorFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.tensor")
	code, _, stderr := runCLI("convert", "--to", "tensor", "../../ipc/testdata/arrow-cpp-17/multi_3.tensor", out)
	require.Equal(t, exitOK, code, stderr)
	orig, err := os.ReadFile("../../ipc/testdata/arrow-cpp-17/multi_3.tensor")
	require.NoError(t, err)
	ours, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, len(orig), len(ours), "three messages framed as C++ frames them")
	assert.Len(t, inspectJSON(t, out), 3)
}

func TestConvertFailuresLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"several tensors into one .npy": {[]string{"--to", "npy", "../../ipc/testdata/arrow-cpp-17/multi_3.tensor"}, "holds 3 tensors"},
		"rows differ in one batch":      {[]string{"--to", "arrow", "../../ipc/testdata/arrow-cpp-17/multi_3.tensor"}, "need the same"},
		"bool into a tensor":            {[]string{"--to", "tensor", "../../npy/testdata/numpy/bool_mask.npy"}, "bool tensors cannot be Arrow Tensor messages"},
		"scalar into a column":          {[]string{"--to", "arrows", "../../npy/testdata/numpy/f32_scalar.npy"}, "a scalar: a tensor column needs a first dimension of rows"},
		"csr of rank 3":                 {[]string{"--to", "csr", "../../npy/testdata/numpy/u8_image.npy"}, "csr needs a rank-2 tensor, not shape (8, 8, 3)"},
		"csc of rank 3":                 {[]string{"--to", "csc", "../../ipc/testdata/arrow-cpp-17/csf_double_3x4x5_i64.tensor"}, "csc needs a rank-2 tensor"},
		"unknown format":                {[]string{"--to", "hdf5", "../../npy/testdata/numpy/u8_image.npy"}, "unknown format"},
		"unreadable input":              {[]string{"--to", "npy", "../../npy/testdata/numpy/object_refuse.npy"}, "never unpickled"},
		"ragged into a tensor":          {[]string{"--to", "tensor", "../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow"}, "batch_tensors.tokens: a ragged array has no dense form"},
		"ragged into coo":               {[]string{"--to", "coo", "../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrows"}, "a ragged array has no dense form"},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			code, _, stderr := runCLI(append(append([]string{"convert"}, tc.args...), out)...)
			if name == "unknown format" { // a usage error: the message and the usage line
				assert.Equal(t, exitUsage, code)
				assert.Contains(t, stderr, tc.msg)
				assert.Equal(t, 2, strings.Count(stderr, "\n"))
				assert.Contains(t, stderr, "\nusage: ndarrow convert")
			} else {
				assert.Equal(t, exitFail, code)
				assert.Contains(t, stderr, tc.msg)
				assert.Equal(t, 1, strings.Count(stderr, "\n"))
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "no output and no temporary file left behind")
		})
	}
	code, _, _ := runCLI("convert", "--to", "npy", "only-one-arg")
	assert.Equal(t, exitUsage, code)
}

// TestConvertSparse converts dense and sparse golden files to every sparse format the rank
// allows, back to dense and to sparse record batches, and checks with inspect that the
// elements (their sha256), shape, type and number of stored values are kept.
func TestConvertSparse(t *testing.T) {
	dir := t.TempDir()
	inputs, err := filepath.Glob("../../ipc/testdata/arrow-cpp-17/c[os]*.tensor")
	require.NoError(t, err)
	require.Len(t, inputs, 10)
	inputs = append(inputs, "../../ipc/testdata/arrow-cpp-17/dense_double_rank3.tensor",
		"../../ipc/testdata/arrow-cpp-17/dense_double_3x5_colmajor.tensor", "../../npy/testdata/numpy/f64_fortran.npy")
	for _, in := range inputs {
		src := inspectJSON(t, in)[0]
		var nonzero int64 = -1
		for _, to := range []string{"coo", "csr", "csc", "csf", "tensor", "arrows", "arrow"} {
			if (to == "csr" || to == "csc") && len(src.Shape) != 2 {
				continue
			}
			if (to == "arrow" || to == "arrows") && !strings.HasPrefix(src.Kind, "sparse") {
				continue // dense batches are TestConvertRoundTrips'
			}
			t.Run(filepath.Base(in)+"/"+to, func(t *testing.T) {
				out := filepath.Join(dir, filepath.Base(in)+"."+to)
				code, _, stderr := runCLI("convert", "--to", to, in, out)
				require.Equal(t, exitOK, code, stderr)
				got := inspectJSON(t, out)
				require.Len(t, got, 1)
				g := got[0]
				assert.Equal(t, src.SHA256, g.SHA256, "elements")
				assert.Equal(t, src.Shape, g.Shape)
				assert.Equal(t, src.DType, g.DType)
				switch to {
				case "tensor", "arrow", "arrows":
					assert.Equal(t, src.Kind, g.Kind, "every kind stays itself")
					assert.Equal(t, src.DimNames, g.DimNames)
				default:
					assert.Equal(t, "sparse_"+to, g.Kind)
					assert.Equal(t, src.DimNames, g.DimNames)
					if nonzero < 0 {
						nonzero = g.NNZ
					}
					assert.Equal(t, nonzero, g.NNZ, "every format stores the same entries")
					if strings.HasPrefix(src.Kind, "sparse") {
						assert.LessOrEqual(t, g.NNZ, src.NNZ)
					}
				}
			})
		}
	}
}

// TestConvertSciPy: a sparse matrix written to .npz is SciPy's (save_npz's members, the
// layout kept: what load_npz reads, testdata of the dataset package), read back as the same
// matrix; --dense keeps the dense member; a sparse tensor of another rank is refused in one
// line naming --dense, and goes with it; a .npy file, which has no sparse layout, gets the
// dense form and a warning saying so; a SciPy format ndarrow does not read is one line.
func TestConvertSciPy(t *testing.T) {
	dir := t.TempDir()
	csr := golden + "/csr_double_5x7_i64.tensor"
	src := inspectJSON(t, csr)[0]

	out := filepath.Join(dir, "m.npz")
	code, _, stderr := runCLI("convert", csr, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	got := inspectJSON(t, out)
	require.Len(t, got, 1)
	assert.Equal(t, "sparse_csr", got[0].Kind)
	assert.Equal(t, src.NNZ, got[0].NNZ)
	assert.Equal(t, src.SHA256, got[0].SHA256)
	members, err := npy.ReadNpz(must(os.ReadFile(out)), npy.Limits{})
	require.NoError(t, err)
	var names []string
	for _, m := range members {
		names = append(names, m.Name)
	}
	assert.Equal(t, []string{"indices", "indptr", "format", "shape", "data"}, names)

	dense := filepath.Join(dir, "d.npz")
	code, _, stderr = runCLI("convert", "--dense", csr, dense)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "--dense asked for it")
	got = inspectJSON(t, dense)
	require.Len(t, got, 1)
	assert.Equal(t, "dense", got[0].Kind)
	assert.Equal(t, src.SHA256, got[0].SHA256)

	code, _, stderr = runCLI("convert", csr, filepath.Join(dir, "d.npy"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "ndarrow convert: warning: csr_double_5x7_i64: a csr tensor written in its dense form (35 elements, 12 stored): a .npy file holds dense arrays\n", stderr)

	coo := golden + "/coo_float_3x4x2x2_i64.tensor"
	code, _, stderr = runCLI("convert", coo, filepath.Join(dir, "c.npz"))
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "a sparse tensor of rank 4: SciPy's .npz holds matrices (rank 2); write its dense form (--dense)")
	assert.NoFileExists(t, filepath.Join(dir, "c.npz"))
	code, _, stderr = runCLI("convert", "--dense", coo, filepath.Join(dir, "c.npz"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "dense", inspectJSON(t, filepath.Join(dir, "c.npz"))[0].Kind)

	bsr := "../../dataset/testdata/scipy-npz/bsr_float64.npz"
	code, _, stderr = runCLI("inspect", bsr)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow inspect: "+bsr+": npz: scipy.sparse bsr matrix: dataset: a scipy.sparse format ndarrow does not read (convert it with .tocsr() before save_npz)\n", stderr)
}

// TestTensorPicksByColumn: --tensor takes a table's column name as inspect prints it (its
// "column") as well as the tensor's name; a table into a format of one tensor says how to pick.
func TestTensorPicksByColumn(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.arrow")
	writeUserTable(t, in, 2, 2)
	for _, pick := range []string{"t.emb", "emb"} {
		out := filepath.Join(dir, pick+".npy")
		code, _, stderr := runCLI("convert", "--tensor", pick, in, out)
		require.Equal(t, exitOK, code, stderr)
		got := inspectJSON(t, out)
		require.Len(t, got, 1)
		assert.Equal(t, "float32", got[0].DType, pick)
	}
	code, _, stderr := runCLI("convert", "--tensor", "nope", in, filepath.Join(dir, "x.npy"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, `no tensor "nope" (it holds t.emb, t.label, t.score, t.name, t.raw, t.cat)`)

	out := filepath.Join(dir, "all.npy")
	code, _, stderr = runCLI("convert", in, out)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow convert: "+in+" holds 6 tensors (t.emb, t.label, t.score, t.name, t.raw, t.cat); a .npy file holds one: pick it with --tensor, or write .npz, .arrow or .parquet\n", stderr)
	assert.NoFileExists(t, out)
}

// TestConvertRagged rewrites the golden record batches, ragged columns included, as an IPC
// file and stream, and checks with inspect that every column reads back the same.
func TestConvertRagged(t *testing.T) {
	in := "../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow"
	want := inspectJSON(t, in)
	require.Len(t, want, 5)
	dir := t.TempDir()
	src := in
	for i, to := range []string{"arrows", "arrow"} {
		out := filepath.Join(dir, "step"+string(rune('0'+i))+"."+to)
		code, _, stderr := runCLI("convert", "--to", to, src, out)
		require.Equal(t, exitOK, code, stderr)
		got := inspectJSON(t, out)
		require.Len(t, got, len(want))
		for c := range want {
			w, g := want[c], got[c]
			assert.Equal(t, w.Kind, g.Kind, w.Column)
			assert.Equal(t, w.SHA256, g.SHA256, w.Column)
			assert.Equal(t, w.RowSplits, g.RowSplits, w.Column)
			assert.Equal(t, w.NVals, g.NVals, w.Column)
			assert.Equal(t, w.DType, g.DType, w.Column)
		}
		src = out
	}
	// Each list type is kept: list<float32> stays a list, large_list<int64> a large_list.
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	schema, err := ipc.ReadSchema(b, ipc.BatchOptions{})
	require.NoError(t, err)
	assert.Equal(t, "list<item: float32, nullable>", schema.Field(2).Type.String())
	assert.Equal(t, "large_list<item: int64, nullable>", schema.Field(3).Type.String())
	assert.Equal(t, "list<item: list<item: int32, nullable>, nullable>", schema.Field(4).Type.String())
}

// TestInspectBadRaggedColumn corrupts the offsets of a list column: inspect says which column
// and which rule, on one line, and does not panic.
func TestInspectBadRaggedColumn(t *testing.T) {
	b, err := os.ReadFile("../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrows")
	require.NoError(t, err)
	// The tokens column's int32 offsets are 0 3 4 6 6: make the second one 5, past the third.
	at := bytes.Index(b, []byte{0, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 6, 0, 0, 0})
	require.Positive(t, at)
	b[at+4] = 5
	path := filepath.Join(t.TempDir(), "bad.arrows")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	code, _, stderr := runCLI("inspect", "--json", path)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "column tokens: offset 2 is 4, after 5: offsets must not decrease")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
}

// TestConvertParquetToArrowsFromTheFile: an uncompressed Parquet file of tensor columns is
// converted to an Arrow stream from the mapped file (a batch per row group, to a file, to
// standard output and to /dev/null), and the stream holds what the same table in a ZSTD file
// — decoded, one batch — converts to.
func TestConvertParquetToArrowsFromTheFile(t *testing.T) {
	dir := t.TempDir()
	const rows = 20000
	tensors := []dataset.Tensor{
		{Name: "emb", Column: "emb", Dense: ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, rows*8, 1)).Reshape(rows, 8))},
		{Name: "label", Column: "label", Dense: ndarray.Must(ndarray.Arange[int64](0, rows, 1))},
	}
	plain, zstd := filepath.Join(dir, "plain.parquet"), filepath.Join(dir, "zstd.parquet")
	require.NoError(t, dataset.Save(plain, tensors, dataset.WriteOptions{ParquetCompression: parquet.Uncompressed}))
	require.NoError(t, dataset.Save(zstd, tensors, dataset.WriteOptions{ParquetCompression: parquet.Zstd}))
	sums := func(path string) []string {
		var out []string
		for _, in := range inspectJSON(t, path) {
			out = append(out, in.Column+" "+in.DType+" "+in.SHA256)
		}
		return out
	}
	fromZstd, fromPlain := filepath.Join(dir, "z.arrows"), filepath.Join(dir, "p.arrows")
	for in, out := range map[string]string{zstd: fromZstd, plain: fromPlain} {
		code, _, stderr := runCLI("convert", "--to", "arrows", in, out)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stderr)
	}
	want := sums(fromZstd)
	require.Len(t, want, 2)
	assert.Equal(t, want, sums(fromPlain))
	var direct bytes.Buffer // what the file, written from its pages, is
	s := dataset.OpenParquetStream(plain, limits.Limits{})
	require.NotNil(t, s)
	require.NoError(t, s.Write(&direct, parquet.StreamOptions{}))
	require.NoError(t, s.Close())
	got, err := os.ReadFile(fromPlain)
	require.NoError(t, err)
	assert.Equal(t, direct.Bytes(), got, "convert wrote the stream from the file's pages")
	code, stdout, stderr := runCLI("convert", "--to", "arrows", plain, "-")
	require.Equal(t, exitOK, code, stderr)
	piped := filepath.Join(dir, "piped.arrows")
	require.NoError(t, os.WriteFile(piped, []byte(stdout), 0o644))
	assert.Equal(t, want, sums(piped))
	code, _, stderr = runCLI("convert", "--to", "arrows", plain, os.DevNull)
	require.Equal(t, exitOK, code, stderr)
}
