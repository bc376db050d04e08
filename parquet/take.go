package parquet

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"

	"github.com/ndarrow/ndarrow/internal/memcopy"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/limits"
)

// Random row access. TakeRows reads, of a tensor column (fixed-size lists, at any depth, of a
// fixed-width number, or a flat fixed-width number) without a dictionary, only the pages that
// hold the rows asked for, found from the column chunk's OffsetIndex (pageindex.go) or, without
// one, by walking its page headers. Of a PLAIN page stored uncompressed whose levels say every
// value is there, each row is at a known place — the values follow the levels, and row k of
// the page starts (k - first row) × cell × width bytes into them — so only the page's header,
// its levels and those rows' bytes are read: the levels are checked, run by run as the direct
// path checks them (direct.go), to describe exactly the fixed-size layout, and the rows'
// bytes are copied. A compressed page (or one in BYTE_STREAM_SPLIT) holding a row asked for is
// decompressed once, as the direct path does it, and its rows copied. Any other column, or a
// page that is not so (a null, a dictionary, another encoding, levels of another shape, a
// page whose header disagrees with the index), has the whole column chunk decoded as
// ReadRowGroup decodes it, every page header checked first, and the rows gathered from it.
//
// TakeRanges says which bytes that reads, from the footer and the OffsetIndex alone, for a
// caller that fetches only those (an object in object storage): for a column TakeRows reads
// row by row, each page's header and levels — the page's bytes before its values, which are
// its last rows × cell × width bytes — and the rows' bytes; whole pages of compressed columns;
// whole column chunks of the rest. A file whose pages contradict its footer (a page with nulls
// the statistics do not count, a compressed page in a chunk whose codec is none) makes TakeRows
// read past those ranges, a fault on an object that a Guard turns into an error.

// TakeRows returns rows rows of row group rowGroup — row numbers local to it, strictly
// increasing, each below its number of rows — of the reader's columns, in that order, as a
// record of the reader's schema whose memory is the Allocator's: Release it. It reads only the
// pages holding those rows where it can (see take.go), else decodes the column's chunk as
// ReadRowGroup does and gathers the rows; every length is checked first, and a panic becomes
// an error wrapping ErrInvalid. Row numbers out of order, repeated or out of range are an
// error wrapping ErrInvalid.
func (r *Reader) TakeRows(rowGroup int, rows []int64) (rec arrow.Record, err error) {
	if r.mapping != nil { // a mapped file may shrink under the read
		err = mmap.Guard(func() error {
			var err error
			rec, err = r.takeRows(rowGroup, rows)
			return err
		})
		var fault *mmap.FaultError
		if errors.As(err, &fault) {
			return nil, fmt.Errorf("parquet: row group %d: %w", rowGroup, err)
		}
		return rec, err
	}
	return r.takeRows(rowGroup, rows)
}

// TakeRanges returns the byte ranges of the file, sorted and coalesced, that TakeRows(rowGroup,
// rows) reads besides the footer and the ranges PageIndexRanges(rowGroup) gives, which must be
// in memory before it is called (it reads the offset indexes): for a tensor column stored
// PLAIN and uncompressed, each page's header and levels and the rows' bytes; for a compressed
// one, the pages holding the rows; for any other column, or a column chunk without an offset
// index, the whole column chunk (as ChunkRanges). Its errors are TakeRows'.
func (r *Reader) TakeRanges(rowGroup int, rows []int64) (out []ByteRange, err error) {
	if r.mapping != nil { // a mapped file may shrink under the read
		err = mmap.Guard(func() error {
			var err error
			out, err = r.takeRanges(rowGroup, rows)
			return err
		})
		var fault *mmap.FaultError
		if errors.As(err, &fault) {
			return nil, fmt.Errorf("parquet: row group %d: %w", rowGroup, err)
		}
		return out, err
	}
	return r.takeRanges(rowGroup, rows)
}

// takeRanges is TakeRanges.
func (r *Reader) takeRanges(rowGroup int, rows []int64) (out []ByteRange, err error) {
	defer recoverInvalid(fmt.Sprintf("row group %d", rowGroup), &err)
	if err := r.checkTake(rowGroup, rows); err != nil {
		return nil, err
	}
	for _, c := range r.cols {
		ranges, err := r.takeColumnRanges(c, rowGroup, rows)
		if err != nil {
			return nil, fmt.Errorf("parquet: row group %d column %s: %w", rowGroup, c.field.Name, err)
		}
		out = append(out, ranges...)
	}
	return coalesce(out), nil
}

// takeColumnRanges returns the ranges TakeRows reads of column c (see TakeRanges).
func (r *Reader) takeColumnRanges(c column, rg int, rows []int64) ([]ByteRange, error) {
	whole := func() []ByteRange {
		var out []ByteRange
		for _, leaf := range c.leaves {
			if br, ok := r.chunkRange(rg, leaf); ok {
				out = append(out, br)
			}
		}
		return out
	}
	tc, ok := r.takeColumnOf(c, rg)
	if !ok || !r.hasOffsetIndex(rg, tc.leaf) {
		return whole(), nil
	}
	pages, err := r.readOffsetIndex(rg, tc.leaf)
	if err != nil {
		return nil, err
	}
	var out []ByteRange
	if tc.dict != 0 && len(rows) > 0 { // the dictionary page: from its offset to the first data page
		if len(pages) == 0 || pages[0].offset <= tc.dict {
			return whole(), nil
		}
		out = append(out, ByteRange{tc.dict, pages[0].offset - tc.dict})
	}
	i := 0
	for _, p := range pages {
		if i == len(rows) {
			break
		}
		end := p.firstRow + p.rows
		if rows[i] >= end {
			continue
		}
		if !tc.rowsOnly {
			out = append(out, ByteRange{p.offset, p.size})
			for i < len(rows) && rows[i] < end {
				i++
			}
			continue
		}
		hi, values := bits.Mul64(uint64(p.rows), uint64(tc.rowBytes))
		if hi != 0 || values >= uint64(p.size) {
			return whole(), nil // not a page TakeRows reads row by row: it decodes the chunk
		}
		at := p.offset + p.size - int64(values) // the first value
		out = append(out, ByteRange{p.offset, at - p.offset})
		for ; i < len(rows) && rows[i] < end; i++ {
			out = append(out, ByteRange{at + (rows[i]-p.firstRow)*tc.rowBytes, tc.rowBytes})
		}
	}
	return out, nil
}

// checkTake checks row group rg and the rows asked of it.
func (r *Reader) checkTake(rg int, rows []int64) error {
	if rg < 0 || rg >= r.NumRowGroups() {
		return fmt.Errorf("parquet: row group %d of %d: %w", rg, r.NumRowGroups(), ErrInvalid)
	}
	n := r.RowGroupRows(rg)
	for i, row := range rows {
		switch {
		case row < 0 || row >= n:
			return fmt.Errorf("parquet: row group %d: row %d of %d: %w", rg, row, n, ErrInvalid)
		case i > 0 && row <= rows[i-1]:
			return fmt.Errorf("parquet: row group %d: row %d after row %d: rows must be strictly increasing: %w", rg, row, rows[i-1], ErrInvalid)
		}
	}
	return nil
}

// takeRows is TakeRows.
func (r *Reader) takeRows(rg int, rows []int64) (rec arrow.Record, err error) {
	defer recoverInvalid(fmt.Sprintf("row group %d", rg), &err)
	if err := r.checkTake(rg, rows); err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, 0, len(r.cols))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range r.cols {
		arr, err := r.takeDirect(c, rg, rows)
		if errors.Is(err, errNotDirect) {
			arr, err = r.takeDecoded(c, rg, rows)
		}
		if err != nil {
			return nil, fmt.Errorf("parquet: row group %d column %s: %w", rg, c.field.Name, err)
		}
		cols = append(cols, arr)
	}
	return array.NewRecord(r.schema, cols, int64(len(rows))), nil
}

// takeColumn is a column TakeRows reads page by page.
type takeColumn struct {
	plan       directPlan
	leaf       int
	rowBytes   int64 // cell × width
	codec      int32
	decode     func(dst, src []byte) error
	reps, defs levelCheck
	rowsOnly   bool // uncompressed, PLAIN values and RLE levels as the footer says: read row by row
	// dict, dictEnd: the file offset of the chunk's dictionary page (0: none) and where the
	// chunk ends.
	dict, dictEnd int64
}

// takeColumnOf returns how TakeRows reads column c of row group rg page by page, false for a
// column whose chunk it decodes whole. It decides from the footer alone.
func (r *Reader) takeColumnOf(c column, rg int) (takeColumn, bool) {
	var tc takeColumn
	if r.general || c.parts != nil || len(c.leaves) != 1 {
		return tc, false
	}
	if _, _, ok := listPlanOf(c.field.Type); ok {
		return tc, false
	}
	if _, _, ok := nestedPlanOf(c.field.Type); ok {
		return tc, false
	}
	plan, ok := directPlanOf(c.field.Type)
	if !ok || plan.bitPacked || plan.decimal {
		return tc, false
	}
	leaf := c.leaves[0]
	descr := r.md.Schema.Column(leaf)
	if plan.width <= 0 || descr.PhysicalType() != plan.phys || int(descr.MaxRepetitionLevel()) != len(plan.sizes) || !plan.sameNesting(c.pqType) ||
		plan.phys == pq.Types.FixedLenByteArray && int64(descr.TypeLength()) != plan.width {
		return tc, false
	}
	cc := r.md.FileMetaData.RowGroups[rg].Columns[leaf]
	m := cc.MetaData
	if m == nil || cc.FilePath != nil && *cc.FilePath != "" || cc.CryptoMetadata != nil || cc.EncryptedColumnMetadata != nil {
		return tc, false
	}
	decode := pageDecoders[int32(m.Codec)]
	if m.Codec != 0 && decode == nil {
		return tc, false
	}
	if s := m.Statistics; s != nil && s.NullCount != nil && *s.NullCount != 0 {
		return tc, false // a null value: the row group's decoding spaces it out
	}
	rows := r.RowGroupRows(rg)
	hi, want := bits.Mul64(uint64(rows), uint64(plan.cell))
	if hi != 0 || want > uint64(r.lim.MaxElements) || int64(want) != m.NumValues {
		return tc, false
	}
	if hi, lo := bits.Mul64(uint64(plan.cell), uint64(plan.width)); hi != 0 || lo > uint64(r.lim.MaxCopySize) {
		return tc, false
	}
	tc = takeColumn{
		plan: plan, leaf: leaf, rowBytes: plan.cell * plan.width, codec: int32(m.Codec), decode: decode,
		reps: levelCheck{max: len(plan.sizes), periods: periodsOf(plan.sizes), rep: true},
		defs: levelCheck{max: int(descr.MaxDefinitionLevel())},
	}
	tc.rowsOnly = m.Codec == 0
	hasDict := false
	for _, e := range m.Encodings {
		switch e {
		case 0, 3: // PLAIN values, RLE levels
		case encodingPlainDictionary, encodingRLEDictionary: // data pages of indices: decoded
			hasDict, tc.rowsOnly = true, false
		default:
			tc.rowsOnly = false
		}
	}
	if m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 {
		start, end, err := r.chunkBounds(rg, leaf)
		if err != nil || start != *m.DictionaryPageOffset {
			return takeColumn{}, false
		}
		tc.dict, tc.dictEnd, tc.rowsOnly = start, end, false
	} else if hasDict {
		return takeColumn{}, false // indices without a dictionary
	}
	return tc, true
}

// takeDirect reads rows rows of column c of row group rg from the pages holding them;
// errNotDirect has the caller decode the chunk instead.
func (r *Reader) takeDirect(c column, rg int, rows []int64) (arrow.Array, error) {
	tc, ok := r.takeColumnOf(c, rg)
	if !ok {
		return nil, errNotDirect
	}
	var pages []pageLoc
	if r.hasOffsetIndex(rg, tc.leaf) {
		var err error
		if pages, err = r.readOffsetIndex(rg, tc.leaf); err != nil {
			return nil, err
		}
	} else {
		var err error
		if pages, ok, err = r.walkPages(rg, tc.leaf, tc.plan.cell); err != nil {
			return nil, err
		} else if !ok {
			return nil, errNotDirect
		}
	}
	hi, size := bits.Mul64(uint64(len(rows)), uint64(tc.rowBytes))
	if hi != 0 || size > uint64(r.lim.MaxCopySize) {
		return nil, fmt.Errorf("%d rows of %d bytes, more than MaxCopySize %d: %w", len(rows), tc.rowBytes, r.lim.MaxCopySize, limits.ErrExceeded)
	}
	out := memory.NewResizableBuffer(r.mem)
	defer out.Release()
	out.Resize(int(size))
	dst := out.Bytes()
	var scratch takeScratch
	i := 0 // the next row to place
	for _, p := range pages {
		if i == len(rows) {
			break
		}
		if p.dictionary {
			if p.offset != tc.dict {
				return nil, errNotDirect
			}
			continue // read with the first page of indices (takeDictionary)
		}
		end := p.firstRow + p.rows
		if rows[i] >= end {
			continue
		}
		values, ok := r.takePageValues(tc, p, &scratch)
		if !ok {
			return nil, errNotDirect
		}
		for ; i < len(rows) && rows[i] < end; i++ {
			from := (rows[i] - p.firstRow) * tc.rowBytes
			memcopy.Copy(dst[int64(i)*tc.rowBytes:int64(i+1)*tc.rowBytes], values[from:from+tc.rowBytes])
		}
	}
	if i != len(rows) {
		return nil, fmt.Errorf("rows from %d in no page: %w", rows[i], ErrInvalid)
	}
	return tc.plan.array(out, int64(len(rows)), nil, 0)
}

// takeScratch holds the buffers of decompressed and unsplit pages, reused page to page, and
// the chunk's dictionary once read.
type takeScratch struct{ page, unsplit, dict []byte }

// takeDictionary returns the values of the dictionary page of column tc's chunk, decoded once
// per take (or taken from the page cache), checked as takePageValues checks a page.
func (r *Reader) takeDictionary(tc takeColumn, scratch *takeScratch) ([]byte, bool) {
	if scratch.dict != nil {
		return scratch.dict, true
	}
	if tc.dict <= 0 || tc.dictEnd > int64(len(r.b)) || tc.dict >= tc.dictEnd {
		return nil, false
	}
	keep := func(values []byte) []byte { return values }
	if r.pages != nil {
		v, ok := r.pages.Values(tc.dict)
		if ok && int64(len(v))%tc.plan.width == 0 {
			scratch.dict = v
			return v, true
		}
		kept := false
		if !ok { // this take decodes the dictionary: its claim ends with Keep
			defer func() {
				if !kept {
					r.pages.Keep(tc.dict, nil)
				}
			}()
		}
		keep = func(values []byte) []byte {
			kept = true
			if v := r.pages.Keep(tc.dict, values); len(v) == len(values) {
				return v
			}
			return values
		}
	}
	h, page, _, ok := nextPage(r.b[tc.dict:tc.dictEnd], 0, tc.codec, false, 0, true)
	if !ok || h.typ != pageDictionary {
		return nil, false
	}
	if tc.codec != 0 && (int64(h.uncompressed) > int64(h.compressed)*maxExpansion(tc.codec)+64 || int64(h.uncompressed) > r.lim.MaxCopySize) {
		return nil, false
	}
	values, ok := dictionaryValues(h, page, true, tc.codec, tc.decode, tc.plan.width)
	if !ok {
		return nil, false
	}
	values = keep(values)
	scratch.dict = values
	return values, true
}

func resized(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// takePageValues returns the values of page p of column tc — p.rows × rowBytes bytes, a view of
// the file for a PLAIN page stored as it is, else decompressed or unsplit into scratch — after
// checking the page's header against the location and its levels against the fixed-size
// layout without nulls. ok is false for any other page.
func (r *Reader) takePageValues(tc takeColumn, p pageLoc, scratch *takeScratch) (values []byte, ok bool) {
	chunk := r.b[p.offset : p.offset+p.size]   // inside the chunk: checkPageLocs, walkPages
	if at, ok := r.plainValues[p.offset]; ok { // checked by an earlier take: the values in place
		return chunk[at:], true
	}
	want := p.rows * tc.rowBytes
	keep := func(values []byte) []byte { return values }
	if r.pages != nil { // decoded and checked by an earlier take, or by this one
		v, ok := r.pages.Values(p.offset)
		if ok && int64(len(v)) == want {
			return v, true
		}
		kept := false
		if !ok { // this take decodes the page: its claim ends with Keep, kept or not
			defer func() {
				if !kept {
					r.pages.Keep(p.offset, nil)
				}
			}()
		}
		keep = func(values []byte) []byte {
			kept = true
			if v := r.pages.Keep(p.offset, values); int64(len(v)) == want {
				return v
			}
			return values
		}
	}
	n := p.rows * tc.plan.cell
	h, page, next, ok := nextPage(chunk, 0, tc.codec, false, n, tc.dict != 0)
	if !ok || next != len(chunk) || h.typ == pageIndex || h.typ == pageDictionary || int64(h.numValues) != n {
		return nil, false
	}
	indices := h.encoding == encodingPlainDictionary || h.encoding == encodingRLEDictionary
	first := p.firstRow * tc.plan.cell
	compressed := tc.codec != 0 && (h.typ != pageDataV2 || !h.v2Uncompressed)
	if compressed && (int64(h.uncompressed) > int64(h.compressed)*maxExpansion(tc.codec)+64 || int64(h.uncompressed) > r.lim.MaxCopySize) {
		return nil, false
	}
	if h.typ == pageDataV2 {
		levels := int64(h.repBytes) + int64(h.defBytes)
		if levels > int64(len(page)) || levels > int64(h.uncompressed) || h.numNulls != 0 ||
			!tc.reps.check(page[:h.repBytes], n, first) || !tc.defs.check(page[h.repBytes:levels], n, first) ||
			!indices && int64(h.uncompressed)-levels != want {
			return nil, false
		}
		values = page[levels:]
		if compressed {
			scratch.page = resized(scratch.page, int(int64(h.uncompressed)-levels))
			if tc.decode(scratch.page, values) != nil {
				return nil, false
			}
			values = scratch.page
		}
	} else {
		if h.repEncoding != 3 && tc.reps.max > 0 || h.defEncoding != 3 && tc.defs.max > 0 {
			return nil, false // BIT_PACKED levels, deprecated
		}
		if compressed {
			scratch.page = resized(scratch.page, int(h.uncompressed))
			if tc.decode(scratch.page, page) != nil {
				return nil, false
			}
			page = scratch.page
		}
		rest, ok := tc.reps.checkPrefixed(page, n, first)
		if !ok {
			return nil, false
		}
		if values, ok = tc.defs.checkPrefixed(rest, n, first); !ok {
			return nil, false
		}
	}
	if indices { // the dictionary's entries they name
		dict, ok := r.takeDictionary(tc, scratch)
		scratch.unsplit = resized(scratch.unsplit, int(want))
		if !ok || !lookUp(scratch.unsplit, values, dict, tc.plan.width) {
			return nil, false
		}
		values = scratch.unsplit
	}
	if int64(len(values)) != want {
		return nil, false
	}
	if h.encoding == encodingByteStreamSplit {
		scratch.unsplit = resized(scratch.unsplit, int(want))
		unsplit(scratch.unsplit, values, int(tc.plan.width))
		values = scratch.unsplit
	}
	decoded := compressed || indices || h.encoding == encodingByteStreamSplit
	switch {
	case decoded: // kept, decoded once
		return keep(values), true
	default: // the page's last bytes: the next take of the reader goes straight to them
		if r.plainValues == nil {
			r.plainValues = map[int64]int64{}
		}
		r.plainValues[p.offset] = int64(len(chunk) - len(values))
	}
	return values, true
}

// takeDecoded decodes column c of row group rg as ReadRowGroup does, every page header checked
// first, and gathers rows rows of it.
func (r *Reader) takeDecoded(c column, rg int, rows []int64) (arrow.Array, error) {
	var key int64
	claimed := false    // this take decodes the chunk for the cache: the claim ends with KeepChunk
	if r.pages != nil { // decoded by an earlier take
		start, _, err := r.chunkBounds(rg, c.leaves[0])
		if err != nil {
			return nil, err
		}
		key = start
		arr, ok := r.pages.Chunk(key)
		if ok {
			defer arr.Release()
			if arr.Len() == int(r.RowGroupRows(rg)) && arrow.TypeEqual(arr.DataType(), c.field.Type) {
				return gather(r.mem, arr, rows)
			}
		} else {
			claimed = true
			defer func() {
				if claimed {
					r.pages.KeepChunk(key, nil)
				}
			}()
		}
	}
	n := r.RowGroupRows(rg)
	budget := r.lim.MaxCopySize
	only := "" // an encoding only the direct path reads
	for _, leaf := range c.leaves {
		cost, err := checkColumnChunk(r.b, r.md, rg, leaf, budget, r.lim)
		if e := cost.directOnly(); e != "" {
			only = e
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.md.Schema.Column(leaf).Path(), err)
		}
		if cost.levels < n {
			return nil, fmt.Errorf("%s has %d values for %d rows: %w", r.md.Schema.Column(leaf).Path(), cost.levels, n, ErrInvalid)
		}
		budget -= cost.bytes
	}
	r.expansion = max(budget, 0)
	arr, err := r.readColumn(c, rg, n, only)
	if err != nil {
		return nil, err
	}
	if r.pages != nil {
		claimed = false
		kept := r.pages.KeepChunk(key, arr)
		arr.Release()
		arr = kept
	}
	defer arr.Release()
	return gather(r.mem, arr, rows)
}

// gather returns a copy of rows rows (strictly increasing, inside arr) of arr, from mem.
func gather(mem memory.Allocator, arr arrow.Array, rows []int64) (arrow.Array, error) {
	var runs []arrow.Array
	defer func() {
		for _, s := range runs {
			s.Release()
		}
	}()
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 {
			j++
		}
		runs = append(runs, array.NewSlice(arr, rows[i], rows[j-1]+1))
		i = j
	}
	if len(runs) == 0 {
		runs = append(runs, array.NewSlice(arr, 0, 0))
	}
	out, err := array.Concatenate(runs, mem)
	if err != nil {
		return nil, fmt.Errorf("gathering rows: %v: %w", err, ErrInvalid)
	}
	return out, nil
}
