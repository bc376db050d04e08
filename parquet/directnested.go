package parquet

import (
	"bytes"
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
//
// Trailing fixed-size levels (list<fixed_size_list<float32, 3>>: points; [rows, None, 2, 3])
// make the repetition levels alternate every value or few, so runs are no help there: a page
// of such a column has its levels decoded into a byte each (levelBytes) and is walked a cell
// at a time — a cell being one element of the last variable level, the product of the fixed
// sizes below it in values. A cell whose levels are the pattern the shape implies (its first a
// new element of the variable list, the others what the fixed levels imply, every value
// present) is counted with the cells like it that follow, in one step; any other entry (a
// row's first cell, an empty or null list, a null value) goes through Dremel's assembly
// alone, as above.

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
	cells := trailingCells(levels)
	var repBytes, defBytes []uint8
	defBlock := bytes.Repeat([]byte{uint8(valueDef)}, len(cells.block)) // a present value's levels

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
		first := inner.n
		pageSlots = pageSlots[:0]
		if cells.size > 0 { // a cell at a time
			if repBytes, ok = levelBytes(repBytes, reps, repWidth, n); !ok {
				return nil, errNotDirect
			}
			// Definition levels that are one run at valueDef, as a page without nulls or
			// empty lists has them, need no byte each.
			var defRun []levelRun
			if !hybridRuns(defs, defWidth, n, func(v int, count int64) bool {
				defRun = appendRun(defRun, v, count)
				return len(defRun) == 1 && v == valueDef
			}) {
				if defBytes, ok = levelBytes(defBytes, defs, defWidth, n); !ok {
					return nil, errNotDirect
				}
			} else {
				defBytes = nil
			}
			entry := func(rep, d int) bool { // one entry, as the runs below take it
				switch {
				case rep == D && row >= 0 && holds(inner, 1):
					inner.n++
					return value(d, 1, &pageSlots, nullValues, inner.n-1, leafOptional, valueDef)
				case rep == 0:
					if row+1 >= rows {
						return false
					}
					row++
					return begin(0, d)
				case rep < D && row >= 0 && holds(&levels[rep-1], 1) && d > levels[rep-1].base:
					levels[rep-1].n++
					return begin(rep, d)
				}
				return false
			}
			for i := int64(0); i < n; {
				var d []uint8
				if defBytes != nil {
					d = defBytes[i:]
				}
				if k := cells.run(repBytes[i:], d, defBlock); k > 0 && row >= 0 && cells.extend(levels, k) {
					pageSlots = appendSlots(pageSlots, true, k*cells.size)
					i += k * cells.size
					continue
				}
				def := valueDef
				if defBytes != nil {
					def = int(defBytes[i])
				}
				if !entry(int(repBytes[i]), def) {
					return nil, errNotDirect
				}
				i++
			}
		} else {
			repRuns, defRuns = repRuns[:0], defRuns[:0]
			if !hybridRuns(reps, repWidth, n, func(v int, count int64) bool { repRuns = appendRun(repRuns, v, count); return true }) ||
				!hybridRuns(defs, defWidth, n, func(v int, count int64) bool { defRuns = appendRun(defRuns, v, count); return true }) {
				return nil, errNotDirect
			}
		}
		for i, j := 0, 0; cells.size == 0 && i < len(repRuns) && j < len(defRuns); {
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

// cellShape is the trailing fixed-size levels of a nested column, from level first (the one
// below the last variable level) to the innermost: a cell is an element of level first-1,
// size values; pattern[j] is the repetition level of a cell's value j, when the cell is a new
// element of the list being filled (pattern[0] is then first).
type cellShape struct {
	first   int
	size    int64
	pattern []uint8
	// block is the levels of cellsInBlock such cells one after another, which run compares
	// with a page's levels in one go.
	block []uint8
}

// cellsInBlock is how many cells cellShape.block holds.
const cellsInBlock = 64

// trailingCells returns the cell shape of levels, size 0 when the innermost level is not of
// a fixed size or a cell would be large (a walk entry by entry costs nothing more then).
func trailingCells(levels []nestedLevel) cellShape {
	first := len(levels)
	size := int64(1)
	for first > 0 && levels[first-1].fixed > 0 {
		first--
		size *= levels[first].fixed
		if size > 1<<12 {
			return cellShape{}
		}
	}
	if first == len(levels) || first == 0 {
		return cellShape{}
	}
	// Value j of a cell begins an element of the shallowest fixed level whose elements it
	// starts: its repetition level is that level's, plus one.
	pattern := make([]uint8, size)
	for j := int64(1); j < size; j++ {
		stride := size
		for k := first; k < len(levels); k++ {
			stride /= levels[k].fixed
			if j%stride == 0 {
				pattern[j] = uint8(k + 1)
				break
			}
		}
	}
	pattern[0] = uint8(first)
	block := make([]uint8, 0, cellsInBlock*size)
	for range cellsInBlock {
		block = append(block, pattern...)
	}
	return cellShape{first: first, size: size, pattern: pattern, block: block}
}

// run returns how many whole cells reps and defs begin with that are new elements of the last
// variable level (their first repetition level is c.first), every value present (defs nil:
// every value of the page is; else each cell's definition levels those of defBlock, all at
// the level of a present value) and their levels the pattern's. The run can only end where
// a list above the cells' level begins (a row, mostly), so that is found first, and what
// comes before it compared a block of cells at a time.
func (c cellShape) run(reps, defs, defBlock []uint8) int64 {
	if len(reps) == 0 || int(reps[0]) != c.first {
		return 0
	}
	end := int64(len(reps))
	for level := 0; level < c.first; level++ {
		if j := bytes.IndexByte(reps[1:end], uint8(level)); j >= 0 {
			end = int64(j) + 1
		}
	}
	limit := end / c.size * c.size
	block := int64(len(c.block))
	for at := int64(0); at < limit; {
		m := min(block, limit-at)
		if string(reps[at:at+m]) == string(c.block[:m]) && (defs == nil || string(defs[at:at+m]) == string(defBlock[:m])) {
			at += m
			continue
		}
		for at+c.size <= limit && string(reps[at:at+c.size]) == string(c.pattern) &&
			(defs == nil || string(defs[at:at+c.size]) == string(defBlock[:c.size])) {
			at += c.size
		}
		return at / c.size
	}
	return limit / c.size
}

// extend adds k cells, each a new element of the list of level c.first-1 that is being
// filled, to levels, as Dremel's assembly would add their values one by one: false, and
// nothing added, unless that list holds an element already and every fixed level below is
// whole.
func (c cellShape) extend(levels []nestedLevel, k int64) bool {
	if !holds(&levels[c.first-1], 1) {
		return false
	}
	for i := c.first; i < len(levels); i++ {
		if lv := &levels[i]; lv.n != lv.count*lv.fixed {
			return false
		}
	}
	levels[c.first-1].n += k
	lists := k
	for i := c.first; i < len(levels); i++ {
		levels[i].count += lists
		lists *= levels[i].fixed
		levels[i].n += lists
	}
	return true
}

// levelBytes decodes n levels of width bits (at most 8) in the RLE/bit-packed hybrid from b
// into dst (grown as needed), a byte each; false when b does not hold n of them.
func levelBytes(dst []uint8, b []byte, width int, n int64) ([]uint8, bool) {
	if width < 1 || width > 8 || n < 0 {
		return dst, false
	}
	if int64(cap(dst)) < n {
		dst = make([]uint8, 0, n)
	}
	dst = dst[:0]
	mask := uint64(1)<<width - 1
	for int64(len(dst)) < n && len(b) > 0 {
		header, k := binary.Uvarint(b)
		if k <= 0 || header>>1 == 0 || header>>1 > 1<<40 {
			return dst, false
		}
		b = b[k:]
		count := int64(header >> 1)
		if header&1 == 0 { // a run of one value: a byte, as width <= 8
			if len(b) < 1 {
				return dst, false
			}
			v := b[0]
			b = b[1:]
			c := min(count, n-int64(len(dst)))
			for range c {
				dst = append(dst, v)
			}
			continue
		}
		packed := count * int64(width) // count groups of 8 values, width bytes each
		if packed > int64(len(b)) {
			return dst, false
		}
		for g := int64(0); g < count && int64(len(dst)) < n; g++ {
			var word uint64
			group := b[g*int64(width) : (g+1)*int64(width)]
			for i, x := range group {
				word |= uint64(x) << (8 * i)
			}
			for i := 0; i < 8 && int64(len(dst)) < n; i++ {
				dst = append(dst, uint8(word>>(i*width)&mask))
			}
		}
		b = b[packed:]
	}
	return dst, int64(len(dst)) == n
}
