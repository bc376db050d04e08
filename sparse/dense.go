package sparse

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// ErrTooLarge reports a sparse array whose dense form holds more elements than a limit
// allows: a sparse shape may claim far more than its stored values, and expanding it is work
// and memory in proportion to the shape. Errors that wrap it also wrap limits.ErrExceeded.
var ErrTooLarge = errors.New("sparse: the dense form exceeds the limit")

// CheckDense returns an error wrapping ErrTooLarge, naming the shape and the limit, when the
// dense form of an array of that shape holds more than max elements; max ≤ 0 means the
// default, limits.Default().MaxDenseElements. The error is a *limits.ExceededError of
// MaxDenseElements (what the dense form needs, -1 for more than an int64 counts). Call it
// before expanding input-derived sparse arrays into a dense form, streamed (WriteTo, Values)
// or allocated.
func CheckDense(shape ndarray.Shape, max int64) error {
	if max <= 0 {
		max = limits.Default().MaxDenseElements
	}
	n := DenseElements(shape)
	if n <= max && n >= 0 {
		return nil
	}
	count := fmt.Sprintf("%d elements", n)
	if n < 0 {
		count = "more elements than an int64 counts"
	}
	return &limits.ExceededError{Field: "MaxDenseElements", Needs: n, Limit: max, Also: ErrTooLarge,
		Msg: fmt.Sprintf("sparse: shape %v has %s, above the limit of %d for a dense form: %v: %v", shape, count, max, ErrTooLarge, limits.ErrExceeded)}
}

// DenseElements returns the elements of the dense form of shape, or -1 for an unknown
// dimension or more than an int64 counts (where Shape.Size would wrap around).
func DenseElements(shape ndarray.Shape) int64 {
	if slices.ContainsFunc(shape, func(d int64) bool { return d < 0 }) {
		return -1
	}
	if slices.Contains(shape, 0) {
		return 0
	}
	n := uint64(1)
	for _, d := range shape {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return -1
		}
		n = lo
	}
	return int64(n)
}

// checkLines refuses a CSR (major 0) or CSC (major 1) form of a matrix whose pointers — one
// per row or column, plus one — would exceed the default limit on dense forms: like a dense
// form, their number follows the shape, not the stored values. Other ranks are left to the
// conversion, which refuses them.
func checkLines(shape ndarray.Shape, major int) error {
	if len(shape) != 2 {
		return nil
	}
	if max := limits.Default().MaxDenseElements; shape[major] >= max {
		return fmt.Errorf("sparse: shape %v needs %d pointers, above the limit of %d: %w: %w",
			shape, shape[major]+1, max, ErrTooLarge, limits.ErrExceeded)
	}
	return nil
}
