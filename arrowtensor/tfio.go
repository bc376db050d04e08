package arrowtensor

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// CheckTensorFlowIO reports whether tensorflow-io's ArrowStreamDataset can read rec: nil when
// it can, otherwise an error (wrapping ErrUnsupported) that names every column it cannot read
// and why. ArrowStreamDataset takes columns of primitives (bool, integers, float16, float32,
// float64), utf8 and binary, and List<primitive> — one list level of int32 offsets over
// primitive values — with no null values anywhere. Large lists, fixed-size lists (and so
// arrow.fixed_shape_tensor columns), nested lists, structs and extension types are not
// readable: write ragged columns with ListFromRagged(mem, a, arrow.LIST), one ragged level
// per column.
func CheckTensorFlowIO(rec arrow.Record) error {
	return checkTensorFlowIO(rec.Schema(), rec)
}

// CheckTensorFlowIOSchema is CheckTensorFlowIO for the column types alone, before any batch.
func CheckTensorFlowIOSchema(schema *arrow.Schema) error {
	return checkTensorFlowIO(schema, nil)
}

func checkTensorFlowIO(schema *arrow.Schema, rec arrow.Record) error {
	var errs []error
	for i, f := range schema.Fields() {
		if why := tfioType(f.Type, false); why != "" {
			errs = append(errs, fmt.Errorf("column %q (%v): %s", f.Name, f.Type, why))
			continue
		}
		if rec == nil {
			continue
		}
		if nulls := nullCount(rec.Column(i).Data()); nulls > 0 {
			errs = append(errs, fmt.Errorf("column %q: %d null values", f.Name, nulls))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("arrowtensor: not readable by tensorflow-io's ArrowStreamDataset: %w: %w", errors.Join(errs...), ErrUnsupported)
	}
	return nil
}

// tfioType returns why ArrowStreamDataset cannot read a column of type dt, or "".
func tfioType(dt arrow.DataType, inList bool) string {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16,
		arrow.UINT32, arrow.UINT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return ""
	case arrow.STRING, arrow.BINARY:
		if inList {
			return "a list of strings or binary"
		}
		return ""
	case arrow.LIST:
		if inList {
			return "a nested list"
		}
		return tfioType(dt.(*arrow.ListType).Elem(), true)
	case arrow.LARGE_LIST:
		return "a large_list (int64 offsets); use list"
	case arrow.FIXED_SIZE_LIST:
		return "a fixed_size_list"
	case arrow.EXTENSION:
		return "an extension type"
	}
	return "a type it has no tensor for"
}

// nullCount returns the nulls in data and its children.
func nullCount(data arrow.ArrayData) int {
	n := data.NullN()
	for _, c := range data.Children() {
		n += nullCount(c)
	}
	return n
}
