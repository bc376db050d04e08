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

// Schema metadata keys of a sparse COO tensor carried as a record batch (see COORecord). The
// values are JSON.
const (
	SparseFormatKey   = "ndarrow.sparse.format"      // "coo"
	SparseShapeKey    = "ndarrow.sparse.dense_shape" // the dense shape, e.g. [3,4]
	SparseDimNamesKey = "ndarrow.sparse.dim_names"   // one name per dimension; absent when unnamed
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
// memory when c is a whole array with int64 coordinates, and copies it otherwise; release it.
// In Python, scipy.sparse.coo_array((values, indices.T), shape) and
// tf.sparse.SparseTensor(indices, values, shape) rebuild the tensor. It fails with
// ndarray.ErrShape for a scalar (a fixed-size list cannot have size 0) and ErrUnsupported when
// dimNames is neither nil nor one name per dimension.
func COORecord[T ndarray.Numeric](c *sparse.COO[T], dimNames []string) (arrow.Record, error) {
	rank := c.Rank()
	if rank == 0 {
		return nil, fmt.Errorf("arrowtensor: COORecord: a scalar has no coordinates to list: %w", ndarray.ErrShape)
	}
	if dimNames != nil && len(dimNames) != rank {
		return nil, fmt.Errorf("arrowtensor: COORecord: %d dimension names for rank %d: %w", len(dimNames), rank, ErrUnsupported)
	}
	if c.IsView() {
		c = c.Clone()
	}
	coords := c.Indices().AsInt64()
	values := c.Data()
	nnz := len(values)

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

	child := array.NewData(arrow.PrimitiveTypes.Int64, len(coords), []*memory.Buffer{nil, memory.NewBufferBytes(ndarray.LittleEndianBytes(coords))}, nil, 0, 0)
	defer child.Release()
	indicesData := array.NewData(indicesType, nnz, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	defer indicesData.Release()
	valuesData := array.NewData(valueType, nnz, []*memory.Buffer{nil, memory.NewBufferBytes(ndarray.LittleEndianBytes(values))}, nil, 0, 0)
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

// COOFromRecord returns the sparse COO tensor carried by rec (see COORecord) and its dimension
// names (nil for none). The array is read-only and views rec's memory (unless the values are
// not aligned for T): it must not be used after rec is released. The coordinates are checked
// against the shape as sparse.MakeCOO checks them. Errors wrap ErrUnsupported for a record
// that is not a sparse tensor or holds nulls, sparse.ErrInvalid for coordinates outside the
// shape, and ndarray.ErrDType when T is not the values' type.
func COOFromRecord[T ndarray.Numeric](rec arrow.Record) (*sparse.COO[T], []string, error) {
	a, names, err := SparseFromRecord(rec)
	if err != nil {
		return nil, nil, err
	}
	c, ok := a.(*sparse.COO[T])
	if !ok {
		return nil, nil, fmt.Errorf("arrowtensor: sparse tensor of %v read as %v: %w", a.DType(), ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	return c, names, nil
}

// SparseFromRecord is COOFromRecord for an element type known only at run time: the result is
// a *sparse.COO[T] of the values column's type.
func SparseFromRecord(rec arrow.Record) (sparse.Array, []string, error) {
	fail := func(format string, args ...any) (sparse.Array, []string, error) {
		return nil, nil, fmt.Errorf("arrowtensor: sparse tensor record: %s: %w", fmt.Sprintf(format, args...), ErrUnsupported)
	}
	meta := rec.Schema().Metadata()
	format, _ := meta.GetValue(SparseFormatKey)
	if format != sparse.FormatCOO.String() {
		return fail("%s is %q, want %q", SparseFormatKey, format, sparse.FormatCOO)
	}
	var shape []int64
	text, _ := meta.GetValue(SparseShapeKey)
	if err := json.Unmarshal([]byte(text), &shape); err != nil {
		return fail("%s %q: %v", SparseShapeKey, text, err)
	}
	var names []string
	if text, ok := meta.GetValue(SparseDimNamesKey); ok {
		if err := json.Unmarshal([]byte(text), &names); err != nil || len(names) != len(shape) {
			return fail("%s %q for rank %d", SparseDimNamesKey, text, len(shape))
		}
	}
	if rec.NumCols() != 2 || rec.ColumnName(0) != SparseIndicesColumn || rec.ColumnName(1) != SparseValuesColumn {
		return fail("columns %v, want [%s %s]", rec.Schema().Fields(), SparseIndicesColumn, SparseValuesColumn)
	}
	indices, ok := rec.Column(0).(*array.FixedSizeList)
	if !ok || len(shape) == 0 || indices.DataType().(*arrow.FixedSizeListType).Len() != int32(len(shape)) {
		return fail("indices column of %v for rank %d, want fixed_size_list<int64>[%d]", rec.Column(0).DataType(), len(shape), len(shape))
	}
	child, ok := indices.ListValues().(*array.Int64)
	if !ok {
		return fail("indices of %v, want int64", indices.ListValues().DataType())
	}
	values := rec.Column(1)
	if indices.NullN() != 0 || child.NullN() != 0 || values.NullN() != 0 {
		return fail("null coordinates or values")
	}
	dtype, err := DTypeFromArrow(values.DataType())
	if err != nil {
		return fail("values: %v", err)
	}
	ops, ok := sparseOps[dtype]
	if !ok {
		return fail("values of %v", dtype)
	}
	nnz, rank := int64(indices.Len()), int64(len(shape))
	start := int64(indices.Data().Offset()) * rank
	all := child.Int64Values()
	if start+nnz*rank > int64(len(all)) || int64(values.Len()) != nnz {
		return fail("%d rows of %d coordinates need more values than the columns hold", nnz, rank)
	}
	coords := sparse.Int64Indices(all[start : start+nnz*rank])
	width := int64(dtype.Size())
	raw := valueBytes(values.Data(), width)
	if int64(len(raw)) < nnz*width {
		return fail("values buffer of %d bytes for %d values", len(raw), nnz)
	}
	a, err := ops(ndarray.Shape(shape), coords, raw[:nnz*width])
	if err != nil {
		return nil, nil, fmt.Errorf("arrowtensor: sparse tensor record: %w", err)
	}
	return a, names, nil
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

var sparseOps = map[ndarray.DType]func(ndarray.Shape, sparse.Indices, []byte) (sparse.Array, error){
	ndarray.Int8: cooOf[int8], ndarray.Int16: cooOf[int16], ndarray.Int32: cooOf[int32], ndarray.Int64: cooOf[int64],
	ndarray.Uint8: cooOf[uint8], ndarray.Uint16: cooOf[uint16], ndarray.Uint32: cooOf[uint32], ndarray.Uint64: cooOf[uint64],
	ndarray.Float16: cooOf[float16.Num], ndarray.Float32: cooOf[float32], ndarray.Float64: cooOf[float64],
}
