package tensorfile

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
)

// ErrBatchTooLarge is returned by Records when one row of a tensor alone needs more bytes
// than a batch may hold.
var ErrBatchTooLarge = errors.New("tensorfile: one row exceeds the batch size")

// Records returns t as record batches whose buffers together hold at most maxBatchBytes
// bytes each (no limit when maxBatchBytes ≤ 0): a dense tensor as an arrow.fixed_shape_tensor
// column named column, split along its first axis; a ragged one as a list (int32 row
// splits) or large_list column, split between rows; a sparse one as COO record batches
// (arrowtensor.COORecord), split between entries. Dense batches view t's memory when it is
// row-major contiguous; ragged ones allocate from mem what they cannot view. Release each.
//
// A scalar, a bool or string dense tensor (which Arrow tensors cannot hold) fails with
// ndarray.ErrDType or ndarray.ErrShape; a row larger than maxBatchBytes with
// ErrBatchTooLarge.
func (t Tensor) Records(mem memory.Allocator, column string, maxBatchBytes int64) ([]arrow.Record, error) {
	rec, err := t.Record(mem, column)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return SplitRecord(rec, maxBatchBytes)
}

// Record returns t as one record batch, as Records does with no limit on its size.
func (t Tensor) Record(mem memory.Allocator, column string) (arrow.Record, error) {
	ops, err := opsOf(t.DType())
	if t.Ragged == nil && err != nil {
		return nil, err
	}
	var col arrow.Array
	switch {
	case t.Sparse != nil:
		return ops.cooRecord(t.Sparse, t.dimNamesForRank())
	case t.Ragged != nil:
		list := arrow.LARGE_LIST
		if t.Ragged.SplitDType() == ndarray.Int32 {
			list = arrow.LIST
		}
		if col, err = arrowtensor.ListFromRaggedAny(mem, t.Ragged, list); err != nil {
			return nil, err
		}
	default:
		if t.Dense.Rank() == 0 {
			return nil, fmt.Errorf("tensorfile: %s is a scalar: a tensor column needs a first dimension of rows: %w", t.Name, ndarray.ErrShape)
		}
		var names []string
		if len(t.DimNames) == t.Dense.Rank() && t.Dense.Rank() > 1 && !allEmpty(t.DimNames[1:]) {
			names = t.DimNames[1:]
		}
		if col, err = ops.tensorArray(t.Dense, names); err != nil {
			return nil, err
		}
	}
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: column, Type: col.DataType(), Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{col}, int64(col.Len())), nil
}

// dimNamesForRank returns the dimension names when there is one per dimension.
func (t Tensor) dimNamesForRank() []string {
	if len(t.DimNames) != t.Shape().Rank() {
		return nil
	}
	return t.DimNames
}

func allEmpty(names []string) bool {
	for _, n := range names {
		if n != "" {
			return false
		}
	}
	return true
}

// SplitRecord slices rec between rows into record batches whose buffers hold at most
// maxBatchBytes bytes each, as many rows in each as fit; with maxBatchBytes ≤ 0 the one batch
// is rec itself, retained. The batches are views of rec; release each. A record of no rows
// gives one empty batch; a row that alone exceeds maxBatchBytes fails with ErrBatchTooLarge.
func SplitRecord(rec arrow.Record, maxBatchBytes int64) ([]arrow.Record, error) {
	n := rec.NumRows()
	if maxBatchBytes <= 0 || n == 0 {
		rec.Retain()
		return []arrow.Record{rec}, nil
	}
	span := func(lo, hi int64) (int64, error) {
		total := int64(0)
		for _, col := range rec.Columns() {
			b, err := byteSpan(col, lo, hi)
			if err != nil {
				return 0, err
			}
			total += b
		}
		return total, nil
	}
	var out []arrow.Record
	release := func() {
		for _, r := range out {
			r.Release()
		}
	}
	for lo := int64(0); lo < n; {
		// The largest hi with span(lo, hi) ≤ maxBatchBytes: double, then bisect.
		fits := func(hi int64) (bool, error) {
			b, err := span(lo, hi)
			return b <= maxBatchBytes, err
		}
		ok, err := fits(lo + 1)
		if err != nil || !ok {
			release()
			if err == nil {
				b, _ := span(lo, lo+1)
				err = fmt.Errorf("%w: row %d holds %d bytes, a batch at most %d", ErrBatchTooLarge, lo, b, maxBatchBytes)
			}
			return nil, err
		}
		good, step := lo+1, int64(1)
		bad := int64(-1)
		for good < n {
			next := min(lo+2*step, n)
			if ok, err = fits(next); err != nil {
				release()
				return nil, err
			}
			if !ok {
				bad = next
				break
			}
			good, step = next, 2*step
		}
		if bad > 0 {
			for bad-good > 1 {
				mid := good + (bad-good)/2
				if ok, err = fits(mid); err != nil {
					release()
					return nil, err
				}
				if ok {
					good = mid
				} else {
					bad = mid
				}
			}
		}
		out = append(out, rec.NewSlice(lo, good))
		lo = good
	}
	return out, nil
}

// RecordBytes returns the bytes the buffers of rec take in a record batch body, before
// padding: what Flight's total_bytes counts.
func RecordBytes(rec arrow.Record) (int64, error) {
	total := int64(0)
	for _, col := range rec.Columns() {
		b, err := byteSpan(col, 0, rec.NumRows())
		if err != nil {
			return 0, err
		}
		total += b
	}
	return total, nil
}

// byteSpan returns the bytes the buffers of rows [lo, hi) of arr take in a record batch
// body, before padding.
func byteSpan(arr arrow.Array, lo, hi int64) (int64, error) {
	if hi <= lo {
		return 0, nil
	}
	rows := hi - lo
	validity := int64(0)
	if arr.NullN() > 0 {
		validity = (rows + 7) / 8
	}
	switch a := arr.(type) {
	case array.ExtensionArray:
		return byteSpan(a.Storage(), lo, hi)
	case *array.FixedSizeList:
		n := int64(a.DataType().(*arrow.FixedSizeListType).Len())
		off := int64(a.Data().Offset())
		b, err := byteSpan(a.ListValues(), (off+lo)*n, (off+hi)*n)
		return validity + b, err
	case *array.List:
		start, _ := a.ValueOffsets(int(lo))
		_, end := a.ValueOffsets(int(hi - 1))
		b, err := byteSpan(a.ListValues(), start, end)
		return validity + 4*(rows+1) + b, err
	case *array.LargeList:
		start, _ := a.ValueOffsets(int(lo))
		_, end := a.ValueOffsets(int(hi - 1))
		b, err := byteSpan(a.ListValues(), start, end)
		return validity + 8*(rows+1) + b, err
	case *array.String:
		return validity + 4*(rows+1) + a.ValueOffset64(int(hi)) - a.ValueOffset64(int(lo)), nil
	case *array.LargeString:
		return validity + 8*(rows+1) + a.ValueOffset64(int(hi)) - a.ValueOffset64(int(lo)), nil
	case *array.Binary:
		return validity + 4*(rows+1) + a.ValueOffset64(int(hi)) - a.ValueOffset64(int(lo)), nil
	case *array.LargeBinary:
		return validity + 8*(rows+1) + a.ValueOffset64(int(hi)) - a.ValueOffset64(int(lo)), nil
	case *array.Struct:
		total := validity
		for i := range a.NumField() {
			b, err := byteSpan(a.Field(i), lo, hi)
			if err != nil {
				return 0, err
			}
			total += b
		}
		return total, nil
	case *array.Boolean:
		return validity + (rows+7)/8, nil
	}
	if fw, ok := arr.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 {
		return validity + rows*int64(fw.BitWidth()/8), nil
	}
	return 0, fmt.Errorf("tensorfile: the byte size of a %v column: %w", arr.DataType(), ndarray.ErrDType)
}
