package arrowtensor

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// Schema metadata keys of a sparse tensor carried as a record batch (see COORecord and
// SparseRecord). The values are JSON, but the format's, which is the bare name.
const (
	SparseFormatKey    = "ndarrow.sparse.format"      // the tensor's format: coo, csr, csc or csf
	SparseShapeKey     = "ndarrow.sparse.dense_shape" // the dense shape, e.g. [3,4]
	SparseDimNamesKey  = "ndarrow.sparse.dim_names"   // one name per dimension; absent when unnamed
	SparseAxisOrderKey = "ndarrow.sparse.axis_order"  // a CSF tensor's axis order, e.g. [1,0,2]
)

// Column names of a sparse COO tensor carried as a record batch.
const (
	SparseIndicesColumn = "indices"
	SparseValuesColumn  = "values"
)

// COORecord returns c as a record batch that every Arrow implementation can carry — the
// SparseTensor IPC message is deprecated upstream and never crossed Flight — with one row per
// stored value: an "indices" column of FixedSizeList<int64>[rank] (the coordinates) and a
// "values" column, and the format, dense shape and dimension names (nil for none) in the schema
// metadata under SparseFormatKey, SparseShapeKey and SparseDimNamesKey. The record views c's
// memory when c is a whole array with int64 coordinates — it must then not outlive c — and
// holds copies allocated from mem otherwise; release it.
// In Python, scipy.sparse.coo_array((values, indices.T), shape) and
// tf.sparse.SparseTensor(indices, values, shape) rebuild the tensor. It fails with
// ndarray.ErrShape for a scalar (a fixed-size list cannot have size 0) and ErrUnsupported when
// dimNames is neither nil nor one name per dimension.
func COORecord[T ndarray.Numeric](mem memory.Allocator, c *sparse.COO[T], dimNames []string) (arrow.Record, error) {
	return cooRecord(mem, c, dimNames, false)
}

// cooRecord is COORecord; with copied set, the record holds copies from mem whatever c is.
func cooRecord[T ndarray.Numeric](mem memory.Allocator, c *sparse.COO[T], dimNames []string, copied bool) (arrow.Record, error) {
	rank := c.Rank()
	if rank == 0 {
		return nil, fmt.Errorf("arrowtensor: COORecord: a scalar has no coordinates to list: %w", ndarray.ErrShape)
	}
	if dimNames != nil && len(dimNames) != rank {
		return nil, fmt.Errorf("arrowtensor: COORecord: %d dimension names for rank %d: %w", len(dimNames), rank, ErrUnsupported)
	}
	view := !copied && !c.IsView() && c.Indices().DType() == ndarray.Int64
	if c.IsView() {
		c = c.Clone() // gathers the view's entries, for the copies below
	}
	nnz := int(c.NNZ())
	var coordBuf, valueBuf *memory.Buffer
	if view {
		coordBuf = memory.NewBufferBytes(ndarray.LittleEndianBytes(c.Indices().Int64()))
		valueBuf = memory.NewBufferBytes(ndarray.LittleEndianBytes(c.Data()))
	} else {
		indices := c.Indices()
		coordBuf = copyBuffer(mem, int64(indices.Len()), func(dst []int64) error {
			for i := range dst {
				dst[i] = indices.At(i)
			}
			return nil
		})
		valueBuf = copyBuffer(mem, int64(nnz), func(dst []T) error { copy(dst, c.Data()); return nil })
	}
	defer coordBuf.Release()
	defer valueBuf.Release()

	meta := map[string]string{SparseFormatKey: sparse.FormatCOO.String()}
	shape, _ := json.Marshal([]int64(c.Shape()))
	meta[SparseShapeKey] = string(shape)
	if dimNames != nil {
		names, _ := json.Marshal(dimNames)
		meta[SparseDimNamesKey] = string(names)
	}
	indicesType := arrow.FixedSizeListOf(int32(rank), arrow.PrimitiveTypes.Int64)
	valueType := c.DType().ArrowType()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: SparseIndicesColumn, Type: indicesType},
		{Name: SparseValuesColumn, Type: valueType},
	}, func() *arrow.Metadata { m := arrow.MetadataFrom(meta); return &m }())

	child := array.NewData(arrow.PrimitiveTypes.Int64, nnz*rank, []*memory.Buffer{nil, coordBuf}, nil, 0, 0)
	defer child.Release()
	indicesData := array.NewData(indicesType, nnz, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	defer indicesData.Release()
	valuesData := array.NewData(valueType, nnz, []*memory.Buffer{nil, valueBuf}, nil, 0, 0)
	defer valuesData.Release()
	indices, vals := array.MakeFromData(indicesData), array.MakeFromData(valuesData)
	defer indices.Release()
	defer vals.Release()
	return array.NewRecord(schema, []arrow.Array{indices, vals}, int64(nnz)), nil
}

// IsSparseSchema reports whether schema is that of a sparse tensor record batch (see
// COORecord).
func IsSparseSchema(schema *arrow.Schema) bool {
	_, ok := schema.Metadata().GetValue(SparseFormatKey)
	return ok
}

// COOFromRecord returns the sparse tensor carried by rec (see COORecord) as a COO, and its
// dimension names (nil for none). The array is read-only and views rec's memory (unless the
// values are not aligned for T, or the record names another format, which is converted back
// to COO): it must not be used after rec is released. The coordinates are checked
// against the shape as sparse.MakeCOO checks them. Errors wrap ErrUnsupported for a record
// that is not a sparse tensor or holds nulls, sparse.ErrInvalid for coordinates outside the
// shape, and ndarray.ErrDType when T is not the values' type.
func COOFromRecord[T ndarray.Numeric](rec arrow.Record) (*sparse.COO[T], []string, error) {
	a, names, err := SparseFromRecord(rec)
	if err != nil {
		return nil, nil, err
	}
	if a.Format() != sparse.FormatCOO {
		if a, err = a.Convert(sparse.FormatCOO); err != nil {
			return nil, nil, err
		}
	}
	c, ok := a.(*sparse.COO[T])
	if !ok {
		return nil, nil, fmt.Errorf("arrowtensor: sparse tensor of %v read as %v: %w", a.DType(), ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	return c, names, nil
}

// SparseRecord returns a — a sparse array of any format and element type — as a record
// batch of its stored entries in canonical order, as COORecord lays them out, with its format
// under SparseFormatKey (and a CSF's axis order under SparseAxisOrderKey), so that
// SparseFromRecord gives back the same format. The record holds a copy allocated from mem;
// release it.
func SparseRecord(mem memory.Allocator, a sparse.Array, dimNames []string) (arrow.Record, error) {
	coo := a
	if c, ok := a.(interface{ IsCanonical() bool }); !ok || !c.IsCanonical() {
		var err error
		if coo, err = a.Convert(sparse.FormatCOO); err != nil {
			return nil, fmt.Errorf("arrowtensor: SparseRecord: %w", err)
		}
	}
	ops, ok := sparseOps[a.DType()]
	if !ok {
		return nil, fmt.Errorf("arrowtensor: SparseRecord: values of %v: %w", a.DType(), ErrUnsupported)
	}
	rec, err := ops.record(mem, coo, dimNames)
	if err != nil || a.Format() == sparse.FormatCOO {
		return rec, err
	}
	md := rec.Schema().Metadata()
	keys, values := md.Keys(), md.Values()
	for i, k := range keys {
		if k == SparseFormatKey {
			values[i] = a.Format().String()
		}
	}
	if o, ok := a.(interface{ AxisOrder() []int }); ok {
		order, _ := json.Marshal(o.AxisOrder())
		keys, values = append(keys, SparseAxisOrderKey), append(values, string(order))
	}
	meta := arrow.NewMetadata(keys, values)
	out := array.NewRecord(arrow.NewSchema(rec.Schema().Fields(), &meta), rec.Columns(), rec.NumRows())
	rec.Release()
	return out, nil
}

// SparseFromRecord is COOFromRecord for an element type known only at run time, and for any
// sparse format: the result is a *sparse.COO[T] of the values column's type viewing rec, or, when
// SparseFormatKey names another format, a copy in that format (a CSF with the recorded axis
// order).
func SparseFromRecord(rec arrow.Record) (sparse.Array, []string, error) {
	return SparseFromRecords([]arrow.Record{rec})
}

// SparseFromRecords reads a sparse tensor carried by record batches of one schema (a stream
// splits a large one between batches): their entries in order, in the format the schema
// records, with its dimension names. With one batch of a COO tensor the result views it;
// otherwise it is a copy. No batches is an error wrapping ErrUnsupported.
func SparseFromRecords(recs []arrow.Record) (sparse.Array, []string, error) {
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("arrowtensor: a sparse tensor of no record batches: %w", ErrUnsupported)
	}
	h, err := sparseHeaderOf(recs[0].Schema())
	if err != nil {
		return nil, nil, err
	}
	parts := make([]sparse.Array, len(recs))
	for i, rec := range recs {
		if !rec.Schema().Equal(recs[0].Schema()) {
			return nil, nil, fmt.Errorf("arrowtensor: sparse tensor record %d: its schema is not the first's: %w", i, ErrUnsupported)
		}
		if parts[i], err = h.coo(rec); err != nil {
			return nil, nil, err
		}
	}
	ops := sparseOps[parts[0].DType()]
	a, err := ops.finish(parts, h.format, h.axisOrder)
	if err != nil {
		return nil, nil, fmt.Errorf("arrowtensor: sparse tensor record: %w", err)
	}
	return a, h.names, nil
}

// sparseHeader is what a sparse tensor record batch's schema metadata says.
type sparseHeader struct {
	format    sparse.Format
	axisOrder []int
	shape     ndarray.Shape
	names     []string
}

func sparseFail(format string, args ...any) error {
	return fmt.Errorf("arrowtensor: sparse tensor record: %s: %w", fmt.Sprintf(format, args...), ErrUnsupported)
}

// sparseHeaderOf reads the metadata of a sparse tensor record batch's schema.
func sparseHeaderOf(schema *arrow.Schema) (sparseHeader, error) {
	meta := schema.Metadata()
	var h sparseHeader
	name, _ := meta.GetValue(SparseFormatKey)
	format, err := sparse.ParseFormat(name)
	if err != nil {
		return h, sparseFail("%s is %q, not coo, csr, csc or csf", SparseFormatKey, name)
	}
	h.format = format
	if text, ok := meta.GetValue(SparseAxisOrderKey); ok && format == sparse.FormatCSF {
		if err := json.Unmarshal([]byte(text), &h.axisOrder); err != nil {
			return h, sparseFail("%s %q: %v", SparseAxisOrderKey, text, err)
		}
	}
	text, _ := meta.GetValue(SparseShapeKey)
	if err := json.Unmarshal([]byte(text), &h.shape); err != nil {
		return h, sparseFail("%s %q: %v", SparseShapeKey, text, err)
	}
	if text, ok := meta.GetValue(SparseDimNamesKey); ok {
		if err := json.Unmarshal([]byte(text), &h.names); err != nil || len(h.names) != len(h.shape) {
			return h, sparseFail("%s %q for rank %d", SparseDimNamesKey, text, len(h.shape))
		}
	}
	return h, nil
}

// coo returns the entries of one record batch as a read-only COO viewing it.
func (h sparseHeader) coo(rec arrow.Record) (sparse.Array, error) {
	if rec.NumCols() != 2 || rec.ColumnName(0) != SparseIndicesColumn || rec.ColumnName(1) != SparseValuesColumn {
		return nil, sparseFail("columns %v, want [%s %s]", rec.Schema().Fields(), SparseIndicesColumn, SparseValuesColumn)
	}
	rank := int64(len(h.shape))
	indices, ok := rec.Column(0).(*array.FixedSizeList)
	if !ok || rank == 0 || int64(indices.DataType().(*arrow.FixedSizeListType).Len()) != rank {
		return nil, sparseFail("indices column of %v for rank %d, want fixed_size_list<int64>[%d]", rec.Column(0).DataType(), rank, rank)
	}
	child, ok := indices.ListValues().(*array.Int64)
	if !ok {
		return nil, sparseFail("indices of %v, want int64", indices.ListValues().DataType())
	}
	values := rec.Column(1)
	if indices.NullN() != 0 || child.NullN() != 0 || values.NullN() != 0 {
		return nil, sparseFail("null coordinates or values")
	}
	dtype, err := DTypeFromArrow(values.DataType())
	if err != nil {
		return nil, sparseFail("values: %v", err)
	}
	ops, ok := sparseOps[dtype]
	if !ok {
		return nil, sparseFail("values of %v", dtype)
	}
	nnz := int64(indices.Len())
	start := int64(indices.Data().Offset()) * rank
	all := child.Int64Values()
	if start+nnz*rank > int64(len(all)) || int64(values.Len()) != nnz {
		return nil, sparseFail("%d rows of %d coordinates need more values than the columns hold", nnz, rank)
	}
	coords := sparse.Int64Indices(all[start : start+nnz*rank])
	width := int64(dtype.Size())
	raw := valueBytes(values.Data(), width)
	if int64(len(raw)) < nnz*width {
		return nil, sparseFail("values buffer of %d bytes for %d values", len(raw), nnz)
	}
	a, err := ops.read(h.shape, coords, raw[:nnz*width])
	if err != nil {
		return nil, fmt.Errorf("arrowtensor: sparse tensor record: %w", err)
	}
	return a, nil
}

// sparseOp is what the sparse records need for one element type.
type sparseOp struct {
	read   func(shape ndarray.Shape, coords sparse.Indices, raw []byte) (sparse.Array, error)
	finish func(parts []sparse.Array, format sparse.Format, axisOrder []int) (sparse.Array, error)
	record func(mem memory.Allocator, coo sparse.Array, dimNames []string) (arrow.Record, error)
}

func sparseOpOf[T ndarray.Numeric]() sparseOp {
	return sparseOp{read: cooOf[T], finish: finishSparse[T], record: func(mem memory.Allocator, coo sparse.Array, names []string) (arrow.Record, error) {
		return cooRecord(mem, coo.(*sparse.COO[T]), names, true)
	}}
}

// cooOf builds a read-only COO over coordinates and little-endian values.
func cooOf[T ndarray.Numeric](shape ndarray.Shape, coords sparse.Indices, raw []byte) (sparse.Array, error) {
	values, _ := ndarray.ViewBytes[T](raw)
	c, err := sparse.MakeCOO(shape, coords, values)
	if err != nil {
		return nil, err
	}
	return c.AsReadOnly(), nil
}

// finishSparse joins the COO parts of one tensor, entries in order (the only part itself,
// else a copy), and converts the whole to format (a CSF in axisOrder, row-major when nil).
func finishSparse[T ndarray.Numeric](parts []sparse.Array, format sparse.Format, axisOrder []int) (sparse.Array, error) {
	c := parts[0].(*sparse.COO[T])
	if len(parts) > 1 {
		var coords []int64
		var values []T
		for _, p := range parts {
			coords = append(coords, p.(*sparse.COO[T]).Indices().AsInt64()...)
			values = append(values, p.(*sparse.COO[T]).Data()...)
		}
		var err error
		if c, err = sparse.MakeCOO(c.Shape(), sparse.Int64Indices(coords), values); err != nil {
			return nil, err
		}
	}
	switch format {
	case sparse.FormatCOO:
		return c, nil
	case sparse.FormatCSF:
		return c.ToCSF(axisOrder...)
	}
	return c.Convert(format)
}

var sparseOps = map[ndarray.DType]sparseOp{
	ndarray.Int8: sparseOpOf[int8](), ndarray.Int16: sparseOpOf[int16](), ndarray.Int32: sparseOpOf[int32](), ndarray.Int64: sparseOpOf[int64](),
	ndarray.Uint8: sparseOpOf[uint8](), ndarray.Uint16: sparseOpOf[uint16](), ndarray.Uint32: sparseOpOf[uint32](), ndarray.Uint64: sparseOpOf[uint64](),
	ndarray.Float16: sparseOpOf[float16.Num](), ndarray.Float32: sparseOpOf[float32](), ndarray.Float64: sparseOpOf[float64](),
}
