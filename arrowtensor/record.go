package arrowtensor

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// DimNamesKey is the field metadata key under which the names of every dimension of a
// tensor column, the rows' included, are stored as JSON (["batch","row","col"]): an
// arrow.fixed_shape_tensor type names only the cells' dimensions. Readers that do not know it
// ignore it; package dataset reads it back.
const DimNamesKey = "ndarrow.dim_names"

// Records splits d, of shape [N, cell shape...], along its first axis into record batches of
// at most rowsPerBatch rows, each with one arrow.fixed_shape_tensor column named name. This is
// how a large tensor goes into an IPC stream or a Flight DoGet in pieces a reader can take one
// at a time. dimNames names every dimension of d (the type gets the cells' names, the field
// DimNamesKey with all of them), or only the cells', or is nil. The batches are slices of one
// array that views d's memory when d is row-major contiguous (a row-major copy allocated from
// mem otherwise); release each one. Records fails with ndarray.ErrShape when rowsPerBatch is
// not positive, d is a scalar, or dimNames has another length.
func Records[T ndarray.Numeric](mem memory.Allocator, name string, d *ndarray.Dense[T], dimNames []string, rowsPerBatch int64) ([]arrow.Record, error) {
	if rowsPerBatch <= 0 {
		return nil, fmt.Errorf("arrowtensor: %d rows per batch: %w", rowsPerBatch, ndarray.ErrShape)
	}
	cellNames := dimNames
	var md arrow.Metadata
	if len(dimNames) > 0 && len(dimNames) == d.Rank() {
		all, err := json.Marshal(dimNames)
		if err != nil {
			return nil, err
		}
		cellNames, md = dimNames[1:], arrow.NewMetadata([]string{DimNamesKey}, []string{string(all)})
	}
	arr, err := NewFixedShapeTensorArray(mem, d, cellNames)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return sliceRecords(arrow.Field{Name: name, Type: arr.DataType(), Nullable: true, Metadata: md}, arr, rowsPerBatch), nil
}

// RaggedRecords splits a along its rows into record batches of at most rowsPerBatch rows, each
// with one list column (list = arrow.LIST or arrow.LARGE_LIST, see ListFromRagged) named name:
// how a ragged array goes into an IPC stream or a Flight DoGet in pieces. The batches are
// slices of one array, allocated from mem where ListFromRagged does not view a; release each.
// RaggedRecords fails with ndarray.ErrShape when rowsPerBatch is not positive.
func RaggedRecords[T ndarray.Element](mem memory.Allocator, name string, a *ragged.Array[T], list arrow.Type, rowsPerBatch int64) ([]arrow.Record, error) {
	if rowsPerBatch <= 0 {
		return nil, fmt.Errorf("arrowtensor: %d rows per batch: %w", rowsPerBatch, ndarray.ErrShape)
	}
	arr, err := ListFromRagged(mem, a, list)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return sliceRecords(arrow.Field{Name: name, Type: arr.DataType(), Nullable: true}, arr, rowsPerBatch), nil
}

// sliceRecords returns arr as record batches of one column, field, of at most rowsPerBatch
// rows (one empty batch for an empty array).
func sliceRecords(field arrow.Field, arr arrow.Array, rowsPerBatch int64) []arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{field}, nil)
	n := int64(arr.Len())
	var out []arrow.Record
	for start := int64(0); start < n || (n == 0 && out == nil); start += rowsPerBatch {
		end := min(start+rowsPerBatch, n)
		part := array.NewSlice(arr, start, end)
		out = append(out, array.NewRecord(schema, []arrow.Array{part}, end-start))
		part.Release()
	}
	return out
}
