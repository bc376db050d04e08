package ndarray

import "errors"

// Sentinel errors. Every error ndarray returns wraps one of them, so callers can test the
// cause with errors.Is; the message adds what was wrong and where.
var (
	// ErrShape reports an invalid shape (a negative dimension, a size that overflows) or
	// two shapes, or a shape and a length, that do not match.
	ErrShape = errors.New("invalid or mismatched shape")
	// ErrIndex reports an index outside its dimension, or a malformed index list in Slice,
	// Permute or Reshape.
	ErrIndex = errors.New("index out of range")
	// ErrLayout reports strides or an offset that reach outside the backing data.
	ErrLayout = errors.New("invalid layout")
	// ErrDType reports an unknown or unsupported element type, or a value a type cannot hold
	// (AsTypeChecked).
	ErrDType = errors.New("unsupported dtype")
	// ErrDivideByZero reports an integer division by zero (Div, DivScalar, DivInPlace).
	ErrDivideByZero = errors.New("integer division by zero")
)
