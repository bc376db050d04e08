package ipc

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Tensor is a dense tensor decoded from an Arrow Tensor message. Its values are not copied:
// Data aliases the bytes the reader was given or the memory-mapped file, and stays valid until
// the last Release of a tensor read from a file (tensors read from a []byte or an io.Reader
// need no Release, and Release on them is harmless).
type Tensor struct {
	dtype   ndarray.DType
	shape   ndarray.Shape
	strides []int64 // bytes
	names   []string
	meta    arrow.Metadata
	data    []byte
	offset  int64
	owner   *mmap.Mapping
}

// DType returns the element type.
func (t *Tensor) DType() ndarray.DType { return t.dtype }

// Shape returns a copy of the shape.
func (t *Tensor) Shape() ndarray.Shape { return t.shape.Clone() }

// Strides returns a copy of the strides in bytes, one per dimension, as the message gave them
// (row-major ones when it gave none).
func (t *Tensor) Strides() []int64 { return append([]int64(nil), t.strides...) }

// DimNames returns the dimension names, or nil when every dimension is unnamed.
func (t *Tensor) DimNames() []string { return append([]string(nil), t.names...) }

// Metadata returns the message's custom metadata (see WithMetadata); empty when it has none.
func (t *Tensor) Metadata() arrow.Metadata { return t.meta }

// Data returns the bytes of the values region, little-endian, laid out by Strides. It is a
// view of the reader's input, not a copy.
func (t *Tensor) Data() []byte { return t.data }

// Offset returns the byte offset of the tensor's message in its input.
func (t *Tensor) Offset() int64 { return t.offset }

// Layout returns the layout of the values in elements, for ndarray.FromLayout.
func (t *Tensor) Layout() ndarray.Layout {
	width := int64(t.dtype.Size())
	strides := make([]int64, len(t.strides))
	for i, s := range t.strides {
		strides[i] = s / width
	}
	return ndarray.Layout{Shape: t.shape.Clone(), Strides: strides}
}

// Retain adds a reference to the memory behind Data; each Retain needs a Release.
func (t *Tensor) Retain() {
	if t.owner != nil {
		t.owner.Retain()
	}
}

// Release drops a reference to the memory behind Data. After the last Release of every tensor
// of a memory-mapped file (and the Close of its reader), the mapping is unmapped and arrays
// viewing it must not be used.
func (t *Tensor) Release() {
	if t.owner != nil {
		t.owner.Release()
	}
}

// AsDense returns the tensor as a Dense[T] with its layout (row-major, column-major or
// strided). The array is read-only and views Data without copying when the values are aligned
// for T and the machine is little-endian, which is the case for every tensor read from a
// memory-mapped file or from an io.Reader, and from a []byte whose first byte is 8-byte
// aligned; otherwise it is a writable copy. T must be the tensor's element type.
func AsDense[T ndarray.Numeric](t *Tensor) (*ndarray.Dense[T], error) {
	if want := ndarray.DTypeOf[T](); want != t.dtype {
		return nil, fmt.Errorf("ipc: tensor of %v read as %v: %w", t.dtype, want, ndarray.ErrDType)
	}
	values, zeroCopy := ndarray.ViewBytes[T](t.data)
	d, err := ndarray.FromLayout(values, t.Layout())
	if err != nil {
		// decodeTensor validated the layout against the data.
		return nil, fmt.Errorf("ipc: tensor at byte %d: %w: %w", t.offset, ErrInvalid, err)
	}
	if zeroCopy {
		d = d.AsReadOnly()
	}
	return d, nil
}

// decodeAny decodes a Tensor or SparseTensor message.
func decodeAny(m message, lim Limits) (AnyTensor, error) {
	switch h := m.meta.HeaderType(); h {
	case arrowfb.MessageHeaderTensor:
		return decodeTensor(m, lim)
	case arrowfb.MessageHeaderSparseTensor:
		return decodeSparse(m, lim)
	default:
		return nil, fmt.Errorf("ipc: tensor at byte %d: a %v message is not a tensor (record batches are read with BatchReader): %w", m.offset, h, ErrUnsupported)
	}
}

// AnyTensor is a tensor read from a message: a *Tensor or a *SparseTensor.
type AnyTensor interface {
	// DType returns the element type.
	DType() ndarray.DType
	// Shape returns a copy of the (dense) shape.
	Shape() ndarray.Shape
	// DimNames returns the dimension names, or nil when every dimension is unnamed.
	DimNames() []string
	// Metadata returns the message's custom metadata.
	Metadata() arrow.Metadata
	// Offset returns the byte offset of the message in its input.
	Offset() int64
	// WriteValues writes the elements in dense row-major order, little-endian.
	WriteValues(w io.Writer) (int64, error)
	// Retain and Release count references to the memory the tensor views.
	Retain()
	Release()
}

var (
	_ AnyTensor = (*Tensor)(nil)
	_ AnyTensor = (*SparseTensor)(nil)
)

// decodeTensor validates a Tensor message and returns the tensor it describes, its values a
// view of m.body.
func decodeTensor(m message, lim Limits) (*Tensor, error) {
	fail := func(kind error, format string, args ...any) (*Tensor, error) {
		return nil, fmt.Errorf("ipc: tensor at byte %d: %s: %w", m.offset, fmt.Sprintf(format, args...), kind)
	}
	var tbl flatbuffers.Table
	m.meta.Header(&tbl) // present: VerifyMessage checked it
	var ft arrowfb.Tensor
	ft.Init(tbl.Bytes, tbl.Pos)

	dtype, err := elementType(ft.TypeType(), func(t *flatbuffers.Table) { ft.Type(t) })
	if err != nil {
		return fail(ErrInvalid, "element type: %v", err)
	}
	shape, names, err := decodeDims(ft.ShapeLength(), ft.Shape, lim, false)
	if err != nil {
		return nil, fmt.Errorf("ipc: tensor at byte %d: %w", m.offset, err)
	}
	rank := len(shape)
	t := &Tensor{dtype: dtype, shape: shape, names: names, meta: m.metadata(), offset: m.offset}
	width := int64(dtype.Size())

	var buf arrowfb.Buffer
	ft.Data(&buf)
	if t.data, err = (bodyBuffers{m.body}).region(buf.Offset(), buf.Length(), "data"); err != nil {
		return fail(ErrInvalid, "%v", err)
	}

	switch n := ft.StridesLength(); {
	case n == 0:
		t.strides = rowMajorBytes(t.shape, width)
	case n != rank:
		return fail(ErrInvalid, "%d strides for rank %d", n, rank)
	default:
		t.strides = make([]int64, n)
		for i := range n {
			s := ft.Strides(i)
			if s < 0 || s%width != 0 {
				return fail(ErrInvalid, "stride %d of dimension %d is not a non-negative multiple of the %d-byte element", s, i, width)
			}
			t.strides[i] = s
		}
	}
	if err := t.Layout().Validate(int64(len(t.data)) / width); err != nil {
		return fail(ErrInvalid, "shape %v with strides %v does not fit in %d bytes of data: %v", t.shape, t.strides, len(t.data), err)
	}
	return t, nil
}

// elementType maps an Arrow Type union member onto a DType; table fills in the member's table.
func elementType(kind arrowfb.Type, table func(*flatbuffers.Table)) (ndarray.DType, error) {
	var tbl flatbuffers.Table
	table(&tbl)
	switch kind {
	case arrowfb.TypeInt:
		var it arrowfb.Int
		it.Init(tbl.Bytes, tbl.Pos)
		signed := map[int32]ndarray.DType{8: ndarray.Int8, 16: ndarray.Int16, 32: ndarray.Int32, 64: ndarray.Int64}
		unsigned := map[int32]ndarray.DType{8: ndarray.Uint8, 16: ndarray.Uint16, 32: ndarray.Uint32, 64: ndarray.Uint64}
		d, ok := unsigned[it.BitWidth()]
		if it.IsSigned() {
			d, ok = signed[it.BitWidth()]
		}
		if !ok {
			return 0, fmt.Errorf("integer bit width %d", it.BitWidth())
		}
		return d, nil
	case arrowfb.TypeFloatingPoint:
		var fp arrowfb.FloatingPoint
		fp.Init(tbl.Bytes, tbl.Pos)
		switch fp.Precision() {
		case arrowfb.PrecisionHALF:
			return ndarray.Float16, nil
		case arrowfb.PrecisionSINGLE:
			return ndarray.Float32, nil
		case arrowfb.PrecisionDOUBLE:
			return ndarray.Float64, nil
		}
		return 0, fmt.Errorf("floating-point precision %d", fp.Precision())
	}
	return 0, fmt.Errorf("%v: tensors hold integers and floating-point numbers only", kind)
}

// decodeDims decodes the n TensorDims of a Tensor or SparseTensor header (at fills in dim i)
// into a shape, checked against the limits, and names (nil when every dimension is unnamed).
// boundDims bounds each dimension by MaxElements too, for layouts that allocate per row.
func decodeDims(n int, at func(*arrowfb.TensorDim, int) bool, lim Limits, boundDims bool) (ndarray.Shape, []string, error) {
	if n > lim.MaxRank {
		return nil, nil, fmt.Errorf("rank %d exceeds the limit of %d: %w", n, lim.MaxRank, ErrLimit)
	}
	shape, names, named := make(ndarray.Shape, n), make([]string, n), false
	var dim arrowfb.TensorDim
	for i := range n {
		at(&dim, i)
		if shape[i] = dim.Size(); shape[i] < 0 {
			return nil, nil, fmt.Errorf("dimension %d is %d: %w", i, shape[i], ErrInvalid)
		}
		if boundDims && shape[i] > lim.MaxElements {
			return nil, nil, fmt.Errorf("dimension %d is %d, more than the limit of %d elements: %w", i, shape[i], lim.MaxElements, ErrLimit)
		}
		names[i] = string(dim.Name())
		named = named || names[i] != ""
	}
	if !named {
		names = nil
	}
	size, err := checkedSize(shape)
	if err != nil {
		return nil, nil, fmt.Errorf("shape %v: %v: %w", shape, err, ErrInvalid)
	}
	if size > lim.MaxElements {
		return nil, nil, fmt.Errorf("shape %v has %d elements, more than the limit of %d: %w", shape, size, lim.MaxElements, ErrLimit)
	}
	return shape, names, nil
}

// checkedSize returns the number of elements of a shape with no negative dimension.
func checkedSize(s ndarray.Shape) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	return s.Size(), nil
}

// rowMajorBytes returns C-order strides in bytes, computed as Arrow C++ does: an empty
// tensor gets the element width for every stride.
func rowMajorBytes(shape ndarray.Shape, width int64) []int64 {
	return scaledStrides(ndarray.RowMajor(shape), width)
}

// scaledStrides returns the strides of l in bytes, with Arrow C++'s rule for empty tensors.
func scaledStrides(l ndarray.Layout, width int64) []int64 {
	strides := make([]int64, len(l.Strides))
	for i, s := range l.Strides {
		strides[i] = s * width
		if l.Size() == 0 {
			strides[i] = width
		}
	}
	return strides
}

// Dense returns the tensor as a Dense of its element type, as AsDense does, behind the
// type-free ndarray.Array interface; a type switch recovers the *ndarray.Dense[T].
func (t *Tensor) Dense() (ndarray.Array, error) {
	ops, ok := typedOps[t.dtype]
	if !ok {
		return nil, fmt.Errorf("ipc: tensor of %v: %w", t.dtype, ndarray.ErrDType)
	}
	return ops.dense(t)
}

// WriteValues writes the tensor's values to w in row-major order, little-endian, whatever its
// layout: the bytes NumPy's tobytes() and Arrow C++'s row-major ToTensor give. It returns the
// number of bytes written.
func (t *Tensor) WriteValues(w io.Writer) (int64, error) {
	d, err := t.Dense()
	if err != nil {
		return 0, err
	}
	return d.WriteTo(w)
}
