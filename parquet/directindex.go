package parquet

// The direct writer's page index (parquet-format's PageIndex.md): per column chunk, a
// ColumnIndex (each page's minimum and maximum, whether it holds only nulls, its nulls, and
// whether the minima and maxima ascend or descend) and an OffsetIndex (each page's offset,
// size with its header, and first row), all the ColumnIndexes of the file then all the
// OffsetIndexes after the last row group, before the footer, row group by row group and column
// by column within each, as Arrow C++ writes them; each ColumnChunk says where its two are.
// A reader fetches one row by reading the footer, the chunk's OffsetIndex and one page.
// Pages begin at row boundaries (pageBounds), so a page's first_row_index is a whole row.

// Parquet's BoundaryOrder.
const (
	boundaryUnordered  = 0
	boundaryAscending  = 1
	boundaryDescending = 2
)

// pageEntry is what the page index says of one page.
type pageEntry struct {
	offset, size, firstRow int64
	lo, hi                 []byte // PLAIN-encoded minimum and maximum; nil when there is none
	nulls                  int64
	nullPage               bool // no value but nulls (and empty lists)
}

// pageIndex returns the ColumnIndex and OffsetIndex of a chunk of pages, compact Thrift. The
// ColumnIndex is nil, as Arrow C++ leaves it out, when a page with values has no minimum and
// maximum (its values all NaN): it could not say what the page holds.
func (c *writeColumn) pageIndex(pages []pageEntry) (columnIndex, offsetIndex []byte) {
	if len(pages) == 0 {
		return nil, nil
	}
	var w compactWriter
	w.begin()
	w.list(1, len(pages), thriftStruct)
	for _, p := range pages {
		w.begin()
		w.i64(1, p.offset)
		w.i32(2, int32(p.size))
		w.i64(3, p.firstRow)
		w.end()
	}
	w.end()
	offsetIndex = w.b

	nullPages := make([]bool, len(pages))
	bounds := func(hi bool) [][]byte {
		v := make([][]byte, len(pages))
		for k, p := range pages {
			if hi {
				v[k] = p.hi
			} else {
				v[k] = p.lo
			}
		}
		return v
	}
	nulls := make([]int64, len(pages))
	for k, p := range pages {
		if !p.nullPage && p.lo == nil {
			return nil, offsetIndex
		}
		nullPages[k], nulls[k] = p.nullPage, p.nulls
	}
	w = compactWriter{}
	w.begin()
	w.listBools(1, nullPages)
	w.listBinary(2, bounds(false)) // a null page's are empty (nil)
	w.listBinary(3, bounds(true))
	w.i32(4, c.boundaryOrder(pages))
	w.listI64(5, nulls)
	w.end()
	return w.b, offsetIndex
}

// boundaryOrder returns how the minima and maxima of the pages with values are ordered: as
// Arrow C++ decides it, ascending when neither ever decreases from one such page to the next,
// descending when neither ever increases, unordered otherwise or when no page has values.
func (c *writeColumn) boundaryOrder(pages []pageEntry) int32 {
	var prev *pageEntry
	up, down, seen := true, true, false
	for k := range pages {
		p := &pages[k]
		if p.nullPage {
			continue
		}
		if prev != nil {
			if c.ops.less(p.lo, prev.lo) || c.ops.less(p.hi, prev.hi) {
				up = false
			}
			if c.ops.less(prev.lo, p.lo) || c.ops.less(prev.hi, p.hi) {
				down = false
			}
		}
		prev, seen = p, true
	}
	switch {
	case !seen:
		return boundaryUnordered
	case up:
		return boundaryAscending
	case down:
		return boundaryDescending
	}
	return boundaryUnordered
}

// writePageIndex writes every chunk's ColumnIndex, then every chunk's OffsetIndex, row group
// by row group, and notes where each went.
func (d *directWriter) writePageIndex() {
	for g := range d.groups {
		for i := range d.groups[g].chunks {
			m := &d.groups[g].chunks[i]
			if m.columnIndex != nil {
				m.columnIndexAt = d.pos
				d.write(m.columnIndex)
			}
		}
	}
	for g := range d.groups {
		for i := range d.groups[g].chunks {
			m := &d.groups[g].chunks[i]
			if m.offsetIndex != nil {
				m.offsetIndexAt = d.pos
				d.write(m.offsetIndex)
			}
		}
	}
}
