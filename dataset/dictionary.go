package dataset

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// Dictionary is how a plain column of strings was dictionary-encoded (what pyarrow, Spark and
// Arrow C++ write for categories), kept so that Batch writes the column back as it was: a
// dictionary of the same type, not its values.
type Dictionary struct {
	// Type is the column's Arrow type: its index type, its values' type (utf8, large_utf8,
	// binary or large_binary) and whether it is ordered.
	Type *arrow.DictionaryType
	// Values are the dictionary's values in its order (an Arrow file's, every batch's joined,
	// each once), nil when they are not known (a Parquet file's, decoded from its pages): Batch
	// gives them their indices first, then each value a row holds that is not among them, as it
	// comes. They never change which value a row holds, only its index.
	Values []string
}

// isDictionaryOfStrings reports whether dt is a dictionary type whose values are strings or
// bytes of variable width: the dictionaries a Tensor keeps (Dictionary). Others (numbers,
// fixed-size binary) are read as their values, and written as them.
func isDictionaryOfStrings(dt arrow.DataType) (*arrow.DictionaryType, bool) {
	d, ok := dt.(*arrow.DictionaryType)
	if !ok || d == nil {
		return nil, false
	}
	switch d.ValueType.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
	default:
		return nil, false
	}
	switch d.IndexType.ID() {
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16, arrow.INT32, arrow.UINT32, arrow.INT64, arrow.UINT64:
		return d, true
	}
	return nil, false
}

// dictionaryOf returns the Dictionary of a column of dictionary type dt, one array per batch:
// the values of every batch's dictionary in order, each once (a file's batches share one
// dictionary; a stream's may replace it). Null entries of a dictionary are no values.
func dictionaryOf(dt *arrow.DictionaryType, cols []arrow.Array) (*Dictionary, error) {
	out := &Dictionary{Type: dt}
	var seen map[string]bool
	var last arrow.ArrayData
	for _, c := range cols {
		d, ok := c.(*array.Dictionary)
		if !ok || d.Dictionary() == nil {
			continue
		}
		if last != nil && d.Dictionary().Data() == last { // the same dictionary as the batch before
			continue
		}
		last = d.Dictionary().Data()
		values, valid, err := arrowtensor.ColumnValues(d.Dictionary())
		if err != nil {
			return nil, err
		}
		all := values.(*ndarray.Dense[string]).Ravel()
		if seen == nil && len(cols) > 1 {
			seen = make(map[string]bool, len(all))
		}
		for i, v := range all {
			if valid != nil && !valid[i] {
				continue
			}
			if seen != nil {
				if seen[v] {
					continue
				}
				seen[v] = true
			}
			out.Values = append(out.Values, v)
		}
	}
	return out, nil
}

// dictionaryColumn returns d, a [rows] of strings whose null rows valid says (nil: none), as a
// column of dict's dictionary type, allocated from mem: dict.Values indexed first, in their
// order, then every other value as a row first holds it. Its values are binary (large_binary)
// where dict's type says utf8 but bytes is set or a value is not UTF-8, as PlainColumn types
// strings. A dictionary whose values do not fit its index type is an error wrapping
// ndarray.ErrDType. Release the result.
func dictionaryColumn(mem memory.Allocator, d *ndarray.Dense[string], valid []bool, dict *Dictionary, bytes bool) (arrow.Array, error) {
	rows := d.Size()
	index := make(map[string]int64, len(dict.Values))
	entries := make([]string, 0, len(dict.Values))
	for _, v := range dict.Values {
		if _, ok := index[v]; !ok {
			index[v] = int64(len(entries))
		}
		entries = append(entries, v) // every entry, duplicates too: the indices stay the dictionary's
	}
	indices := make([]int64, rows)
	i := 0
	for v := range d.Values() {
		if valid == nil || valid[i] {
			k, ok := index[v]
			if !ok {
				k = int64(len(entries))
				index[v] = k
				entries = append(entries, v)
			}
			indices[i] = k
		}
		i++
	}
	valueType := dict.Type.ValueType
	if bytes || !allValid(entries) {
		valueType = arrowtensor.BinaryOf(valueType)
	}
	typ := &arrow.DictionaryType{IndexType: dict.Type.IndexType, ValueType: valueType, Ordered: dict.Type.Ordered}
	if reach := maxIndex(typ.IndexType); int64(len(entries))-1 > reach {
		return nil, fmt.Errorf("a dictionary of %d values: more than its %v indices reach: %w", len(entries), typ.IndexType, ndarray.ErrDType)
	}
	values, err := stringArray(mem, valueType, entries)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	idx, err := indexArray(mem, typ.IndexType, indices, valid)
	if err != nil {
		return nil, err
	}
	defer idx.Release()
	return array.NewDictionaryArray(typ, idx, values), nil
}

// allValid reports whether every string is valid UTF-8.
func allValid(values []string) bool {
	for _, v := range values {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// maxIndex returns the largest index a dictionary's integer index type holds.
func maxIndex(dt arrow.DataType) int64 {
	switch dt.ID() {
	case arrow.INT8:
		return math.MaxInt8
	case arrow.UINT8:
		return math.MaxUint8
	case arrow.INT16:
		return math.MaxInt16
	case arrow.UINT16:
		return math.MaxUint16
	case arrow.INT32:
		return math.MaxInt32
	case arrow.UINT32:
		return math.MaxUint32
	}
	return math.MaxInt64
}

// stringArray returns values as an array of dt (utf8, large_utf8, binary or large_binary)
// allocated from mem. Release it.
func stringArray(mem memory.Allocator, dt arrow.DataType, values []string) (arrow.Array, error) {
	var b interface {
		array.Builder
		AppendString(string)
		ReserveData(int)
	}
	switch dt.ID() {
	case arrow.STRING:
		b = array.NewStringBuilder(mem)
	case arrow.LARGE_STRING:
		b = array.NewLargeStringBuilder(mem)
	case arrow.BINARY, arrow.LARGE_BINARY:
		b = array.NewBinaryBuilder(mem, dt.(arrow.BinaryDataType))
	default:
		return nil, fmt.Errorf("dictionary values of %v: %w", dt, arrowtensor.ErrUnsupported)
	}
	defer b.Release()
	size := 0
	for _, v := range values {
		size += len(v)
	}
	b.Reserve(len(values))
	b.ReserveData(size)
	for _, v := range values {
		b.AppendString(v)
	}
	return b.NewArray(), nil
}

// indexArray returns indices as an array of the integer type dt, null where valid (nil: no
// row is null) says, allocated from mem. Release it.
func indexArray(mem memory.Allocator, dt arrow.DataType, indices []int64, valid []bool) (arrow.Array, error) {
	width := dt.(arrow.FixedWidthDataType).BitWidth() / 8
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(len(indices) * width)
	b := buf.Bytes()
	for i, k := range indices {
		switch width {
		case 1:
			b[i] = byte(k)
		case 2:
			arrow.Uint16Traits.CastFromBytes(b)[i] = uint16(k)
		case 4:
			arrow.Uint32Traits.CastFromBytes(b)[i] = uint32(k)
		default:
			arrow.Uint64Traits.CastFromBytes(b)[i] = uint64(k)
		}
	}
	var bitmap *memory.Buffer
	nulls := 0
	if valid != nil {
		bitmap = memory.NewResizableBuffer(mem)
		defer bitmap.Release()
		bitmap.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
		for i, v := range valid {
			if v {
				bitutil.SetBit(bitmap.Bytes(), i)
			} else {
				nulls++
			}
		}
	}
	data := array.NewData(dt, len(indices), []*memory.Buffer{bitmap, buf}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// parquetTensors returns the tensors of records a Parquet reader r read (FromRecords of its
// schema), named after base, each string column the Arrow schema the writer stored gives a
// dictionary type (r.DictionaryType) given that Dictionary: r decodes its values, and Batch
// encodes them back.
func parquetTensors(r *parquet.Reader, records []arrow.Record, base string) ([]Tensor, []LeftOut, error) {
	tensors, left, err := FromRecords(r.Schema(), records, base)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range tensors {
		if t.Dense == nil || t.Dense.Rank() != 1 || t.DType() != ndarray.String {
			continue
		}
		if d, ok := isDictionaryOfStrings(r.DictionaryType(t.Column)); ok {
			tensors[i].Dictionary = &Dictionary{Type: d}
		}
	}
	return tensors, left, nil
}
