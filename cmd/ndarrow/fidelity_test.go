package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenTensorFiles are the files of every golden tensor ndarrow reads: Arrow C++ 17's Tensor
// and SparseTensor messages and record batches, NumPy's .npy files and .npz archives, and
// SciPy's sparse matrices (save_npz) of the formats and dtypes ndarrow reads.
func goldenTensorFiles(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{
		golden + "/*.tensor",
		"../../npy/testdata/numpy/*.npy",
		"../../npy/testdata/numpy-npz/savez*.npz",
		"../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow*",
		"../../dataset/testdata/scipy-npz/*.npz",
	} {
		found, err := filepath.Glob(pattern)
		require.NoError(t, err)
		require.NotEmpty(t, found, pattern)
		files = append(files, found...)
	}
	return slices.DeleteFunc(files, func(f string) bool {
		return strings.HasSuffix(f, "object_refuse.npy") || strings.Contains(f, "scipy-npz/bsr_") ||
			strings.Contains(f, "scipy-npz/dia_") || strings.Contains(f, "scipy-npz/csr_complex")
	})
}

// holds reports whether format to can hold tensor in at all: a ragged tensor only goes into
// record batches (Arrow IPC, Parquet); bool tensors only into .npy (Arrow tensors have no bool); a scalar into no
// column; CSR and CSC are matrices, and CSF needs rank 2 or more; an .npz archive holds a
// sparse tensor as SciPy's matrix (without --dense).
func holds(to string, in inspection) bool {
	rank := len(in.Shape)
	switch {
	case in.Kind == "ragged":
		return recordFormat(to)
	case to == "npz" && strings.HasPrefix(in.Kind, "sparse_"):
		return rank == 2
	case in.DType == "bool" && strings.HasPrefix(in.Kind, "sparse_"):
		return to == "npy" || to == "tensorproto" // a sparse tensor of bools has no Arrow form
	case to == "npy" || to == "npz" || to == "tensorproto":
		return true
	case recordFormat(to):
		return rank > 0 // bool tensors too: a plain fixed_size_list<bool> column
	case in.DType == "bool":
		return false // no bool Tensor or SparseTensor messages
	case to == "csr" || to == "csc":
		return rank == 2
	case to == "csf":
		return rank >= 2
	}
	return true
}

// recordFormat reports whether to writes record batches: Arrow IPC files and streams, Parquet.
func recordFormat(to string) bool { return to == "arrow" || to == "arrows" || to == "parquet" }

// sparseFormats are the output formats that write SparseTensor messages of one format.
var sparseFormats = []string{"coo", "csr", "csc", "csf"}

// numpyFormat reports whether to is NumPy's: dense tensors without dimension names.
func numpyFormat(to string) bool { return to == "npy" || to == "npz" }

// denseFormat reports whether to holds dense tensors only: NumPy's and TensorProto records.
func denseFormat(to string) bool { return numpyFormat(to) || to == "tensorproto" }

// after returns what inspect says of tensor in written in format to. Formats that hold all of
// it (tensor, arrow, arrows, parquet) keep everything but the file's name; a .npy or .npz file holds
// dense tensors and no names, but for a sparse matrix in an .npz archive, SciPy's: CSR, CSC
// or COO (a CSF); a sparse format stores no more entries than the tensor had.
// looseNNZ says the stored entries may be fewer than in.NNZ (zeros are not stored).
func after(to string, in inspection) (want inspection, looseNNZ bool) {
	want = in
	switch {
	case to == "npz" && strings.HasPrefix(in.Kind, "sparse_"):
		want.DimNames = []string{}
		if in.Kind == "sparse_csf" {
			want.Kind = "sparse_coo"
		}
	case numpyFormat(to):
		want.Kind, want.DimNames, want.NNZ = "dense", []string{}, size(in.Shape)
	case to == "tensorproto":
		want.Kind, want.NNZ = "dense", size(in.Shape)
	case slices.Contains(sparseFormats, to):
		want.Kind = "sparse_" + to
		return want, true
	}
	return want, false
}

// size returns the number of elements of a shape.
func size(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// origin returns the format the tensor in came as, the one to write it back in: a sparse
// tensor's own format, .npy, a Tensor message, or the record batches of its file.
func origin(file string, in inspection) string {
	ext := strings.TrimPrefix(filepath.Ext(file), ".")
	if f, ok := strings.CutPrefix(in.Kind, "sparse_"); ok && ext == "tensor" {
		return f
	}
	return ext
}

// assertSame compares two inspect --json lines field by field, but for the name and the
// column, which follow the file (a tensor becomes a column named after it; see
// assertColumnKept), and, when looseNNZ, the number of stored entries, which may only shrink.
func assertSame(t *testing.T, want, got inspection, looseNNZ bool, what string) {
	t.Helper()
	assert.Equal(t, want.Kind, got.Kind, "%s: kind", what)
	assert.Equal(t, want.DType, got.DType, "%s: dtype", what)
	assert.Equal(t, want.Shape, got.Shape, "%s: shape", what)
	assert.Equal(t, want.DimNames, got.DimNames, "%s: dim_names", what)
	assert.Equal(t, want.SHA256, got.SHA256, "%s: values", what)
	if looseNNZ {
		assert.LessOrEqual(t, got.NNZ, want.NNZ, "%s: stored entries", what)
	} else {
		assert.Equal(t, want.NNZ, got.NNZ, "%s: stored entries", what)
	}
	assert.Equal(t, want.NRows, got.NRows, "%s: rows", what)
	assert.Equal(t, want.NVals, got.NVals, "%s: values of the rows", what)
	assert.Equal(t, want.RowSplits, got.RowSplits, "%s: row splits", what)
	assert.Equal(t, want.Nulls, got.Nulls, "%s: null rows", what)
}

// TestEveryGoldenTensorSurvives converts every golden tensor into every output format and
// back into the format it came in, and compares inspect --json before and after, field by
// field: what a format can hold comes back unchanged (dimension names of every axis, the kind
// — dense, fixed_shape_tensor, ragged, each sparse format — the column, the dtype, the shape
// and the values), and what it cannot is the documented loss (.npy and .npz files have no
// names and no sparse or column form; a sparse format holds no column of tensors). A format that cannot
// hold the tensor at all fails with one line and writes nothing.
func TestEveryGoldenTensorSurvives(t *testing.T) {
	dir := t.TempDir()
	for _, file := range goldenTensorFiles(t) {
		for _, orig := range inspectJSON(t, file) {
			back := origin(file, orig)
			for _, f := range outputFormats {
				to := f.name
				switch to {
				case "tfrecord":
					continue // Examples change dtypes and shapes: TestEveryGoldenTensorThroughExamples
				}
				t.Run(orig.Name+"/"+filepath.Ext(file)+"/"+to, func(t *testing.T) {
					out := filepath.Join(dir, fmt.Sprintf("%s.%s.%s", orig.Name, strings.TrimPrefix(filepath.Ext(file), "."), to))
					code, _, stderr := runCLI("convert", "--tensor", orig.Name, file, out)
					if !holds(to, orig) {
						assert.Equal(t, exitFail, code, "%s cannot hold %s %s %v", to, orig.Kind, orig.DType, orig.Shape)
						assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
						assert.NoFileExists(t, out)
						return
					}
					require.Equal(t, exitOK, code, stderr)
					want, looseNNZ := after(to, orig)
					mid := want
					got := inspectJSON(t, out)
					require.Len(t, got, 1)
					assertSame(t, want, got[0], looseNNZ, "in "+to)
					switch {
					case to == "npz" && orig.Column == "" && !strings.HasPrefix(orig.Kind, "sparse_"):
						assert.Equal(t, orig.Name, got[0].Column, "in npz: a member named after the tensor")
					case orig.Column != "" && to != "npy" && to != "tensorproto":
						assert.Equal(t, orig.Column, got[0].Column, "in %s: the column a tensor came from", to)
					}

					// Back into the format it came in: --dense where a dense tensor went sparse.
					args := []string{"convert", "--to", back}
					if want.Kind != orig.Kind && strings.HasPrefix(want.Kind, "sparse_") && !strings.HasPrefix(orig.Kind, "sparse_") {
						args = append(args, "--dense")
					}
					restored := out + ".back." + back
					code, _, stderr = runCLI(append(args, out, restored)...)
					require.Equal(t, exitOK, code, stderr)
					got = inspectJSON(t, restored)
					require.Len(t, got, 1)
					// What the format dropped stays dropped: a .npy file's names, a sparse
					// format's being a column of tensors.
					want = orig
					if numpyFormat(to) {
						want.DimNames = []string{}
					}
					if orig.Kind == "fixed_shape_tensor" && !holdsAll(to) {
						want.Kind = "dense"
					}
					if slices.Contains(sparseFormats, back) && denseFormat(to) {
						want.Kind = orig.Kind
					}
					if back == "npz" && strings.HasPrefix(orig.Kind, "sparse_") {
						// SciPy's layout is what the matrix was in: a sparse format's own (a CSF's
						// COO), or none once written dense.
						want.Kind, want.NNZ = mid.Kind, mid.NNZ
						if mid.Kind == "sparse_csf" {
							want.Kind = "sparse_coo"
						}
					}
					assertSame(t, want, got[0], looseNNZ || denseFormat(to) && strings.HasPrefix(orig.Kind, "sparse_"), "back from "+to)
					if orig.Column != "" && to != "npy" && to != "tensorproto" {
						assert.Equal(t, orig.Column, got[0].Column, "back from %s: the column a tensor came from", to)
					}
				})
			}
		}
	}
}

// holdsAll reports whether a format keeps every kind of tensor it can hold.
func holdsAll(to string) bool {
	return to == "tensor" || to == "arrow" || to == "arrows" || to == "parquet"
}

// TestEveryGoldenTensorSurvivesFlight puts every golden tensor a Flight server can hold
// (everything but scalars), checks that ls --json says what inspect --json
// says of it, fetches it into the format it came in and compares inspect --json field by
// field.
func TestEveryGoldenTensorSurvivesFlight(t *testing.T) {
	srv := startServe(t, t.TempDir(), "--writable")
	dir := t.TempDir()
	for _, file := range goldenTensorFiles(t) {
		for _, orig := range inspectJSON(t, file) {
			t.Run(orig.Name+"/"+filepath.Ext(file), func(t *testing.T) {
				name := orig.Name + filepath.Ext(file)
				code, _, stderr := runCLI("put", "--tensor", orig.Name, "--name", name, srv.uri, file)
				if !holds("arrows", orig) {
					assert.Equal(t, exitFail, code, "Flight cannot hold %s %s %v", orig.Kind, orig.DType, orig.Shape)
					assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
					return
				}
				require.Equal(t, exitOK, code, stderr)

				code, stdout, stderr := runCLI("ls", "--json", srv.uri)
				require.Equal(t, exitOK, code, stderr)
				var listed map[string]any
				for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
					if strings.Contains(line, `"name":"`+name+`"`) {
						require.NoError(t, json.Unmarshal([]byte(line), &listed))
					}
				}
				require.NotNil(t, listed, "ls lists %s", name)
				var shape []int64
				for _, d := range listed["shape"].([]any) {
					shape = append(shape, int64(d.(float64)))
				}
				var names []string
				for _, n := range listed["dim_names"].([]any) {
					names = append(names, n.(string))
				}
				if names == nil {
					names = []string{}
				}
				assert.Equal(t, orig.Kind, listed["kind"], "ls: kind")
				assert.Equal(t, orig.DType, listed["dtype"], "ls: dtype")
				assert.Equal(t, orig.Shape, shape, "ls: shape")
				assert.Equal(t, orig.DimNames, names, "ls: dim_names")

				back := origin(file, orig)
				out := filepath.Join(dir, name+"."+back)
				code, _, stderr = runCLI("get", "--to", back, srv.uri, name, out)
				require.Equal(t, exitOK, code, stderr)
				got := inspectJSON(t, out)
				require.Len(t, got, 1)
				assertSame(t, orig, got[0], false, "through Flight")

				if strings.HasPrefix(orig.Kind, "sparse_") { // a .tensor file holds it as it is
					out := filepath.Join(dir, name+".tensor")
					code, _, stderr = runCLI("get", srv.uri, name, out)
					require.Equal(t, exitOK, code, stderr)
					assertSame(t, orig, inspectJSON(t, out)[0], false, "through Flight into .tensor")
				}
			})
		}
	}
}
