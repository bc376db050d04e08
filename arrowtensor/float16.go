package arrowtensor

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/tensor"
)

// float16Tensor implements tensor.Interface for float16 values, which arrow-go's tensor
// package cannot hold.
type float16Tensor struct {
	refs    atomic.Int64
	data    arrow.ArrayData
	shape   []int64
	strides []int64
	names   []string
}

var _ tensor.Interface = (*float16Tensor)(nil)

func newFloat16Tensor(data arrow.ArrayData, shape, strides []int64, names []string) *float16Tensor {
	data.Retain()
	t := &float16Tensor{data: data, shape: shape, strides: strides, names: names}
	t.refs.Store(1)
	return t
}

func (t *float16Tensor) Retain() { t.refs.Add(1) }

func (t *float16Tensor) Release() {
	if t.refs.Add(-1) == 0 {
		t.data.Release()
		t.data = nil
	}
}

func (t *float16Tensor) Len() int {
	n := int64(1)
	for _, d := range t.shape {
		n *= d
	}
	return int(n)
}

func (t *float16Tensor) Shape() []int64           { return t.shape }
func (t *float16Tensor) Strides() []int64         { return t.strides }
func (t *float16Tensor) NumDims() int             { return len(t.shape) }
func (t *float16Tensor) DataType() arrow.DataType { return arrow.FixedWidthTypes.Float16 }
func (t *float16Tensor) Data() arrow.ArrayData    { return t.data }
func (t *float16Tensor) IsMutable() bool          { return false }

func (t *float16Tensor) DimName(i int) string {
	if t.names == nil {
		return ""
	}
	return t.names[i]
}

func (t *float16Tensor) DimNames() []string { return t.names }

func (t *float16Tensor) IsContiguous() bool { return t.IsRowMajor() || t.IsColMajor() }

func (t *float16Tensor) IsRowMajor() bool {
	want := int64(2)
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != want {
			return false
		}
		want *= t.shape[i]
	}
	return true
}

func (t *float16Tensor) IsColMajor() bool {
	want := int64(2)
	for i := range t.shape {
		if t.shape[i] != 1 && t.strides[i] != want {
			return false
		}
		want *= t.shape[i]
	}
	return true
}
