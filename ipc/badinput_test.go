package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ndarray"
)

// spec describes a Tensor message to build, valid or not.
type spec struct {
	version    arrowfb.MetadataVersion
	headerType arrowfb.MessageHeader
	typeType   arrowfb.Type
	bitWidth   int32
	signed     bool
	shape      []int64
	names      []string
	strides    []int64 // nil: absent
	noData     bool
	dataOffset int64
	dataLength int64
	bodyLength int64
	body       []byte
}

// validSpec is a 2×3 int32 tensor, row-major, with its 24-byte body.
func validSpec() spec {
	body := make([]byte, 24)
	for i := range 6 {
		binary.LittleEndian.PutUint32(body[4*i:], uint32(i))
	}
	return spec{
		version: arrowfb.MetadataVersionV5, headerType: arrowfb.MessageHeaderTensor,
		typeType: arrowfb.TypeInt, bitWidth: 32, signed: true,
		shape: []int64{2, 3}, strides: []int64{12, 4},
		dataLength: 24, bodyLength: 24, body: body,
	}
}

func (s spec) metadata() []byte {
	b := flatbuffers.NewBuilder(256)
	var typeOff flatbuffers.UOffsetT
	switch s.typeType {
	case arrowfb.TypeInt:
		arrowfb.IntStart(b)
		arrowfb.IntAddBitWidth(b, s.bitWidth)
		arrowfb.IntAddIsSigned(b, s.signed)
		typeOff = arrowfb.IntEnd(b)
	case arrowfb.TypeFloatingPoint:
		arrowfb.FloatingPointStart(b)
		arrowfb.FloatingPointAddPrecision(b, arrowfb.Precision(s.bitWidth))
		typeOff = arrowfb.FloatingPointEnd(b)
	default:
		arrowfb.Utf8Start(b)
		typeOff = arrowfb.Utf8End(b)
	}
	dims := make([]flatbuffers.UOffsetT, len(s.shape))
	for i, n := range s.shape {
		var name flatbuffers.UOffsetT
		if i < len(s.names) {
			name = b.CreateString(s.names[i])
		}
		arrowfb.TensorDimStart(b)
		arrowfb.TensorDimAddSize(b, n)
		if i < len(s.names) {
			arrowfb.TensorDimAddName(b, name)
		}
		dims[i] = arrowfb.TensorDimEnd(b)
	}
	arrowfb.TensorStartShapeVector(b, len(dims))
	for i := len(dims) - 1; i >= 0; i-- {
		b.PrependUOffsetT(dims[i])
	}
	shape := b.EndVector(len(dims))
	var strides flatbuffers.UOffsetT
	if s.strides != nil {
		arrowfb.TensorStartStridesVector(b, len(s.strides))
		for i := len(s.strides) - 1; i >= 0; i-- {
			b.PrependInt64(s.strides[i])
		}
		strides = b.EndVector(len(s.strides))
	}
	arrowfb.TensorStart(b)
	arrowfb.TensorAddTypeType(b, s.typeType)
	arrowfb.TensorAddType(b, typeOff)
	arrowfb.TensorAddShape(b, shape)
	if s.strides != nil {
		arrowfb.TensorAddStrides(b, strides)
	}
	if !s.noData {
		arrowfb.TensorAddData(b, arrowfb.CreateBuffer(b, s.dataOffset, s.dataLength))
	}
	tensor := arrowfb.TensorEnd(b)
	arrowfb.MessageStart(b)
	arrowfb.MessageAddVersion(b, s.version)
	arrowfb.MessageAddHeaderType(b, s.headerType)
	arrowfb.MessageAddHeader(b, tensor)
	arrowfb.MessageAddBodyLength(b, s.bodyLength)
	b.Finish(arrowfb.MessageEnd(b))
	return b.FinishedBytes()
}

func (s spec) bytes(t testing.TB) []byte {
	var buf bytes.Buffer
	_, err := writeMessage(&buf, s.metadata(), tensorAlignment, s.body)
	require.NoError(t, err)
	return buf.Bytes()
}

// readOne reads the first tensor of b through the bytes reader and the io.Reader reader and
// checks that both agree; it returns the bytes reader's result.
func readOne(t *testing.T, b []byte, lim Limits) (*Tensor, error) {
	t.Helper()
	t1, err1 := NewBytesReader(b, lim).Next()
	t2, err2 := NewReader(bytes.NewReader(b), lim).Next()
	assert.Equal(t, err1 == nil, err2 == nil, "both readers agree: %v / %v", err1, err2)
	if err1 != nil {
		assert.Nil(t, t1, "no value with an error")
		assert.Nil(t, t2, "no value with an error")
	}
	return t1, err1
}

func TestValidSpecReads(t *testing.T) {
	tensor, err := readOne(t, validSpec().bytes(t), Limits{})
	require.NoError(t, err)
	d := ndarray.Must(AsDense[int32](tensor))
	assert.Equal(t, "[[0 1 2]\n [3 4 5]]", d.String())
}

func TestBadFraming(t *testing.T) {
	valid := validSpec().bytes(t)
	le32 := func(v ...uint32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		input []byte
		lim   Limits
		err   error
		msg   string
	}{
		{"metadata length negative", le32(continuation, 0x80000000), Limits{}, ErrInvalid, "metadata length -2147483648 is negative"},
		{"metadata length 2", append(le32(continuation, 2), 0, 0), Limits{}, ErrInvalid, "has no root offset"},
		{"metadata length huge", le32(continuation, 1<<30), Limits{}, ErrLimit, "exceeds the limit"},
		{"metadata beyond the input", append(le32(continuation, 64), 1, 2, 3), Limits{}, io.ErrUnexpectedEOF, "inside the metadata"},
		{"body beyond the limit", valid, Limits{MaxBodySize: 23}, ErrLimit, "body length 24 exceeds the limit of 23"},
		{"metadata beyond the limit", valid, Limits{MaxMetadataSize: 8}, ErrLimit, "metadata length"},
		{"garbage metadata", append(le32(continuation, 8), 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0), Limits{}, ErrInvalid, "metadata"},
		{"a lone continuation marker", le32(continuation), Limits{}, io.ErrUnexpectedEOF, "message prefix"},
		{"two bytes", []byte{1, 2}, Limits{}, io.ErrUnexpectedEOF, "message prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readOne(t, tc.input, tc.lim)
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.msg)
			assert.ErrorContains(t, err, "at byte 0")
		})
	}
	t.Run("body length negative", func(t *testing.T) {
		s := validSpec()
		s.bodyLength = -1
		_, err := readOne(t, s.bytes(t), Limits{})
		assert.ErrorIs(t, err, ErrInvalid)
		assert.ErrorContains(t, err, "body length -1 is negative")
	})
	t.Run("body beyond the input", func(t *testing.T) {
		s := validSpec()
		s.bodyLength, s.dataLength = 1<<20, 1<<20
		_, err := readOne(t, s.bytes(t), Limits{})
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.ErrorContains(t, err, "inside the body")
	})
	t.Run("truncation at every byte", func(t *testing.T) {
		for n := 1; n < len(valid); n++ {
			_, err := readOne(t, valid[:n], Limits{})
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "truncated to %d bytes", n)
		}
	})
	t.Run("end-of-stream markers", func(t *testing.T) {
		for _, eos := range [][]byte{le32(continuation, 0), le32(0)} {
			input := append(append(append([]byte(nil), valid...), eos...), 0xde, 0xad)
			for _, rd := range []*TensorReader{NewBytesReader(input, Limits{}), NewReader(bytes.NewReader(input), Limits{})} {
				_, err := rd.Next()
				require.NoError(t, err)
				_, err = rd.Next()
				assert.ErrorIs(t, err, io.EOF)
				_, err = rd.Next()
				assert.ErrorIs(t, err, io.EOF, "the reader stays at the end")
			}
		}
	})
	t.Run("legacy framing without the continuation marker", func(t *testing.T) {
		tensor, err := readOne(t, valid[4:], Limits{})
		require.NoError(t, err)
		assert.Equal(t, ndarray.Shape{2, 3}, tensor.Shape())
	})
	t.Run("an empty input has no tensor", func(t *testing.T) {
		_, err := readOne(t, nil, Limits{})
		assert.ErrorIs(t, err, io.EOF)
	})
	t.Run("errors name the offset of the failing message", func(t *testing.T) {
		input := append(append([]byte(nil), valid...), valid[:20]...)
		rd := NewBytesReader(input, Limits{})
		_, err := rd.Next()
		require.NoError(t, err)
		_, err = rd.Next()
		assert.ErrorContains(t, err, fmt.Sprintf("at byte %d", len(valid)))
	})
}

func TestBadTensorMetadata(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*spec)
		lim    Limits
		err    error
		msg    string
	}{
		{"negative dimension", func(s *spec) { s.shape = []int64{2, -3} }, Limits{}, ErrInvalid, "dimension 1 is -3"},
		{"shape product overflow", func(s *spec) { s.shape = []int64{1 << 40, 1 << 40}; s.strides = nil }, Limits{}, ErrInvalid, "size overflows"},
		{"shape times width overflow", func(s *spec) { s.shape = []int64{1 << 61}; s.strides = nil }, Limits{MaxElements: math.MaxInt64}, ErrInvalid, "does not fit"},
		{"more elements than the limit", func(s *spec) {}, Limits{MaxElements: 5}, ErrLimit, "more than the limit of 5"},
		{"rank above the cap", func(s *spec) { s.shape = make([]int64, 65); s.strides = nil }, Limits{}, ErrLimit, "rank 65 exceeds the limit of 64"},
		{"strides length differs from rank", func(s *spec) { s.strides = []int64{4} }, Limits{}, ErrInvalid, "1 strides for rank 2"},
		{"strides reach outside the body", func(s *spec) { s.strides = []int64{16, 4} }, Limits{}, ErrInvalid, "does not fit in 24 bytes"},
		{"negative stride", func(s *spec) { s.strides = []int64{-12, 4} }, Limits{}, ErrInvalid, "not a non-negative multiple"},
		{"stride not a multiple of the width", func(s *spec) { s.strides = []int64{12, 3} }, Limits{}, ErrInvalid, "not a non-negative multiple"},
		{"implicit strides with a short body", func(s *spec) { s.strides = nil; s.body = s.body[:20]; s.bodyLength, s.dataLength = 20, 20 }, Limits{}, ErrInvalid, "does not fit in 20 bytes"},
		{"data buffer beyond the body", func(s *spec) { s.dataOffset = 8 }, Limits{}, ErrInvalid, "data buffer (offset 8, length 24) outside a body of 24 bytes"},
		{"data buffer with a huge length", func(s *spec) { s.dataLength = math.MaxInt64 }, Limits{}, ErrInvalid, "outside a body"},
		{"data buffer with a negative offset", func(s *spec) { s.dataOffset = -8 }, Limits{}, ErrInvalid, "outside a body"},
		{"missing data buffer", func(s *spec) { s.noData = true }, Limits{}, ErrInvalid, "Tensor.data is missing"},
		{"unsupported element type", func(s *spec) { s.typeType = arrowfb.TypeUtf8 }, Limits{}, ErrInvalid, "tensors hold integers and floating-point numbers only"},
		{"odd integer width", func(s *spec) { s.bitWidth = 7 }, Limits{}, ErrInvalid, "integer bit width 7"},
		{"unknown float precision", func(s *spec) { s.typeType, s.bitWidth = arrowfb.TypeFloatingPoint, 9 }, Limits{}, ErrInvalid, "floating-point precision 9"},
		{"union type out of range", func(s *spec) { s.typeType = 99 }, Limits{}, ErrInvalid, "unknown type 99"},
		{"a Tensor table labelled RecordBatch", func(s *spec) { s.headerType = arrowfb.MessageHeaderRecordBatch }, Limits{}, ErrInvalid, "RecordBatch"},
		{"unknown header", func(s *spec) { s.headerType = 9 }, Limits{}, ErrInvalid, "unknown message header type 9"},
		{"old metadata version", func(s *spec) { s.version = arrowfb.MetadataVersionV3 }, Limits{}, ErrUnsupported, "metadata version V3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(&s)
			_, err := readOne(t, s.bytes(t), tc.lim)
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

// TestCorruptEveryMetadataByte sets each metadata byte of a golden file to several values in
// turn: the readers must fail cleanly or read a tensor whose values can all be read.
func TestCorruptEveryMetadataByte(t *testing.T) {
	for _, file := range []string{"dense_float_rank3", "dense_double_3x5_colmajor", "multi_3"} {
		orig, err := os.ReadFile(filepath.Join(goldenDir, file+".tensor"))
		require.NoError(t, err)
		metaEnd := 8 + int(binary.LittleEndian.Uint32(orig[4:]))
		for i := 4; i < metaEnd; i++ {
			for _, v := range []byte{0x00, 0x01, 0x7f, 0x80, 0xff, orig[i] ^ 0x10} {
				b := append([]byte(nil), orig...)
				b[i] = v
				exerciseAll(t, b, Limits{})
			}
		}
	}
}

// exerciseAll reads every tensor of b and every value of each, as the fuzz targets do.
func exerciseAll(t *testing.T, b []byte, lim Limits) {
	for _, rd := range []*TensorReader{NewBytesReader(b, lim), NewReader(bytes.NewReader(b), lim)} {
		for {
			tensor, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLimit) &&
					!errors.Is(err, ErrUnsupported) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error wraps no sentinel: %v", err)
				}
				if tensor != nil {
					t.Fatal("a tensor returned with an error")
				}
				break
			}
			var values bytes.Buffer
			if _, err := tensor.WriteValues(&values); err != nil {
				t.Fatalf("a tensor that decoded cannot be read: %v", err)
			}
			if int64(values.Len()) != tensor.Shape().Size()*int64(tensor.DType().Size()) {
				t.Fatalf("read %d bytes of values for shape %v (%v, strides %v, data %d, err %v)", values.Len(), tensor.Shape(), tensor.DType(), tensor.Strides(), len(tensor.Data()), err)
			}
		}
	}
}

func TestSmallInputClaimingHugeSizesAllocatesLittle(t *testing.T) {
	s := validSpec()
	s.bodyLength, s.dataLength = 1<<30, 1<<30
	input := s.bytes(t)
	allocs := testing.AllocsPerRun(5, func() {
		_, err := NewReader(bytes.NewReader(input), Limits{}).Next()
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
	assert.Less(t, allocs, 50.0)
	var before, after runtimeMemStats
	readMemStats(&before)
	_, _ = NewReader(bytes.NewReader(input), Limits{}).Next()
	readMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "a message claiming 1 GiB of body must not allocate it")
}
