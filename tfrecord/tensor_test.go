package tfrecord_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

func TestSerializedTensorIsTensorFlows(t *testing.T) {
	// tf.io.serialize_tensor(tf.constant([1, 2, 3], tf.int32)): dtype 3, shape {dim {size 3}},
	// tensor_content of three little-endian int32 (Tensor::AsProtoTensorContent).
	b, err := tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3}, 3)), nil)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x08, 0x03, 0x12, 0x04, 0x12, 0x02, 0x08, 0x03, 0x22, 0x0c,
		1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}, b)
	// Strings go in string_val: tf.io.serialize_tensor(tf.constant([b"ab", b""])).
	b, err = tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]string{"ab", ""}, 2)), nil)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x08, 0x07, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x42, 0x02, 'a', 'b', 0x42, 0x00}, b)
}

func TestTensorsOfEveryDTypeRoundTrip(t *testing.T) {
	src := ndarray.Must(ndarray.Must(ndarray.Arange[float64](0, 6, 1)).Reshape(2, 3))
	for _, d := range ndarray.DTypes() {
		t.Run(d.String(), func(t *testing.T) {
			a, err := ndarray.ConvertTo(src, d)
			require.NoError(t, err)
			b, err := tfrecord.EncodeTensor(a, []string{"batch", ""})
			require.NoError(t, err)
			assert.Equal(t, tfrecord.TypeTensorProto, tfrecord.Classify(b))
			got, names, err := tfrecord.DecodeTensor(b, limits.Limits{})
			require.NoError(t, err)
			assert.Equal(t, d, got.DType())
			assert.Equal(t, ndarray.Shape{2, 3}, got.Shape())
			assert.Equal(t, []string{"batch", ""}, names)
			assert.Equal(t, valueBytes(t, a), valueBytes(t, got))
		})
	}
	empty, err := tfrecord.EncodeTensor(ndarray.New[float32](0, 5), nil)
	require.NoError(t, err)
	got, names, err := tfrecord.DecodeTensor(empty, limits.Limits{})
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{0, 5}, got.Shape())
	assert.Nil(t, names)
}

// tensorProto marshals tp.
func tensorProto(t *testing.T, tp *tfpb.TensorProto) []byte {
	b, err := proto.Marshal(tp)
	require.NoError(t, err)
	return b
}

func shapeOf(sizes ...int64) *tfpb.TensorShapeProto {
	s := &tfpb.TensorShapeProto{}
	for _, n := range sizes {
		s.Dim = append(s.Dim, &tfpb.TensorShapeProto_Dim{Size: n})
	}
	return s
}

func TestTypedValuesFillAsTensorFlowFillsThem(t *testing.T) {
	// tf.make_tensor_proto writes small tensors in the *_val fields; the last value fills the
	// rest, and no value means zeros.
	for _, tc := range []struct {
		tp   *tfpb.TensorProto
		want any
	}{
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: shapeOf(2, 2), FloatVal: []float32{1, 2}}, []float32{1, 2, 2, 2}},
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_INT8, TensorShape: shapeOf(3), IntVal: []int32{-1, 300}}, []int8{-1, 44, 44}},
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_HALF, TensorShape: shapeOf(2), HalfVal: []int32{0x3c00}}, "[1. 1.]"},
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_BOOL, TensorShape: shapeOf(2), BoolVal: []bool{true}}, []bool{true, true}},
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_STRING, TensorShape: shapeOf(3), StringVal: [][]byte{[]byte("a")}}, []string{"a", "a", "a"}},
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_UINT64, TensorShape: shapeOf(2)}, []uint64{0, 0}},
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_INT64, TensorShape: shapeOf(), Int64Val: []int64{7}}, []int64{7}},
		// Tensor::AsProtoTensorContent of strings: varint32 lengths, then the bytes.
		{&tfpb.TensorProto{Dtype: tfpb.DataType_DT_STRING, TensorShape: shapeOf(3), TensorContent: []byte("\x02\x00\x03abxyz")}, []string{"ab", "", "xyz"}},
	} {
		got, _, err := tfrecord.DecodeTensor(tensorProto(t, tc.tp), limits.Limits{})
		require.NoError(t, err, tc.tp.Dtype)
		if s, ok := tc.want.(string); ok {
			assert.Equal(t, s, got.String(), tc.tp.Dtype)
			continue
		}
		assert.Equal(t, tc.want, ravel(got), tc.tp.Dtype)
	}
}

// ravel returns a dense array's values as a typed slice.
func ravel(a ndarray.Array) any {
	switch d := a.(type) {
	case *ndarray.Dense[float32]:
		return d.Ravel()
	case *ndarray.Dense[int8]:
		return d.Ravel()
	case *ndarray.Dense[bool]:
		return d.Ravel()
	case *ndarray.Dense[string]:
		return d.Ravel()
	case *ndarray.Dense[uint64]:
		return d.Ravel()
	case *ndarray.Dense[int64]:
		return d.Ravel()
	}
	return nil
}

func TestBadTensorProtos(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tp     *tfpb.TensorProto
		lim    limits.Limits
		target error
		msg    string
	}{
		{"content too short", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: shapeOf(3), TensorContent: make([]byte, 11)}, limits.Limits{}, tfrecord.ErrInvalid, "tensor_content holds 11 bytes, the shape needs 12"},
		{"too many values", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: shapeOf(1), FloatVal: []float32{1, 2}}, limits.Limits{}, tfrecord.ErrInvalid, "2 values for 1 elements"},
		{"negative size", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: shapeOf(-1)}, limits.Limits{}, tfrecord.ErrInvalid, "dimension size -1"},
		{"unknown rank", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: &tfpb.TensorShapeProto{UnknownRank: true}}, limits.Limits{}, tfrecord.ErrInvalid, "unknown rank"},
		{"no dtype", &tfpb.TensorProto{TensorShape: shapeOf(1)}, limits.Limits{}, tfrecord.ErrInvalid, "dtype 0"},
		{"complex", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_COMPLEX64, TensorShape: shapeOf(1)}, limits.Limits{}, tfrecord.ErrUnsupported, "DT_COMPLEX64"},
		{"elements overflow", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: shapeOf(1<<40, 1<<40)}, limits.Limits{}, limits.ErrExceeded, "more than the limit of"},
		{"one value fills 2^30", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_DOUBLE, TensorShape: shapeOf(1 << 30), DoubleVal: []float64{1}}, limits.Limits{}, limits.ErrExceeded, "1 values fill 1073741824 elements"},
		{"string lengths past the content", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_STRING, TensorShape: shapeOf(2), TensorContent: []byte("\x05\x01abc")}, limits.Limits{}, tfrecord.ErrInvalid, "2 strings of 6 bytes in all, 3 bytes"},
		{"more strings than bytes", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_STRING, TensorShape: shapeOf(1 << 30), TensorContent: []byte("\x00")}, limits.Limits{}, tfrecord.ErrInvalid, "cannot hold 1073741824 string lengths"},
		{"rank", &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: shapeOf(1, 1, 1)}, limits.Limits{MaxRank: 2}, limits.ErrExceeded, "rank 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tfrecord.DecodeTensor(tensorProto(t, tc.tp), tc.lim)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.target)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	_, _, err := tfrecord.DecodeTensor([]byte{0x08}, limits.Limits{})
	assert.ErrorIs(t, err, tfrecord.ErrInvalid, "a varint cut short")
}
