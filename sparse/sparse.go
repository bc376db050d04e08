package sparse

import (
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Format names a sparse layout.
type Format int

// The sparse layouts of Arrow's SparseTensor.
const (
	FormatCOO Format = iota + 1 // coordinate list, any rank
	FormatCSR                   // compressed sparse rows, rank 2
	FormatCSC                   // compressed sparse columns, rank 2
	FormatCSF                   // compressed sparse fibers, any rank
)

var formatNames = map[Format]string{FormatCOO: "coo", FormatCSR: "csr", FormatCSC: "csc", FormatCSF: "csf"}

// String returns the format's lower-case name: "coo", "csr", "csc" or "csf".
func (f Format) String() string {
	if s, ok := formatNames[f]; ok {
		return s
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat returns the format named s (case-insensitive), or an error wrapping
// ErrInvalid.
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if strings.EqualFold(s, name) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("sparse: unknown format %q (want coo, csr, csc or csf): %w", s, ErrInvalid)
}

// ErrInvalid reports parts of a sparse array that contradict each other: an index outside its
// dimension, pointers that decrease or disagree with the number of stored values, buffers of
// the wrong length, a rank the format does not allow. Errors wrap it, and ndarray.ErrShape for
// an invalid shape.
var ErrInvalid = errors.New("invalid sparse array")

// Tensor is what every sparse array implements: the NdArray reading surface, the type-free
// Array, and conversion to the dense and COO forms (copies).
type Tensor[T ndarray.Element] interface {
	ndarray.NdArray[T]
	Array
	// ToDense returns a new row-major dense array with the same elements, or an error
	// wrapping ErrTooLarge when it would hold more than limits.Default().MaxDenseElements
	// (see CheckDense).
	ToDense() (*ndarray.Dense[T], error)
	// ToCOO returns a new canonical COO with the same stored entries.
	ToCOO() *COO[T]
}

var (
	_ Tensor[float64] = (*COO[float64])(nil)
	_ Tensor[float64] = (*CSR[float64])(nil)
	_ Tensor[float64] = (*CSC[float64])(nil)
	_ Tensor[float64] = (*CSF[float64])(nil)
)

// Equal reports whether a and b have the same shape and equal elements in row-major order
// (compared with ==, so a NaN is never equal), whatever their kinds: dense, sparse or a mix.
func Equal[T ndarray.Element](a, b ndarray.NdArray[T]) bool {
	if !a.Shape().Equal(b.Shape()) {
		return false
	}
	nextB, stop := iter.Pull(b.Values())
	defer stop()
	for v := range a.Values() {
		w, ok := nextB()
		if !ok || v != w {
			return false
		}
	}
	_, more := nextB()
	return !more
}

// checkShape validates a shape for a sparse array: known, non-negative dimensions whose
// product fits in an int64.
func checkShape(shape ndarray.Shape) error {
	if err := shape.Validate(); err != nil {
		return err
	}
	if !shape.IsKnown() {
		return fmt.Errorf("shape %v: dimension is unknown: %w", shape, ndarray.ErrShape)
	}
	return nil
}

// mustShape panics with the method's name when shape is invalid, as ndarray.New does.
func mustShape(method string, shape ndarray.Shape) {
	if err := checkShape(shape); err != nil {
		panic(fmt.Sprintf("sparse: %s: %v", method, err))
	}
}

// rowMajorStrides returns the row-major strides of shape in elements.
func rowMajorStrides(shape ndarray.Shape) []int64 { return ndarray.RowMajor(shape).Strides }

// badIndexPanic panics as Dense.Get does for a wrong count or an index out of range.
func badIndexPanic(method string, indices []int64, shape ndarray.Shape) {
	if len(indices) != len(shape) {
		panic(fmt.Sprintf("sparse: %s: %d indices for rank %d", method, len(indices), len(shape)))
	}
	panic(fmt.Sprintf("sparse: %s: index %v out of range for shape %v", method, indices, shape))
}

// inShape reports whether indices address an element of shape.
func inShape(indices []int64, shape ndarray.Shape) bool {
	if len(indices) != len(shape) {
		return false
	}
	for i, x := range indices {
		if x < 0 || x >= shape[i] {
			return false
		}
	}
	return true
}

// readOnlyPanic panics for a write to a read-only array.
func readOnlyPanic(method string) {
	panic(fmt.Sprintf("sparse: %s: array is read-only", method))
}
