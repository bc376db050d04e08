package parquet

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"

	"github.com/ndarrow/ndarrow/internal/memcopy"
)

// The direct path reads a tensor column — fixed-size lists, at any depth, of a fixed-width
// number or a bool — straight from its pages into one buffer: each data page's levels are
// checked to describe exactly that layout (walking their runs, not materialising them), and
// its PLAIN values are copied (or decompressed) into place; a page with null values has its
// definition levels decoded as runs and its values spaced out. pqarrow's general decoding,
// which the direct path stands in for, materialises two levels per value, the values, and the
// lists' offsets. Any page the direct path does not expect — a dictionary, another encoding, a
// null list, levels of another shape, a codec it does not decode — makes it give the row
// group back to pqarrow (errNotDirect), which reads, or refuses, everything.

// errNotDirect reports a column or page the direct path leaves to pqarrow.
var errNotDirect = errors.New("parquet: not a page the direct path reads")

// directPlan is a column the direct path reads: Arrow type typ (an extension over fixed-size
// lists, or the lists themselves) of lists of sizes (outer to inner) of values of leaf.
type directPlan struct {
	typ   arrow.DataType
	lists []*arrow.FixedSizeListType // outer to inner
	leaf  arrow.DataType
	sizes []int64
	cell  int64 // values per row
	width int64 // bytes per value (1 for bools, which are bit-packed: see bitPacked)
	phys  pq.Type

	bitPacked bool // bools: a bit per value, in Arrow as in Parquet's PLAIN
	decimal   bool // decimal128 stored as FIXED_LEN_BYTE_ARRAY(width): big-endian, widened
}

// directPlanOf returns the plan of a column of Arrow type t, false for any other column.
func directPlanOf(t arrow.DataType) (directPlan, bool) {
	p := directPlan{typ: t, cell: 1}
	storage := t
	if ext, ok := t.(arrow.ExtensionType); ok {
		storage = ext.StorageType()
	}
	for {
		fsl, ok := storage.(*arrow.FixedSizeListType)
		if !ok {
			break
		}
		if fsl.Len() <= 0 || len(p.lists) >= 8 {
			return p, false
		}
		p.lists = append(p.lists, fsl)
		p.sizes = append(p.sizes, int64(fsl.Len()))
		if hi, lo := bits.Mul64(uint64(p.cell), uint64(fsl.Len())); hi != 0 || lo > 1<<40 {
			return p, false
		}
		p.cell *= int64(fsl.Len())
		storage = fsl.Elem()
	}
	p.leaf = storage
	switch storage.ID() {
	case arrow.BOOL:
		p.width, p.phys, p.bitPacked = 1, pq.Types.Boolean, true
	case arrow.FLOAT16:
		p.width, p.phys = 2, pq.Types.FixedLenByteArray
	case arrow.FIXED_SIZE_BINARY:
		p.width, p.phys = int64(storage.(*arrow.FixedSizeBinaryType).ByteWidth), pq.Types.FixedLenByteArray
	case arrow.DECIMAL128: // its width is the column's (readDirect)
		p.phys, p.decimal = pq.Types.FixedLenByteArray, true
	case arrow.FLOAT32:
		p.width, p.phys = 4, pq.Types.Float
	case arrow.FLOAT64:
		p.width, p.phys = 8, pq.Types.Double
	case arrow.INT32, arrow.UINT32:
		p.width, p.phys = 4, pq.Types.Int32
	case arrow.INT64, arrow.UINT64:
		p.width, p.phys = 8, pq.Types.Int64
	default:
		return p, false
	}
	return p, true
}

// sameNesting reports whether pqarrow reads the column as t — lists, as deep as the plan's,
// of its leaf type — and so agrees with the plan on what the Parquet schema holds.
func (p directPlan) sameNesting(t arrow.DataType) bool {
	return listsOf(t, len(p.lists), p.leaf)
}

// listsOf reports whether t is lists (list, large_list or fixed-size) depth deep of leaf's
// type.
func listsOf(t arrow.DataType, depth int, leaf arrow.DataType) bool {
	for range depth {
		switch l := t.(type) {
		case *arrow.ListType:
			t = l.Elem()
		case *arrow.LargeListType:
			t = l.Elem()
		case *arrow.FixedSizeListType:
			t = l.Elem()
		default:
			return false
		}
	}
	return t != nil && t.ID() == leaf.ID()
}

// valueBytes is the size of n of the plan's values: bytes, or bits of bools.
func (p directPlan) valueBytes(n int64) int64 {
	if p.bitPacked {
		return (n + 7) / 8
	}
	return n * p.width
}

// listChunk is a column chunk as the list readers read it.
type listChunk struct {
	numValues int64 // level entries
	codec     int32
	pages     []byte // inside the file: checkColumnChunk
	decode    func(dst, src []byte) error
}

// listChunkOf returns the column chunk of leaf column leaf in row group rg, of rows rows, for
// the list readers; ok is false for a chunk they leave to pqarrow (a codec they do not
// decode, a dictionary, fewer level entries than rows, more than MaxElements).
func (r *Reader) listChunkOf(leaf, rg int, rows int64) (listChunk, bool) {
	m := r.md.FileMetaData.RowGroups[rg].Columns[leaf].MetaData
	decode := pageDecoders[int32(m.Codec)]
	if m.Codec != 0 && decode == nil || m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 ||
		m.NumValues < rows || m.NumValues > r.lim.MaxElements {
		return listChunk{}, false
	}
	start, length := m.DataPageOffset, m.TotalCompressedSize
	return listChunk{numValues: m.NumValues, codec: int32(m.Codec), pages: r.b[start : start+length], decode: decode}, true
}

// pageDecoders decompress a page's bytes into exactly len(dst) bytes, by codec; the direct
// path leaves pages of other codecs to pqarrow.
var pageDecoders = map[int32]func(dst, src []byte) error{1: decodeSnappy, 2: decodeGzip, 4: decodeBrotli, codecLz4: decodeLz4Hadoop, 6: decodeZstd, codecLz4Raw: decodeLz4Raw}

// readDirect reads column c of row group rg, of rows rows, through the direct path; its pages
// were checked by checkColumnChunk. errNotDirect gives the row group back to pqarrow.
func (r *Reader) readDirect(c column, rg int, rows int64) (arrow.Array, error) {
	if _, _, ok := listPlanOf(c.field.Type); ok {
		return r.readDirectList(c, rg, rows)
	}
	if _, _, ok := nestedPlanOf(c.field.Type); ok {
		return r.readDirectNested(c, rg, rows)
	}
	if _, _, ok := bytesTypeOf(c.field.Type); ok {
		return r.readDirectBytes(c, rg, rows)
	}
	plan, ok := directPlanOf(c.field.Type)
	if !ok || c.parts != nil || len(c.leaves) != 1 {
		return nil, errNotDirect
	}
	descr := r.md.Schema.Column(c.leaves[0])
	if plan.decimal {
		plan.width = int64(descr.TypeLength())
		if plan.width <= 0 || plan.width > decimalBytes {
			return nil, errNotDirect
		}
	}
	if plan.width <= 0 || descr.PhysicalType() != plan.phys || int(descr.MaxRepetitionLevel()) != len(plan.sizes) || !plan.sameNesting(c.pqType) ||
		plan.phys == pq.Types.FixedLenByteArray && int64(descr.TypeLength()) != plan.width {
		return nil, errNotDirect
	}
	m := r.md.FileMetaData.RowGroups[rg].Columns[c.leaves[0]].MetaData
	decode := pageDecoders[int32(m.Codec)]
	hasDict := m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0
	if m.Codec != 0 && decode == nil || hasDict && plan.bitPacked {
		return nil, errNotDirect
	}
	hi, want := bits.Mul64(uint64(rows), uint64(plan.cell))
	if rows < 0 || hi != 0 || want > uint64(r.lim.MaxElements) || int64(want) != m.NumValues {
		return nil, errNotDirect
	}
	var out *memory.Buffer
	if region := r.arenas[c.leaves[0]].region(rg, int64(want)*plan.width); region != nil && !plan.bitPacked && !plan.decimal {
		out = memory.NewBufferBytes(region) // ReadAll's buffer of the whole column: it keeps it
	} else {
		out = memory.NewResizableBuffer(r.mem)
		defer out.Release()
		if plan.bitPacked {
			out.Resize(int((want + 7) / 8))
		} else {
			out.Resize(int(int64(want) * plan.width))
		}
	}
	dst := out.Bytes()
	var bitSlot []byte // bools: a page's values, before they join dst at bit at

	start, end := m.DataPageOffset, m.DataPageOffset+m.TotalCompressedSize // inside the file: checkColumnChunk
	if hasDict {                                                           // from the dictionary page on
		var err error
		if start, end, err = r.chunkBounds(rg, c.leaves[0]); err != nil {
			return nil, err
		}
	}
	chunk := r.b[start:end]
	reps := levelCheck{max: len(plan.sizes), periods: periodsOf(plan.sizes), rep: true}
	defs := levelCheck{max: int(descr.MaxDefinitionLevel())}
	leafOptional := descr.SchemaNode().RepetitionType() == pq.Repetitions.Optional
	// A page with null values (leaf nulls: a fixed-size list itself is never null here) is
	// read value slot by value slot: its definition levels decoded as runs, its values spaced
	// out, a validity bitmap made at the first null.
	var valid *memory.Buffer
	var nulls int64
	defer func() {
		if valid != nil {
			valid.Release()
		}
	}()
	var pageSlots []slotRun
	spaced := func(defLevels, values []byte, n, at int64, split bool) bool {
		pageSlots = pageSlots[:0]
		ok := leafOptional && defs.max > 0 && hybridRuns(defLevels, bits.Len(uint(defs.max)), n, func(v int, count int64) bool {
			switch v {
			case defs.max:
				pageSlots = appendSlots(pageSlots, true, count)
			case defs.max - 1:
				pageSlots = appendSlots(pageSlots, false, count)
			default:
				return false // a null list: not a tensor's
			}
			return true
		})
		if !ok {
			return false
		}
		dense := int64(0)
		for _, sl := range pageSlots {
			if sl.valid {
				dense += sl.count
			}
		}
		size := dense * plan.width
		if plan.bitPacked {
			size = (dense + 7) / 8
		}
		if int64(len(values)) != size {
			return false
		}
		if split {
			unsplitValues := make([]byte, len(values))
			unsplit(unsplitValues, values, int(plan.width))
			values = unsplitValues
		}
		placeSpaced(dst, at, values, pageSlots, plan.width, plan.bitPacked)
		slot := at
		for _, sl := range pageSlots {
			if !sl.valid {
				if valid == nil {
					valid = memory.NewResizableBuffer(r.mem)
					valid.Resize(int((want + 7) / 8))
					bitutil.SetBitsTo(valid.Bytes(), 0, int64(want), true)
				}
				bitutil.SetBitsTo(valid.Bytes(), slot, sl.count, false)
				nulls += sl.count
			}
			slot += sl.count
		}
		return true
	}
	var scratch []byte
	var dict []byte // the dictionary page's values, once read
	at := int64(0)  // values placed
	for pos := 0; at < int64(want); {
		h, page, next, ok := nextPage(chunk, pos, int32(m.Codec), plan.bitPacked, int64(want)-at, hasDict)
		if !ok {
			return nil, errNotDirect
		}
		pos = next
		if h.typ == pageIndex {
			continue
		}
		if h.typ == pageDictionary {
			if dict, ok = dictionaryValues(h, page, dict == nil && at == 0, int32(m.Codec), decode, plan.width); !ok {
				return nil, errNotDirect
			}
			continue
		}
		n := int64(h.numValues)
		split := h.encoding == encodingByteStreamSplit
		indices := h.encoding == encodingPlainDictionary || h.encoding == encodingRLEDictionary
		// place writes the page's values, src, to dst: PLAIN values are the values.
		place := func(dst, src []byte) bool { return len(dst) == len(src) && memcopy.Copy(dst, src) == len(dst) }
		switch {
		case split:
			place = func(dst, src []byte) bool {
				if len(dst) != len(src) {
					return false
				}
				unsplit(dst, src, int(plan.width))
				return true
			}
		case indices:
			place = func(dst, src []byte) bool { return lookUp(dst, src, dict, plan.width) }
		}
		var slot []byte
		if plan.bitPacked {
			bitSlot = grow(bitSlot, int((n+7)/8))
			slot = bitSlot
		} else {
			slot = dst[at*plan.width : (at+n)*plan.width]
		}
		advance := func() {
			if plan.bitPacked {
				bitutil.CopyBitmap(slot, 0, int(n), dst, int(at))
			}
			at += n
		}
		if h.typ == pageDataV2 {
			levels := int(h.repBytes) + int(h.defBytes)
			if levels > len(page) || levels > int(h.uncompressed) || !reps.check(page[:h.repBytes], n, at) {
				return nil, errNotDirect
			}
			if h.numNulls != 0 || !defs.check(page[h.repBytes:levels], n, at) {
				if indices { // null values of a dictionary: pqarrow's
					return nil, errNotDirect
				}
				values := page[levels:]
				if m.Codec != 0 && !h.v2Uncompressed {
					scratch = grow(scratch, int(h.uncompressed)-levels)
					if decode(scratch, values) != nil {
						return nil, errNotDirect
					}
					values = scratch
				}
				if !spaced(page[h.repBytes:levels], values, n, at, split) {
					return nil, errNotDirect
				}
				at += n
				continue
			}
			size := int(h.uncompressed) - levels // the values' bytes
			if !indices && size != len(slot) {
				return nil, errNotDirect
			}
			values := page[levels:]
			if m.Codec != 0 && !h.v2Uncompressed {
				if !split && !indices { // decompressed straight into place
					if decode(slot, values) != nil {
						return nil, errNotDirect
					}
					advance()
					continue
				}
				scratch = grow(scratch, size)
				if decode(scratch, values) != nil {
					return nil, errNotDirect
				}
				values = scratch
			}
			if !place(slot, values) {
				return nil, errNotDirect
			}
			advance()
			continue
		}
		if h.repEncoding != 3 && reps.max > 0 || h.defEncoding != 3 && defs.max > 0 {
			return nil, errNotDirect // BIT_PACKED levels, deprecated
		}
		if m.Codec != 0 {
			if cap(scratch) < int(h.uncompressed) {
				scratch = make([]byte, h.uncompressed)
			}
			if decode(scratch[:h.uncompressed], page) != nil {
				return nil, errNotDirect
			}
			page = scratch[:h.uncompressed]
		}
		rest, ok := reps.checkPrefixed(page, n, at)
		if !ok {
			return nil, errNotDirect
		}
		if afterDefs, ok := defs.checkPrefixed(rest, n, at); ok {
			if !place(slot, afterDefs) {
				return nil, errNotDirect
			}
			advance()
			continue
		}
		// Null values, or levels of another layout: spaced out, or pqarrow's.
		if indices || defs.max == 0 || len(rest) < 4 || uint64(binary.LittleEndian.Uint32(rest)) > uint64(len(rest)-4) {
			return nil, errNotDirect
		}
		size := binary.LittleEndian.Uint32(rest)
		if !spaced(rest[4:4+size], rest[4+size:], n, at, split) {
			return nil, errNotDirect
		}
		at += n
	}
	if plan.decimal {
		wide := memory.NewResizableBuffer(r.mem)
		defer wide.Release()
		wide.Resize(int(want) * decimalBytes)
		widenDecimals(wide.Bytes(), dst, int(plan.width))
		return plan.array(wide, rows, valid, nulls)
	}
	return plan.array(out, rows, valid, nulls)
}

// dictionaryValues returns the values of the dictionary page h, page its bytes (compressed
// with codec, which decode decompresses): its entries of width bytes, PLAIN. ok is false
// unless first (the chunk's first page, and its only dictionary) and the page holds exactly
// its entries.
func dictionaryValues(h pageHeader, page []byte, first bool, codec int32, decode func(dst, src []byte) error, width int64) (values []byte, ok bool) {
	if !first {
		return nil, false
	}
	values = page
	if codec != 0 {
		values = make([]byte, h.uncompressed) // checked against the budget: checkColumnChunk
		if decode(values, page) != nil {
			return nil, false
		}
	}
	hi, size := bits.Mul64(uint64(h.numValues), uint64(width))
	return values, hi == 0 && size == uint64(len(values))
}

// lookUp writes to dst the dictionary entries (of width bytes) that src's indices name: a
// bit width byte, then len(dst)/width indices in the RLE/bit-packed hybrid. It reports whether
// src holds them, each inside the dictionary.
func lookUp(dst, src, dict []byte, width int64) bool {
	if len(src) == 0 || int64(len(dst))%width != 0 || dict == nil {
		return false
	}
	entries := int64(len(dict)) / width
	at := int64(0)
	return hybridRuns(src[1:], int(src[0]), int64(len(dst))/width, func(v int, count int64) bool {
		if int64(v) >= entries {
			return false
		}
		entry := dict[int64(v)*width : int64(v+1)*width]
		for range count {
			copy(dst[at:at+width], entry)
			at += width
		}
		return true
	})
}

// decimalBytes is the size of an Arrow decimal128 value.
const decimalBytes = 16

// widenDecimals writes the values of src, big-endian two's-complement integers of width bytes
// (Parquet's FIXED_LEN_BYTE_ARRAY decimals), to dst as Arrow's decimal128: 16 bytes,
// little-endian, sign-extended.
func widenDecimals(dst, src []byte, width int) {
	for i := 0; i < len(src)/width; i++ {
		v := src[i*width : (i+1)*width]
		w := dst[i*decimalBytes : (i+1)*decimalBytes]
		fill := byte(0)
		if v[0]&0x80 != 0 {
			fill = 0xff
		}
		for k := range w {
			if k < width {
				w[k] = v[width-1-k]
			} else {
				w[k] = fill
			}
		}
	}
}

// nextDirectPage reads the page at chunk[pos:] and returns its header, its bytes and where the
// next page begins. ok is false unless it is an index page or a data page (v1 or v2) the
// direct paths read: every header field they need given, PLAIN or (not of bools)
// BYTE_STREAM_SPLIT values, at most left of them, and, stored as it is, of one size.
func nextDirectPage(chunk []byte, pos int, codec int32, bitPacked bool, left int64) (h pageHeader, page []byte, next int, ok bool) {
	return nextPage(chunk, pos, codec, bitPacked, left, false)
}

// pageAt reads the page header at chunk[pos:] and returns it, the page's bytes and where the
// next page begins; ok is false when the header does not decode or the page runs past the
// chunk.
func pageAt(chunk []byte, pos int) (h pageHeader, page []byte, next int, ok bool) {
	if pos >= len(chunk) {
		return h, nil, pos, false
	}
	h, err := readPageHeader(chunk[pos:])
	if err != nil || h.compressed < 0 || int64(h.compressed) > int64(len(chunk)-pos-h.headerLen) {
		return h, nil, pos, false
	}
	next = pos + h.headerLen + int(h.compressed)
	return h, chunk[pos+h.headerLen : next], next, true
}

// nextPage is nextDirectPage that, with dict, also takes a dictionary page (PLAIN values) and
// data pages of dictionary indices (PLAIN_DICTIONARY, RLE_DICTIONARY).
func nextPage(chunk []byte, pos int, codec int32, bitPacked bool, left int64, dict bool) (h pageHeader, page []byte, next int, ok bool) {
	if h, page, next, ok = pageAt(chunk, pos); !ok {
		return h, nil, pos, false
	}
	if h.typ == pageIndex {
		return h, page, next, true
	}
	required := uint16(0b11110) // v1: num_values, encoding and the two level encodings
	switch h.typ {
	case pageDataV2:
		required = 0b1111110 // num_values, num_nulls, num_rows, encoding, the level lengths
	case pageDictionary:
		required = 0b110 // num_values, encoding
	}
	split := h.encoding == encodingByteStreamSplit
	indices := dict && (h.encoding == encodingPlainDictionary || h.encoding == encodingRLEDictionary)
	n := int64(h.numValues)
	if h.typ == pageDictionary && dict && h.hasType && h.subFields&required == required && !bitPacked &&
		(h.encoding == 0 || h.encoding == encodingPlainDictionary) && n >= 0 && h.uncompressed >= 0 {
		left = n // a dictionary's values are no data page's
	} else if !h.hasType || h.typ != pageData && h.typ != pageDataV2 || h.subFields&required != required ||
		h.encoding != 0 && !split && !indices || (split || indices) && bitPacked || n < 0 || n > left || h.uncompressed < 0 {
		return h, nil, next, false
	}
	if (codec == 0 || h.typ == pageDataV2 && h.v2Uncompressed) && h.compressed != h.uncompressed {
		return h, nil, next, false // stored as it is, yet of two sizes: pqarrow's to refuse
	}
	return h, page, next, true
}

// array builds the column of rows rows over values, whose validity (nil: none null) is valid
// with nulls nulls.
func (p directPlan) array(values *memory.Buffer, rows int64, valid *memory.Buffer, nulls int64) (arrow.Array, error) {
	n := rows * p.cell
	data := array.NewData(p.leaf, int(n), []*memory.Buffer{valid, values}, nil, int(nulls), 0)
	for i := len(p.lists) - 1; i >= 0; i-- {
		n /= p.sizes[i]
		outer := array.NewData(p.lists[i], int(n), []*memory.Buffer{nil}, []arrow.ArrayData{data}, 0, 0)
		data.Release()
		data = outer
	}
	defer data.Release()
	storage := array.MakeFromData(data)
	ext, ok := p.typ.(arrow.ExtensionType)
	if !ok {
		return storage, nil
	}
	defer storage.Release()
	return array.NewExtensionArrayWithStorage(ext, storage), nil
}

// unsplit decodes BYTE_STREAM_SPLIT values of width bytes: src holds byte k of every value,
// then byte k+1 of every value, and so on; dst gets the values, each little-endian.
func unsplit(dst, src []byte, width int) {
	n := len(dst) / width
	for k := range width {
		stream := src[k*n : (k+1)*n]
		for i, b := range stream {
			dst[i*width+k] = b
		}
	}
}

// periodsOf returns, for list sizes (outer to inner), the number of values each level's list
// spans: periods[j] = sizes[j] × … × sizes[last].
func periodsOf(sizes []int64) []int64 {
	out := make([]int64, len(sizes))
	p := int64(1)
	for j := len(sizes) - 1; j >= 0; j-- {
		p *= sizes[j]
		out[j] = p
	}
	return out
}

// levelCheck checks a page's repetition or definition levels against the layout of a
// tensor column without nulls: every definition level is max; the repetition level of value
// v (counted from the row group's first) is the outermost list level at which v starts a new
// list (0: a new row), or max when it starts none.
type levelCheck struct {
	max     int
	rep     bool
	periods []int64
}

// expected returns the level value v must have.
func (lc levelCheck) expected(v int64) int {
	if !lc.rep {
		return lc.max
	}
	for j, p := range lc.periods {
		if v%p == 0 {
			return j
		}
	}
	return lc.max
}

// checkPrefixed checks the levels of a v1 data page, a 4-byte length and the runs, and returns
// the bytes after them; a column whose levels are all 0 has none.
func (lc levelCheck) checkPrefixed(page []byte, n, first int64) ([]byte, bool) {
	if lc.max == 0 {
		return page, true
	}
	if len(page) < 4 {
		return nil, false
	}
	size := binary.LittleEndian.Uint32(page)
	if uint64(size) > uint64(len(page)-4) {
		return nil, false
	}
	return page[4+size:], lc.check(page[4:4+size], n, first)
}

// check reports whether b, the RLE/bit-packed hybrid runs of n levels of values first on,
// holds the levels expected of them.
func (lc levelCheck) check(b []byte, n, first int64) bool {
	if lc.max == 0 {
		return len(b) == 0
	}
	got := int64(0)
	return hybridRuns(b, bits.Len(uint(lc.max)), n, func(v int, count int64) bool {
		ok := lc.run(first+got, count, v)
		got += count
		return ok
	})
}

// hybridRuns calls yield with the values of b, n values of width bits (at most 32: levels,
// dictionary indices) in Parquet's RLE/bit-packed hybrid, as runs: an RLE run whole (cut at
// n), a bit-packed value alone. It reports whether b holds n values and yield took every run.
func hybridRuns(b []byte, width int, n int64, yield func(v int, count int64) bool) bool {
	got, ok := hybridPrefix(b, width, n, yield)
	return ok && got == n
}

// hybridPrefix is hybridRuns of b that may end, at a run's end, before n values: it returns
// how many it read, and false for a run cut short or a yield that stopped.
func hybridPrefix(b []byte, width int, n int64, yield func(v int, count int64) bool) (got int64, ok bool) {
	if width < 0 || width > 32 {
		return 0, false
	}
	valueBytes := (width + 7) / 8
	mask := uint64(1)<<width - 1
	for got < n && len(b) > 0 {
		header, k := binary.Uvarint(b)
		if k <= 0 || header>>1 == 0 || header>>1 > 1<<40 {
			return got, false
		}
		b = b[k:]
		count := int64(header >> 1)
		if header&1 == 0 { // a run of one value
			if len(b) < valueBytes {
				return got, false
			}
			v := 0
			for i := range valueBytes {
				v |= int(b[i]) << (8 * i)
			}
			b = b[valueBytes:]
			c := min(count, n-got)
			if !yield(v, c) {
				return got, false
			}
			got += c
			continue
		}
		packed := count * int64(width) // bytes of count groups of 8
		if packed > int64(len(b)) {
			return got, false
		}
		for i := int64(0); i < count*8 && got < n; i++ {
			bit := i * int64(width)
			at := bit / 8
			var word uint64
			if at+8 <= packed {
				word = binary.LittleEndian.Uint64(b[at:])
			} else {
				for k := int64(0); at+k < packed && k < 8; k++ {
					word |= uint64(b[at+k]) << (8 * k)
				}
			}
			if !yield(int(word>>(bit%8)&mask), 1) {
				return got, false
			}
			got++
		}
		b = b[packed:]
	}
	return got, true
}

// run reports whether values first … first+count-1 all have level v.
func (lc levelCheck) run(first, count int64, v int) bool {
	switch {
	case !lc.rep:
		return v == lc.max
	case v == lc.max: // within one innermost list, after its first value
		inner := lc.periods[len(lc.periods)-1]
		off := first % inner
		return off != 0 && off+count <= inner
	case count == 1:
		return lc.expected(first) == v
	case count <= 64:
		for i := range count {
			if lc.expected(first+i) != v {
				return false
			}
		}
		return true
	}
	return false
}
