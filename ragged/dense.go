package ragged

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
)

// BoundingShape returns the shape of the smallest dense array that holds a: each ragged
// dimension's size is its longest row (TensorFlow's bounding_shape).
func (a *Array[T]) BoundingShape() ndarray.Shape {
	s := a.Shape()
	lo, hi := a.base, a.base+a.nrows
	for l, p := range a.parts {
		if p.splits != nil {
			longest := int64(0)
			for r := lo; r < hi; r++ {
				longest = max(longest, p.splits[r+1]-p.splits[r])
			}
			s[1+l] = longest
		}
		lo, hi = p.start(lo), p.start(hi)
	}
	return s
}

// ToDense returns a new dense array of a's BoundingShape with every row padded at its end with
// pad (TensorFlow's RaggedTensor.to_tensor(default_value=pad)). It fails with
// ndarray.ErrShape when that shape's size overflows an int.
func (a *Array[T]) ToDense(pad T) (*ndarray.Dense[T], error) {
	shape := a.BoundingShape()
	if err := shape.Validate(); err != nil {
		return nil, fmt.Errorf("ragged: ToDense: %w", err)
	}
	d := ndarray.New[T](shape...)
	data := d.Data()
	var zero T
	if pad != zero {
		for i := range data {
			data[i] = pad
		}
	}
	strides := ndarray.RowMajor(shape).Strides
	var fill func(l int, r, off int64)
	fill = func(l int, r, off int64) {
		if l == len(a.parts) {
			copy(data[off:off+a.innerN], a.values[r*a.innerN:(r+1)*a.innerN])
			return
		}
		s, e := a.parts[l].children(r)
		for j := s; j < e; j++ {
			fill(l+1, j, off+(j-s)*strides[l+1])
		}
	}
	for i := range a.nrows {
		fill(0, a.base+i, i*strides[0])
	}
	return d, nil
}

// FromDense returns a ragged array of ragged rank 1 holding the first lengths[i] elements of
// each row i of d along its second dimension (TensorFlow's RaggedTensor.from_tensor with
// lengths); the further dimensions of d become the inner shape. A nil lengths keeps every
// row whole. The values are copied. FromDense fails with ndarray.ErrShape when d has rank
// less than 2, lengths has the wrong count, or a length is negative or longer than the row.
func FromDense[T ndarray.Element](d *ndarray.Dense[T], lengths []int64) (*Array[T], error) {
	shape := d.Shape()
	if len(shape) < 2 {
		return nil, fmt.Errorf("ragged: FromDense: shape %v has rank %d, need 2 or more: %w", shape, len(shape), ndarray.ErrShape)
	}
	n, width := shape[0], shape[1]
	if lengths != nil && int64(len(lengths)) != n {
		return nil, fmt.Errorf("ragged: FromDense: %d lengths for %d rows: %w", len(lengths), n, ndarray.ErrShape)
	}
	splits := make([]int64, n+1)
	for i := range n {
		length := width
		if lengths != nil {
			length = lengths[i]
		}
		if length < 0 || length > width {
			return nil, fmt.Errorf("ragged: FromDense: length %d of row %d is outside [0, %d]: %w", length, i, width, ndarray.ErrShape)
		}
		splits[i+1] = splits[i] + length
	}
	inner := shape[2:]
	innerN := inner.Size()
	data := d.Ravel()
	values := make([]T, 0, splits[n]*innerN)
	for i := range n {
		start := i * width * innerN
		values = append(values, data[start:start+(splits[i+1]-splits[i])*innerN]...)
	}
	a, err := Make(values, inner, RowSplits(splits))
	if err != nil {
		return nil, err
	}
	a.view = false // it owns its storage
	return a, nil
}
