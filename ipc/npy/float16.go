package npy

import (
	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/ndarray"
)

// float16Bytes returns the little-endian bytes of float16 values (the only Numeric type the
// type switch in valueBytes does not list).
func float16Bytes[T ndarray.Numeric | bool](values []T) []byte {
	return ndarray.LittleEndianBytes(any(values).([]float16.Num))
}
