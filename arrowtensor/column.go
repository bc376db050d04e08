package arrowtensor

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
)

// A plain column holds one value per row: a number, a bool, a string or bytes. It is what
// every table beside its tensor columns has — a label, a score, an id, a category — and what
// pyarrow, Spark, DuckDB and Arrow C++ write for them.

// IsPlainType reports whether ColumnValues reads arrays of type dt: numbers (every integer,
// float16, float32, float64), bools, strings and bytes (utf8, large_utf8, binary,
// large_binary, fixed_size_binary), plain or dictionary-encoded (what Spark and pyarrow write
// for categories).
func IsPlainType(dt arrow.DataType) bool {
	if dt == nil {
		return false
	}
	_, err := leafDType(dt)
	return err == nil
}

// PlainDType returns the element type ColumnValues reads a plain column of type dt as:
// ndarray.String for strings and bytes, ndarray.Bool for bools, a number's own. Any other type
// fails with ErrUnsupported.
func PlainDType(dt arrow.DataType) (ndarray.DType, error) { return leafDType(dt) }

// ColumnValues returns a plain column (IsPlainType) as an array of shape [rows], and which rows
// are valid: nil when no row is null. Numbers view arr's values buffer where its bytes are
// aligned for their type (the array is then read-only and must not outlive arr's buffers),
// and are copied where they are not; bools, strings, bytes (as strings) and dictionary-encoded
// values are copies, a column's strings sharing one allocation. A null row's value is zero in
// a copy and whatever the buffer holds in a view: read valid, never the value, to tell. A row
// of a dictionary-encoded column is null when its index is, or the value it indexes is.
func ColumnValues(arr arrow.Array) (ndarray.Array, []bool, error) {
	dt, err := leafDType(arr.DataType())
	if err != nil {
		return nil, nil, err
	}
	values, err := elementOps[dt].column(arr)
	if err != nil {
		return nil, nil, err
	}
	return values, validity(arr), nil
}

// validity returns which rows of a plain column are valid, nil when none is null.
func validity(arr arrow.Array) []bool {
	d, isDict := arr.(*array.Dictionary)
	if arr.NullN() == 0 && (!isDict || d.Dictionary().NullN() == 0) {
		return nil
	}
	valid := make([]bool, arr.Len())
	nulls := 0
	for i := range valid {
		valid[i] = arr.IsValid(i)
		if valid[i] && isDict {
			k := d.GetValueIndex(i)
			valid[i] = k >= 0 && k < d.Dictionary().Len() && d.Dictionary().IsValid(k)
		}
		if !valid[i] {
			nulls++
		}
	}
	if nulls == 0 {
		return nil
	}
	return valid
}

// columnOf returns a plain column's values as a read-only array of shape [rows].
func columnOf[T ndarray.Element](arr arrow.Array) (ndarray.Array, error) {
	values, err := leafValues[T](arr)
	if err != nil {
		return nil, err
	}
	d, err := ndarray.FromSlice(values, int64(len(values)))
	if err != nil {
		return nil, err
	}
	return d.AsReadOnly(), nil
}

// PlainColumn returns an array of shape [rows] (numbers, bools or strings) as a plain Arrow
// column, valid (nil: every row) as its validity bitmap: numbers view a's memory when it is
// laid out row-major (else a copy from mem), bools and strings are copied from mem, strings as
// utf8 when every value is valid UTF-8 and as binary otherwise (Go strings hold any bytes, as
// TensorFlow's do). Release the result.
func PlainColumn(mem memory.Allocator, a ndarray.Array, valid []bool) (arrow.Array, error) {
	if a.Rank() != 1 {
		return nil, fmt.Errorf("arrowtensor: a plain column of shape %v: one value per row: %w", a.Shape(), ndarray.ErrShape)
	}
	if valid != nil && int64(len(valid)) != a.Size() {
		return nil, fmt.Errorf("arrowtensor: %d validity flags for %d rows: %w", len(valid), a.Size(), ndarray.ErrShape)
	}
	op, ok := elementOps[a.DType()]
	if !ok {
		return nil, fmt.Errorf("arrowtensor: dtype %v: %w", a.DType(), ErrUnsupported)
	}
	data, err := op.plain(mem, a)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	if valid == nil {
		return array.MakeFromData(data), nil
	}
	bitmap := newBuffer(mem, bitutil.BytesForBits(int64(len(valid))))
	defer bitmap.Release()
	nulls := 0
	for i, v := range valid {
		if v {
			bitutil.SetBit(bitmap.Bytes(), i)
		} else {
			nulls++
		}
	}
	buffers := append([]*memory.Buffer{bitmap}, data.Buffers()[1:]...)
	withNulls := array.NewData(data.DataType(), data.Len(), buffers, data.Children(), nulls, data.Offset())
	defer withNulls.Release()
	return array.MakeFromData(withNulls), nil
}

// AsBinary returns arr with its utf8 values typed binary (large_utf8 large_binary), at any
// depth of lists, large_lists and fixed-size lists: a view of the same buffers as a column of
// bytes rather than text, which PlainColumn and ListFromRagged make of strings that are all
// valid UTF-8. An array of another type is returned as it is, retained. Release the result.
func AsBinary(arr arrow.Array) arrow.Array {
	data := asBinaryData(arr.Data())
	defer data.Release()
	return array.MakeFromData(data)
}

// asBinaryData returns d with its utf8 values typed binary (see AsBinary). Release the result.
func asBinaryData(d arrow.ArrayData) arrow.ArrayData {
	var typ arrow.DataType
	var children []arrow.ArrayData
	switch t := d.DataType().(type) {
	case *arrow.StringType, *arrow.LargeStringType:
		typ = arrow.BinaryTypes.Binary
		if t.ID() == arrow.LARGE_STRING {
			typ = arrow.BinaryTypes.LargeBinary
		}
		if d.Len() == 0 { // arrow-go's binary arrays need the one offset an empty utf8 may lack
			b := array.NewBinaryBuilder(memory.DefaultAllocator, typ.(arrow.BinaryDataType))
			defer b.Release()
			arr := b.NewArray()
			defer arr.Release()
			arr.Data().Retain()
			return arr.Data()
		}
	case *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType:
		child := asBinaryData(d.Children()[0])
		defer child.Release()
		children = []arrow.ArrayData{child}
		elem := t.(arrow.ListLikeType).ElemField()
		elem.Type = child.DataType()
		switch t := t.(type) {
		case *arrow.ListType:
			typ = arrow.ListOfField(elem)
		case *arrow.LargeListType:
			typ = arrow.LargeListOfField(elem)
		case *arrow.FixedSizeListType:
			typ = arrow.FixedSizeListOfField(t.Len(), elem)
		}
	default:
		d.Retain()
		return d
	}
	return array.NewData(typ, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}

// plainOf returns the values of a, an array of shape [rows] of T, as the data of a plain
// column: numbers a view of a's memory when it is row-major, else of a copy.
func plainOf[T ndarray.Element](mem memory.Allocator, a ndarray.Array) (arrow.ArrayData, error) {
	d, ok := a.(*ndarray.Dense[T])
	if !ok {
		return nil, fmt.Errorf("arrowtensor: a %T as %v: %w", a, ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	values, ok := d.Contiguous()
	if !ok {
		values = d.Clone().Data()
	}
	return leafData(mem, values)
}

// stringData returns values as the data of a utf8 column, or of a binary one when a value is
// not valid UTF-8, copied from mem.
func stringData(mem memory.Allocator, values []string) arrow.ArrayData {
	size := 0
	text := true
	for _, s := range values {
		size += len(s)
		text = text && utf8.ValidString(s)
	}
	var b interface {
		array.Builder
		AppendString(string)
		ReserveData(int)
	}
	if text {
		b = array.NewStringBuilder(mem)
	} else {
		b = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	}
	defer b.Release()
	b.Reserve(len(values))
	b.ReserveData(size)
	for _, s := range values {
		b.AppendString(s)
	}
	arr := b.NewArray()
	defer arr.Release()
	data := arr.Data()
	data.Retain()
	return data
}

// stringValues returns the values of a column of strings or bytes as strings copied into one
// allocation (no string views the column's buffers, which may be a mapped file's); a null row
// is "".
func stringValues(arr arrow.Array) ([]string, error) {
	var value func(i int) string
	switch a := arr.(type) {
	case *array.String:
		value = a.Value
	case *array.LargeString:
		value = a.Value
	case *array.Binary:
		value = a.ValueString
	case *array.LargeBinary:
		value = a.ValueString
	case *array.FixedSizeBinary:
		value = func(i int) string { return unsafe.String(unsafe.SliceData(a.Value(i)), len(a.Value(i))) }
	default:
		return nil, fmt.Errorf("arrowtensor: %v is not a column of strings: %w", arr.DataType(), ErrUnsupported)
	}
	n := arr.Len()
	size := 0
	for i := range n {
		if arr.IsValid(i) {
			size += len(value(i))
		}
	}
	arena := make([]byte, 0, size)
	out := make([]string, n)
	for i := range n {
		if arr.IsValid(i) {
			start := len(arena)
			arena = append(arena, value(i)...)
			out[i] = unsafe.String(unsafe.SliceData(arena[start:]), len(arena)-start)
		}
	}
	return out, nil
}

// IsBytesType reports whether a column of type dt holds bytes rather than text: its leaf
// values (below any lists, a dictionary's values) are binary, large_binary or
// fixed_size_binary. ColumnValues reads bytes as strings all the same, and PlainColumn writes
// them back as utf8 where every value happens to be valid UTF-8: a stream announced before its
// values are read takes BinaryOf its type instead.
func IsBytesType(dt arrow.DataType) bool {
	for range maxListDepth + 1 {
		switch t := dt.(type) {
		case *arrow.ListType:
			dt = t.Elem()
		case *arrow.LargeListType:
			dt = t.Elem()
		case *arrow.FixedSizeListType:
			dt = t.Elem()
		case *arrow.DictionaryType:
			dt = t.ValueType
		default:
			switch dt.ID() {
			case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
				return true
			}
			return false
		}
	}
	return false
}

// BinaryOf returns dt with its utf8 and large_utf8 leaves, below any lists and as a
// dictionary's values, as binary and large_binary (the lists' item fields and the dictionary's
// index type otherwise kept): the type of a column of strings that are not all text, which
// PlainColumn and ListFromRagged write.
func BinaryOf(dt arrow.DataType) arrow.DataType {
	item := func(f arrow.Field) arrow.Field {
		f.Type = BinaryOf(f.Type)
		return f
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return &arrow.DictionaryType{IndexType: t.IndexType, ValueType: BinaryOf(t.ValueType), Ordered: t.Ordered}
	case *arrow.ListType:
		return arrow.ListOfField(item(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(item(t.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), item(t.ElemField()))
	}
	switch dt.ID() {
	case arrow.STRING:
		return arrow.BinaryTypes.Binary
	case arrow.LARGE_STRING:
		return arrow.BinaryTypes.LargeBinary
	}
	return dt
}

// AsType returns arr as an array of type dt: arr itself, retained, when it is of that type;
// a view of its buffers (text is bytes) when dt is BinaryOf its type. Any other type is an
// error wrapping ErrUnsupported. Release the result.
func AsType(arr arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), dt) {
		arr.Retain()
		return arr, nil
	}
	if !arrow.TypeEqual(BinaryOf(arr.DataType()), dt) {
		return nil, fmt.Errorf("arrowtensor: a column of %v as %v: %w", arr.DataType(), dt, ErrUnsupported)
	}
	data := retyped(arr.Data(), dt)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// retyped returns d, whose type is dt but for utf8 leaves that dt has as binary, as dt.
func retyped(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	if dict, ok := dt.(*arrow.DictionaryType); ok && d.Dictionary() != nil {
		values := retyped(d.Dictionary(), dict.ValueType)
		defer values.Release()
		return array.NewDataWithDictionary(dt, d.Len(), d.Buffers(), d.NullN(), d.Offset(), values.(*array.Data))
	}
	children := d.Children()
	if nested, ok := dt.(arrow.NestedType); ok && len(children) == 1 {
		child := retyped(children[0], nested.Fields()[0].Type)
		defer child.Release()
		return array.NewData(dt, d.Len(), d.Buffers(), []arrow.ArrayData{child}, d.NullN(), d.Offset())
	}
	return array.NewData(dt, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}

// Conform returns rec with the types of schema (its field names and metadata too), each
// column's type equal or, for strings, schema's bytes where rec has text (AsType, a view):
// a record batch of a stream whose schema was written before it was read. It fails with an
// error wrapping ErrUnsupported naming the column that cannot be. Release the result.
func Conform(rec arrow.Record, schema *arrow.Schema) (arrow.Record, error) {
	if rec.Schema().Equal(schema) {
		rec.Retain()
		return rec, nil
	}
	if rec.NumCols() != int64(schema.NumFields()) {
		return nil, fmt.Errorf("arrowtensor: a record batch of %d columns for a schema of %d: %w", rec.NumCols(), schema.NumFields(), ErrUnsupported)
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range rec.Columns() {
		var err error
		if cols[i], err = AsType(c, schema.Field(i).Type); err != nil {
			return nil, fmt.Errorf("arrowtensor: column %s: %w", schema.Field(i).Name, err)
		}
	}
	return array.NewRecord(schema, cols, rec.NumRows()), nil
}
