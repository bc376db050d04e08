package ipc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
)

// BatchOptions configure the record-batch readers. The zero value reads within the default
// limits, allocates copies from memory.DefaultAllocator, and refuses a column of a type it
// builds no arrays for.
type BatchOptions struct {
	// Limits bound what the input may claim; zero fields take their defaults.
	Limits Limits
	// Allocator is where the reader allocates what it cannot view in its input: decompressed
	// buffers, byte-swapped big-endian ones, realigned ones and merged dictionary deltas.
	Allocator memory.Allocator
	// SkipUnsupported drops the columns of types the reader builds no arrays for (unions,
	// binary and list views, run-end encoded, decimal32 and decimal64, and anything holding
	// them) from the schema and the records, walking past their buffers. Without it such a
	// column is an error wrapping ErrUnsupported that names the column and the type.
	SkipUnsupported bool
	// Reserve, when set, is called before the reader allocates n bytes of a copy (a
	// decompressed, byte-swapped or realigned buffer, a merged dictionary): an error it
	// returns stops the read, with nothing allocated, and is returned wrapped. A server
	// counts what a peer's bytes make it allocate this way (flight's memory budget).
	Reserve func(n int64) error
}

// decoder holds what the messages of one stream, file or Flight stream share: the schema, the
// dictionaries read so far, and the copies made.
type decoder struct {
	plan   *schemaPlan
	schema *arrow.Schema
	lim    Limits
	copies copier
	dicts  map[int64]arrow.ArrayData
	file   bool // a file: a dictionary is never replaced, only extended by deltas
}

func newDecoder(plan *schemaPlan, opts BatchOptions, file bool) (*decoder, error) {
	schema, err := plan.arrowSchema(opts.SkipUnsupported)
	if err != nil {
		return nil, err
	}
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	lim := opts.Limits.WithDefaults()
	return &decoder{
		plan: plan, schema: schema, lim: lim, file: file,
		copies: copier{mem: mem, lim: lim, reserve: opts.Reserve},
		dicts:  map[int64]arrow.ArrayData{},
	}, nil
}

// release releases the dictionaries and the decompressor.
func (d *decoder) release() {
	for id, dict := range d.dicts {
		dict.Release()
		delete(d.dicts, id)
	}
	d.copies.close()
}

// decode reads one message whose metadata is verified: a record batch gives a record, a
// dictionary batch updates the dictionaries and gives nil. Errors do not say where the
// message is; the caller does. A panic while decoding, which the
// checks are meant to make impossible, becomes an error wrapping ErrInvalid.
func (d *decoder) decode(m message) (rec arrow.Record, err error) {
	defer func() {
		if r := recover(); r != nil {
			if mmap.IsFault(r) {
				panic(r) // the file under a mapping shrank: the caller's Guard names it
			}
			rec, err = nil, fmt.Errorf("malformed input the checks missed: %v: %w", r, ErrInvalid)
		}
	}()
	var tbl flatbuffers.Table
	m.meta.Header(&tbl)
	switch h := m.meta.HeaderType(); h {
	case arrowfb.MessageHeaderRecordBatch:
		var rb arrowfb.RecordBatch
		rb.Init(tbl.Bytes, tbl.Pos)
		rec, err = d.record(&rb, m)
	case arrowfb.MessageHeaderDictionaryBatch:
		var db arrowfb.DictionaryBatch
		db.Init(tbl.Bytes, tbl.Pos)
		err = d.dictionary(&db, m)
	case arrowfb.MessageHeaderSchema:
		err = fmt.Errorf("a second schema message: %w", ErrInvalid)
	default:
		err = fmt.Errorf("a %s message among record batches: %w", arrowfb.EnumNamesMessageHeader[h], ErrInvalid)
	}
	return rec, err
}

// record builds the record of a record batch message.
func (d *decoder) record(rb *arrowfb.RecordBatch, m message) (arrow.Record, error) {
	l, err := d.newBatchLoader(rb, m.body, m.meta.Version())
	if err != nil {
		return nil, fmt.Errorf("record batch: %w", err)
	}
	cols := make([]arrow.Array, 0, d.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, f := range d.plan.fields {
		if f.unsupported != "" {
			if err := l.skip(f); err != nil {
				return nil, fmt.Errorf("record batch: column %w", err)
			}
			continue
		}
		data, err := l.load(f)
		if err != nil {
			return nil, fmt.Errorf("record batch: column %w", err)
		}
		if int64(data.Len()) != rb.Length() {
			n := data.Len()
			data.Release()
			return nil, fmt.Errorf("record batch: column %q has %d values in a batch of %d rows: %w", f.path, n, rb.Length(), ErrInvalid)
		}
		cols = append(cols, array.MakeFromData(data))
		data.Release()
	}
	return array.NewRecord(d.schema, cols, rb.Length()), nil
}

// dictionary reads a dictionary batch into the dictionaries: a new one, a replacement (not in
// a file) or a delta appended to the current one.
func (d *decoder) dictionary(db *arrowfb.DictionaryBatch, m message) error {
	id := db.Id()
	values, ok := d.plan.dicts[id]
	if !ok {
		return fmt.Errorf("a batch of %s, which no field uses: %w", dictionaryName(id), ErrInvalid)
	}
	var rb arrowfb.RecordBatch
	if db.Data(&rb) == nil {
		return fmt.Errorf("a batch of %s without data: %w", dictionaryName(id), ErrInvalid)
	}
	if values.unsupported != "" {
		return nil // its field is walked past: the values are never needed
	}
	l, err := d.newBatchLoader(&rb, m.body, m.meta.Version())
	if err != nil {
		return fmt.Errorf("%s: %w", dictionaryName(id), err)
	}
	data, err := l.load(values)
	if err != nil {
		return fmt.Errorf("%s: values %w", dictionaryName(id), err)
	}
	prev, exists := d.dicts[id]
	switch {
	case db.IsDelta() && !exists:
		data.Release()
		return fmt.Errorf("a delta of %s before the dictionary: %w", dictionaryName(id), ErrInvalid)
	case db.IsDelta():
		merged, err := d.merge(prev, data)
		data.Release()
		if err != nil {
			return fmt.Errorf("%s: %w", dictionaryName(id), err)
		}
		prev.Release()
		d.dicts[id] = merged
	case exists && d.file:
		data.Release()
		return fmt.Errorf("%s replaced in a file, whose batches share one dictionary: %w", dictionaryName(id), ErrInvalid)
	default:
		if exists {
			prev.Release()
		}
		d.dicts[id] = data
	}
	return nil
}

// merge returns a dictionary with the values of delta after those of prev, a copy counted
// against the limits.
func (d *decoder) merge(prev, delta arrow.ArrayData) (arrow.ArrayData, error) {
	size := dataBytes(prev) + dataBytes(delta)
	if size > d.lim.MaxCopySize-d.copies.copied {
		return nil, fmt.Errorf("merging a delta of %d bytes after %d copied exceeds the limit of %d: %w", size, d.copies.copied, d.lim.MaxCopySize, ErrLimit)
	}
	if d.copies.reserve != nil {
		if err := d.copies.reserve(size); err != nil {
			return nil, fmt.Errorf("merging a delta of %d bytes: %w", size, err)
		}
	}
	d.copies.copied += size
	a, b := array.MakeFromData(prev), array.MakeFromData(delta)
	defer a.Release()
	defer b.Release()
	merged, err := array.Concatenate([]arrow.Array{a, b}, d.copies.mem)
	if err != nil {
		return nil, fmt.Errorf("merging a delta: %w: %w", ErrInvalid, err)
	}
	defer merged.Release()
	data := merged.Data()
	data.Retain()
	return data, nil
}

// dataBytes returns the bytes of the buffers of data and its children.
func dataBytes(data arrow.ArrayData) int64 {
	n := int64(0)
	for _, b := range data.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range data.Children() {
		n += dataBytes(c)
	}
	return n
}

// BatchReader reads the record batches of an Arrow IPC stream or file held in memory —
// a []byte or a memory-mapped file — without copying: every buffer of every record it returns
// is a view of that memory, except where a copy cannot be avoided (compressed or big-endian
// input, a buffer misaligned for its type, merged dictionary deltas), which is allocated from
// the options' allocator. The input must stay unchanged while the records are in use.
//
// A file (told by its ARROW1 magic) is read through its footer: the schema is the footer's
// (Arrow JS writes it nowhere else), every dictionary it lists is read first, then the record
// batches in the order it lists them. A stream is read message by message from its leading
// schema to the end-of-stream marker or the end of the input.
//
// Trust model: the input may be anything. Framing, flatbuffers, footer blocks, every field
// node, buffer, offset, null count, dictionary index and compressed length are checked
// against the input, each other and the Limits before any arrow-go array exists; bad input is
// an error wrapping ErrInvalid, ErrLimit, ErrUnsupported or io.ErrUnexpectedEOF that names
// the byte offset and the column, never a panic, and nothing is allocated beyond what the
// input justifies. A BatchReader is not safe for concurrent use.
type BatchReader struct {
	d         *decoder
	src       []byte
	pos       int64   // a stream: where the next message starts
	blocks    []block // a file: the record batches its footer lists
	nextBlock int
	err       error
	done      bool
}

// block is a message a file's footer lists: where it starts, its framed metadata length and
// its body length.
type block struct {
	offset, metaLen, bodyLen int64
}

// fileMagic starts and ends an Arrow IPC file.
const fileMagic = "ARROW1"

// NewBatchReader returns a reader of the record batches in b, an Arrow IPC file or stream. It
// reads and checks the schema, and for a file the footer and every dictionary. Release the
// reader, and each record it returns.
func NewBatchReader(b []byte, opts BatchOptions) (*BatchReader, error) {
	lim := opts.Limits.WithDefaults()
	if bytes.HasPrefix(b, []byte(fileMagic)) {
		return openFile(b, opts)
	}
	m, n, err := parseMessage(b, 0, lim)
	switch {
	case errors.Is(err, io.EOF) && len(b) == 0:
		return nil, fmt.Errorf("ipc: an empty input has no schema: %w", io.ErrUnexpectedEOF)
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("ipc: a stream that ends before its schema: %w", ErrInvalid)
	case err != nil:
		return nil, err
	case m.meta.HeaderType() != arrowfb.MessageHeaderSchema:
		return nil, fmt.Errorf("ipc: message at byte 0: a stream starts with a schema, not a %s message: %w",
			arrowfb.EnumNamesMessageHeader[m.meta.HeaderType()], ErrInvalid)
	}
	plan, err := schemaOf(m.meta)
	if err != nil {
		return nil, fmt.Errorf("ipc: message at byte 0: %w", err)
	}
	d, err := newDecoder(plan, opts, false)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	return &BatchReader{d: d, src: b, pos: n}, nil
}

// openFile reads the footer of an IPC file, its schema and its dictionaries.
func openFile(b []byte, opts BatchOptions) (*BatchReader, error) {
	footer, footerStart, dicts, records, err := readFooter(b, opts)
	if err != nil {
		return nil, err
	}
	var s arrowfb.Schema
	if footer.Schema(&s) == nil {
		return nil, fmt.Errorf("ipc: footer at byte %d has no schema: %w", footerStart, ErrInvalid)
	}
	plan, err := decodeSchema(&s)
	if err != nil {
		return nil, fmt.Errorf("ipc: footer at byte %d: %w", footerStart, err)
	}
	d, err := newDecoder(plan, opts, true)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	r := &BatchReader{d: d, src: b, blocks: records}
	for _, blk := range dicts {
		m, err := r.blockMessage(blk, arrowfb.MessageHeaderDictionaryBatch)
		if err == nil {
			if _, err = d.decode(m); err != nil {
				err = fmt.Errorf("ipc: message at byte %d: %w", m.offset, err)
			}
		}
		if err != nil {
			d.release()
			return nil, err
		}
	}
	return r, nil
}

// blocksOf returns the n blocks of a footer vector.
func blocksOf(n int, at func(*arrowfb.Block, int) bool) []block {
	out := make([]block, n)
	var b arrowfb.Block
	for i := range out {
		at(&b, i)
		out[i] = block{b.Offset(), int64(b.MetaDataLength()), b.BodyLength()}
	}
	return out
}

// checkBlocks checks that every block lies between the file's leading magic and its footer,
// and that no two overlap, so that reading all of them costs no more than the file's size.
func checkBlocks(blocks []block, start, end int64) error {
	for _, b := range blocks {
		if b.offset < start || b.metaLen <= 0 || b.bodyLen < 0 || b.offset > end ||
			b.metaLen > end-b.offset || b.bodyLen > end-b.offset-b.metaLen {
			return fmt.Errorf("a block at byte %d (metadata %d, body %d bytes) outside bytes %d to %d: %w",
				b.offset, b.metaLen, b.bodyLen, start, end, ErrInvalid)
		}
	}
	slices.SortFunc(blocks, func(a, b block) int { return int(min(max(a.offset-b.offset, -1), 1)) })
	for i := 1; i < len(blocks); i++ {
		if prev := blocks[i-1]; prev.offset+prev.metaLen+prev.bodyLen > blocks[i].offset {
			return fmt.Errorf("blocks at bytes %d and %d overlap: %w", prev.offset, blocks[i].offset, ErrInvalid)
		}
	}
	return nil
}

// blockMessage parses the message a footer block locates, which must fill the block exactly
// and be of the given type.
func (r *BatchReader) blockMessage(b block, want arrowfb.MessageHeader) (message, error) {
	m, n, err := parseMessage(r.src[b.offset:b.offset+b.metaLen+b.bodyLen], b.offset, r.d.lim)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return message{}, fmt.Errorf("ipc: the block at byte %d (%d+%d bytes) cuts its message short: %w: %w", b.offset, b.metaLen, b.bodyLen, ErrInvalid, err)
	case errors.Is(err, io.EOF):
		return message{}, fmt.Errorf("ipc: the block at byte %d holds the end-of-stream marker: %w", b.offset, ErrInvalid)
	case err != nil:
		return message{}, err
	case n != b.metaLen+b.bodyLen || int64(len(m.body)) != b.bodyLen:
		return message{}, fmt.Errorf("ipc: the block at byte %d says %d+%d bytes, its message takes %d with a body of %d: %w",
			b.offset, b.metaLen, b.bodyLen, n, len(m.body), ErrInvalid)
	case m.meta.HeaderType() != want:
		return message{}, fmt.Errorf("ipc: the block at byte %d holds a %s message, not a %s: %w", b.offset,
			arrowfb.EnumNamesMessageHeader[m.meta.HeaderType()], arrowfb.EnumNamesMessageHeader[want], ErrInvalid)
	}
	return m, nil
}

// Schema returns the schema of the records: little-endian, without the columns skipped.
func (r *BatchReader) Schema() *arrow.Schema { return r.d.schema }

// Skipped returns the columns left out of Schema and the records for their types
// (BatchOptions.SkipUnsupported), in schema order.
func (r *BatchReader) Skipped() []SkippedColumn { return r.d.plan.skipped() }

// Next returns the next record batch, which the caller releases, or io.EOF after the last.
// After an error other than io.EOF the reader stops: every later call returns that error.
func (r *BatchReader) Next() (arrow.Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.read()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *BatchReader) read() (arrow.Record, error) {
	if r.done {
		return nil, fmt.Errorf("ipc: Next on a released reader: %w", ErrInvalid)
	}
	if r.d.file {
		if r.nextBlock >= len(r.blocks) {
			return nil, io.EOF
		}
		m, err := r.blockMessage(r.blocks[r.nextBlock], arrowfb.MessageHeaderRecordBatch)
		if err != nil {
			return nil, err
		}
		r.nextBlock++
		rec, err := r.d.decode(m)
		if err != nil {
			return nil, fmt.Errorf("ipc: message at byte %d: %w", m.offset, err)
		}
		return rec, nil
	}
	for {
		m, n, err := parseMessage(r.src[r.pos:], r.pos, r.d.lim)
		if err != nil {
			return nil, err // io.EOF at the end-of-stream marker or the end of the input
		}
		r.pos += n
		rec, err := r.d.decode(m)
		if err != nil {
			return nil, fmt.Errorf("ipc: message at byte %d: %w", m.offset, err)
		}
		if rec != nil {
			return rec, nil
		}
	}
}

// Release releases what the reader holds (its dictionaries and decompressor); records it
// returned stay valid.
func (r *BatchReader) Release() {
	if !r.done {
		r.done = true
		r.d.release()
	}
}

// ReadRecordBatches reads every record batch of the Arrow IPC file or stream in b (see
// BatchReader) and returns the schema and the records, which view b and which the caller
// releases. No record is returned with an error.
func ReadRecordBatches(b []byte, opts BatchOptions) (*arrow.Schema, []arrow.Record, error) {
	r, err := NewBatchReader(b, opts)
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	var records []arrow.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Schema(), records, nil
		}
		if err != nil {
			for _, rec := range records {
				rec.Release()
			}
			return nil, nil, err
		}
		records = append(records, rec)
	}
}

// ReadSchema returns the schema of the Arrow IPC file or stream in b — a stream may be only a
// schema message, as a FlightInfo carries it — checked as BatchReader checks it, without
// reading any record batch of a stream. The dictionaries of a file are read and checked.
func ReadSchema(b []byte, opts BatchOptions) (*arrow.Schema, error) {
	r, err := NewBatchReader(b, opts)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// BatchDecoder decodes record batches that arrive one message at a time, metadata and body
// apart, as Arrow Flight's FlightData carries them (data_header and data_body). Like
// BatchReader it copies nothing it can view: a record's buffers view the bodies passed to
// Decode, which must stay unchanged while it is in use, and it checks everything before
// building arrays. A BatchDecoder is not safe for concurrent use.
type BatchDecoder struct {
	d *decoder
	n int // messages decoded, for errors
}

// NewBatchDecoder returns a decoder for the batches of the schema whose message metadata (a
// flatbuffer Message with a Schema header: FlightData.data_header of a stream's first
// message) is meta.
func NewBatchDecoder(meta []byte, opts BatchOptions) (*BatchDecoder, error) {
	lim := opts.Limits.WithDefaults()
	if int64(len(meta)) > lim.MaxMetadataSize {
		return nil, fmt.Errorf("ipc: schema metadata of %d bytes exceeds the limit of %d: %w", len(meta), lim.MaxMetadataSize, ErrLimit)
	}
	m, _, err := parseMetadata(meta, 0, lim)
	if err != nil {
		return nil, err
	}
	if m.HeaderType() != arrowfb.MessageHeaderSchema {
		return nil, fmt.Errorf("ipc: a stream starts with a schema, not a %s message: %w", arrowfb.EnumNamesMessageHeader[m.HeaderType()], ErrInvalid)
	}
	plan, err := schemaOf(m)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	d, err := newDecoder(plan, opts, false)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	return &BatchDecoder{d: d}, nil
}

// Schema returns the schema of the records: little-endian, without the columns skipped.
func (bd *BatchDecoder) Schema() *arrow.Schema { return bd.d.schema }

// Skipped returns the columns left out of Schema and the records for their types
// (BatchOptions.SkipUnsupported), in schema order.
func (bd *BatchDecoder) Skipped() []SkippedColumn { return bd.d.plan.skipped() }

// Decode decodes the message with metadata meta and body body: a record batch gives a record
// the caller releases, a dictionary batch gives nil (its values are kept for the batches
// after it). The body may be longer than the metadata says (padding); it may not be shorter.
func (bd *BatchDecoder) Decode(meta, body []byte) (arrow.Record, error) {
	bd.n++
	if int64(len(meta)) > bd.d.lim.MaxMetadataSize {
		return nil, fmt.Errorf("ipc: message %d: metadata of %d bytes exceeds the limit of %d: %w", bd.n, len(meta), bd.d.lim.MaxMetadataSize, ErrLimit)
	}
	m, n, err := parseMetadata(meta, 0, bd.d.lim)
	if err != nil {
		return nil, fmt.Errorf("ipc: message %d: %w", bd.n, err)
	}
	if n > int64(len(body)) {
		return nil, fmt.Errorf("ipc: message %d: its metadata says a body of %d bytes, %d came: %w", bd.n, n, len(body), ErrInvalid)
	}
	rec, err := bd.d.decode(message{meta: m, body: body[:n]})
	if err != nil {
		return nil, fmt.Errorf("ipc: message %d: %w", bd.n, err)
	}
	return rec, nil
}

// Release releases what the decoder holds (its dictionaries and decompressor); records it
// returned stay valid.
func (bd *BatchDecoder) Release() { bd.d.release() }

// ValuesSpan locates the values of a record batch without its body at hand, for a receiver
// that copies them straight from where they arrive: when meta, the metadata of a message
// whose body is bodyLen bytes, is a record batch of the decoder's one column, that column is
// fixed-size lists (at any depth) of a fixed-width type (not bool) without nulls, and the body
// is neither compressed nor big-endian, ValuesSpan returns the batch's rows and the offset and
// length in the body of exactly its rows' values, in row-major order; every field node and
// buffer is checked as Decode checks them (what Decode would refuse is an error). Any other
// message gives ok false and no error, and is then Decode's to decode: ValuesSpan counts only
// the messages it locates (or refuses) among those Decode counts for its errors.
func (bd *BatchDecoder) ValuesSpan(meta []byte, bodyLen int64) (rows, off, n int64, ok bool, err error) {
	d := bd.d
	if len(d.plan.fields) != 1 || d.plan.bigEndian || int64(len(meta)) > d.lim.MaxMetadataSize || bodyLen < 0 {
		return 0, 0, 0, false, nil
	}
	var leaf *fieldPlan
	for p := d.plan.fields[0]; leaf == nil; {
		switch {
		case p.unsupported != "" || p.dictID >= 0:
			return 0, 0, 0, false, nil
		case p.layout == layoutFixedList && len(p.children) == 1 && p.width > 0:
			p = p.children[0]
		case p.layout == layoutFixed && p.width > 0:
			leaf = p
		default:
			return 0, 0, 0, false, nil
		}
	}
	m, need, err := parseMetadata(meta, 0, d.lim)
	if err != nil || m.HeaderType() != arrowfb.MessageHeaderRecordBatch || need > bodyLen {
		return 0, 0, 0, false, nil // Decode says what is wrong
	}
	var tbl flatbuffers.Table
	m.Header(&tbl)
	var rb arrowfb.RecordBatch
	rb.Init(tbl.Bytes, tbl.Pos)
	var comp arrowfb.BodyCompression
	if rb.Compression(&comp) != nil {
		return 0, 0, 0, false, nil
	}
	fail := func(err error) (int64, int64, int64, bool, error) {
		return 0, 0, 0, false, fmt.Errorf("ipc: message %d: record batch: column %w", bd.n, err)
	}
	bd.n++
	l, err := d.newBatchLoader(&rb, nil, m.Version())
	if err != nil {
		return fail(err)
	}
	l.bodyLen = need
	count := rb.Length()
	for p := d.plan.fields[0]; ; p = p.children[0] {
		node, err := l.nextNode(p)
		if err != nil {
			return fail(err)
		}
		if node.length != count || node.nulls != 0 {
			bd.n--
			return 0, 0, 0, false, nil // nulls, or more child values than the lists take: Decode's
		}
		if _, _, err := l.nextSpan(p); err != nil { // the validity bitmap, not read without nulls
			return fail(err)
		}
		if p == leaf {
			break
		}
		hi, lo := bits.Mul64(uint64(count), uint64(p.width))
		if hi != 0 || lo > uint64(d.lim.MaxElements) {
			return fail(fmt.Errorf("%s: %d lists of %d values (limit %d): %w", p.path, count, p.width, d.lim.MaxElements, ErrLimit))
		}
		count = int64(lo)
	}
	off, n, err = l.nextSpan(leaf)
	if err != nil {
		return fail(err)
	}
	if hi, lo := bits.Mul64(uint64(count), uint64(leaf.width)); hi != 0 || lo > uint64(n) {
		return fail(fmt.Errorf("%s: values: a buffer of %d bytes for %d values of %d bytes: %w", leaf.path, n, count, leaf.width, ErrInvalid))
	}
	return rb.Length(), off, count * int64(leaf.width), true, nil
}
