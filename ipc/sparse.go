package ipc

import (
	"fmt"
	"io"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// SparseTensor is a sparse tensor decoded from an Arrow SparseTensor message — COO, CSR, CSC
// or CSF. Decoding checks everything before use: buffer sizes, every index against its
// dimension, pointers that start at 0, never decrease and end where they must, the axis order
// and a claimed canonical order. Its values and indices are not copied when they are int32 or
// int64 and aligned (int8 and int16 indices are widened to int32, and a COO index matrix with
// strides other than row-major is copied into row-major order); the views stay valid until the
// last Release of a tensor read from a file.
type SparseTensor struct {
	names  []string
	meta   arrow.Metadata
	offset int64
	owner  *mmap.Mapping
	array  sparse.Array // a *sparse.COO[T], CSR[T], CSC[T] or CSF[T], read-only
	wire   ndarray.DType
}

// Format returns the sparse layout.
func (s *SparseTensor) Format() sparse.Format { return s.array.Format() }

// DType returns the element type.
func (s *SparseTensor) DType() ndarray.DType { return s.array.DType() }

// Shape returns a copy of the dense shape.
func (s *SparseTensor) Shape() ndarray.Shape { return s.array.Shape() }

// DimNames returns the dimension names, or nil when every dimension is unnamed.
func (s *SparseTensor) DimNames() []string { return append([]string(nil), s.names...) }

// Metadata returns the message's custom metadata (see WithMetadata); empty when it has none.
func (s *SparseTensor) Metadata() arrow.Metadata { return s.meta }

// NNZ returns the number of stored values.
func (s *SparseTensor) NNZ() int64 { return s.array.NNZ() }

// IndexType returns the integer type of the indices on the wire (int8 … int64).
func (s *SparseTensor) IndexType() ndarray.DType { return s.wire }

// Offset returns the byte offset of the tensor's message in its input.
func (s *SparseTensor) Offset() int64 { return s.offset }

// Array returns the tensor as a read-only sparse array (a *sparse.COO[T], *sparse.CSR[T],
// *sparse.CSC[T] or *sparse.CSF[T]) viewing the message's memory.
func (s *SparseTensor) Array() sparse.Array { return s.array }

// Retain adds a reference to the memory behind the array; each Retain needs a Release.
func (s *SparseTensor) Retain() {
	if s.owner != nil {
		s.owner.Retain()
	}
}

// Release drops a reference to the memory behind the array (see Tensor.Release).
func (s *SparseTensor) Release() {
	if s.owner != nil {
		s.owner.Release()
	}
}

// WriteValues writes the tensor's elements, zeros included, to w in dense row-major order,
// little-endian — the bytes of Arrow C++'s ToTensor — without building the dense tensor in
// memory. It returns the number of bytes written.
func (s *SparseTensor) WriteValues(w io.Writer) (int64, error) {
	n, err := s.array.WriteTo(w)
	if err != nil {
		return n, fmt.Errorf("ipc: writing values: %w", err)
	}
	return n, nil
}

// AsSparse returns the tensor as a read-only sparse.Tensor[T] viewing the message's memory; a
// type switch recovers the *sparse.COO[T], *sparse.CSR[T], *sparse.CSC[T] or
// *sparse.CSF[T]. T must be the tensor's element type.
func AsSparse[T ndarray.Numeric](s *SparseTensor) (sparse.Tensor[T], error) {
	t, ok := s.array.(sparse.Tensor[T])
	if !ok {
		return nil, fmt.Errorf("ipc: sparse tensor of %v read as %v: %w", s.DType(), ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	return t, nil
}

// sparseParts is what decodeSparse has checked of a message before an array is built from
// it: the index buffers as indices of one type, and the values' bytes.
type sparseParts struct {
	format    sparse.Format
	shape     ndarray.Shape
	indptr    []sparse.Indices
	indices   []sparse.Indices
	values    []byte
	nnz       int64
	canonical bool // claimed by a COO message
	axisOrder []int
}

// decodeSparse validates a SparseTensor message and returns the tensor it describes, viewing
// m.body.
func decodeSparse(m message, lim Limits) (*SparseTensor, error) {
	fail := func(kind error, format string, args ...any) (*SparseTensor, error) {
		return nil, fmt.Errorf("ipc: sparse tensor at byte %d: %s: %w", m.offset, fmt.Sprintf(format, args...), kind)
	}
	var tbl flatbuffers.Table
	m.meta.Header(&tbl) // present: VerifyMessage checked it
	var st arrowfb.SparseTensor
	st.Init(tbl.Bytes, tbl.Pos)

	dtype, err := elementType(st.TypeType(), func(t *flatbuffers.Table) { st.Type(t) })
	if err != nil {
		return fail(ErrInvalid, "element type: %v", err)
	}
	// CSR and CSC pointers are one per row or column, and a zero-size shape may still have a
	// huge dimension: bound each dimension too.
	shape, names, err := decodeDims(st.ShapeLength(), st.Shape, lim, true)
	if err != nil {
		return nil, fmt.Errorf("ipc: sparse tensor at byte %d: %w", m.offset, err)
	}
	p := sparseParts{shape: shape}
	out := &SparseTensor{offset: m.offset, names: names, meta: m.metadata()}
	p.nnz = st.NonZeroLength()
	if p.nnz < 0 {
		return fail(ErrInvalid, "%d stored values", p.nnz)
	}
	if p.nnz > lim.MaxElements {
		return fail(ErrLimit, "%d stored values, more than the limit of %d", p.nnz, lim.MaxElements)
	}
	b := bodyBuffers{body: m.body}
	var data arrowfb.Buffer
	st.Data(&data)
	width := int64(dtype.Size())
	if p.values, err = b.slice(&data, p.nnz, width, "values"); err != nil {
		return fail(ErrInvalid, "%v", err)
	}

	var index flatbuffers.Table
	st.SparseIndex(&index) // present and of a known kind: VerifyMessage checked it
	switch kind := st.SparseIndexType(); kind {
	case arrowfb.SparseTensorIndexSparseTensorIndexCOO:
		var coo arrowfb.SparseTensorIndexCOO
		coo.Init(index.Bytes, index.Pos)
		err = p.coo(&coo, b)
		out.wire, _ = indexType(coo.IndicesType(nil))
	case arrowfb.SparseTensorIndexSparseMatrixIndexCSX:
		var csx arrowfb.SparseMatrixIndexCSX
		csx.Init(index.Bytes, index.Pos)
		err = p.csx(&csx, b)
		out.wire, _ = indexType(csx.IndicesType(nil))
	case arrowfb.SparseTensorIndexSparseTensorIndexCSF:
		var csf arrowfb.SparseTensorIndexCSF
		csf.Init(index.Bytes, index.Pos)
		err = p.csf(&csf, b)
		out.wire, _ = indexType(csf.IndicesType(nil))
	}
	if err != nil {
		return fail(ErrInvalid, "%v", err)
	}
	ops, ok := typedOps[dtype]
	if !ok {
		return fail(ErrInvalid, "element type %v", dtype)
	}
	if out.array, err = ops.sparseArray(p); err != nil {
		return nil, fmt.Errorf("ipc: sparse tensor at byte %d: %w: %w", m.offset, err, ErrInvalid)
	}
	return out, nil
}

// indexType returns the dtype of a signed integer index type.
func indexType(t *arrowfb.Int) (ndarray.DType, error) {
	if t == nil {
		return 0, fmt.Errorf("index type missing")
	}
	types := map[int32]ndarray.DType{8: ndarray.Int8, 16: ndarray.Int16, 32: ndarray.Int32, 64: ndarray.Int64}
	d, ok := types[t.BitWidth()]
	if !ok || !t.IsSigned() {
		return 0, fmt.Errorf("index type int(bitWidth %d, signed %v): indices are signed 8-, 16-, 32- or 64-bit integers", t.BitWidth(), t.IsSigned())
	}
	return d, nil
}

// bodyBuffers slices buffers out of a message body with overflow-checked arithmetic.
type bodyBuffers struct{ body []byte }

// slice returns the first n×width bytes of buf, failing unless the buffer lies in the body
// and holds them.
func (b bodyBuffers) slice(buf *arrowfb.Buffer, n, width int64, what string) ([]byte, error) {
	raw, err := b.region(buf.Offset(), buf.Length(), what)
	if err != nil {
		return nil, err
	}
	need, ok := mulNonNegative(n, width)
	if !ok || need > int64(len(raw)) {
		return nil, fmt.Errorf("%s buffer of %d bytes is too small for %d elements of %d bytes", what, len(raw), n, width)
	}
	return raw[:need], nil
}

// region returns the length bytes at off, failing unless they lie in the body.
func (b bodyBuffers) region(off, length int64, what string) ([]byte, error) {
	if off < 0 || length < 0 || off > int64(len(b.body)) || length > int64(len(b.body))-off {
		return nil, fmt.Errorf("%s buffer (offset %d, length %d) outside a body of %d bytes", what, off, length, len(b.body))
	}
	return b.body[off : off+length], nil
}

// counted returns a CSF buffer whose Buffer.length counts elements (what Arrow C++ writes)
// or, when asBytes, bytes (what the specification says).
func (b bodyBuffers) counted(buf *arrowfb.Buffer, width int64, asBytes bool, what string) ([]byte, int64, error) {
	n := buf.Length()
	if asBytes {
		if n%width != 0 {
			return nil, 0, fmt.Errorf("%s buffer of %d bytes is not a whole number of %d-byte indices", what, n, width)
		}
		n /= width
	}
	need, ok := mulNonNegative(n, width)
	if !ok {
		return nil, 0, fmt.Errorf("%s buffer of %d indices of %d bytes outside a body of %d bytes", what, n, width, len(b.body))
	}
	raw, err := b.region(buf.Offset(), need, what)
	return raw, n, err
}

// mulNonNegative returns a×b for non-negative a and b and whether it fits in an int64.
func mulNonNegative(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int64(lo), hi == 0 && lo <= 1<<63-1
}

// coo reads a COO index: an [nnz, rank] matrix of coordinates with strides in bytes.
func (p *sparseParts) coo(coo *arrowfb.SparseTensorIndexCOO, b bodyBuffers) error {
	p.format = sparse.FormatCOO
	t, err := indexType(coo.IndicesType(nil))
	if err != nil {
		return err
	}
	w := int64(t.Size())
	rank := int64(len(p.shape))
	var buf arrowfb.Buffer
	coo.IndicesBuffer(&buf)
	raw, err := b.region(buf.Offset(), buf.Length(), "indices")
	if err != nil {
		return err
	}
	length := int64(len(raw))
	strides := []int64{rank * w, w}
	switch n := coo.IndicesStridesLength(); n {
	case 0:
	case 2:
		for i := range strides {
			if s := coo.IndicesStrides(i); s < 0 || s%w != 0 {
				return fmt.Errorf("indices stride %d is not a non-negative multiple of the %d-byte index", s, w)
			} else {
				strides[i] = s
			}
		}
	default:
		return fmt.Errorf("%d indices strides, want 2", n)
	}
	layout := ndarray.Layout{Shape: ndarray.Shape{p.nnz, rank}, Strides: []int64{strides[0] / w, strides[1] / w}}
	if err := layout.Validate(length / w); err != nil {
		return fmt.Errorf("indices matrix [%d, %d] with strides %v does not fit in %d bytes: %v", p.nnz, rank, strides, length, err)
	}
	p.indices = []sparse.Indices{indicesOf(t, raw, layout)}
	p.canonical = coo.IsCanonical()
	return nil
}

// csx reads a CSR or CSC index.
func (p *sparseParts) csx(csx *arrowfb.SparseMatrixIndexCSX, b bodyBuffers) error {
	if len(p.shape) != 2 {
		return fmt.Errorf("a compressed sparse matrix of rank %d, want 2", len(p.shape))
	}
	major := 0
	switch axis := csx.CompressedAxis(); axis {
	case arrowfb.SparseMatrixCompressedAxisRow:
		p.format = sparse.FormatCSR
	case arrowfb.SparseMatrixCompressedAxisColumn:
		p.format, major = sparse.FormatCSC, 1
	default:
		return fmt.Errorf("compressed axis %d", axis)
	}
	pt, err := indexType(csx.IndptrType(nil))
	if err != nil {
		return fmt.Errorf("indptr: %v", err)
	}
	it, err := indexType(csx.IndicesType(nil))
	if err != nil {
		return err
	}
	var buf arrowfb.Buffer
	csx.IndptrBuffer(&buf)
	indptr, err := b.slice(&buf, p.shape[major]+1, int64(pt.Size()), "indptr")
	if err != nil {
		return err
	}
	csx.IndicesBuffer(&buf)
	indices, err := b.slice(&buf, p.nnz, int64(it.Size()), "indices")
	if err != nil {
		return err
	}
	common := max(pt, it, ndarray.Int32) // Int8 < Int16 < Int32 < Int64
	p.indptr = []sparse.Indices{widen(indicesOf(pt, indptr, ndarray.RowMajor(ndarray.Shape{p.shape[major] + 1})), common)}
	p.indices = []sparse.Indices{widen(indicesOf(it, indices, ndarray.RowMajor(ndarray.Shape{p.nnz})), common)}
	return nil
}

// csf reads a CSF index, taking the Buffer.length of indptr and indices buffers as element
// counts, as Arrow C++ writes them, or failing that as exact byte lengths, as the
// specification has them. (Padded byte lengths cannot be told from counts; no known writer
// produces them for CSF.)
func (p *sparseParts) csf(csf *arrowfb.SparseTensorIndexCSF, b bodyBuffers) error {
	p.format = sparse.FormatCSF
	rank := len(p.shape)
	if rank == 0 {
		return fmt.Errorf("a CSF tensor of rank 0")
	}
	pt, err := indexType(csf.IndptrType(nil))
	if err != nil {
		return fmt.Errorf("indptr: %v", err)
	}
	it, err := indexType(csf.IndicesType(nil))
	if err != nil {
		return err
	}
	if n, m := csf.IndptrBuffersLength(), csf.IndicesBuffersLength(); n != rank-1 || m != rank {
		return fmt.Errorf("%d indptr and %d indices buffers for rank %d, want %d and %d", n, m, rank, rank-1, rank)
	}
	if n := csf.AxisOrderLength(); n != rank {
		return fmt.Errorf("%d axes in the axis order for rank %d", n, rank)
	}
	p.axisOrder = make([]int, rank)
	for i := range rank {
		p.axisOrder[i] = int(csf.AxisOrder(i))
	}
	common := max(pt, it, ndarray.Int32)
	var firstErr error
	for _, asBytes := range []bool{false, true} {
		p.indptr, p.indices = make([]sparse.Indices, rank-1), make([]sparse.Indices, rank)
		err := func() error {
			var buf arrowfb.Buffer
			for l := range rank {
				if l < rank-1 {
					csf.IndptrBuffers(&buf, l)
					raw, n, err := b.counted(&buf, int64(pt.Size()), asBytes, fmt.Sprintf("level %d indptr", l))
					if err != nil {
						return err
					}
					p.indptr[l] = widen(indicesOf(pt, raw, ndarray.RowMajor(ndarray.Shape{n})), common)
				}
				csf.IndicesBuffers(&buf, l)
				raw, n, err := b.counted(&buf, int64(it.Size()), asBytes, fmt.Sprintf("level %d indices", l))
				if err != nil {
					return err
				}
				p.indices[l] = widen(indicesOf(it, raw, ndarray.RowMajor(ndarray.Shape{n})), common)
			}
			if got := int64(p.indices[rank-1].Len()); got != p.nnz {
				return fmt.Errorf("the last level has %d indices for %d stored values", got, p.nnz)
			}
			return nil
		}()
		if err == nil {
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// indicesOf returns the indices of type t laid out by l (in elements) in raw, which the
// caller has checked holds them: a view when t is int32 or int64, the layout is row-major and
// the bytes are aligned, and a row-major copy (int32 for narrower types) otherwise.
func indicesOf(t ndarray.DType, raw []byte, l ndarray.Layout) sparse.Indices {
	switch t {
	case ndarray.Int64:
		v, _ := ndarray.ViewBytes[int64](raw)
		if l.IsRowMajor() {
			return sparse.Int64Indices(v[:l.Size()])
		}
		return sparse.Int64Indices(ndarray.Must(ndarray.FromLayout(v, l)).Clone().Data())
	case ndarray.Int32:
		v, _ := ndarray.ViewBytes[int32](raw)
		if l.IsRowMajor() {
			return sparse.Int32Indices(v[:l.Size()])
		}
		return sparse.Int32Indices(ndarray.Must(ndarray.FromLayout(v, l)).Clone().Data())
	case ndarray.Int16:
		v, _ := ndarray.ViewBytes[int16](raw)
		return sparse.Int32Indices(widenAll[int16](ndarray.Must(ndarray.FromLayout(v, l))))
	default:
		v, _ := ndarray.ViewBytes[int8](raw)
		return sparse.Int32Indices(widenAll[int8](ndarray.Must(ndarray.FromLayout(v, l))))
	}
}

// widenAll returns the elements of d in row-major order as int32.
func widenAll[T int8 | int16](d *ndarray.Dense[T]) []int32 {
	out := make([]int32, 0, d.Size())
	for v := range d.Values() {
		out = append(out, int32(v))
	}
	return out
}

// widen returns x as indices of type t (int32 or int64): x itself when it has that type, an
// int64 copy otherwise.
func widen(x sparse.Indices, t ndarray.DType) sparse.Indices {
	if x.DType() == t {
		return x
	}
	return sparse.Int64Indices(x.AsInt64())
}

// makeSparse builds the read-only typed array of checked parts, validating the indices.
func makeSparse[T ndarray.Numeric](p sparseParts) (sparse.Array, error) {
	values, _ := ndarray.ViewBytes[T](p.values)
	switch p.format {
	case sparse.FormatCOO:
		c, err := sparse.MakeCOO(p.shape, p.indices[0], values)
		if err != nil {
			return nil, err
		}
		if p.canonical && !c.IsCanonical() {
			return nil, fmt.Errorf("isCanonical is set but the coordinates are not in row-major order without duplicates: %w", sparse.ErrInvalid)
		}
		return c.AsReadOnly(), nil
	case sparse.FormatCSR:
		m, err := sparse.MakeCSR(p.shape, p.indptr[0], p.indices[0], values)
		if err != nil {
			return nil, err
		}
		return m.AsReadOnly(), nil
	case sparse.FormatCSC:
		m, err := sparse.MakeCSC(p.shape, p.indptr[0], p.indices[0], values)
		if err != nil {
			return nil, err
		}
		return m.AsReadOnly(), nil
	}
	f, err := sparse.MakeCSF(p.shape, p.axisOrder, p.indptr, p.indices, values)
	if err != nil {
		return nil, err
	}
	return f.AsReadOnly(), nil
}
