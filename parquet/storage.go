package parquet

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// arrow-go v17's Parquet writer implements no large_list. Parquet has one LIST type for both
// (Arrow C++ writes a large_list as a plain LIST too): the writer writes large_list columns
// with 32-bit offsets and stores the original Arrow schema, which restores the type on read.
// It also writes a sliced fixed-size list from its child's start: every batch handed to it
// has its fixed-size lists (arrow.fixed_shape_tensor's storage) moved to offset 0 first.

// storageType returns t with every large_list made a list, and whether it changed.
func storageType(t arrow.DataType) (arrow.DataType, bool) {
	switch l := t.(type) {
	case *arrow.LargeListType:
		elem, _ := storageType(l.Elem())
		f := l.ElemField()
		f.Type = elem
		return arrow.ListOfField(f), true
	case *arrow.ListType:
		if elem, changed := storageType(l.Elem()); changed {
			f := l.ElemField()
			f.Type = elem
			return arrow.ListOfField(f), true
		}
	case *arrow.FixedSizeListType:
		if elem, changed := storageType(l.Elem()); changed {
			f := l.ElemField()
			f.Type = elem
			return arrow.FixedSizeListOfField(l.Len(), f), true
		}
	}
	return t, false
}

// storageSchema returns schema with every large_list column made a list and every column
// nullable, and whether anything changed. arrow-go v17 writes the elements of a fixed-size
// list inside a required column as nulls; Arrow C++ writes every column optional anyway, and
// the stored Arrow schema keeps the original nullability.
func storageSchema(schema *arrow.Schema) (*arrow.Schema, bool) {
	fields := schema.Fields()
	changed := false
	for i, f := range fields {
		if t, ok := storageType(f.Type); ok {
			fields[i].Type, changed = t, true
		}
		if !f.Nullable {
			fields[i].Nullable, changed = true, true
		}
	}
	if !changed {
		return schema, false
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md), true
}

// storageData returns d as data of type t (storageType of d's type): large_list offsets
// narrowed to int32 into buffers from mem, everything else shared. Release the result.
func storageData(mem memory.Allocator, d arrow.ArrayData, t arrow.DataType) (arrow.ArrayData, error) {
	switch t := t.(type) {
	case *arrow.ListType:
		child, err := storageData(mem, d.Children()[0], t.Elem())
		if err != nil {
			return nil, err
		}
		defer child.Release()
		if d.DataType().ID() == arrow.LIST {
			return array.NewData(t, d.Len(), d.Buffers(), []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
		}
		// A large_list: its int64 offsets, those of the rows d holds, narrowed.
		wide := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
		if wide[len(wide)-1] > math.MaxInt32 {
			return nil, fmt.Errorf("parquet: a large_list batch of %d values: write it in batches of fewer than 2^31: %w", wide[len(wide)-1], ErrUnsupported)
		}
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(len(wide) * 4)
		narrow := arrow.Int32Traits.CastFromBytes(buf.Bytes())
		for i, o := range wide {
			narrow[i] = int32(o)
		}
		defer buf.Release()
		// The new offsets start at the slice's first row: so does a copy of its validity. (The
		// null count of a slice may be unknown, NullN -1: it is counted from the bitmap.)
		var valid *memory.Buffer
		nulls := 0
		if bm := d.Buffers()[0]; bm != nil && bm.Len() > 0 {
			nulls = d.Len() - bitutil.CountSetBits(bm.Bytes(), d.Offset(), d.Len())
		}
		if nulls > 0 {
			valid = memory.NewResizableBuffer(mem)
			valid.Resize(int(bitutil.BytesForBits(int64(d.Len()))))
			bitutil.CopyBitmap(d.Buffers()[0].Bytes(), d.Offset(), d.Len(), valid.Bytes(), 0)
			defer valid.Release()
		}
		return array.NewData(t, d.Len(), []*memory.Buffer{valid, buf}, []arrow.ArrayData{child}, nulls, 0), nil
	case *arrow.FixedSizeListType:
		return fixedSizeListAtZero(mem, d, t, t)
	case *arrow.StructType:
		return structAtZero(mem, d, t, t)
	case arrow.ExtensionType:
		switch st := t.StorageType().(type) {
		case *arrow.FixedSizeListType:
			return fixedSizeListAtZero(mem, d, t, st)
		case *arrow.StructType:
			return structAtZero(mem, d, t, st)
		}
	}
	d.Retain()
	return d, nil
}

// structAtZero returns struct data d (of type t, storage st) with offset 0 and each child
// sliced to the rows d holds, and those children's fixed-size lists moved to offset 0 too
// (arrow.variable_shape_tensor's shapes are one). A validity bitmap is copied.
func structAtZero(mem memory.Allocator, d arrow.ArrayData, t arrow.DataType, st *arrow.StructType) (arrow.ArrayData, error) {
	off, n := int64(d.Offset()), int64(d.Len())
	children := make([]arrow.ArrayData, 0, len(d.Children()))
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for i, c := range d.Children() {
		sliced := sliceData(c, off, off+n)
		stored, err := storageData(mem, sliced, st.Field(i).Type)
		sliced.Release()
		if err != nil {
			return nil, err
		}
		children = append(children, stored)
	}
	validity := bitmapAtZero(mem, d)
	if validity != nil {
		defer validity.Release()
	}
	return array.NewData(t, d.Len(), []*memory.Buffer{validity}, children, d.NullN(), 0), nil
}

// bitmapAtZero returns a copy of d's validity bitmap starting at its first row, or nil when
// d has no nulls. Release it.
func bitmapAtZero(mem memory.Allocator, d arrow.ArrayData) *memory.Buffer {
	if d.NullN() == 0 || d.Buffers()[0] == nil {
		return nil
	}
	validity := memory.NewResizableBuffer(mem)
	validity.Resize(int(bitutil.BytesForBits(int64(d.Len()))))
	bitutil.CopyBitmap(d.Buffers()[0].Bytes(), d.Offset(), d.Len(), validity.Bytes(), 0)
	return validity
}

// fixedSizeListAtZero returns fixed-size-list data d (of type t, storage fsl) with offset 0
// and its child sliced to the rows d holds: arrow-go v17's Parquet writer ignores the offset of
// a sliced fixed-size list and writes the child from its start. The child is a view; a
// validity bitmap is copied to start at the first row.
func fixedSizeListAtZero(mem memory.Allocator, d arrow.ArrayData, t arrow.DataType, fsl *arrow.FixedSizeListType) (arrow.ArrayData, error) {
	n, off := int(fsl.Len()), d.Offset()
	child := sliceData(d.Children()[0], int64(off*n), int64((off+d.Len())*n))
	defer child.Release()
	stored, err := storageData(mem, child, fsl.Elem())
	if err != nil {
		return nil, err
	}
	defer stored.Release()
	validity := bitmapAtZero(mem, d)
	if validity != nil {
		defer validity.Release()
	}
	return array.NewData(t, d.Len(), []*memory.Buffer{validity}, []arrow.ArrayData{stored}, d.NullN(), 0), nil
}

// storageRecord returns rec with the schema storageSchema gave. Release it.
func storageRecord(mem memory.Allocator, rec arrow.Record, schema *arrow.Schema) (arrow.Record, error) {
	cols := make([]arrow.Array, 0, rec.NumCols())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i, c := range rec.Columns() {
		d, err := storageData(mem, c.Data(), schema.Field(i).Type)
		if err != nil {
			return nil, err
		}
		cols = append(cols, array.MakeFromData(d))
		d.Release()
	}
	return array.NewRecord(schema, cols, rec.NumRows()), nil
}
