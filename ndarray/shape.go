package ndarray

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Unknown is the dimension size that marks a ragged or not-yet-known dimension. Dense
// arrays never have one; the ragged package and shape inference in Reshape use it.
const Unknown = -1

// Shape is the size of each dimension of an array, outermost first. A nil or empty Shape is
// the shape of a scalar (rank 0, one element).
type Shape []int64

// Rank returns the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Size returns the number of elements: the product of the dimensions, 1 for a scalar, and -1
// when a dimension is Unknown. Size assumes a valid shape (see Validate); it does not check
// for overflow.
func (s Shape) Size() int64 {
	n := int64(1)
	for _, d := range s {
		if d == Unknown {
			return -1
		}
		n *= d
	}
	return n
}

// IsKnown reports whether every dimension has a known size (none is Unknown).
func (s Shape) IsKnown() bool {
	for _, d := range s {
		if d == Unknown {
			return false
		}
	}
	return true
}

// Equal reports whether s and o have the same rank and the same dimensions. A nil Shape equals
// an empty one.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of s that shares no memory with it; the copy of a scalar shape is an
// empty, non-nil Shape.
func (s Shape) Clone() Shape {
	c := make(Shape, len(s))
	copy(c, s)
	return c
}

// String formats s the way NumPy does: "(2, 3)", "(7,)" and "()" for a scalar. Unknown
// dimensions print as -1.
func (s Shape) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(s) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// Validate reports whether s is a valid shape: every dimension is zero or more, or Unknown,
// and the product of the known dimensions fits in an int on this platform (so an array of
// that many elements could be indexed). The error wraps ErrShape.
func (s Shape) Validate() error {
	_, err := s.checkedSize()
	return err
}

// checkedSize returns the product of the known dimensions, or an error wrapping ErrShape when
// a dimension is negative (other than Unknown) or the product, or a dimension, overflows an int.
func (s Shape) checkedSize() (int64, error) {
	empty := false
	for i, d := range s {
		switch {
		case d == Unknown:
		case d < 0:
			return 0, fmt.Errorf("ndarray: shape %v: dimension %d is %d: %w", s, i, d, ErrShape)
		case uint64(d) > math.MaxInt:
			return 0, fmt.Errorf("ndarray: shape %v: dimension %d overflows int: %w", s, i, ErrShape)
		case d == 0:
			empty = true
		}
	}
	if empty {
		return 0, nil
	}
	n := uint64(1)
	for _, d := range s {
		if d == Unknown {
			continue
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt {
			return 0, fmt.Errorf("ndarray: shape %v: size overflows int: %w", s, ErrShape)
		}
		n = lo
	}
	return int64(n), nil
}
