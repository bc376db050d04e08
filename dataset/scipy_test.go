package dataset_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/sparse"
)

// The evidence for SciPy's sparse .npz (testdata/scipy-npz): archives scipy.sparse.save_npz
// (SciPy 1.10) wrote, with what load_npz reads of them (gen_scipy.py, expected.json); what
// ndarrow writes of them (testdata/scipy-npz/ndarrow), with what load_npz read of that
// (scipy-read.jsonl, check_scipy.py) and what Arrow C++ 17 read of the SparseTensor messages
// ndarrow made of them (arrow-cpp-read.jsonl, check_arrow_cpp.sh).

const scipyDir = "testdata/scipy-npz"

var updateSciPy = flag.Bool("update-scipy", false,
	"rewrite testdata/scipy-npz/ndarrow (then run check_scipy.py and check_arrow_cpp.sh there)")

// scipyCase is what expected.json says of one archive: load_npz's matrix, the arrays as
// stored, its dense values (json.Number or bool), or the error ndarrow must give.
type scipyCase struct {
	Format     string  `json:"format"`
	Shape      []int64 `json:"shape"`
	DType      string  `json:"dtype"`
	Compressed bool    `json:"compressed"`
	Error      string  `json:"error"`
	Summed     bool    `json:"summed"`
	IndexDType string  `json:"index_dtype"`
	Indices    []int64 `json:"indices"`
	Indptr     []int64 `json:"indptr"`
	Row        []int64 `json:"row"`
	Col        []int64 `json:"col"`
	Data       []any   `json:"data"`
	Dense      []any   `json:"dense"`
}

// scipyCases returns the cases of expected.json by archive name.
func scipyCases(t *testing.T) map[string]scipyCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(scipyDir, "expected.json"))
	require.NoError(t, err)
	var doc struct {
		SciPy string               `json:"scipy"`
		Cases map[string]scipyCase `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	require.Equal(t, "1.10.1", doc.SciPy)
	require.NotEmpty(t, doc.Cases)
	return doc.Cases
}

// sortedNames returns the keys of m in order.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// readSciPyFile reads the one tensor of a SciPy archive.
func readSciPyFile(t *testing.T, path string) ([]dataset.Tensor, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	tensors, _, err := dataset.Read(b, dataset.BaseName(path), limits.Limits{})
	return tensors, err
}

// TestSciPyFiles: every archive save_npz wrote (each format, compressed and stored, the dtypes
// SciPy holds, edge matrices, duplicates and unsorted indices, 64-bit indices) reads as the
// sparse tensor load_npz reads — same layout, shape and dtype, the stored arrays in storage
// order and the same dense values (duplicates summed, as SciPy sums them) — and the formats
// and dtypes ndarrow has no place for are refused, named.
func TestSciPyFiles(t *testing.T) {
	for _, name := range sortedNames(scipyCases(t)) {
		c := scipyCases(t)[name]
		t.Run(name, func(t *testing.T) {
			tensors, err := readSciPyFile(t, filepath.Join(scipyDir, name+".npz"))
			if c.Error != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.Error)
				assert.ErrorIs(t, err, npy.ErrUnsupported)
				if strings.Contains(c.Error, "scipy") {
					assert.ErrorIs(t, err, dataset.ErrSciPyFormat)
					assert.Contains(t, err.Error(), "scipy.sparse "+c.Format+" matrix")
				}
				return
			}
			require.NoError(t, err)
			require.Len(t, tensors, 1)
			tn := tensors[0]
			assert.Equal(t, name, tn.Name)
			require.NotNil(t, tn.Sparse)
			assert.Equal(t, c.Format, strings.ToLower(tn.Sparse.Format().String()))
			assert.Equal(t, ndarray.Shape(c.Shape), tn.Shape())
			assert.Equal(t, c.DType, numpyName(tn.DType()))
			assert.Equal(t, int64(len(c.Data)), tn.NNZ(), "stored entries, duplicates included")
			data, index, indexDType := storedParts(t, tn.Sparse)
			assert.Equal(t, normalized(t, c.Data, c.DType), denseValues(t, data), "the data member, in storage order")
			assert.Equal(t, c.IndexDType, indexDType.String())
			want := map[string][]int64{"indices": c.Indices, "indptr": c.Indptr}
			if c.Format == "coo" {
				want = map[string][]int64{"row": c.Row, "col": c.Col}
			}
			for k, v := range want {
				if len(v) == 0 {
					want[k] = []int64{}
				}
			}
			assert.Equal(t, want, index, "the index members, in storage order")
			d, err := tn.DenseArray(0)
			require.NoError(t, err)
			assert.Equal(t, normalized(t, c.Dense, c.DType), denseValues(t, d), "the dense values, as toarray()")
		})
	}
}

// numpyName returns NumPy's name of a dtype.
func numpyName(d ndarray.DType) string {
	if d == ndarray.Bool {
		return "bool"
	}
	return d.String()
}

// storedParts returns a sparse matrix's arrays as SciPy stores them: data, and indices and
// indptr (CSR, CSC) or row and col (COO) in storage order, with their dtype.
func storedParts(t *testing.T, a sparse.Array) (data ndarray.Array, index map[string][]int64, indexDType ndarray.DType) {
	t.Helper()
	for _, parts := range []func(sparse.Array) (ndarray.Array, map[string][]int64, ndarray.DType, bool){
		partsOf[bool], partsOf[int8], partsOf[int16], partsOf[int32], partsOf[int64], partsOf[uint8],
		partsOf[uint16], partsOf[uint32], partsOf[uint64], partsOf[float16.Num], partsOf[float32], partsOf[float64],
	} {
		if data, index, dt, ok := parts(a); ok {
			return data, index, dt
		}
	}
	t.Fatalf("%T is no CSR, CSC or COO of a dtype SciPy holds", a)
	return nil, nil, 0
}

// partsOf is storedParts for a matrix of T.
func partsOf[T ndarray.Element](a sparse.Array) (ndarray.Array, map[string][]int64, ndarray.DType, bool) {
	vector := func(v []T) ndarray.Array { return ndarray.Must(ndarray.FromSlice(v, int64(len(v)))) }
	switch m := a.(type) {
	case *sparse.CSR[T]:
		return vector(m.Data()), map[string][]int64{"indices": m.Indices().AsInt64(), "indptr": m.Indptr().AsInt64()}, m.Indices().DType(), true
	case *sparse.CSC[T]:
		return vector(m.Data()), map[string][]int64{"indices": m.Indices().AsInt64(), "indptr": m.Indptr().AsInt64()}, m.Indices().DType(), true
	case *sparse.COO[T]:
		coords := m.Indices().AsInt64()
		row, col := []int64{}, []int64{}
		for i := 0; i+1 < len(coords); i += 2 {
			row, col = append(row, coords[i]), append(col, coords[i+1])
		}
		return vector(m.Data()), map[string][]int64{"row": row, "col": col}, m.Indices().DType(), true
	}
	return nil, nil, 0, false
}

// normalized returns values with every number of a float dtype formatted as denseValues
// formats it (Python writes 1.0 where Go writes 1).
func normalized(t *testing.T, values []any, dtype string) []any {
	t.Helper()
	if !strings.HasPrefix(dtype, "float") {
		return values
	}
	out := make([]any, len(values))
	for i, v := range values {
		f, err := v.(json.Number).Float64()
		require.NoError(t, err)
		out[i] = json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return out
}

// denseValues returns the values of d in row-major order, numbers as json.Number strings of
// the same value (floats compared as float64) and bools as bools.
func denseValues(t *testing.T, d ndarray.Array) []any {
	t.Helper()
	out := []any{}
	if b, ok := d.(*ndarray.Dense[bool]); ok {
		for v := range b.Values() {
			out = append(out, v)
		}
		return out
	}
	var ints []string
	switch v := d.(type) {
	case *ndarray.Dense[int8]:
		ints = formatInts(v)
	case *ndarray.Dense[int16]:
		ints = formatInts(v)
	case *ndarray.Dense[int32]:
		ints = formatInts(v)
	case *ndarray.Dense[int64]:
		ints = formatInts(v)
	case *ndarray.Dense[uint8]:
		ints = formatInts(v)
	case *ndarray.Dense[uint16]:
		ints = formatInts(v)
	case *ndarray.Dense[uint32]:
		ints = formatInts(v)
	case *ndarray.Dense[uint64]:
		ints = formatInts(v)
	default:
		f, err := ndarray.ConvertTo(d, ndarray.Float64)
		require.NoError(t, err)
		for x := range f.(*ndarray.Dense[float64]).Values() {
			out = append(out, json.Number(strconv.FormatFloat(x, 'g', -1, 64)))
		}
		return out
	}
	for _, s := range ints {
		out = append(out, json.Number(s))
	}
	return out
}

// formatInts formats the integers of d in row-major order.
func formatInts[T ndarray.Integer](d *ndarray.Dense[T]) []string {
	var out []string
	for v := range d.Values() {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// goMatrices are sparse tensors made in Go that ndarrow writes in SciPy's layout beside the
// SciPy cases: a CSF matrix (written as its COO, with a warning), a CSR with dimension names
// (dropped, with a warning), a float16 COO with int64 coordinates.
func goMatrices(t *testing.T) map[string]dataset.Tensor {
	t.Helper()
	d := ndarray.Must(ndarray.FromSlice([]float32{0, 1.5, 0, 0, -2, 0, 3, 0, 0, 0, 0, 4}, 3, 4))
	csf, err := sparse.FromDenseAs(d, sparse.FormatCSF)
	require.NoError(t, err)
	csr, err := sparse.FromDenseAs(d, sparse.FormatCSR)
	require.NoError(t, err)
	halves := []float16.Num{float16.New(0.5), float16.New(-1), float16.New(65504)}
	coo, err := sparse.MakeCOO(ndarray.Shape{2, 5}, sparse.Int64Indices([]int64{0, 1, 1, 0, 1, 4}), halves)
	require.NoError(t, err)
	return map[string]dataset.Tensor{
		"go_csf_float32":     {Name: "go_csf_float32", Kind: dataset.SparseKind(sparse.FormatCSF), Sparse: csf},
		"go_csr_dim_names":   {Name: "go_csr_dim_names", Kind: dataset.SparseKind(sparse.FormatCSR), Sparse: csr, DimNames: []string{"doc", "term"}},
		"go_coo_float16_i64": {Name: "go_coo_float16_i64", Kind: dataset.SparseKind(sparse.FormatCOO), Sparse: coo},
	}
}

// scipyRead is a line of scipy-read.jsonl or arrow-cpp-read.jsonl: what SciPy's load_npz or
// Arrow C++'s reader read of a file ndarrow wrote.
type scipyRead struct {
	File   string  `json:"file"`
	Format string  `json:"format"`
	Kind   string  `json:"kind"`
	Shape  []int64 `json:"shape"`
	DType  string  `json:"dtype"`
	NNZ    int64   `json:"nnz"`
	SHA256 string  `json:"sha256"`
}

// readRecords returns the lines of a .jsonl file of testdata/scipy-npz by file name.
func readRecords(t *testing.T, name string) map[string]scipyRead {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(scipyDir, name))
	require.NoError(t, err)
	out := map[string]scipyRead{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r scipyRead
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		out[r.File] = r
	}
	return out
}

// denseSHA256 returns the sha256 of a tensor's dense values, little-endian in row-major order.
func denseSHA256(t *testing.T, tn dataset.Tensor) string {
	t.Helper()
	h := sha256.New()
	_, err := tn.WriteValues(h, 0)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// TestSciPyWrittenBack: every SciPy archive ndarrow reads it writes back in SciPy's layout —
// the same members in save_npz's order, equal array by array to SciPy's (its summed form
// where it stored a coordinate twice), compressed as the original was — and reads back the
// same; those bytes are testdata/scipy-npz/ndarrow's, which load_npz read as the same
// matrices (scipy-read.jsonl). The SparseTensor message ndarrow makes of each (not of bools,
// which Arrow tensors cannot hold) is read by Arrow C++ 17 with the same values
// (arrow-cpp-read.jsonl). Matrices made in Go go the same way, a CSF as its COO.
func TestSciPyWrittenBack(t *testing.T) {
	scipyRecords := map[string]scipyRead{}
	cppRecords := map[string]scipyRead{}
	if !*updateSciPy {
		scipyRecords, cppRecords = readRecords(t, "scipy-read.jsonl"), readRecords(t, "arrow-cpp-read.jsonl")
	}
	type input struct {
		tensor   dataset.Tensor
		compress bool
		original []byte // SciPy's archive, nil for a Go matrix or one SciPy stored twice
		warning  string
	}
	inputs := map[string]input{}
	for name, c := range scipyCases(t) {
		if c.Error != "" {
			continue
		}
		path := filepath.Join(scipyDir, name+".npz")
		tensors, err := readSciPyFile(t, path)
		require.NoError(t, err)
		in := input{tensor: tensors[0], compress: c.Compressed}
		if !c.Summed {
			in.original, err = os.ReadFile(path)
			require.NoError(t, err)
		}
		inputs[name] = in
	}
	for name, tn := range goMatrices(t) {
		in := input{tensor: tn, compress: true}
		switch {
		case tn.Sparse.Format() == sparse.FormatCSF:
			in.warning = "SciPy has no CSF: written as its coo"
		case len(tn.DimNames) > 0:
			in.warning = "no place for dimension names: doc,term dropped"
		}
		inputs[name] = in
	}
	for _, name := range sortedNames(inputs) {
		in := inputs[name]
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			var warnings []string
			require.NoError(t, dataset.Write(&buf, dataset.FormatNpz, []dataset.Tensor{in.tensor},
				dataset.WriteOptions{Compress: in.compress, Warn: func(s string) { warnings = append(warnings, s) }}))
			if in.warning != "" {
				require.Len(t, warnings, 1)
				assert.Contains(t, warnings[0], in.warning)
			} else {
				assert.Empty(t, warnings)
			}
			written := buf.Bytes()
			members, err := npy.ReadNpz(written, npy.Limits{})
			require.NoError(t, err)
			var order []string
			for _, m := range members {
				order = append(order, m.Name)
			}
			if in.tensor.Sparse.Format() == sparse.FormatCSR || in.tensor.Sparse.Format() == sparse.FormatCSC {
				assert.Equal(t, []string{"indices", "indptr", "format", "shape", "data"}, order, "save_npz's members and order")
			} else {
				assert.Equal(t, []string{"row", "col", "format", "shape", "data"}, order, "save_npz's members and order")
			}
			if in.original != nil {
				originals, err := npy.ReadNpz(in.original, npy.Limits{})
				require.NoError(t, err)
				require.Len(t, originals, len(members))
				for i, o := range originals {
					m := members[i]
					assert.Equal(t, o.Name, m.Name)
					assert.Equal(t, o.DType(), m.DType(), "%s: dtype", m.Name)
					assert.Equal(t, o.Shape(), m.Shape(), "%s: shape", m.Name)
					assert.Equal(t, o.IsBytes(), m.IsBytes(), "%s: bytes, not text", m.Name)
					assert.Equal(t, o.Data(), m.Data(), "%s: values", m.Name)
				}
			}

			back, _, err := dataset.Read(written, name, limits.Limits{})
			require.NoError(t, err)
			require.Len(t, back, 1)
			want := in.tensor.Sparse
			if want.Format() == sparse.FormatCSF {
				want, err = want.Convert(sparse.FormatCOO)
				require.NoError(t, err)
			}
			assert.Equal(t, want.Format(), back[0].Sparse.Format())
			wantData, wantIndex, wantIndexDType := storedParts(t, want)
			gotData, gotIndex, gotIndexDType := storedParts(t, back[0].Sparse)
			assert.Equal(t, denseValues(t, wantData), denseValues(t, gotData))
			assert.Equal(t, wantIndex, gotIndex)
			assert.Equal(t, wantIndexDType, gotIndexDType)
			sum := denseSHA256(t, in.tensor)
			assert.Equal(t, sum, denseSHA256(t, back[0]))

			npzPath := filepath.Join(scipyDir, "ndarrow", name+".npz")
			var message bytes.Buffer
			holdsTensor := in.tensor.DType() != ndarray.Bool
			if holdsTensor {
				require.NoError(t, dataset.Write(&message, dataset.FormatTensor, []dataset.Tensor{in.tensor}, dataset.WriteOptions{}))
			}
			tensorPath := filepath.Join(scipyDir, "ndarrow", name+".tensor")
			if *updateSciPy {
				require.NoError(t, os.WriteFile(npzPath, written, 0o644))
				if holdsTensor {
					require.NoError(t, os.WriteFile(tensorPath, message.Bytes(), 0o644))
				}
				return
			}
			committed, err := os.ReadFile(npzPath)
			require.NoError(t, err)
			require.Equal(t, committed, written, "what ndarrow writes changed: run go test -update-scipy, check_scipy.py and check_arrow_cpp.sh")
			r, ok := scipyRecords[name+".npz"]
			require.True(t, ok, "scipy-read.jsonl has %s.npz", name)
			assert.Equal(t, strings.ToLower(want.Format().String()), r.Format, "load_npz's class")
			assert.Equal(t, []int64(want.Shape()), r.Shape)
			assert.Equal(t, numpyName(want.DType()), r.DType)
			assert.Equal(t, want.NNZ(), r.NNZ)
			assert.Equal(t, sum, r.SHA256, "the values load_npz read")
			if !holdsTensor {
				return
			}
			committed, err = os.ReadFile(tensorPath)
			require.NoError(t, err)
			require.Equal(t, committed, message.Bytes())
			c, ok := cppRecords[name+".tensor"]
			require.True(t, ok, "arrow-cpp-read.jsonl has %s.tensor", name)
			assert.Equal(t, "sparse_"+strings.ToLower(in.tensor.Sparse.Format().String()), c.Kind)
			assert.Equal(t, []int64(want.Shape()), c.Shape)
			assert.Equal(t, in.tensor.NNZ(), c.NNZ)
			assert.Equal(t, sum, c.SHA256, "the values Arrow C++ read")
		})
	}
}

// FuzzSciPy reads archives of SciPy's layout built from arbitrary members — the format, the
// shape, index vectors of int32 or int64 and data of any dtype, stored or deflated — as
// dataset.Read reads any .npz: no panic, an error with a sentinel, or a matrix whose every
// value reads and which writes back in SciPy's layout to the same dense values.
func FuzzSciPy(f *testing.F) {
	f.Add(uint8(0), int64(3), int64(4), []byte{0, 0, 0, 0, 2, 0, 0, 0}, []byte{0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}, []byte{1, 2}, uint8(3), false)
	f.Add(uint8(2), int64(2), int64(2), []byte{1, 0, 0, 0, 1, 0, 0, 0}, []byte{1, 0, 0, 0, 1, 0, 0, 0}, []byte{1, 1, 2, 2, 3, 3, 4, 4}, uint8(9), true)
	f.Add(uint8(1), int64(1<<40), int64(1<<40), []byte{}, []byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte{}, uint8(12), true)
	formats := []string{"csr", "csc", "coo", "bsr"}
	dtypes := []ndarray.DType{ndarray.Bool, ndarray.Int8, ndarray.Int16, ndarray.Int32, ndarray.Int64, ndarray.Uint8,
		ndarray.Uint16, ndarray.Uint32, ndarray.Uint64, ndarray.Float16, ndarray.Float32, ndarray.Float64}
	f.Fuzz(func(t *testing.T, format uint8, rows, cols int64, first, second, data []byte, dtype uint8, wide bool) {
		var buf bytes.Buffer
		z := npy.NewNpzWriter(&buf, format&0x80 != 0)
		name := formats[int(format)%len(formats)]
		a, b := "indices", "indptr"
		if name == "coo" {
			a, b = "row", "col"
		}
		index := func(p []byte) ndarray.Array {
			if wide {
				v := make([]int64, len(p)/8)
				for i := range v {
					v[i] = int64(binary.LittleEndian.Uint64(p[8*i:]))
				}
				return ndarray.Must(ndarray.FromSlice(v, int64(len(v))))
			}
			v := make([]int32, len(p)/4)
			for i := range v {
				v[i] = int32(binary.LittleEndian.Uint32(p[4*i:]))
			}
			return ndarray.Must(ndarray.FromSlice(v, int64(len(v))))
		}
		dt := dtypes[int(dtype)%len(dtypes)]
		values := vectorOf(dt, data)
		require.NoError(t, z.Write(a, index(first)))
		require.NoError(t, z.Write(b, index(second)))
		require.NoError(t, z.WriteStrings("format", ndarray.Full(name), true))
		require.NoError(t, z.Write("shape", ndarray.Must(ndarray.FromSlice([]int64{rows, cols}, 2))))
		require.NoError(t, z.Write("data", values))
		require.NoError(t, z.Close())

		lim := limits.Limits{MaxElements: 1 << 20, MaxDenseElements: 1 << 16}
		tensors, _, err := dataset.Read(buf.Bytes(), "m", lim)
		if err != nil {
			for _, s := range []error{ndarray.ErrShape, ndarray.ErrDType, sparse.ErrInvalid, npy.ErrUnsupported, limits.ErrExceeded} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("an error without a sentinel: %v", err)
		}
		require.Len(t, tensors, 1)
		var want bytes.Buffer
		if _, err := tensors[0].WriteValues(&want, lim.MaxDenseElements); err != nil {
			require.ErrorIs(t, err, limits.ErrExceeded)
			return
		}
		var out bytes.Buffer
		require.NoError(t, dataset.Write(&out, dataset.FormatNpz, tensors, dataset.WriteOptions{}))
		back, _, err := dataset.Read(out.Bytes(), "m", lim)
		require.NoError(t, err)
		var got bytes.Buffer
		_, err = back[0].WriteValues(&got, lim.MaxDenseElements)
		require.NoError(t, err)
		require.Equal(t, want.Bytes(), got.Bytes())
	})
}

// vectorOf returns the little-endian values in p as a vector of dt (bools: non-zero bytes).
func vectorOf(dt ndarray.DType, p []byte) ndarray.Array {
	switch dt {
	case ndarray.Bool:
		v := make([]bool, len(p))
		for i, x := range p {
			v[i] = x != 0
		}
		return ndarray.Must(ndarray.FromSlice(v, int64(len(v))))
	case ndarray.Int8:
		return viewVector[int8](p)
	case ndarray.Int16:
		return viewVector[int16](p)
	case ndarray.Int32:
		return viewVector[int32](p)
	case ndarray.Int64:
		return viewVector[int64](p)
	case ndarray.Uint8:
		return viewVector[uint8](p)
	case ndarray.Uint16:
		return viewVector[uint16](p)
	case ndarray.Uint32:
		return viewVector[uint32](p)
	case ndarray.Uint64:
		return viewVector[uint64](p)
	case ndarray.Float16:
		return viewVector[float16.Num](p)
	case ndarray.Float32:
		return viewVector[float32](p)
	}
	return viewVector[float64](p)
}

// viewVector returns a copy of the values in p as a vector.
func viewVector[T ndarray.Numeric](p []byte) ndarray.Array {
	v, _ := ndarray.ViewBytes[T](p)
	v = slices.Clone(v)
	if v == nil {
		v = []T{}
	}
	return ndarray.Must(ndarray.FromSlice(v, int64(len(v))))
}

// TestSaveWritesSciPy: dataset.Save of one sparse matrix to an .npz path writes SciPy's layout
// (the bytes Write gives), Dense its dense member, and a file of a sparse tensor of rank 3 is
// refused with nothing written.
func TestSaveWritesSciPy(t *testing.T) {
	dir := t.TempDir()
	tensors, err := readSciPyFile(t, filepath.Join(scipyDir, "csc_int32.npz"))
	require.NoError(t, err)
	path := filepath.Join(dir, "m.npz")
	require.NoError(t, dataset.Save(path, tensors, dataset.WriteOptions{Compress: true}))
	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	committed, err := os.ReadFile(filepath.Join(scipyDir, "ndarrow", "csc_int32.npz"))
	require.NoError(t, err)
	assert.Equal(t, committed, saved, "what load_npz read (scipy-read.jsonl)")

	require.NoError(t, dataset.Save(path, tensors, dataset.WriteOptions{Dense: true}))
	back, err := readSciPyFile(t, path)
	require.NoError(t, err)
	require.Len(t, back, 1)
	assert.Equal(t, dataset.KindDense, back[0].Kind)
	assert.Equal(t, denseSHA256(t, tensors[0]), denseSHA256(t, back[0]))

	cube, err := sparse.MakeCOO(ndarray.Shape{2, 2, 2}, sparse.Int32Indices([]int32{0, 1, 1}), []float64{5})
	require.NoError(t, err)
	cubePath := filepath.Join(dir, "cube.npz")
	err = dataset.Save(cubePath, []dataset.Tensor{{Name: "cube", Sparse: cube}}, dataset.WriteOptions{})
	require.ErrorIs(t, err, ndarray.ErrShape)
	assert.Contains(t, err.Error(), "cube: a sparse tensor of rank 3")
	assert.NoFileExists(t, cubePath)
}
