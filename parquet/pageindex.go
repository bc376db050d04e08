package parquet

import (
	"cmp"
	"fmt"
	"slices"
)

// A column chunk's pages are found from its OffsetIndex (parquet.thrift: a list of
// PageLocation, each a page's offset in the file, its size header included, and its first
// row), when the writer wrote one, or else by walking the chunk's page headers once. The
// OffsetIndex is read as the footer is: every length against the bytes it was given, and then
// every location against the column chunk and the row group — pages inside the chunk, in order
// and disjoint, first rows strictly increasing from 0 and below the row group's rows — before
// anything is read from a page. Nothing can check, without reading the pages before it, that a
// page's first row is the one the index says: a page read is checked to hold the rows the
// index gives it (its values count), and an index that shifts whole pages' rows is trusted,
// as every reader of page indexes trusts it.

// pageLoc is a page of a column chunk: bytes [offset, offset+size) of the file, its header
// included, holding rows [firstRow, firstRow+rows) of the row group.
type pageLoc struct {
	offset, size   int64
	firstRow, rows int64
	dictionary     bool // a dictionary page (a header walk finds them; an OffsetIndex lists none)
}

// chunkBounds returns the bytes [start, end) of leaf column leaf of row group rg as its
// metadata states them, checked inside the file.
func (r *Reader) chunkBounds(rg, leaf int) (start, end int64, err error) {
	cc := r.md.FileMetaData.RowGroups[rg].Columns[leaf]
	if cc.MetaData == nil {
		return 0, 0, fmt.Errorf("no column metadata: %w", ErrInvalid)
	}
	m := cc.MetaData
	start = m.DataPageOffset
	if m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 && start > *m.DictionaryPageOffset {
		start = *m.DictionaryPageOffset
	}
	size := int64(len(r.b))
	if start < 0 || m.TotalCompressedSize < 0 || start > size || m.TotalCompressedSize > size-start {
		return 0, 0, fmt.Errorf("bytes [%d, +%d) outside the file of %d bytes: %w", start, m.TotalCompressedSize, size, ErrInvalid)
	}
	return start, start + m.TotalCompressedSize, nil
}

// offsetIndexRange returns the bytes of the OffsetIndex of leaf column leaf in row group rg,
// and false when the footer names none or names bytes outside the file.
func (r *Reader) offsetIndexRange(rg, leaf int) (ByteRange, bool) {
	cc := r.md.FileMetaData.RowGroups[rg].Columns[leaf]
	if cc.OffsetIndexOffset == nil || cc.OffsetIndexLength == nil {
		return ByteRange{}, false
	}
	off, n := *cc.OffsetIndexOffset, int64(*cc.OffsetIndexLength)
	if off < 0 || n <= 0 || off > int64(len(r.b)) || n > int64(len(r.b))-off {
		return ByteRange{}, false
	}
	return ByteRange{off, n}, true
}

// PageIndexRanges returns the byte ranges of the offset indexes (the page indexes saying where
// each page of a column chunk begins and which rows it holds) of the column chunks of row
// group rowGroup that the reader reads, sorted and coalesced, for a caller that fetches them
// before TakeRanges and TakeRows: empty when the file has none (or has no such row group).
// Ranges the footer states outside the file are left out (TakeRows refuses them).
func (r *Reader) PageIndexRanges(rowGroup int) []ByteRange {
	if rowGroup < 0 || rowGroup >= r.NumRowGroups() {
		return nil
	}
	var out []ByteRange
	for _, c := range r.cols {
		for _, leaf := range c.leaves {
			if br, ok := r.offsetIndexRange(rowGroup, leaf); ok {
				out = append(out, br)
			}
		}
	}
	return coalesce(out)
}

// hasOffsetIndex reports whether the footer names an OffsetIndex of leaf column leaf in row
// group rg (which readOffsetIndex then must read).
func (r *Reader) hasOffsetIndex(rg, leaf int) bool {
	cc := r.md.FileMetaData.RowGroups[rg].Columns[leaf]
	return cc.OffsetIndexOffset != nil || cc.OffsetIndexLength != nil
}

// readOffsetIndex decodes and checks the OffsetIndex of leaf column leaf in row group rg, once
// per reader.
func (r *Reader) readOffsetIndex(rg, leaf int) ([]pageLoc, error) {
	if pages, ok := r.offsetIndexes[[2]int{rg, leaf}]; ok {
		return pages, nil
	}
	pages, err := r.decodeOffsetIndex(rg, leaf)
	if err != nil {
		return nil, err
	}
	if r.offsetIndexes == nil {
		r.offsetIndexes = map[[2]int][]pageLoc{}
	}
	r.offsetIndexes[[2]int{rg, leaf}] = pages
	return pages, nil
}

// decodeOffsetIndex decodes and checks the OffsetIndex of leaf column leaf in row group rg.
func (r *Reader) decodeOffsetIndex(rg, leaf int) ([]pageLoc, error) {
	br, ok := r.offsetIndexRange(rg, leaf)
	if !ok {
		return nil, fmt.Errorf("an offset index outside the file of %d bytes: %w", len(r.b), ErrInvalid)
	}
	start, end, err := r.chunkBounds(rg, leaf)
	if err != nil {
		return nil, err
	}
	rows := r.RowGroupRows(rg)
	pages, err := parseOffsetIndex(r.b[br.Offset:br.Offset+br.Length], start, end, rows)
	if err != nil {
		return nil, fmt.Errorf("offset index at byte %d: %w", br.Offset, err)
	}
	return pages, nil
}

// parseOffsetIndex decodes the compact-Thrift OffsetIndex b of a column chunk of bytes
// [start, end) of a row group of rows rows, and checks each page against them.
func parseOffsetIndex(b []byte, start, end, rows int64) ([]pageLoc, error) {
	c := compactReader{b: b}
	var pages []pageLoc
	seen := false
	err := c.walkStruct(func(id int16, typ byte) (bool, error) {
		if id != 1 || typ != thriftList { // OffsetIndex.page_locations
			return false, nil
		}
		if seen {
			return true, c.errorf("page_locations twice")
		}
		seen = true
		n, elem, err := c.listHeader()
		if err != nil {
			return true, err
		}
		if elem != thriftStruct {
			return true, c.errorf("page locations of type %d", elem)
		}
		if int64(n) > max(rows, 0) {
			return true, c.errorf("%d pages for %d rows", n, rows)
		}
		pages = make([]pageLoc, 0, n) // n ≤ the bytes left and ≤ rows
		for range n {
			var p pageLoc
			var got uint8
			err := c.walkStruct(func(id int16, typ byte) (bool, error) {
				switch {
				case id == 1 && typ == thriftI64:
					v, err := c.i64()
					p.offset, got = v, got|1
					return true, err
				case id == 2 && typ == thriftI32:
					v, err := c.i32()
					p.size, got = int64(v), got|2
					return true, err
				case id == 3 && typ == thriftI64:
					v, err := c.i64()
					p.firstRow, got = v, got|4
					return true, err
				}
				return false, nil
			})
			if err != nil {
				return true, err
			}
			if got != 7 {
				return true, c.errorf("a page location without its offset, size or first row")
			}
			pages = append(pages, p)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, fmt.Errorf("no page locations: %w", ErrInvalid)
	}
	if err := checkPageLocs(pages, start, end, rows); err != nil {
		return nil, err
	}
	return pages, nil
}

// checkPageLocs checks pages, which an OffsetIndex gave, against the column chunk's bytes
// [start, end) and the row group's rows, and sets each page's rows.
func checkPageLocs(pages []pageLoc, start, end, rows int64) error {
	if len(pages) == 0 && rows > 0 {
		return fmt.Errorf("no pages for %d rows: %w", rows, ErrInvalid)
	}
	at := start
	for i := range pages {
		p := &pages[i]
		switch {
		case p.offset < at || p.size <= 0 || p.offset > end || p.size > end-p.offset:
			return fmt.Errorf("page %d at bytes [%d, +%d): outside the column chunk [%d, %d) or before page %d's end: %w", i, p.offset, p.size, start, end, i-1, ErrInvalid)
		case i == 0 && p.firstRow != 0:
			return fmt.Errorf("the first page begins at row %d: %w", p.firstRow, ErrInvalid)
		case p.firstRow < 0 || p.firstRow >= rows:
			return fmt.Errorf("page %d begins at row %d of %d: %w", i, p.firstRow, rows, ErrInvalid)
		case i > 0 && p.firstRow <= pages[i-1].firstRow:
			return fmt.Errorf("page %d begins at row %d, page %d at %d: %w", i, p.firstRow, i-1, pages[i-1].firstRow, ErrInvalid)
		}
		at = p.offset + p.size
		if i > 0 {
			pages[i-1].rows = p.firstRow - pages[i-1].firstRow
		}
	}
	if n := len(pages); n > 0 {
		pages[n-1].rows = rows - pages[n-1].firstRow
	}
	return nil
}

// i64 reads a zigzag varint.
func (c *compactReader) i64() (int64, error) {
	u, err := c.uvarint()
	if err != nil {
		return 0, err
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// walkPages finds the pages of leaf column leaf in row group rg by walking its page headers
// (index pages left out, a dictionary page kept), for a tensor column of cell values a row:
// each data page must hold whole rows, all of them together the row group's. ok is false for
// a chunk that is not so (the caller decodes the column instead); err is for headers that are
// not Parquet's.
func (r *Reader) walkPages(rg, leaf int, cell int64) (pages []pageLoc, ok bool, err error) {
	start, end, err := r.chunkBounds(rg, leaf)
	if err != nil {
		return nil, false, err
	}
	m := r.md.FileMetaData.RowGroups[rg].Columns[leaf].MetaData
	rows := r.RowGroupRows(rg)
	chunk := r.b[start:end]
	var seen, row int64
	for pos := 0; seen < m.NumValues; {
		if pos >= len(chunk) {
			return nil, false, fmt.Errorf("%d of its %d values in its pages: %w", seen, m.NumValues, ErrInvalid)
		}
		h, err := readPageHeader(chunk[pos:])
		if err != nil {
			return nil, false, fmt.Errorf("page at byte %d: %w", start+int64(pos), err)
		}
		at := start + int64(pos)
		if h.compressed < 0 || int64(h.compressed) > int64(len(chunk)-pos-h.headerLen) {
			return nil, false, fmt.Errorf("page at byte %d: %d bytes with %d left in the chunk: %w", at, h.compressed, len(chunk)-pos-h.headerLen, ErrInvalid)
		}
		size := int64(h.headerLen) + int64(h.compressed)
		pos += int(size)
		n := int64(h.numValues)
		switch h.typ {
		case pageDictionary:
			pages = append(pages, pageLoc{offset: at, size: size, firstRow: row, dictionary: true})
		case pageData, pageDataV2:
			if n < 0 || n%cell != 0 || n > m.NumValues-seen {
				return nil, false, nil
			}
			seen += n
			if n == 0 {
				continue
			}
			pages = append(pages, pageLoc{offset: at, size: size, firstRow: row, rows: n / cell})
			row += n / cell
		}
	}
	if row != rows {
		return nil, false, nil
	}
	return pages, true, nil
}

// coalesce sorts ranges and merges those that overlap or touch.
func coalesce(ranges []ByteRange) []ByteRange {
	slices.SortFunc(ranges, func(a, b ByteRange) int { return cmp.Compare(a.Offset, b.Offset) })
	out := ranges[:0]
	for _, br := range ranges {
		if br.Length <= 0 {
			continue
		}
		if n := len(out); n > 0 && br.Offset <= out[n-1].Offset+out[n-1].Length {
			out[n-1].Length = max(out[n-1].Length, br.Offset+br.Length-out[n-1].Offset)
			continue
		}
		out = append(out, br)
	}
	return out
}
