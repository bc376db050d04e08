package ipc

import (
	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// dtypeOps holds, for one numeric element type, the operations on tensors whose type is known
// only at run time: the one place in the package where the type parameter is chosen.
type dtypeOps struct {
	dense       func(*Tensor) (ndarray.Array, error)
	sparseArray func(sparseParts) (sparse.Array, error)
}

func opsFor[T ndarray.Numeric]() dtypeOps {
	return dtypeOps{
		dense:       func(t *Tensor) (ndarray.Array, error) { return AsDense[T](t) },
		sparseArray: makeSparse[T],
	}
}

var typedOps = map[ndarray.DType]dtypeOps{
	ndarray.Int8: opsFor[int8](), ndarray.Int16: opsFor[int16](), ndarray.Int32: opsFor[int32](), ndarray.Int64: opsFor[int64](),
	ndarray.Uint8: opsFor[uint8](), ndarray.Uint16: opsFor[uint16](), ndarray.Uint32: opsFor[uint32](), ndarray.Uint64: opsFor[uint64](),
	ndarray.Float16: opsFor[float16.Num](), ndarray.Float32: opsFor[float32](), ndarray.Float64: opsFor[float64](),
}
