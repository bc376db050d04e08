package sparse

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/ndarrow/ndarrow/ndarray"
)

// entries is the common currency of the conversions: stored values with their row-major
// positions over shape. After sort, keys strictly increase.
type entries[T ndarray.Element] struct {
	shape  ndarray.Shape
	keys   []int64
	values []T
}

// sort orders the entries by key, stably, and keeps the last entry of each key.
func (e *entries[T]) sort() {
	if isStrictlyIncreasing(e.keys) {
		return
	}
	perm := make([]int, len(e.keys))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int {
		if c := cmp.Compare(e.keys[a], e.keys[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	keys := make([]int64, 0, len(perm))
	values := make([]T, 0, len(perm))
	for i, p := range perm {
		if i+1 < len(perm) && e.keys[perm[i+1]] == e.keys[p] {
			continue // a later entry at the same coordinate wins
		}
		keys = append(keys, e.keys[p])
		values = append(values, e.values[p])
	}
	e.keys, e.values = keys, values
}

// isStrictlyIncreasing reports whether keys strictly increase.
func isStrictlyIncreasing(keys []int64) bool {
	for i := 1; i < len(keys); i++ {
		if keys[i] <= keys[i-1] {
			return false
		}
	}
	return true
}

// all iterates over every element of the sorted entries' shape in row-major order.
func (e entries[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		var zero T
		n, j := e.shape.Size(), 0
		for pos := int64(0); pos < n; pos++ {
			v := zero
			if j < len(e.keys) && e.keys[j] == pos {
				v = e.values[j]
				j++
			}
			if !yield(v) {
				return
			}
		}
	}
}

// coo returns the sorted entries as a canonical COO with coordinates of type t.
func (e entries[T]) coo(t ndarray.DType) *COO[T] {
	rank := len(e.shape)
	coords := makeIndices(t, len(e.keys)*rank)
	coord := make([]int64, rank)
	for i, k := range e.keys {
		unravel(k, e.shape, coord)
		for d, x := range coord {
			coords.set(i*rank+d, x)
		}
	}
	return newCOO(e.shape.Clone(), coords, slices.Clone(e.values), true)
}

// compressed returns the sorted entries of a matrix as CSR (major 0) or CSC (major 1) with
// indices of type t.
func (e entries[T]) compressed(major int, t ndarray.DType) (compressed[T], error) {
	if len(e.shape) != 2 {
		return compressed[T]{}, fmt.Errorf("sparse: %v needs a matrix, not shape %v: %w", []Format{FormatCSR, FormatCSC}[major], e.shape, ErrInvalid)
	}
	cols := e.shape[1]
	nnz := len(e.keys)
	m := compressed[T]{shape: e.shape.Clone(), major: major, values: make([]T, nnz)}
	m.indptr = makeIndices(t, int(e.shape[major])+1)
	m.indices = makeIndices(t, nnz)
	order := make([]int, nnz) // position of each output entry in e
	for i := range order {
		order[i] = i
	}
	if major == 1 { // column-major order: sort by (column, row), stable
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(e.keys[a]%cols, e.keys[b]%cols) })
	}
	counts := make([]int64, e.shape[major]+1)
	for out, i := range order {
		r, c := e.keys[i]/cols, e.keys[i]%cols
		maj, minor := r, c
		if major == 1 {
			maj, minor = c, r
		}
		counts[maj+1]++
		m.indices.set(out, minor)
		m.values[out] = e.values[i]
	}
	for i := int64(1); i < int64(len(counts)); i++ {
		counts[i] += counts[i-1]
		m.indptr.set(int(i), counts[i])
	}
	return m, nil
}

// csf returns the sorted entries as a CSF whose levels follow axisOrder (checked by the
// caller), with indices of type t.
func (e entries[T]) csf(axisOrder []int, t ndarray.DType) *CSF[T] {
	rank := len(e.shape)
	nnz := len(e.keys)
	// Sort by the coordinates taken in axis order.
	coords := make([]int64, nnz*rank)
	coord := make([]int64, rank)
	for i, k := range e.keys {
		unravel(k, e.shape, coord)
		for l, ax := range axisOrder {
			coords[i*rank+l] = coord[ax]
		}
	}
	order := make([]int, nnz)
	for i := range order {
		order[i] = i
	}
	if !slices.Equal(axisOrder, identity(rank)) {
		slices.SortFunc(order, func(a, b int) int {
			return slices.Compare(coords[a*rank:(a+1)*rank], coords[b*rank:(b+1)*rank])
		})
	}
	f := &CSF[T]{shape: e.shape.Clone(), axisOrder: slices.Clone(axisOrder), values: make([]T, nnz)}
	f.indices = make([]Indices, rank)
	f.indptr = make([]Indices, rank-1)
	for l := range rank {
		f.indices[l] = makeIndices(t, 0)
		if l < rank-1 {
			f.indptr[l] = makeIndices(t, 0)
		}
	}
	var prev []int64
	for out, i := range order {
		p := coords[i*rank : (i+1)*rank]
		first := 0
		if prev != nil {
			for first < rank && p[first] == prev[first] {
				first++
			}
		}
		for l := first; l < rank; l++ {
			if l < rank-1 {
				f.indptr[l] = f.indptr[l].appendIndex(int64(f.indices[l+1].Len()))
			}
			f.indices[l] = f.indices[l].appendIndex(p[l])
		}
		f.values[out] = e.values[i]
		prev = p
	}
	for l := range rank - 1 {
		f.indptr[l] = f.indptr[l].appendIndex(int64(f.indices[l+1].Len()))
	}
	return f
}

// identity returns [0, 1, …, n-1].
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// conversionType returns the index type for a conversion from indices of type src: src when
// every value up to max fits in it, int64 otherwise.
func conversionType(src ndarray.DType, max int64) ndarray.DType {
	if fits(src, max) {
		return src
	}
	return ndarray.Int64
}

// maxDim returns the largest dimension of shape (0 for a scalar).
func maxDim(shape ndarray.Shape) int64 {
	m := int64(0)
	for _, n := range shape {
		m = max(m, n)
	}
	return m
}

// describe formats a sparse array: a header line, then the dense form when it is small and
// the first stored entries otherwise.
func describe[T ndarray.Element](t interface {
	Tensor[T]
	sorted() entries[T]
}) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v %v, %d stored", t.Format(), t.DType(), t.Shape(), t.NNZ())
	if t.Size() <= 1000 {
		d, _ := t.ToDense() // 1000 elements are within any limit
		b.WriteString("\n")
		b.WriteString(d.String())
		return b.String()
	}
	e := t.sorted()
	coord := make([]int64, len(e.shape))
	for i, k := range e.keys {
		if i == 20 {
			fmt.Fprintf(&b, "\n  …")
			break
		}
		unravel(k, e.shape, coord)
		fmt.Fprintf(&b, "\n  %v: %v", coord, e.values[i])
	}
	return b.String()
}

// checkAxisOrder fails unless order is a permutation of [0, rank).
func checkAxisOrder(order []int, rank int) error {
	if len(order) != rank {
		return fmt.Errorf("axis order %v for rank %d: %w", order, rank, ErrInvalid)
	}
	seen := make([]bool, rank)
	for _, ax := range order {
		if ax < 0 || ax >= rank || seen[ax] {
			return fmt.Errorf("axis order %v is not a permutation of the %d axes: %w", order, rank, ErrInvalid)
		}
		seen[ax] = true
	}
	return nil
}
