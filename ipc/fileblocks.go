package ipc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

// Block is a message an Arrow IPC file's footer locates: it starts at Offset with MetaLen
// bytes of framed metadata followed by BodyLen bytes of body.
type Block struct{ Offset, MetaLen, BodyLen int64 }

// FileFooter returns where the footer of the Arrow IPC file b lies, reading only b's last 10
// bytes (the footer's length and the magic), for a reader that brings a file into memory range
// by range (an object in object storage): it fetches that range, then FileBlocks.
func FileFooter(b []byte, opts BatchOptions) (off, n int64, err error) {
	lim := opts.Limits.WithDefaults()
	const head, tail = 8, 10
	if len(b) < head+tail || !bytes.HasSuffix(b, []byte(fileMagic)) {
		return 0, 0, fmt.Errorf("ipc: an Arrow IPC file of %d bytes does not end with its footer and magic: %w", len(b), io.ErrUnexpectedEOF)
	}
	n = int64(int32(binary.LittleEndian.Uint32(b[len(b)-tail:])))
	off = int64(len(b)-tail) - n
	switch {
	case n <= 0 || off < head:
		return 0, 0, fmt.Errorf("ipc: footer length %d does not fit a file of %d bytes: %w", n, len(b), ErrInvalid)
	case n > lim.MaxMetadataSize:
		return 0, 0, fmt.Errorf("ipc: footer length %d exceeds the limit of %d bytes: %w", n, lim.MaxMetadataSize, ErrLimit)
	}
	return off, n, nil
}

// FileBlocks returns the dictionary and record batch blocks the footer of the Arrow IPC file b
// lists, checked inside the file and disjoint, reading only the footer (see FileFooter): what
// NewBatchReader reads next is the dictionaries, and each record batch as it is read.
func FileBlocks(b []byte, opts BatchOptions) (dicts, records []Block, err error) {
	_, _, d, r, err := readFooter(b, opts)
	if err != nil {
		return nil, nil, err
	}
	return exported(d), exported(r), nil
}

// readFooter verifies the footer of the IPC file b and returns it, where it starts, and its
// dictionary and record batch blocks, checked inside the file and disjoint.
func readFooter(b []byte, opts BatchOptions) (footer *arrowfb.Footer, off int64, dicts, records []block, err error) {
	off, n, err := FileFooter(b, opts)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	raw := b[off : off+n]
	if err := arrowfb.VerifyFooter(raw); err != nil {
		return nil, 0, nil, nil, fmt.Errorf("ipc: footer at byte %d: %w: %w", off, ErrInvalid, err)
	}
	footer = arrowfb.GetRootAsFooter(raw, 0)
	dicts = blocksOf(footer.DictionariesLength(), footer.Dictionaries)
	records = blocksOf(footer.RecordBatchesLength(), footer.RecordBatches)
	if err := checkBlocks(append(slices.Clone(dicts), records...), 8, off); err != nil {
		return nil, 0, nil, nil, fmt.Errorf("ipc: footer at byte %d: %w", off, err)
	}
	return footer, off, dicts, records, nil
}

// exported returns blocks as Blocks.
func exported(blocks []block) []Block {
	out := make([]Block, len(blocks))
	for i, b := range blocks {
		out[i] = Block{b.offset, b.metaLen, b.bodyLen}
	}
	return out
}

// Blocks returns the record batch blocks of a file's reader (nil for a stream's), in order.
func (r *BatchReader) Blocks() []Block { return exported(r.blocks) }

// BlockRows returns the rows of record batch block i, reading only its metadata (the block's
// first MetaLen bytes), checked as every message's is.
func (r *BatchReader) BlockRows(i int) (int64, error) {
	if i < 0 || i >= len(r.blocks) {
		return 0, fmt.Errorf("ipc: record batch %d of %d", i, len(r.blocks))
	}
	b := r.blocks[i]
	m, err := r.blockMessage(b, arrowfb.MessageHeaderRecordBatch)
	if err != nil {
		return 0, err
	}
	var rb arrowfb.RecordBatch
	if !recordBatchOf(m.meta, &rb) || rb.Length() < 0 {
		return 0, fmt.Errorf("ipc: the record batch at byte %d has %d rows: %w", b.offset, rb.Length(), ErrInvalid)
	}
	if rb.Length() > r.d.lim.MaxElements {
		return 0, fmt.Errorf("ipc: the record batch at byte %d has %d rows, more than the limit of %d: %w", b.offset, rb.Length(), r.d.lim.MaxElements, ErrLimit)
	}
	return rb.Length(), nil
}

// DecodeBlock decodes record batch block i of a file's reader from data, the block's bytes
// (MetaLen+BodyLen of them) brought into memory apart from the file — fetched from object
// storage, say. The record views data, which must stay unchanged while it is in use, and the
// caller releases it.
func (r *BatchReader) DecodeBlock(i int, data []byte) (arrow.Record, error) {
	if i < 0 || i >= len(r.blocks) {
		return nil, fmt.Errorf("ipc: record batch %d of %d", i, len(r.blocks))
	}
	b := r.blocks[i]
	if int64(len(data)) != b.metaLen+b.bodyLen {
		return nil, fmt.Errorf("ipc: record batch %d: %d bytes for a block of %d+%d: %w", i, len(data), b.metaLen, b.bodyLen, ErrInvalid)
	}
	m, err := (&BatchReader{d: r.d, src: data}).blockMessage(block{0, b.metaLen, b.bodyLen}, arrowfb.MessageHeaderRecordBatch)
	if err != nil {
		return nil, fmt.Errorf("ipc: the block at byte %d: %w", b.offset, err)
	}
	rec, err := r.d.decode(m)
	if err != nil {
		return nil, fmt.Errorf("ipc: message at byte %d: %w", b.offset, err)
	}
	return rec, nil
}

// recordBatchOf points rb at the RecordBatch header of m, reporting whether it has one.
func recordBatchOf(m *arrowfb.Message, rb *arrowfb.RecordBatch) bool {
	if m.HeaderType() != arrowfb.MessageHeaderRecordBatch {
		return false
	}
	var tbl flatbuffers.Table
	if !m.Header(&tbl) {
		return false
	}
	rb.Init(tbl.Bytes, tbl.Pos)
	return true
}
