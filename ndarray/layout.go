package ndarray

import (
	"fmt"
	"math"
	"slices"
)

// Layout maps the indices of an array onto positions in a flat backing slice: the element at
// indices i lies at Offset + Σ i[k]·Strides[k]. Strides count elements, not bytes (the Arrow
// boundary converts them), and may be zero (a broadcast or new axis) or negative (a flip).
//
// Position is the only place that does this arithmetic.
type Layout struct {
	Shape   Shape
	Strides []int64
	Offset  int64
}

// RowMajor returns the C-order (last index fastest) layout of shape with offset 0.
func RowMajor(shape Shape) Layout {
	strides := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= max(shape[i], 1)
	}
	return Layout{Shape: shape.Clone(), Strides: strides}
}

// ColumnMajor returns the Fortran-order (first index fastest) layout of shape with offset 0.
func ColumnMajor(shape Shape) Layout {
	strides := make([]int64, len(shape))
	s := int64(1)
	for i := range shape {
		strides[i] = s
		s *= max(shape[i], 1)
	}
	return Layout{Shape: shape.Clone(), Strides: strides}
}

// Rank returns the number of dimensions.
func (l Layout) Rank() int { return len(l.Shape) }

// Size returns the number of elements.
func (l Layout) Size() int64 { return l.Shape.Size() }

// Clone returns a deep copy of l.
func (l Layout) Clone() Layout {
	return Layout{Shape: l.Shape.Clone(), Strides: slices.Clone(l.Strides), Offset: l.Offset}
}

// Position returns the position in the backing slice of the element at indices, and false when
// the number of indices differs from the rank or an index is outside its dimension.
func (l Layout) Position(indices ...int64) (int64, bool) {
	if len(indices) != len(l.Shape) || len(l.Strides) != len(l.Shape) {
		return 0, false
	}
	p := l.Offset
	for k, i := range indices {
		if uint64(i) >= uint64(l.Shape[k]) {
			return 0, false
		}
		p += i * l.Strides[k]
	}
	return p, true
}

// IsRowMajor reports whether the elements are contiguous in C order: each stride equals the
// product of the dimensions after it. Strides of dimensions of size 1 are ignored, and an empty
// array is contiguous in any order.
func (l Layout) IsRowMajor() bool {
	if l.Size() == 0 {
		return true
	}
	want := int64(1)
	for i := len(l.Shape) - 1; i >= 0; i-- {
		switch d := l.Shape[i]; {
		case d != 1 && l.Strides[i] != want:
			return false
		default:
			want *= d
		}
	}
	return true
}

// IsColumnMajor reports whether the elements are contiguous in Fortran order, with the same
// rules as IsRowMajor.
func (l Layout) IsColumnMajor() bool {
	if l.Size() == 0 {
		return true
	}
	want := int64(1)
	for i, d := range l.Shape {
		switch {
		case d != 1 && l.Strides[i] != want:
			return false
		default:
			want *= d
		}
	}
	return true
}

// IsContiguous reports whether the elements fill a contiguous run of the backing slice in C or
// Fortran order.
func (l Layout) IsContiguous() bool { return l.IsRowMajor() || l.IsColumnMajor() }

// Validate reports whether l is a valid layout over a backing slice of n elements: a valid
// shape with no Unknown dimension, one stride per dimension, a non-negative offset, and every
// element's position inside [0, n). The arithmetic is overflow-checked, so Validate is safe on
// layouts decoded from untrusted metadata. The error wraps ErrShape or ErrLayout.
func (l Layout) Validate(n int64) error {
	size, err := l.Shape.checkedSize()
	if err != nil {
		return err
	}
	if !l.Shape.IsKnown() {
		return fmt.Errorf("ndarray: layout shape %v has an unknown dimension: %w", l.Shape, ErrShape)
	}
	if len(l.Strides) != len(l.Shape) {
		return fmt.Errorf("ndarray: layout has %d strides for shape %v: %w", len(l.Strides), l.Shape, ErrLayout)
	}
	if l.Offset < 0 {
		return fmt.Errorf("ndarray: layout offset %d is negative: %w", l.Offset, ErrLayout)
	}
	if size == 0 {
		return nil
	}
	lo, hi, ok := l.extent()
	if !ok {
		return fmt.Errorf("ndarray: layout strides %v over shape %v overflow: %w", l.Strides, l.Shape, ErrLayout)
	}
	if lo < 0 || hi >= n {
		return fmt.Errorf("ndarray: layout (shape %v, strides %v, offset %d) reaches positions %d to %d, outside a backing of %d elements: %w",
			l.Shape, l.Strides, l.Offset, lo, hi, n, ErrLayout)
	}
	return nil
}

// extent returns the lowest and highest positions l reaches in a non-empty array, and false
// when the arithmetic overflows.
func (l Layout) extent() (lo, hi int64, ok bool) {
	lo, hi = l.Offset, l.Offset
	for k, d := range l.Shape {
		span, ok := mulInt64(d-1, l.Strides[k])
		if !ok {
			return 0, 0, false
		}
		if span < 0 {
			lo, ok = addInt64(lo, span)
		} else {
			hi, ok = addInt64(hi, span)
		}
		if !ok {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

// mulInt64 returns a·b and whether it did not overflow.
func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || c/b != a {
		return 0, false
	}
	return c, true
}

// addInt64 returns a+b and whether it did not overflow.
func addInt64(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// maxLineRank bounds the dimensions a lineIter tracks. Dimensions of size 1 are dropped and a
// non-empty array of k dimensions of size 2 or more has at least 2^k elements, which must fit
// in an int, so no valid layout needs more.
const maxLineRank = 64

// lineIter walks the innermost lines of a valid layout in row-major order: after each call to
// next that returns true, the line is the n positions start, start+stride, … It merges
// dimensions that step exactly over each other, so a row-major layout is one line. It keeps
// its counters in arrays so that it lives on the caller's stack.
type lineIter struct {
	shape, strides, idx [maxLineRank]int64
	outer               int // the number of dimensions outside the line
	pos                 int64
	start, stride, n    int64
	state               uint8 // 0 before the first line, 1 walking, 2 done
}

// init prepares the walk of l.
func (it *lineIter) init(l Layout) {
	it.state, it.outer, it.pos = 0, 0, l.Offset
	if l.Size() == 0 {
		it.state = 2
		return
	}
	r := 0
	for k, d := range l.Shape {
		s := l.Strides[k]
		switch {
		case d == 1:
			continue
		case r > 0 && it.strides[r-1] == s*d:
			// The previous (outer) dimension and this one walk one progression.
			it.shape[r-1] *= d
			it.strides[r-1] = s
			continue
		}
		it.shape[r], it.strides[r], it.idx[r] = d, s, 0
		r++
	}
	if r == 0 { // a scalar, or only dimensions of size 1
		it.shape[0], it.strides[0], r = 1, 1, 1
	}
	it.outer = r - 1
	it.n, it.stride = it.shape[r-1], it.strides[r-1]
}

// next advances to the next line and reports whether there is one.
func (it *lineIter) next() bool {
	switch it.state {
	case 0:
		it.state = 1
		it.start = it.pos
		return true
	case 2:
		return false
	}
	for k := it.outer - 1; k >= 0; k-- {
		it.idx[k]++
		it.pos += it.strides[k]
		if it.idx[k] < it.shape[k] {
			it.start = it.pos
			return true
		}
		it.pos -= it.strides[k] * it.shape[k]
		it.idx[k] = 0
	}
	it.state = 2
	return false
}

// lines calls fn for every innermost line of a valid layout, as lineIter walks them, and stops
// early when fn returns false.
func (l Layout) lines(fn func(start, stride, n int64) bool) {
	var it lineIter
	for it.init(l); it.next(); {
		if !fn(it.start, it.stride, it.n) {
			return
		}
	}
}

// pairs calls fn with the positions of each element in a and in b, two valid layouts of the
// same shape, in row-major order. It stops early when fn returns false.
func pairs(a, b Layout, fn func(pa, pb int64) bool) {
	linePairs(a, b, func(pa, sa, pb, sb, n int64) bool {
		for j := int64(0); j < n; j++ {
			if !fn(pa+j*sa, pb+j*sb) {
				return false
			}
		}
		return true
	})
}

// linePairs calls fn for each innermost line of a and b, two valid layouts of the same shape,
// in row-major order: where the line starts in each backing, its stride there, and its length.
// It stops early when fn returns false.
func linePairs(a, b Layout, fn func(pa, sa, pb, sb, n int64) bool) {
	r := len(a.Shape)
	if a.Shape.Size() == 0 {
		return
	}
	if r == 0 {
		fn(a.Offset, 1, b.Offset, 1, 1)
		return
	}
	var idxBuf [maxLineRank]int64
	idx := idxBuf[:0]
	if r > maxLineRank {
		idx = make([]int64, r)
	} else {
		idx = idxBuf[:r]
	}
	last := r - 1
	n, sa, sb := a.Shape[last], a.Strides[last], b.Strides[last]
	pa, pb := a.Offset, b.Offset
	for {
		if !fn(pa, sa, pb, sb, n) {
			return
		}
		k := last - 1
		for ; k >= 0; k-- {
			idx[k]++
			pa += a.Strides[k]
			pb += b.Strides[k]
			if idx[k] < a.Shape[k] {
				break
			}
			pa -= a.Strides[k] * a.Shape[k]
			pb -= b.Strides[k] * a.Shape[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}
