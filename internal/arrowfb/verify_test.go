package arrowfb

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenMetadata returns the flatbuffer metadata of the first message of each golden file.
func goldenMetadata(t testing.TB) map[string][]byte {
	files, err := filepath.Glob("testdata/arrow-cpp-17/*.tensor")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		n := binary.LittleEndian.Uint32(b[4:])
		out[filepath.Base(f)] = b[8 : 8+n]
	}
	return out
}

func TestVerifyGoldenMessages(t *testing.T) {
	for name, meta := range goldenMetadata(t) {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, VerifyMessage(meta))
			walk(GetRootAsMessage(meta, 0))
		})
	}
}

// TestVerifyCorruptedMessages corrupts every byte of every golden message: VerifyMessage must
// return ErrMalformed or accept a message whose every field the accessors can then read.
func TestVerifyCorruptedMessages(t *testing.T) {
	for name, meta := range goldenMetadata(t) {
		for i := range meta {
			for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, meta[i] ^ 0x08} {
				b := append([]byte(nil), meta...)
				b[i] = v
				checkMessage(t, b, name, i)
			}
		}
	}
}

func checkMessage(t *testing.T, b []byte, name string, i int) {
	t.Helper()
	err := VerifyMessage(b)
	if err != nil {
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("%s byte %d: error without ErrMalformed: %v", name, i, err)
		}
		return
	}
	walk(GetRootAsMessage(b, 0))
}

func FuzzVerifyMessage(f *testing.F) {
	for _, meta := range goldenMetadata(f) {
		f.Add(meta)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkMessage(t, b, "fuzz", 0) })
}

// walk reads every field reachable from a verified Tensor or SparseTensor message.
func walk(m *Message) {
	_ = m.Version()
	_ = m.BodyLength()
	var kv KeyValue
	for i := range m.CustomMetadataLength() {
		m.CustomMetadata(&kv, i)
		_, _ = kv.Key(), kv.Value()
	}
	var tbl flatbuffers.Table
	if !m.Header(&tbl) {
		return
	}
	readType := func(kind Type, get func(*flatbuffers.Table) bool) {
		var tt flatbuffers.Table
		if !get(&tt) {
			return
		}
		switch kind {
		case TypeInt:
			var it Int
			it.Init(tt.Bytes, tt.Pos)
			_, _ = it.BitWidth(), it.IsSigned()
		case TypeFloatingPoint:
			var fp FloatingPoint
			fp.Init(tt.Bytes, tt.Pos)
			_ = fp.Precision()
		}
	}
	var dim TensorDim
	var buf Buffer
	switch m.HeaderType() {
	case MessageHeaderTensor:
		var t Tensor
		t.Init(tbl.Bytes, tbl.Pos)
		readType(t.TypeType(), t.Type)
		for i := range t.ShapeLength() {
			t.Shape(&dim, i)
			_, _ = dim.Size(), dim.Name()
		}
		for i := range t.StridesLength() {
			_ = t.Strides(i)
		}
		t.Data(&buf)
		_, _ = buf.Offset(), buf.Length()
	case MessageHeaderSparseTensor:
		var s SparseTensor
		s.Init(tbl.Bytes, tbl.Pos)
		readType(s.TypeType(), s.Type)
		for i := range s.ShapeLength() {
			s.Shape(&dim, i)
			_, _ = dim.Size(), dim.Name()
		}
		_ = s.NonZeroLength()
		s.Data(&buf)
		var idx flatbuffers.Table
		if !s.SparseIndex(&idx) {
			return
		}
		var it Int
		switch s.SparseIndexType() {
		case SparseTensorIndexSparseTensorIndexCOO:
			var c SparseTensorIndexCOO
			c.Init(idx.Bytes, idx.Pos)
			c.IndicesType(&it)
			_ = it.BitWidth()
			for i := range c.IndicesStridesLength() {
				_ = c.IndicesStrides(i)
			}
			c.IndicesBuffer(&buf)
			_ = c.IsCanonical()
		case SparseTensorIndexSparseMatrixIndexCSX:
			var c SparseMatrixIndexCSX
			c.Init(idx.Bytes, idx.Pos)
			_ = c.CompressedAxis()
			c.IndptrType(&it)
			c.IndicesType(&it)
			c.IndptrBuffer(&buf)
			c.IndicesBuffer(&buf)
		case SparseTensorIndexSparseTensorIndexCSF:
			var c SparseTensorIndexCSF
			c.Init(idx.Bytes, idx.Pos)
			c.IndptrType(&it)
			c.IndicesType(&it)
			for i := range c.IndptrBuffersLength() {
				c.IndptrBuffers(&buf, i)
			}
			for i := range c.IndicesBuffersLength() {
				c.IndicesBuffers(&buf, i)
			}
			for i := range c.AxisOrderLength() {
				_ = c.AxisOrder(i)
			}
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":                   nil,
		"root past the end":       {0xf0, 0, 0, 0},
		"misaligned root":         {1, 0, 0, 0, 0, 0, 0, 0},
		"vtable before the start": {4, 0, 0, 0, 0x10, 0, 0, 0},
	} {
		err := VerifyMessage(b)
		assert.ErrorIs(t, err, ErrMalformed, name)
	}
}

// TestVectorLengthNear4G sets the length of the shape vector of a golden Tensor message to
// values near 2^32: the verifier must refuse them without reading or allocating.
func TestVectorLengthNear4G(t *testing.T) {
	meta := goldenMetadata(t)["dense_float_rank3.tensor"]
	m := GetRootAsMessage(meta, 0)
	var tbl flatbuffers.Table
	require.True(t, m.Header(&tbl))
	var tensor Tensor
	tensor.Init(tbl.Bytes, tbl.Pos)
	// The shape vector's length word sits just before its first element.
	tt := tensor.Table()
	o := flatbuffers.UOffsetT(tt.Offset(8)) // vtable entry of field 2, shape
	require.NotZero(t, o)
	at := tt.Vector(o) - 4
	for _, n := range []uint32{0xFFFFFFFF, 0xFFFFFFF0, 1 << 31, 1 << 30} {
		b := append([]byte(nil), meta...)
		binary.LittleEndian.PutUint32(b[at:], n)
		err := VerifyMessage(b)
		assert.ErrorIs(t, err, ErrMalformed, "length %#x", n)
		assert.ErrorContains(t, err, "overruns the buffer")
	}
}
