package ndarray

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/float16"
)

// AsType returns a new row-major array of d's shape holding d's elements converted to U, as
// NumPy's astype does where NumPy defines the result, and by these rules everywhere:
//
//   - integer to integer: modulo 2^bits, as Go's conversions (int16 300 is int8 44, int8 -1
//     is uint8 255);
//   - float to integer: truncated toward zero; NaN is 0; values beyond U's range, infinities
//     included, saturate to its minimum or maximum (NumPy leaves these undefined);
//   - to a float: the nearest representable value, ties to even; beyond U's range ±Inf; NaN
//     stays NaN;
//   - bool to a number: 1 or 0; a number to bool: whether it is not zero (NaN is true);
//   - to string: the shortest decimal that reads back as the same value, in strconv's 'g'
//     form ("1", "0.1", "1e+21", "NaN"; a float16 its own shortest), "true" or "false";
//   - from string: parsed as U by strconv (ParseInt, ParseUint, ParseFloat, ParseBool); a
//     string that does not parse, or an integer beyond U's range, fails with an error
//     wrapping ErrDType that names the element's index (a float beyond range is ±Inf).
//
// The result never shares memory with d, even when U is T.
func AsType[U, T Element](d *Dense[T]) (*Dense[U], error) {
	d = d.orEmpty()
	out := &Dense[U]{data: make([]U, d.Size()), layout: RowMajor(d.layout.Shape)}
	if same, ok := any(d).(*Dense[U]); ok {
		same.CopyTo(out.data) // sizes match: cannot fail
		return out, nil
	}
	var buf lanes
	done := 0
	convert := func(src []T) error {
		buf.load(src)
		if err := buf.store(out.data[done : done+len(src)]); err != nil {
			return fmt.Errorf("ndarray: AsType %v to %v: element %d: %w", DTypeOf[T](), DTypeOf[U](), done+buf.failed, err)
		}
		done += len(src)
		return nil
	}
	feed := func(run []T) error {
		for len(run) > 0 {
			n := min(len(run), chunkLen)
			if err := convert(run[:n]); err != nil {
				return err
			}
			run = run[n:]
		}
		return nil
	}
	if values, ok := d.Contiguous(); ok && d.layout.IsRowMajor() {
		if err := feed(values); err != nil {
			return nil, err
		}
		return out, nil
	}
	// Row-major order through the array's lines: runs of the backing where the last stride
	// is 1, gathered into chunks otherwise.
	var err error
	chunk := make([]T, 0, chunkLen)
	d.layout.lines(func(start, stride, n int64) bool {
		if stride == 1 {
			if err = feed(chunk); err == nil {
				chunk = chunk[:0]
				err = feed(d.data[start : start+n])
			}
			return err == nil
		}
		for p := start; n > 0; n-- {
			if chunk = append(chunk, d.data[p]); len(chunk) == chunkLen {
				if err = convert(chunk); err != nil {
					return false
				}
				chunk = chunk[:0]
			}
			p += stride
		}
		return true
	})
	if err == nil {
		err = convert(chunk)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ConvertTo is AsType for an array whose element type is known only at run time: a new
// row-major *Dense of the element type to.
func ConvertTo(a Array, to DType) (Array, error) {
	switch d := a.(type) {
	case *Dense[int8]:
		return convertTo(d, to)
	case *Dense[int16]:
		return convertTo(d, to)
	case *Dense[int32]:
		return convertTo(d, to)
	case *Dense[int64]:
		return convertTo(d, to)
	case *Dense[uint8]:
		return convertTo(d, to)
	case *Dense[uint16]:
		return convertTo(d, to)
	case *Dense[uint32]:
		return convertTo(d, to)
	case *Dense[uint64]:
		return convertTo(d, to)
	case *Dense[float16.Num]:
		return convertTo(d, to)
	case *Dense[float32]:
		return convertTo(d, to)
	case *Dense[float64]:
		return convertTo(d, to)
	case *Dense[bool]:
		return convertTo(d, to)
	case *Dense[string]:
		return convertTo(d, to)
	}
	return nil, fmt.Errorf("ndarray: ConvertTo: %T is not a *Dense: %w", a, ErrDType)
}

// convertTo converts d to the element type to.
func convertTo[T Element](d *Dense[T], to DType) (Array, error) {
	switch to {
	case Int8:
		return AsType[int8](d)
	case Int16:
		return AsType[int16](d)
	case Int32:
		return AsType[int32](d)
	case Int64:
		return AsType[int64](d)
	case Uint8:
		return AsType[uint8](d)
	case Uint16:
		return AsType[uint16](d)
	case Uint32:
		return AsType[uint32](d)
	case Uint64:
		return AsType[uint64](d)
	case Float16:
		return AsType[float16.Num](d)
	case Float32:
		return AsType[float32](d)
	case Float64:
		return AsType[float64](d)
	case Bool:
		return AsType[bool](d)
	case String:
		return AsType[string](d)
	}
	return nil, fmt.Errorf("ndarray: ConvertTo: %v: %w", to, ErrDType)
}

// chunkLen is how many elements AsType converts at a time through its lanes.
const chunkLen = 512

// lane says which slice of lanes holds the elements on their way.
type lane uint8

const (
	laneSigned   lane = iota // i: signed integers
	laneUnsigned             // u: unsigned integers
	laneBool                 // u: 0 or 1
	laneFloat                // f: floats, exact; bits says which
	laneString               // s
)

// lanes carries a chunk of elements between element types: every element type loads into the
// one lane that holds its values exactly, and stores from any lane by AsType's rules. The
// two type switches, load's and store's, are the only per-type code of the conversion.
type lanes struct {
	lane   lane
	bits   int // laneFloat: 16, 32 or 64, the width the values came in
	i      []int64
	u      []uint64
	f      []float64
	s      []string
	failed int // store's error: the index in the chunk of the element that failed
}

// load fills the lane of src's element type with src's values.
func (b *lanes) load(src any) {
	switch s := src.(type) {
	case []int8:
		loadInto(b, &b.i, laneSigned, s)
	case []int16:
		loadInto(b, &b.i, laneSigned, s)
	case []int32:
		loadInto(b, &b.i, laneSigned, s)
	case []int64:
		loadInto(b, &b.i, laneSigned, s)
	case []uint8:
		loadInto(b, &b.u, laneUnsigned, s)
	case []uint16:
		loadInto(b, &b.u, laneUnsigned, s)
	case []uint32:
		loadInto(b, &b.u, laneUnsigned, s)
	case []uint64:
		loadInto(b, &b.u, laneUnsigned, s)
	case []float32:
		loadInto(b, &b.f, laneFloat, s)
		b.bits = 32
	case []float64:
		loadInto(b, &b.f, laneFloat, s)
		b.bits = 64
	case []float16.Num:
		f := resize(&b.f, len(s))
		b.lane, b.bits = laneFloat, 16
		for k, v := range s {
			f[k] = HalfToFloat64(v)
		}
	case []bool:
		u := resize(&b.u, len(s))
		b.lane = laneBool
		for k, v := range s {
			u[k] = 0
			if v {
				u[k] = 1
			}
		}
	case []string:
		b.lane = laneString
		copy(resize(&b.s, len(s)), s)
	}
}

// resize sets *lane to n elements, reusing its memory, and returns it.
func resize[L any](lane *[]L, n int) []L {
	if cap(*lane) < n {
		*lane = make([]L, n, max(n, chunkLen))
	}
	*lane = (*lane)[:n]
	return *lane
}

// loadInto converts src into lane *dst, which Go's conversions do exactly.
func loadInto[L int64 | uint64 | float64, T Integer | float32 | float64](b *lanes, dst *[]L, l lane, src []T) {
	b.lane = l
	out := resize(dst, len(src))
	for k, v := range src {
		out[k] = L(v)
	}
}

// store converts the loaded lane into dst, which is as long as the chunk.
func (b *lanes) store(dst any) error {
	switch d := dst.(type) {
	case []int8:
		return storeInteger(b, d)
	case []int16:
		return storeInteger(b, d)
	case []int32:
		return storeInteger(b, d)
	case []int64:
		return storeInteger(b, d)
	case []uint8:
		return storeInteger(b, d)
	case []uint16:
		return storeInteger(b, d)
	case []uint32:
		return storeInteger(b, d)
	case []uint64:
		return storeInteger(b, d)
	case []float32:
		return storeFloat(b, d)
	case []float64:
		return storeFloat(b, d)
	case []float16.Num:
		return storeHalf(b, d)
	case []bool:
		return storeBool(b, d)
	case []string:
		storeString(b, d)
	}
	return nil
}

// storeInteger stores the lane into integers: integers wrap, floats truncate and saturate,
// strings parse.
func storeInteger[U Integer](b *lanes, dst []U) error {
	switch b.lane {
	case laneSigned:
		for k, v := range b.i {
			dst[k] = U(v)
		}
	case laneUnsigned, laneBool:
		for k, v := range b.u {
			dst[k] = U(v)
		}
	case laneFloat:
		lo, hi := integerRange[U]()
		if lo < 0 {
			for k, v := range b.f {
				if v >= lo && v < hi { // Go's conversion truncates toward zero
					dst[k] = U(int64(v))
				} else {
					dst[k] = saturate[U](v, lo, hi)
				}
			}
		} else {
			for k, v := range b.f {
				if v >= lo && v < hi {
					dst[k] = U(uint64(v))
				} else {
					dst[k] = saturate[U](v, lo, hi)
				}
			}
		}
	case laneString:
		signed := isSigned[U]()
		bits := 8 * int(unsafe.Sizeof(U(0)))
		for k, s := range b.s {
			var err error
			if signed {
				var x int64
				x, err = strconv.ParseInt(s, 10, bits)
				dst[k] = U(x)
			} else {
				var x uint64
				x, err = strconv.ParseUint(s, 10, bits)
				dst[k] = U(x)
			}
			if err != nil {
				b.failed = k
				return fmt.Errorf("%q: %w", s, ErrDType)
			}
		}
	}
	return nil
}

// isSigned reports whether the integer type U is signed.
func isSigned[U Integer]() bool { return U(0)-1 < 0 }

// integerRange returns the integers of U as the float range [lo, hi): both are powers of two
// (or zero), so exactly representable.
func integerRange[U Integer]() (lo, hi float64) {
	bits := 8 * int(unsafe.Sizeof(U(0)))
	if isSigned[U]() {
		return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	}
	return 0, math.Ldexp(1, bits)
}

// saturate converts v to U: truncated toward zero, NaN to 0, beyond [lo, hi) to U's minimum
// or maximum.
func saturate[U Integer](v, lo, hi float64) U {
	t := math.Trunc(v)
	switch {
	case t != t: // NaN
		return 0
	case t >= hi:
		return ^minInteger[U]() // all ones but the sign bit, or all ones
	case t < lo:
		return minInteger[U]()
	case lo < 0:
		return U(int64(t))
	}
	return U(uint64(t))
}

// minInteger returns the smallest value of U: 0, or -2^(bits-1).
func minInteger[U Integer]() U {
	if !isSigned[U]() {
		return 0
	}
	var one U = 1
	return one << (8*unsafe.Sizeof(one) - 1)
}

// storeFloat stores the lane into float32 or float64, rounding to nearest.
func storeFloat[U float32 | float64](b *lanes, dst []U) error {
	switch b.lane {
	case laneSigned:
		for k, v := range b.i {
			dst[k] = U(v)
		}
	case laneUnsigned, laneBool:
		for k, v := range b.u {
			dst[k] = U(v)
		}
	case laneFloat:
		for k, v := range b.f {
			dst[k] = U(v)
		}
	case laneString:
		bits := 8 * int(unsafe.Sizeof(U(0)))
		for k, s := range b.s {
			x, err := parseFloat(s, bits)
			if err != nil {
				b.failed = k
				return err
			}
			dst[k] = U(x)
		}
	}
	return nil
}

// parseFloat parses s as a float of the given width; beyond range is ±Inf, not an error.
func parseFloat(s string, bits int) (float64, error) {
	x, err := strconv.ParseFloat(s, bits)
	if err != nil && !math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q: %w", s, ErrDType)
	}
	return x, nil
}

// storeHalf stores the lane into float16, rounding to nearest. An integer beyond 2^53 is
// beyond float16's range either way, so going through float64 rounds once.
func storeHalf(b *lanes, dst []float16.Num) error {
	switch b.lane {
	case laneSigned:
		for k, v := range b.i {
			dst[k] = halfFromFloat64(float64(v))
		}
	case laneUnsigned, laneBool:
		for k, v := range b.u {
			dst[k] = halfFromFloat64(float64(v))
		}
	case laneFloat:
		for k, v := range b.f {
			dst[k] = halfFromFloat64(v)
		}
	case laneString:
		for k, s := range b.s {
			x, err := parseFloat(s, 64)
			if err != nil {
				b.failed = k
				return err
			}
			dst[k] = halfFromFloat64(x)
		}
	}
	return nil
}

// storeBool stores the lane into bools: whether a number is not zero, or a parsed string.
func storeBool(b *lanes, dst []bool) error {
	switch b.lane {
	case laneSigned:
		for k, v := range b.i {
			dst[k] = v != 0
		}
	case laneUnsigned, laneBool:
		for k, v := range b.u {
			dst[k] = v != 0
		}
	case laneFloat:
		for k, v := range b.f {
			dst[k] = v != 0 // NaN != 0
		}
	case laneString:
		for k, s := range b.s {
			x, err := strconv.ParseBool(s)
			if err != nil {
				b.failed = k
				return fmt.Errorf("%q: %w", s, ErrDType)
			}
			dst[k] = x
		}
	}
	return nil
}

// storeString formats the lane as strings.
func storeString(b *lanes, dst []string) {
	switch b.lane {
	case laneSigned:
		for k, v := range b.i {
			dst[k] = strconv.FormatInt(v, 10)
		}
	case laneUnsigned:
		for k, v := range b.u {
			dst[k] = strconv.FormatUint(v, 10)
		}
	case laneBool:
		for k, v := range b.u {
			dst[k] = strconv.FormatBool(v != 0)
		}
	case laneFloat:
		for k, v := range b.f {
			dst[k] = formatFloat(v, 'g', -1, b.bits)
		}
	case laneString:
		copy(dst, b.s)
	}
}
