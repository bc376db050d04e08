package ipc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/float16"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// goldenSparseFiles returns the names of the golden sparse tensor files.
func goldenSparseFiles(t *testing.T, want map[string]expected) []string {
	var names []string
	for name, e := range want {
		if strings.HasPrefix(e.Kind, "sparse_") {
			names = append(names, name)
		}
	}
	require.Len(t, names, 10)
	return names
}

func TestGoldenSparseTensors(t *testing.T) {
	want := loadExpected(t)
	for _, name := range goldenSparseFiles(t, want) {
		e := want[name]
		path := filepath.Join(goldenDir, name+".tensor")
		for how, open := range map[string]func() *TensorReader{
			"bytes": func() *TensorReader {
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				return NewBytesReader(b, Limits{})
			},
			"io.Reader": func() *TensorReader {
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				return NewReader(bytes.NewReader(b), Limits{})
			},
			"mmap": func() *TensorReader {
				rd, err := OpenFile(path, Limits{})
				require.NoError(t, err)
				return rd
			},
		} {
			t.Run(name+"/"+how, func(t *testing.T) {
				rd := open()
				defer rd.Close()
				s, err := rd.NextSparse()
				require.NoError(t, err)
				defer s.Release()
				assert.Equal(t, e.Kind, "sparse_"+s.Format().String())
				assert.Equal(t, e.DType, s.DType().String())
				assert.Equal(t, e.Shape, []int64(s.Shape()))
				assert.Equal(t, e.NNZ, s.NNZ())
				if len(e.DimNames) == 0 {
					assert.Nil(t, s.DimNames())
				} else {
					assert.Equal(t, e.DimNames, s.DimNames())
				}
				wantIndex := ndarray.Int64
				if strings.HasSuffix(name, "_i32") {
					wantIndex = ndarray.Int32
				}
				assert.Equal(t, wantIndex, s.IndexType())
				var values bytes.Buffer
				_, err = s.WriteValues(&values)
				require.NoError(t, err)
				sum := sha256.Sum256(values.Bytes())
				assert.Equal(t, e.SHA256, hex.EncodeToString(sum[:]))
				bin, err := os.ReadFile(filepath.Join(goldenDir, name+".bin"))
				require.NoError(t, err)
				assert.True(t, bytes.Equal(bin, values.Bytes()))
				assert.True(t, s.Array().ReadOnly())
				assert.True(t, bytes.Equal(bin, denseBytes(t, mustDense(t, s.Array()))), "ToDense agrees with Values")
				_, err = rd.NextAny()
				assert.ErrorIs(t, err, io.EOF)
			})
		}
	}
}

// mustDense returns the dense form of a, which must be within the default limit.
func mustDense(t *testing.T, a sparse.Array) ndarray.Array {
	t.Helper()
	d, err := a.DenseArray(0)
	require.NoError(t, err)
	return d
}

func denseBytes(t *testing.T, a ndarray.Array) []byte {
	t.Helper()
	var b bytes.Buffer
	_, err := a.WriteTo(&b)
	require.NoError(t, err)
	return b.Bytes()
}

func TestGoldenSparseDetails(t *testing.T) {
	read := func(name string) *SparseTensor {
		b, err := os.ReadFile(filepath.Join(goldenDir, name+".tensor"))
		require.NoError(t, err)
		s, err := NewBytesReader(b, Limits{}).NextSparse()
		require.NoError(t, err)
		return s
	}
	coo, err := AsSparse[float64](read("coo_double_3x4_noncanonical"))
	require.NoError(t, err)
	assert.False(t, coo.(*sparse.COO[float64]).IsCanonical())
	canonical, err := AsSparse[float64](read("coo_double_4x6_i64"))
	require.NoError(t, err)
	assert.True(t, canonical.(*sparse.COO[float64]).IsCanonical())
	_, err = AsSparse[float32](read("coo_double_4x6_i64"))
	assert.ErrorIs(t, err, ndarray.ErrDType)
	csf, err := AsSparse[int64](read("csf_int64_2x3x2x3_i32"))
	require.NoError(t, err)
	f := csf.(*sparse.CSF[int64])
	assert.Equal(t, 3, len(f.AxisOrder())-1)
	csc, err := AsSparse[int16](read("csc_int16_6x3_i32"))
	require.NoError(t, err)
	assert.Equal(t, ndarray.Int32, csc.(*sparse.CSC[int16]).Indices().DType())

	// A dense reader meets a sparse message: a clear error, not a misread.
	b, err := os.ReadFile(filepath.Join(goldenDir, "csr_float_4x4_i32.tensor"))
	require.NoError(t, err)
	_, err = NewBytesReader(b, Limits{}).Next()
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "use NextSparse or NextAny")
	b, err = os.ReadFile(filepath.Join(goldenDir, "dense_float_7.tensor"))
	require.NoError(t, err)
	_, err = NewBytesReader(b, Limits{}).NextSparse()
	assert.ErrorIs(t, err, ErrUnsupported)
}

// TestSparseZeroCopy shows that the indices and values of a sparse tensor read from bytes or a
// memory map are the input's memory.
func TestSparseZeroCopy(t *testing.T) {
	path := filepath.Join(goldenDir, "csr_double_5x7_i64.tensor")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	src := alignedCopy(raw)
	s, err := NewBytesReader(src, Limits{}).NextSparse()
	require.NoError(t, err)
	m, err := AsSparse[float64](s)
	require.NoError(t, err)
	csr := m.(*sparse.CSR[float64])
	inside := func(p unsafe.Pointer) bool {
		lo := uintptr(unsafe.Pointer(&src[0]))
		return uintptr(p) >= lo && uintptr(p) < lo+uintptr(len(src))
	}
	assert.True(t, inside(unsafe.Pointer(&csr.Data()[0])), "values alias the input")
	assert.True(t, inside(unsafe.Pointer(&csr.Indices().Int64()[0])), "indices alias the input")
	assert.True(t, inside(unsafe.Pointer(&csr.Indptr().Int64()[0])), "indptr alias the input")
	src[len(src)-8] ^= 0xFF // the last value's last byte, through the input
	assert.NotEqual(t, csr.Data()[len(csr.Data())-1], alignedCopyValue(raw))

	rd, err := OpenFile(path, Limits{})
	require.NoError(t, err)
	mapped, err := rd.NextSparse()
	require.NoError(t, err)
	require.NoError(t, rd.Close())
	assert.Equal(t, int64(1), rd.owner.Refs(), "the tensor holds the mapping")
	mapped.Release()
	assert.Equal(t, int64(0), rd.owner.Refs(), "released: unmapped")
}

// alignedCopy returns a copy of b whose first byte is 8-byte aligned.
func alignedCopy(b []byte) []byte {
	words := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(b)]
	copy(out, b)
	return out
}

// alignedCopyValue decodes the last float64 of b.
func alignedCopyValue(b []byte) float64 {
	v, _ := ndarray.ViewBytes[float64](alignedCopy(b[len(b)-8:]))
	return v[0]
}

// TestWriteSparseMatchesArrowCpp reads every golden sparse file, writes the tensor again and
// compares with what Arrow C++ wrote: framing, padding, body bytes and every decoded metadata
// field (flatbuffer bytes themselves are builder-specific).
func TestWriteSparseMatchesArrowCpp(t *testing.T) {
	want := loadExpected(t)
	for _, name := range goldenSparseFiles(t, want) {
		t.Run(name, func(t *testing.T) {
			cpp, err := os.ReadFile(filepath.Join(goldenDir, name+".tensor"))
			require.NoError(t, err)
			s, err := NewBytesReader(cpp, Limits{}).NextSparse()
			require.NoError(t, err)
			var ours bytes.Buffer
			n, err := writeSparseAny(&ours, s.Array(), s.DimNames())
			require.NoError(t, err)
			assert.Equal(t, int64(ours.Len()), n)

			c, o := splitMessage(t, cpp), splitMessage(t, ours.Bytes())
			assert.Equal(t, c.marker, o.marker, "continuation marker")
			assert.Zero(t, (8+c.metaLen)%sparseAlignment, "C++ pads the metadata to 8 bytes")
			assert.Zero(t, (8+o.metaLen)%sparseAlignment, "ndarrow pads the metadata to 8 bytes")
			assert.True(t, bytes.Equal(c.body, o.body), "body bytes")
			assert.Equal(t, len(cpp)-c.metaLen, ours.Len()-o.metaLen, "sizes apart from the flatbuffer")
			assert.Equal(t, describeSparseMetadata(t, cpp[8:8+c.metaLen]), describeSparseMetadata(t, ours.Bytes()[8:8+o.metaLen]))

			again, err := NewBytesReader(ours.Bytes(), Limits{}).NextSparse()
			require.NoError(t, err)
			assert.True(t, bytes.Equal(denseBytes(t, mustDense(t, s.Array())), denseBytes(t, mustDense(t, again.Array()))))
		})
	}
}

// writeSparseAny writes a sparse array of any numeric element type.
func writeSparseAny(w io.Writer, a sparse.Array, names []string) (int64, error) {
	switch a.DType() {
	case ndarray.Int8:
		return WriteSparse(w, a.(sparse.Tensor[int8]), names)
	case ndarray.Int16:
		return WriteSparse(w, a.(sparse.Tensor[int16]), names)
	case ndarray.Int32:
		return WriteSparse(w, a.(sparse.Tensor[int32]), names)
	case ndarray.Int64:
		return WriteSparse(w, a.(sparse.Tensor[int64]), names)
	case ndarray.Uint8:
		return WriteSparse(w, a.(sparse.Tensor[uint8]), names)
	case ndarray.Uint16:
		return WriteSparse(w, a.(sparse.Tensor[uint16]), names)
	case ndarray.Uint32:
		return WriteSparse(w, a.(sparse.Tensor[uint32]), names)
	case ndarray.Uint64:
		return WriteSparse(w, a.(sparse.Tensor[uint64]), names)
	case ndarray.Float16:
		return WriteSparse(w, a.(sparse.Tensor[float16.Num]), names)
	case ndarray.Float32:
		return WriteSparse(w, a.(sparse.Tensor[float32]), names)
	case ndarray.Float64:
		return WriteSparse(w, a.(sparse.Tensor[float64]), names)
	}
	return 0, errors.New("not a numeric dtype")
}

// sparseMetadata is every field of a SparseTensor message, decoded.
type sparseMetadata struct {
	Version, BodyLength  int64
	TypeType             arrowfb.Type
	Dims                 []string // "size:name:present"
	NNZ                  int64
	IndexKind            arrowfb.SparseTensorIndex
	IndexBits            []int32 // indices (and indptr) bit widths
	Strides              []int64
	Canonical            bool
	Axis                 arrowfb.SparseMatrixCompressedAxis
	AxisOrder            []int32
	Buffers              [][2]int64 // index buffers: offset, length
	DataOffset, DataSize int64
}

func describeSparseMetadata(t *testing.T, meta []byte) sparseMetadata {
	t.Helper()
	m, _, err := parseMetadata(meta, 0, DefaultLimits())
	require.NoError(t, err)
	require.Equal(t, arrowfb.MessageHeaderSparseTensor, m.HeaderType())
	var tbl flatbuffers.Table
	m.Header(&tbl)
	var st arrowfb.SparseTensor
	st.Init(tbl.Bytes, tbl.Pos)
	d := sparseMetadata{Version: int64(m.Version()), BodyLength: m.BodyLength(), TypeType: st.TypeType(), NNZ: st.NonZeroLength(), IndexKind: st.SparseIndexType()}
	var dim arrowfb.TensorDim
	for i := range st.ShapeLength() {
		st.Shape(&dim, i)
		d.Dims = append(d.Dims, strings.Join([]string{itoa(dim.Size()), string(dim.Name()), itoa(boolInt(dim.Name() != nil))}, ":"))
	}
	var buf arrowfb.Buffer
	st.Data(&buf)
	d.DataOffset, d.DataSize = buf.Offset(), buf.Length()
	addBuf := func(b *arrowfb.Buffer) { d.Buffers = append(d.Buffers, [2]int64{b.Offset(), b.Length()}) }
	var index flatbuffers.Table
	st.SparseIndex(&index)
	switch d.IndexKind {
	case arrowfb.SparseTensorIndexSparseTensorIndexCOO:
		var coo arrowfb.SparseTensorIndexCOO
		coo.Init(index.Bytes, index.Pos)
		d.IndexBits = []int32{coo.IndicesType(nil).BitWidth()}
		for i := range coo.IndicesStridesLength() {
			d.Strides = append(d.Strides, coo.IndicesStrides(i))
		}
		d.Canonical = coo.IsCanonical()
		coo.IndicesBuffer(&buf)
		addBuf(&buf)
	case arrowfb.SparseTensorIndexSparseMatrixIndexCSX:
		var csx arrowfb.SparseMatrixIndexCSX
		csx.Init(index.Bytes, index.Pos)
		d.Axis = csx.CompressedAxis()
		d.IndexBits = []int32{csx.IndptrType(nil).BitWidth(), csx.IndicesType(nil).BitWidth()}
		csx.IndptrBuffer(&buf)
		addBuf(&buf)
		csx.IndicesBuffer(&buf)
		addBuf(&buf)
	case arrowfb.SparseTensorIndexSparseTensorIndexCSF:
		var csf arrowfb.SparseTensorIndexCSF
		csf.Init(index.Bytes, index.Pos)
		d.IndexBits = []int32{csf.IndptrType(nil).BitWidth(), csf.IndicesType(nil).BitWidth()}
		for i := range csf.AxisOrderLength() {
			d.AxisOrder = append(d.AxisOrder, csf.AxisOrder(i))
		}
		for i := range csf.IndptrBuffersLength() {
			csf.IndptrBuffers(&buf, i)
			addBuf(&buf)
		}
		for i := range csf.IndicesBuffersLength() {
			csf.IndicesBuffers(&buf, i)
			addBuf(&buf)
		}
	}
	return d
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestWriteSparseAsArrowCppReads covers what Arrow C++ 17 refuses or crashes on: an empty COO
// must carry the strides C++ computes for an [0, rank] index matrix ([w, w], as the golden
// dense_float_0x5.tensor shows for a zero-size shape), and a CSF below rank 2 is refused.
func TestWriteSparseAsArrowCppReads(t *testing.T) {
	cpp := mustRead(t, filepath.Join(goldenDir, "dense_float_0x5.tensor"))
	dense, err := NewBytesReader(cpp, Limits{}).Next()
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 4}, dense.Strides(), "C++: every stride of a zero-size shape is the width")

	for _, shape := range []ndarray.Shape{{0, 5}, {3, 4}, {2, 3, 4}} {
		empty := sparse.NewCOO[float64](shape...)
		var buf bytes.Buffer
		_, err := WriteSparse[float64](&buf, empty, nil)
		require.NoError(t, err)
		m := splitMessage(t, buf.Bytes())
		md := describeSparseMetadata(t, buf.Bytes()[8:8+m.metaLen])
		w := int64(md.IndexBits[0] / 8)
		assert.Equal(t, []int64{w, w}, md.Strides, "shape %v", shape)
		back, err := NewBytesReader(buf.Bytes(), Limits{}).NextSparse()
		require.NoError(t, err)
		assert.Equal(t, int64(0), back.Array().NNZ())
		assert.True(t, back.Shape().Equal(shape))
	}
	full := sparse.NewCOO[float64](3, 4)
	full.Set(1, 2, 3)
	var buf bytes.Buffer
	_, err = WriteSparse[float64](&buf, full, nil)
	require.NoError(t, err)
	m := splitMessage(t, buf.Bytes())
	assert.Equal(t, []int64{8, 4}, describeSparseMetadata(t, buf.Bytes()[8:8+m.metaLen]).Strides, "a non-empty COO keeps row-major strides (int32 indices)")

	vector := sparse.NewCOO[float32](10)
	vector.Set(2, 7)
	csf, err := vector.ToCSF()
	require.NoError(t, err)
	_, err = WriteSparse[float32](io.Discard, csf, nil)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "a CSF tensor of rank 1, which Arrow C++ 17 cannot read (write it as COO)")
}
