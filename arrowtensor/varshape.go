package arrowtensor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
)

// VariableShapeTensorName is the name of Arrow's canonical extension type for a column whose
// rows are tensors of one rank and element type but each of its own shape.
const VariableShapeTensorName = "arrow.variable_shape_tensor"

// VariableShapeTensorType is the canonical Arrow extension type arrow.variable_shape_tensor:
// storage Struct<data: List<value type>, shape: FixedSizeList<int32>[ndim]>, each row's data
// stored row-major in its physical shape. Permutation and dimension names work as for
// FixedShapeTensorType; uniform_shape gives the size of the dimensions every row shares
// (Unknown for the others). Importing this package registers the type with arrow-go.
type VariableShapeTensorType struct {
	arrow.ExtensionBase
	valueType    arrow.DataType
	ndim         int
	permutation  []int
	dimNames     []string
	uniformShape []int64 // Unknown where rows differ; nil when absent
}

// VariableShapeTensorArray is an array of arrow.variable_shape_tensor values.
type VariableShapeTensorArray struct {
	array.ExtensionArrayBase
}

// ValueStr returns row i as its storage struct prints it, data and shape, or "(null)".
func (a *VariableShapeTensorArray) ValueStr(i int) string { return a.Storage().ValueStr(i) }

var (
	_ arrow.ExtensionType  = (*VariableShapeTensorType)(nil)
	_ array.ExtensionArray = (*VariableShapeTensorArray)(nil)
)

func init() {
	if err := arrow.RegisterExtensionType(&VariableShapeTensorType{}); err != nil {
		panic(fmt.Sprintf("arrowtensor: registering %s: %v", VariableShapeTensorName, err))
	}
}

// NewVariableShapeTensorType returns the type of tensors of valueType (a numeric type) and
// rank ndim. permutation and dimNames are as for NewFixedShapeTensorType; uniformShape (nil
// for none) gives one size per dimension, Unknown where the rows differ.
func NewVariableShapeTensorType(valueType arrow.DataType, ndim int, permutation []int, dimNames []string, uniformShape []int64) (*VariableShapeTensorType, error) {
	if _, err := DTypeFromArrow(valueType); err != nil {
		return nil, err
	}
	if ndim < 0 || ndim > 1<<16 {
		return nil, fmt.Errorf("arrowtensor: %s of rank %d: %w", VariableShapeTensorName, ndim, ndarray.ErrShape)
	}
	if err := checkPermutation(permutation, ndim); err != nil {
		return nil, err
	}
	if dimNames != nil && len(dimNames) != ndim {
		return nil, fmt.Errorf("arrowtensor: %d dim_names for %d dimensions: %w", len(dimNames), ndim, ndarray.ErrShape)
	}
	if uniformShape != nil {
		if len(uniformShape) != ndim {
			return nil, fmt.Errorf("arrowtensor: uniform_shape %v for %d dimensions: %w", uniformShape, ndim, ndarray.ErrShape)
		}
		if err := ndarray.Shape(uniformShape).Validate(); err != nil {
			return nil, fmt.Errorf("arrowtensor: uniform_shape: %w", err)
		}
	}
	storage := arrow.StructOf(
		arrow.Field{Name: "data", Type: arrow.ListOf(valueType), Nullable: true},
		arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(int32(ndim), arrow.PrimitiveTypes.Int32), Nullable: true},
	)
	return &VariableShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: storage},
		valueType:     valueType,
		ndim:          ndim,
		permutation:   slices.Clone(permutation),
		dimNames:      slices.Clone(dimNames),
		uniformShape:  slices.Clone(uniformShape),
	}, nil
}

// ExtensionName returns "arrow.variable_shape_tensor".
func (*VariableShapeTensorType) ExtensionName() string { return VariableShapeTensorName }

// ArrayType returns the type of VariableShapeTensorArray, for arrow-go's extension registry.
func (*VariableShapeTensorType) ArrayType() reflect.Type {
	return reflect.TypeOf(VariableShapeTensorArray{})
}

// ValueType returns the element type of the tensors.
func (t *VariableShapeTensorType) ValueType() arrow.DataType { return t.valueType }

// NDim returns the rank of every tensor.
func (t *VariableShapeTensorType) NDim() int { return t.ndim }

// Permutation returns a copy of the permutation, nil for the identity.
func (t *VariableShapeTensorType) Permutation() []int { return slices.Clone(t.permutation) }

// DimNames returns a copy of the physical dimension names, nil when unnamed.
func (t *VariableShapeTensorType) DimNames() []string { return slices.Clone(t.dimNames) }

// UniformShape returns a copy of the uniform shape (Unknown where rows differ), nil if absent.
func (t *VariableShapeTensorType) UniformShape() []int64 { return slices.Clone(t.uniformShape) }

// String describes the type.
func (t *VariableShapeTensorType) String() string {
	return fmt.Sprintf("extension<%s[%v, ndim=%d, %s]>", VariableShapeTensorName, t.valueType, t.ndim, t.Serialize())
}

// Serialize returns the extension metadata: compact JSON with the keys permutation,
// dim_names and uniform_shape (null where rows differ), absent ones omitted, "{}" when there is
// nothing to say.
func (t *VariableShapeTensorType) Serialize() string {
	var b bytes.Buffer
	b.WriteByte('{')
	add := func(key string, v any) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		val, _ := json.Marshal(v) // ints, strings and nil pointers always marshal
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	if t.permutation != nil {
		add("permutation", t.permutation)
	}
	if t.dimNames != nil {
		add("dim_names", t.dimNames)
	}
	if t.uniformShape != nil {
		u := make([]*int64, len(t.uniformShape))
		for i := range u {
			if t.uniformShape[i] != ndarray.Unknown {
				u[i] = &t.uniformShape[i]
			}
		}
		add("uniform_shape", u)
	}
	b.WriteByte('}')
	return b.String()
}

// Deserialize parses extension metadata ("" and "{}" included) for storage, which must be
// Struct<data: List<numeric>, shape: FixedSizeList<int32>[ndim]>.
func (*VariableShapeTensorType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	var raw struct {
		Permutation  []int    `json:"permutation"`
		DimNames     []string `json:"dim_names"`
		UniformShape []*int64 `json:"uniform_shape"`
	}
	if data != "" {
		if err := json.Unmarshal([]byte(data), &raw); err != nil {
			return nil, fmt.Errorf("arrowtensor: %s metadata %q: %w: %w", VariableShapeTensorName, data, ndarray.ErrShape, err)
		}
	}
	st, ok := storage.(*arrow.StructType)
	if !ok || st.NumFields() != 2 || st.Field(0).Name != "data" || st.Field(1).Name != "shape" {
		return nil, fmt.Errorf("arrowtensor: %s storage %v is not struct<data, shape>: %w", VariableShapeTensorName, storage, ErrUnsupported)
	}
	list, ok1 := st.Field(0).Type.(*arrow.ListType)
	shape, ok2 := st.Field(1).Type.(*arrow.FixedSizeListType)
	if !ok1 || !ok2 || shape.Elem().ID() != arrow.INT32 {
		return nil, fmt.Errorf("arrowtensor: %s storage %v: data must be a list and shape a fixed-size list of int32: %w", VariableShapeTensorName, storage, ErrUnsupported)
	}
	var uniform []int64
	if raw.UniformShape != nil {
		uniform = make([]int64, len(raw.UniformShape))
		for i, u := range raw.UniformShape {
			uniform[i] = ndarray.Unknown
			if u != nil {
				uniform[i] = *u
			}
		}
	}
	t, err := NewVariableShapeTensorType(list.Elem(), int(shape.Len()), raw.Permutation, raw.DimNames, uniform)
	if err != nil {
		return nil, err
	}
	t.Storage = storage
	return t, nil
}

// ExtensionEquals reports whether o is a variable_shape_tensor type with the same parameters.
func (t *VariableShapeTensorType) ExtensionEquals(o arrow.ExtensionType) bool {
	u, ok := o.(*VariableShapeTensorType)
	return ok && arrow.TypeEqual(t.valueType, u.valueType) && t.ndim == u.ndim &&
		slices.Equal(t.permutation, u.permutation) && slices.Equal(t.dimNames, u.dimNames) &&
		slices.Equal(t.uniformShape, u.uniformShape)
}

// NewVariableShapeTensorArray returns an arrow.variable_shape_tensor array with one row per
// tensor, which must all have the same rank; dimNames (nil for none) names their dimensions.
// The values are copied into buffers from mem, since the tensors are separate arrays; the
// uniform_shape metadata records the dimensions every tensor shares. Release the array.
func NewVariableShapeTensorArray[T ndarray.Numeric](mem memory.Allocator, tensors []*ndarray.Dense[T], dimNames []string) (*VariableShapeTensorArray, error) {
	if len(tensors) == 0 {
		return nil, fmt.Errorf("arrowtensor: no tensors, so no rank: %w", ndarray.ErrShape)
	}
	ndim := tensors[0].Rank()
	uniform := tensors[0].Shape()
	for i, d := range tensors {
		if d.Rank() != ndim {
			return nil, fmt.Errorf("arrowtensor: tensor %d has rank %d, tensor 0 rank %d: %w", i, d.Rank(), ndim, ndarray.ErrShape)
		}
		for k := range uniform {
			if d.Dim(k) > 1<<31-1 {
				return nil, fmt.Errorf("arrowtensor: tensor %d dimension %d does not fit an int32: %w", i, k, ndarray.ErrShape)
			}
			if uniform[k] != d.Dim(k) {
				uniform[k] = ndarray.Unknown
			}
		}
	}
	typ, err := NewVariableShapeTensorType(ndarray.DTypeOf[T]().ArrowType(), ndim, nil, dimNames, uniform)
	if err != nil {
		return nil, err
	}
	n := len(tensors)
	width := int64(ndarray.DTypeOf[T]().Size())
	total := int64(0)
	for _, d := range tensors {
		total += d.Size()
	}
	if total > 1<<31-1 {
		return nil, fmt.Errorf("arrowtensor: %d values do not fit the int32 offsets of a list: %w", total, ndarray.ErrShape)
	}
	values := newBuffer(mem, total*width)
	offsets := newBuffer(mem, int64(n+1)*4)
	dims := newBuffer(mem, int64(n*ndim)*4)
	off := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	shp := arrow.Int32Traits.CastFromBytes(dims.Bytes())
	pos := int64(0)
	for i, d := range tensors {
		off[i] = int32(pos)
		copy(values.Bytes()[pos*width:], ndarray.LittleEndianBytes(d.Clone().Data()))
		pos += d.Size()
		for k := range ndim {
			shp[i*ndim+k] = int32(d.Dim(k))
		}
	}
	off[n] = int32(pos)

	st := typ.Storage.(*arrow.StructType)
	valueData := array.NewData(typ.valueType, int(total), []*memory.Buffer{nil, values}, nil, 0, 0)
	listData := array.NewData(st.Field(0).Type, n, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{valueData}, 0, 0)
	dimData := array.NewData(arrow.PrimitiveTypes.Int32, n*ndim, []*memory.Buffer{nil, dims}, nil, 0, 0)
	shapeData := array.NewData(st.Field(1).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{dimData}, 0, 0)
	data := array.NewData(typ, n, []*memory.Buffer{nil}, []arrow.ArrayData{listData, shapeData}, 0, 0)
	for _, r := range []interface{ Release() }{values, offsets, dims, valueData, listData, dimData, shapeData} {
		r.Release()
	}
	defer data.Release()
	return array.MakeFromData(data).(*VariableShapeTensorArray), nil
}

// newBuffer returns a zeroed buffer of n bytes from mem.
func newBuffer(mem memory.Allocator, n int64) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(int(n))
	clear(b.Bytes())
	return b
}

// TensorAt returns row i of a as a Dense[T] with the row's logical shape (the permutation
// applied through strides), viewing the array's values without copying (unless they are not
// aligned for T). The view is read-only and must not be used after a is released. It fails
// with ndarray.ErrDType when T is not the value type, ndarray.ErrIndex when i is out of
// range, and ErrUnsupported when the row's shape and data disagree.
func TensorAt[T ndarray.Numeric](a *VariableShapeTensorArray, i int) (*ndarray.Dense[T], error) {
	typ := a.ExtensionType().(*VariableShapeTensorType)
	if want := ndarray.DTypeOf[T](); want.ArrowType().ID() != typ.valueType.ID() {
		return nil, fmt.Errorf("arrowtensor: %s of %v read as %v: %w", VariableShapeTensorName, typ.valueType, want, ndarray.ErrDType)
	}
	if i < 0 || i >= a.Len() {
		return nil, fmt.Errorf("arrowtensor: row %d of %d: %w", i, a.Len(), ndarray.ErrIndex)
	}
	// The struct's fields are already sliced to its offset; the fixed-size list's values
	// are not sliced to the list's.
	st := a.Storage().(*array.Struct)
	data := st.Field(0).(*array.List)
	shapes := st.Field(1).(*array.FixedSizeList)
	dims := shapes.ListValues().(*array.Int32)
	first := (shapes.Data().Offset() + i) * typ.ndim
	if first+typ.ndim > dims.Len() {
		return nil, fmt.Errorf("arrowtensor: row %d: shape list shorter than %d rows: %w", i, a.Len(), ErrUnsupported)
	}
	shape := make(ndarray.Shape, typ.ndim)
	for k := range shape {
		shape[k] = int64(dims.Value(first + k))
	}
	start, end := data.ValueOffsets(i)
	size, err := cellSize(shape)
	if err != nil || size != end-start {
		return nil, fmt.Errorf("arrowtensor: row %d: shape %v for %d values: %w", i, shape, end-start, ErrUnsupported)
	}
	values, viewed := ndarray.ViewBytes[T](valueBytes(data.ListValues().Data(), int64(ndarray.DTypeOf[T]().Size())))
	physical := ndarray.RowMajor(shape).Strides
	layout := ndarray.Layout{Offset: start}
	for k := range typ.ndim {
		p := k
		if typ.permutation != nil {
			p = typ.permutation[k]
		}
		layout.Shape = append(layout.Shape, shape[p])
		layout.Strides = append(layout.Strides, physical[p])
	}
	if layout.Shape == nil {
		layout.Shape, layout.Strides = ndarray.Shape{}, []int64{}
	}
	d, err := ndarray.FromLayout(values, layout)
	if err != nil {
		return nil, fmt.Errorf("arrowtensor: row %d: %w: %w", i, ErrUnsupported, err)
	}
	if viewed {
		d = d.AsReadOnly()
	}
	return d, nil
}
