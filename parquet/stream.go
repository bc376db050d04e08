package parquet

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"

	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ipc"
)

// ErrNotFromFile is WriteArrowStream's error, with StreamOptions.OnlyFromFile, for a file a
// column chunk of which would be decoded: nothing is written.
var ErrNotFromFile = errors.New("parquet: a column's values would be decoded, not written from the file")

// StreamOptions configure WriteArrowStream.
type StreamOptions struct {
	// OnlyFromFile writes the stream only if every column of every row group is written from
	// the file's bytes; else WriteArrowStream writes nothing and returns ErrNotFromFile.
	OnlyFromFile bool
	// Populate has a mapped file's pages mapped in a column chunk at a time before they are
	// written (mmap.Populate), not a fault at a time as the write reads them: for an output
	// that reads what it is given (a file, a pipe, a socket). An output that discards it
	// (/dev/null) is faster without: it never reads the pages at all.
	Populate bool
}

// WriteArrowStream writes the reader's columns to w as an Arrow IPC stream of its schema, a
// record batch per row group. A column whose pages hold its values as they are — uncompressed
// PLAIN pages of fixed-width values, no null among them, levels of exactly its layout (a
// tensor column, a plain column of numbers) — is written from the file's bytes, page after
// page, never copied into memory: from a mapped file the kernel copies them from the page
// cache, and an output that discards them never reads them. The other columns are decoded as
// ReadRowGroup decodes them. Every page header and level is checked as ReadRowGroup checks
// them before any of the row group is written; a mapped file that shrinks under the write is
// an error. What an error leaves written is a stream cut short.
func (r *Reader) WriteArrowStream(w io.Writer, o StreamOptions) error {
	if r.mapping == nil {
		return r.writeArrowStream(w, o)
	}
	err := mmap.Guard(func() error { return r.writeArrowStream(w, o) })
	var fault *mmap.FaultError
	if errors.As(err, &fault) {
		return fmt.Errorf("parquet: %w", err)
	}
	return err
}

// writeArrowStream is WriteArrowStream.
func (r *Reader) writeArrowStream(w io.Writer, o StreamOptions) (err error) {
	defer recoverInvalid("writing an Arrow stream", &err)
	var planned [][]plainColumn // by row group, with OnlyFromFile: every column's pages
	if o.OnlyFromFile {
		if !r.writesFromFile() {
			return ErrNotFromFile
		}
		planned = r.fromFile
	}
	gw := &gatherWriter{w: w}
	sw := arrowipc.NewWriterWithPayloadWriter(gw, arrowipc.WithSchema(r.schema), arrowipc.WithAllocator(r.mem))
	for rg := range r.NumRowGroups() {
		var plan []plainColumn
		if planned != nil {
			plan = planned[rg]
		}
		rec, err := r.gatheredRowGroup(rg, plan, o.Populate, gw)
		if err != nil {
			return err
		}
		err = sw.Write(rec)
		rec.Release()
		gw.stands = gw.stands[:0]
		if err != nil {
			return err
		}
	}
	return sw.Close()
}

// WritesFromFile reports whether WriteArrowStream writes every column of every row group from
// the file's bytes, decoding none (what StreamOptions.OnlyFromFile asks): every column chunk
// uncompressed PLAIN fixed-width values, no null among them. It reads every page header and
// level once, for the WriteArrowStream after.
func (r *Reader) WritesFromFile() bool {
	if r.mapping == nil {
		return r.writesFromFile()
	}
	ok := false
	_ = mmap.Guard(func() error { // a fault: the file shrank, and the stream will say so
		ok = r.writesFromFile()
		return nil
	})
	return ok
}

// writesFromFile is WritesFromFile; r.fromFile keeps the pages it found.
func (r *Reader) writesFromFile() bool {
	if r.fromFile != nil {
		return true
	}
	planned := make([][]plainColumn, r.NumRowGroups())
	for rg := range planned {
		for _, c := range r.cols {
			pages, span, ok := r.plainPages(c, rg)
			if !ok {
				return false
			}
			planned[rg] = append(planned[rg], plainColumn{pages, span})
		}
	}
	r.fromFile = planned
	return true
}

// plainColumn is a column chunk's pages of PLAIN values (plainPages).
type plainColumn struct {
	pages [][]byte
	span  valuesSpan
}

// gatheredRowGroup returns row group rg as a record whose columns of PLAIN uncompressed
// values (plainPages, or plan: every column's) hold a stand-in buffer that gw writes the
// pages for (populated first, with populate); the other columns are decoded.
func (r *Reader) gatheredRowGroup(rg int, plan []plainColumn, populate bool, gw *gatherWriter) (arrow.Record, error) {
	rows := r.RowGroupRows(rg)
	cols := make([]arrow.Array, len(r.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	decoded := *r // the columns left to decode, as ReadRowGroup decodes them
	decoded.cols = nil
	var fields []arrow.Field
	var at []int
	for k, c := range r.cols {
		var pages [][]byte
		var span valuesSpan
		ok := plan != nil
		if ok {
			pages, span = plan[k].pages, plan[k].span
		} else {
			pages, span, ok = r.plainPages(c, rg)
		}
		if !ok {
			decoded.cols = append(decoded.cols, c)
			fields = append(fields, r.schema.Field(k))
			at = append(at, k)
			continue
		}
		cp, _ := arenaPlanOf(c)
		// The stand-in: as many bytes of the column chunk, which holds the pages and more; gw
		// knows it by its address and length, and writes the pages instead. Nothing reads it.
		stand := r.b[span.start : span.start+span.size : span.start+span.size]
		gw.stands = append(gw.stands, gathered{stand: stand, pages: pages})
		if populate && r.mapping != nil {
			mmap.Populate(stand) // the chunk's pages from the first's values to the last's
		}
		arr, err := cp.array(memory.NewBufferBytes(stand), rows, nil, 0)
		if err != nil {
			return nil, err
		}
		cols[k] = arr
	}
	if len(decoded.cols) > 0 {
		decoded.schema = arrow.NewSchema(fields, nil)
		rec, err := decoded.ReadRowGroup(rg)
		if err != nil {
			return nil, err
		}
		for j, k := range at {
			cols[k] = rec.Column(j)
			cols[k].Retain()
		}
		rec.Release()
	}
	out := array.NewRecord(r.schema, cols, rows)
	return out, nil
}

// valuesSpan is where in the file a stand-in buffer of size bytes begins.
type valuesSpan struct{ start, size int64 }

// plainPages returns the values of column c in row group rg, page by page, as views of the
// file, and a span of the file as long as them all, when the direct path would copy them as
// they are: every data page PLAIN and uncompressed, no dictionary, no null value, levels of
// exactly the column's layout. ok is false for any other chunk, and for a chunk
// checkColumnChunk refuses (ReadRowGroup then says why).
func (r *Reader) plainPages(c column, rg int) (pages [][]byte, span valuesSpan, ok bool) {
	plan, ok := arenaPlanOf(c)
	if !ok || r.general {
		return nil, span, false
	}
	leaf := c.leaves[0]
	descr := r.md.Schema.Column(leaf)
	if descr.PhysicalType() != plan.phys || int(descr.MaxRepetitionLevel()) != len(plan.sizes) || !plan.sameNesting(c.pqType) ||
		plan.phys == pq.Types.FixedLenByteArray && int64(descr.TypeLength()) != plan.width {
		return nil, span, false
	}
	if _, err := checkColumnChunk(r.b, r.md, rg, leaf, r.lim.MaxCopySize, r.lim); err != nil {
		return nil, span, false
	}
	m := r.md.FileMetaData.RowGroups[rg].Columns[leaf].MetaData
	rows := r.RowGroupRows(rg)
	hi, want := bits.Mul64(uint64(rows), uint64(plan.cell))
	if m.Codec != 0 || m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 ||
		rows < 0 || hi != 0 || want > uint64(r.lim.MaxElements) || int64(want) != m.NumValues {
		return nil, span, false
	}
	start := m.DataPageOffset // the chunk is inside the file: checkColumnChunk
	chunk := r.b[start : start+m.TotalCompressedSize]
	reps := levelCheck{max: len(plan.sizes), periods: periodsOf(plan.sizes), rep: true}
	defs := levelCheck{max: int(descr.MaxDefinitionLevel())}
	at := int64(0)
	for pos := 0; at < int64(want); {
		h, page, next, ok := nextDirectPage(chunk, pos, 0, false, int64(want)-at)
		if !ok {
			return nil, span, false
		}
		pos = next
		if h.typ == pageIndex {
			continue
		}
		n := int64(h.numValues)
		if h.encoding != 0 {
			return nil, span, false
		}
		var values []byte
		if h.typ == pageDataV2 {
			levels := int(h.repBytes) + int(h.defBytes)
			if h.repBytes < 0 || h.defBytes < 0 || levels > len(page) || h.numNulls != 0 ||
				!reps.check(page[:h.repBytes], n, at) || !defs.check(page[h.repBytes:levels], n, at) {
				return nil, span, false
			}
			values = page[levels:]
		} else {
			if h.repEncoding != 3 && reps.max > 0 || h.defEncoding != 3 && defs.max > 0 {
				return nil, span, false
			}
			rest, ok := reps.checkPrefixed(page, n, at)
			if !ok {
				return nil, span, false
			}
			if values, ok = defs.checkPrefixed(rest, n, at); !ok {
				return nil, span, false
			}
		}
		if int64(len(values)) != n*plan.width {
			return nil, span, false
		}
		if len(values) > 0 {
			pages = append(pages, values)
		}
		at += n
	}
	return pages, valuesSpan{start: start, size: int64(want) * plan.width}, true
}

// gathered is a stand-in buffer and the pages it stands for.
type gathered struct {
	stand []byte
	pages [][]byte
}

// gatherWriter writes the Arrow IPC stream of WriteArrowStream: each message's metadata, then
// its body's buffers, a stand-in buffer's pages in its place.
type gatherWriter struct {
	w      io.Writer
	stands []gathered // the row group's being written
}

// Start is the PayloadWriter's: the schema comes as the first payload.
func (g *gatherWriter) Start() error { return nil }

// WritePayload writes one message: its metadata, then its body.
func (g *gatherWriter) WritePayload(p arrowipc.Payload) error {
	meta := p.Meta()
	defer meta.Release()
	if err := ipc.WriteMessageMetadata(g.w, meta.Bytes()); err != nil {
		return err
	}
	return p.SerializeBody(bodyWriter{g})
}

// Close writes the end-of-stream marker.
func (g *gatherWriter) Close() error { return ipc.WriteEndOfStream(g.w) }

// errStandIn reports a body buffer that is part of a stand-in, not all of it: what it stands
// for cannot be written (arrow-go's writer sliced it).
var errStandIn = errors.New("parquet: a column's buffer written in part")

// bodyWriter writes a body's buffers, the pages of a stand-in in its place.
type bodyWriter struct{ g *gatherWriter }

// Write writes b, or the pages b stands for.
func (bw bodyWriter) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, s := range bw.g.stands {
		slo := uintptr(unsafe.Pointer(unsafe.SliceData(s.stand)))
		if lo+uintptr(len(b)) <= slo || slo+uintptr(len(s.stand)) <= lo {
			continue
		}
		if lo != slo || len(b) != len(s.stand) {
			return 0, errStandIn
		}
		for _, p := range s.pages {
			if _, err := bw.g.w.Write(p); err != nil {
				return 0, err
			}
		}
		return len(b), nil
	}
	return bw.g.w.Write(b)
}
