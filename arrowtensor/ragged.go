package arrowtensor

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// ErrNull reports null values where an array has no place for them: a null leaf value or a
// null slot of a fixed-size list of a ragged array (a null slot of a list reads as an empty
// row), a null row or element of an arrow.fixed_shape_tensor column.
var ErrNull = errors.New("null values")

// maxListDepth bounds the nesting of list types read as a ragged array.
const maxListDepth = 64

// RaggedFromList returns the nested list array arr — list, large_list and fixed_size_list
// levels in any combination and depth, over leaf values of type T (numeric, bool, utf8 or
// large_utf8) — as a read-only ragged array. Each list or large_list level becomes a ragged
// partition whose row splits are the level's offsets; each fixed_size_list level becomes a
// uniform row length.
//
// Zero-copy: for numeric leaves without nulls the result views the leaf's values buffer and
// the offsets of every large_list level, whatever their first offset (a sliced array reads in
// place; RowSplits rebases on demand), and conversion takes constant time. The offsets of list
// levels are int32 and are widened into new int64 slices, so a list level costs one pass over
// its offsets; the result's SplitDType is then Int32 (mixed list and large_list levels read as
// Int64, TensorFlow's one split dtype). Bool and string leaves are copied.
//
// Nulls: a null slot of a list or large_list level reads as an empty row (TensorFlow has no
// null rows), and the array is then gathered into new memory, dropping any values that the
// null slot's offsets span. A null leaf value or a null fixed-size-list slot fails with ErrNull.
//
// The result must not outlive arr's buffers. Like Arrow's own readers, RaggedFromList trusts
// the offsets between the first and the last of each level to be non-decreasing: for arrays
// decoded from untrusted bytes, call Validate on the result before reading it.
func RaggedFromList[T ndarray.Element](arr arrow.Array) (*ragged.Array[T], error) {
	levels, leaf, err := listLevels(arr)
	if err != nil {
		return nil, err
	}
	values, err := leafValues[T](leaf)
	if err != nil {
		return nil, err
	}
	if needsGather(levels, leaf) {
		return gatherList(levels, leaf, values)
	}
	all32 := allList32(levels)
	parts := make([]ragged.Partition, len(levels))
	first := int64(0)
	for i, lv := range levels {
		o, n := lv.Data().Offset(), lv.Len()
		if err := checkOffsets(i, lv); err != nil {
			return nil, err
		}
		switch a := lv.(type) {
		case *array.List:
			offs := a.Offsets()[o : o+n+1]
			parts[i] = ragged.RowSplits32(offs)
			if !all32 {
				parts[i] = ragged.RowSplits(widen(offs))
			}
		case *array.LargeList:
			parts[i] = ragged.RowSplits(a.Offsets()[o : o+n+1])
		case *array.FixedSizeList:
			if i == 0 {
				first = int64(o)
			}
			parts[i] = ragged.UniformRowLength(int64(a.DataType().(*arrow.FixedSizeListType).Len()))
		}
	}
	a, err := ragged.View(values, nil, first, int64(arr.Len()), parts...)
	if err != nil {
		return nil, fmt.Errorf("arrowtensor: %v: %w", arr.DataType(), err)
	}
	return a.AsReadOnly(), nil
}

// listLevels returns the list levels of arr, outermost first, and the leaf array under them.
func listLevels(arr arrow.Array) ([]arrow.Array, arrow.Array, error) {
	var levels []arrow.Array
	for cur := arr; ; {
		child := childOf(cur)
		if child == nil {
			if len(levels) == 0 {
				return nil, nil, fmt.Errorf("arrowtensor: %v is not a list array: %w", arr.DataType(), ErrUnsupported)
			}
			return levels, cur, nil
		}
		if levels = append(levels, cur); len(levels) > maxListDepth {
			return nil, nil, fmt.Errorf("arrowtensor: lists nested deeper than %d: %w", maxListDepth, ErrUnsupported)
		}
		cur = child
	}
}

// childOf returns the values array of a list level, or nil for any other array.
func childOf(lv arrow.Array) arrow.Array {
	switch a := lv.(type) {
	case *array.List:
		return a.ListValues()
	case *array.LargeList:
		return a.ListValues()
	case *array.FixedSizeList:
		return a.ListValues()
	}
	return nil
}

// allList32 reports whether every variable-size level has int32 offsets.
func allList32(levels []arrow.Array) bool {
	for _, lv := range levels {
		if _, ok := lv.(*array.LargeList); ok {
			return false
		}
	}
	return true
}

// needsGather reports whether arr cannot be viewed in place: a level or the leaf has nulls, or a
// fixed-size list below the top starts at an offset, which the row numbering of a view cannot
// express.
func needsGather(levels []arrow.Array, leaf arrow.Array) bool {
	for i, lv := range levels {
		if lv.NullN() > 0 {
			return true
		}
		if _, ok := lv.(*array.FixedSizeList); ok && i > 0 && lv.Data().Offset() != 0 {
			return true
		}
	}
	return leaf.NullN() > 0
}

// checkOffsets checks that the offsets buffer of list level i covers its rows (fixed-size
// lists have none).
func checkOffsets(i int, lv arrow.Array) error {
	var have int
	switch a := lv.(type) {
	case *array.List:
		have = len(a.Offsets())
	case *array.LargeList:
		have = len(a.Offsets())
	default:
		return nil
	}
	// o+n+1 ≤ have, written so that no term can overflow.
	if o, n := lv.Data().Offset(), lv.Len(); o < 0 || n < 0 || o > have || n >= have-o {
		return fmt.Errorf("arrowtensor: %v level %d: %d offsets for %d rows at offset %d: %w", lv.DataType().ID(), i, have, n, o, ragged.ErrInvalid)
	}
	return nil
}

// IsRaggedType reports whether RaggedFromListAny reads arrays of type dt: one to 64 list,
// large_list and fixed_size_list levels over numeric, bool, utf8 or large_utf8 values, plain
// or dictionary-encoded.
func IsRaggedType(dt arrow.DataType) bool {
	for levels := 0; levels <= maxListDepth; levels++ {
		switch t := dt.(type) {
		case *arrow.ListType:
			dt = t.Elem()
		case *arrow.LargeListType:
			dt = t.Elem()
		case *arrow.FixedSizeListType:
			dt = t.Elem()
		default:
			_, err := leafDType(dt)
			return levels > 0 && err == nil
		}
	}
	return false
}

// widen returns offsets as int64.
func widen(offs []int32) []int64 {
	out := make([]int64, len(offs))
	for i, v := range offs {
		out[i] = int64(v)
	}
	return out
}

// gatherList copies the rows of levels into a new ragged array, null list slots as empty rows,
// checking every offset.
func gatherList[T ndarray.Element](levels []arrow.Array, leaf arrow.Array, values []T) (*ragged.Array[T], error) {
	type span struct{ lo, hi int64 }
	spans := []span{{0, int64(levels[0].Len())}}
	var next []span
	add := func(lo, hi int64) {
		if n := len(next); n > 0 && next[n-1].hi == lo {
			next[n-1].hi = hi
		} else if hi > lo {
			next = append(next, span{lo, hi})
		}
	}
	all32 := allList32(levels)
	parts := make([]ragged.Partition, len(levels))
	for i, lv := range levels {
		childLen := int64(childOf(lv).Len())
		next = nil
		switch a := lv.(type) {
		case *array.FixedSizeList:
			u := int64(a.DataType().(*arrow.FixedSizeListType).Len())
			o := int64(a.Data().Offset())
			for _, sp := range spans {
				for r := sp.lo; r < sp.hi; r++ {
					if a.IsNull(int(r)) {
						return nil, fmt.Errorf("arrowtensor: fixed_size_list level %d: slot %d is null: %w", i, r, ErrNull)
					}
					if (o+r+1)*u > childLen {
						return nil, fmt.Errorf("arrowtensor: fixed_size_list level %d: slot %d past the %d values: %w", i, r, childLen, ragged.ErrInvalid)
					}
					add((o+r)*u, (o+r+1)*u)
				}
			}
			parts[i] = ragged.UniformRowLength(u)
		default:
			if err := checkOffsets(i, lv); err != nil {
				return nil, err
			}
			offsets := lv.(interface{ ValueOffsets(int) (int64, int64) }).ValueOffsets
			splits := []int64{0}
			for _, sp := range spans {
				for r := sp.lo; r < sp.hi; r++ {
					s, e := offsets(int(r))
					if lv.IsNull(int(r)) {
						e = s
					} else if s < 0 || e < s || e > childLen {
						return nil, fmt.Errorf("arrowtensor: list level %d: row %d spans offsets %d to %d of %d values: %w", i, r, s, e, childLen, ragged.ErrInvalid)
					}
					splits = append(splits, splits[len(splits)-1]+e-s)
					add(s, e)
				}
			}
			parts[i] = ragged.RowSplits(splits)
			if all32 {
				parts[i] = ragged.RowSplits32(narrow(splits))
			}
		}
		spans = next
	}
	var out []T
	for _, sp := range spans {
		if sp.hi > int64(len(values)) {
			return nil, fmt.Errorf("arrowtensor: values %d to %d of %d: %w", sp.lo, sp.hi, len(values), ragged.ErrInvalid)
		}
		for r := sp.lo; r < sp.hi; r++ {
			if leaf.IsNull(int(r)) {
				return nil, fmt.Errorf("arrowtensor: value %d is null: %w", r, ErrNull)
			}
		}
		out = append(out, values[sp.lo:sp.hi]...)
	}
	if out == nil {
		out = []T{}
	}
	a, err := ragged.Make(out, nil, parts...)
	if err != nil {
		return nil, err
	}
	return a.AsReadOnly(), nil
}

// narrow returns splits that fit in int32 (they count values of an int32-offset list) as int32.
func narrow(splits []int64) []int32 {
	out := make([]int32, len(splits))
	for i, v := range splits {
		out[i] = int32(v)
	}
	return out
}

// leafValues returns the values of leaf as a []T over its logical positions: a view of the
// values buffer for numeric types, a copy for bool, strings and dictionary-encoded values
// (null slots of which hold zero values).
func leafValues[T ndarray.Element](leaf arrow.Array) ([]T, error) {
	if d, ok := leaf.(*array.Dictionary); ok {
		dict, err := leafValues[T](d.Dictionary())
		if err != nil {
			return nil, err
		}
		out := make([]T, d.Len())
		for i := range out {
			if d.IsValid(i) {
				k := d.GetValueIndex(i)
				if k < 0 || k >= len(dict) {
					return nil, fmt.Errorf("arrowtensor: dictionary index %d at %d outside %d values: %w", k, i, len(dict), ragged.ErrInvalid)
				}
				out[i] = dict[k]
			}
		}
		return out, nil
	}
	want := ndarray.DTypeOf[T]()
	got, err := leafDType(leaf.DataType())
	if err != nil {
		return nil, err
	}
	if got != want {
		return nil, fmt.Errorf("arrowtensor: list of %v read as %v: %w", leaf.DataType(), want, ndarray.ErrDType)
	}
	n := leaf.Len()
	var out any
	switch a := leaf.(type) {
	case *array.Boolean:
		v := make([]bool, n)
		for i := range v {
			v[i] = a.Value(i)
		}
		out = v
	case *array.String, *array.LargeString, *array.Binary, *array.LargeBinary, *array.FixedSizeBinary:
		v, err := stringValues(a)
		if err != nil {
			return nil, err
		}
		out = v
	default:
		width := int64(want.Size())
		raw := valueBytes(leaf.Data(), width)
		if int64(len(raw)) < int64(n)*width {
			return nil, fmt.Errorf("arrowtensor: %d %v values in a buffer of %d bytes: %w", n, want, len(raw), ragged.ErrInvalid)
		}
		out = elementOps[want].view(raw[:int64(n)*width])
	}
	values := out.([]T)
	if values == nil {
		values = []T{}
	}
	return values, nil
}

// leafDType returns the element type of a list's leaf values.
func leafDType(dt arrow.DataType) (ndarray.DType, error) {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	switch dt.ID() {
	case arrow.BOOL:
		return ndarray.Bool, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return ndarray.String, nil
	}
	return DTypeFromArrow(dt)
}

// elementOp is what the ragged conversions need for one element type (view and bytes only for
// numeric ones), whose type parameter Go cannot pass through ndarray.Element.
type elementOp struct {
	view   func(raw []byte) any    // ndarray.ViewBytes, as a []T
	bytes  func(values any) []byte // ndarray.LittleEndianBytes of a []T
	from   func(arrow.Array) (ragged.Any, error)
	to     func(mem memory.Allocator, a ragged.Any, list arrow.Type) (arrow.Array, error)
	column func(arrow.Array) (ndarray.Array, error)                             // columnOf
	plain  func(mem memory.Allocator, a ndarray.Array) (arrow.ArrayData, error) // plainOf
}

func opsOf[T ndarray.Numeric]() elementOp {
	return elementOp{
		view:   func(raw []byte) any { v, _ := ndarray.ViewBytes[T](raw); return v },
		bytes:  func(values any) []byte { return ndarray.LittleEndianBytes(values.([]T)) },
		from:   fromList[T],
		to:     toList[T],
		column: columnOf[T],
		plain:  plainOf[T],
	}
}

func fromList[T ndarray.Element](arr arrow.Array) (ragged.Any, error) {
	return RaggedFromList[T](arr)
}

func toList[T ndarray.Element](mem memory.Allocator, a ragged.Any, list arrow.Type) (arrow.Array, error) {
	return ListFromRagged(mem, a.(*ragged.Array[T]), list)
}

// elementOps holds one elementOp per element type (bool and string only convert); it is filled
// in init because the conversions it refers to read it.
var elementOps map[ndarray.DType]elementOp

func init() {
	elementOps = map[ndarray.DType]elementOp{
		ndarray.Int8: opsOf[int8](), ndarray.Int16: opsOf[int16](), ndarray.Int32: opsOf[int32](), ndarray.Int64: opsOf[int64](),
		ndarray.Uint8: opsOf[uint8](), ndarray.Uint16: opsOf[uint16](), ndarray.Uint32: opsOf[uint32](), ndarray.Uint64: opsOf[uint64](),
		ndarray.Float16: opsOf[float16.Num](), ndarray.Float32: opsOf[float32](), ndarray.Float64: opsOf[float64](),
		ndarray.Bool:   {from: fromList[bool], to: toList[bool], column: columnOf[bool], plain: plainOf[bool]},
		ndarray.String: {from: fromList[string], to: toList[string], column: columnOf[string], plain: plainOf[string]},
	}
}

// RaggedFromListAny is RaggedFromList for an element type known only at run time, that of
// arr's leaf values; a type switch on *ragged.Array[T] recovers the typed array.
func RaggedFromListAny(arr arrow.Array) (ragged.Any, error) {
	_, leaf, err := listLevels(arr)
	if err != nil {
		return nil, err
	}
	dt, err := leafDType(leaf.DataType())
	if err != nil {
		return nil, err
	}
	return elementOps[dt].from(arr)
}

// ListFromRaggedAny is ListFromRagged for a ragged array of any element type. Release the
// result.
func ListFromRaggedAny(mem memory.Allocator, a ragged.Any, list arrow.Type) (arrow.Array, error) {
	return elementOps[a.DType()].to(mem, a, list)
}

// ListFromRagged returns a as a nested list array: one list level per partition — list (list
// = arrow.LIST) or large_list (arrow.LARGE_LIST) for a ragged one, fixed_size_list for a
// uniform one — and one fixed_size_list level per inner dimension, over leaf values of T's
// Arrow type (bool as a bitmap, strings as utf8).
//
// With arrow.LARGE_LIST and numeric values, the array views a's row splits and values
// without copying when they start at 0 (always, unless a is a row view); it must not outlive
// a's storage, nor a grow while it is in use. Everything else is allocated from mem; release
// the result. An arrow.LIST whose offsets overflow int32 fails with ndarray.ErrShape, and so
// does an inner dimension of 0, which arrow-go's fixed-size lists cannot hold.
func ListFromRagged[T ndarray.Element](mem memory.Allocator, a *ragged.Array[T], list arrow.Type) (arrow.Array, error) {
	if list != arrow.LIST && list != arrow.LARGE_LIST {
		return nil, fmt.Errorf("arrowtensor: ragged arrays map to list or large_list, not %v: %w", list, ErrUnsupported)
	}
	shape := a.Shape()
	splits := a.RowSplits()
	if list == arrow.LIST {
		for l, s := range splits {
			if s[len(s)-1] > math.MaxInt32 {
				return nil, fmt.Errorf("arrowtensor: level %d holds %d rows, past the int32 offsets of a list (use large_list): %w", l, s[len(s)-1], ndarray.ErrShape)
			}
		}
	}
	data, err := leafData(mem, a.FlatValues())
	if err != nil {
		return nil, err
	}
	rows := int64(data.Len())
	wrap := func(typ arrow.DataType, n int64, offsets *memory.Buffer) {
		buffers := []*memory.Buffer{nil, offsets}
		if offsets == nil {
			buffers = buffers[:1] // a fixed-size list has no offsets
		}
		next := array.NewData(typ, int(n), buffers, []arrow.ArrayData{data}, 0, 0)
		data.Release()
		if offsets != nil {
			offsets.Release()
		}
		data = next
	}
	inner := a.InnerShape()
	for k := len(inner) - 1; k >= 0; k-- {
		d := inner[k]
		if d <= 0 || d > math.MaxInt32 {
			data.Release()
			return nil, fmt.Errorf("arrowtensor: inner dimension %d of size %d has no fixed-size list: %w", k, d, ndarray.ErrShape)
		}
		rows /= d
		wrap(arrow.FixedSizeListOf(int32(d), data.DataType()), rows, nil)
	}
	for l := len(splits) - 1; l >= 0; l-- {
		s := splits[l]
		rows = int64(len(s) - 1)
		if u := shape[1+l]; u != ndarray.Unknown {
			if u <= 0 || u > math.MaxInt32 {
				data.Release()
				return nil, fmt.Errorf("arrowtensor: uniform row length %d at level %d has no fixed-size list: %w", u, l, ndarray.ErrShape)
			}
			wrap(arrow.FixedSizeListOf(int32(u), data.DataType()), rows, nil)
			continue
		}
		if list == arrow.LARGE_LIST {
			wrap(arrow.LargeListOf(data.DataType()), rows, memory.NewBufferBytes(ndarray.LittleEndianBytes(s)))
			continue
		}
		buf := newBuffer(mem, int64(len(s))*4)
		offs := arrow.Int32Traits.CastFromBytes(buf.Bytes())
		for i, v := range s {
			offs[i] = int32(v)
		}
		wrap(arrow.ListOf(data.DataType()), rows, buf)
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// leafData returns values as Arrow array data: numeric values viewed (on little-endian
// machines), bool and strings copied into memory from mem.
func leafData[T ndarray.Element](mem memory.Allocator, values []T) (arrow.ArrayData, error) {
	switch v := any(values).(type) {
	case []bool:
		buf := newBuffer(mem, int64(bitutil.BytesForBits(int64(len(v)))))
		for i, b := range v {
			if b {
				bitutil.SetBit(buf.Bytes(), i)
			}
		}
		defer buf.Release()
		return array.NewData(arrow.FixedWidthTypes.Boolean, len(v), []*memory.Buffer{nil, buf}, nil, 0, 0), nil
	case []string:
		return stringData(mem, v), nil
	}
	dt := ndarray.DTypeOf[T]()
	raw := elementOps[dt].bytes(values)
	return array.NewData(dt.ArrowType(), len(values), []*memory.Buffer{nil, memory.NewBufferBytes(raw)}, nil, 0, 0), nil
}
