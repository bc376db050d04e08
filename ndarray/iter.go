package ndarray

import (
	"iter"
	"slices"
)

// Values returns an iterator over the elements in row-major order (the last index fastest),
// whatever the layout. The iterator reads the backing at each step, so it sees writes made
// while it runs.
func (d *Dense[T]) Values() iter.Seq[T] {
	d = d.orEmpty()
	return func(yield func(T) bool) {
		data := d.data
		var it lineIter
		for it.init(d.layout); it.next(); {
			if it.stride == 1 {
				for _, v := range data[it.start : it.start+it.n] {
					if !yield(v) {
						return
					}
				}
				continue
			}
			for i, p := int64(0), it.start; i < it.n; i, p = i+1, p+it.stride {
				if !yield(data[p]) {
					return
				}
			}
		}
	}
}

// Elements returns an iterator over the sub-arrays along the first dimension: for each i, the
// view d[i] of rank Rank()-1, which shares memory with d. Each step yields a new view, never a
// recycled one, so views may be kept. Elements panics on a rank-0 array.
func (d *Dense[T]) Elements() iter.Seq2[int64, *Dense[T]] {
	d = d.orEmpty()
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
