package parquet

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"

	"github.com/ndarrow/ndarrow/limits"
)

// The direct path reads a flat byte-array column too — string, binary, large_string or
// large_binary (or an extension over one), a top-level BYTE_ARRAY column, required or
// optional — straight from its pages into the Arrow array's offsets and data, each allocated
// once. The chunk's pages are walked twice. The first pass sizes the data: a PLAIN or
// DELTA_LENGTH_BYTE_ARRAY page by the bytes of its values section (less the PLAIN length
// prefixes where the header says how many values it holds), never decompressing it; a page of
// dictionary indices or of DELTA_BYTE_ARRAY by decoding its indices or lengths (small pages,
// decompressed twice). The second pass decodes each page's values into place — PLAIN values
// copied after their lengths, dictionary entries looked up (hybridRuns), DELTA_LENGTH_BYTE_ARRAY
// and DELTA_BYTE_ARRAY lengths decoded by deltaReader after checkDelta walked them — writing
// each value's end offset densely, then spreading the offsets over the page's null slots from
// the back. The data buffer keeps the first pass's bound as its capacity: at most the PLAIN
// length prefixes and levels of compressed pages beyond the values. pqarrow's decoding, which
// this stands in for, materialises every value as a slice header, levels and a builder grown
// by doubling. A dictionary page is read once, its entries viewed in the (decompressed) page;
// a chunk falling back to PLAIN partway is read so too, each page as its encoding says.
// Anything else — lists or structs of strings, another encoding, levels of another shape,
// trailing bytes, values past the page, more bytes than MaxCopySize (or, for 32-bit offsets,
// math.MaxInt32) — gives the row group back to pqarrow (errNotDirect); but a chunk with
// DELTA_BYTE_ARRAY pages is this reader's alone (chunkCost.directOnly: arrow-go's decoder
// trusts their lengths), refused as unsupported when it cannot read it.

// encodingDeltaByteArray is DELTA_BYTE_ARRAY: prefix lengths (DELTA_BINARY_PACKED), then the
// suffixes as DELTA_LENGTH_BYTE_ARRAY.
const encodingDeltaByteArray = 7

// bytesTypeOf returns the storage type of t when it is (an extension over) string, binary,
// large_string or large_binary, and whether its offsets are 64-bit.
func bytesTypeOf(t arrow.DataType) (storage arrow.DataType, large, ok bool) {
	storage = t
	if ext, isExt := t.(arrow.ExtensionType); isExt {
		storage = ext.StorageType()
	}
	switch storage.ID() {
	case arrow.STRING, arrow.BINARY:
		return storage, false, true
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return storage, true, true
	}
	return storage, false, false
}

// readDirectBytes reads the byte-array column c of row group rg, of rows rows (see above).
func (r *Reader) readDirectBytes(c column, rg int, rows int64) (arrow.Array, error) {
	storage, large, ok := bytesTypeOf(c.field.Type)
	if !ok || c.parts != nil || len(c.leaves) != 1 || c.pqType == nil {
		return nil, errNotDirect
	}
	switch pqID := c.pqType.ID(); storage.ID() { // what pqarrow reads the column as
	case arrow.STRING, arrow.LARGE_STRING:
		ok = pqID == arrow.STRING
	default:
		ok = pqID == arrow.BINARY
	}
	if !ok {
		return nil, errNotDirect
	}
	if large {
		return readBytesColumn[int64](r, c, rg, rows, storage)
	}
	return readBytesColumn[int32](r, c, rg, rows, storage)
}

// readBytesColumn is readDirectBytes with offsets of type T.
func readBytesColumn[T int32 | int64](r *Reader, c column, rg int, rows int64, storage arrow.DataType) (arrow.Array, error) {
	leaf := c.leaves[0]
	descr := r.md.Schema.Column(leaf)
	node := descr.SchemaNode()
	optional := node.RepetitionType() == pq.Repetitions.Optional
	wantDef := int16(0)
	if optional {
		wantDef = 1
	}
	if descr.PhysicalType() != pq.Types.ByteArray || descr.MaxRepetitionLevel() != 0 || descr.MaxDefinitionLevel() != wantDef ||
		node.Parent() == nil || node.Parent().Parent() != nil {
		return nil, errNotDirect // not a flat top-level column
	}
	m := r.md.FileMetaData.RowGroups[rg].Columns[leaf].MetaData
	decode := pageDecoders[int32(m.Codec)]
	if m.Codec != 0 && decode == nil || rows < 0 || rows > r.lim.MaxElements || m.NumValues != rows {
		return nil, errNotDirect
	}
	start, end, err := r.chunkBounds(rg, leaf)
	if err != nil {
		return nil, errNotDirect
	}
	var zero T
	width := int64(unsafe.Sizeof(zero))
	budget := min(r.lim.MaxCopySize, r.expansion) // what the row group's other columns leave
	limit := budget
	if width == 4 {
		limit = min(limit, math.MaxInt32)
	}
	br := &bytesReader[T]{chunk: r.b[start:end], codec: int32(m.Codec), decode: decode, optional: optional, rows: rows, limit: limit}
	if !br.walk(false) || br.at > limit {
		if br.exceeded && limit == budget { // so many bytes are no one's to decode: pqarrow's neither
			return nil, fmt.Errorf("values of more than the %d bytes MaxCopySize leaves the column: %w", budget, limits.ErrExceeded)
		}
		return nil, errNotDirect
	}
	bound := br.at
	r.expansion -= bound + (rows+1)*width
	offsets := memory.NewResizableBuffer(r.mem)
	defer offsets.Release()
	offsets.Resize(int((rows + 1) * width))
	data := memory.NewResizableBuffer(r.mem)
	defer data.Release()
	data.Resize(int(bound))
	br.offs = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(offsets.Bytes()))), rows+1)
	br.offs[0] = 0
	br.data = data.Bytes()[:bound]
	br.mem = r.mem
	defer func() {
		if br.valid != nil {
			br.valid.Release()
		}
	}()
	if !br.walk(true) {
		return nil, errNotDirect
	}
	data.ResizeNoShrink(int(br.at)) // the bound's capacity kept: no copy
	d := array.NewData(storage, int(rows), []*memory.Buffer{br.valid, offsets, data}, nil, int(br.nulls), 0)
	defer d.Release()
	arr := array.MakeFromData(d)
	ext, isExt := c.field.Type.(arrow.ExtensionType)
	if !isExt {
		return arr, nil
	}
	defer arr.Release()
	return array.NewExtensionArrayWithStorage(ext, arr), nil
}

// bytesReader reads the pages of a flat byte-array column chunk into offsets of type T and
// data (see above).
type bytesReader[T int32 | int64] struct {
	chunk    []byte // the column chunk, dictionary page first
	codec    int32
	decode   func(dst, src []byte) error
	optional bool  // definition levels of at most 1
	rows     int64 // slots: values and nulls
	limit    int64 // the most data bytes the column may hold
	exceeded bool  // the values would take more than limit

	dict   []byte   // the dictionary page's values, decompressed
	dictAt []uint32 // entry i is dict[dictAt[i]+4 : dictAt[i+1]]

	scratch []byte    // a page decompressed
	slots   []slotRun // a page's slots as its definition levels give them

	// What the filling pass fills (nil in the sizing pass, which only counts at).
	offs  []T
	data  []byte
	mem   memory.Allocator
	valid *memory.Buffer // made at the first null
	nulls int64

	at int64 // data bytes written, or counted
	// The last DELTA_BYTE_ARRAY value's start in data and length: a page's first value may
	// share a prefix with the page before's last, as arrow-go writes and reads them.
	prev, prevLen int64
}

// walk reads the chunk's pages: sizing (fill false) counts at, a bound on the data's bytes;
// filling writes offsets, data and validity. It reports whether every page is one the direct
// path reads, the chunk's pages hold exactly rows slots and the data fits.
func (br *bytesReader[T]) walk(fill bool) bool {
	br.at, br.prev, br.prevLen = 0, 0, 0
	slot := int64(0)
	for pos := 0; slot < br.rows; {
		h, page, next, ok := nextBytesPage(br.chunk, pos, br.codec, br.rows-slot)
		if !ok {
			return false
		}
		first := pos == 0
		pos = next
		switch h.typ {
		case pageIndex:
			continue
		case pageDictionary:
			if !first || !fill && !br.dictionary(h, page) {
				return false
			}
			continue
		}
		if !br.page(h, page, slot, fill) {
			return false
		}
		if br.at > br.limit {
			br.exceeded = true
			return false
		}
		slot += int64(h.numValues)
	}
	return slot == br.rows
}

// nextBytesPage reads the page at chunk[pos:] and returns its header, its bytes and where the
// next page begins. ok is false unless it is an index page, a dictionary page (PLAIN) or a data
// page (v1 or v2) of at most left values in an encoding readBytes decodes, every header field
// it needs given and, stored as it is, of one size.
func nextBytesPage(chunk []byte, pos int, codec int32, left int64) (h pageHeader, page []byte, next int, ok bool) {
	if h, page, next, ok = pageAt(chunk, pos); !ok {
		return h, nil, pos, false
	}
	n := int64(h.numValues)
	switch {
	case h.hasType && h.typ == pageIndex:
		return h, page, next, true
	case !h.hasType || n < 0 || h.uncompressed < 0:
		return h, nil, next, false
	case h.typ == pageDictionary:
		ok = h.subFields&0b110 == 0b110 && (h.encoding == 0 || h.encoding == encodingPlainDictionary)
	case h.typ == pageData:
		ok = h.subFields&0b11110 == 0b11110 && n <= left && bytesEncoding(h.encoding)
	case h.typ == pageDataV2:
		ok = h.subFields&0b1111110 == 0b1111110 && n <= left && bytesEncoding(h.encoding)
	}
	if !ok || (codec == 0 || h.typ == pageDataV2 && h.v2Uncompressed) && h.compressed != h.uncompressed {
		return h, nil, next, false
	}
	return h, page, next, true
}

// bytesEncoding reports whether readBytes decodes values in encoding e.
func bytesEncoding(e int32) bool {
	switch e {
	case 0, encodingPlainDictionary, encodingRLEDictionary, encodingDeltaLengthByteArray, encodingDeltaByteArray:
		return true
	}
	return false
}

// dictionary reads the dictionary page h, page its bytes: PLAIN byte arrays, exactly
// h.numValues of them.
func (br *bytesReader[T]) dictionary(h pageHeader, page []byte) bool {
	vals := page
	if br.codec != 0 {
		vals = make([]byte, h.uncompressed) // checked against the budget: checkColumnChunk
		if br.decode(vals, page) != nil {
			return false
		}
	}
	n := int64(h.numValues)
	if n > int64(len(vals))/4 { // each entry takes its length's 4 bytes at least
		return false
	}
	at := make([]uint32, n+1)
	pos := 0
	for i := range n {
		at[i] = uint32(pos)
		if len(vals)-pos < 4 {
			return false
		}
		l := binary.LittleEndian.Uint32(vals[pos:])
		if uint64(l) > uint64(len(vals)-pos-4) {
			return false
		}
		pos += 4 + int(l)
	}
	at[n] = uint32(pos)
	if pos != len(vals) {
		return false
	}
	br.dict, br.dictAt = vals, at
	return true
}

// page reads data page h (page its bytes), whose first slot is slot.
func (br *bytesReader[T]) page(h pageHeader, page []byte, slot int64, fill bool) bool {
	n := int64(h.numValues)
	v2 := h.typ == pageDataV2
	if v2 && (h.numNulls < 0 || int64(h.numNulls) > n || h.repBytes != 0 || h.defBytes < 0 || !br.optional && h.defBytes != 0) {
		return false
	}
	if !fill && (h.encoding == 0 || h.encoding == encodingDeltaLengthByteArray) {
		// Its values take at most the bytes of its values section, less PLAIN's length
		// prefixes where the header says how many there are.
		size := int64(h.uncompressed)
		if v2 {
			size -= int64(h.defBytes)
		}
		if h.encoding == 0 {
			switch {
			case !br.optional:
				size -= 4 * n
			case v2:
				size -= 4 * (n - int64(h.numNulls))
			}
		}
		if size < 0 {
			return false
		}
		br.at += size
		return true
	}
	defs, vals, ok := br.sections(h, page)
	if !ok {
		return false
	}
	nonNull := n
	br.slots = br.slots[:0]
	if br.optional {
		nonNull = 0
		ok := hybridRuns(defs, 1, n, func(v int, count int64) bool {
			if v > 1 {
				return false
			}
			br.slots = appendSlots(br.slots, v == 1, count)
			if v == 1 {
				nonNull += count
			}
			return true
		})
		if !ok {
			return false
		}
	}
	if v2 && int64(h.numNulls) != n-nonNull {
		return false
	}
	switch h.encoding {
	case 0:
		ok = br.plain(vals, nonNull, slot)
	case encodingPlainDictionary, encodingRLEDictionary:
		ok = br.indices(vals, nonNull, slot, fill)
	case encodingDeltaLengthByteArray:
		ok = br.deltaLength(vals, nonNull, slot)
	case encodingDeltaByteArray:
		ok = br.deltaBytes(vals, nonNull, slot, fill)
	default:
		ok = false
	}
	if ok && fill && nonNull != n {
		br.spread(slot, n, nonNull)
	}
	return ok
}

// sections returns the definition levels (nil for a required column) and the values of data
// page h, page its bytes, decompressed into scratch.
func (br *bytesReader[T]) sections(h pageHeader, page []byte) (defs, vals []byte, ok bool) {
	if h.typ == pageDataV2 {
		levels := int64(h.defBytes) // and no repetition levels: page
		if levels > int64(len(page)) || levels > int64(h.uncompressed) {
			return nil, nil, false
		}
		defs, vals = page[:levels], page[levels:]
		if br.codec != 0 && !h.v2Uncompressed {
			br.scratch = grow(br.scratch, int(int64(h.uncompressed)-levels))
			if br.decode(br.scratch, vals) != nil {
				return nil, nil, false
			}
			vals = br.scratch
		}
		return defs, vals, true
	}
	if br.codec != 0 {
		br.scratch = grow(br.scratch, int(h.uncompressed))
		if br.decode(br.scratch, page) != nil {
			return nil, nil, false
		}
		page = br.scratch
	}
	if !br.optional {
		return nil, page, true
	}
	if h.defEncoding != 3 || len(page) < 4 || uint64(binary.LittleEndian.Uint32(page)) > uint64(len(page)-4) {
		return nil, nil, false // BIT_PACKED levels, deprecated, or cut short
	}
	size := binary.LittleEndian.Uint32(page)
	return page[4 : 4+size], page[4+size:], true
}

// put appends value v to the data and ends offset i with it; false when it does not fit.
func (br *bytesReader[T]) put(v []byte, i int64) bool {
	if int64(len(v)) > int64(len(br.data))-br.at {
		return false
	}
	copy(br.data[br.at:], v)
	br.at += int64(len(v))
	br.offs[i] = T(br.at)
	return true
}

// plain fills the n PLAIN values of vals, each a 4-byte length and its bytes, for the page
// whose first slot is slot (densely: spread spaces them out).
func (br *bytesReader[T]) plain(vals []byte, n, slot int64) bool {
	for k := range n {
		if len(vals) < 4 {
			return false
		}
		l := binary.LittleEndian.Uint32(vals)
		if uint64(l) > uint64(len(vals)-4) || !br.put(vals[4:4+l], slot+1+k) {
			return false
		}
		vals = vals[4+l:]
	}
	return len(vals) == 0
}

// indices fills (or, sizing, counts) the n dictionary entries vals names: a bit width byte,
// then the indices in the RLE/bit-packed hybrid, every one inside the dictionary.
func (br *bytesReader[T]) indices(vals []byte, n, slot int64, fill bool) bool {
	if n == 0 {
		return true
	}
	if len(vals) == 0 || br.dictAt == nil {
		return false
	}
	entries := int64(len(br.dictAt) - 1)
	i := slot + 1
	return hybridRuns(vals[1:], int(vals[0]), n, func(v int, count int64) bool {
		if int64(v) >= entries {
			return false
		}
		from, to := int64(br.dictAt[v])+4, int64(br.dictAt[v+1])
		if !fill {
			if size := to - from; size > 0 && count > (br.limit-br.at)/size {
				br.exceeded = true
				return false
			}
			br.at += count * (to - from)
			return true
		}
		entry := br.dict[from:to]
		for range count {
			if !br.put(entry, i) {
				return false
			}
			i++
		}
		return true
	})
}

// deltaLength fills the n DELTA_LENGTH_BYTE_ARRAY values of vals: their lengths
// (DELTA_BINARY_PACKED), then their bytes, exactly.
func (br *bytesReader[T]) deltaLength(vals []byte, n, slot int64) bool {
	got, used, err := checkDelta(vals, n, 32)
	if err != nil || got != n {
		return false
	}
	lengths := newDeltaReader(vals[:used])
	rest := vals[used:]
	for k := range n {
		l := lengths.next()
		if l < 0 || l > int64(len(rest)) || !br.put(rest[:l], slot+1+k) {
			return false
		}
		rest = rest[l:]
	}
	return len(rest) == 0
}

// deltaBytes fills (or, sizing, counts) the n DELTA_BYTE_ARRAY values of vals: prefix lengths
// (DELTA_BINARY_PACKED), then the suffixes (DELTA_LENGTH_BYTE_ARRAY); each value is a prefix
// of the value before — the chunk's first has none — then its suffix.
func (br *bytesReader[T]) deltaBytes(vals []byte, n, slot int64, fill bool) bool {
	got, used, err := checkDelta(vals, n, 32)
	if err != nil || got != n {
		return false
	}
	prefixes := newDeltaReader(vals[:used])
	vals = vals[used:]
	if got, used, err = checkDelta(vals, n, 32); err != nil || got != n {
		return false
	}
	lengths := newDeltaReader(vals[:used])
	rest := vals[used:]
	for k := range n {
		p, s := prefixes.next(), lengths.next()
		if p < 0 || p > br.prevLen || s < 0 || s > int64(len(rest)) {
			return false
		}
		if p+s > br.limit-br.at {
			br.exceeded = true
			return false
		}
		if fill {
			if p+s > int64(len(br.data))-br.at {
				return false
			}
			copy(br.data[br.at:], br.data[br.prev:br.prev+p])
			copy(br.data[br.at+p:], rest[:s])
			br.prev = br.at
			br.offs[slot+1+k] = T(br.at + p + s)
		}
		br.at += p + s
		br.prevLen = p + s
		rest = rest[s:]
	}
	return len(rest) == 0
}

// spread spaces out the nonNull dense value ends of the page of n slots from slot slot, in
// offsets slot+1 on, over its slots (br.slots), from the back: a null slot ends where the
// value before it does. It clears the null slots' validity bits.
func (br *bytesReader[T]) spread(slot, n, nonNull int64) {
	offs := br.offs[slot:]
	k, s := nonNull, n // dense values and slots left
	for j := len(br.slots) - 1; j >= 0; j-- {
		sl := br.slots[j]
		if sl.valid {
			copy(offs[1+s-sl.count:1+s], offs[1+k-sl.count:1+k])
			k -= sl.count
		} else {
			end := offs[k] // of dense value k-1, or the page's start
			for i := 1 + s - sl.count; i < 1+s; i++ {
				offs[i] = end
			}
			if br.valid == nil {
				br.valid = memory.NewResizableBuffer(br.mem)
				br.valid.Resize(int((br.rows + 7) / 8))
				bitutil.SetBitsTo(br.valid.Bytes(), 0, br.rows, true)
			}
			bitutil.SetBitsTo(br.valid.Bytes(), slot+s-sl.count, sl.count, false)
			br.nulls += sl.count
		}
		s -= sl.count
	}
}

// deltaReader yields the values of DELTA_BINARY_PACKED bytes that checkDelta accepted, one at
// a time (64-bit arithmetic wrapping, as decodeDelta's); next must be called at most as many
// times as the values checkDelta counted.
type deltaReader struct {
	b        []byte
	pos      int
	perMini  int
	minis    int
	widths   []byte // of the block's miniblocks after the current one
	minDelta int64
	last     int64
	started  bool
	bits     bitReader
	width    int
	inMini   int // values read of the current miniblock
}

// newDeltaReader reads the header of b.
func newDeltaReader(b []byte) deltaReader {
	d := deltaReader{b: b}
	block, minis := d.uvarint(), d.uvarint()
	d.uvarint() // the value count
	zz := d.uvarint()
	d.last = int64(zz>>1) ^ -int64(zz&1)
	d.perMini, d.minis = int(block/minis), int(minis)
	d.inMini = d.perMini // no miniblock begun
	return d
}

// uvarint reads the next ULEB128 of b.
func (d *deltaReader) uvarint() uint64 {
	v, k := binary.Uvarint(d.b[d.pos:])
	d.pos += k
	return v
}

// next returns the next value.
func (d *deltaReader) next() int64 {
	if !d.started {
		d.started = true
		return d.last
	}
	if d.inMini == d.perMini {
		if len(d.widths) == 0 { // a block begins
			zz := d.uvarint()
			d.minDelta = int64(zz>>1) ^ -int64(zz&1)
			d.widths = d.b[d.pos : d.pos+d.minis]
			d.pos += d.minis
		}
		d.width, d.widths = int(d.widths[0]), d.widths[1:]
		size := d.perMini * d.width / 8
		d.bits = bitReader{b: d.b[d.pos : d.pos+size]}
		d.pos += size
		d.inMini = 0
	}
	d.inMini++
	d.last += int64(d.bits.read(d.width)) + d.minDelta
	return d.last
}
