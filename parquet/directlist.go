package parquet

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"

	"github.com/ndarrow/ndarrow/internal/memcopy"
)

// The direct path reads a ragged column too — a list or large_list (one level) of numbers or
// bools — from its pages into offsets and one values buffer: each page's repetition and
// definition levels are decoded as runs (an RLE run whole) and walked together, a repetition
// level of 0 beginning a row, a definition level saying whether the row is null, empty, or
// holds a value or a null; the PLAIN (or BYTE_STREAM_SPLIT) values of the page are copied
// after the values before them, spaced out where values are null. A layout other than the
// three-level LIST gives the row group back to pqarrow.

// listPlanOf returns the plan of the values of t, a list or large_list of what directPlanOf
// takes (no fixed-size lists), and whether its offsets are 64-bit.
func listPlanOf(t arrow.DataType) (plan directPlan, wide, ok bool) {
	var elem arrow.DataType
	switch l := t.(type) {
	case *arrow.ListType:
		elem = l.Elem()
	case *arrow.LargeListType:
		elem, wide = l.Elem(), true
	default:
		return plan, false, false
	}
	plan, ok = directPlanOf(elem)
	return plan, wide, ok && len(plan.lists) == 0
}

// readDirectList reads the list column c of row group rg, of rows rows (see above).
func (r *Reader) readDirectList(c column, rg int, rows int64) (arrow.Array, error) {
	plan, wide, ok := listPlanOf(c.field.Type)
	if !ok || c.parts != nil || len(c.leaves) != 1 || rows <= 0 {
		return nil, errNotDirect
	}
	pqList, isList := c.pqType.(*arrow.ListType)
	if !isList || pqList.Elem().ID() != plan.leaf.ID() {
		return nil, errNotDirect
	}
	descr := r.md.Schema.Column(c.leaves[0])
	leaf := descr.SchemaNode()
	group := leaf.Parent()
	if descr.PhysicalType() != plan.phys || descr.MaxRepetitionLevel() != 1 || group == nil ||
		group.RepetitionType() != pq.Repetitions.Repeated || group.Parent() == nil ||
		group.Parent().Parent() == nil || group.Parent().Parent().Parent() != nil ||
		plan.phys == pq.Types.FixedLenByteArray && int64(descr.TypeLength()) != plan.width {
		return nil, errNotDirect // not the three-level LIST of a top-level column
	}
	topOptional := group.Parent().RepetitionType() == pq.Repetitions.Optional
	elemOptional := leaf.RepetitionType() == pq.Repetitions.Optional
	emptyDef := 0
	if topOptional {
		emptyDef = 1
	}
	nullValueDef := -1 // the definition level of a null value, if values may be null
	if elemOptional {
		nullValueDef = emptyDef + 1
	}
	if int(descr.MaxDefinitionLevel()) != max(emptyDef, nullValueDef)+1 {
		return nil, errNotDirect
	}
	fullDef := int(descr.MaxDefinitionLevel())
	m, ok := r.listChunkOf(c.leaves[0], rg, rows)
	if !ok {
		return nil, errNotDirect
	}
	decode := m.decode
	valueBytes := plan.valueBytes
	values := memory.NewResizableBuffer(r.mem)
	defer values.Release()
	values.Resize(int(valueBytes(m.numValues)))
	offsetWidth := int64(4)
	if wide {
		offsetWidth = 8
	}
	offsets := memory.NewResizableBuffer(r.mem)
	defer offsets.Release()
	offsets.Resize(int((rows + 1) * offsetWidth))
	setOffset := func(row, v int64) {
		if wide {
			binary.LittleEndian.PutUint64(offsets.Bytes()[row*8:], uint64(v))
		} else {
			binary.LittleEndian.PutUint32(offsets.Bytes()[row*4:], uint32(v))
		}
	}

	// Validity bitmaps, made at the first null: every bit set, then cleared for each null.
	var rowValid, valueValid *memory.Buffer
	var nullRows, nullValues int64
	defer func() {
		for _, b := range []*memory.Buffer{rowValid, valueValid} {
			if b != nil {
				b.Release()
			}
		}
	}()
	clearBit := func(bitmap **memory.Buffer, bits, i int64) {
		if *bitmap == nil {
			*bitmap = memory.NewResizableBuffer(r.mem)
			(*bitmap).Resize(int((bits + 7) / 8))
			bitutil.SetBitsTo((*bitmap).Bytes(), 0, bits, true)
		}
		bitutil.ClearBit((*bitmap).Bytes(), int(i))
	}
	var pageSlots []slotRun
	addSlots := func(valid bool, count int64) { pageSlots = appendSlots(pageSlots, valid, count) }

	chunk := m.pages
	var scratch, split []byte
	var repRuns, defRuns []levelRun
	row, nv, seen := int64(-1), int64(0), int64(0) // the current row, values and levels so far
	defWidth := bits.Len(uint(fullDef))
	for pos := 0; seen < m.numValues; {
		h, page, next, ok := nextDirectPage(chunk, pos, m.codec, plan.bitPacked, m.numValues-seen)
		if !ok {
			return nil, errNotDirect
		}
		pos = next
		if h.typ == pageIndex {
			continue
		}
		n := int64(h.numValues)
		isSplit := h.encoding == encodingByteStreamSplit
		var reps, defs, vals []byte
		if reps, defs, vals, scratch, ok = pageSections(h, page, m.codec != 0, decode, scratch); !ok {
			return nil, errNotDirect
		}
		repRuns, defRuns = repRuns[:0], defRuns[:0]
		if !hybridRuns(reps, 1, n, func(v int, count int64) bool { repRuns = appendRun(repRuns, v, count); return true }) ||
			!hybridRuns(defs, defWidth, n, func(v int, count int64) bool { defRuns = appendRun(defRuns, v, count); return true }) {
			return nil, errNotDirect
		}
		// Walk the two together, a segment of constant repetition and definition at a time.
		first := nv
		pageSlots = pageSlots[:0]
		for i, j := 0, 0; i < len(repRuns) && j < len(defRuns); {
			rr, dr := &repRuns[i], &defRuns[j]
			count := min(rr.count, dr.count)
			switch d := dr.v; {
			case rr.v == 0 && (d == fullDef || d == nullValueDef): // count rows of one value
				if row+count >= rows {
					return nil, errNotDirect
				}
				for range count {
					row++
					setOffset(row, nv)
					if d == nullValueDef {
						clearBit(&valueValid, m.numValues, nv)
						nullValues++
					}
					nv++
				}
				addSlots(d == fullDef, count)
			case rr.v == 0 && (d == emptyDef || topOptional && d == 0): // count rows empty, or null
				if row+count >= rows {
					return nil, errNotDirect
				}
				for range count {
					row++
					setOffset(row, nv)
					if d == 0 && topOptional {
						clearBit(&rowValid, rows, row)
						nullRows++
					}
				}
			case rr.v == 1 && row >= 0 && (d == fullDef || d == nullValueDef): // more values of the row
				if d == nullValueDef {
					for k := range count {
						clearBit(&valueValid, m.numValues, nv+k)
					}
					nullValues += count
				}
				nv += count
				addSlots(d == fullDef, count)
			default:
				return nil, errNotDirect
			}
			if rr.count -= count; rr.count == 0 {
				i++
			}
			if dr.count -= count; dr.count == 0 {
				j++
			}
		}
		dense := int64(0)
		for _, sl := range pageSlots {
			if sl.valid {
				dense += sl.count
			}
		}
		if int64(len(vals)) != valueBytes(dense) {
			return nil, errNotDirect
		}
		if isSplit {
			split = grow(split, len(vals))
			unsplit(split, vals, int(plan.width))
			vals = split
		}
		placeSpaced(values.Bytes(), first, vals, pageSlots, plan.width, plan.bitPacked)
		seen += n
	}
	if row != rows-1 {
		return nil, errNotDirect
	}
	setOffset(rows, nv)
	values.Resize(int(valueBytes(nv)))
	if valueValid != nil {
		valueValid.Resize(int((nv + 7) / 8))
	}
	child := array.NewData(plan.leaf, int(nv), []*memory.Buffer{valueValid, values}, nil, int(nullValues), 0)
	defer child.Release()
	data := array.NewData(c.field.Type, int(rows), []*memory.Buffer{rowValid, offsets}, []arrow.ArrayData{child}, int(nullRows), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// pageSections returns the repetition levels, definition levels and values of a data page
// (v1: RLE levels, each prefixed by its length; v2: lengths in the header), decompressed into
// scratch (returned, grown) when compressed; ok is false for a page the direct path does not
// read.
func pageSections(h pageHeader, page []byte, compressed bool, decode func(dst, src []byte) error, scratch []byte) (reps, defs, vals, grown []byte, ok bool) {
	if h.typ == pageDataV2 {
		levels := int(h.repBytes) + int(h.defBytes)
		if h.repBytes < 0 || h.defBytes < 0 || levels > len(page) || levels > int(h.uncompressed) {
			return nil, nil, nil, scratch, false
		}
		reps, defs, vals = page[:h.repBytes], page[h.repBytes:levels], page[levels:]
		if compressed && !h.v2Uncompressed {
			scratch = grow(scratch, int(h.uncompressed)-levels)
			if decode(scratch, vals) != nil {
				return nil, nil, nil, scratch, false
			}
			vals = scratch
		}
		return reps, defs, vals, scratch, true
	}
	if h.repEncoding != 3 || h.defEncoding != 3 {
		return nil, nil, nil, scratch, false
	}
	if compressed {
		scratch = grow(scratch, int(h.uncompressed))
		if decode(scratch, page) != nil {
			return nil, nil, nil, scratch, false
		}
		page = scratch
	}
	for _, section := range []*[]byte{&reps, &defs} {
		if len(page) < 4 || uint64(binary.LittleEndian.Uint32(page)) > uint64(len(page)-4) {
			return nil, nil, nil, scratch, false
		}
		size := binary.LittleEndian.Uint32(page)
		*section, page = page[4:4+size], page[4+size:]
	}
	return reps, defs, page, scratch, true
}

// slotRun is count value slots of a page, in order, all holding a value or all null.
type slotRun struct {
	valid bool
	count int64
}

// appendSlots appends count slots to runs, merged with the last run when alike.
func appendSlots(runs []slotRun, valid bool, count int64) []slotRun {
	if k := len(runs) - 1; k >= 0 && runs[k].valid == valid {
		runs[k].count += count
		return runs
	}
	return append(runs, slotRun{valid, count})
}

// placeSpaced writes a page's values vals (of width bytes, or bits when bitPacked), which hold
// only the valid slots, into dst from slot at on, zeroing the null slots.
func placeSpaced(dst []byte, at int64, vals []byte, slots []slotRun, width int64, bitPacked bool) {
	from := int64(0) // the dense value
	for _, sl := range slots {
		switch {
		case bitPacked && sl.valid:
			bitutil.CopyBitmap(vals, int(from), int(sl.count), dst, int(at))
		case bitPacked:
			bitutil.SetBitsTo(dst, at, sl.count, false)
		case sl.valid:
			memcopy.Copy(dst[at*width:], vals[from*width:(from+sl.count)*width])
		default:
			clear(dst[at*width : (at+sl.count)*width])
		}
		if sl.valid {
			from += sl.count
		}
		at += sl.count
	}
}

// appendRun appends count levels of v to runs, merged with the last run when it is of v.
func appendRun(runs []levelRun, v int, count int64) []levelRun {
	if k := len(runs) - 1; k >= 0 && runs[k].v == v {
		runs[k].count += count
		return runs
	}
	return append(runs, levelRun{v, count})
}
