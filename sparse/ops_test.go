package sparse_test

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// productCase is one line of testdata/products.jsonl (gen_products.py).
type productCase struct {
	Op   string          `json:"op"`
	Name string          `json:"name"`
	A    csrParts        `json:"a"`
	X    denseParts      `json:"x"`
	Lo   int64           `json:"lo"`
	Hi   int64           `json:"hi"`
	Want json.RawMessage `json:"want"`
}

type csrParts struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Indptr  []int64  `json:"indptr"`
	Indices []int64  `json:"indices"`
	Data    []string `json:"data"`
}

type denseParts struct {
	DType string   `json:"dtype"`
	Shape []int64  `json:"shape"`
	Data  []string `json:"data"`
}

// values parses texts of floats (as float.hex) or integers.
func values[T ndarray.Real](t *testing.T, texts []string) []T {
	out := make([]T, len(texts))
	for i, s := range texts {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			n, ierr := strconv.ParseInt(s, 10, 64)
			require.NoError(t, ierr, s)
			f = float64(n)
		}
		out[i] = T(f)
	}
	return out
}

func csrOf[T ndarray.Real](t *testing.T, p csrParts) *sparse.CSR[T] {
	m, err := sparse.MakeCSR(ndarray.Shape(p.Shape), sparse.Int64Indices(p.Indptr), sparse.Int64Indices(p.Indices), values[T](t, p.Data))
	require.NoError(t, err)
	return m
}

func denseOf[T ndarray.Real](t *testing.T, p denseParts) *ndarray.Dense[T] {
	d, err := ndarray.FromSlice(values[T](t, p.Data), p.Shape...)
	require.NoError(t, err)
	return d
}

// requireClose requires got to hold want's shape and values within rtol.
func requireClose[T ndarray.Real](t *testing.T, want denseParts, got *ndarray.Dense[T], rtol float64, what string) {
	t.Helper()
	require.Equal(t, ndarray.Shape(want.Shape), got.Shape(), what)
	w := values[float64](t, want.Data)
	g := got.Clone().Data()
	for i := range w {
		require.InDelta(t, w[i], float64(g[i]), rtol*math.Max(1, math.Abs(w[i])), "%s: element %d", what, i)
	}
}

// TestProductsMatchSciPy: every case of testdata/products.jsonl — products of CSR and CSC
// (and COO) matrices with vectors and matrices on either side, row and column ranges as views,
// transposes — gives what SciPy 1.10 gives, on random matrices and edge ones (empty rows, one
// column, one row, no stored value), float64, float32 and int64.
func TestProductsMatchSciPy(t *testing.T) {
	f, err := os.Open("testdata/products.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	ops := map[string]int{}
	for sc.Scan() {
		var c productCase
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		ops[c.Op]++
		switch c.A.DType {
		case "float64":
			checkProduct[float64](t, c, 1e-12)
		case "float32":
			checkProduct[float32](t, c, 1e-5)
		case "int64":
			checkProduct[int64](t, c, 0)
		default:
			t.Fatalf("dtype %s", c.A.DType)
		}
	}
	require.NoError(t, sc.Err())
	for _, op := range []string{"matmul", "densematmul", "rows", "cols", "transpose"} {
		assert.Positive(t, ops[op], op)
	}
}

func checkProduct[T ndarray.Real](t *testing.T, c productCase, rtol float64) {
	what := c.Op + " " + c.Name
	m := csrOf[T](t, c.A)
	switch c.Op {
	case "matmul", "densematmul":
		var want denseParts
		require.NoError(t, json.Unmarshal(c.Want, &want))
		x := denseOf[T](t, c.X)
		for _, a := range []sparse.Array{m, m.ToCSC(), m.ToCOO()} {
			var got *ndarray.Dense[T]
			var err error
			if c.Op == "matmul" {
				got, err = sparse.MatMul(a, x)
			} else {
				got, err = sparse.DenseMatMul(x, a)
			}
			require.NoError(t, err, what)
			requireClose(t, want, got, rtol, what+" "+a.Format().String())
		}
	case "rows":
		var want csrParts
		require.NoError(t, json.Unmarshal(c.Want, &want))
		v, err := m.Rows(c.Lo, c.Hi)
		require.NoError(t, err, what)
		assert.Equal(t, c.Lo > 0 || c.Hi < m.Shape()[0], v.IsView(), what)
		wantDense, err := csrOf[T](t, want).ToDense()
		require.NoError(t, err)
		gotDense, err := v.ToDense()
		require.NoError(t, err)
		assert.Equal(t, wantDense.Ravel(), gotDense.Ravel(), what)
		assert.Equal(t, want.Indptr, v.Indptr().AsInt64(), what+": its own pointers, from 0")
		if v.NNZ() > 0 { // a view: the values are m's
			assert.Same(t, &m.Data()[m.Indptr().At(int(c.Lo))], &v.Data()[0], what)
		}
	case "cols":
		var want denseParts
		require.NoError(t, json.Unmarshal(c.Want, &want))
		v, err := m.ToCSC().Cols(c.Lo, c.Hi)
		require.NoError(t, err, what)
		got, err := v.ToDense()
		require.NoError(t, err)
		requireClose(t, want, got, 0, what)
	case "transpose":
		var want denseParts
		require.NoError(t, json.Unmarshal(c.Want, &want))
		tr := m.T()
		assert.True(t, tr.IsView())
		assert.Equal(t, ndarray.Shape{m.Shape()[1], m.Shape()[0]}, tr.Shape())
		got, err := tr.ToDense()
		require.NoError(t, err)
		requireClose(t, want, got, 0, what)
		back, err := tr.T().ToDense()
		require.NoError(t, err)
		orig, err := m.ToDense()
		require.NoError(t, err)
		assert.Equal(t, orig.Ravel(), back.Ravel(), what+": twice, m")
	}
}

// TestProductErrors: shapes that do not go together, a sparse tensor of rank 3 and ranges
// outside the matrix are errors, not panics; Slice of a compressed matrix is a copy.
func TestProductErrors(t *testing.T) {
	m, err := sparse.CSRFromDense(ndarray.Must(ndarray.FromSlice([]float64{1, 0, 2, 0, 3, 0}, 2, 3)))
	require.NoError(t, err)
	_, err = sparse.MatMul(m, ndarray.New[float64](2))
	require.ErrorIs(t, err, ndarray.ErrShape)
	_, err = sparse.DenseMatMul(ndarray.New[float64](3), m)
	require.ErrorIs(t, err, ndarray.ErrShape)
	_, err = sparse.MatMul(m, ndarray.New[float64](3, 1, 1))
	require.ErrorIs(t, err, ndarray.ErrShape)
	c3 := sparse.NewCOO[float64](2, 2, 2)
	_, err = sparse.MatMul(c3, ndarray.New[float64](2))
	require.ErrorIs(t, err, ndarray.ErrShape)
	_, err = m.Rows(1, 3)
	require.ErrorIs(t, err, ndarray.ErrIndex)
	_, err = m.Rows(2, 1)
	require.ErrorIs(t, err, ndarray.ErrIndex)
	s, err := m.Slice(ndarray.Range(0, 1))
	require.NoError(t, err)
	assert.False(t, s.IsView(), "Slice of a compressed matrix: a copy")
}

// TestProductsEveryLayout: a product is the same whatever holds the matrix — int32 or int64
// pointers and indices, a CSR row range, a transpose, a COO and a COO view (a
// window over a larger one) — and whatever the dense operand's layout (a transposed, a strided
// view), equal to ndarray.MatMul of the dense forms, for floats and integers.
func TestProductsEveryLayout(t *testing.T) {
	dense := ndarray.Must(ndarray.FromSlice([]int64{
		0, 2, 0, 0, 5,
		1, 0, 0, 3, 0,
		0, 0, 0, 0, 0,
		4, 0, 6, 0, 7,
	}, 4, 5))
	checkLayouts(t, ndarray.Must(ndarray.AsType[float64](dense)))
	checkLayouts(t, ndarray.Must(ndarray.AsType[float32](dense)))
	checkLayouts(t, dense)
}

func checkLayouts[T ndarray.Real](t *testing.T, dense *ndarray.Dense[T]) {
	csr, err := sparse.CSRFromDense(dense)
	require.NoError(t, err)
	widen := func(x sparse.Indices) sparse.Indices { return sparse.Int64Indices(x.AsInt64()) }
	var layouts []sparse.Array
	for _, wide := range []bool{false, true} {
		ptr, idx := csr.Indptr(), csr.Indices()
		if wide {
			ptr, idx = widen(ptr), widen(idx)
		}
		m, err := sparse.MakeCSR(dense.Shape(), ptr, idx, csr.Data())
		require.NoError(t, err)
		c := m.ToCSC()
		cm, err := sparse.MakeCSC(dense.Shape(), c.Indptr(), c.Indices(), c.Data())
		require.NoError(t, err)
		layouts = append(layouts, m, cm)
	}
	coo := csr.ToCOO()
	wide, err := sparse.MakeCOO(dense.Shape(), widen(coo.Indices()), coo.Data())
	require.NoError(t, err)
	big := sparse.FromDense(ndarray.Must(ndarray.Concat(0, ndarray.New[T](2, 5), dense, ndarray.New[T](1, 5))))
	window, err := big.Slice(ndarray.Range(2, 6))
	require.NoError(t, err)
	require.True(t, window.IsView())
	layouts = append(layouts, coo, wide, window, csr.T().T())

	b := ndarray.Must(ndarray.Arange[T](1, 16, 1))
	vec5 := ndarray.Must(b.Slice(ndarray.Range(0, 5)))
	vec4 := ndarray.Must(b.Slice(ndarray.Range(0, 4)))
	mat53 := ndarray.Must(b.Reshape(3, 5)).Transpose() // column-major [5, 3]
	strided := ndarray.Must(ndarray.Must(ndarray.Arange[T](1, 31, 1)).Reshape(5, 6))
	strided = ndarray.Must(strided.Slice(ndarray.All(), ndarray.RangeStep(0, 6, 2))) // [5, 3], strided
	mat34 := ndarray.Must(ndarray.Must(ndarray.Arange[T](1, 13, 1)).Reshape(3, 4))
	for i, a := range layouts {
		for _, x := range []*ndarray.Dense[T]{vec5, mat53, strided} {
			want := ndarray.Must(ndarray.MatMul(dense, x))
			got, err := sparse.MatMul(a, x)
			require.NoError(t, err)
			assert.Equal(t, want.String(), got.String(), "layout %d (%v) @ %v", i, a.Format(), x.Shape())
		}
		for _, x := range []*ndarray.Dense[T]{vec4, mat34, mat34.Transpose().Transpose()} {
			want := ndarray.Must(ndarray.MatMul(x, dense))
			got, err := sparse.DenseMatMul(x, a)
			require.NoError(t, err)
			assert.Equal(t, want.String(), got.String(), "%v @ layout %d (%v)", x.Shape(), i, a.Format())
		}
	}
	rows, err := csr.Rows(1, 4)
	require.NoError(t, err)
	want := ndarray.Must(ndarray.MatMul(ndarray.Must(dense.Slice(ndarray.Range(1, 4))), vec5))
	got, err := sparse.MatMul(rows, vec5)
	require.NoError(t, err)
	assert.Equal(t, want.String(), got.String(), "a row range")
}
