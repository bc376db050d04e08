package ipc

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// rewrite writes a tensor that was read back with WriteTensor, dispatching on its dtype.
func rewrite(t *testing.T, w *bytes.Buffer, tensor *Tensor) {
	t.Helper()
	var err error
	switch tensor.DType() {
	case ndarray.Int8:
		err = rewriteAs[int8](w, tensor)
	case ndarray.Int16:
		err = rewriteAs[int16](w, tensor)
	case ndarray.Int32:
		err = rewriteAs[int32](w, tensor)
	case ndarray.Int64:
		err = rewriteAs[int64](w, tensor)
	case ndarray.Uint8:
		err = rewriteAs[uint8](w, tensor)
	case ndarray.Uint16:
		err = rewriteAs[uint16](w, tensor)
	case ndarray.Uint32:
		err = rewriteAs[uint32](w, tensor)
	case ndarray.Uint64:
		err = rewriteAs[uint64](w, tensor)
	case ndarray.Float16:
		err = rewriteAs[float16.Num](w, tensor)
	case ndarray.Float32:
		err = rewriteAs[float32](w, tensor)
	case ndarray.Float64:
		err = rewriteAs[float64](w, tensor)
	}
	require.NoError(t, err)
}

func rewriteAs[T ndarray.Numeric](w *bytes.Buffer, tensor *Tensor) error {
	d, err := AsDense[T](tensor)
	if err != nil {
		return err
	}
	names := tensor.DimNames()
	if names == nil {
		names = make([]string, tensor.Shape().Rank())
	}
	_, err = WriteTensor(w, d, names)
	return err
}

// framing splits an encapsulated message into its prefix fields, metadata and body.
type framing struct {
	marker  uint32
	metaLen int
	body    []byte
	size    int
}

func splitMessage(t *testing.T, b []byte) framing {
	t.Helper()
	m, n, err := parseMessage(b, 0, DefaultLimits())
	require.NoError(t, err)
	return framing{
		marker:  binary.LittleEndian.Uint32(b),
		metaLen: int(binary.LittleEndian.Uint32(b[4:])),
		body:    m.body,
		size:    int(n),
	}
}

// TestWriteMatchesArrowCpp reads every golden dense tensor file, writes its tensors again and
// compares what Arrow C++ wrote with what ndarrow writes: the framing, the padding, the body
// bytes and the decoded metadata (flatbuffer bytes themselves are builder-specific).
func TestWriteMatchesArrowCpp(t *testing.T) {
	want := loadExpected(t)
	for file := range goldenTensorFiles(t, want) {
		t.Run(file, func(t *testing.T) {
			cpp, err := os.ReadFile(filepath.Join(goldenDir, file+".tensor"))
			require.NoError(t, err)
			theirs, err := NewBytesReader(cpp, Limits{}).ReadAll()
			require.NoError(t, err)
			var ours bytes.Buffer
			for _, tensor := range theirs {
				rewrite(t, &ours, tensor)
			}
			assert.Equal(t, len(cpp), ours.Len(), "total size")

			mine, err := NewBytesReader(ours.Bytes(), Limits{}).ReadAll()
			require.NoError(t, err)
			require.Len(t, mine, len(theirs))
			cppRest, ourRest := cpp, ours.Bytes()
			for i := range theirs {
				c, o := splitMessage(t, cppRest), splitMessage(t, ourRest)
				assert.Equal(t, c.marker, o.marker, "continuation marker")
				assert.Zero(t, (8+c.metaLen)%tensorAlignment, "C++ pads the metadata to 64 bytes")
				assert.Zero(t, (8+o.metaLen)%tensorAlignment, "ndarrow pads the metadata to 64 bytes")
				assert.Equal(t, c.metaLen, o.metaLen, "padded metadata length")
				assert.True(t, bytes.Equal(c.body, o.body), "body bytes")
				assert.True(t, bytes.Equal(cppRest[8+c.metaLen+int(len(c.body)):c.size], nil), "nothing after the body")

				a, b := theirs[i], mine[i]
				assert.Equal(t, a.DType(), b.DType())
				assert.Equal(t, a.Shape(), b.Shape())
				assert.Equal(t, a.Strides(), b.Strides(), "strides in bytes")
				assert.Equal(t, a.DimNames(), b.DimNames())
				assertSameMetadata(t, cppRest[8:8+c.metaLen], ourRest[8:8+o.metaLen])
				cppRest, ourRest = cppRest[c.size:], ourRest[o.size:]
			}
		})
	}
}

// assertSameMetadata decodes two Tensor messages' flatbuffers and compares every field.
func assertSameMetadata(t *testing.T, a, b []byte) {
	t.Helper()
	ma, _, err := parseMetadata(a, 0, DefaultLimits())
	require.NoError(t, err)
	mb, _, err := parseMetadata(b, 0, DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, ma.Version(), mb.Version(), "version")
	assert.Equal(t, ma.HeaderType(), mb.HeaderType(), "header type")
	assert.Equal(t, ma.BodyLength(), mb.BodyLength(), "body length")
	assert.Equal(t, ma.CustomMetadataLength(), mb.CustomMetadataLength(), "custom metadata")
	ta, tb := tensorTable(ma), tensorTable(mb)
	assert.Equal(t, ta.TypeType(), tb.TypeType())
	assert.Equal(t, ta.ShapeLength(), tb.ShapeLength())
	assert.Equal(t, ta.StridesLength(), tb.StridesLength())
	var da, db arrowfbTensorDim
	for i := range ta.ShapeLength() {
		ta.Shape(&da, i)
		tb.Shape(&db, i)
		assert.Equal(t, da.Size(), db.Size())
		assert.Equal(t, string(da.Name()), string(db.Name()), "dimension %d name, written even when empty", i)
		assert.Equal(t, da.Name() != nil, db.Name() != nil, "dimension %d name present", i)
	}
	var ba, bb arrowfbBuffer
	ta.Data(&ba)
	tb.Data(&bb)
	assert.Equal(t, ba.Offset(), bb.Offset(), "data offset")
	assert.Equal(t, ba.Length(), bb.Length(), "data length")
}

// TestWithMetadata writes a Tensor and a SparseTensor message with custom metadata and reads
// it back; without it the metadata is empty, and the bytes are C++'s (TestWriteMatchesArrowCpp).
func TestWithMetadata(t *testing.T) {
	md := arrow.NewMetadata([]string{"ndarrow.column", "k"}, []string{"images", "v"})
	d, err := ndarray.FromSlice([]float32{1, 0, 0, 2, 0, 3}, 2, 3)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = WriteTensor(&buf, d, []string{"r", "c"}, WithMetadata(md))
	require.NoError(t, err)
	_, err = WriteSparse(&buf, sparse.Tensor[float32](sparse.FromDense(d)), nil, WithMetadata(md))
	require.NoError(t, err)
	_, err = WriteTensor(&buf, d, nil)
	require.NoError(t, err)

	rd := NewBytesReader(buf.Bytes(), Limits{})
	for i, want := range []arrow.Metadata{md, md, {}} {
		got, err := rd.NextAny()
		require.NoError(t, err, "message %d", i)
		assert.Equal(t, want.ToMap(), got.Metadata().ToMap(), "message %d", i)
	}
}
