package ndarray

import (
	"fmt"
	"math"
	"unsafe"
)

// Zeros returns a new row-major array of the given shape, every element zero, as numpy.zeros.
// Like New, it panics on a negative dimension or a size that overflows an int.
func Zeros[T Element](shape ...int64) *Dense[T] { return New[T](shape...) }

// Ones returns a new row-major array of the given shape, every element one, as numpy.ones.
func Ones[T Real](shape ...int64) *Dense[T] { return Full(T(1), shape...) }

// Eye returns a new n×n array with ones on the diagonal and zeros elsewhere, as numpy.eye(n).
func Eye[T Real](n int64) *Dense[T] {
	d := New[T](n, n)
	for i := range n {
		d.data[i*n+i] = 1
	}
	return d
}

// Linspace returns num evenly spaced values from start to stop, stop included when endpoint
// is set, as numpy.linspace: value i is start + i·step, the last one stop exactly. It fails
// with ErrShape for a negative num.
func Linspace[T float32 | float64](start, stop T, num int64, endpoint bool) (*Dense[T], error) {
	if num < 0 {
		return nil, fmt.Errorf("ndarray: Linspace of %d values: %w", num, ErrShape)
	}
	d := New[T](num)
	div := num
	if endpoint {
		div = num - 1
	}
	lo, hi := float64(start), float64(stop)
	step := (hi - lo) / float64(max(div, 1))
	for i := range num {
		d.data[i] = T(lo + float64(i)*step)
	}
	if endpoint && num > 1 {
		d.data[num-1] = stop
	}
	return d, nil
}

// BroadcastShapes returns the shape NumPy broadcasts a and b to: aligned at their last
// dimensions, each pair equal or one of them 1. It fails with ErrShape otherwise.
func BroadcastShapes(a, b Shape) (Shape, error) {
	n := max(len(a), len(b))
	out := make(Shape, n)
	for i := range n {
		da, db := int64(1), int64(1)
		if k := len(a) - n + i; k >= 0 {
			da = a[k]
		}
		if k := len(b) - n + i; k >= 0 {
			db = b[k]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("ndarray: shapes %v and %v do not broadcast: %w", a, b, ErrShape)
		}
	}
	return out, nil
}

// BroadcastTo returns a read-only view of d as an array of the given shape, as
// numpy.broadcast_to: a dimension of size 1 (or a missing leading one) repeats with stride 0.
// It fails with ErrShape when d does not broadcast to shape.
func BroadcastTo[T Element](d *Dense[T], shape ...int64) (*Dense[T], error) {
	d = d.orEmpty()
	l, err := broadcastLayout(d.layout, shape)
	if err != nil {
		return nil, err
	}
	v := d.view(l)
	v.readOnly = true
	return v, nil
}

// broadcastLayout returns l viewed as shape, or an ErrShape error.
func broadcastLayout(l Layout, shape Shape) (Layout, error) {
	if len(shape) < len(l.Shape) {
		return Layout{}, fmt.Errorf("ndarray: shape %v does not broadcast to %v: %w", l.Shape, shape, ErrShape)
	}
	out := Layout{Shape: shape.Clone(), Strides: make([]int64, len(shape)), Offset: l.Offset}
	lead := len(shape) - len(l.Shape)
	for i := range l.Shape {
		switch {
		case l.Shape[i] == shape[lead+i]:
			out.Strides[lead+i] = l.Strides[i]
		case l.Shape[i] == 1:
			// stride 0: repeated
		default:
			return Layout{}, fmt.Errorf("ndarray: shape %v does not broadcast to %v: %w", l.Shape, shape, ErrShape)
		}
	}
	return out, nil
}

// Add returns a + b elementwise, the shapes broadcast as NumPy broadcasts them, in a new
// row-major array. It fails with ErrShape when the shapes do not broadcast.
func Add[T Real](a, b *Dense[T]) (*Dense[T], error) {
	return elementwise(a, b, "Add", opAdd)
}

// Sub returns a - b elementwise, broadcast, in a new array (see Add).
func Sub[T Real](a, b *Dense[T]) (*Dense[T], error) {
	return elementwise(a, b, "Sub", opSub)
}

// Mul returns a * b elementwise, broadcast, in a new array (see Add).
func Mul[T Real](a, b *Dense[T]) (*Dense[T], error) {
	return elementwise(a, b, "Mul", opMul)
}

// Div returns a / b elementwise, broadcast, in a new array (see Add). Integers divide as Go's
// do, truncated toward zero (NumPy's / gives floats: convert with AsType first for that); an
// integer division by zero fails with ErrDivideByZero before anything is computed.
func Div[T Real](a, b *Dense[T]) (*Dense[T], error) {
	if err := checkDivisor("Div", b); err != nil {
		return nil, err
	}
	return elementwise(a, b, "Div", opDiv)
}

// AddScalar returns a + s for every element, in a new array.
func AddScalar[T Real](a *Dense[T], s T) *Dense[T] { return Map(a, func(x T) T { return x + s }) }

// SubScalar returns a - s for every element, in a new array.
func SubScalar[T Real](a *Dense[T], s T) *Dense[T] { return Map(a, func(x T) T { return x - s }) }

// MulScalar returns a * s for every element, in a new array.
func MulScalar[T Real](a *Dense[T], s T) *Dense[T] { return Map(a, func(x T) T { return x * s }) }

// DivScalar returns a / s for every element, in a new array; an integer s of zero fails with
// ErrDivideByZero.
func DivScalar[T Real](a *Dense[T], s T) (*Dense[T], error) {
	if s == 0 && !isFloat[T]() {
		return nil, fmt.Errorf("ndarray: DivScalar by integer zero: %w", ErrDivideByZero)
	}
	return Map(a, func(x T) T { return x / s }), nil
}

// AddInPlace adds b, broadcast to dst's shape, to dst: dst += b. It fails with ErrShape when b
// does not broadcast to dst's shape, and panics when dst is read-only.
func AddInPlace[T Real](dst, b *Dense[T]) error {
	return inPlace(dst, b, "AddInPlace", opAdd)
}

// SubInPlace subtracts b, broadcast, from dst: dst -= b (see AddInPlace).
func SubInPlace[T Real](dst, b *Dense[T]) error {
	return inPlace(dst, b, "SubInPlace", opSub)
}

// MulInPlace multiplies dst by b, broadcast: dst *= b (see AddInPlace).
func MulInPlace[T Real](dst, b *Dense[T]) error {
	return inPlace(dst, b, "MulInPlace", opMul)
}

// DivInPlace divides dst by b, broadcast: dst /= b (see AddInPlace and Div).
func DivInPlace[T Real](dst, b *Dense[T]) error {
	if err := checkDivisor("DivInPlace", b); err != nil {
		return err
	}
	return inPlace(dst, b, "DivInPlace", opDiv)
}

// checkDivisor returns ErrDivideByZero when T is an integer type and b holds a zero.
func checkDivisor[T Real](method string, b *Dense[T]) error {
	if isFloat[T]() {
		return nil
	}
	i := int64(0)
	for v := range b.Values() {
		if v == 0 {
			return fmt.Errorf("ndarray: %s by integer zero at element %d: %w", method, i, ErrDivideByZero)
		}
		i++
	}
	return nil
}

// arith is an elementwise arithmetic operation.
type arith uint8

const (
	opAdd arith = iota
	opSub
	opMul
	opDiv
)

// elementwise applies op to the elements of a and b broadcast to one shape, into a new array.
func elementwise[T Real](a, b *Dense[T], method string, op arith) (*Dense[T], error) {
	a, b = a.orEmpty(), b.orEmpty()
	shape, err := BroadcastShapes(a.layout.Shape, b.layout.Shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	out := New[T](shape...)
	la, _ := broadcastLayout(a.layout, shape) // both broadcast to shape by construction
	lb, _ := broadcastLayout(b.layout, shape)
	i := int64(0)
	linePairs(la, lb, func(pa, sa, pb, sb, n int64) bool {
		arithLine(op, n, out.data, i, 1, a.data, pa, sa, b.data, pb, sb)
		i += n
		return true
	})
	return out, nil
}

// inPlace applies op to each element of dst and the element of b broadcast to dst's shape,
// into dst.
func inPlace[T Real](dst, b *Dense[T], method string, op arith) error {
	dst, b = dst.orEmpty(), b.orEmpty()
	if dst.readOnly {
		dst.readOnlyPanic(method)
	}
	if _, err := broadcastLayout(b.layout, dst.layout.Shape); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if dst.SharesMemory(b) {
		b = b.Clone() // dst += dst[::-1] must read b before it is overwritten
	}
	lb, _ := broadcastLayout(b.layout, dst.layout.Shape)
	linePairs(dst.layout, lb, func(pd, sd, pb, sb int64, n int64) bool {
		arithLine(op, n, dst.data, pd, sd, dst.data, pd, sd, b.data, pb, sb)
		return true
	})
	return nil
}

// arithLine sets out[po + j·so] = x[pa + j·sa] op y[pb + j·sb] for j < n, with loops the
// compiler keeps tight for the usual strides (out and x contiguous: y contiguous, broadcast
// with stride 0, or strided).
func arithLine[T Real](op arith, n int64, out []T, po, so int64, x []T, pa, sa int64, y []T, pb, sb int64) {
	if so == 1 && sa == 1 && sb == 1 {
		o, xs, ys := out[po:po+n], x[pa:pa+n], y[pb:pb+n]
		switch op {
		case opAdd:
			for j := range o {
				o[j] = xs[j] + ys[j]
			}
		case opSub:
			for j := range o {
				o[j] = xs[j] - ys[j]
			}
		case opMul:
			for j := range o {
				o[j] = xs[j] * ys[j]
			}
		case opDiv:
			for j := range o {
				o[j] = xs[j] / ys[j]
			}
		}
		return
	}
	if so == 1 && sa == 1 {
		o, xs := out[po:po+n], x[pa:pa+n]
		switch op {
		case opAdd:
			for j := range o {
				o[j] = xs[j] + y[pb+int64(j)*sb]
			}
		case opSub:
			for j := range o {
				o[j] = xs[j] - y[pb+int64(j)*sb]
			}
		case opMul:
			for j := range o {
				o[j] = xs[j] * y[pb+int64(j)*sb]
			}
		case opDiv:
			for j := range o {
				o[j] = xs[j] / y[pb+int64(j)*sb]
			}
		}
		return
	}
	for j, px, py := int64(0), pa, pb; j < n; j, po, px, py = j+1, po+so, px+sa, py+sb {
		u, v := x[px], y[py]
		switch op {
		case opAdd:
			out[po] = u + v
		case opSub:
			out[po] = u - v
		case opMul:
			out[po] = u * v
		case opDiv:
			out[po] = u / v
		}
	}
}

// Map returns f applied to every element of d, in a new row-major array of d's shape.
func Map[T, U Element](d *Dense[T], f func(T) U) *Dense[U] {
	d = d.orEmpty()
	out := New[U](d.layout.Shape...)
	i := 0
	d.layout.lines(func(start, stride, n int64) bool {
		for j, p := int64(0), start; j < n; j, p = j+1, p+stride {
			out.data[i] = f(d.data[p])
			i++
		}
		return true
	})
	return out
}

// Apply sets every element of d to f of it, in place. It panics when d is read-only.
func Apply[T Element](d *Dense[T], f func(T) T) {
	d = d.orEmpty()
	if d.readOnly {
		d.readOnlyPanic("Apply")
	}
	d.layout.lines(func(start, stride, n int64) bool {
		for j, p := int64(0), start; j < n; j, p = j+1, p+stride {
			d.data[p] = f(d.data[p])
		}
		return true
	})
}

// AllClose reports whether a and b, broadcast to one shape, are equal within tolerance, as
// numpy.allclose: |a - b| ≤ atol + rtol·|b| for every pair (NumPy's defaults are rtol 1e-5,
// atol 1e-8). A NaN is close to nothing; infinities are close to themselves. It fails with
// ErrShape when the shapes do not broadcast.
func AllClose[T Real](a, b *Dense[T], rtol, atol float64) (bool, error) {
	a, b = a.orEmpty(), b.orEmpty()
	shape, err := BroadcastShapes(a.layout.Shape, b.layout.Shape)
	if err != nil {
		return false, fmt.Errorf("AllClose: %w", err)
	}
	la, _ := broadcastLayout(a.layout, shape)
	lb, _ := broadcastLayout(b.layout, shape)
	allClose := true
	pairs(la, lb, func(pa, pb int64) bool {
		x, y := float64(a.data[pa]), float64(b.data[pb])
		switch {
		case x == y: // infinities of one sign included
		case math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsNaN(y):
			allClose = false
		default:
			allClose = math.Abs(x-y) <= atol+rtol*math.Abs(y)
		}
		return allClose
	})
	return allClose, nil
}

// AsTypeChecked returns d's elements converted to U, as AsType converts them, but fails with
// an error wrapping ErrDType that names the first element U cannot hold: a NaN or an infinity
// into an integer type, a value beyond U's range (an integer that would wrap, a float that
// would saturate, a finite float64 beyond float32's range). Fractions are truncated toward
// zero, as NumPy's astype truncates them.
func AsTypeChecked[U, T Real](d *Dense[T]) (*Dense[U], error) {
	d = d.orEmpty()
	i := int64(0)
	for v := range d.Values() {
		if !fits[U](v) {
			return nil, fmt.Errorf("ndarray: AsTypeChecked %v to %v: element %d (%v) does not fit: %w", DTypeOf[T](), DTypeOf[U](), i, v, ErrDType)
		}
		i++
	}
	return AsType[U](d)
}

// fits reports whether U holds v (truncated toward zero, for a float into an integer).
func fits[U, T Real](v T) bool {
	if isFloat[T]() {
		f := float64(v)
		if isFloat[U]() {
			// a finite value that becomes infinite overflowed (float64 to float32)
			return math.IsNaN(f) || math.IsInf(f, 0) || !math.IsInf(float64(U(f)), 0)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		lo, hi := realIntegerRange[U]()
		t := math.Trunc(f)
		return t >= lo && t < hi
	}
	if isFloat[U]() {
		return true // every integer has a nearest float
	}
	bits := 8 * unsafe.Sizeof(U(0))
	uSigned := U(0)-1 < 0
	if T(0)-1 < 0 { // a signed integer
		x := int64(v)
		switch {
		case uSigned:
			return bits == 64 || (x >= -(1<<(bits-1)) && x < 1<<(bits-1))
		case x < 0:
			return false
		}
		return bits == 64 || uint64(x) < 1<<bits
	}
	y := uint64(v)
	if uSigned {
		return y < 1<<(bits-1)
	}
	return bits == 64 || y < 1<<bits
}

// realIntegerRange returns the integers of U, an integer type, as the float range [lo, hi).
func realIntegerRange[U Real]() (lo, hi float64) {
	bits := 8 * int(unsafe.Sizeof(U(0)))
	if U(0)-1 < 0 {
		return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	}
	return 0, math.Ldexp(1, bits)
}
