package dataset

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// typedOps holds, for one numeric element type, the operations applied to arrays known only
// as ndarray.Array or sparse.Array: the one place above the format packages where the type
// parameter is chosen (the CLI and Flight go through Tensor's methods).
type typedOps struct {
	column        func(chunks []*arrowtensor.FixedShapeTensorArray) (ndarray.Array, error)
	variableShape func(v *arrowtensor.VariableShapeTensorArray) (ragged.Any, error)
	concatDense   func(parts []ndarray.Array) (ndarray.Array, error)
	tensorArray   func(mem memory.Allocator, a ndarray.Array, names []string) (*arrowtensor.FixedShapeTensorArray, error)
	writeTensor   func(w io.Writer, a ndarray.Array, names []string, md arrow.Metadata) error
	toSparse      func(a ndarray.Array, f sparse.Format) (sparse.Array, error)
	writeSparse   func(w io.Writer, a sparse.Array, names []string, md arrow.Metadata) error
	padRagged     func(a ragged.Any, pad float64, maxDense int64) (ndarray.Array, error)
	stack         func(cell ndarray.Shape, capRows int64) rowStack
	stackParts    func(cell ndarray.Shape, rows []int64) ([]rowStack, func() ndarray.Array)
	takeRows      func(a ndarray.Array, rows []int64) ndarray.Array
	takeRowsOf    func(parts []ndarray.Array, rows []int64) ndarray.Array
	// makeSciPy and sciPyParts read and write SciPy's sparse .npz (scipy.go).
	makeSciPy  func(format string, shape ndarray.Shape, a, b sparse.Indices, data ndarray.Array) (sparse.Array, error)
	sciPyParts func(a sparse.Array) (map[string]ndarray.Array, error)
}

func opsFor[T ndarray.Numeric]() typedOps {
	return typedOps{
		stack:      newDenseStack[T],
		stackParts: newDenseParts[T],
		takeRows:   takeRows[T],
		takeRowsOf: takeRowsOf[T],
		makeSciPy:  makeSciPyOf[T],
		sciPyParts: sciPyPartsOf[T],
		column: func(chunks []*arrowtensor.FixedShapeTensorArray) (ndarray.Array, error) {
			if len(chunks) == 0 {
				return nil, fmt.Errorf("a column of no chunks: %w", ndarray.ErrShape)
			}
			parts := make([]*ndarray.Dense[T], len(chunks))
			for i, c := range chunks {
				d, err := arrowtensor.ToDense[T](c)
				if err != nil {
					return nil, err
				}
				parts[i] = d
			}
			return concatRows(parts)
		},
		variableShape: func(v *arrowtensor.VariableShapeTensorArray) (ragged.Any, error) {
			return arrowtensor.RaggedFromVariableShape[T](v)
		},
		concatDense: func(parts []ndarray.Array) (ndarray.Array, error) {
			typed := make([]*ndarray.Dense[T], len(parts))
			for i, p := range parts {
				typed[i] = p.(*ndarray.Dense[T])
			}
			return concatRows(typed)
		},
		tensorArray: func(mem memory.Allocator, a ndarray.Array, names []string) (*arrowtensor.FixedShapeTensorArray, error) {
			return arrowtensor.NewFixedShapeTensorArray(mem, a.(*ndarray.Dense[T]), names)
		},
		writeTensor: func(w io.Writer, a ndarray.Array, names []string, md arrow.Metadata) error {
			_, err := ipc.WriteTensor(w, a.(*ndarray.Dense[T]), names, ipc.WithMetadata(md))
			return err
		},
		toSparse: func(a ndarray.Array, f sparse.Format) (sparse.Array, error) {
			return sparse.FromDenseAs(a.(*ndarray.Dense[T]), f)
		},
		padRagged: func(a ragged.Any, pad float64, maxDense int64) (ndarray.Array, error) {
			r := a.(*ragged.Array[T])
			shape := r.BoundingShape()
			if err := shape.Validate(); err != nil {
				return nil, err
			}
			if n := shape.Size(); n > maxDense {
				return nil, &limits.ExceededError{Field: "MaxDenseElements", Needs: n, Limit: maxDense,
					Msg: fmt.Sprintf("padded to %v, %d elements, above the limit of %d: %v", shape, n, maxDense, limits.ErrExceeded)}
			}
			v, err := ndarray.AsType[T](ndarray.Scalar(pad))
			if err != nil {
				return nil, err
			}
			return r.ToDense(v.Get())
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

// errBoolTensor is what bool tensors say where only numbers go: Arrow's Tensor and
// SparseTensor messages (Arrow C++ makes no bool Tensor), padding.
var errBoolTensor = fmt.Errorf("bool tensors cannot be Arrow Tensor messages (a bool tensor goes as a fixed_size_list<bool> column: arrow, arrows, parquet, Flight): %w", ndarray.ErrDType)

// boolOps are the operations on bool tensors: reading arrow.fixed_shape_tensor and
// fixed_size_list columns of bool values (bit-packed, so always copied), no Tensor messages.
// Batch writes them as plain fixed_size_list<bool> columns (see Tensor.column).
var boolOps = typedOps{
	stack:      newDenseStack[bool],
	stackParts: newDenseParts[bool],
	takeRows:   takeRows[bool],
	takeRowsOf: takeRowsOf[bool],
	makeSciPy:  makeSciPyOf[bool],
	sciPyParts: sciPyPartsOf[bool],
	column: func(chunks []*arrowtensor.FixedShapeTensorArray) (ndarray.Array, error) {
		if len(chunks) == 0 {
			return nil, fmt.Errorf("a column of no chunks: %w", ndarray.ErrShape)
		}
		parts := make([]*ndarray.Dense[bool], len(chunks))
		for i, c := range chunks {
			d, err := arrowtensor.ToDenseBool(c)
			if err != nil {
				return nil, err
			}
			parts[i] = d
		}
		return concatRows(parts)
	},
	variableShape: func(*arrowtensor.VariableShapeTensorArray) (ragged.Any, error) {
		return nil, fmt.Errorf("an arrow.variable_shape_tensor of bool: %w", ndarray.ErrDType)
	},
	concatDense: func(parts []ndarray.Array) (ndarray.Array, error) {
		typed := make([]*ndarray.Dense[bool], len(parts))
		for i, p := range parts {
			typed[i] = p.(*ndarray.Dense[bool])
		}
		return concatRows(typed)
	},
	tensorArray: func(mem memory.Allocator, a ndarray.Array, names []string) (*arrowtensor.FixedShapeTensorArray, error) {
		return arrowtensor.NewBoolFixedShapeTensorArray(mem, a.(*ndarray.Dense[bool]), names)
	},
	writeTensor: func(io.Writer, ndarray.Array, []string, arrow.Metadata) error { return errBoolTensor },
	toSparse:    func(ndarray.Array, sparse.Format) (sparse.Array, error) { return nil, errBoolTensor },
	writeSparse: func(io.Writer, sparse.Array, []string, arrow.Metadata) error { return errBoolTensor },
	padRagged: func(ragged.Any, float64, int64) (ndarray.Array, error) {
		return nil, fmt.Errorf("bool values cannot be padded: %w", ErrRaggedNotDense)
	},
}

// errStringTensor is what string tensors say where only numbers go: Arrow's Tensor and
// SparseTensor messages, arrow.fixed_shape_tensor columns, padding.
var errStringTensor = fmt.Errorf("string tensors cannot be Arrow tensors (a string tensor goes as a utf8 or binary column, or lists of them: arrow, arrows, parquet, tfrecord, Flight): %w", ndarray.ErrDType)

// stringOps are the operations on string tensors: plain columns (utf8, binary and the like)
// and fixed-size lists of them, stacked and joined; no Tensor messages.
var stringOps = typedOps{
	stack:      newDenseStack[string],
	stackParts: newDenseParts[string],
	takeRows:   takeRows[string],
	takeRowsOf: takeRowsOf[string],
	column: func([]*arrowtensor.FixedShapeTensorArray) (ndarray.Array, error) {
		return nil, errStringTensor
	},
	variableShape: func(*arrowtensor.VariableShapeTensorArray) (ragged.Any, error) {
		return nil, errStringTensor
	},
	concatDense: func(parts []ndarray.Array) (ndarray.Array, error) {
		typed := make([]*ndarray.Dense[string], len(parts))
		for i, p := range parts {
			typed[i] = p.(*ndarray.Dense[string])
		}
		return concatRows(typed)
	},
	tensorArray: func(memory.Allocator, ndarray.Array, []string) (*arrowtensor.FixedShapeTensorArray, error) {
		return nil, errStringTensor
	},
	writeTensor: func(io.Writer, ndarray.Array, []string, arrow.Metadata) error { return errStringTensor },
	toSparse:    func(ndarray.Array, sparse.Format) (sparse.Array, error) { return nil, errStringTensor },
	writeSparse: func(io.Writer, sparse.Array, []string, arrow.Metadata) error { return errStringTensor },
	padRagged: func(ragged.Any, float64, int64) (ndarray.Array, error) {
		return nil, fmt.Errorf("strings cannot be padded: %w", ErrRaggedNotDense)
	},
}

// opsOf returns the operations for a numeric, bool or string element type.
func opsOf(d ndarray.DType) (typedOps, error) {
	switch d {
	case ndarray.Bool:
		return boolOps, nil
	case ndarray.String:
		return stringOps, nil
	}
	ops, ok := numericOps[d]
	if !ok {
		return typedOps{}, fmt.Errorf("%v tensors cannot be Arrow tensors: %w", d, ndarray.ErrDType)
	}
	return ops, nil
}

// concatRows returns parts, arrays of one cell shape, stacked along their first axis: the
// only part itself, or a row-major copy of all in order.
func concatRows[T ndarray.Element](parts []*ndarray.Dense[T]) (*ndarray.Dense[T], error) {
	switch len(parts) {
	case 0:
		return nil, fmt.Errorf("nothing to stack: %w", ndarray.ErrShape)
	case 1:
		return parts[0], nil
	}
	shape := parts[0].Shape()
	if shape.Rank() == 0 {
		return nil, fmt.Errorf("scalars cannot be stacked along their first axis: %w", ndarray.ErrShape)
	}
	rows := int64(0)
	for _, p := range parts {
		if !p.Shape()[1:].Equal(shape[1:]) {
			return nil, fmt.Errorf("parts of shapes %v and %v: %w", shape, p.Shape(), ndarray.ErrShape)
		}
		rows += p.Dim(0)
	}
	shape[0] = rows
	out := ndarray.New[T](shape...)
	at := int64(0)
	for _, p := range parts {
		dst, err := out.Slice(ndarray.Range(at, at+p.Dim(0)))
		if err != nil {
			return nil, err
		}
		if err := ndarray.Copy(dst, p); err != nil {
			return nil, err
		}
		at += p.Dim(0)
	}
	return out, nil
}
