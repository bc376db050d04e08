package main

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// typedOps holds, for one numeric element type, the operations the CLI applies to arrays it
// knows only as ndarray.Array: the one place where the type parameter is chosen.
type typedOps struct {
	writeTensor func(w io.Writer, a ndarray.Array, names []string, md arrow.Metadata) error
	toSparse    func(a ndarray.Array, f sparse.Format) (sparse.Array, error)
	writeSparse func(w io.Writer, a sparse.Array, names []string, md arrow.Metadata) error
}

func opsFor[T ndarray.Numeric]() typedOps {
	return typedOps{
		writeTensor: func(w io.Writer, a ndarray.Array, names []string, md arrow.Metadata) error {
			_, err := ipc.WriteTensor(w, a.(*ndarray.Dense[T]), names, ipc.WithMetadata(md))
			return err
		},
		toSparse: func(a ndarray.Array, f sparse.Format) (sparse.Array, error) {
			return sparse.FromDenseAs(a.(*ndarray.Dense[T]), f)
		},
		writeSparse: func(w io.Writer, a sparse.Array, names []string, md arrow.Metadata) error {
			_, err := ipc.WriteSparse(w, a.(sparse.Tensor[T]), names, ipc.WithMetadata(md))
			return err
		},
	}
}

var numericOps = map[ndarray.DType]typedOps{
	ndarray.Int8: opsFor[int8](), ndarray.Int16: opsFor[int16](), ndarray.Int32: opsFor[int32](), ndarray.Int64: opsFor[int64](),
	ndarray.Uint8: opsFor[uint8](), ndarray.Uint16: opsFor[uint16](), ndarray.Uint32: opsFor[uint32](), ndarray.Uint64: opsFor[uint64](),
	ndarray.Float16: opsFor[float16.Num](), ndarray.Float32: opsFor[float32](), ndarray.Float64: opsFor[float64](),
}

// opsOf returns the operations for a numeric element type.
func opsOf(d ndarray.DType) (typedOps, error) {
	ops, ok := numericOps[d]
	if !ok {
		return typedOps{}, fmt.Errorf("%v tensors cannot be Arrow tensors: %w", d, ndarray.ErrDType)
	}
	return ops, nil
}
