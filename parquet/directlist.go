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
// bools, no null rows, no null values — from its pages into offsets and one values buffer:
// each page's repetition and definition levels are decoded as runs (an RLE run whole) and
// walked together, a repetition level of 0 beginning a row, a definition level saying
// whether the row is empty; the PLAIN (or BYTE_STREAM_SPLIT) values of the page are copied
// after the values before them. A null row or value, or a layout other than the three-level
// LIST, gives the row group back to pqarrow.

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
	emptyDef := 0
	if group.Parent().RepetitionType() == pq.Repetitions.Optional {
		emptyDef = 1
	}
	maxDef := int(descr.MaxDefinitionLevel())
	if leaf.RepetitionType() == pq.Repetitions.Optional {
		maxDef-- // a null value would be maxDef-1: refused below
	}
	if maxDef != emptyDef+1 {
		return nil, errNotDirect
	}
	fullDef := int(descr.MaxDefinitionLevel())
	m := r.md.FileMetaData.RowGroups[rg].Columns[c.leaves[0]].MetaData
	decode := pageDecoders[int32(m.Codec)]
	if m.Codec != 0 && decode == nil || m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 ||
		m.NumValues < rows || m.NumValues > r.lim.MaxElements {
		return nil, errNotDirect
	}
	valueBytes := func(n int64) int64 {
		if plan.bitPacked {
			return (n + 7) / 8
		}
		return n * plan.width
	}
	values := memory.NewResizableBuffer(r.mem)
	defer values.Release()
	values.Resize(int(valueBytes(m.NumValues)))
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

	start, length := m.DataPageOffset, m.TotalCompressedSize // inside the file: checkColumnChunk
	chunk := r.b[start : start+length]
	var scratch, split []byte
	var repRuns, defRuns []levelRun
	row, nv, seen := int64(-1), int64(0), int64(0) // the current row, values and levels so far
	defWidth := bits.Len(uint(fullDef))
	for pos := 0; seen < m.NumValues; {
		if pos >= len(chunk) {
			return nil, errNotDirect
		}
		h, err := readPageHeader(chunk[pos:])
		if err != nil || h.compressed < 0 || int64(h.compressed) > int64(len(chunk)-pos-h.headerLen) {
			return nil, errNotDirect
		}
		page := chunk[pos+h.headerLen : pos+h.headerLen+int(h.compressed)]
		pos += h.headerLen + int(h.compressed)
		if h.typ == pageIndex {
			continue
		}
		n := int64(h.numValues)
		required := uint16(0b11110)
		if h.typ == pageDataV2 {
			required = 0b1111110
		}
		isSplit := h.encoding == encodingByteStreamSplit
		if !h.hasType || h.typ != pageData && h.typ != pageDataV2 || h.subFields&required != required ||
			h.encoding != 0 && !isSplit || isSplit && plan.bitPacked || n < 0 || n > m.NumValues-seen || h.uncompressed < 0 ||
			(m.Codec == 0 || h.typ == pageDataV2 && h.v2Uncompressed) && h.compressed != h.uncompressed {
			return nil, errNotDirect
		}
		var reps, defs, vals []byte
		if h.typ == pageDataV2 {
			levels := int(h.repBytes) + int(h.defBytes)
			if h.repBytes < 0 || h.defBytes < 0 || levels > len(page) || levels > int(h.uncompressed) {
				return nil, errNotDirect
			}
			reps, defs, vals = page[:h.repBytes], page[h.repBytes:levels], page[levels:]
			if m.Codec != 0 && !h.v2Uncompressed {
				scratch = grow(scratch, int(h.uncompressed)-levels)
				if decode(scratch, vals) != nil {
					return nil, errNotDirect
				}
				vals = scratch
			}
		} else {
			if h.repEncoding != 3 || h.defEncoding != 3 {
				return nil, errNotDirect
			}
			if m.Codec != 0 {
				scratch = grow(scratch, int(h.uncompressed))
				if decode(scratch, page) != nil {
					return nil, errNotDirect
				}
				page = scratch
			}
			for _, section := range []*[]byte{&reps, &defs} {
				if len(page) < 4 || uint64(binary.LittleEndian.Uint32(page)) > uint64(len(page)-4) {
					return nil, errNotDirect
				}
				size := binary.LittleEndian.Uint32(page)
				*section, page = page[4:4+size], page[4+size:]
			}
			vals = page
		}
		repRuns, defRuns = repRuns[:0], defRuns[:0]
		if !hybridRuns(reps, 1, n, func(v int, count int64) bool { repRuns = appendRun(repRuns, v, count); return true }) ||
			!hybridRuns(defs, defWidth, n, func(v int, count int64) bool { defRuns = appendRun(defRuns, v, count); return true }) {
			return nil, errNotDirect
		}
		// Walk the two together, a segment of constant repetition and definition at a time.
		first := nv
		for i, j := 0, 0; i < len(repRuns) && j < len(defRuns); {
			rr, dr := &repRuns[i], &defRuns[j]
			count := min(rr.count, dr.count)
			switch {
			case rr.v == 0 && (dr.v == fullDef || dr.v == emptyDef): // count rows of one value, or empty
				if row+count >= rows {
					return nil, errNotDirect
				}
				for range count {
					row++
					setOffset(row, nv)
					if dr.v == fullDef {
						nv++
					}
				}
			case rr.v == 1 && dr.v == fullDef && row >= 0: // more values of the row
				nv += count
			default: // a null row or value
				return nil, errNotDirect
			}
			if rr.count -= count; rr.count == 0 {
				i++
			}
			if dr.count -= count; dr.count == 0 {
				j++
			}
		}
		got := nv - first
		if int64(len(vals)) != valueBytes(got) {
			return nil, errNotDirect
		}
		switch {
		case plan.bitPacked:
			bitutil.CopyBitmap(vals, 0, int(got), values.Bytes(), int(first))
		case isSplit:
			split = grow(split, len(vals))
			unsplit(split, vals, int(plan.width))
			memcopy.Copy(values.Bytes()[first*plan.width:], split)
		default:
			memcopy.Copy(values.Bytes()[first*plan.width:], vals)
		}
		seen += n
	}
	if row != rows-1 {
		return nil, errNotDirect
	}
	setOffset(rows, nv)
	values.Resize(int(valueBytes(nv)))
	child := array.NewData(plan.leaf, int(nv), []*memory.Buffer{nil, values}, nil, 0, 0)
	defer child.Release()
	data := array.NewData(c.field.Type, int(rows), []*memory.Buffer{nil, offsets}, []arrow.ArrayData{child}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// appendRun appends count levels of v to runs, merged with the last run when it is of v.
func appendRun(runs []levelRun, v int, count int64) []levelRun {
	if k := len(runs) - 1; k >= 0 && runs[k].v == v {
		runs[k].count += count
		return runs
	}
	return append(runs, levelRun{v, count})
}
