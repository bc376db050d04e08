package ndarray

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Matrix products, as NumPy's matmul and dot. The products of float64 and float32 matrices go
// through gonum's Dgemm and Sgemm (pure Go, blocked, parallel; float32 sums in float32, as
// BLAS's sgemm): measured beside this package's own kernel they are as fast or faster (Sgemm 2
// to 3 times, BENCHMARKS.md). Integer matrices go through a blocked kernel of this package's
// own (rows of the result built from rows of b), in T's arithmetic: they wrap as Go's integers
// do. Operands may be any views (transposed, strided): gonum reads a transposed matrix as it
// is, anything else is packed into a row-major copy first.

// MatMul returns the matrix product of a and b as numpy.matmul gives it: of two matrices [m, k]
// and [k, n] the matrix [m, n]; a vector a is a row [1, k] and a vector b a column [k, 1], that
// dimension then removed from the result; arrays of rank 3 or more are stacks of matrices in
// their last two dimensions, the leading ones broadcast against each other (as numpy.matmul
// broadcasts them). A scalar operand, or inner dimensions that differ, fail with an error
// wrapping ErrShape. The result is new and row-major.
func MatMul[T Real](a, b *Dense[T]) (*Dense[T], error) {
	a, b = a.orEmpty(), b.orEmpty()
	if a.Rank() == 0 || b.Rank() == 0 {
		return nil, fmt.Errorf("ndarray: MatMul of shapes %v and %v: a scalar has no matrix product (use MulScalar): %w", a.Shape(), b.Shape(), ErrShape)
	}
	av, bv := a, b
	if a.Rank() == 1 {
		av = a.viewExpanded(0)
	}
	if b.Rank() == 1 {
		bv = b.viewExpanded(1)
	}
	ar, br := av.Rank(), bv.Rank()
	m, k := av.Dim(ar-2), av.Dim(ar-1)
	k2, n := bv.Dim(br-2), bv.Dim(br-1)
	if k != k2 {
		return nil, fmt.Errorf("ndarray: MatMul of shapes %v and %v: inner dimensions %d and %d differ: %w", a.Shape(), b.Shape(), k, k2, ErrShape)
	}
	batch, err := BroadcastShapes(av.Shape()[:ar-2], bv.Shape()[:br-2])
	if err != nil {
		return nil, fmt.Errorf("ndarray: MatMul of shapes %v and %v: stacks %w", a.Shape(), b.Shape(), err)
	}
	abatch, err := BroadcastTo(av, append(batch.clone(), m, k)...)
	if err != nil {
		return nil, err
	}
	bbatch, err := BroadcastTo(bv, append(batch.clone(), k, n)...)
	if err != nil {
		return nil, err
	}
	out := New[T](append(batch.clone(), m, n)...)
	cells := batch.Size()
	for i := range cells {
		idx := batch.unravel(i)
		am := matrixAt(abatch, idx)
		bm := matrixAt(bbatch, idx)
		gemm(m, n, k, am, bm, out.data[i*m*n:(i+1)*m*n])
	}
	shape := out.Shape()
	if a.Rank() == 1 { // the row dimension goes
		shape = append(shape[:len(shape)-2:len(shape)-2], shape[len(shape)-1])
	}
	if b.Rank() == 1 { // the column dimension goes
		shape = shape[:len(shape)-1]
	}
	return out.Reshape(shape...)
}

// Dot returns numpy.dot of arrays of rank 1 or 2: the inner product of two vectors (a rank-0
// array), a matrix times a vector or a vector times a matrix (a vector), the product of two
// matrices. Higher ranks, where numpy.dot and numpy.matmul differ, fail with an error wrapping
// ErrShape: use MatMul.
func Dot[T Real](a, b *Dense[T]) (*Dense[T], error) {
	if a.Rank() > 2 || b.Rank() > 2 {
		return nil, fmt.Errorf("ndarray: Dot of shapes %v and %v: rank above 2 (MatMul stacks matrices): %w", a.Shape(), b.Shape(), ErrShape)
	}
	return MatMul(a, b)
}

// clone returns a copy of s.
func (s Shape) clone() Shape { return append(Shape(nil), s...) }

// unravel returns the index of the i-th cell of shape s in row-major order.
func (s Shape) unravel(i int64) []int64 {
	idx := make([]int64, len(s))
	for k := len(s) - 1; k >= 0; k-- {
		idx[k] = i % s[k]
		i /= s[k]
	}
	return idx
}

// viewExpanded returns d, a vector, as a matrix with a new axis of length 1 at k (0: a row,
// 1: a column), viewing the same elements.
func (d *Dense[T]) viewExpanded(k int) *Dense[T] {
	l := d.layout
	shape := Shape{1, l.Shape[0]}
	strides := []int64{0, l.Strides[0]}
	if k == 1 {
		shape, strides = Shape{l.Shape[0], 1}, []int64{l.Strides[0], 0}
	}
	return d.view(Layout{Shape: shape, Strides: strides, Offset: l.Offset})
}

// strided is a matrix in a slice: element (i, j) at off + i*rs + j*cs.
type strided[T Real] struct {
	data        []T
	off, rs, cs int64
}

// matrixAt returns the matrix of d (rank 2 or more) at the leading index idx.
func matrixAt[T Real](d *Dense[T], idx []int64) strided[T] {
	l := d.layout
	off := l.Offset
	for i, x := range idx {
		off += x * l.Strides[i]
	}
	r := len(l.Shape)
	return strided[T]{d.data, off, l.Strides[r-2], l.Strides[r-1]}
}

// gemm writes the product of the m×k matrix a and the k×n matrix b to c, m×n row-major.
func gemm[T Real](m, n, k int64, a, b strided[T], c []T) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c)
		return
	}
	switch x := any(a).(type) {
	case strided[float64]:
		ta, adata, lda := blasOperand(x, m, k)
		tb, bdata, ldb := blasOperand(any(b).(strided[float64]), k, n)
		gonum.Implementation{}.Dgemm(ta, tb, int(m), int(n), int(k), 1, adata, lda, bdata, ldb, 0, any(c).([]float64), int(n))
	case strided[float32]:
		ta, adata, lda := blasOperand(x, m, k)
		tb, bdata, ldb := blasOperand(any(b).(strided[float32]), k, n)
		gonum.Implementation{}.Sgemm(ta, tb, int(m), int(n), int(k), 1, adata, lda, bdata, ldb, 0, any(c).([]float32), int(n))
	default:
		blockedGemm(m, n, k, a, b, c)
	}
}

// blasOperand returns how BLAS reads the rows×cols matrix x: in place when its rows (NoTrans)
// or its columns (Trans) are contiguous, else a row-major copy.
func blasOperand[T float32 | float64](x strided[T], rows, cols int64) (blas.Transpose, []T, int) {
	switch {
	case x.cs == 1 && x.rs >= max(cols, 1):
		return blas.NoTrans, x.data[x.off : x.off+(rows-1)*x.rs+cols], int(x.rs)
	case x.rs == 1 && x.cs >= max(rows, 1):
		return blas.Trans, x.data[x.off : x.off+(cols-1)*x.cs+rows], int(x.cs)
	}
	return blas.NoTrans, packed(x, rows, cols), int(cols)
}

// packed returns the rows×cols matrix x as a new row-major slice.
func packed[T Real](x strided[T], rows, cols int64) []T {
	out := make([]T, rows*cols)
	for i := range rows {
		for j := range cols {
			out[i*cols+j] = x.data[x.off+i*x.rs+j*x.cs]
		}
	}
	return out
}

// gemmBlock is the kernel's block: a block of k rows of b times a block of n columns stays in
// the cache (256 × 128 float32 is 128 KiB) while every row of a passes over it.
const gemmBlockK, gemmBlockN = 256, 128

// blockedGemm is gemm in T's arithmetic (the integers'): b packed row-major unless it is, then
// each row of c, block of columns by block of k, the sum of the rows of b scaled by a's
// elements.
func blockedGemm[T Real](m, n, k int64, a, b strided[T], c []T) {
	bd, boff := b.data, b.off
	ldb := b.rs
	if b.cs != 1 || b.rs < n {
		bd, boff, ldb = packed(b, k, n), 0, n
	}
	clear(c)
	for j0 := int64(0); j0 < n; j0 += gemmBlockN {
		j1 := min(j0+gemmBlockN, n)
		for p0 := int64(0); p0 < k; p0 += gemmBlockK {
			p1 := min(p0+gemmBlockK, k)
			for i := range m {
				row := c[i*n+j0 : i*n+j1]
				for p := p0; p < p1; p++ {
					axpy(row, a.data[a.off+i*a.rs+p*a.cs], bd[boff+p*ldb+j0:boff+p*ldb+j1])
				}
			}
		}
	}
}

// axpy adds x times y to dst (len(y) == len(dst)).
func axpy[T Real](dst []T, x T, y []T) {
	y = y[:len(dst)]
	for j := range dst {
		dst[j] += x * y[j]
	}
}
