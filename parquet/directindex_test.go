package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow/float16"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/schema"

	"github.com/ndarrow/ndarrow/ndarray"
)

// PageIndexSummary is what CheckPageIndex found: pages, and the column chunks with a
// ColumnIndex and with an OffsetIndex.
type PageIndexSummary struct {
	Pages, ColumnIndexes, OffsetIndexes, Chunks int
	RowsPerPage                                 []int64 // of the first column chunk
	PageSizes                                   []int64 // of the first column chunk, headers included
}

// CheckPageIndex checks the page index of a file the direct writer wrote against its pages,
// read independently of the writer's code (the footer by arrow-go, the index by a Thrift
// decoder of its own, the pages header by header, their levels and values decoded): every
// column chunk has an OffsetIndex listing each of its data pages (offset and size, header
// included, as the page headers give them; first_row_index the rows before the page, each page
// beginning a row), and a ColumnIndex whose minimum and maximum are each page's values' (NaNs
// left out, a zero minimum -0 and a zero maximum +0), null_pages and null_counts the page's
// levels', the boundary order what the minima and maxima do; a chunk has no ColumnIndex only
// where a page has values and no minimum (NaNs only). The ColumnIndexes come after the last
// page, row group by row group and column by column, then the OffsetIndexes, then the footer.
func CheckPageIndex(b []byte) (PageIndexSummary, error) {
	var sum PageIndexSummary
	r, err := NewReader(b, ReaderOptions{})
	if err != nil {
		return sum, err
	}
	md := r.md
	footerAt := int64(len(b)) - 8 - int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	var chunksEnd int64
	type span struct{ at, n int64 }
	var cis, ois []span
	for rg, g := range md.FileMetaData.RowGroups {
		for col, cc := range g.Columns {
			sum.Chunks++
			where := fmt.Sprintf("row group %d column %d", rg, col)
			meta := cc.MetaData
			chunksEnd = max(chunksEnd, meta.DataPageOffset+meta.TotalCompressedSize)
			if cc.OffsetIndexOffset == nil || cc.OffsetIndexLength == nil {
				return sum, fmt.Errorf("%s: no offset index", where)
			}
			sum.OffsetIndexes++
			oiAt, oiLen := *cc.OffsetIndexOffset, int64(*cc.OffsetIndexLength)
			ois = append(ois, span{oiAt, oiLen})
			oi, err := decodeThriftStruct(b[oiAt : oiAt+oiLen])
			if err != nil {
				return sum, fmt.Errorf("%s: offset index: %w", where, err)
			}
			locs, _ := oi[1].([]any)
			var ci map[int16]any
			if cc.ColumnIndexOffset != nil {
				sum.ColumnIndexes++
				ciAt, ciLen := *cc.ColumnIndexOffset, int64(*cc.ColumnIndexLength)
				cis = append(cis, span{ciAt, ciLen})
				if ci, err = decodeThriftStruct(b[ciAt : ciAt+ciLen]); err != nil {
					return sum, fmt.Errorf("%s: column index: %w", where, err)
				}
			}
			descr := md.Schema.Column(col)
			pages, err := chunkPages(b, meta.DataPageOffset, meta.TotalCompressedSize, int32(meta.Codec), descr)
			if err != nil {
				return sum, fmt.Errorf("%s: %w", where, err)
			}
			if len(locs) != len(pages) {
				return sum, fmt.Errorf("%s: %d pages in the offset index, %d in the chunk", where, len(locs), len(pages))
			}
			sum.Pages += len(pages)
			rows := int64(0)
			allNaN := false
			for k, p := range pages {
				loc := locs[k].(map[int16]any)
				if loc[1] != p.offset || loc[2] != p.size || loc[3] != rows {
					return sum, fmt.Errorf("%s page %d: offset index says offset %v size %v first row %v, the page is at %d, %d bytes, row %d",
						where, k, loc[1], loc[2], loc[3], p.offset, p.size, rows)
				}
				if rg == 0 && col == 0 {
					sum.RowsPerPage = append(sum.RowsPerPage, p.rows)
					sum.PageSizes = append(sum.PageSizes, p.size)
				}
				rows += p.rows
				allNaN = allNaN || (p.defined > 0 && p.lo == nil)
			}
			if rows != g.NumRows {
				return sum, fmt.Errorf("%s: pages of %d rows, the row group has %d", where, rows, g.NumRows)
			}
			if ci == nil {
				if !allNaN {
					return sum, fmt.Errorf("%s: no column index, yet every page with values has a minimum", where)
				}
				continue
			}
			if allNaN {
				return sum, fmt.Errorf("%s: a column index, yet a page of NaNs", where)
			}
			if err := checkColumnIndex(ci, pages, descr); err != nil {
				return sum, fmt.Errorf("%s: column index: %w", where, err)
			}
		}
	}
	// Placement: column indexes, then offset indexes, each contiguous and in order, then the footer.
	at := chunksEnd
	for _, s := range append(cis, ois...) {
		if s.at != at {
			return sum, fmt.Errorf("a page index at %d, expected at %d", s.at, at)
		}
		at += s.n
	}
	if at != footerAt {
		return sum, fmt.Errorf("the page index ends at %d, the footer begins at %d", at, footerAt)
	}
	return sum, nil
}

// indexedPage is what a page holds, as read from it.
type indexedPage struct {
	offset, size, rows int64
	levels, defined    int64
	lo, hi             []byte // PLAIN-encoded, nil without a value that is not NaN
}

// chunkPages reads the data pages of a column chunk: their headers, levels and values.
func chunkPages(b []byte, at, size int64, codec int32, descr *schema.Column) ([]indexedPage, error) {
	var pages []indexedPage
	maxRep, maxDef := int(descr.MaxRepetitionLevel()), int(descr.MaxDefinitionLevel())
	for pos := at; pos < at+size; {
		h, err := readPageHeader(b[pos:])
		if err != nil {
			return nil, err
		}
		body := b[pos+int64(h.headerLen) : pos+int64(h.headerLen)+int64(h.compressed)]
		p := indexedPage{offset: pos, size: int64(h.headerLen) + int64(h.compressed), levels: int64(h.numValues)}
		pos += p.size
		if h.typ != pageData {
			return nil, fmt.Errorf("a page of type %d", h.typ)
		}
		if h.repEncoding != 3 || h.defEncoding != 3 {
			return nil, fmt.Errorf("page at %d: levels not RLE", p.offset)
		}
		vals := body
		if codec != 0 {
			vals = make([]byte, h.uncompressed)
			if err := pageDecoders[codec](vals, body); err != nil {
				return nil, fmt.Errorf("page at %d: %w", p.offset, err)
			}
		}
		var reps, defs []byte
		for _, lv := range []struct {
			max     int
			section *[]byte
		}{{maxRep, &reps}, {maxDef, &defs}} {
			if lv.max == 0 {
				continue
			}
			if len(vals) < 4 || int64(binary.LittleEndian.Uint32(vals)) > int64(len(vals)-4) {
				return nil, fmt.Errorf("page at %d: levels cut short", p.offset)
			}
			n := binary.LittleEndian.Uint32(vals)
			*lv.section, vals = vals[4:4+n], vals[4+n:]
		}
		if maxRep == 0 {
			p.rows = p.levels
		} else {
			first := true
			if !hybridRuns(reps, bits.Len(uint(maxRep)), p.levels, func(v int, n int64) bool {
				if first && v != 0 {
					return false
				}
				first = false
				if v == 0 {
					p.rows += n
				}
				return true
			}) {
				return nil, fmt.Errorf("page at %d: repetition levels unreadable, or a page beginning inside a row", p.offset)
			}
		}
		p.defined = p.levels
		if maxDef > 0 {
			p.defined = 0
			if !hybridRuns(defs, bits.Len(uint(maxDef)), p.levels, func(v int, n int64) bool {
				if v == maxDef {
					p.defined += n
				}
				return true
			}) {
				return nil, fmt.Errorf("page at %d: definition levels unreadable", p.offset)
			}
		}
		p.lo, p.hi = pageMinMax(vals, p.defined, h.encoding, descr)
		pages = append(pages, p)
	}
	return pages, nil
}

// orderKey is a value decoded for ordering: a number, or bytes.
type orderKey struct {
	f     float64
	u     uint64
	s     int64
	bytes []byte
	nan   bool
	kind  byte // 'f' float, 'u' unsigned, 's' signed, 'b' bytes
}

func (a orderKey) less(b orderKey) bool {
	switch a.kind {
	case 'f':
		return a.f < b.f
	case 'u':
		return a.u < b.u
	case 's':
		return a.s < b.s
	}
	return bytes.Compare(a.bytes, b.bytes) < 0
}

// keyOf decodes a PLAIN value (a whole byte for a bool) of the column's type.
func keyOf(v []byte, descr *schema.Column) orderKey {
	unsigned := false
	if i, ok := descr.LogicalType().(*schema.IntLogicalType); ok {
		unsigned = !i.IsSigned()
	}
	switch descr.PhysicalType() {
	case pq.Types.Boolean:
		return orderKey{kind: 'u', u: uint64(v[0])}
	case pq.Types.Float:
		f := float64(math.Float32frombits(binary.LittleEndian.Uint32(v)))
		return orderKey{kind: 'f', f: f, nan: f != f}
	case pq.Types.Double:
		f := math.Float64frombits(binary.LittleEndian.Uint64(v))
		return orderKey{kind: 'f', f: f, nan: f != f}
	case pq.Types.Int32:
		if unsigned {
			return orderKey{kind: 'u', u: uint64(binary.LittleEndian.Uint32(v))}
		}
		return orderKey{kind: 's', s: int64(int32(binary.LittleEndian.Uint32(v)))}
	case pq.Types.Int64:
		if unsigned {
			return orderKey{kind: 'u', u: binary.LittleEndian.Uint64(v)}
		}
		return orderKey{kind: 's', s: int64(binary.LittleEndian.Uint64(v))}
	}
	if _, ok := descr.LogicalType().(schema.Float16LogicalType); ok {
		f := ndarray.HalfToFloat64(float16.FromLEBytes(v))
		return orderKey{kind: 'f', f: f, nan: f != f}
	}
	return orderKey{kind: 'b', bytes: v}
}

// pageMinMax returns the least and greatest of a page's n values (PLAIN or BYTE_STREAM_SPLIT),
// NaNs left out, a zero minimum as -0 and a zero maximum as +0; nil without such a value.
func pageMinMax(vals []byte, n int64, encoding int32, descr *schema.Column) (lo, hi []byte) {
	var values [][]byte
	if descr.PhysicalType() == pq.Types.Boolean {
		for i := range n {
			values = append(values, []byte{vals[i/8] >> (i % 8) & 1})
		}
	} else {
		width := int64(descr.TypeLength())
		switch descr.PhysicalType() {
		case pq.Types.Float, pq.Types.Int32:
			width = 4
		case pq.Types.Double, pq.Types.Int64:
			width = 8
		}
		vals = vals[:n*width]
		if encoding == encodingByteStreamSplit {
			plain := make([]byte, len(vals))
			unsplit(plain, vals, int(width))
			vals = plain
		}
		for i := range n {
			values = append(values, vals[i*width:(i+1)*width])
		}
	}
	var loK, hiK orderKey
	for _, v := range values {
		k := keyOf(v, descr)
		if k.nan {
			continue
		}
		if lo == nil || k.less(loK) {
			lo, loK = v, k
		}
		if hi == nil || hiK.less(k) {
			hi, hiK = v, k
		}
	}
	return lo, hi
}

// checkColumnIndex checks a decoded ColumnIndex against the pages it describes.
func checkColumnIndex(ci map[int16]any, pages []indexedPage, descr *schema.Column) error {
	nullPages, _ := ci[1].([]any)
	mins, _ := ci[2].([]any)
	maxs, _ := ci[3].([]any)
	nullCounts, _ := ci[5].([]any)
	if len(nullPages) != len(pages) || len(mins) != len(pages) || len(maxs) != len(pages) || len(nullCounts) != len(pages) {
		return fmt.Errorf("lists of %d, %d, %d, %d for %d pages", len(nullPages), len(mins), len(maxs), len(nullCounts), len(pages))
	}
	var prevLo, prevHi *orderKey
	up, down, seen := true, true, false
	for k, p := range pages {
		if nullPages[k] != (p.defined == 0) || nullCounts[k] != p.levels-p.defined {
			return fmt.Errorf("page %d: null page %v, nulls %v; it has %d values of %d levels", k, nullPages[k], nullCounts[k], p.defined, p.levels)
		}
		lo, hi := mins[k].([]byte), maxs[k].([]byte)
		if p.defined == 0 {
			if len(lo) != 0 || len(hi) != 0 {
				return fmt.Errorf("page %d: a null page with a minimum or maximum", k)
			}
			continue
		}
		loK, hiK, wantLo, wantHi := keyOf(lo, descr), keyOf(hi, descr), keyOf(p.lo, descr), keyOf(p.hi, descr)
		if loK.less(wantLo) || wantLo.less(loK) || hiK.less(wantHi) || wantHi.less(hiK) || len(lo) != len(p.lo) || len(hi) != len(p.hi) {
			return fmt.Errorf("page %d: minimum %x maximum %x, its values' %x %x", k, lo, hi, p.lo, p.hi)
		}
		if loK.kind == 'f' && ((loK.f == 0 && !isNegZero(lo)) || (hiK.f == 0 && isNegZero(hi))) {
			return fmt.Errorf("page %d: a zero minimum not -0 or a zero maximum not +0: %x %x", k, lo, hi)
		}
		if prevLo != nil {
			up = up && !loK.less(*prevLo) && !hiK.less(*prevHi)
			down = down && !prevLo.less(loK) && !prevHi.less(hiK)
		}
		prevLo, prevHi, seen = &loK, &hiK, true
	}
	want := int64(boundaryUnordered)
	switch {
	case !seen:
	case up:
		want = boundaryAscending
	case down:
		want = boundaryDescending
	}
	if ci[4] != want {
		return fmt.Errorf("boundary order %v, the pages' is %d", ci[4], want)
	}
	return nil
}

// isNegZero reports whether a PLAIN float (2, 4 or 8 bytes) is -0.
func isNegZero(v []byte) bool {
	if len(v) == 0 || v[len(v)-1] != 0x80 {
		return false
	}
	for _, x := range v[:len(v)-1] {
		if x != 0 {
			return false
		}
	}
	return true
}

// decodeThriftStruct decodes a compact-protocol struct into its fields by id: i16/i32/i64 as
// int64, bools, binaries as []byte, lists as []any, structs as map[int16]any.
func decodeThriftStruct(b []byte) (map[int16]any, error) {
	c := &compactReader{b: b}
	v, err := decodeThrift(c, thriftStruct)
	if err != nil {
		return nil, err
	}
	if c.pos != len(b) {
		return nil, fmt.Errorf("%d bytes after the struct", len(b)-c.pos)
	}
	return v.(map[int16]any), nil
}

func decodeThrift(c *compactReader, typ byte) (any, error) {
	switch typ {
	case thriftTrue, thriftFalse:
		return typ == thriftTrue, nil
	case thriftI16, thriftI32, thriftI64:
		u, err := c.uvarint()
		return int64(u>>1) ^ -int64(u&1), err
	case thriftBinary:
		u, err := c.uvarint()
		if err != nil {
			return nil, err
		}
		n, err := c.length(u)
		if err != nil {
			return nil, err
		}
		c.pos += n
		return bytes.Clone(c.b[c.pos-n : c.pos]), nil
	case thriftList:
		n, elem, err := c.listHeader()
		if err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if elem == thriftTrue || elem == thriftFalse {
				v, err := c.readByte()
				if err != nil {
					return nil, err
				}
				out[i] = v == thriftTrue
				continue
			}
			if out[i], err = decodeThrift(c, elem); err != nil {
				return nil, err
			}
		}
		return out, nil
	case thriftStruct:
		fields := map[int16]any{}
		var last int16
		for {
			id, t, err := c.field(last)
			if err != nil {
				return nil, err
			}
			if t == thriftStop {
				return fields, nil
			}
			last = id
			if fields[id], err = decodeThrift(c, t); err != nil {
				return nil, err
			}
		}
	}
	return nil, fmt.Errorf("thrift type %d", typ)
}
