package sparse

import (
	"fmt"

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
// computed in T's arithmetic and allocate only the result, a new row-major array.

// MatMul returns the product of the sparse matrix a (a CSR, a CSC, or a COO of rank 2) and b,
// a vector [n] (the result a vector [m]) or a matrix [n, k] (the result [m, k]), as SciPy's
// a @ b. Shapes that do not go together, or another sparse format, fail with an error
// wrapping ndarray.ErrShape.
func MatMul[T ndarray.Real](a Array, b *ndarray.Dense[T]) (*ndarray.Dense[T], error) {
	m, err := matrixOf[T](a)
	if err != nil {
		return nil, fmt.Errorf("sparse: MatMul: %w", err)
	}
	rows, cols := m.rows, m.cols
	if b.Rank() < 1 || b.Rank() > 2 || b.Dim(0) != cols {
		return nil, fmt.Errorf("sparse: MatMul of shapes %v and %v: %w", a.Shape(), b.Shape(), ndarray.ErrShape)
	}
	k := int64(1)
	out := ndarray.New[T](rows)
	if b.Rank() == 2 {
		k = b.Dim(1)
		out = ndarray.New[T](rows, k)
	}
	bm := b.Clone() // row-major: each row of b a contiguous run
	bd, od := bm.Data(), out.Data()
	m.each(func(r, c int64, v T) {
		axpy(od[r*k:(r+1)*k], v, bd[c*k:(c+1)*k])
	})
	return out, nil
}

// DenseMatMul returns the product of a, a vector [m] (the result a vector [n]) or a matrix
// [p, m] (the result [p, n]), and the sparse matrix b [m, n], as SciPy's a @ b.
func DenseMatMul[T ndarray.Real](a *ndarray.Dense[T], b Array) (*ndarray.Dense[T], error) {
	m, err := matrixOf[T](b)
	if err != nil {
		return nil, fmt.Errorf("sparse: DenseMatMul: %w", err)
	}
	if a.Rank() < 1 || a.Rank() > 2 || a.Dim(a.Rank()-1) != m.rows {
		return nil, fmt.Errorf("sparse: DenseMatMul of shapes %v and %v: %w", a.Shape(), b.Shape(), ndarray.ErrShape)
	}
	p := int64(1)
	out := ndarray.New[T](m.cols)
	if a.Rank() == 2 {
		p = a.Dim(0)
		out = ndarray.New[T](p, m.cols)
	}
	// (a b)[i, c] = sum over r of a[i, r] b[r, c]: a's columns gathered into rows of aᵀ.
	at := ndarray.Must(a.Reshape(p, m.rows)).Transpose().Clone()
	ad, od := at.Data(), out.Data()
	n := m.cols
	m.each(func(r, c int64, v T) {
		col := ad[r*p : (r+1)*p]
		for i, x := range col {
			od[int64(i)*n+c] += x * v
		}
	})
	return out, nil
}

// axpy adds x times y to dst.
func axpy[T ndarray.Real](dst []T, x T, y []T) {
	y = y[:len(dst)]
	for j := range dst {
		dst[j] += x * y[j]
	}
}

// matrix is a sparse matrix's stored values, visited in storage order.
type matrix[T ndarray.Real] struct {
	rows, cols int64
	each       func(yield func(r, c int64, v T))
}

// matrixOf returns the stored values of a sparse matrix a, whose element type must be T.
func matrixOf[T ndarray.Real](a Array) (matrix[T], error) {
	var c *compressed[T]
	switch m := a.(type) {
	case *CSR[T]:
		c = &m.compressed
	case *CSC[T]:
		c = &m.compressed
	case *COO[T]:
		if m.Rank() != 2 {
			return matrix[T]{}, fmt.Errorf("a COO of rank %d, not a matrix: %w", m.Rank(), ndarray.ErrShape)
		}
		shape := m.Shape()
		return matrix[T]{shape[0], shape[1], func(yield func(r, c int64, v T)) {
			for idx, v := range m.Entries() {
				yield(idx[0], idx[1], v)
			}
		}}, nil
	default:
		return matrix[T]{}, fmt.Errorf("a %s of %v: products take CSR, CSC and rank-2 COO matrices of the dense operand's dtype: %w", a.Format(), a.DType(), ndarray.ErrShape)
	}
	return matrix[T]{c.shape[0], c.shape[1], func(yield func(r, col int64, v T)) {
		for line := range c.indptr.Len() - 1 {
			for p := c.indptr.At(line); p < c.indptr.At(line+1); p++ {
				r, col := int64(line), c.indices.At(int(p))
				if c.major == 1 {
					r, col = col, r
				}
				yield(r, col, c.values[p])
			}
		}
	}}, nil
}
