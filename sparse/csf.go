package sparse

import (
	"fmt"
	"iter"
	"slices"

	"github.com/ndarrow/ndarrow/ndarray"
)

// CSF is a sparse array in compressed sparse fiber format (Arrow's SparseCSFTensor), a tree
// with one level per dimension: level l holds the coordinates along axis AxisOrder()[l] of its
// nodes (Indices(l)), and for l < Rank-1 the pointers Indptr(l) that delimit each node's
// children on level l+1. The leaves are the stored values, in Data(). Any rank from 1 is
// allowed. Its structure is fixed: build with a COO and convert.
type CSF[T ndarray.Element] struct {
	shape     ndarray.Shape
	axisOrder []int
	indptr    []Indices // rank-1 levels of pointers
	indices   []Indices // rank levels of coordinates
	values    []T
	readOnly  bool
}

// MakeCSF returns a CSF of the given shape over its parts, which it views without copying:
// axisOrder (a permutation of the axes, the axis of each level), rank-1 pointer arrays and
// rank index arrays, all of one integer type, and the values. It checks them fully — every
// level's pointers start at 0, never decrease and end at the size of the next level, every
// coordinate is inside its dimension, the last level has one entry per value — and fails
// with an error wrapping ErrInvalid otherwise.
func MakeCSF[T ndarray.Element](shape ndarray.Shape, axisOrder []int, indptr, indices []Indices, values []T) (*CSF[T], error) {
	fail := func(err error) (*CSF[T], error) { return nil, fmt.Errorf("sparse: MakeCSF: %w", err) }
	shape = shape.Clone()
	if err := checkShape(shape); err != nil {
		return fail(err)
	}
	rank := len(shape)
	if rank == 0 {
		return fail(fmt.Errorf("a CSF tensor has rank 1 or more: %w", ErrInvalid))
	}
	if err := checkAxisOrder(axisOrder, rank); err != nil {
		return fail(err)
	}
	if len(indptr) != rank-1 || len(indices) != rank {
		return fail(fmt.Errorf("%d pointer and %d index arrays for rank %d, want %d and %d: %w", len(indptr), len(indices), rank, rank-1, rank, ErrInvalid))
	}
	t := indices[0].DType()
	for l := range rank {
		if indices[l].DType() != t || (l < rank-1 && indptr[l].DType() != t) {
			return fail(fmt.Errorf("level %d: pointers and indices of one type for all levels: %w", l, ErrInvalid))
		}
	}
	if indices[0].Len() > 0 && int64(indices[0].Len()) > shape[axisOrder[0]] {
		// Checked again by value below; this bounds nothing but reads better.
		return fail(fmt.Errorf("level 0 has %d nodes for a dimension of %d: %w", indices[0].Len(), shape[axisOrder[0]], ErrInvalid))
	}
	for l := range rank {
		n := int64(indices[l].Len())
		if l == rank-1 && n != int64(len(values)) {
			return fail(fmt.Errorf("the last level has %d nodes for %d values: %w", n, len(values), ErrInvalid))
		}
		if err := checkIndexValues(fmt.Sprintf("level %d indices", l), indices[l], n, shape[axisOrder[l]]); err != nil {
			return fail(err)
		}
		if l < rank-1 {
			if err := checkPointers(fmt.Sprintf("level %d indptr", l), indptr[l], n, int64(indices[l+1].Len())); err != nil {
				return fail(err)
			}
		}
	}
	return &CSF[T]{shape: shape, axisOrder: slices.Clone(axisOrder), indptr: indptr, indices: indices, values: values}, nil
}

// DType returns the element type.
func (f *CSF[T]) DType() ndarray.DType { return ndarray.DTypeOf[T]() }

// Format returns FormatCSF.
func (f *CSF[T]) Format() Format { return FormatCSF }

// Shape returns a copy of the shape.
func (f *CSF[T]) Shape() ndarray.Shape { return f.shape.Clone() }

// Rank returns the number of dimensions.
func (f *CSF[T]) Rank() int { return len(f.shape) }

// Size returns the number of elements, zeros included.
func (f *CSF[T]) Size() int64 { return f.shape.Size() }

// NNZ returns the number of stored values.
func (f *CSF[T]) NNZ() int64 { return int64(len(f.values)) }

// ReadOnly reports whether writes panic.
func (f *CSF[T]) ReadOnly() bool { return f.readOnly }

// AsReadOnly returns a read-only CSF sharing f's storage.
func (f *CSF[T]) AsReadOnly() *CSF[T] {
	r := *f
	r.readOnly = true
	return &r
}

// AxisOrder returns a copy of the axis of each level.
func (f *CSF[T]) AxisOrder() []int { return slices.Clone(f.axisOrder) }

// Indptr returns the pointers of level l (0 ≤ l < Rank-1), a view.
func (f *CSF[T]) Indptr(l int) Indices { return f.indptr[l] }

// Indices returns the coordinates of the nodes of level l (0 ≤ l < Rank), a view.
func (f *CSF[T]) Indices(l int) Indices { return f.indices[l] }

// Data returns the stored values, a view.
func (f *CSF[T]) Data() []T { return f.values }

// Get returns the element at indices: the stored value or zero. It scans the children of
// one node per level. It panics on a wrong number of indices or an index out of range.
func (f *CSF[T]) Get(indices ...int64) T {
	if !inShape(indices, f.shape) {
		badIndexPanic("CSF.Get", indices, f.shape)
	}
	if p, ok := f.find(indices); ok {
		return f.values[p]
	}
	var zero T
	return zero
}

// SetStored updates the stored value at indices and reports whether there was one; the
// structure does not change. It panics on a wrong number of indices, an index out of range
// or a read-only array.
func (f *CSF[T]) SetStored(v T, indices ...int64) bool {
	if f.readOnly {
		readOnlyPanic("CSF.SetStored")
	}
	if !inShape(indices, f.shape) {
		badIndexPanic("CSF.SetStored", indices, f.shape)
	}
	p, ok := f.find(indices)
	if ok {
		f.values[p] = v
	}
	return ok
}

// find returns the leaf of the coordinates, the last one when a node is repeated.
func (f *CSF[T]) find(coord []int64) (int, bool) {
	return f.findFrom(0, 0, f.indices[0].Len(), coord)
}

func (f *CSF[T]) findFrom(l, lo, hi int, coord []int64) (int, bool) {
	want := coord[f.axisOrder[l]]
	for p := hi - 1; p >= lo; p-- {
		if f.indices[l].At(p) != want {
			continue
		}
		if l == len(f.shape)-1 {
			return p, true
		}
		if q, ok := f.findFrom(l+1, int(f.indptr[l].At(p)), int(f.indptr[l].At(p+1)), coord); ok {
			return q, true
		}
	}
	return 0, false
}

// walk calls fn for every stored value in storage order with its coordinates (reused).
func (f *CSF[T]) walk(fn func(coord []int64, v T)) {
	coord := make([]int64, len(f.shape))
	var visit func(l, lo, hi int)
	visit = func(l, lo, hi int) {
		for p := lo; p < hi; p++ {
			coord[f.axisOrder[l]] = f.indices[l].At(p)
			if l == len(f.shape)-1 {
				fn(coord, f.values[p])
				continue
			}
			visit(l+1, int(f.indptr[l].At(p)), int(f.indptr[l].At(p+1)))
		}
	}
	visit(0, 0, f.indices[0].Len())
}

// sorted returns the entries as sorted row-major keys.
func (f *CSF[T]) sorted() entries[T] {
	strides := rowMajorStrides(f.shape)
	e := entries[T]{shape: f.shape.Clone(), keys: make([]int64, 0, len(f.values)), values: make([]T, 0, len(f.values))}
	f.walk(func(coord []int64, v T) {
		k := position(coord, strides)
		e.keys = append(e.keys, k)
		e.values = append(e.values, v)
	})
	e.sort()
	return e
}

// Values iterates over all elements in row-major order, zeros included.
func (f *CSF[T]) Values() iter.Seq[T] { return f.sorted().all() }

// ToDense returns a new row-major dense array with f's elements (see Tensor).
func (f *CSF[T]) ToDense() (*ndarray.Dense[T], error) {
	d, err := denseArray[T](f, 0)
	if err != nil {
		return nil, err
	}
	return d.(*ndarray.Dense[T]), nil
}

// fill writes f's elements into out, a zeroed row-major array of f's shape.
func (f *CSF[T]) fill(out *ndarray.Dense[T]) {
	data := out.Data()
	strides := rowMajorStrides(f.shape)
	f.walk(func(coord []int64, v T) {
		k := position(coord, strides)
		data[k] = v
	})
}

// ToCOO returns a new canonical COO with f's entries.
func (f *CSF[T]) ToCOO() *COO[T] {
	return f.sorted().coo(conversionType(f.indices[0].DType(), maxDim(f.shape)))
}

// ToCSR returns a new CSR matrix with f's elements, or an error wrapping ErrInvalid when f is
// not a matrix.
func (f *CSF[T]) ToCSR() (*CSR[T], error) {
	return toCompressed[CSR[T]](f.sorted(), f.indices[0].DType(), 0)
}

// ToCSC returns a new CSC matrix with f's elements, or an error wrapping ErrInvalid when f is
// not a matrix.
func (f *CSF[T]) ToCSC() (*CSC[T], error) {
	return toCompressed[CSC[T]](f.sorted(), f.indices[0].DType(), 1)
}

// ToCSF returns a new CSF with f's elements and its levels in axisOrder (row-major when
// empty), or an error wrapping ErrInvalid when axisOrder is not a permutation of the axes.
func (f *CSF[T]) ToCSF(axisOrder ...int) (*CSF[T], error) {
	return toCSF(f.sorted(), f.indices[0].DType(), axisOrder)
}

// Slice returns a copy of the part of f that indices select, as a COO (see COO.Slice).
func (f *CSF[T]) Slice(indices ...ndarray.Index) (*COO[T], error) { return f.ToCOO().Slice(indices...) }

// String formats f as its dense form would be, prefixed by its layout and NNZ.
func (f *CSF[T]) String() string { return describe[T](f) }

// toCSF converts sorted entries to a CSF with levels in axisOrder, keeping the index type src
// where the values fit.
func toCSF[T ndarray.Element](e entries[T], src ndarray.DType, axisOrder []int) (*CSF[T], error) {
	if len(e.shape) == 0 {
		return nil, fmt.Errorf("sparse: ToCSF: a CSF tensor has rank 1 or more: %w", ErrInvalid)
	}
	if len(axisOrder) == 0 {
		axisOrder = identity(len(e.shape))
	}
	if err := checkAxisOrder(axisOrder, len(e.shape)); err != nil {
		return nil, fmt.Errorf("sparse: ToCSF: %w", err)
	}
	return e.csf(axisOrder, conversionType(src, max(maxDim(e.shape), int64(len(e.keys))))), nil
}

// toCompressed converts sorted entries to CSR (major 0) or CSC (major 1).
func toCompressed[M CSR[T] | CSC[T], T ndarray.Element](e entries[T], src ndarray.DType, major int) (*M, error) {
	if err := checkLines(e.shape, major); err != nil {
		return nil, err
	}
	m, err := e.compressed(major, conversionType(src, max(maxDim(e.shape), int64(len(e.keys)))))
	if err != nil {
		return nil, err
	}
	out := M{m}
	return &out, nil
}
