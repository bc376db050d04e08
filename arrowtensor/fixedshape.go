package arrowtensor

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
)

// FixedShapeTensorName is the name of Arrow's canonical extension type for a column whose
// every row is a tensor of one shape.
const FixedShapeTensorName = "arrow.fixed_shape_tensor"

// FixedShapeTensorType is the canonical Arrow extension type arrow.fixed_shape_tensor: the
// storage is FixedSizeList<item: value type>[product(shape)], each list one tensor cell stored
// row-major in the physical shape; permutation gives the logical order of the dimensions and
// dim_names names the physical ones. Importing this package registers the type with arrow-go,
// so IPC readers return columns of it as *FixedShapeTensorArray.
type FixedShapeTensorType struct {
	arrow.ExtensionBase
	valueType   arrow.DataType
	shape       []int64
	permutation []int
	dimNames    []string
}

// FixedShapeTensorArray is an array of arrow.fixed_shape_tensor values.
type FixedShapeTensorArray struct {
	array.ExtensionArrayBase
}

var (
	_ arrow.ExtensionType  = (*FixedShapeTensorType)(nil)
	_ array.ExtensionArray = (*FixedShapeTensorArray)(nil)
)

func init() {
	if err := arrow.RegisterExtensionType(&FixedShapeTensorType{}); err != nil {
		panic(fmt.Sprintf("arrowtensor: registering %s: %v", FixedShapeTensorName, err))
	}
}

// NewFixedShapeTensorType returns the type of tensors of valueType (a numeric type) with the
// physical cell shape shape. permutation (nil for the identity) must be a permutation of
// 0 … len(shape)-1, and dimNames (nil for none) must name every dimension.
func NewFixedShapeTensorType(valueType arrow.DataType, shape []int64, permutation []int, dimNames []string) (*FixedShapeTensorType, error) {
	if valueType == nil || valueType.ID() != arrow.BOOL {
		if _, err := DTypeFromArrow(valueType); err != nil {
			return nil, err
		}
	}
	size, err := fixedCellSize(shape)
	if err != nil {
		return nil, err
	}
	if err := checkPermutation(permutation, len(shape)); err != nil {
		return nil, err
	}
	if dimNames != nil && len(dimNames) != len(shape) {
		return nil, fmt.Errorf("arrowtensor: %d dim_names for %d dimensions: %w", len(dimNames), len(shape), ndarray.ErrShape)
	}
	storage := arrow.FixedSizeListOfField(int32(size), arrow.Field{Name: "item", Type: valueType, Nullable: true})
	return &FixedShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: storage},
		valueType:     valueType,
		shape:         slices.Clone(shape),
		permutation:   slices.Clone(permutation),
		dimNames:      slices.Clone(dimNames),
	}, nil
}

// cellSize returns the number of elements of a cell shape, which must fit a FixedSizeList.
func cellSize(shape []int64) (int64, error) {
	s := ndarray.Shape(shape)
	if err := s.Validate(); err != nil {
		return 0, fmt.Errorf("arrowtensor: tensor shape: %w", err)
	}
	if !s.IsKnown() || s.Size() > 1<<31-1 {
		return 0, fmt.Errorf("arrowtensor: tensor shape %v: a cell must hold 1 to 2^31-1 elements: %w", s, ndarray.ErrShape)
	}
	return s.Size(), nil
}

// fixedCellSize is cellSize for a fixed_shape_tensor, whose storage list arrow-go cannot make
// with size 0.
func fixedCellSize(shape []int64) (int64, error) {
	n, err := cellSize(shape)
	if err == nil && n == 0 {
		err = fmt.Errorf("arrowtensor: tensor shape %v: arrow-go has no fixed-size list of size 0: %w", shape, ErrUnsupported)
	}
	return n, err
}

// checkPermutation reports whether p is nil or a permutation of 0 … n-1.
func checkPermutation(p []int, n int) error {
	if p == nil {
		return nil
	}
	seen := make([]bool, n)
	if len(p) != n {
		return fmt.Errorf("arrowtensor: permutation %v for %d dimensions: %w", p, n, ndarray.ErrIndex)
	}
	for _, i := range p {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("arrowtensor: %v is not a permutation of %d dimensions: %w", p, n, ndarray.ErrIndex)
		}
		seen[i] = true
	}
	return nil
}

// ExtensionName returns "arrow.fixed_shape_tensor".
func (*FixedShapeTensorType) ExtensionName() string { return FixedShapeTensorName }

// ArrayType returns the type of FixedShapeTensorArray, for arrow-go's extension registry.
func (*FixedShapeTensorType) ArrayType() reflect.Type { return reflect.TypeOf(FixedShapeTensorArray{}) }

// ValueType returns the element type of the tensors.
func (t *FixedShapeTensorType) ValueType() arrow.DataType { return t.valueType }

// Shape returns a copy of the physical cell shape.
func (t *FixedShapeTensorType) Shape() []int64 { return slices.Clone(t.shape) }

// Permutation returns a copy of the permutation, nil for the identity.
func (t *FixedShapeTensorType) Permutation() []int { return slices.Clone(t.permutation) }

// DimNames returns a copy of the names of the physical dimensions, nil when unnamed.
func (t *FixedShapeTensorType) DimNames() []string { return slices.Clone(t.dimNames) }

// LogicalShape returns the cell shape in logical order: shape[permutation[i]].
func (t *FixedShapeTensorType) LogicalShape() ndarray.Shape {
	s := make(ndarray.Shape, len(t.shape))
	for i := range s {
		s[i] = t.shape[t.axis(i)]
	}
	return s
}

// LogicalDimNames returns the dimension names in logical order, nil when unnamed.
func (t *FixedShapeTensorType) LogicalDimNames() []string {
	if t.dimNames == nil {
		return nil
	}
	out := make([]string, len(t.dimNames))
	for i := range out {
		out[i] = t.dimNames[t.axis(i)]
	}
	return out
}

// axis returns the physical dimension of logical dimension i.
func (t *FixedShapeTensorType) axis(i int) int {
	if t.permutation == nil {
		return i
	}
	return t.permutation[i]
}

// String describes the type, as in extension<arrow.fixed_shape_tensor[float32, shape=[2,3]]>.
func (t *FixedShapeTensorType) String() string {
	return fmt.Sprintf("extension<%s[%v, %s]>", FixedShapeTensorName, t.valueType, t.Serialize())
}

// fixedShapeMetadata is the JSON of the extension metadata, its keys in the order Arrow C++
// writes them.
type fixedShapeMetadata struct {
	Shape       []int64  `json:"shape"`
	Permutation []int    `json:"permutation,omitempty"`
	DimNames    []string `json:"dim_names,omitempty"`
}

// Serialize returns the extension metadata as Arrow C++ writes it: compact JSON with the keys
// shape, permutation and dim_names in that order, absent ones omitted, as in
// {"shape":[2,3],"permutation":[1,0],"dim_names":["h","w"]}.
func (t *FixedShapeTensorType) Serialize() string {
	m := fixedShapeMetadata{Shape: t.shape, Permutation: t.permutation, DimNames: t.dimNames}
	if m.Shape == nil {
		m.Shape = []int64{}
	}
	b, _ := json.Marshal(m) // slices of numbers and strings always marshal
	return string(b)
}

// Deserialize parses extension metadata for the given storage type. It reads leniently, as
// other writers differ: "permutations" is taken for "permutation", explicit nulls for absent
// keys, unknown keys are ignored. The storage must be a FixedSizeList of a numeric type whose
// size is the product of the shape.
func (*FixedShapeTensorType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	var raw struct {
		Shape        []int64  `json:"shape"`
		Permutation  []int    `json:"permutation"`
		Permutations []int    `json:"permutations"`
		DimNames     []string `json:"dim_names"`
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return nil, fmt.Errorf("arrowtensor: %s metadata %q: %w: %w", FixedShapeTensorName, data, ndarray.ErrShape, err)
	}
	if raw.Shape == nil {
		return nil, fmt.Errorf("arrowtensor: %s metadata %q has no shape: %w", FixedShapeTensorName, data, ndarray.ErrShape)
	}
	if raw.Permutation == nil {
		raw.Permutation = raw.Permutations
	}
	list, ok := storage.(*arrow.FixedSizeListType)
	if !ok {
		return nil, fmt.Errorf("arrowtensor: %s storage %v is not a fixed-size list: %w", FixedShapeTensorName, storage, ErrUnsupported)
	}
	t, err := NewFixedShapeTensorType(list.Elem(), raw.Shape, raw.Permutation, raw.DimNames)
	if err != nil {
		return nil, err
	}
	if size, _ := cellSize(raw.Shape); size != int64(list.Len()) {
		return nil, fmt.Errorf("arrowtensor: %s shape %v holds %d elements, its storage list %d: %w",
			FixedShapeTensorName, raw.Shape, size, list.Len(), ndarray.ErrShape)
	}
	t.Storage = storage // keep the writer's child field name and nullability
	return t, nil
}

// ExtensionEquals reports whether o is a fixed_shape_tensor type with the same value type,
// shape, permutation and dimension names.
func (t *FixedShapeTensorType) ExtensionEquals(o arrow.ExtensionType) bool {
	u, ok := o.(*FixedShapeTensorType)
	return ok && arrow.TypeEqual(t.valueType, u.valueType) && slices.Equal(t.shape, u.shape) &&
		slices.Equal(t.permutation, u.permutation) && slices.Equal(t.dimNames, u.dimNames)
}

// ValueStr returns row i as its storage list prints it, as in "[1 2 3 4 5 6]" (the values in
// physical row-major order), or "(null)".
func (a *FixedShapeTensorArray) ValueStr(i int) string { return a.Storage().ValueStr(i) }

// NewFixedShapeTensorArray returns an arrow.fixed_shape_tensor array whose row i is the
// tensor d[i], for an array d of shape [N, cell shape...]; dimNames names the cell's
// dimensions (nil for none). The Arrow array views d's memory without copying when d is
// row-major contiguous — it must then not outlive d's memory — and holds a row-major copy
// allocated from mem otherwise. Release it.
func NewFixedShapeTensorArray[T ndarray.Numeric](mem memory.Allocator, d *ndarray.Dense[T], dimNames []string) (*FixedShapeTensorArray, error) {
	if d.Rank() == 0 {
		return nil, fmt.Errorf("arrowtensor: a rank-0 array has no rows to make tensors of: %w", ndarray.ErrShape)
	}
	shape := d.Shape()
	typ, err := NewFixedShapeTensorType(d.DType().ArrowType(), shape[1:], nil, dimNames)
	if err != nil {
		return nil, err
	}
	values := rowMajorBuffer(mem, d)
	defer values.Release()
	child := array.NewData(typ.valueType, int(d.Size()), []*memory.Buffer{nil, values}, nil, 0, 0)
	defer child.Release()
	data := array.NewData(typ, int(shape[0]), []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data).(*FixedShapeTensorArray), nil
}

// NewBoolFixedShapeTensorArray is NewFixedShapeTensorArray for bool tensors: a column of
// arrow.fixed_shape_tensor over bool values, which Arrow packs eight to a byte, so the values
// are always copied into a bitmap allocated from mem. Release the array.
func NewBoolFixedShapeTensorArray(mem memory.Allocator, d *ndarray.Dense[bool], dimNames []string) (*FixedShapeTensorArray, error) {
	if d.Rank() == 0 {
		return nil, fmt.Errorf("arrowtensor: a rank-0 array has no rows to make tensors of: %w", ndarray.ErrShape)
	}
	shape := d.Shape()
	typ, err := NewFixedShapeTensorType(arrow.FixedWidthTypes.Boolean, shape[1:], nil, dimNames)
	if err != nil {
		return nil, err
	}
	child, err := leafData(mem, d.Ravel())
	if err != nil {
		return nil, err
	}
	defer child.Release()
	data := array.NewData(typ, int(shape[0]), []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data).(*FixedShapeTensorArray), nil
}

// ToDenseBool is ToDense for a column of bool tensors: a new array (Arrow's bits unpacked),
// of shape [rows, logical cell shape...]. A null row or element is an error wrapping ErrNull.
func ToDenseBool(a *FixedShapeTensorArray) (*ndarray.Dense[bool], error) {
	typ := a.ExtensionType().(*FixedShapeTensorType)
	if typ.valueType.ID() != arrow.BOOL {
		return nil, fmt.Errorf("arrowtensor: %s of %v read as bool: %w", FixedShapeTensorName, typ.valueType, ndarray.ErrDType)
	}
	if r := NullRow(a); r >= 0 {
		return nil, fmt.Errorf("arrowtensor: %s row %d is null or holds a null element: %w", FixedShapeTensorName, r, ErrNull)
	}
	storage := a.Storage().(*array.FixedSizeList)
	child := storage.ListValues().(*array.Boolean)
	cell, _ := cellSize(typ.shape)
	first := int64(storage.Data().Offset()) * cell
	values := make([]bool, int64(a.Len())*cell)
	for i := range values {
		values[i] = child.Value(int(first) + i)
	}
	d, err := rowsOf(a, typ, values, 0)
	if err != nil {
		return nil, err
	}
	return d.Clone(), nil // row-major, whatever the permutation
}

// rowsOf returns the rows of a, of type typ, as a view of its physical values, those of row 0
// from first on: shape [rows, logical cell shape...], the permutation in the strides.
func rowsOf[T ndarray.Element](a *FixedShapeTensorArray, typ *FixedShapeTensorType, values []T, first int64) (*ndarray.Dense[T], error) {
	cell, _ := cellSize(typ.shape)
	physical := ndarray.RowMajor(ndarray.Shape(typ.shape)).Strides
	layout := ndarray.Layout{Shape: ndarray.Shape{int64(a.Len())}, Strides: []int64{cell}, Offset: first}
	for i, n := range typ.LogicalShape() {
		layout.Shape = append(layout.Shape, n)
		layout.Strides = append(layout.Strides, physical[typ.axis(i)])
	}
	d, err := ndarray.FromLayout(values, layout)
	if err != nil {
		return nil, fmt.Errorf("arrowtensor: %s column of %d rows: %w: %w", FixedShapeTensorName, a.Len(), ErrUnsupported, err)
	}
	return d, nil
}

// rowMajorBuffer returns the elements of d in row-major order as an Arrow buffer: a view of
// d's memory when d is row-major contiguous, else a copy allocated from mem. Release it.
func rowMajorBuffer[T ndarray.Numeric](mem memory.Allocator, d *ndarray.Dense[T]) *memory.Buffer {
	if values, ok := d.Contiguous(); ok && d.Layout().IsRowMajor() {
		return memory.NewBufferBytes(ndarray.LittleEndianBytes(values))
	}
	return copyBuffer(mem, d.Size(), d.CopyTo)
}

// copyBuffer returns a buffer of n elements of T allocated from mem, filled by fill with the
// elements in order, little-endian. Release it.
func copyBuffer[T ndarray.Numeric](mem memory.Allocator, n int64, fill func([]T) error) *memory.Buffer {
	buf := newBuffer(mem, n*int64(ndarray.DTypeOf[T]().Size()))
	if dst, ok := ndarray.ViewBytes[T](buf.Bytes()); ok {
		_ = fill(dst) // the sizes match by construction
		return buf
	}
	values := make([]T, n) // a big-endian machine: order the bytes as Arrow wants them
	_ = fill(values)
	copy(buf.Bytes(), ndarray.LittleEndianBytes(values))
	return buf
}

// NullRow returns the first row of a that is null or holds a null element, or -1 when no row
// does. A dense tensor has no place for either.
func NullRow(a *FixedShapeTensorArray) int {
	storage := a.Storage().(*array.FixedSizeList)
	child := storage.ListValues()
	if storage.NullN() == 0 && child.NullN() == 0 {
		return -1
	}
	cell := int(storage.DataType().(*arrow.FixedSizeListType).Len())
	first := storage.Data().Offset() * cell
	for i := range a.Len() {
		if storage.IsNull(i) {
			return i
		}
		if child.NullN() > 0 {
			for j := first + i*cell; j < first+(i+1)*cell; j++ {
				if child.IsNull(j) {
					return i
				}
			}
		}
	}
	return -1
}

// ToDense returns the tensors of a as one Dense[T] of shape [a.Len(), logical cell shape...]
// that views the array's values without copying (unless they are not aligned for T), with the
// permutation applied through the strides. The view is read-only and must not be used after a
// is released. ToDense fails with ErrNull naming the first row that is null or holds a null
// element (see NullRow), with ndarray.ErrDType when T is not the value type, and with
// ErrUnsupported when the values buffer is shorter than the rows need.
func ToDense[T ndarray.Numeric](a *FixedShapeTensorArray) (*ndarray.Dense[T], error) {
	typ := a.ExtensionType().(*FixedShapeTensorType)
	dtype, err := DTypeFromArrow(typ.valueType)
	if err != nil {
		return nil, err
	}
	if want := ndarray.DTypeOf[T](); want != dtype {
		return nil, fmt.Errorf("arrowtensor: %s of %v read as %v: %w", FixedShapeTensorName, dtype, want, ndarray.ErrDType)
	}
	if r := NullRow(a); r >= 0 {
		return nil, fmt.Errorf("arrowtensor: %s row %d is null or holds a null element: %w", FixedShapeTensorName, r, ErrNull)
	}
	storage := a.Storage().(*array.FixedSizeList)
	cell, _ := cellSize(typ.shape)
	// The values of row 0 start storage-offset cells into the child, which starts at its own
	// offset in its buffer.
	raw := valueBytes(storage.ListValues().Data(), int64(dtype.Size()))
	first := int64(storage.Data().Offset()) * cell
	values, viewed := ndarray.ViewBytes[T](raw)
	d, err := rowsOf(a, typ, values, first)
	if err != nil {
		return nil, err
	}
	if viewed {
		d = d.AsReadOnly()
	}
	return d, nil
}
