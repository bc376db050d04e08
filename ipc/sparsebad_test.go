package ipc

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// sparseSpec describes a SparseTensor message of float64 values to build, valid or not. Its
// index arrays are encoded with indexBits each; buffers are laid out as C++ lays them out and
// patch may then change their offsets and lengths.
type sparseSpec struct {
	shape     []int64
	nnz       int64
	kind      arrowfb.SparseTensorIndex
	indexBits int32
	unsigned  bool
	strides   []int64 // COO; nil: [rank×w, w]
	canonical bool
	axis      arrowfb.SparseMatrixCompressedAxis
	axisOrder []int32
	indptr    [][]int64
	indices   [][]int64 // COO: the flattened [nnz, rank] matrix
	values    []float64
	csfBytes  bool // CSF Buffer.length in exact (unpadded) bytes, as the specification says
	patch     func(indptr, indices []*[2]int64, data *[2]int64)
}

// validCOO is the 3×4 matrix with 1, 2, 3 at (0,1), (1,2), (2,3).
func validCOO() sparseSpec {
	return sparseSpec{shape: []int64{3, 4}, nnz: 3, kind: arrowfb.SparseTensorIndexSparseTensorIndexCOO, indexBits: 64,
		indices: [][]int64{{0, 1, 1, 2, 2, 3}}, values: []float64{1, 2, 3}, canonical: true}
}

// validCSR is the same matrix in CSR form.
func validCSR() sparseSpec {
	return sparseSpec{shape: []int64{3, 4}, nnz: 3, kind: arrowfb.SparseTensorIndexSparseMatrixIndexCSX, indexBits: 32,
		indptr: [][]int64{{0, 1, 2, 3}}, indices: [][]int64{{1, 2, 3}}, values: []float64{1, 2, 3}}
}

// validCSF is the same matrix in CSF form.
func validCSF() sparseSpec {
	return sparseSpec{shape: []int64{3, 4}, nnz: 3, kind: arrowfb.SparseTensorIndexSparseTensorIndexCSF, indexBits: 32, axisOrder: []int32{0, 1},
		indptr: [][]int64{{0, 1, 2, 3}}, indices: [][]int64{{0, 1, 2}, {1, 2, 3}}, values: []float64{1, 2, 3}}
}

func (s sparseSpec) bytes(t testing.TB) []byte {
	var body []byte
	w := int64(s.indexBits / 8)
	add := func(data []byte, counted bool) *[2]int64 {
		buf := &[2]int64{int64(len(body)), int64(len(data))}
		for len(data)%8 != 0 {
			data = append(data, 0)
		}
		body = append(body, data...)
		switch {
		case !counted:
			buf[1] = int64(len(data))
		case !s.csfBytes:
			buf[1] /= w
		}
		return buf
	}
	encode := func(v []int64) []byte {
		out := make([]byte, int64(len(v))*w)
		for i, x := range v {
			switch w {
			case 1:
				out[i] = byte(x)
			case 2:
				binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
			case 4:
				binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
			default:
				binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
			}
		}
		return out
	}
	csf := s.kind == arrowfb.SparseTensorIndexSparseTensorIndexCSF
	var ptrBufs, idxBufs []*[2]int64
	for _, p := range s.indptr {
		ptrBufs = append(ptrBufs, add(encode(p), csf))
	}
	for _, x := range s.indices {
		idxBufs = append(idxBufs, add(encode(x), csf))
	}
	vals := make([]byte, 8*len(s.values))
	for i, v := range s.values {
		binary.LittleEndian.PutUint64(vals[8*i:], math.Float64bits(v))
	}
	data := add(vals, false)
	if s.patch != nil {
		s.patch(ptrBufs, idxBufs, data)
	}

	b := flatbuffers.NewBuilder(512)
	intType := func() flatbuffers.UOffsetT {
		arrowfb.IntStart(b)
		arrowfb.IntAddBitWidth(b, s.indexBits)
		arrowfb.IntAddIsSigned(b, !s.unsigned)
		return arrowfb.IntEnd(b)
	}
	arrowfb.FloatingPointStart(b)
	arrowfb.FloatingPointAddPrecision(b, arrowfb.PrecisionDOUBLE)
	valueType := arrowfb.FloatingPointEnd(b)
	shape := buildDims(b, s.shape, nil)
	var index flatbuffers.UOffsetT
	switch s.kind {
	case arrowfb.SparseTensorIndexSparseTensorIndexCOO:
		strides := s.strides
		if strides == nil {
			strides = []int64{int64(len(s.shape)) * w, w}
		}
		arrowfb.SparseTensorIndexCOOStartIndicesStridesVector(b, len(strides))
		for i := len(strides) - 1; i >= 0; i-- {
			b.PrependInt64(strides[i])
		}
		stridesOff := b.EndVector(len(strides))
		typ := intType()
		arrowfb.SparseTensorIndexCOOStart(b)
		arrowfb.SparseTensorIndexCOOAddIndicesType(b, typ)
		arrowfb.SparseTensorIndexCOOAddIndicesStrides(b, stridesOff)
		arrowfb.SparseTensorIndexCOOAddIndicesBuffer(b, arrowfb.CreateBuffer(b, idxBufs[0][0], idxBufs[0][1]))
		arrowfb.SparseTensorIndexCOOAddIsCanonical(b, s.canonical)
		index = arrowfb.SparseTensorIndexCOOEnd(b)
	case arrowfb.SparseTensorIndexSparseMatrixIndexCSX:
		pt, it := intType(), intType()
		arrowfb.SparseMatrixIndexCSXStart(b)
		arrowfb.SparseMatrixIndexCSXAddCompressedAxis(b, s.axis)
		arrowfb.SparseMatrixIndexCSXAddIndptrType(b, pt)
		arrowfb.SparseMatrixIndexCSXAddIndptrBuffer(b, arrowfb.CreateBuffer(b, ptrBufs[0][0], ptrBufs[0][1]))
		arrowfb.SparseMatrixIndexCSXAddIndicesType(b, it)
		arrowfb.SparseMatrixIndexCSXAddIndicesBuffer(b, arrowfb.CreateBuffer(b, idxBufs[0][0], idxBufs[0][1]))
		index = arrowfb.SparseMatrixIndexCSXEnd(b)
	default:
		arrowfb.SparseTensorIndexCSFStartAxisOrderVector(b, len(s.axisOrder))
		for i := len(s.axisOrder) - 1; i >= 0; i-- {
			b.PrependInt32(s.axisOrder[i])
		}
		order := b.EndVector(len(s.axisOrder))
		buffers := func(bufs []*[2]int64) flatbuffers.UOffsetT {
			b.StartVector(16, len(bufs), 8)
			for i := len(bufs) - 1; i >= 0; i-- {
				arrowfb.CreateBuffer(b, bufs[i][0], bufs[i][1])
			}
			return b.EndVector(len(bufs))
		}
		ptrs, idxs := buffers(ptrBufs), buffers(idxBufs)
		pt, it := intType(), intType()
		arrowfb.SparseTensorIndexCSFStart(b)
		arrowfb.SparseTensorIndexCSFAddIndptrType(b, pt)
		arrowfb.SparseTensorIndexCSFAddIndptrBuffers(b, ptrs)
		arrowfb.SparseTensorIndexCSFAddIndicesType(b, it)
		arrowfb.SparseTensorIndexCSFAddIndicesBuffers(b, idxs)
		arrowfb.SparseTensorIndexCSFAddAxisOrder(b, order)
		index = arrowfb.SparseTensorIndexCSFEnd(b)
	}
	arrowfb.SparseTensorStart(b)
	arrowfb.SparseTensorAddTypeType(b, arrowfb.TypeFloatingPoint)
	arrowfb.SparseTensorAddType(b, valueType)
	arrowfb.SparseTensorAddShape(b, shape)
	arrowfb.SparseTensorAddNonZeroLength(b, s.nnz)
	arrowfb.SparseTensorAddSparseIndexType(b, s.kind)
	arrowfb.SparseTensorAddSparseIndex(b, index)
	arrowfb.SparseTensorAddData(b, arrowfb.CreateBuffer(b, data[0], data[1]))
	tensor := arrowfb.SparseTensorEnd(b)
	arrowfb.MessageStart(b)
	arrowfb.MessageAddVersion(b, arrowfb.MetadataVersionV5)
	arrowfb.MessageAddHeaderType(b, arrowfb.MessageHeaderSparseTensor)
	arrowfb.MessageAddHeader(b, tensor)
	arrowfb.MessageAddBodyLength(b, int64(len(body)))
	b.Finish(arrowfb.MessageEnd(b))
	var out bytes.Buffer
	_, err := writeMessage(&out, b.FinishedBytes(), sparseAlignment, body)
	require.NoError(t, err)
	return out.Bytes()
}

// readSparse reads the first sparse tensor of b through the bytes and io.Reader readers and
// checks that they agree.
func readSparse(t *testing.T, b []byte, lim Limits) (*SparseTensor, error) {
	t.Helper()
	s1, err1 := NewBytesReader(b, lim).NextSparse()
	_, err2 := NewReader(bytes.NewReader(b), lim).NextSparse()
	assert.Equal(t, err1 == nil, err2 == nil, "both readers agree: %v / %v", err1, err2)
	return s1, err1
}

func TestSparseValidSpecs(t *testing.T) {
	want := []float64{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3}
	for name, s := range map[string]sparseSpec{
		"coo": validCOO(), "csr": validCSR(), "csf": validCSF(),
		"csf byte lengths": func() sparseSpec { s := validCSF(); s.csfBytes = true; return s }(),
		"coo int8":         func() sparseSpec { s := validCOO(); s.indexBits = 8; return s }(),
		"csr int16":        func() sparseSpec { s := validCSR(); s.indexBits = 16; return s }(),
		"coo column-major indices": func() sparseSpec {
			s := validCOO()
			s.indices = [][]int64{{0, 1, 2, 1, 2, 3}}
			s.strides = []int64{8, 24}
			return s
		}(),
		"csc": func() sparseSpec {
			s := validCSR()
			s.axis = arrowfb.SparseMatrixCompressedAxisColumn
			s.indptr = [][]int64{{0, 0, 1, 2, 3}}
			s.indices = [][]int64{{0, 1, 2}}
			return s
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := readSparse(t, s.bytes(t), Limits{})
			require.NoError(t, err)
			d := mustDense(t, got.Array()).(*ndarray.Dense[float64])
			assert.Equal(t, want, d.Data())
		})
	}
}

// TestSparseBadInput is the sparse rows of RELIABILITY.md: each malformed message gives an
// error wrapping ErrInvalid or ErrLimit that says what is wrong, and never a panic.
func TestSparseBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   func() sparseSpec
		limit  bool
		reason string
	}{
		{"coo nnz negative", func() sparseSpec { s := validCOO(); s.nnz = -1; return s }, false, "-1 stored values"},
		{"coo nnz overflowing", func() sparseSpec { s := validCOO(); s.nnz = 1 << 62; return s }, true, "stored values, more than the limit"},
		{"coo nnz beyond buffers", func() sparseSpec { s := validCOO(); s.nnz = 4; return s }, false, "too small for 4 elements"},
		{"coo indices buffer too small", func() sparseSpec {
			s := validCOO()
			s.patch = func(_, idx []*[2]int64, _ *[2]int64) { idx[0][1] = 40 }
			return s
		}, false, "does not fit in 40 bytes"},
		{"coo index negative", func() sparseSpec { s := validCOO(); s.indices[0][3] = -2; s.canonical = false; return s }, false, "coordinate -2 of dimension 1"},
		{"coo index past dim", func() sparseSpec { s := validCOO(); s.indices[0][4] = 3; return s }, false, "coordinate 3 of dimension 0"},
		{"coo canonical claimed unsorted", func() sparseSpec { s := validCOO(); s.indices[0] = []int64{1, 2, 0, 1, 2, 3}; return s }, false, "isCanonical is set"},
		{"coo canonical claimed duplicates", func() sparseSpec { s := validCOO(); s.indices[0] = []int64{0, 1, 0, 1, 2, 3}; return s }, false, "isCanonical is set"},
		{"coo unsigned index type", func() sparseSpec { s := validCOO(); s.unsigned = true; return s }, false, "signed false"},
		{"coo 128-bit index type", func() sparseSpec { s := validCOO(); s.indexBits = 128; return s }, false, "bitWidth 128"},
		{"coo three strides", func() sparseSpec { s := validCOO(); s.strides = []int64{16, 8, 8}; return s }, false, "3 indices strides"},
		{"coo stride not a multiple", func() sparseSpec { s := validCOO(); s.strides = []int64{16, 3}; return s }, false, "not a non-negative multiple"},
		{"coo buffer past body", func() sparseSpec {
			s := validCOO()
			s.patch = func(_, idx []*[2]int64, _ *[2]int64) { idx[0][0] = 1 << 40 }
			return s
		}, false, "outside a body"},
		{"values buffer negative offset", func() sparseSpec {
			s := validCOO()
			s.patch = func(_, _ []*[2]int64, data *[2]int64) { data[0] = -8 }
			return s
		}, false, "values buffer (offset -8"},
		{"values buffer too small", func() sparseSpec {
			s := validCSR()
			s.patch = func(_, _ []*[2]int64, data *[2]int64) { data[1] = 16 }
			return s
		}, false, "values buffer of 16 bytes is too small"},
		{"csr rank 3", func() sparseSpec { s := validCSR(); s.shape = []int64{3, 4, 1}; return s }, false, "rank 3, want 2"},
		{"csr indptr short", func() sparseSpec {
			s := validCSR()
			s.indptr[0] = s.indptr[0][:3]
			s.patch = func(p, _ []*[2]int64, _ *[2]int64) { p[0][1] = 12 }
			return s
		}, false, "indptr buffer of 12 bytes is too small for 4 elements"},
		{"csr indptr first", func() sparseSpec { s := validCSR(); s.indptr[0][0] = 1; return s }, false, "indptr starts at 1"},
		{"csr indptr decreasing", func() sparseSpec { s := validCSR(); s.indptr[0] = []int64{0, 2, 1, 3}; return s }, false, "indptr decreases at 2"},
		{"csr indptr last", func() sparseSpec { s := validCSR(); s.indptr[0][3] = 2; return s }, false, "indptr ends at 2, want 3"},
		{"csr index past", func() sparseSpec { s := validCSR(); s.indices[0][2] = 4; return s }, false, "indices[2] = 4 is outside [0, 4)"},
		{"csc index past", func() sparseSpec {
			s := validCSR()
			s.axis = arrowfb.SparseMatrixCompressedAxisColumn
			s.indptr = [][]int64{{0, 0, 1, 2, 3}}
			s.indices = [][]int64{{0, 1, 3}}
			return s
		}, false, "indices[2] = 3 is outside [0, 3)"},
		{"csx unknown axis", func() sparseSpec { s := validCSR(); s.axis = 7; return s }, false, "compressed axis 7"},
		{"csf too few indptr buffers", func() sparseSpec { s := validCSF(); s.indptr = nil; return s }, false, "0 indptr and 2 indices buffers for rank 2"},
		{"csf too many indices buffers", func() sparseSpec { s := validCSF(); s.indices = append(s.indices, []int64{0}); return s }, false, "1 indptr and 3 indices buffers"},
		{"csf axis order repeated", func() sparseSpec { s := validCSF(); s.axisOrder = []int32{1, 1}; return s }, false, "not a permutation"},
		{"csf axis order short", func() sparseSpec { s := validCSF(); s.axisOrder = []int32{0}; return s }, false, "1 axes in the axis order"},
		{"csf indptr decreasing", func() sparseSpec { s := validCSF(); s.indptr[0] = []int64{0, 2, 1, 3}; return s }, false, "decreases"},
		{"csf indptr past next level", func() sparseSpec { s := validCSF(); s.indptr[0] = []int64{0, 1, 2, 4}; return s }, false, "ends at 4, want 3"},
		{"csf counts past the body", func() sparseSpec {
			s := validCSF()
			s.patch = func(_, idx []*[2]int64, _ *[2]int64) { idx[1][1] = 1 << 61 }
			return s
		}, false, "outside a body"},
		{"csf index past", func() sparseSpec { s := validCSF(); s.indices[1][0] = 9; return s }, false, "level 1 indices[0] = 9"},
		{"csf leaves not nnz", func() sparseSpec { s := validCSF(); s.nnz = 2; return s }, false, "the last level has 3 indices for 2 stored values"},
		{"negative dimension", func() sparseSpec { s := validCOO(); s.shape = []int64{3, -4}; return s }, false, "dimension 1 is -4"},
		{"elements over the limit", func() sparseSpec { s := validCOO(); s.shape = []int64{1 << 40, 1 << 20}; return s }, true, "more than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readSparse(t, tc.spec().bytes(t), Limits{})
			require.Error(t, err)
			if tc.limit {
				assert.ErrorIs(t, err, ErrLimit)
			} else {
				assert.ErrorIs(t, err, ErrInvalid)
			}
			assert.ErrorContains(t, err, tc.reason)
			assert.ErrorContains(t, err, "sparse tensor at byte 0")
		})
	}
	// sparse.ErrInvalid is wrapped too where the check is the sparse package's.
	s := validCSR()
	s.indptr[0][0] = 1
	_, err := readSparse(t, s.bytes(t), Limits{})
	assert.ErrorIs(t, err, sparse.ErrInvalid)
}
