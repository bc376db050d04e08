package arrowfb

import (
	"bytes"
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

// corpusMessages returns the flatbuffer metadata of every message of Arrow's integration
// files (schemas, record and dictionary batches of every type) and of its fuzz crash
// reproducers, as far as their framing goes, and the footers of the integration files.
func corpusMessages(t testing.TB) (messages, footers [][]byte) {
	const dir = "../../ipc/testdata/arrow-testing"
	files, err := filepath.Glob(filepath.Join(dir, "arrow-ipc-stream/integration/*/*"))
	require.NoError(t, err)
	crashers, err := filepath.Glob(filepath.Join(dir, "arrow-ipc-*/*"))
	require.NoError(t, err)
	for _, path := range append(files, crashers...) {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // a directory
		}
		if bytes.HasPrefix(b, []byte("ARROW1")) && len(b) > 18 {
			n := int(int32(binary.LittleEndian.Uint32(b[len(b)-10:])))
			if n > 0 && n <= len(b)-18 {
				footers = append(footers, b[len(b)-10-n:len(b)-10])
			}
			b = b[8:]
		}
		for len(b) >= 8 {
			h := 8
			if binary.LittleEndian.Uint32(b) != 0xFFFFFFFF {
				h = 4
			}
			n := int(int32(binary.LittleEndian.Uint32(b[h-4:])))
			if n <= 0 || n > len(b)-h {
				break
			}
			meta := b[h : h+n]
			messages = append(messages, meta)
			if VerifyMessage(meta) != nil {
				break
			}
			body := GetRootAsMessage(meta, 0).BodyLength()
			if body < 0 || body > int64(len(b)-h-n) {
				break
			}
			b = b[h+n+int(body):]
		}
	}
	require.NotEmpty(t, messages)
	require.NotEmpty(t, footers)
	return messages, footers
}

// TestVerifyCorpus verifies every message and footer of Arrow's corpus: the valid ones are
// accepted and every field the decoder reads can be read; the rest are ErrMalformed.
func TestVerifyCorpus(t *testing.T) {
	messages, footers := corpusMessages(t)
	for i, meta := range messages {
		checkMessage(t, meta, "corpus message", i)
	}
	for i, f := range footers {
		checkFooter(t, f, i)
	}
}

func FuzzVerifyMessage(f *testing.F) {
	for _, meta := range goldenMetadata(f) {
		f.Add(meta)
	}
	messages, _ := corpusMessages(f)
	for _, meta := range messages {
		f.Add(meta)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkMessage(t, b, "fuzz", 0) })
}

func FuzzVerifyFooter(f *testing.F) {
	_, footers := corpusMessages(f)
	for _, b := range footers {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkFooter(t, b, 0) })
}

// checkFooter verifies a footer and, when it is accepted, reads every field of it.
func checkFooter(t *testing.T, b []byte, i int) {
	t.Helper()
	if err := VerifyFooter(b); err != nil {
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("footer %d: an error without ErrMalformed: %v", i, err)
		}
		return
	}
	footer := GetRootAsFooter(b, 0)
	_ = footer.Version()
	var blk Block
	for j := range footer.DictionariesLength() {
		footer.Dictionaries(&blk, j)
		_, _, _ = blk.Offset(), blk.MetaDataLength(), blk.BodyLength()
	}
	for j := range footer.RecordBatchesLength() {
		footer.RecordBatches(&blk, j)
		_, _, _ = blk.Offset(), blk.MetaDataLength(), blk.BodyLength()
	}
	var kv KeyValue
	for j := range footer.CustomMetadataLength() {
		footer.CustomMetadata(&kv, j)
		_, _ = kv.Key(), kv.Value()
	}
	var s Schema
	if footer.Schema(&s) != nil {
		walkSchema(&s)
	}
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
	readType := readTypeTable
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
	case MessageHeaderSchema:
		var s Schema
		s.Init(tbl.Bytes, tbl.Pos)
		walkSchema(&s)
	case MessageHeaderRecordBatch:
		var rb RecordBatch
		rb.Init(tbl.Bytes, tbl.Pos)
		walkRecordBatch(&rb)
	case MessageHeaderDictionaryBatch:
		var db DictionaryBatch
		db.Init(tbl.Bytes, tbl.Pos)
		_, _ = db.Id(), db.IsDelta()
		var rb RecordBatch
		if db.Data(&rb) != nil {
			walkRecordBatch(&rb)
		}
	}
}

// readTypeTable reads every field of the table of a Type union member.
func readTypeTable(kind Type, get func(*flatbuffers.Table) bool) {
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
	case TypeDecimal:
		var d Decimal
		d.Init(tt.Bytes, tt.Pos)
		_, _, _ = d.Precision(), d.Scale(), d.BitWidth()
	case TypeDate:
		var d Date
		d.Init(tt.Bytes, tt.Pos)
		_ = d.Unit()
	case TypeTime:
		var d Time
		d.Init(tt.Bytes, tt.Pos)
		_, _ = d.Unit(), d.BitWidth()
	case TypeTimestamp:
		var d Timestamp
		d.Init(tt.Bytes, tt.Pos)
		_, _ = d.Unit(), d.Timezone()
	case TypeInterval:
		var d Interval
		d.Init(tt.Bytes, tt.Pos)
		_ = d.Unit()
	case TypeUnion:
		var d Union
		d.Init(tt.Bytes, tt.Pos)
		_ = d.Mode()
		for i := range d.TypeIdsLength() {
			_ = d.TypeIds(i)
		}
	case TypeFixedSizeBinary:
		var d FixedSizeBinary
		d.Init(tt.Bytes, tt.Pos)
		_ = d.ByteWidth()
	case TypeFixedSizeList:
		var d FixedSizeList
		d.Init(tt.Bytes, tt.Pos)
		_ = d.ListSize()
	case TypeMap:
		var d Map
		d.Init(tt.Bytes, tt.Pos)
		_ = d.KeysSorted()
	case TypeDuration:
		var d Duration
		d.Init(tt.Bytes, tt.Pos)
		_ = d.Unit()
	}
}

// walkSchema reads every field of a verified schema, fields and their children included.
func walkSchema(s *Schema) {
	_ = s.Endianness()
	var kv KeyValue
	for i := range s.CustomMetadataLength() {
		s.CustomMetadata(&kv, i)
		_, _ = kv.Key(), kv.Value()
	}
	for i := range s.FeaturesLength() {
		_ = s.Features(i)
	}
	var f Field
	for i := range s.FieldsLength() {
		s.Fields(&f, i)
		walkField(&f)
	}
}

func walkField(f *Field) {
	_, _ = f.Name(), f.Nullable()
	readTypeTable(f.TypeType(), f.Type)
	var enc DictionaryEncoding
	if f.Dictionary(&enc) != nil {
		_, _ = enc.Id(), enc.IsOrdered()
		var it Int
		if enc.IndexType(&it) != nil {
			_, _ = it.BitWidth(), it.IsSigned()
		}
	}
	var kv KeyValue
	for i := range f.CustomMetadataLength() {
		f.CustomMetadata(&kv, i)
		_, _ = kv.Key(), kv.Value()
	}
	var c Field
	for i := range f.ChildrenLength() {
		f.Children(&c, i)
		walkField(&c)
	}
}

// walkRecordBatch reads every field of a verified record batch.
func walkRecordBatch(rb *RecordBatch) {
	_ = rb.Length()
	var n FieldNode
	for i := range rb.NodesLength() {
		rb.Nodes(&n, i)
		_, _ = n.Length(), n.NullCount()
	}
	var b Buffer
	for i := range rb.BuffersLength() {
		rb.Buffers(&b, i)
		_, _ = b.Offset(), b.Length()
	}
	for i := range rb.VariadicBufferCountsLength() {
		_ = rb.VariadicBufferCounts(i)
	}
	var c BodyCompression
	if rb.Compression(&c) != nil {
		_, _ = c.Codec(), c.Method()
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
