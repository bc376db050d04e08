package ipc

import (
	"fmt"
	"io"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// padding is zero bytes to pad body buffers with.
var padding [sparseAlignment]byte

// sparseAlignment is the boundary Arrow C++ pads a SparseTensor message's metadata and each of
// its body buffers to.
const sparseAlignment = 8

// WriteSparse writes s — a *sparse.COO[T] (a view is written as its Clone), *sparse.CSR[T],
// *sparse.CSC[T] or *sparse.CSF[T] — as one encapsulated Arrow SparseTensor message, exactly as
// Arrow C++'s ipc::WriteSparseTensor frames it: metadata padded to 8 bytes, the index buffers
// and then the values back to back, each zero-padded to 8 bytes, with Buffer.length the padded
// byte length except for CSF pointers and indices, whose Buffer.length is their element count
// (what the C++ 17 reader requires). A COO gets its index strides always — [rank·w, w] for
// its [nnz, rank] index matrix of w-byte integers, or [w, w] when that matrix is empty, as C++
// computes row-major strides of a shape with a zero and checks them on reading — and
// isCanonical only when it is canonical. A CSF of rank 1 or 0 fails with ErrUnsupported:
// Arrow C++ 17 implements no CSF below rank 2 and its reader crashes on one (write it as COO).
// dimNames is nil or one name per dimension. Options add to the message (WithMetadata). It
// returns the bytes written.
func WriteSparse[T ndarray.Numeric](w io.Writer, s sparse.Tensor[T], dimNames []string, opts ...WriteOption) (int64, error) {
	if dimNames != nil && len(dimNames) != s.Rank() {
		return 0, fmt.Errorf("ipc: WriteSparse: %d dimension names for rank %d: %w", len(dimNames), s.Rank(), ErrUnsupported)
	}
	var body sparseBody
	var index func(b *flatbuffers.Builder) (arrowfb.SparseTensorIndex, flatbuffers.UOffsetT)
	switch t := s.(type) {
	case *sparse.COO[T]:
		if t.IsView() {
			t = t.Clone()
		}
		indices := t.Indices()
		w := int64(indices.DType().Size())
		buf := body.add(indices.Bytes(), false)
		canonical := t.IsCanonical()
		rowStride := int64(t.Rank()) * w
		if t.NNZ() == 0 || t.Rank() == 0 {
			rowStride = w // C++'s row-major strides of a shape with a zero: every stride w
		}
		index = func(b *flatbuffers.Builder) (arrowfb.SparseTensorIndex, flatbuffers.UOffsetT) {
			arrowfb.SparseTensorIndexCOOStartIndicesStridesVector(b, 2)
			b.PrependInt64(w)
			b.PrependInt64(rowStride)
			strides := b.EndVector(2)
			typ := buildIndexType(b, indices.DType())
			arrowfb.SparseTensorIndexCOOStart(b)
			arrowfb.SparseTensorIndexCOOAddIndicesType(b, typ)
			arrowfb.SparseTensorIndexCOOAddIndicesStrides(b, strides)
			arrowfb.SparseTensorIndexCOOAddIndicesBuffer(b, buf.create(b))
			if canonical {
				arrowfb.SparseTensorIndexCOOAddIsCanonical(b, true)
			}
			return arrowfb.SparseTensorIndexSparseTensorIndexCOO, arrowfb.SparseTensorIndexCOOEnd(b)
		}
	case *sparse.CSR[T]:
		index = csxIndex(&body, arrowfb.SparseMatrixCompressedAxisRow, t.Indptr(), t.Indices())
	case *sparse.CSC[T]:
		index = csxIndex(&body, arrowfb.SparseMatrixCompressedAxisColumn, t.Indptr(), t.Indices())
	case *sparse.CSF[T]:
		if t.Rank() < 2 {
			return 0, fmt.Errorf("ipc: WriteSparse: a CSF tensor of rank %d, which Arrow C++ 17 cannot read (write it as COO): %w", t.Rank(), ErrUnsupported)
		}
		index = csfIndex(&body, t.Rank(), t.Indptr, t.Indices, t.AxisOrder())
	default:
		return 0, fmt.Errorf("ipc: WriteSparse: %T: %w", s, ErrUnsupported)
	}
	values := body.add(ndarray.LittleEndianBytes(sparseData(s)), false)

	b := flatbuffers.NewBuilder(512)
	typeType, typeOff := buildType(b, s.DType())
	shapeOff := buildDims(b, s.Shape(), dimNames)
	indexType, indexOff := index(b)
	arrowfb.SparseTensorStart(b)
	arrowfb.SparseTensorAddTypeType(b, typeType)
	arrowfb.SparseTensorAddType(b, typeOff)
	arrowfb.SparseTensorAddShape(b, shapeOff)
	arrowfb.SparseTensorAddNonZeroLength(b, s.NNZ())
	arrowfb.SparseTensorAddSparseIndexType(b, indexType)
	arrowfb.SparseTensorAddSparseIndex(b, indexOff)
	arrowfb.SparseTensorAddData(b, values.create(b))
	meta := buildMessage(b, arrowfb.MessageHeaderSparseTensor, arrowfb.SparseTensorEnd(b), body.size, writeConfigOf(opts))
	return writeMessage(w, meta, sparseAlignment, body.parts...)
}

// sparseData returns the stored values of a sparse array written by WriteSparse.
func sparseData[T ndarray.Numeric](s sparse.Tensor[T]) []T {
	switch t := s.(type) {
	case *sparse.COO[T]:
		return t.Data()
	case *sparse.CSR[T]:
		return t.Data()
	case *sparse.CSC[T]:
		return t.Data()
	case *sparse.CSF[T]:
		return t.Data()
	}
	return nil
}

// sparseBody lays out the buffers of a SparseTensor body, each padded to 8 bytes.
type sparseBody struct {
	parts [][]byte
	size  int64
}

// bodyBuffer is one buffer of a sparseBody and the Buffer.length to write for it.
type bodyBuffer struct{ offset, length int64 }

func (buf bodyBuffer) create(b *flatbuffers.Builder) flatbuffers.UOffsetT {
	return arrowfb.CreateBuffer(b, buf.offset, buf.length)
}

// add appends data and returns its Buffer: length padded to 8 bytes, or data's element count
// of the given width when counted (CSF's pointers and indices).
func (body *sparseBody) add(data []byte, counted bool, width ...int) bodyBuffer {
	padded := (int64(len(data)) + sparseAlignment - 1) &^ (sparseAlignment - 1)
	buf := bodyBuffer{offset: body.size, length: padded}
	if counted {
		buf.length = int64(len(data) / width[0])
	}
	body.parts = append(body.parts, data)
	if pad := padded - int64(len(data)); pad > 0 {
		body.parts = append(body.parts, padding[:pad])
	}
	body.size += padded
	return buf
}

// csxIndex adds a CSR or CSC matrix's buffers to body and returns the builder of its index.
func csxIndex(body *sparseBody, axis arrowfb.SparseMatrixCompressedAxis, indptr, indices sparse.Indices) func(*flatbuffers.Builder) (arrowfb.SparseTensorIndex, flatbuffers.UOffsetT) {
	ptrBuf := body.add(indptr.Bytes(), false)
	idxBuf := body.add(indices.Bytes(), false)
	return func(b *flatbuffers.Builder) (arrowfb.SparseTensorIndex, flatbuffers.UOffsetT) {
		ptrType := buildIndexType(b, indptr.DType())
		idxType := buildIndexType(b, indices.DType())
		arrowfb.SparseMatrixIndexCSXStart(b)
		arrowfb.SparseMatrixIndexCSXAddCompressedAxis(b, axis)
		arrowfb.SparseMatrixIndexCSXAddIndptrType(b, ptrType)
		arrowfb.SparseMatrixIndexCSXAddIndptrBuffer(b, ptrBuf.create(b))
		arrowfb.SparseMatrixIndexCSXAddIndicesType(b, idxType)
		arrowfb.SparseMatrixIndexCSXAddIndicesBuffer(b, idxBuf.create(b))
		return arrowfb.SparseTensorIndexSparseMatrixIndexCSX, arrowfb.SparseMatrixIndexCSXEnd(b)
	}
}

// csfIndex adds a CSF tensor's buffers to body — all pointers, then all indices — and returns
// the builder of its index.
func csfIndex(body *sparseBody, rank int, indptr, indices func(int) sparse.Indices, axisOrder []int) func(*flatbuffers.Builder) (arrowfb.SparseTensorIndex, flatbuffers.UOffsetT) {
	t := indices(0).DType()
	w := t.Size()
	ptrBufs := make([]bodyBuffer, rank-1)
	for l := range ptrBufs {
		ptrBufs[l] = body.add(indptr(l).Bytes(), true, w)
	}
	idxBufs := make([]bodyBuffer, rank)
	for l := range idxBufs {
		idxBufs[l] = body.add(indices(l).Bytes(), true, w)
	}
	return func(b *flatbuffers.Builder) (arrowfb.SparseTensorIndex, flatbuffers.UOffsetT) {
		arrowfb.SparseTensorIndexCSFStartAxisOrderVector(b, rank)
		for l := rank - 1; l >= 0; l-- {
			b.PrependInt32(int32(axisOrder[l]))
		}
		order := b.EndVector(rank)
		buffers := func(bufs []bodyBuffer) flatbuffers.UOffsetT {
			b.StartVector(16, len(bufs), 8)
			for l := len(bufs) - 1; l >= 0; l-- {
				bufs[l].create(b)
			}
			return b.EndVector(len(bufs))
		}
		ptrs, idxs := buffers(ptrBufs), buffers(idxBufs)
		ptrType := buildIndexType(b, t)
		idxType := buildIndexType(b, t)
		arrowfb.SparseTensorIndexCSFStart(b)
		arrowfb.SparseTensorIndexCSFAddIndptrType(b, ptrType)
		arrowfb.SparseTensorIndexCSFAddIndptrBuffers(b, ptrs)
		arrowfb.SparseTensorIndexCSFAddIndicesType(b, idxType)
		arrowfb.SparseTensorIndexCSFAddIndicesBuffers(b, idxs)
		arrowfb.SparseTensorIndexCSFAddAxisOrder(b, order)
		return arrowfb.SparseTensorIndexSparseTensorIndexCSF, arrowfb.SparseTensorIndexCSFEnd(b)
	}
}

// buildIndexType adds the Int table of a signed index type to b.
func buildIndexType(b *flatbuffers.Builder, t ndarray.DType) flatbuffers.UOffsetT {
	arrowfb.IntStart(b)
	arrowfb.IntAddBitWidth(b, int32(8*t.Size()))
	arrowfb.IntAddIsSigned(b, true)
	return arrowfb.IntEnd(b)
}

// buildDims adds the TensorDim vector of a shape to b, one name per dimension (empty when
// names is nil).
func buildDims(b *flatbuffers.Builder, shape ndarray.Shape, names []string) flatbuffers.UOffsetT {
	dims := make([]flatbuffers.UOffsetT, len(shape))
	for i, n := range shape {
		name := ""
		if names != nil {
			name = names[i]
		}
		nameOff := b.CreateString(name)
		arrowfb.TensorDimStart(b)
		arrowfb.TensorDimAddSize(b, n)
		arrowfb.TensorDimAddName(b, nameOff)
		dims[i] = arrowfb.TensorDimEnd(b)
	}
	arrowfb.TensorStartShapeVector(b, len(dims))
	for i := len(dims) - 1; i >= 0; i-- {
		b.PrependUOffsetT(dims[i])
	}
	return b.EndVector(len(dims))
}
