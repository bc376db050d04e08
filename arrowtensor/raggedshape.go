package arrowtensor

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// RaggedFromVariableShape returns an arrow.variable_shape_tensor array as a read-only ragged
// array of rank ndim+1: row i is tensor i, each of its dimensions a partition — uniform where
// the type's uniform_shape fixes it, ragged otherwise — so that RowSplits gives the tensors'
// shapes level by level. The values are viewed without copying; the row splits are computed.
// It fails with ErrUnsupported for a permutation other than the identity (transpose the
// tensors with TensorAt instead), ErrNull for a null tensor, and when a tensor's shape and data
// disagree or the splits would need far more memory than the array's values and shapes take
// (many dimensions of size 0).
func RaggedFromVariableShape[T ndarray.Numeric](a *VariableShapeTensorArray) (*ragged.Array[T], error) {
	typ := a.ExtensionType().(*VariableShapeTensorType)
	if want := ndarray.DTypeOf[T](); want.ArrowType().ID() != typ.valueType.ID() {
		return nil, fmt.Errorf("arrowtensor: %s of %v read as %v: %w", VariableShapeTensorName, typ.valueType, want, ndarray.ErrDType)
	}
	for k, p := range typ.permutation {
		if p != k {
			return nil, fmt.Errorf("arrowtensor: %s with permutation %v: %w", VariableShapeTensorName, typ.permutation, ErrUnsupported)
		}
	}
	if a.NullN() > 0 {
		return nil, fmt.Errorf("arrowtensor: %s with %d null tensors: %w", VariableShapeTensorName, a.NullN(), ErrNull)
	}
	n, ndim := a.Len(), typ.ndim
	st := a.Storage().(*array.Struct)
	data := st.Field(0).(*array.List)
	shapes := st.Field(1).(*array.FixedSizeList)
	dims := shapes.ListValues().(*array.Int32)
	first := shapes.Data().Offset() * ndim
	if first+n*ndim > dims.Len() {
		return nil, fmt.Errorf("arrowtensor: %s: shape list shorter than %d rows: %w", VariableShapeTensorName, n, ErrUnsupported)
	}
	width := int64(ndarray.DTypeOf[T]().Size())
	leaf, _ := ndarray.ViewBytes[T](valueBytes(data.ListValues().Data(), width))
	var start, end int64
	if n > 0 {
		start, _ = data.ValueOffsets(0)
		end = start
	}
	// Every tensor's shape, checked against its data and the uniform shape.
	shape := make([]int64, n*ndim)
	for i := range n {
		s, e := data.ValueOffsets(i)
		size := int64(1)
		for k := range ndim {
			d := int64(dims.Value(first + i*ndim + k))
			if d < 0 || (typ.uniformShape != nil && typ.uniformShape[k] != ndarray.Unknown && typ.uniformShape[k] != d) {
				return nil, fmt.Errorf("arrowtensor: tensor %d: dimension %d of %d does not fit uniform_shape %v: %w", i, k, d, typ.uniformShape, ErrUnsupported)
			}
			shape[i*ndim+k] = d
			if size = size * d; size > e-s {
				size = -1 // more elements than values: reported below
			}
		}
		if s != end || size != e-s || e > int64(len(leaf)) {
			return nil, fmt.Errorf("arrowtensor: tensor %d: shape %v for values %d to %d of %d: %w", i, shape[i*ndim:(i+1)*ndim], s, e, len(leaf), ErrUnsupported)
		}
		end = e
	}
	// Level k has, for each tensor, prod(shape[:k]) rows; bound their total by what the input
	// justifies before building them.
	budget := 2*(end-start) + 2*int64(n*ndim) + 1024
	parts := make([]ragged.Partition, ndim)
	rows := make([]int64, n) // rows of each tensor at the current level
	for i := range rows {
		rows[i] = 1
	}
	for k := range ndim {
		uniform := typ.uniformShape != nil && typ.uniformShape[k] != ndarray.Unknown
		var splits []int64
		if !uniform {
			splits = []int64{0}
		}
		total := int64(0)
		for i := range n {
			d := shape[i*ndim+k]
			if total += rows[i]; total > budget {
				return nil, fmt.Errorf("arrowtensor: %s: more than %d rows at level %d: %w", VariableShapeTensorName, budget, k, ErrUnsupported)
			}
			for j := int64(0); !uniform && j < rows[i]; j++ {
				splits = append(splits, splits[len(splits)-1]+d)
			}
			if d > 0 && rows[i] > budget/d {
				return nil, fmt.Errorf("arrowtensor: %s: more than %d rows below level %d: %w", VariableShapeTensorName, budget, k, ErrUnsupported)
			}
			rows[i] *= d
		}
		if uniform {
			parts[k] = ragged.UniformRowLength(typ.uniformShape[k])
		} else {
			parts[k] = ragged.RowSplits(splits)
		}
	}
	r, err := ragged.Make(leaf[start:end], nil, parts...)
	if err != nil {
		return nil, fmt.Errorf("arrowtensor: %s: %w", VariableShapeTensorName, err)
	}
	return r.AsReadOnly(), nil
}

// VariableShapeFromRagged returns a ragged array of rank 2 or more as an
// arrow.variable_shape_tensor array, row i being tensor i of rank a.Rank()-1, with the given
// dimension names (nil for none). Every row must be rectangular — all its sub-rows of one
// length at each level — or VariableShapeFromRagged fails with ndarray.ErrShape naming the row.
// The values are copied into memory from mem; release the result.
func VariableShapeFromRagged[T ndarray.Numeric](mem memory.Allocator, a *ragged.Array[T], dimNames []string) (*VariableShapeTensorArray, error) {
	if a.Rank() < 2 {
		return nil, fmt.Errorf("arrowtensor: a ragged array of shape %v has no tensor rows: %w", a.Shape(), ndarray.ErrShape)
	}
	tensors := make([]*ndarray.Dense[T], a.NumRows())
	for i, row := range a.Elements() {
		shape := row.BoundingShape()
		values := row.FlatValues()
		if shape.Size() != int64(len(values)) {
			return nil, fmt.Errorf("arrowtensor: row %d is not rectangular: %d values in a bounding shape %v: %w", i, len(values), shape, ndarray.ErrShape)
		}
		d, err := ndarray.FromSlice(values, shape...)
		if err != nil {
			return nil, err
		}
		tensors[i] = d
	}
	if len(tensors) == 0 {
		return nil, fmt.Errorf("arrowtensor: a ragged array without rows: %w", ndarray.ErrShape)
	}
	return NewVariableShapeTensorArray(mem, tensors, dimNames)
}
