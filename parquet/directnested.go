package parquet

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
)

// The direct path reads nested ragged columns too — lists, large_lists and fixed-size lists,
// nested in any order, at least one of them variable and two levels deep or more, of numbers or
// bools: what ndarrow writes for a ragged array of ragged rank above one, or one whose
// variable rows hold fixed-size cells (list<fixed_size_list<float>>, [rows, None, 3]). Each
// page's repetition and definition levels are decoded as runs and walked together, Dremel's
// record assembly: a repetition level r continues the lists above level r and adds an element
// to the list at level r; the definition level says how deep what begins there is defined (a
// null list, an empty one, an element, a null value or a value). Runs of values that only
// continue the innermost list — most of a ragged column — are taken whole. The values are
// copied after those before them, spaced out where null, as for one level (readDirectList).

// nestedLevel is one list level of a nested column, outermost first.
type nestedLevel struct {
	typ   arrow.DataType // *arrow.ListType, *arrow.LargeListType or *arrow.FixedSizeListType
	fixed int64          // the size of a fixed-size list, 0 for a variable one
	wide  bool           // 64-bit offsets (large_list)

	// Parquet: whether the list's group is optional, and the definition level of a list of
	// this level that is present (null below it when optional).
	optional bool
	base     int

	starts []int64 // where each list of a variable level begins among the level's elements
	nulls  []int64 // the lists of the level that are null
	count  int64   // the level's lists so far
	n      int64   // the level's elements so far
}

// nestedPlanOf returns the levels and the leaf of t when it is lists nested at least two deep
// with at least one variable level, over a leaf directPlanOf takes; false otherwise.
func nestedPlanOf(t arrow.DataType) ([]nestedLevel, directPlan, bool) {
	var levels []nestedLevel
	variable := false
	for len(levels) <= 8 {
		switch l := t.(type) {
		case *arrow.ListType:
			levels, t, variable = append(levels, nestedLevel{typ: l}), l.Elem(), true
			continue
		case *arrow.LargeListType:
			levels, t, variable = append(levels, nestedLevel{typ: l, wide: true}), l.Elem(), true
			continue
		case *arrow.FixedSizeListType:
			if l.Len() <= 0 {
				return nil, directPlan{}, false
			}
			levels, t = append(levels, nestedLevel{typ: l, fixed: int64(l.Len())}), l.Elem()
			continue
		}
		break
	}
	leaf, ok := directPlanOf(t)
	if !ok || len(leaf.lists) != 0 || !variable || len(levels) < 2 || len(levels) > 8 {
		return nil, directPlan{}, false
	}
	return levels, leaf, true
}

// readDirectNested reads the nested list column c of row group rg, of rows rows (see above).
func (r *Reader) readDirectNested(c column, rg int, rows int64) (arrow.Array, error) {
	levels, plan, ok := nestedPlanOf(c.field.Type)
	if !ok || c.parts != nil || len(c.leaves) != 1 || rows <= 0 {
		return nil, errNotDirect
	}
	if !listsOf(c.pqType, len(levels), plan.leaf) { // pqarrow reads it as lists as deep
		return nil, errNotDirect
	}
	descr := r.md.Schema.Column(c.leaves[0])
	if descr.PhysicalType() != plan.phys || int(descr.MaxRepetitionLevel()) != len(levels) ||
		plan.phys == pq.Types.FixedLenByteArray && int64(descr.TypeLength()) != plan.width {
		return nil, errNotDirect
	}
	// The schema from the leaf up: the leaf, then per level a repeated group inside the list's
	// group (three-level LISTs, as pqarrow writes every list), the top one under the root.
	leafNode := descr.SchemaNode()
	leafOptional := leafNode.RepetitionType() == pq.Repetitions.Optional
	node := leafNode.Parent()
	for k := len(levels) - 1; k >= 0; k-- {
		if node == nil || node.RepetitionType() != pq.Repetitions.Repeated || node.Parent() == nil {
			return nil, errNotDirect
		}
		node = node.Parent()
		levels[k].optional = node.RepetitionType() == pq.Repetitions.Optional
		if node.RepetitionType() == pq.Repetitions.Repeated {
			return nil, errNotDirect
		}
		node = node.Parent()
	}
	if node == nil || node.Parent() != nil {
		return nil, errNotDirect // not a top-level column
	}
	def := 0
	for k := range levels {
		if levels[k].optional {
			def++
		}
		levels[k].base = def // present at def; empty there, an element past it
		def++
	}
	valueDef := def // a value; a null one at def-1 when the leaf is optional
	if leafOptional {
		valueDef++
	}
	if int(descr.MaxDefinitionLevel()) != valueDef {
		return nil, errNotDirect
	}
	m, ok := r.listChunkOf(c.leaves[0], rg, rows)
	if !ok {
		return nil, errNotDirect
	}
	decode := m.decode
	valueBytes := plan.valueBytes
	values := memory.NewResizableBuffer(r.mem)
	defer values.Release()
	values.Resize(int(valueBytes(m.numValues)))
	nullValues := &nullBits{mem: r.mem, bits: m.numValues}
	defer func() {
		if nullValues.valid != nil {
			nullValues.valid.Release()
		}
	}()
	// What the lists' offsets and nulls may take, doubling included: at most 16 bytes a level
	// entry (and a MiB), whatever a hostile file's level runs describe — the entries are
	// bounded by the row group's budget (checkColumnChunk counts each); past it, pqarrow's.
	room := 16*m.numValues + 1<<20
	D := len(levels)
	inner := &levels[D-1]
	var pageSlots []slotRun

	// begin starts a list at level k whose definition level is d, and what it holds. A
	// fixed-size level keeps no offsets: each of its lists must be full before the next
	// begins, and is never null or empty here.
	var begin func(k, d int) bool
	begin = func(k, d int) bool {
		lv := &levels[k]
		if lv.fixed > 0 {
			if d <= lv.base || lv.n != lv.count*lv.fixed {
				return false
			}
		} else {
			var ok bool
			if lv.starts, ok = appendIndex(lv.starts, lv.n, &room); !ok {
				return false
			}
		}
		lv.count++
		switch {
		case d < lv.base:
			if !lv.optional || d != lv.base-1 {
				return false
			}
			var ok bool
			if lv.nulls, ok = appendIndex(lv.nulls, lv.count-1, &room); !ok {
				return false
			}
			return true
		case d == lv.base:
			return true // empty
		}
		lv.n++
		if k == D-1 {
			return value(d, 1, &pageSlots, nullValues, inner.n-1, leafOptional, valueDef)
		}
		return begin(k+1, d)
	}

	chunk := m.pages
	var scratch, split []byte
	var repRuns, defRuns []levelRun
	row, seen := int64(-1), int64(0)
	repWidth, defWidth := bits.Len(uint(D)), bits.Len(uint(valueDef))
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
		var reps, defs, vals []byte
		if reps, defs, vals, scratch, ok = pageSections(h, page, m.codec != 0, decode, scratch); !ok {
			return nil, errNotDirect
		}
		repRuns, defRuns = repRuns[:0], defRuns[:0]
		if !hybridRuns(reps, repWidth, n, func(v int, count int64) bool { repRuns = appendRun(repRuns, v, count); return true }) ||
			!hybridRuns(defs, defWidth, n, func(v int, count int64) bool { defRuns = appendRun(defRuns, v, count); return true }) {
			return nil, errNotDirect
		}
		first := inner.n
		pageSlots = pageSlots[:0]
		for i, j := 0, 0; i < len(repRuns) && j < len(defRuns); {
			rr, dr := &repRuns[i], &defRuns[j]
			count := min(rr.count, dr.count)
			switch rep, d := rr.v, dr.v; {
			case rep == D && row >= 0 && holds(inner, count): // values continuing the innermost list
				inner.n += count
				if !value(d, count, &pageSlots, nullValues, inner.n-count, leafOptional, valueDef) {
					return nil, errNotDirect
				}
			case rep == 0:
				if row+count >= rows {
					return nil, errNotDirect
				}
				row += count
				for range count {
					if !begin(0, d) {
						return nil, errNotDirect
					}
				}
			case rep < D && row >= 0 && holds(&levels[rep-1], count) && d > levels[rep-1].base:
				for range count { // an element of the list at level rep: a list at level rep+1
					levels[rep-1].n++
					if !begin(rep, d) {
						return nil, errNotDirect
					}
				}
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
		if int64(len(vals)) != valueBytes(dense) || inner.n > m.numValues {
			return nil, errNotDirect
		}
		if h.encoding == encodingByteStreamSplit {
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
	return buildNested(r.mem, c.field.Type, levels, plan, values, inner.n, nullValues, rows)
}

// holds reports whether the level's last list began, holds an element (a list that is null or
// empty takes no more) and, of a fixed size, has room for more more.
func holds(lv *nestedLevel, more int64) bool {
	if lv.fixed > 0 {
		return lv.count > 0 && lv.n > (lv.count-1)*lv.fixed && lv.n+more <= lv.count*lv.fixed
	}
	return lv.count > 0 && lv.n > lv.starts[len(lv.starts)-1]
}

// nullBits is the validity bitmap of a nested column's values, made at the first null.
type nullBits struct {
	mem   memory.Allocator
	bits  int64 // the values there may be
	valid *memory.Buffer
	nulls int64
}

// clear marks count values from at null.
func (b *nullBits) clear(at, count int64) {
	if b.valid == nil {
		b.valid = memory.NewResizableBuffer(b.mem)
		b.valid.Resize(int((b.bits + 7) / 8))
		bitutil.SetBitsTo(b.valid.Bytes(), 0, b.bits, true)
	}
	bitutil.SetBitsTo(b.valid.Bytes(), at, count, false)
	b.nulls += count
}

// value adds count values (or nulls) defined at level d to a page's slots; at is the first's
// place among the values.
func value(d int, count int64, slots *[]slotRun, nulls *nullBits, at int64, leafOptional bool, valueDef int) bool {
	switch {
	case d == valueDef:
		*slots = appendSlots(*slots, true, count)
	case leafOptional && d == valueDef-1:
		*slots = appendSlots(*slots, false, count)
		nulls.clear(at, count)
	default:
		return false
	}
	return true
}

// appendIndex appends v to s, growing it within what *room allows (bytes, taken from it);
// false when it would need more: the lists a hostile file's level runs can make cost no more
// memory than the row group's budget counted for its levels.
func appendIndex(s []int64, v int64, room *int64) ([]int64, bool) {
	if len(s) == cap(s) {
		grown := max(2*int64(cap(s)), 1024)
		need := (grown - int64(cap(s))) * 8
		if need > *room {
			return s, false
		}
		*room -= need
		s = append(make([]int64, 0, grown), s...)
	}
	return append(s, v), true
}

// buildNested makes the column of type typ from its levels' lists and the values, nv of them
// (nulls among them), for rows rows: a fixed-size level must hold lists of its size, none null
// (else errNotDirect: pqarrow says what is wrong).
func buildNested(mem memory.Allocator, typ arrow.DataType, levels []nestedLevel, plan directPlan, values *memory.Buffer, nv int64, nullValues *nullBits, rows int64) (arrow.Array, error) {
	bitmap := func(n int64, nulls []int64) *memory.Buffer {
		if len(nulls) == 0 {
			return nil
		}
		b := memory.NewResizableBuffer(mem)
		b.Resize(int((n + 7) / 8))
		bitutil.SetBitsTo(b.Bytes(), 0, n, true)
		for _, i := range nulls {
			bitutil.ClearBit(b.Bytes(), int(i))
		}
		return b
	}
	if plan.bitPacked {
		values.Resize(int((nv + 7) / 8))
	} else {
		values.Resize(int(nv * plan.width))
	}
	valid := nullValues.valid
	if valid != nil {
		valid.Resize(int((nv + 7) / 8))
	}
	data := array.NewData(plan.leaf, int(nv), []*memory.Buffer{valid, values}, nil, int(nullValues.nulls), 0)
	for k := len(levels) - 1; k >= 0; k-- {
		lv := &levels[k]
		count := lv.count
		if k == 0 && count != rows {
			data.Release()
			return nil, errNotDirect
		}
		var buffers []*memory.Buffer
		if lv.fixed > 0 {
			if len(lv.nulls) > 0 || lv.n != count*lv.fixed {
				data.Release()
				return nil, errNotDirect
			}
			buffers = []*memory.Buffer{nil}
		} else {
			if !lv.wide && lv.n > math.MaxInt32 {
				data.Release()
				return nil, errNotDirect
			}
			width := 4
			if lv.wide {
				width = 8
			}
			offsets := memory.NewResizableBuffer(mem)
			offsets.Resize(int(count+1) * width)
			b := offsets.Bytes()
			for i, s := range append(lv.starts, lv.n) {
				if lv.wide {
					binary.LittleEndian.PutUint64(b[i*8:], uint64(s))
				} else {
					binary.LittleEndian.PutUint32(b[i*4:], uint32(s))
				}
			}
			buffers = []*memory.Buffer{bitmap(count, lv.nulls), offsets}
			defer offsets.Release()
			if buffers[0] != nil {
				defer buffers[0].Release()
			}
		}
		outer := array.NewData(lv.typ, int(count), buffers, []arrow.ArrayData{data}, len(lv.nulls), 0)
		data.Release()
		data = outer
	}
	defer data.Release()
	arr := array.MakeFromData(data)
	if !arrow.TypeEqual(arr.DataType(), typ) {
		arr.Release()
		return nil, errNotDirect
	}
	return arr, nil
}
