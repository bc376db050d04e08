package ndarray

import "fmt"

// Reshape returns the array's elements, in row-major order, with a new shape of the same size;
// one dimension may be Unknown (-1) and is then inferred. The result is a view sharing memory
// with d when the layout allows it (always for a row-major array; for a strided view when the
// dimensions being merged or split are contiguous with each other, NumPy's rule) and a new
// row-major copy otherwise; d itself is never changed. A view of a read-only array is
// read-only; a copy never is. Reshape fails with ErrShape when the sizes differ, the shape is
// invalid or more than one dimension is Unknown.
func (d *Dense[T]) Reshape(shape ...int64) (*Dense[T], error) {
	d = d.orEmpty()
	s, err := d.inferShape(Shape(shape))
	if err != nil {
		return nil, fmt.Errorf("ndarray: Reshape %v to %v: %w", d.layout.Shape, Shape(shape), err)
	}
	if strides, ok := reshapeStrides(d.layout, s); ok {
		return d.view(Layout{Shape: s, Strides: strides, Offset: d.layout.Offset}), nil
	}
	out := d.Clone()
	out.layout = RowMajor(s)
	return out, nil
}

// inferShape checks s against the array's size, filling in one Unknown dimension.
func (d *Dense[T]) inferShape(s Shape) (Shape, error) {
	s = s.Clone()
	unknown := -1
	for i, n := range s {
		if n == Unknown {
			if unknown >= 0 {
				return nil, fmt.Errorf("more than one unknown dimension: %w", ErrShape)
			}
			unknown = i
		}
	}
	known, err := s.checkedSize()
	if err != nil {
		return nil, err
	}
	size := d.Size()
	if unknown >= 0 {
		if known == 0 || size%known != 0 {
			return nil, fmt.Errorf("cannot infer a dimension for size %d: %w", size, ErrShape)
		}
		s[unknown] = size / known
		known = size
	}
	if known != size {
		return nil, fmt.Errorf("size %d is not %d: %w", known, size, ErrShape)
	}
	if s == nil {
		s = Shape{}
	}
	return s, nil
}

// reshapeStrides returns strides that lay shape s over the elements of l in row-major order
// without moving them, and false when no such strides exist. The algorithm is NumPy's
// _attempt_nocopy_reshape: group old and new dimensions into runs of equal size; a run of old
// dimensions can be regrouped only when each steps exactly over the next.
func reshapeStrides(l Layout, s Shape) ([]int64, bool) {
	strides := make([]int64, len(s))
	if l.Size() == 0 {
		return RowMajor(s).Strides, true
	}
	// Old dimensions of size 1 carry no information.
	var oldDims, oldStrides []int64
	for k, n := range l.Shape {
		if n != 1 {
			oldDims = append(oldDims, n)
			oldStrides = append(oldStrides, l.Strides[k])
		}
	}
	oi, oj, ni, nj := 0, 1, 0, 1
	for ni < len(s) && oi < len(oldDims) {
		np, op := s[ni], oldDims[oi]
		for np != op {
			if np < op {
				np *= s[nj]
				nj++
			} else {
				op *= oldDims[oj]
				oj++
			}
		}
		for ok := oi; ok < oj-1; ok++ {
			if oldStrides[ok] != oldDims[ok+1]*oldStrides[ok+1] {
				return nil, false
			}
		}
		strides[nj-1] = oldStrides[oj-1]
		for nk := nj - 1; nk > ni; nk-- {
			strides[nk-1] = strides[nk] * s[nk]
		}
		ni, nj = nj, nj+1
		oi, oj = oj, oj+1
	}
	// Trailing new dimensions are all of size 1: any stride works; use the row-major one.
	last := int64(1)
	if ni > 0 {
		last = strides[ni-1]
	}
	for nk := ni; nk < len(s); nk++ {
		strides[nk] = last
	}
	return strides, true
}

// Transpose returns a view with the dimensions in reverse order, like NumPy's a.T. It shares
// memory with d.
func (d *Dense[T]) Transpose() *Dense[T] {
	d = d.orEmpty()
	axes := make([]int, d.Rank())
	for i := range axes {
		axes[i] = len(axes) - 1 - i
	}
	v, _ := d.Permute(axes...)
	return v
}

// Permute returns a view whose dimension i is d's dimension axes[i], like NumPy's
// a.transpose(axes). It shares memory with d. It fails with ErrIndex when axes is not a
// permutation of 0 … Rank()-1.
func (d *Dense[T]) Permute(axes ...int) (*Dense[T], error) {
	d = d.orEmpty()
	if len(axes) != d.Rank() {
		return nil, fmt.Errorf("ndarray: Permute %v of rank %d: %w", axes, d.Rank(), ErrIndex)
	}
	seen := make([]bool, len(axes))
	l := Layout{Shape: make(Shape, len(axes)), Strides: make([]int64, len(axes)), Offset: d.layout.Offset}
	for i, a := range axes {
		if a < 0 || a >= len(axes) || seen[a] {
			return nil, fmt.Errorf("ndarray: Permute %v is not a permutation of %d axes: %w", axes, len(axes), ErrIndex)
		}
		seen[a] = true
		l.Shape[i], l.Strides[i] = d.layout.Shape[a], d.layout.Strides[a]
	}
	return d.view(l), nil
}
