package arrowtensor

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/tensor"

	"github.com/ndarrow/ndarrow/ndarray"
)

// ToTensor returns d as an Arrow Go tensor with the given dimension names (nil for none).
// The tensor views d's memory without copying when d is contiguous in row-major or
// column-major order — it must then not outlive d's memory; Arrow tensors have no offset and
// only non-negative strides, so any other layout is copied to row-major, in memory allocated
// from mem. For float16, which arrow-go's tensor package does not support, the result is this
// package's own implementation of tensor.Interface. Release it (which frees nothing of d).
func ToTensor[T ndarray.Numeric](mem memory.Allocator, d *ndarray.Dense[T], names []string) (tensor.Interface, error) {
	if names != nil && len(names) != d.Rank() {
		return nil, fmt.Errorf("arrowtensor: %d dimension names for rank %d: %w", len(names), d.Rank(), ndarray.ErrShape)
	}
	l := d.Layout()
	order := ndarray.ColumnMajor(l.Shape)
	if !l.IsColumnMajor() || l.IsRowMajor() {
		order = ndarray.RowMajor(l.Shape)
	}
	var buf *memory.Buffer
	if values, ok := d.Contiguous(); ok {
		buf = memory.NewBufferBytes(ndarray.LittleEndianBytes(values))
	} else {
		buf = rowMajorBuffer(mem, d)
	}
	defer buf.Release()
	width := int64(d.DType().Size())
	strides := make([]int64, len(order.Strides))
	for i, s := range order.Strides {
		strides[i] = s * width
	}
	dt := d.DType().ArrowType()
	data := array.NewData(dt, int(d.Size()), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	shape := []int64(l.Shape.Clone())
	if dt.ID() == arrow.FLOAT16 {
		return newFloat16Tensor(data, shape, strides, names), nil
	}
	return tensor.New(data, shape, strides, names), nil
}

// FromTensor returns the tensor t as a Dense[T] with t's shape and strides. The array views
// t's data without copying (a copy is made only for values not aligned for T); it is read-only
// unless t is mutable, and must not be used after t is released. FromTensor fails with
// ndarray.ErrDType when T is not t's element type and ErrUnsupported for strides that are not
// non-negative multiples of the element width.
func FromTensor[T ndarray.Numeric](t tensor.Interface) (*ndarray.Dense[T], error) {
	dtype, err := DTypeFromArrow(t.DataType())
	if err != nil {
		return nil, err
	}
	if want := ndarray.DTypeOf[T](); want != dtype {
		return nil, fmt.Errorf("arrowtensor: tensor of %v read as %v: %w", dtype, want, ndarray.ErrDType)
	}
	width := int64(dtype.Size())
	shape := ndarray.Shape(append([]int64(nil), t.Shape()...))
	strides := make([]int64, len(t.Strides()))
	for i, s := range t.Strides() {
		if s < 0 || s%width != 0 {
			return nil, fmt.Errorf("arrowtensor: stride %d of dimension %d is not a non-negative multiple of %d: %w", s, i, width, ErrUnsupported)
		}
		strides[i] = s / width
	}
	raw := valueBytes(t.Data(), width)
	values, viewed := ndarray.ViewBytes[T](raw)
	d, err := ndarray.FromLayout(values, ndarray.Layout{Shape: shape, Strides: strides})
	if err != nil {
		return nil, fmt.Errorf("arrowtensor: tensor %v: %w", shape, err)
	}
	if viewed && !t.IsMutable() {
		d = d.AsReadOnly()
	}
	return d, nil
}

// valueBytes returns the values buffer of fixed-width array data from its offset on.
func valueBytes(data arrow.ArrayData, width int64) []byte {
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return nil
	}
	b := bufs[1].Bytes()
	start := int64(data.Offset()) * width
	if start > int64(len(b)) {
		return nil
	}
	return b[start:]
}
