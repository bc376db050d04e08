package tfrecord

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// dtypes maps the TensorFlow data types ndarrow maps to its own; the others (complex,
// bfloat16, quantized, resource, variant) are ErrUnsupported.
var dtypes = map[tfpb.DataType]ndarray.DType{
	tfpb.DataType_DT_FLOAT: ndarray.Float32, tfpb.DataType_DT_DOUBLE: ndarray.Float64,
	tfpb.DataType_DT_HALF: ndarray.Float16, tfpb.DataType_DT_INT8: ndarray.Int8,
	tfpb.DataType_DT_INT16: ndarray.Int16, tfpb.DataType_DT_INT32: ndarray.Int32,
	tfpb.DataType_DT_INT64: ndarray.Int64, tfpb.DataType_DT_UINT8: ndarray.Uint8,
	tfpb.DataType_DT_UINT16: ndarray.Uint16, tfpb.DataType_DT_UINT32: ndarray.Uint32,
	tfpb.DataType_DT_UINT64: ndarray.Uint64, tfpb.DataType_DT_BOOL: ndarray.Bool,
	tfpb.DataType_DT_STRING: ndarray.String,
}

// DataTypeOf returns TensorFlow's data type for an ndarrow dtype.
func DataTypeOf(d ndarray.DType) (tfpb.DataType, bool) {
	for t, dt := range dtypes {
		if dt == d {
			return t, true
		}
	}
	return tfpb.DataType_DT_INVALID, false
}

// checkTensorProto returns an error unless tp declares nothing unknown, has a dtype
// TensorFlow defines and a shape of known rank with no negative size.
func checkTensorProto(tp *tfpb.TensorProto) error {
	if unknown(tp) || unknown(tp.TensorShape) {
		return fmt.Errorf("fields a TensorProto does not declare, or of the wrong wire type: %w", ErrInvalid)
	}
	for _, d := range tp.GetTensorShape().GetDim() {
		if unknown(d) {
			return fmt.Errorf("fields a TensorShapeProto.Dim does not declare: %w", ErrInvalid)
		}
		if d.Size < 0 {
			return fmt.Errorf("dimension size %d: %w", d.Size, ErrInvalid)
		}
	}
	if tp.GetTensorShape().GetUnknownRank() {
		return fmt.Errorf("a shape of unknown rank: %w", ErrInvalid)
	}
	if _, ok := tfpb.DataType_name[int32(tp.Dtype)]; !ok || tp.Dtype == tfpb.DataType_DT_INVALID {
		return fmt.Errorf("dtype %d: %w", int32(tp.Dtype), ErrInvalid)
	}
	return nil
}

// DecodeTensor decodes a serialized TensorProto (what tf.io.serialize_tensor writes) into a
// dense array, and the dimension names its shape holds (nil when none has one). Values come
// from tensor_content (little-endian, row-major, exactly elements × width bytes; strings as
// TensorFlow's AsProtoTensorContent lists them: a varint length each, then their bytes), or else from
// the dtype's *_val field, whose last value fills any elements it does not list, as TensorFlow
// fills them; that expansion is bounded by lim.MaxDenseElements. The array is a copy.
func DecodeTensor(record []byte, lim limits.Limits) (ndarray.Array, []string, error) {
	lim = lim.WithDefaults()
	var tp tfpb.TensorProto
	if err := proto.Unmarshal(record, &tp); err != nil {
		return nil, nil, fmt.Errorf("tfrecord: not a TensorProto: %v: %w", err, ErrInvalid)
	}
	if err := checkTensorProto(&tp); err != nil {
		return nil, nil, fmt.Errorf("tfrecord: TensorProto: %w", err)
	}
	d, ok := dtypes[tp.Dtype]
	if !ok {
		return nil, nil, fmt.Errorf("tfrecord: TensorProto of %v: %w", tp.Dtype, ErrUnsupported)
	}
	dims := tp.GetTensorShape().GetDim()
	if len(dims) > lim.MaxRank {
		return nil, nil, fmt.Errorf("tfrecord: TensorProto of rank %d, more than the limit of %d: %w", len(dims), lim.MaxRank, limits.ErrExceeded)
	}
	shape := make(ndarray.Shape, len(dims))
	var names []string
	n := int64(1)
	for i, dim := range dims {
		shape[i] = dim.Size
		if dim.Size != 0 && n > lim.MaxElements/dim.Size {
			return nil, nil, fmt.Errorf("tfrecord: TensorProto shape %v holds more than the limit of %d elements: %w", sizes(dims), lim.MaxElements, limits.ErrExceeded)
		}
		n *= dim.Size
		if dim.Name != "" {
			names = make([]string, len(dims))
		}
	}
	for i, dim := range dims {
		if names != nil {
			names[i] = dim.Name
		}
	}
	a, err := decoders[d](&tp, shape, n, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("tfrecord: TensorProto %v %v: %w", tp.Dtype, shape, err)
	}
	return a, names, nil
}

func sizes(dims []*tfpb.TensorShapeProto_Dim) []int64 {
	s := make([]int64, len(dims))
	for i, d := range dims {
		s[i] = d.Size
	}
	return s
}

// decoders is the one table of per-dtype TensorProto decoders.
var decoders = map[ndarray.DType]func(*tfpb.TensorProto, ndarray.Shape, int64, limits.Limits) (ndarray.Array, error){
	ndarray.Float32: decodeNumbers(func(tp *tfpb.TensorProto) []float32 { return tp.FloatVal }),
	ndarray.Float64: decodeNumbers(func(tp *tfpb.TensorProto) []float64 { return tp.DoubleVal }),
	ndarray.Float16: decodeNumbers(func(tp *tfpb.TensorProto) []float16.Num {
		return convertInto(nil, tp.HalfVal, func(v int32) float16.Num { return float16.FromBits(uint16(v)) })
	}),
	ndarray.Int8:  decodeNumbers(func(tp *tfpb.TensorProto) []int8 { return narrow[int8](tp.IntVal) }),
	ndarray.Int16: decodeNumbers(func(tp *tfpb.TensorProto) []int16 { return narrow[int16](tp.IntVal) }),
	ndarray.Int32: decodeNumbers(func(tp *tfpb.TensorProto) []int32 { return tp.IntVal }),
	ndarray.Int64: decodeNumbers(func(tp *tfpb.TensorProto) []int64 { return tp.Int64Val }),
	ndarray.Uint8: decodeNumbers(func(tp *tfpb.TensorProto) []uint8 { return narrow[uint8](tp.IntVal) }),
	ndarray.Uint16: decodeNumbers(func(tp *tfpb.TensorProto) []uint16 {
		return narrow[uint16](tp.IntVal)
	}),
	ndarray.Uint32: decodeNumbers(func(tp *tfpb.TensorProto) []uint32 { return tp.Uint32Val }),
	ndarray.Uint64: decodeNumbers(func(tp *tfpb.TensorProto) []uint64 { return tp.Uint64Val }),
	ndarray.Bool:   decodeBools,
	ndarray.String: decodeStrings,
}

// narrow converts int_val values to a narrower integer type, as TensorFlow truncates them.
func narrow[T int8 | int16 | uint8 | uint16](v []int32) []T {
	return convertInto(nil, v, func(x int32) T { return T(x) })
}

// decodeNumbers returns the decoder of a numeric dtype whose typed values vals returns.
func decodeNumbers[T ndarray.Numeric](vals func(*tfpb.TensorProto) []T) func(*tfpb.TensorProto, ndarray.Shape, int64, limits.Limits) (ndarray.Array, error) {
	return func(tp *tfpb.TensorProto, shape ndarray.Shape, n int64, lim limits.Limits) (ndarray.Array, error) {
		if len(tp.TensorContent) > 0 {
			width := int64(ndarray.DTypeOf[T]().Size())
			if int64(len(tp.TensorContent)) != n*width {
				return nil, fmt.Errorf("tensor_content holds %d bytes, the shape needs %d: %w", len(tp.TensorContent), n*width, ErrInvalid)
			}
			data, _ := ndarray.ViewBytes[T](tp.TensorContent)
			return ndarray.FromSlice(data, shape...)
		}
		data, err := fill(vals(tp), n, lim)
		if err != nil {
			return nil, err
		}
		return ndarray.FromSlice(data, shape...)
	}
}

// fill returns n values: v itself when it holds n, else v with its last value (zero when v is
// empty) repeated to n, within lim.MaxDenseElements.
func fill[T any](v []T, n int64, lim limits.Limits) ([]T, error) {
	switch {
	case int64(len(v)) == n:
		return v, nil
	case int64(len(v)) > n:
		return nil, fmt.Errorf("%d values for %d elements: %w", len(v), n, ErrInvalid)
	case n > lim.MaxDenseElements:
		return nil, fmt.Errorf("%d values fill %d elements, more than the limit of %d: %w", len(v), n, lim.MaxDenseElements, limits.ErrExceeded)
	}
	out := make([]T, n)
	copy(out, v)
	if len(v) > 0 {
		last := v[len(v)-1]
		for i := len(v); i < len(out); i++ {
			out[i] = last
		}
	}
	return out, nil
}

func decodeBools(tp *tfpb.TensorProto, shape ndarray.Shape, n int64, lim limits.Limits) (ndarray.Array, error) {
	vals := tp.BoolVal
	if len(tp.TensorContent) > 0 {
		if int64(len(tp.TensorContent)) != n {
			return nil, fmt.Errorf("tensor_content holds %d bytes, the shape needs %d: %w", len(tp.TensorContent), n, ErrInvalid)
		}
		vals = convertInto(nil, tp.TensorContent, func(b byte) bool { return b != 0 })
	}
	data, err := fill(vals, n, lim)
	if err != nil {
		return nil, err
	}
	return ndarray.FromSlice(data, shape...)
}

func decodeStrings(tp *tfpb.TensorProto, shape ndarray.Shape, n int64, lim limits.Limits) (ndarray.Array, error) {
	if len(tp.TensorContent) > 0 {
		data, err := decodeStringList(tp.TensorContent, n)
		if err != nil {
			return nil, err
		}
		return ndarray.FromSlice(data, shape...)
	}
	if int64(len(tp.StringVal)) > n {
		return nil, fmt.Errorf("%d values for %d elements: %w", len(tp.StringVal), n, ErrInvalid)
	}
	vals := convertInto(nil, tp.StringVal, func(b []byte) string { return string(b) })
	data, err := fill(vals, n, lim)
	if err != nil {
		return nil, err
	}
	return ndarray.FromSlice(data, shape...)
}

// decodeStringList decodes n strings as TensorFlow's AsProtoTensorContent encodes them in
// tensor_content: n varint32 lengths, then the bytes of each string back to back, exactly.
func decodeStringList(b []byte, n int64) ([]string, error) {
	if n > int64(len(b)) {
		return nil, fmt.Errorf("tensor_content of %d bytes cannot hold %d string lengths: %w", len(b), n, ErrInvalid)
	}
	lengths := make([]uint64, n)
	rest := b
	var total uint64
	for i := range lengths {
		v, k := protowire.ConsumeVarint(rest)
		if k < 0 || v > math.MaxUint32 {
			return nil, fmt.Errorf("tensor_content: string %d: no varint32 length: %w", i, ErrInvalid)
		}
		lengths[i], rest, total = v, rest[k:], total+v
	}
	if total != uint64(len(rest)) {
		return nil, fmt.Errorf("tensor_content: %d strings of %d bytes in all, %d bytes after their lengths: %w", n, total, len(rest), ErrInvalid)
	}
	out := make([]string, n)
	for i, l := range lengths {
		out[i], rest = string(rest[:l]), rest[l:]
	}
	return out, nil
}

// EncodeTensor serializes a dense array as tf.io.serialize_tensor does: numbers and bools in
// tensor_content (little-endian, row-major), strings in string_val. Dimension names, when
// given (one per axis), go into the shape's Dim.name, which TensorFlow ignores.
func EncodeTensor(a ndarray.Array, dimNames []string) ([]byte, error) {
	dt, ok := DataTypeOf(a.DType())
	if !ok {
		return nil, fmt.Errorf("tfrecord: dtype %v: %w", a.DType(), ErrUnsupported)
	}
	if dimNames != nil && len(dimNames) != a.Rank() {
		return nil, fmt.Errorf("tfrecord: %d dimension names for rank %d", len(dimNames), a.Rank())
	}
	tp := &tfpb.TensorProto{Dtype: dt, TensorShape: &tfpb.TensorShapeProto{}}
	for i, size := range a.Shape() {
		dim := &tfpb.TensorShapeProto_Dim{Size: size}
		if dimNames != nil {
			dim.Name = dimNames[i]
		}
		tp.TensorShape.Dim = append(tp.TensorShape.Dim, dim)
	}
	if err := contentEncoders[a.DType()](a, tp); err != nil {
		return nil, err
	}
	return proto.Marshal(tp)
}

// contentEncoders is the one table of per-dtype TensorProto value encoders.
var contentEncoders = map[ndarray.DType]func(ndarray.Array, *tfpb.TensorProto) error{
	ndarray.Int8: encodeContent[int8], ndarray.Int16: encodeContent[int16], ndarray.Int32: encodeContent[int32],
	ndarray.Int64: encodeContent[int64], ndarray.Uint8: encodeContent[uint8], ndarray.Uint16: encodeContent[uint16],
	ndarray.Uint32: encodeContent[uint32], ndarray.Uint64: encodeContent[uint64], ndarray.Float16: encodeContent[float16.Num],
	ndarray.Float32: encodeContent[float32], ndarray.Float64: encodeContent[float64], ndarray.Bool: encodeContent[bool],
	ndarray.String: encodeStrings,
}

func encodeContent[T ndarray.Numeric | bool](a ndarray.Array, tp *tfpb.TensorProto) error {
	d, ok := a.(*ndarray.Dense[T])
	if !ok {
		return fmt.Errorf("tfrecord: %T is not a dense array", a)
	}
	if d.Size() > 0 {
		tp.TensorContent = ndarray.LittleEndianBytes(d.Ravel())
	}
	return nil
}

func encodeStrings(a ndarray.Array, tp *tfpb.TensorProto) error {
	d, ok := a.(*ndarray.Dense[string])
	if !ok {
		return fmt.Errorf("tfrecord: %T is not a dense array", a)
	}
	for _, s := range d.Ravel() {
		tp.StringVal = append(tp.StringVal, []byte(s))
	}
	return nil
}
