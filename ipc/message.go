package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/bounded"
)

// continuation is the marker that starts an encapsulated message since Arrow 0.15; before it,
// a message started directly with its metadata length ("legacy" framing).
const continuation = 0xFFFFFFFF

// message is one encapsulated IPC message: verified flatbuffer metadata and its body.
type message struct {
	offset int64 // where the message starts in its input
	meta   *arrowfb.Message
	body   []byte
}

// frame is the prefix of a message: where its metadata starts and how long it is.
type frame struct {
	header  int64 // 8 with the continuation marker, 4 without
	metaLen int64
}

// parsePrefix decodes a message prefix from the first 4 or 8 bytes of p (len(p) ≥ 4; p may
// hold only 4 bytes when the first word is not the continuation marker). It returns io.EOF for
// the end-of-stream marker, and needMore when p is a continuation marker without its length.
func parsePrefix(p []byte, offset int64, lim Limits) (frame, error) {
	first := binary.LittleEndian.Uint32(p)
	f := frame{header: 4, metaLen: int64(int32(first))}
	if first == continuation {
		if len(p) < 8 {
			return frame{}, errNeedMore
		}
		f = frame{header: 8, metaLen: int64(int32(binary.LittleEndian.Uint32(p[4:])))}
	}
	switch {
	case f.metaLen == 0:
		return frame{}, io.EOF
	case f.metaLen < 0:
		return frame{}, fmt.Errorf("ipc: message at byte %d: metadata length %d is negative: %w", offset, f.metaLen, ErrInvalid)
	case f.metaLen > lim.MaxMetadataSize:
		return frame{}, fmt.Errorf("ipc: message at byte %d: metadata length %d exceeds the limit of %d bytes: %w", offset, f.metaLen, lim.MaxMetadataSize, ErrLimit)
	}
	return f, nil
}

// metadata returns the message's custom metadata.
func (m message) metadata() arrow.Metadata {
	return metadataOf(m.meta.CustomMetadataLength(), m.meta.CustomMetadata)
}

var errNeedMore = errors.New("need more bytes")

// parseMetadata verifies the flatbuffer metadata of the message at offset and returns it with
// its body length, checked against the limits.
func parseMetadata(meta []byte, offset int64, lim Limits) (*arrowfb.Message, int64, error) {
	if err := arrowfb.VerifyMessage(meta); err != nil {
		return nil, 0, fmt.Errorf("ipc: message at byte %d: metadata: %w: %w", offset, ErrInvalid, err)
	}
	m := arrowfb.GetRootAsMessage(meta, 0)
	if v := m.Version(); v < arrowfb.MetadataVersionV4 || v > arrowfb.MetadataVersionV5 {
		return nil, 0, fmt.Errorf("ipc: message at byte %d: metadata version V%d: only V4 and V5 are read: %w", offset, int(v)+1, ErrUnsupported)
	}
	n := m.BodyLength()
	switch {
	case n < 0:
		return nil, 0, fmt.Errorf("ipc: message at byte %d: body length %d is negative: %w", offset, n, ErrInvalid)
	case n > lim.MaxBodySize:
		return nil, 0, fmt.Errorf("ipc: message at byte %d: body length %d exceeds the limit of %d bytes: %w", offset, n, lim.MaxBodySize, ErrLimit)
	}
	return m, n, nil
}

// parseMessage decodes the message at the start of b without copying: the metadata and body
// of the result alias b. It returns the number of bytes the message takes, and io.EOF at the
// end-of-stream marker or when b is empty.
func parseMessage(b []byte, offset int64, lim Limits) (message, int64, error) {
	if len(b) == 0 {
		return message{}, 0, io.EOF
	}
	if len(b) < 4 {
		return message{}, 0, truncated(offset, "message prefix")
	}
	f, err := parsePrefix(b, offset, lim)
	if errors.Is(err, errNeedMore) {
		return message{}, 0, truncated(offset, "message prefix")
	}
	if err != nil {
		return message{}, 0, err
	}
	if f.metaLen > int64(len(b))-f.header {
		return message{}, 0, truncated(offset, "metadata")
	}
	meta := b[f.header : f.header+f.metaLen]
	m, bodyLen, err := parseMetadata(meta, offset, lim)
	if err != nil {
		return message{}, 0, err
	}
	start := f.header + f.metaLen
	if bodyLen > int64(len(b))-start {
		return message{}, 0, truncated(offset, "body")
	}
	return message{offset: offset, meta: m, body: b[start : start+bodyLen]}, start + bodyLen, nil
}

// readMessage reads the next message from r, which is at offset in its stream. The metadata
// and body are read into buffers that grow only as bytes arrive, so a length in a corrupt
// prefix cannot make it allocate more than about twice what r holds. It returns io.EOF at the
// end-of-stream marker or when r ends before a message starts.
func readMessage(r io.Reader, offset int64, lim Limits) (message, int64, error) {
	var prefix [8]byte
	n, err := io.ReadFull(r, prefix[:4])
	switch {
	case err == io.EOF:
		return message{}, 0, io.EOF
	case err != nil:
		return message{}, int64(n), truncatedErr(offset, "message prefix", err)
	}
	f, err := parsePrefix(prefix[:4], offset, lim)
	if errors.Is(err, errNeedMore) {
		if _, err := io.ReadFull(r, prefix[4:]); err != nil {
			return message{}, 4, truncatedErr(offset, "message prefix", err)
		}
		f, err = parsePrefix(prefix[:], offset, lim)
	}
	if err != nil {
		return message{}, f.header, err
	}
	meta, err := bounded.ReadFull(r, f.metaLen)
	if err != nil {
		return message{}, f.header + int64(len(meta)), truncatedErr(offset, "metadata", err)
	}
	m, bodyLen, err := parseMetadata(meta, offset, lim)
	if err != nil {
		return message{}, f.header + f.metaLen, err
	}
	body, err := bounded.ReadFull(r, bodyLen)
	read := f.header + f.metaLen + int64(len(body))
	if err != nil {
		return message{}, read, truncatedErr(offset, "body", err)
	}
	return message{offset: offset, meta: m, body: body}, read, nil
}

func truncated(offset int64, what string) error {
	return fmt.Errorf("ipc: message at byte %d: input ends inside the %s: %w", offset, what, io.ErrUnexpectedEOF)
}

func truncatedErr(offset int64, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return truncated(offset, what)
	}
	return fmt.Errorf("ipc: message at byte %d: reading the %s: %w", offset, what, err)
}

// ReadMessageHead reads the prefix and the metadata of the next encapsulated message of an
// Arrow IPC stream from r, which is at offset in its stream, for a receiver that reads the
// body itself (straight into where it goes): it returns the metadata, verified and checked
// against lim as every reader checks it, and the length of the body that follows in r. The
// metadata is read into memory that grows as bytes arrive. It returns io.EOF at the
// end-of-stream marker and an error wrapping io.ErrUnexpectedEOF when r ends first, before a
// message (a stream is ended by its marker) or inside one.
func ReadMessageHead(r io.Reader, offset int64, lim Limits) (meta []byte, bodyLen int64, err error) {
	lim = lim.WithDefaults()
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:4]); err != nil {
		return nil, 0, truncatedErr(offset, "message prefix", err)
	}
	f, err := parsePrefix(prefix[:4], offset, lim)
	if errors.Is(err, errNeedMore) {
		if _, err := io.ReadFull(r, prefix[4:]); err != nil {
			return nil, 0, truncatedErr(offset, "message prefix", err)
		}
		f, err = parsePrefix(prefix[:], offset, lim)
	}
	if err != nil {
		return nil, 0, err
	}
	meta, err = bounded.ReadFull(r, f.metaLen)
	if err != nil {
		return nil, 0, truncatedErr(offset, "metadata", err)
	}
	if _, bodyLen, err = parseMetadata(meta, offset, lim); err != nil {
		return nil, 0, err
	}
	return meta, bodyLen, nil
}
