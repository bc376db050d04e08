package ndarray

import (
	"fmt"
	"math"
)

// Real is the constraint satisfied by the element types Go's arithmetic operators work on:
// the integers, float32 and float64 (float16.Num is a struct).
type Real interface {
	Integer | float32 | float64
}

// Full returns a new row-major array of the given shape with every element v, as
// numpy.full. Like New, it panics on a negative dimension or a size that overflows an int.
func Full[T Element](v T, shape ...int64) *Dense[T] {
	d := New[T](shape...)
	for i := range d.data {
		d.data[i] = v
	}
	return d
}

// Arange returns a new vector of the values start, start+step, start+2·step, … up to but not
// including stop, as numpy.arange: ⌈(stop−start)/step⌉ values, none when the range is empty
// in the step's direction. Element i is start + i·step, computed in T. It fails with ErrShape
// when step is zero or, for floats, when the count is not finite.
func Arange[T Real](start, stop, step T) (*Dense[T], error) {
	var n int64
	switch {
	case step == 0:
		return nil, fmt.Errorf("ndarray: Arange(%v, %v, %v): a step of 0: %w", start, stop, step, ErrShape)
	case isFloat[T]():
		count := math.Ceil(float64((stop - start) / step)) // in T, as NumPy computes it
		if math.IsNaN(count) || math.IsInf(count, 0) || count >= math.MaxInt64 {
			return nil, fmt.Errorf("ndarray: Arange(%v, %v, %v): no finite count of values: %w", start, stop, step, ErrShape)
		}
		n = max(0, int64(count))
	case step > 0 && stop > start, step < 0 && stop < start:
		// The distance and the step's magnitude in uint64: exact for every integer type, as
		// the conversion sign-extends and the subtraction wraps.
		dist := uint64(stop) - uint64(start)
		mag := uint64(step)
		if step < 0 {
			dist, mag = uint64(start)-uint64(stop), -mag
		}
		count := dist / mag
		if dist%mag != 0 {
			count++
		}
		if count > math.MaxInt64 {
			return nil, fmt.Errorf("ndarray: Arange(%v, %v, %v): %d values: %w", start, stop, step, count, ErrShape)
		}
		n = int64(count)
	}
	if _, err := (Shape{n}).checkedSize(); err != nil {
		return nil, fmt.Errorf("ndarray: Arange(%v, %v, %v): %w", start, stop, step, err)
	}
	d := New[T](n)
	for i := range d.data {
		d.data[i] = start + T(i)*step
	}
	return d, nil
}

// isFloat reports whether T is float32 or float64.
func isFloat[T Real]() bool {
	var half T = 1
	half /= 2
	return half != 0
}

// FromFunc returns a new row-major array of the given shape whose element at each index is
// f(index), as numpy.fromfunction, calling f once per element in row-major order. The index
// slice is reused between calls: copy it to keep it. Like New, FromFunc panics on a negative
// dimension or a size that overflows an int.
func FromFunc[T Element](f func(index []int64) T, shape ...int64) *Dense[T] {
	d := New[T](shape...)
	index := make([]int64, len(shape))
	for i := range d.data {
		d.data[i] = f(index)
		for k := len(index) - 1; k >= 0; k-- { // the next index, row-major
			if index[k]++; index[k] < shape[k] {
				break
			}
			index[k] = 0
		}
	}
	return d
}

// Concat returns a new row-major array of arrays joined along an existing axis (negative
// counts from the end), as numpy.concatenate: every other dimension must be equal. It fails
// with ErrShape for no arrays, scalars, different ranks or dimensions, and with ErrIndex for
// an axis out of range.
func Concat[T Element](axis int, arrays ...*Dense[T]) (*Dense[T], error) {
	if len(arrays) == 0 {
		return nil, fmt.Errorf("ndarray: Concat: no arrays: %w", ErrShape)
	}
	arrays = emptyIfZero(arrays)
	first := arrays[0].layout.Shape
	rank := len(first)
	if rank == 0 {
		return nil, fmt.Errorf("ndarray: Concat: a scalar has no axis to join along: %w", ErrShape)
	}
	ax, err := normalizeAxis("Concat", axis, rank)
	if err != nil {
		return nil, err
	}
	shape := first.Clone()
	shape[ax] = 0
	for i, a := range arrays {
		s := a.layout.Shape
		for k := range s {
			if len(s) != rank || k != ax && s[k] != first[k] {
				return nil, fmt.Errorf("ndarray: Concat along axis %d: array %d has shape %v, array 0 %v: %w", ax, i, s, first, ErrShape)
			}
		}
		if shape[ax] += s[ax]; shape[ax] < 0 {
			return nil, fmt.Errorf("ndarray: Concat along axis %d: the joined dimension overflows: %w", ax, ErrShape)
		}
	}
	if _, err := shape.checkedSize(); err != nil {
		return nil, fmt.Errorf("ndarray: Concat: %w", err)
	}
	out := New[T](shape...)
	at := int64(0)
	for _, a := range arrays {
		l := out.layout.Clone()
		l.Shape[ax] = a.layout.Shape[ax]
		l.Offset = at * l.Strides[ax]
		if err := Copy(out.view(l), a); err != nil {
			return nil, err // unreachable: the shapes were checked
		}
		at += a.layout.Shape[ax]
	}
	return out, nil
}

// Stack returns a new row-major array of arrays, all of one shape, joined along a new axis at
// position axis (0 to rank; negative counts from the end, -1 being after the last), as
// numpy.stack. It fails with ErrShape for no arrays or different shapes, and with ErrIndex for
// an axis out of range.
func Stack[T Element](axis int, arrays ...*Dense[T]) (*Dense[T], error) {
	if len(arrays) == 0 {
		return nil, fmt.Errorf("ndarray: Stack: no arrays: %w", ErrShape)
	}
	arrays = emptyIfZero(arrays)
	first := arrays[0].layout.Shape
	ax, err := normalizeAxis("Stack", axis, len(first)+1)
	if err != nil {
		return nil, err
	}
	expanded := make([]*Dense[T], len(arrays))
	for i, a := range arrays {
		if !a.layout.Shape.Equal(first) {
			return nil, fmt.Errorf("ndarray: Stack: array %d has shape %v, array 0 %v: %w", i, a.layout.Shape, first, ErrShape)
		}
		l := a.layout.Clone()
		l.Shape = append(l.Shape[:ax:ax], append(Shape{1}, l.Shape[ax:]...)...)
		l.Strides = append(l.Strides[:ax:ax], append([]int64{0}, l.Strides[ax:]...)...)
		expanded[i] = a.view(l)
	}
	return Concat(ax, expanded...)
}

// normalizeAxis maps axis, negative counting from the end, into [0, n).
func normalizeAxis(method string, axis, n int) (int, error) {
	if axis < -n || axis >= n {
		return 0, fmt.Errorf("ndarray: %s: axis %d out of range for %d axes: %w", method, axis, n, ErrIndex)
	}
	if axis < 0 {
		axis += n
	}
	return axis, nil
}

// emptyIfZero returns arrays with every zero Dense replaced by the empty vector it stands for.
func emptyIfZero[T Element](arrays []*Dense[T]) []*Dense[T] {
	out := make([]*Dense[T], len(arrays))
	for i, a := range arrays {
		out[i] = a.orEmpty()
	}
	return out
}
