package parquet

import (
	"context"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/limits"
)

// ReadAll decodes every row group into one record batch of the reader's schema. A column the
// direct path reads as fixed-size values (a tensor column, a plain column of numbers) is
// decoded by each row group straight into its rows' place in one buffer of the whole column,
// so that it is copied once, from its pages, and never concatenated; other columns are
// decoded row group by row group and concatenated. Row groups are decoded as ReadRowGroups
// decodes them (ReaderOptions.Parallelism at once). The bytes decoded together — the whole
// columns' buffers and what the row groups decoded — are bounded by the Limits' MaxCopySize
// (an error wrapping limits.ErrExceeded). The record's memory is the Allocator's: Release it.
func (r *Reader) ReadAll(ctx context.Context) (arrow.Record, error) {
	whole := *r // ReadRowGroups' workers copy it, arenas included
	whole.arenas = make(map[int]*arena)
	whole.directReads = 0 // added to r's after
	defer func() {
		for _, a := range whole.arenas {
			a.buf.Release()
		}
		r.directReads += whole.directReads
	}()
	rows := r.NumRows()
	starts := make([]int64, r.NumRowGroups()) // each row group's first row
	for i := range starts {
		if i > 0 {
			starts[i] = starts[i-1] + r.RowGroupRows(i-1)
		}
	}
	total := int64(0) // bytes decoded, held together
	if !r.general {
		for _, c := range r.cols {
			plan, ok := arenaPlanOf(c)
			if !ok || whole.arenas[c.leaves[0]] != nil { // a column named twice has one
				continue
			}
			hi, values := bits.Mul64(uint64(rows), uint64(plan.cell))
			hi2, size := bits.Mul64(values, uint64(plan.width))
			if hi != 0 || hi2 != 0 || values > uint64(r.lim.MaxElements) || total+int64(size) > r.lim.MaxCopySize || int64(size) < 0 {
				continue // read and bounded row group by row group, as by ReadRowGroup
			}
			buf := memory.NewResizableBuffer(r.mem)
			buf.Resize(int(size))
			whole.arenas[c.leaves[0]] = &arena{buf: buf, rowBytes: plan.cell * plan.width, starts: starts}
			total += int64(size)
		}
	}
	chunks := make([][]arrow.Array, len(r.cols))
	defer func() {
		for _, cs := range chunks {
			for _, a := range cs {
				a.Release()
			}
		}
	}()
	err := whole.ReadRowGroups(ctx, 0, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		defer rec.Release()
		for k := range r.cols {
			col := rec.Column(k)
			if a := whole.arenas[r.cols[k].leaves[0]]; a == nil || !a.holds(col, i) {
				if total += dataBytes(col.Data()); total > r.lim.MaxCopySize {
					return fmt.Errorf("parquet: %d bytes decoded by row group %d, more than MaxCopySize %d: %w", total, i, r.lim.MaxCopySize, limits.ErrExceeded)
				}
			}
			col.Retain()
			chunks[k] = append(chunks[k], col)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, 0, len(r.cols))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for k, c := range r.cols {
		var col arrow.Array
		a := whole.arenas[c.leaves[0]]
		if a != nil && len(chunks[k]) > 0 && a.holdsAll(chunks[k]) {
			plan, _ := arenaPlanOf(c)
			valid, nulls := a.validity(r.mem, chunks[k], rows*plan.cell)
			col, err = plan.array(a.buf, rows, valid, nulls)
			if valid != nil {
				valid.Release()
			}
		} else {
			if a != nil { // a row group read otherwise: the column is joined beside its buffer
				if total += int64(a.buf.Len()); total > r.lim.MaxCopySize {
					return nil, fmt.Errorf("parquet: column %s joined: more than MaxCopySize %d: %w", c.field.Name, r.lim.MaxCopySize, limits.ErrExceeded)
				}
			}
			col, err = concatenated(r.mem, r.schema.Field(k).Type, chunks[k])
		}
		if err != nil {
			return nil, fmt.Errorf("parquet: column %s: %w", c.field.Name, err)
		}
		cols = append(cols, col)
	}
	rec := array.NewRecord(r.schema, cols, rows)
	return rec, nil
}

// arena is the buffer of a whole column that ReadAll has row groups decode into: row group i
// writes its values at starts[i]·rowBytes.
type arena struct {
	buf      *memory.Buffer
	rowBytes int64
	starts   []int64
}

// arenaPlanOf returns the plan of a column ReadAll decodes into one buffer: fixed-size values
// (not bits, not decimals widened after), as the direct path reads them.
func arenaPlanOf(c column) (directPlan, bool) {
	if c.parts != nil || len(c.leaves) != 1 {
		return directPlan{}, false
	}
	if _, _, ok := listPlanOf(c.field.Type); ok {
		return directPlan{}, false
	}
	if _, _, ok := nestedPlanOf(c.field.Type); ok {
		return directPlan{}, false
	}
	plan, ok := directPlanOf(c.field.Type)
	return plan, ok && !plan.bitPacked && !plan.decimal && plan.width > 0
}

// region returns where in the arena row group rg's values of size bytes go, nil when they do
// not fit.
func (a *arena) region(rg int, size int64) []byte {
	if a == nil || rg < 0 || rg >= len(a.starts) {
		return nil
	}
	at := a.starts[rg] * a.rowBytes
	if size < 0 || at+size > int64(a.buf.Len()) {
		return nil
	}
	return a.buf.Bytes()[at : at+size : at+size]
}

// leafOf returns the values of a column the arena plan reads: below its extension type and
// fixed-size lists.
func leafOf(d arrow.ArrayData) arrow.ArrayData {
	for len(d.Children()) == 1 && d.DataType().ID() != arrow.STRUCT {
		d = d.Children()[0]
	}
	return d
}

// holds reports whether col, row group rg's column, has its values in the arena, where they
// belong.
func (a *arena) holds(col arrow.Array, rg int) bool {
	d := col.Data()
	if d.Offset() != 0 {
		return false
	}
	leaf := leafOf(d)
	bufs := leaf.Buffers()
	if col.Len() == 0 && leaf.Len() == 0 {
		return true // no rows: nothing of the arena to hold
	}
	if leaf.Offset() != 0 || len(bufs) != 2 || bufs[1] == nil || bufs[1].Len() == 0 {
		return false
	}
	want := a.region(rg, int64(bufs[1].Len()))
	return want != nil && unsafe.SliceData(want) == unsafe.SliceData(bufs[1].Bytes()) &&
		int64(bufs[1].Len()) == int64(col.Len())*a.rowBytes
}

// holdsAll reports whether every row group's column, in order, has its values in the arena.
func (a *arena) holdsAll(chunks []arrow.Array) bool {
	for i, c := range chunks {
		if !a.holds(c, i) {
			return false
		}
	}
	return true
}

// validity joins the row groups' validity bitmaps of values values: nil when none is null.
func (a *arena) validity(mem memory.Allocator, chunks []arrow.Array, values int64) (*memory.Buffer, int64) {
	nulls := int64(0)
	for _, c := range chunks {
		nulls += int64(leafOf(c.Data()).NullN())
	}
	if nulls == 0 {
		return nil, 0
	}
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int((values + 7) / 8))
	at := int64(0)
	for _, c := range chunks {
		leaf := leafOf(c.Data())
		n := int64(leaf.Len())
		if bm := leaf.Buffers()[0]; bm != nil && leaf.NullN() > 0 {
			bitutil.CopyBitmap(bm.Bytes(), leaf.Offset(), int(n), valid.Bytes(), int(at))
		} else {
			bitutil.SetBitsTo(valid.Bytes(), at, n, true)
		}
		at += n
	}
	return valid, nulls
}

// concatenated joins a column's row groups (none: an empty column of type t).
func concatenated(mem memory.Allocator, t arrow.DataType, chunks []arrow.Array) (arrow.Array, error) {
	switch len(chunks) {
	case 0:
		return array.MakeArrayOfNull(mem, t, 0), nil
	case 1:
		chunks[0].Retain()
		return chunks[0], nil
	}
	return array.Concatenate(chunks, mem)
}

// dataBytes returns the bytes of d's buffers, its children's and its dictionary's.
func dataBytes(d arrow.ArrayData) int64 {
	n := int64(0)
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY { // else a nil *array.Data in an interface
		n += dataBytes(d.Dictionary())
	}
	return n
}
