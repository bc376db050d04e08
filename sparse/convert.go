package sparse

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ndarrow/ndarrow/ndarray"
)

// ToCSR returns a new CSR matrix with c's elements, or an error wrapping ErrInvalid when c is
// not a matrix and ErrTooLarge when its rows number more than the limit on dense forms (see
// CheckDense). A canonical whole COO converts in one pass, like SciPy's coo_tocsr.
func (c *COO[T]) ToCSR() (*CSR[T], error) {
	if err := checkLines(c.Shape(), 0); err != nil {
		return nil, err
	}
	switch {
	case c.win == nil && c.st.canonical && len(c.st.shape) == 2:
		return c.canonicalToCSR(), nil
	case c.win == nil && len(c.st.shape) == 2:
		return c.bucketToCSR(), nil
	}
	return toCompressed[CSR[T]](c.sorted(), c.st.coords.DType(), 0)
}

// bucketToCSR converts a matrix in any order as SciPy's coo_tocsr does — a stable counting
// sort by row, O(NNZ + rows) — then sorts each row by column and keeps the last entry of a
// repeated coordinate.
func (c *COO[T]) bucketToCSR() *CSR[T] {
	s := c.st
	nnz, rows := len(s.values), int(s.shape[0])
	t := conversionType(s.coords.DType(), max(maxDim(s.shape), int64(nnz)))
	m := compressed[T]{shape: s.shape.Clone(), indptr: makeIndices(t, rows+1)}
	switch {
	case s.coords.is64 && t == ndarray.Int64:
		var cols []int64
		cols, m.values = bucketCSR(s.coords.wide, s.values, m.indptr.wide)
		m.indices = Int64Indices(cols)
	case !s.coords.is64 && t == ndarray.Int32:
		var cols []int32
		cols, m.values = bucketCSR(s.coords.narrow, s.values, m.indptr.narrow)
		m.indices = Int32Indices(cols)
	default:
		var cols []int64
		cols, m.values = bucketCSR(s.coords.AsInt64(), s.values, m.indptr.wide)
		m.indices = Int64Indices(cols)
	}
	return &CSR[T]{m}
}

// bucketCSR fills indptr (rows+1 pointers) from the [nnz, 2] coordinates of a matrix in any
// order and returns the column indices and values, sorted by column within each row, one
// entry per coordinate (the last one given).
func bucketCSR[I, J int32 | int64, T any](coords []I, values []T, indptr []J) ([]J, []T) {
	nnz, rows := len(values), len(indptr)-1
	starts := make([]int, rows+1)
	for i := range nnz {
		starts[coords[2*i]+1]++
	}
	for r := range rows {
		starts[r+1] += starts[r]
	}
	next := slices.Clone(starts[:rows])
	cols := make([]J, nnz)
	vals := make([]T, nnz)
	for i := range nnz {
		r := coords[2*i]
		p := next[r]
		next[r]++
		cols[p], vals[p] = J(coords[2*i+1]), values[i]
	}
	out := 0
	for r := range rows {
		lo, hi := starts[r], starts[r+1]
		sortRow(cols[lo:hi], vals[lo:hi])
		for k := lo; k < hi; k++ {
			if k+1 < hi && cols[k+1] == cols[k] {
				continue // a later entry at the same coordinate wins
			}
			cols[out], vals[out] = cols[k], vals[k]
			out++
		}
		indptr[r+1] = J(out)
	}
	return cols[:out], vals[:out]
}

// sortRow sorts one row's columns, and its values with them, stably.
func sortRow[J int32 | int64, T any](cols []J, vals []T) {
	if slices.IsSorted(cols) {
		return
	}
	if len(cols) <= 64 {
		for i := 1; i < len(cols); i++ { // insertion sort: stable, and fast on short rows
			c, v := cols[i], vals[i]
			k := i
			for ; k > 0 && cols[k-1] > c; k-- {
				cols[k], vals[k] = cols[k-1], vals[k-1]
			}
			cols[k], vals[k] = c, v
		}
		return
	}
	type entry struct {
		col J
		val T
	}
	row := make([]entry, len(cols))
	for i := range row {
		row[i] = entry{cols[i], vals[i]}
	}
	slices.SortStableFunc(row, func(a, b entry) int { return cmp.Compare(a.col, b.col) })
	for i, e := range row {
		cols[i], vals[i] = e.col, e.val
	}
}

// canonicalToCSR converts a canonical matrix: its rows are sorted, so the column indices
// copy over in order and the row pointers are a running count.
func (c *COO[T]) canonicalToCSR() *CSR[T] {
	s := c.st
	nnz := len(s.values)
	rows := s.shape[0]
	t := conversionType(s.coords.DType(), max(maxDim(s.shape), int64(nnz)))
	m := compressed[T]{shape: s.shape.Clone(), indptr: makeIndices(t, int(rows)+1), indices: makeIndices(t, nnz), values: append([]T(nil), s.values...)}
	switch {
	case s.coords.is64 && t == ndarray.Int64:
		fillCSR(s.coords.wide, m.indptr.wide, m.indices.wide)
	case !s.coords.is64 && t == ndarray.Int32:
		fillCSR(s.coords.narrow, m.indptr.narrow, m.indices.narrow)
	default: // int32 coordinates, more values than an int32 counts
		fillCSR(s.coords.AsInt64(), m.indptr.wide, m.indices.wide)
	}
	return &CSR[T]{m}
}

// fillCSR fills the row pointers and column indices of a CSR matrix from the [nnz, 2]
// row-major coordinates of a canonical COO.
func fillCSR[I, J int32 | int64](coords []I, indptr, indices []J) {
	row := 0
	for i := range indices {
		r := int(coords[2*i])
		for row < r {
			row++
			indptr[row] = J(i)
		}
		indices[i] = J(coords[2*i+1])
	}
	for row < len(indptr)-1 {
		row++
		indptr[row] = J(len(indices))
	}
}

// ToCSC returns a new CSC matrix with c's elements, or an error wrapping ErrInvalid when c is
// not a matrix and ErrTooLarge when its columns number more than the limit on dense forms.
func (c *COO[T]) ToCSC() (*CSC[T], error) {
	return toCompressed[CSC[T]](c.sorted(), c.st.coords.DType(), 1)
}

// ToCSF returns a new CSF with c's elements and its levels in axisOrder (row-major when
// empty), or an error wrapping ErrInvalid when axisOrder is not a permutation of the axes or
// c is a scalar.
func (c *COO[T]) ToCSF(axisOrder ...int) (*CSF[T], error) {
	return toCSF(c.sorted(), c.st.coords.DType(), axisOrder)
}

// TFSparse is the triple tf.SparseTensor is built from: int64 Indices, an [NNZ, Rank] matrix
// in row-major order with the rows in canonical order, the Values, one per row, and the
// DenseShape.
type TFSparse[T ndarray.Element] struct {
	Indices    []int64
	Values     []T
	DenseShape []int64
}

// TFSparse returns c in the form TensorFlow's tf.SparseTensor takes. When c is a whole,
// canonical COO with int64 coordinates, the result views c's storage; otherwise it is a
// canonical copy.
func (c *COO[T]) TFSparse() TFSparse[T] {
	src := c
	if c.win != nil || !c.st.canonical || !c.st.coords.is64 {
		src = c.sorted().coo(ndarray.Int64)
	}
	return TFSparse[T]{Indices: src.st.coords.wide, Values: src.st.values, DenseShape: c.Shape()}
}

// FromTFSparse returns a COO over a tf.SparseTensor's parts, viewing them, after checking them
// as TensorFlow does: indices an [len(values), len(denseShape)] matrix, every coordinate in
// range, and, when canonical is true, the rows in canonical order without duplicates (the
// order tf.sparse.reorder gives). Errors wrap ErrInvalid.
func FromTFSparse[T ndarray.Element](indices []int64, values []T, denseShape []int64, canonical bool) (*COO[T], error) {
	c, err := MakeCOO(ndarray.Shape(denseShape), Int64Indices(indices), values)
	if err != nil {
		return nil, err
	}
	if canonical && !c.st.canonical {
		return nil, fmt.Errorf("sparse: FromTFSparse: indices are not in canonical row-major order or repeat a coordinate: %w", ErrInvalid)
	}
	return c, nil
}
