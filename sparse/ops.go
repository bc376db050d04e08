package sparse

import (
	"fmt"

	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Rows returns rows [lo, hi) of m as a CSR that views m's indices and values (its own
// pointers, hi-lo+1 of them, rebased to 0): nothing of the other rows is copied, and a
// SetStored on it writes to m. It fails with an error wrapping ndarray.ErrIndex unless
// 0 <= lo <= hi <= rows.
func (m *CSR[T]) Rows(lo, hi int64) (*CSR[T], error) {
	v, err := m.lines(lo, hi)
	if err != nil {
		return nil, fmt.Errorf("sparse: CSR.Rows: %w", err)
	}
	return &CSR[T]{v}, nil
}

// Cols returns columns [lo, hi) of m as a CSC that views m's indices and values, as
// CSR.Rows views rows.
func (m *CSC[T]) Cols(lo, hi int64) (*CSC[T], error) {
	v, err := m.lines(lo, hi)
	if err != nil {
		return nil, fmt.Errorf("sparse: CSC.Cols: %w", err)
	}
	return &CSC[T]{v}, nil
}

// lines returns major lines [lo, hi) of m, a view.
func (m *compressed[T]) lines(lo, hi int64) (compressed[T], error) {
	n := m.shape[m.major]
	if lo < 0 || hi < lo || hi > n {
		return compressed[T]{}, fmt.Errorf("lines [%d, %d) of %d: %w", lo, hi, n, ndarray.ErrIndex)
	}
	first, last := m.indptr.At(int(lo)), m.indptr.At(int(hi))
	ptr := makeIndices(m.indptr.DType(), int(hi-lo+1))
	for i := lo; i <= hi; i++ {
		ptr.set(int(i-lo), m.indptr.At(int(i))-first)
	}
	shape := m.shape.Clone()
	shape[m.major] = hi - lo
	return compressed[T]{shape: shape, major: m.major, indptr: ptr, indices: m.indices.slice(int(first), int(last)),
		values: m.values[first:last:last], readOnly: m.readOnly, view: lo > 0 || hi < n}, nil
}

// IsView reports whether m is a part of another matrix (Rows, Cols), sharing its values.
func (m *compressed[T]) IsView() bool { return m.view }

// T returns the transpose of m, a CSC of the same pointers, indices and values: a view.
func (m *CSR[T]) T() *CSC[T] {
	return &CSC[T]{m.transposed()}
}

// T returns the transpose of m, a CSR of the same pointers, indices and values: a view.
func (m *CSC[T]) T() *CSR[T] {
	return &CSR[T]{m.transposed()}
}

// transposed is m with its shape reversed and its layout the other one.
func (m *compressed[T]) transposed() compressed[T] {
	t := *m
	t.shape = ndarray.Shape{m.shape[1], m.shape[0]}
	t.major = 1 - m.major
	t.view = true
	return t
}

// Products of sparse and dense arrays, as SciPy's: every stored value counts — a position
// stored twice (which Get reads as its last) adds both, as SciPy's products add them. They are
// computed in T's arithmetic, in SciPy's order (a CSR's row as one running sum, as
// csr_matvec), by kernels over the index slices of either width, and allocate only the result,
// a new row-major array (and a row-major copy of a dense operand that is not one).

// MatMul returns the product of the sparse matrix a (a CSR, a CSC, or a COO of rank 2) and b,
// a vector [n] (the result a vector [m]) or a matrix [n, k] (the result [m, k]), as SciPy's
// a @ b. Shapes that do not go together, or another sparse format, fail with an error
// wrapping ndarray.ErrShape.
func MatMul[T ndarray.Real](a Array, b *ndarray.Dense[T]) (*ndarray.Dense[T], error) {
	m, err := matrixOf[T](a, false)
	if err != nil {
		return nil, fmt.Errorf("sparse: MatMul: %w", err)
	}
	if b.Rank() < 1 || b.Rank() > 2 || b.Dim(0) != m.cols {
		return nil, fmt.Errorf("sparse: MatMul of shapes %v and %v: %w", a.Shape(), b.Shape(), ndarray.ErrShape)
	}
	k := int64(1)
	out := ndarray.New[T](m.rows)
	if b.Rank() == 2 {
		k = b.Dim(1)
		out = ndarray.New[T](m.rows, k)
	}
	m.mul(b.Ravel(), out.Data(), k) // Ravel: b itself when row-major, each row a run
	return out, nil
}

// DenseMatMul returns the product of a, a vector [m] (the result a vector [n]) or a matrix
// [p, m] (the result [p, n]), and the sparse matrix b [m, n], as SciPy's a @ b.
func DenseMatMul[T ndarray.Real](a *ndarray.Dense[T], b Array) (*ndarray.Dense[T], error) {
	// (a b)ᵀ = bᵀ aᵀ: b's transpose (a view of its layout) times a's columns.
	m, err := matrixOf[T](b, true)
	if err != nil {
		return nil, fmt.Errorf("sparse: DenseMatMul: %w", err)
	}
	if a.Rank() < 1 || a.Rank() > 2 || a.Dim(a.Rank()-1) != m.cols {
		return nil, fmt.Errorf("sparse: DenseMatMul of shapes %v and %v: %w", a.Shape(), b.Shape(), ndarray.ErrShape)
	}
	if a.Rank() == 1 {
		out := ndarray.New[T](m.rows)
		m.mul(a.Ravel(), out.Data(), 1)
		return out, nil
	}
	p := a.Dim(0)
	outT := ndarray.New[T](m.rows, p)
	m.mul(a.Transpose().Ravel(), outT.Data(), p)
	return outT.Transpose().Clone(), nil
}

// axpy adds x times y to dst: gonum's assembly kernels for floats (AddScaled, Saxpy), a loop
// of T's arithmetic otherwise.
func axpy[T ndarray.Real](dst []T, x T, y []T) {
	y = y[:len(dst)]
	switch d := any(dst).(type) {
	case []float64:
		floats.AddScaled(d, float64(x), any(y).([]float64))
	case []float32:
		gonum.Implementation{}.Saxpy(len(d), float32(x), any(y).([]float32), 1, d, 1)
	default:
		for j := range dst {
			dst[j] += x * y[j]
		}
	}
}

// matrix is a sparse matrix ready for products.
type matrix[T ndarray.Real] struct {
	rows, cols int64
	// mul adds the matrix times b ([cols, k], row-major) to out ([rows, k], row-major).
	mul func(b, out []T, k int64)
}

// matrixOf returns the sparse matrix a, or its transpose, whose element type must be T.
func matrixOf[T ndarray.Real](a Array, transpose bool) (matrix[T], error) {
	var c compressed[T]
	switch m := a.(type) {
	case *CSR[T]:
		c = m.compressed
	case *CSC[T]:
		c = m.compressed
	case *COO[T]:
		if m.Rank() != 2 {
			return matrix[T]{}, fmt.Errorf("a COO of rank %d, not a matrix: %w", m.Rank(), ndarray.ErrShape)
		}
		return cooMatrix(m, transpose), nil
	default:
		return matrix[T]{}, fmt.Errorf("a %s of %v: products take CSR, CSC and rank-2 COO matrices of the dense operand's dtype: %w", a.Format(), a.DType(), ndarray.ErrShape)
	}
	if transpose {
		c = c.transposed()
	}
	return matrix[T]{c.shape[0], c.shape[1], func(b, out []T, k int64) {
		if c.indices.is64 { // pointers and indices are of one type (MakeCSR checks it)
			mulLines(c.major, c.indptr.wide, c.indices.wide, c.values, b, out, k)
		} else {
			mulLines(c.major, c.indptr.narrow, c.indices.narrow, c.values, b, out, k)
		}
	}}, nil
}

// mulLines adds the compressed matrix (major 0: lines are rows, indices columns; 1: the other
// way) times b ([cols, k]) to out ([rows, k]).
func mulLines[T ndarray.Real, I int32 | int64](major int, indptr, indices []I, values []T, b, out []T, k int64) {
	for line := 0; line+1 < len(indptr); line++ {
		lo, hi := indptr[line], indptr[line+1]
		idx, vals := indices[lo:hi], values[lo:hi:hi]
		l := int64(line)
		switch {
		case major == 0 && k == 1: // a row's dot product with b
			vals = vals[:len(idx)]
			var sum T
			for j, col := range idx {
				sum += vals[j] * b[col]
			}
			out[l] += sum
		case major == 0:
			dst := out[l*k : (l+1)*k]
			for j, col := range idx {
				axpy(dst, vals[j], b[int64(col)*k:(int64(col)+1)*k])
			}
		case k == 1: // a column scaled by b's value
			x := b[l]
			for j, row := range idx {
				out[row] += vals[j] * x
			}
		default:
			src := b[l*k : (l+1)*k]
			for j, row := range idx {
				axpy(out[int64(row)*k:(int64(row)+1)*k], vals[j], src)
			}
		}
	}
}

// cooMatrix returns the matrix of the COO m, of rank 2, or its transpose.
func cooMatrix[T ndarray.Real](m *COO[T], transpose bool) matrix[T] {
	shape := m.Shape()
	r, c := 0, 1
	if transpose {
		r, c = 1, 0
	}
	mat := matrix[T]{rows: shape[r], cols: shape[c]}
	s := m.st
	switch {
	case m.win != nil: // a view: its entries, placed by the window
		mat.mul = func(b, out []T, k int64) {
			for idx, v := range m.Entries() {
				axpy(out[idx[r]*k:(idx[r]+1)*k], v, b[idx[c]*k:(idx[c]+1)*k])
			}
		}
	case s.coords.is64:
		mat.mul = func(b, out []T, k int64) { mulEntries(s.coords.wide, s.values, r, c, b, out, k) }
	default:
		mat.mul = func(b, out []T, k int64) { mulEntries(s.coords.narrow, s.values, r, c, b, out, k) }
	}
	return mat
}

// mulEntries adds the matrix of the entries at coords ([nnz, 2]: the row at r, the column at c)
// times b ([cols, k]) to out ([rows, k]).
func mulEntries[T ndarray.Real, I int32 | int64](coords []I, values []T, r, c int, b, out []T, k int64) {
	for j, v := range values {
		row, col := int64(coords[2*j+r]), int64(coords[2*j+c])
		if k == 1 {
			out[row] += v * b[col]
			continue
		}
		axpy(out[row*k:(row+1)*k], v, b[col*k:(col+1)*k])
	}
}
