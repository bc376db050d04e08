package ndarray

import (
	"io"
	"iter"

	"github.com/apache/arrow/go/v17/arrow/float16"
)

// NdArray is the reading surface that every array kind of ndarrow shares — Dense here, the
// sparse and ragged arrays in their own packages — so that code which only reads can accept
// any of them.
type NdArray[T Element] interface {
	// DType returns the element type.
	DType() DType
	// Shape returns a copy of the shape; ragged dimensions are Unknown.
	Shape() Shape
	// Rank returns the number of dimensions.
	Rank() int
	// Size returns the number of elements, or -1 when a dimension is ragged.
	Size() int64
	// Get returns the element at indices and panics on a wrong count or an index out of
	// range, like Dense.Get.
	Get(indices ...int64) T
	// Values iterates over the elements in row-major order (for a ragged array, over its
	// stored values in order).
	Values() iter.Seq[T]
}

var (
	_ NdArray[float32] = (*Dense[float32])(nil)
	_ NdArray[string]  = (*Dense[string])(nil)
)

// Array is the part of Dense[T]'s API that needs no type parameter, for code that handles
// arrays whose element type is known only at run time, such as readers of files. A type
// switch on *Dense[T] recovers the typed array.
type Array interface {
	DType() DType
	Shape() Shape
	Rank() int
	Size() int64
	Layout() Layout
	ReadOnly() bool
	WriteTo(w io.Writer) (int64, error)
	String() string
}

var _ Array = (*Dense[float16.Num])(nil)
