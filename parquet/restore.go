package parquet

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Restoring the stored Arrow types. Parquet keeps a fixed-size list, a large list and a list
// alike as a LIST, a large string as a string, a half float as 2-byte fixed-length binary;
// pqarrow decodes them as such, and restore gives each array the type the writer stored —
// viewing the decoded buffers, copying only offsets that widen.

// fits reports whether an array decoded as type got can be given type want.
func fits(got, want arrow.DataType) bool {
	if arrow.TypeEqual(got, want) {
		return true
	}
	if ext, ok := want.(arrow.ExtensionType); ok {
		return fits(got, ext.StorageType())
	}
	switch want := want.(type) {
	case *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType:
		l, ok := got.(*arrow.ListType)
		return ok && fits(l.Elem(), want.(arrow.ListLikeType).Elem())
	case *arrow.StructType:
		s, ok := got.(*arrow.StructType)
		if !ok || s.NumFields() != want.NumFields() {
			return false
		}
		for i := range want.Fields() {
			if !fits(s.Field(i).Type, want.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.LargeStringType:
		return got.ID() == arrow.STRING
	case *arrow.LargeBinaryType:
		return got.ID() == arrow.BINARY
	case *arrow.Float16Type:
		b, ok := got.(*arrow.FixedSizeBinaryType)
		return ok && b.ByteWidth == 2
	}
	return false
}

// restore returns arr, of a type fits accepts for want, as an array of type want. Release it.
func restore(mem memory.Allocator, arr arrow.Array, want arrow.DataType) (arrow.Array, error) {
	d, err := restoreData(mem, arr.Data(), want)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	if ext, ok := want.(arrow.ExtensionType); ok {
		storage := array.MakeFromData(d)
		defer storage.Release()
		return array.NewExtensionArrayWithStorage(ext, storage), nil
	}
	return array.MakeFromData(d), nil
}

func restoreData(mem memory.Allocator, d arrow.ArrayData, want arrow.DataType) (arrow.ArrayData, error) {
	if ext, ok := want.(arrow.ExtensionType); ok {
		want = ext.StorageType()
	}
	got := d.DataType()
	if arrow.TypeEqual(got, want) {
		d.Retain()
		return d, nil
	}
	bufs := d.Buffers()
	switch want := want.(type) {
	case *arrow.ListType:
		child, err := restoreData(mem, d.Children()[0], want.Elem())
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(want, d.Len(), bufs, []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
	case *arrow.LargeListType:
		child, err := restoreData(mem, d.Children()[0], want.Elem())
		if err != nil {
			return nil, err
		}
		defer child.Release()
		wide := widenOffsets(mem, bufs[1], d.Offset()+d.Len()+1)
		defer wide.Release()
		return array.NewData(want, d.Len(), []*memory.Buffer{bufs[0], wide}, []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
	case *arrow.FixedSizeListType:
		return fixedSizeList(mem, d, want)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		wide := widenOffsets(mem, bufs[1], d.Offset()+d.Len()+1)
		defer wide.Release()
		return array.NewData(want, d.Len(), []*memory.Buffer{bufs[0], wide, bufs[2]}, nil, d.NullN(), d.Offset()), nil
	case *arrow.Float16Type:
		return array.NewData(want, d.Len(), bufs, nil, d.NullN(), d.Offset()), nil
	case *arrow.StructType:
		children := make([]arrow.ArrayData, len(d.Children()))
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, c := range d.Children() {
			var err error
			if children[i], err = restoreData(mem, c, want.Field(i).Type); err != nil {
				return nil, err
			}
		}
		return array.NewData(want, d.Len(), bufs, children, d.NullN(), d.Offset()), nil
	}
	return nil, fmt.Errorf("%s cannot be read as %s: %w", got, want, ErrInvalid)
}

// sliceData returns rows [lo, hi) of d, a view. Unlike array.NewSliceData it keeps a null
// count of zero (and drops the validity bitmap, whose bits pqarrow leaves unset when no value
// is null) instead of recounting it from the bitmap.
func sliceData(d arrow.ArrayData, lo, hi int64) arrow.ArrayData {
	if d.NullN() != 0 {
		return array.NewSliceData(d, lo, hi)
	}
	bufs := append([]*memory.Buffer{nil}, d.Buffers()[1:]...)
	return array.NewData(d.DataType(), int(hi-lo), bufs, d.Children(), 0, d.Offset()+int(lo))
}

// widenOffsets returns the first n int32 offsets of buf as int64, in a buffer from mem.
func widenOffsets(mem memory.Allocator, buf *memory.Buffer, n int) *memory.Buffer {
	out := memory.NewResizableBuffer(mem)
	out.Resize(n * 8)
	if n == 0 {
		return out
	}
	wide := arrow.Int64Traits.CastFromBytes(out.Bytes())
	for i, o := range arrow.Int32Traits.CastFromBytes(buf.Bytes())[:n] {
		wide[i] = int64(o)
	}
	return out
}

// fixedSizeList views list data d as a fixed-size list of want.Len() values per row: every
// row must hold exactly that many (Parquet stores a null row as an empty list, which a
// fixed-size list cannot view: such a column is ErrUnsupported).
func fixedSizeList(mem memory.Allocator, d arrow.ArrayData, want *arrow.FixedSizeListType) (arrow.ArrayData, error) {
	n := int64(want.Len())
	if d.Len() == 0 {
		empty := array.NewSliceData(d.Children()[0], 0, 0)
		defer empty.Release()
		child, err := restoreData(mem, empty, want.Elem())
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(want, 0, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0), nil
	}
	if d.NullN() > 0 && d.Offset() != 0 {
		return nil, fmt.Errorf("a sliced list with nulls as a fixed-size list: %w", ErrUnsupported)
	}
	offsets := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
	for row := range d.Len() {
		if got := int64(offsets[row+1] - offsets[row]); got != n {
			if got == 0 && d.NullN() > 0 {
				return nil, fmt.Errorf("row %d is null: a fixed-size list of %d with null rows: %w", row, n, ErrUnsupported)
			}
			return nil, fmt.Errorf("row %d holds %d values, not %d: %w", row, got, n, ErrInvalid)
		}
	}
	values := sliceData(d.Children()[0], int64(offsets[0]), int64(offsets[d.Len()]))
	defer values.Release()
	child, err := restoreData(mem, values, want.Elem())
	if err != nil {
		return nil, err
	}
	defer child.Release()
	var validity *memory.Buffer
	if d.NullN() > 0 {
		validity = d.Buffers()[0]
	}
	return array.NewData(want, d.Len(), []*memory.Buffer{validity}, []arrow.ArrayData{child}, d.NullN(), 0), nil
}
