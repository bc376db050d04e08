package ndarray

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Reductions, as NumPy's: over every element, or along one axis (the result has that axis
// removed, like numpy.sum(a, axis=k)). They read views of any strides without copying them and
// allocate only the result. Sums of floats are pairwise, as NumPy adds, so that float32 sums
// keep their precision; sums of integers add in T and wrap as Go's integers do (NumPy adds
// small integers in int64: convert with AsType first where that matters). float16 arrays are
// converted with AsType first. Min, Max, ArgMin and ArgMax propagate NaN as NumPy does: a NaN
// is the minimum and the maximum, at its first position.

// Sum returns the sum of every element of d; 0 for an empty array.
func Sum[T Real](d *Dense[T]) T {
	d = d.orEmpty()
	if x, ok := d.Contiguous(); ok {
		return contiguousSum(x)
	}
	var total T
	first := true
	d.layout.lines(func(start, stride, n int64) bool {
		s := pairwiseSum(d.data, start, stride, n)
		if first {
			total, first = s, false
		} else {
			total += s
		}
		return true
	})
	return total
}

// SumAxis returns the sums along axis (negative counts from the end), a new array of d's
// shape without that axis. Along the last axis each line is summed pairwise; along another,
// the slices are added in turn (as NumPy adds the rows of a C-ordered array), reading d in
// its own order.
func SumAxis[T Real](d *Dense[T], axis int) (*Dense[T], error) {
	d = d.orEmpty()
	k, err := normalizeAxis("SumAxis", axis, d.Rank())
	if err != nil {
		return nil, err
	}
	if k < d.Rank()-1 {
		out := New[T](d.layout.Shape.removeAxis(k)...)
		outLayout := out.layout
		d.axisSlices(k, func(slice Layout) {
			linePairs(outLayout, slice, func(po, so, ps, ss, n int64) bool {
				arithLine(opAdd, n, out.data, po, so, out.data, po, so, d.data, ps, ss)
				return true
			})
		})
		return out, nil
	}
	return reduceAxisTo(d, axis, "SumAxis", false, func(data []T, start, stride, n int64) T {
		return pairwiseSum(data, start, stride, n)
	})
}

// removeAxis returns the shape without dimension k.
func (s Shape) removeAxis(k int) Shape {
	return append(s[:k:k], s[k+1:]...)
}

// axisSlices calls fn with the layout of each slice of d along axis k, in order: d's layout
// without dimension k, offset to the slice.
func (d *Dense[T]) axisSlices(k int, fn func(Layout)) {
	l := d.layout
	rest := Layout{Shape: l.Shape.removeAxis(k), Strides: append(l.Strides[:k:k], l.Strides[k+1:]...)}
	for j := range l.Shape[k] {
		rest.Offset = l.Offset + j*l.Strides[k]
		fn(rest)
	}
}

// Mean returns the mean of every element of d, computed in float64; NaN for an empty array, as
// NumPy gives (with a warning).
func Mean[T Real](d *Dense[T]) float64 {
	d = d.orEmpty()
	if d.Size() == 0 {
		return math.NaN()
	}
	total := 0.0
	d.layout.lines(func(start, stride, n int64) bool {
		total += pairwiseSumFloat64(d.data, start, stride, n)
		return true
	})
	return total / float64(d.Size())
}

// MeanAxis returns the means along axis, computed in float64, a new array of d's shape without
// that axis.
func MeanAxis[T Real](d *Dense[T], axis int) (*Dense[float64], error) {
	return reduceAxisTo(d, axis, "MeanAxis", false, func(data []T, start, stride, n int64) float64 {
		if n == 0 {
			return math.NaN()
		}
		return pairwiseSumFloat64(data, start, stride, n) / float64(n)
	})
}

// Min returns the least element of d (a NaN if d holds one). It fails with ErrShape for an
// empty array, which has none.
func Min[T Real](d *Dense[T]) (T, error) {
	i, err := ArgMin(d)
	if err != nil {
		return 0, err
	}
	return d.atFlat(i), nil
}

// Max returns the greatest element of d (a NaN if d holds one). It fails with ErrShape for an
// empty array.
func Max[T Real](d *Dense[T]) (T, error) {
	i, err := ArgMax(d)
	if err != nil {
		return 0, err
	}
	return d.atFlat(i), nil
}

// ArgMin returns the row-major index of the first least element of d (of the first NaN, if
// any), as numpy.argmin. It fails with ErrShape for an empty array.
func ArgMin[T Real](d *Dense[T]) (int64, error) { return argBest(d, "ArgMin", less[T]) }

// ArgMax returns the row-major index of the first greatest element of d (of the first NaN, if
// any), as numpy.argmax. It fails with ErrShape for an empty array.
func ArgMax[T Real](d *Dense[T]) (int64, error) { return argBest(d, "ArgMax", greater[T]) }

// MinAxis returns the least elements along axis, a new array of d's shape without that axis.
func MinAxis[T Real](d *Dense[T], axis int) (*Dense[T], error) {
	return reduceAxisTo(d, axis, "MinAxis", true, func(data []T, start, stride, n int64) T {
		return data[start+bestIn(data, start, stride, n, less[T])*stride]
	})
}

// MaxAxis returns the greatest elements along axis, a new array of d's shape without that
// axis.
func MaxAxis[T Real](d *Dense[T], axis int) (*Dense[T], error) {
	return reduceAxisTo(d, axis, "MaxAxis", true, func(data []T, start, stride, n int64) T {
		return data[start+bestIn(data, start, stride, n, greater[T])*stride]
	})
}

// ArgMinAxis returns the index along axis of the first least element of each line, a new
// array of d's shape without that axis.
func ArgMinAxis[T Real](d *Dense[T], axis int) (*Dense[int64], error) {
	return reduceAxisTo(d, axis, "ArgMinAxis", true, func(data []T, start, stride, n int64) int64 {
		return bestIn(data, start, stride, n, less[T])
	})
}

// ArgMaxAxis returns the index along axis of the first greatest element of each line, a new
// array of d's shape without that axis.
func ArgMaxAxis[T Real](d *Dense[T], axis int) (*Dense[int64], error) {
	return reduceAxisTo(d, axis, "ArgMaxAxis", true, func(data []T, start, stride, n int64) int64 {
		return bestIn(data, start, stride, n, greater[T])
	})
}

// isNaN reports whether v is a NaN (never, for an integer type).
func isNaN[T Real](v T) bool { return v != v }

func less[T Real](a, b T) bool    { return a < b }
func greater[T Real](a, b T) bool { return a > b }

// bestIn returns the position in its line of the first element better than every other (as
// better says), or of the first NaN.
func bestIn[T Real](data []T, start, stride, n int64, better func(a, b T) bool) int64 {
	best, at := data[start], int64(0)
	if isNaN(best) {
		return 0
	}
	for i, p := int64(1), start+stride; i < n; i, p = i+1, p+stride {
		v := data[p]
		if isNaN(v) {
			return i
		}
		if better(v, best) {
			best, at = v, i
		}
	}
	return at
}

// argBest returns the row-major index of the first best element of d, or of its first NaN.
func argBest[T Real](d *Dense[T], method string, better func(a, b T) bool) (int64, error) {
	d = d.orEmpty()
	if d.Size() == 0 {
		return 0, fmt.Errorf("ndarray: %s of an empty array of shape %v: %w", method, d.layout.Shape, ErrShape)
	}
	var best T
	at, seen := int64(0), int64(0)
	found := false
	d.layout.lines(func(start, stride, n int64) bool {
		i := bestIn(d.data, start, stride, n, better)
		v := d.data[start+i*stride]
		switch {
		case isNaN(v):
			best, at, found = v, seen+i, true
			return false
		case !found || better(v, best):
			best, at, found = v, seen+i, true
		}
		seen += n
		return true
	})
	return at, nil
}

// atFlat returns the element at row-major index i.
func (d *Dense[T]) atFlat(i int64) T {
	idx := make([]int64, d.Rank())
	for k := d.Rank() - 1; k >= 0; k-- {
		n := d.layout.Shape[k]
		idx[k] = i % n
		i /= n
	}
	return d.Get(idx...)
}

// reduceAxisTo reduces each line of d along axis with f (given the line's start, stride and
// length in d's backing), into a new row-major array of d's shape without axis. needsOne says
// the reduction has no value for an empty line (a minimum, say): an empty axis is then
// ErrShape.
func reduceAxisTo[T Real, U Element](d *Dense[T], axis int, method string, needsOne bool, f func(data []T, start, stride, n int64) U) (*Dense[U], error) {
	d = d.orEmpty()
	k, err := normalizeAxis(method, axis, d.Rank())
	if err != nil {
		return nil, err
	}
	n, stride := d.layout.Shape[k], d.layout.Strides[k]
	rest := Layout{
		Shape:   d.layout.Shape.removeAxis(k),
		Strides: append(d.layout.Strides[:k:k], d.layout.Strides[k+1:]...),
		Offset:  d.layout.Offset,
	}
	out := New[U](rest.Shape...)
	if n == 0 && needsOne && rest.Size() > 0 {
		return nil, fmt.Errorf("ndarray: %s along axis %d of length 0 (shape %v): %w", method, axis, d.layout.Shape, ErrShape)
	}
	i := 0
	rest.lines(func(start, lineStride, m int64) bool {
		for j, p := int64(0), start; j < m; j, p = j+1, p+lineStride {
			out.data[i] = f(d.data, p, stride, n)
			i++
		}
		return true
	})
	return out, nil
}

// pairwiseSum adds the n elements from start by stride as NumPy's pairwise summation does:
// eight running sums over blocks of up to 128 elements, halves of larger runs added
// recursively. The error grows as log n, not n, and the eight sums run in parallel.
func pairwiseSum[T Real](data []T, start, stride, n int64) T {
	switch {
	case n < 8:
		var s T
		for i, p := int64(0), start; i < n; i, p = i+1, p+stride {
			s += data[p]
		}
		return s
	case n <= 128:
		if stride == 1 {
			return blockSum(data[start : start+n])
		}
		var r [8]T
		for i := range 8 {
			r[i] = data[start+int64(i)*stride]
		}
		i := int64(8)
		for ; i+8 <= n; i += 8 {
			p := start + i*stride
			r[0] += data[p]
			r[1] += data[p+stride]
			r[2] += data[p+2*stride]
			r[3] += data[p+3*stride]
			r[4] += data[p+4*stride]
			r[5] += data[p+5*stride]
			r[6] += data[p+6*stride]
			r[7] += data[p+7*stride]
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += data[start+i*stride]
		}
		return s
	}
	half := n / 2
	half -= half % 8
	return pairwiseSum(data, start, stride, half) + pairwiseSum(data, start+half*stride, stride, n-half)
}

// contiguousSum is pairwiseSum of a contiguous slice, without recursion: blocks of 128 summed
// by blockSum, the block sums combined as a binary counter combines them, into the same tree
// of halves.
func contiguousSum[T Real](x []T) T {
	if f, ok := any(x).([]float64); ok {
		return T(float64Sum(f))
	}
	if len(x) < 8 {
		var s T
		for _, v := range x {
			s += v
		}
		return s
	}
	var stack [64]T
	top := 0
	k := 0
	for ; len(x) >= 128; x, k = x[128:], k+1 {
		s := blockSum(x[:128])
		// block k completes a subtree for every trailing one bit of k
		for c := k; c&1 == 1; c >>= 1 {
			top--
			s = stack[top] + s
		}
		stack[top] = s
		top++
	}
	var s T
	if len(x) >= 8 {
		s = blockSum(x)
	} else {
		for _, v := range x {
			s += v
		}
	}
	for top > 0 {
		top--
		s = stack[top] + s
	}
	return s
}

// float64Sum is contiguousSum of float64s with blocks of 1024 summed by gonum's assembly
// kernel (floats.Sum: SIMD, four running sums of two lanes each), which Go's scalar adds
// cannot match, the block sums combined pairwise as contiguousSum combines them.
func float64Sum(x []float64) float64 {
	const block = 1024
	var stack [64]float64
	top, k := 0, 0
	for ; len(x) >= block; x, k = x[block:], k+1 {
		s := floats.Sum(x[:block])
		for c := k; c&1 == 1; c >>= 1 {
			top--
			s = stack[top] + s
		}
		stack[top] = s
		top++
	}
	s := floats.Sum(x)
	for top > 0 {
		top--
		s = stack[top] + s
	}
	return s
}

// blockSum is pairwiseSum's block of 8 ≤ len(x) ≤ 128 contiguous elements.
func blockSum[T Real](x []T) T {
	r0, r1, r2, r3, r4, r5, r6, r7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
	i := 8
	for ; i+8 <= len(x); i += 8 {
		b := x[i : i+8 : i+8]
		r0 += b[0]
		r1 += b[1]
		r2 += b[2]
		r3 += b[3]
		r4 += b[4]
		r5 += b[5]
		r6 += b[6]
		r7 += b[7]
	}
	s := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
	for ; i < len(x); i++ {
		s += x[i]
	}
	return s
}

// pairwiseSumFloat64 is pairwiseSum of the elements converted to float64.
func pairwiseSumFloat64[T Real](data []T, start, stride, n int64) float64 {
	if n <= 128 {
		var r [8]float64
		i := int64(0)
		for ; i+8 <= n; i += 8 {
			p := start + i*stride
			for k := range int64(8) {
				r[k] += float64(data[p+k*stride])
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += float64(data[start+i*stride])
		}
		return s
	}
	half := n / 2
	half -= half % 8
	return pairwiseSumFloat64(data, start, stride, half) + pairwiseSumFloat64(data, start+half*stride, stride, n-half)
}
