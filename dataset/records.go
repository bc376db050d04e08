package dataset

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/ndarray"
)

// ErrBatchTooLarge is returned by Records and SplitRecord when what must go whole in one
// batch — a row, a dictionary-encoded column's dictionary — needs more bytes than a batch may
// hold; the error is a *TooLargeError, which says which and how many.
var ErrBatchTooLarge = errors.New("dataset: one row exceeds the batch size")

// TooLargeError is what goes whole in one batch and is larger than a batch may be: a row, or
// a dictionary-encoded column's dictionary (which goes whole in a message of its own). It
// wraps ErrBatchTooLarge.
type TooLargeError struct {
	Row    int64  // the row; -1 for a dictionary
	Column string // the dictionary's column; "" for a row
	Bytes  int64  // what it holds
	Most   int64  // what a batch may hold
}

// What names what is too large: "row 5", "column cat's dictionary".
func (e *TooLargeError) What() string {
	if e.Row < 0 {
		return "column " + e.Column + "'s dictionary"
	}
	return fmt.Sprintf("row %d", e.Row)
}

// Error returns ErrBatchTooLarge's text (a dictionary's own lead for a dictionary), what is
// too large (What), its bytes and what a batch may hold.
func (e *TooLargeError) Error() string {
	lead := ErrBatchTooLarge.Error()
	if e.Row < 0 {
		lead = "dataset: a dictionary exceeds the batch size"
	}
	return fmt.Sprintf("%s: %s holds %d bytes, a batch at most %d", lead, e.What(), e.Bytes, e.Most)
}

// Unwrap returns ErrBatchTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrBatchTooLarge }

// Records returns t as record batches whose buffers together hold at most maxBatchBytes
// bytes each (no limit when maxBatchBytes ≤ 0): a dense tensor as an arrow.fixed_shape_tensor
// column named column, split along its first axis; a ragged one as a list (int32 row
// splits) or large_list column, split between rows; a sparse one as record batches of its
// entries (arrowtensor.SparseRecord), split between entries. The batches view t's memory where
// they can (a row-major contiguous dense tensor) and allocate from mem what they cannot.
// Release each.
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

// Metadata keys ndarrow writes so that what an Arrow type or message has no room for survives
// a trip through a file or Flight: on the fields of the tensor columns Batch makes (KindKey,
// DimNamesKey) and on the Tensor messages of a tensor that came from a column
// (MessageMetadata: KindKey, ColumnKey).
const (
	// KindKey marks, on a column, one dense tensor (value "dense"), which reads back as a dense
	// tensor rather than as a column of tensors (kind fixed_shape_tensor); on a Tensor
	// message, a column of tensors (value "fixed_shape_tensor"), which reads back as one.
	KindKey = "ndarrow.kind"
	// DimNamesKey holds the names of every dimension, the rows' included, as JSON, where an
	// arrow.fixed_shape_tensor type names only the cells' dimensions: ["batch","row","col"].
	DimNamesKey = arrowtensor.DimNamesKey
	// ColumnKey holds, on a Tensor or SparseTensor message, the name of the column the tensor
	// came from.
	ColumnKey = "ndarrow.column"
	// CellShapeKey holds, on a plain fixed_size_list column of bools or strings (how a bool
	// tensor goes, since Arrow C++ makes no arrow.fixed_shape_tensor of bool), the shape of
	// each row's cell as JSON, [2,3]: a cell of other than one dimension; on a list column of
	// empty rows, the shape of cells that hold no value, [0] (a feature every Example holds
	// empty), which arrow-go makes no fixed-size list of.
	CellShapeKey = "ndarrow.cell_shape"
)

// MessageMetadata returns the custom metadata of t's Tensor or SparseTensor message (see
// ipc.WithMetadata), which keeps the column it came from and its being a column of tensors
// (kind fixed_shape_tensor); Read gives them back. It is empty for a tensor that came from no
// column.
func (t Tensor) MessageMetadata() arrow.Metadata {
	var keys, values []string
	if t.ImpliedKind() == KindFixedShape {
		keys, values = append(keys, KindKey), append(values, string(KindFixedShape))
	}
	if t.Column != "" {
		keys, values = append(keys, ColumnKey), append(values, t.Column)
	}
	return arrow.NewMetadata(keys, values)
}

// Record returns t as one record batch whose column is named column, as Batch makes it.
// Release the record.
func (t Tensor) Record(mem memory.Allocator, column string) (arrow.Record, error) {
	t.Column = column
	return Batch(mem, []Tensor{t})
}

// Batch returns tensors as one record batch, a column each, named after the tensor's Column,
// else its Name, else "tensor" (tensor_0, tensor_1, … for several): a dense tensor as an
// arrow.fixed_shape_tensor column whose rows are its first dimension (all tensors must then
// have as many rows); a ragged one as a list (int32 row splits) or large_list column; a
// sparse one — alone — as a record batch of its stored entries (arrowtensor.SparseRecord),
// which keeps its format. The batch views the tensors' memory where it can and allocates from
// mem what it cannot. Dimension names and a dense tensor's kind go into the field
// metadata under DimNamesKey and KindKey, so that FromRecords gives back what went in. Release
// the record.
//
// A scalar, a bool or string dense tensor (which Arrow tensors cannot hold) fails with
// ndarray.ErrDType or ndarray.ErrShape, and so do tensors of different row counts.
func Batch(mem memory.Allocator, tensors []Tensor) (arrow.Record, error) {
	if len(tensors) == 0 {
		return nil, fmt.Errorf("dataset: a batch of no tensors: %w", ndarray.ErrShape)
	}
	if tensors[0].Sparse != nil || len(tensors) > 1 && slices.ContainsFunc(tensors, func(t Tensor) bool { return t.Sparse != nil }) {
		if len(tensors) != 1 {
			i := slices.IndexFunc(tensors, func(t Tensor) bool { return t.Sparse != nil })
			return nil, fmt.Errorf("dataset: %s: a sparse tensor is a record batch of its own, not one column of %d: %w", tensors[i].Name, len(tensors), ndarray.ErrShape)
		}
		return arrowtensor.SparseRecord(mem, tensors[0].Sparse, tensors[0].dimNamesForRank())
	}
	var fields []arrow.Field
	var cols []arrow.Array
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	rows := int64(-1)
	for i, t := range tensors {
		col, err := t.column(mem)
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", t.Name, err)
		}
		cols = append(cols, col)
		if n := int64(col.Len()); rows >= 0 && n != rows {
			return nil, fmt.Errorf("dataset: %s has %d rows, %s %d: columns of one batch need the same: %w", t.Name, n, tensors[0].Name, rows, ndarray.ErrShape)
		}
		rows = int64(col.Len())
		name := t.Column
		switch {
		case name == "" && t.Name != "":
			name = t.Name
		case name == "" && len(tensors) == 1:
			name = "tensor"
		case name == "":
			name = fmt.Sprintf("tensor_%d", i)
		}
		fields = append(fields, arrow.Field{Name: name, Type: col.DataType(), Nullable: true, Metadata: t.fieldMetadata()})
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, rows), nil
}

// column returns t, dense or ragged, as one Arrow column: a tensor of shape [rows] as a plain
// column (numbers, bools, strings: arrowtensor.PlainColumn), its null rows (Valid) as nulls;
// cells of bools or strings as a plain fixed_size_list of each row's values (Arrow C++ makes
// no arrow.fixed_shape_tensor of them), their shape in the field (CellShapeKey); cells of
// numbers as an arrow.fixed_shape_tensor column; a ragged tensor as a list column. Strings are
// utf8 when every value is valid UTF-8, else binary, and binary whatever their values when t
// holds Bytes: a column's type then depends on its Arrow type alone, not on which rows a batch
// holds.
func (t Tensor) column(mem memory.Allocator) (arrow.Array, error) {
	col, err := t.valuesColumn(mem)
	if err != nil || !t.Bytes || t.DType() != ndarray.String {
		return col, err
	}
	defer col.Release()
	return arrowtensor.AsBinary(col), nil
}

// valuesColumn is column with strings typed by their values: utf8 when every one is valid
// UTF-8, else binary.
func (t Tensor) valuesColumn(mem memory.Allocator) (arrow.Array, error) {
	if t.Ragged != nil {
		list := arrow.LARGE_LIST
		if t.Ragged.SplitDType() == ndarray.Int32 {
			list = arrow.LIST
		}
		return arrowtensor.ListFromRaggedAny(mem, t.Ragged, list)
	}
	if t.Dense.Rank() == 0 {
		return nil, fmt.Errorf("a scalar: a tensor column needs a first dimension of rows: %w", ndarray.ErrShape)
	}
	if t.Valid != nil && t.Dense.Rank() != 1 {
		return nil, fmt.Errorf("null rows in a tensor of shape %v: only a column of one value per row holds nulls: %w", t.Shape(), ndarray.ErrShape)
	}
	if d, ok := t.Dense.(*ndarray.Dense[string]); ok && t.Dictionary != nil && d.Rank() == 1 {
		return dictionaryColumn(mem, d, t.Valid, t.Dictionary, t.Bytes)
	}
	if t.Dense.Rank() == 1 {
		return arrowtensor.PlainColumn(mem, t.Dense, t.Valid)
	}
	if t.hasEmptyCells() {
		return emptyCells(mem, t.Dense)
	}
	switch d := t.Dense.(type) {
	case *ndarray.Dense[bool]:
		arr, err := arrowtensor.NewBoolFixedShapeTensorArray(mem, d, nil)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		storage := arr.Storage()
		storage.Retain()
		return storage, nil
	case *ndarray.Dense[string]:
		cell := d.Shape()[1:].Size()
		flat, err := d.Reshape(d.Size())
		if err != nil { // not contiguous: a copy is
			flat, err = d.Clone().Reshape(d.Size())
		}
		if err != nil {
			return nil, err
		}
		values, err := arrowtensor.PlainColumn(mem, flat, nil)
		if err != nil {
			return nil, err
		}
		defer values.Release()
		if cell > math.MaxInt32 {
			return nil, fmt.Errorf("cells of %d strings: %w", cell, ndarray.ErrShape)
		}
		data := array.NewData(arrow.FixedSizeListOf(int32(cell), values.DataType()), int(d.Dim(0)), []*memory.Buffer{nil}, []arrow.ArrayData{values.Data()}, 0, 0)
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	ops, err := opsOf(t.DType())
	if err != nil {
		return nil, err
	}
	var cellNames []string
	if names := t.dimNamesForRank(); names != nil && !allEmpty(names[1:]) {
		cellNames = names[1:]
	}
	return ops.tensorArray(mem, t.Dense, cellNames)
}

// emptyCells returns d, of shape [rows, cell...] whose cells hold no value, as a list column
// of rows empty rows (arrow-go makes no fixed-size list of size 0; Batch puts the cell shape
// in the field, CellShapeKey, and FromRecords reads it back as d was).
func emptyCells(mem memory.Allocator, d ndarray.Array) (arrow.Array, error) {
	var elem arrow.DataType
	switch dt := d.DType(); dt {
	case ndarray.Bool:
		elem = arrow.FixedWidthTypes.Boolean
	case ndarray.String:
		elem = arrow.BinaryTypes.String
	default:
		elem = dt.ArrowType()
	}
	rows := d.Shape()[0]
	if rows >= math.MaxInt32 {
		return nil, fmt.Errorf("%d rows of empty cells: more than a list column's int32 offsets count: %w", rows, ndarray.ErrShape)
	}
	values := array.MakeArrayOfNull(mem, elem, 0)
	defer values.Release()
	offsets := memory.NewBufferBytes(make([]byte, 4*(rows+1))) // every row ends where it starts
	data := array.NewData(arrow.ListOf(elem), int(rows), []*memory.Buffer{nil, offsets}, []arrow.ArrayData{values.Data()}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// hasEmptyCells reports whether t is dense of shape [rows, cell...] with cells of no value.
func (t Tensor) hasEmptyCells() bool {
	return t.Dense != nil && t.Dense.Rank() > 1 && t.Dense.Shape()[1:].Size() == 0
}

// dimNamesForRank returns the dimension names when there is one per dimension.
func (t Tensor) dimNamesForRank() []string {
	if len(t.DimNames) != t.Shape().Rank() {
		return nil
	}
	return t.DimNames
}

// allEmpty reports whether every name is empty.
func allEmpty(names []string) bool {
	for _, n := range names {
		if n != "" {
			return false
		}
	}
	return true
}

// fieldMetadata returns the field metadata that keeps t's kind and dimension names.
func (t Tensor) fieldMetadata() arrow.Metadata {
	var keys, values []string
	plain := t.Dense != nil && t.Dense.Rank() == 1 // a plain column: dense as it reads
	if t.ImpliedKind() == KindDense && !plain {
		keys, values = append(keys, KindKey), append(values, string(KindDense))
	}
	if names := t.dimNamesForRank(); names != nil && !allEmpty(names) {
		b, _ := json.Marshal(names) // strings always marshal
		keys, values = append(keys, DimNamesKey), append(values, string(b))
	}
	if (t.DType() == ndarray.Bool || t.DType() == ndarray.String) && t.Dense != nil && t.Dense.Rank() > 2 || t.hasEmptyCells() {
		b, _ := json.Marshal(t.Dense.Shape()[1:])
		keys, values = append(keys, CellShapeKey), append(values, string(b))
	}
	return arrow.NewMetadata(keys, values)
}

// SplitRecord slices rec between rows into record batches whose buffers hold at most
// maxBatchBytes bytes each, as many rows in each as fit; with maxBatchBytes ≤ 0 the one batch
// is rec itself, retained. The batches are views of rec; release each. A record of no rows
// gives one empty batch; a row that alone exceeds maxBatchBytes fails with a *TooLargeError
// (ErrBatchTooLarge), and so does a dictionary-encoded column's dictionary, which goes whole
// in a message of its own (a batch counts its indices).
func SplitRecord(rec arrow.Record, maxBatchBytes int64) ([]arrow.Record, error) {
	n := rec.NumRows()
	if maxBatchBytes <= 0 || n == 0 {
		rec.Retain()
		return []arrow.Record{rec}, nil
	}
	for i, col := range rec.Columns() { // a dictionary goes whole, in a message of its own
		d, err := dictionaryBytes(col)
		if err != nil {
			return nil, err
		}
		if d > maxBatchBytes {
			return nil, &TooLargeError{Row: -1, Column: rec.ColumnName(i), Bytes: d, Most: maxBatchBytes}
		}
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
				err = &TooLargeError{Row: lo, Bytes: b, Most: maxBatchBytes}
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
// padding, and those of the dictionaries of its dictionary-encoded columns: what Flight's
// total_bytes counts.
func RecordBytes(rec arrow.Record) (int64, error) {
	total := int64(0)
	for _, col := range rec.Columns() {
		b, err := byteSpan(col, 0, rec.NumRows())
		if err != nil {
			return 0, err
		}
		d, err := dictionaryBytes(col)
		if err != nil {
			return 0, err
		}
		total += b + d
	}
	return total, nil
}

// dictionaryBytes returns the bytes the dictionary of a dictionary-encoded array takes in its
// dictionary batch's body, before padding (0 for another array).
func dictionaryBytes(arr arrow.Array) (int64, error) {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		return 0, nil
	}
	return byteSpan(d.Dictionary(), 0, int64(d.Dictionary().Len()))
}

// listSpan is byteSpan of a list array of offsets width bytes wide over values.
func listSpan(arr, values arrow.Array, lo, hi int64, width int, validity int64) (int64, error) {
	start, end, err := offsetsAt(arr, lo, hi, width, -1)
	if err != nil {
		return 0, err
	}
	if end > int64(values.Len()) {
		return 0, fmt.Errorf("dataset: a %v column's offset %d is past its %d values: %w", arr.DataType(), end, values.Len(), ErrOffsets)
	}
	b, err := byteSpan(values, start, end)
	return validity + int64(width)*(hi-lo+1) + b, err
}

// ErrOffsets is returned for an array whose offsets do not describe its values: missing,
// decreasing, or past the values. It wraps arrow.ErrInvalid.
var ErrOffsets = sentinel.New("dataset: invalid offsets", arrow.ErrInvalid)

// offsetsAt returns the offsets of rows lo and hi of arr (relative to its offset), read from
// its offsets buffer of width-byte integers and checked: present, at least 0, in order, and,
// with data ≥ 0, within the length of buffer data.
func offsetsAt(arr arrow.Array, lo, hi int64, width, data int) (start, end int64, err error) {
	bufs := arr.Data().Buffers()
	var b []byte
	if len(bufs) > 1 && bufs[1] != nil {
		b = bufs[1].Bytes()
	}
	i, j := int64(arr.Data().Offset())+lo, int64(arr.Data().Offset())+hi
	if i < 0 || j < i || j >= int64(len(b)/width) {
		return 0, 0, fmt.Errorf("dataset: a %v column of %d bytes of offsets for rows %d to %d: %w", arr.DataType(), len(b), i, j, ErrOffsets)
	}
	at := func(k int64) int64 {
		if width == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b[4*k:])))
		}
		return int64(binary.LittleEndian.Uint64(b[8*k:]))
	}
	start, end = at(i), at(j)
	if start < 0 || end < start {
		return 0, 0, fmt.Errorf("dataset: a %v column's offsets %d and %d for rows %d and %d: %w", arr.DataType(), start, end, i, j, ErrOffsets)
	}
	if data >= 0 {
		have := int64(0)
		if len(bufs) > data && bufs[data] != nil {
			have = int64(bufs[data].Len())
		}
		if end > have {
			return 0, 0, fmt.Errorf("dataset: a %v column's offset %d is past its %d bytes: %w", arr.DataType(), end, have, ErrOffsets)
		}
	}
	return start, end, nil
}

// byteSpan returns the bytes the buffers of rows [lo, hi) of arr take in a record batch
// body, before padding — of a dictionary-encoded array, its indices (its dictionary is a
// message of its own: dictionaryBytes). Offsets are read from the buffers and checked, not
// through arrow-go's accessors, which panic on an array a dependency left inconsistent.
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
	case *array.Dictionary:
		width := int64(a.DataType().(*arrow.DictionaryType).IndexType.(arrow.FixedWidthDataType).BitWidth() / 8)
		return validity + rows*width, nil
	case *array.FixedSizeList:
		n := int64(a.DataType().(*arrow.FixedSizeListType).Len())
		off := int64(a.Data().Offset())
		b, err := byteSpan(a.ListValues(), (off+lo)*n, (off+hi)*n)
		return validity + b, err
	case *array.List:
		return listSpan(a, a.ListValues(), lo, hi, 4, validity)
	case *array.LargeList:
		return listSpan(a, a.ListValues(), lo, hi, 8, validity)
	case *array.String, *array.Binary:
		start, end, err := offsetsAt(arr, lo, hi, 4, 2)
		return validity + 4*(rows+1) + end - start, err
	case *array.LargeString, *array.LargeBinary:
		start, end, err := offsetsAt(arr, lo, hi, 8, 2)
		return validity + 8*(rows+1) + end - start, err
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
	return 0, fmt.Errorf("dataset: the byte size of a %v column: %w", arr.DataType(), ndarray.ErrDType)
}
