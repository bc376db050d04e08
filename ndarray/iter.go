package ndarray

import (
	"iter"
	"slices"
)

// Values returns an iterator over the elements in row-major order (the last index fastest),
// whatever the layout. The iterator reads the backing at each step, so it sees writes made
// while it runs.
func (d *Dense[T]) Values() iter.Seq[T] {
	return func(yield func(T) bool) {
		data := d.data
		d.layout.lines(func(start, stride, n int64) bool {
			if stride == 1 {
				for _, v := range data[start : start+n] {
					if !yield(v) {
						return false
					}
				}
				return true
			}
			for p, end := start, start+n*stride; p != end; p += stride {
				if !yield(data[p]) {
					return false
				}
			}
			return true
		})
	}
}

// Elements returns an iterator over the sub-arrays along the first dimension: for each i, the
// view d[i] of rank Rank()-1, which shares memory with d. Each step yields a new view, never a
// recycled one, so views may be kept. Elements panics on a rank-0 array.
func (d *Dense[T]) Elements() iter.Seq2[int64, *Dense[T]] {
	if d.Rank() == 0 {
		panic("ndarray: Elements on a rank-0 array")
	}
	return func(yield func(int64, *Dense[T]) bool) {
		for i := int64(0); i < d.layout.Shape[0]; i++ {
			l := Layout{
				Shape:   d.layout.Shape[1:].Clone(),
				Strides: slices.Clone(d.layout.Strides[1:]),
				Offset:  d.layout.Offset + i*d.layout.Strides[0],
			}
			if !yield(i, d.view(l)) {
				return
			}
		}
	}
}
