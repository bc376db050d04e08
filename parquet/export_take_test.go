package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/parquet/metadata"
)

// WithOffsetIndex returns a copy of the Parquet file b with an OffsetIndex written (after the
// column chunks, before the footer) for every column chunk of a flat or tensor column whose
// pages hold whole rows, as a writer of page indexes writes it; other chunks get none.
func WithOffsetIndex(b []byte) ([]byte, error) {
	r, err := NewReader(b, ReaderOptions{})
	if err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	md, err := metadata.NewFileMetaData(b[int64(len(b))-8-n:len(b)-8], nil)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(b[:int64(len(b))-8-n])
	for rg := range r.NumRowGroups() {
		for _, c := range r.cols {
			if len(c.leaves) != 1 {
				continue
			}
			plan, ok := directPlanOf(c.field.Type)
			descr := r.md.Schema.Column(c.leaves[0])
			if !ok || int(descr.MaxRepetitionLevel()) != len(plan.sizes) {
				continue
			}
			pages, ok, err := r.walkPages(rg, c.leaves[0], plan.cell)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			var locs [][3]int64
			for _, p := range pages {
				if !p.dictionary {
					locs = append(locs, [3]int64{p.offset, p.size, p.firstRow})
				}
			}
			at := int64(len(out))
			out = append(out, EncodeOffsetIndex(locs)...)
			cc := md.FileMetaData.RowGroups[rg].Columns[c.leaves[0]]
			length := int32(int64(len(out)) - at)
			cc.OffsetIndexOffset, cc.OffsetIndexLength = &at, &length
		}
	}
	var footer bytes.Buffer
	if _, err := md.WriteTo(&footer, nil); err != nil {
		return nil, err
	}
	out = append(out, footer.Bytes()...)
	out = binary.LittleEndian.AppendUint32(out, uint32(footer.Len()))
	return append(out, magic...), nil
}

// EncodeOffsetIndex writes pages (offset, size, first row each) as a compact-Thrift
// OffsetIndex.
func EncodeOffsetIndex(pages [][3]int64) []byte {
	zz := func(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
	out := []byte{0x19} // field 1, a list
	if len(pages) < 15 {
		out = append(out, byte(len(pages))<<4|thriftStruct)
	} else {
		out = append(out, 0xf0|thriftStruct)
		out = binary.AppendUvarint(out, uint64(len(pages)))
	}
	for _, p := range pages {
		out = append(out, 0x16)
		out = binary.AppendUvarint(out, zz(p[0]))
		out = append(out, 0x15)
		out = binary.AppendUvarint(out, zz(p[1]))
		out = append(out, 0x16)
		out = binary.AppendUvarint(out, zz(p[2]))
		out = append(out, 0)
	}
	return append(out, 0)
}

// PageLocations returns, for leaf column leaf of row group rg, the pages its OffsetIndex
// gives (offset, size, first row, rows each) and those a walk of its page headers finds (data
// pages of any column: offset and size).
func PageLocations(r *Reader, rg, leaf int) (indexed, walked [][4]int64, err error) {
	if r.hasOffsetIndex(rg, leaf) {
		pages, err := r.readOffsetIndex(rg, leaf)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range pages {
			indexed = append(indexed, [4]int64{p.offset, p.size, p.firstRow, p.rows})
		}
	}
	start, end, err := r.chunkBounds(rg, leaf)
	if err != nil {
		return nil, nil, err
	}
	m := r.md.FileMetaData.RowGroups[rg].Columns[leaf].MetaData
	seen := int64(0)
	for pos := start; seen < m.NumValues && pos < end; {
		h, err := readPageHeader(r.b[pos:end])
		if err != nil {
			return nil, nil, err
		}
		size := int64(h.headerLen) + int64(h.compressed)
		if h.typ == pageData || h.typ == pageDataV2 {
			walked = append(walked, [4]int64{pos, size})
			seen += int64(h.numValues)
		}
		pos += size
	}
	if seen != m.NumValues {
		return nil, nil, fmt.Errorf("%d values of %d", seen, m.NumValues)
	}
	return indexed, walked, nil
}

// TakesDirectly returns the columns of r that TakeRows reads page by page in row group rg.
func TakesDirectly(r *Reader, rg int) []string {
	var out []string
	for _, c := range r.cols {
		if _, ok := r.takeColumnOf(c, rg); ok {
			out = append(out, c.field.Name)
		}
	}
	return out
}

// NumLeaves returns the number of leaf columns of r's file.
func NumLeaves(r *Reader) int { return r.md.Schema.NumColumns() }

// ReplaceOffsetIndex returns a copy of the Parquet file b whose column chunk of leaf column
// leaf in row group rg has the OffsetIndex index (nil: none).
func ReplaceOffsetIndex(t interface{ Fatal(...any) }, b []byte, rg, leaf int, index []byte) []byte {
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	md, err := metadata.NewFileMetaData(b[int64(len(b))-8-n:len(b)-8], nil)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(b[:int64(len(b))-8-n])
	cc := md.FileMetaData.RowGroups[rg].Columns[leaf]
	if index == nil {
		cc.OffsetIndexOffset, cc.OffsetIndexLength = nil, nil
	} else {
		at, length := int64(len(out)), int32(len(index))
		out = append(out, index...)
		cc.OffsetIndexOffset, cc.OffsetIndexLength = &at, &length
	}
	var footer bytes.Buffer
	if _, err := md.WriteTo(&footer, nil); err != nil {
		t.Fatal(err)
	}
	out = append(out, footer.Bytes()...)
	out = binary.LittleEndian.AppendUint32(out, uint32(footer.Len()))
	return append(out, magic...)
}

// ColumnIndexFields is a ColumnIndex as decodeThriftStruct reads it: per page whether it holds
// only nulls, its nulls, its PLAIN minimum and maximum; the boundary order (0 unordered, 1
// ascending, 2 descending).
type ColumnIndexFields struct {
	NullPages     []bool
	NullCounts    []int64
	Mins, Maxs    [][]byte
	BoundaryOrder int64
}

// ColumnIndexOf decodes the ColumnIndex of leaf column leaf of row group rg of r's file; nil
// when the footer names none.
func ColumnIndexOf(r *Reader, rg, leaf int) (*ColumnIndexFields, error) {
	cc := r.md.FileMetaData.RowGroups[rg].Columns[leaf]
	if cc.ColumnIndexOffset == nil || cc.ColumnIndexLength == nil {
		return nil, nil
	}
	at, n := *cc.ColumnIndexOffset, int64(*cc.ColumnIndexLength)
	if at < 0 || n < 0 || at+n > int64(len(r.b)) {
		return nil, fmt.Errorf("a column index at [%d, +%d) outside the file", at, n)
	}
	ci, err := decodeThriftStruct(r.b[at : at+n])
	if err != nil {
		return nil, err
	}
	out := &ColumnIndexFields{}
	out.BoundaryOrder, _ = ci[4].(int64)
	for _, v := range asList(ci[1]) {
		out.NullPages = append(out.NullPages, v.(bool))
	}
	for _, v := range asList(ci[2]) {
		out.Mins = append(out.Mins, v.([]byte))
	}
	for _, v := range asList(ci[3]) {
		out.Maxs = append(out.Maxs, v.([]byte))
	}
	for _, v := range asList(ci[5]) {
		out.NullCounts = append(out.NullCounts, v.(int64))
	}
	return out, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
