package flight

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// flightDataCodec is the gRPC codec of a whole message, the one a Client's calls other than
// DoGet use and that serverCodec and streamCodec build on. It decodes a FlightData's
// data_header, app_metadata and data_body as views of the message, where the generated code
// would copy each (a record batch's body is most of the message): the message must be memory
// of its own (serverCodec gives it a copy of the frames, which a DoPut's records may keep
// viewing). A Client's DoGet streams parse the frames themselves (streamCodec).
//
// A body sits at whatever offset the fields before it leave, so its values are seldom
// aligned, and ipc's decoder would copy them to align them. The codec moves a misaligned
// body to the start of the message instead (copying the small header and metadata out
// first): the body's values are then viewed where they arrived. Marshal, in turn, lays a
// message out so that its body is aligned.
type flightDataCodec struct{}

// Name returns "proto": the content-subtype of the messages is unchanged.
func (flightDataCodec) Name() string { return "proto" }

// Marshal marshals v, a protobuf message, as the default codec does, but for a FlightData:
// its data_header is padded with zeros (which a flatbuffer reader ignores, as in Arrow IPC
// files) so that data_body starts at a multiple of 8 bytes into the message, where any
// receiver can view its values without moving them.
func (flightDataCodec) Marshal(v any) ([]byte, error) {
	fd, ok := v.(*arrowflight.FlightData)
	if !ok {
		m, ok := v.(proto.Message)
		if !ok {
			return nil, fmt.Errorf("flight: cannot marshal %T", v)
		}
		return proto.Marshal(m)
	}
	head, err := flightDataHead(fd, len(fd.DataBody))
	if err != nil {
		return nil, err
	}
	return append(head, fd.DataBody...), nil
}

// flightDataHead returns the bytes of a FlightData's message before its data_body's own bytes
// (the data_body's tag and length included), with room for extra more: the data_header
// padded so that the body starts at a multiple of 8 bytes (see Marshal).
func flightDataHead(fd *arrowflight.FlightData, extra int) ([]byte, error) {
	var desc []byte
	if fd.FlightDescriptor != nil {
		var err error
		if desc, err = proto.Marshal(fd.FlightDescriptor); err != nil {
			return nil, err
		}
	}
	field := func(num protowire.Number, n int, present bool) int {
		if !present {
			return 0
		}
		return protowire.SizeTag(num) + protowire.SizeBytes(n)
	}
	head, body := len(fd.DataHeader), len(fd.DataBody)
	pad := 0
	before := func() int { // the bytes before the body's own
		n := field(1, len(desc), fd.FlightDescriptor != nil) + field(2, head+pad, head > 0) + field(3, len(fd.AppMetadata), len(fd.AppMetadata) > 0)
		if body > 0 {
			n += protowire.SizeTag(1000) + protowire.SizeVarint(uint64(body))
		}
		return n
	}
	if head > 0 && body > 0 {
		for before()%8 != 0 && pad < 16 {
			pad++
		}
	}
	out := make([]byte, 0, before()+extra)
	if fd.FlightDescriptor != nil {
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, desc)
	}
	if head > 0 {
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(head+pad))
		out = append(out, fd.DataHeader...)
		out = append(out, make([]byte, pad)...)
	}
	if len(fd.AppMetadata) > 0 {
		out = protowire.AppendTag(out, 3, protowire.BytesType)
		out = protowire.AppendBytes(out, fd.AppMetadata)
	}
	if body > 0 {
		out = protowire.AppendTag(out, 1000, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(body))
	}
	return out, nil
}

// serverCodec is the gRPC codec of a Server's calls. It marshals a FlightData as
// flightDataCodec does, but copies its body into frame buffers (frames) that gRPC gives back
// once it has written them, instead of new memory each message: a DoGet's messages leave no
// garbage. It unmarshals as flightDataCodec, into memory of each message's own, which a
// DoPut's records keep viewing.
type serverCodec struct{ flightDataCodec }

// Marshal marshals v: a FlightData as a head and its body in frame buffers, anything else as
// flightDataCodec.
func (c serverCodec) Marshal(v any) (mem.BufferSlice, error) {
	fd, ok := v.(*arrowflight.FlightData)
	if !ok || len(fd.DataBody) < frameBytes {
		b, err := c.flightDataCodec.Marshal(v)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	head, err := flightDataHead(fd, 0)
	if err != nil {
		return nil, err
	}
	out := make(mem.BufferSlice, 0, 1+(len(fd.DataBody)+frameBytes-1)/frameBytes)
	out = append(out, mem.SliceBuffer(head))
	for body := fd.DataBody; len(body) > 0; {
		b := frames.Get(min(len(body), frameBytes))
		body = body[copyPart(*b, body):]
		out = append(out, mem.NewBuffer(b, frames))
	}
	return out, nil
}

// Unmarshal decodes a FlightData viewing a copy of data (see flightDataCodec.Unmarshal).
func (c serverCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return c.flightDataCodec.Unmarshal(data.Materialize(), v)
}

// Unmarshal decodes a FlightData viewing data, and any other message as the default codec.
func (flightDataCodec) Unmarshal(data []byte, v any) error {
	fd, ok := v.(*arrowflight.FlightData)
	if !ok {
		m, ok := v.(proto.Message)
		if !ok {
			return fmt.Errorf("flight: cannot unmarshal %T", v)
		}
		return proto.Unmarshal(data, m)
	}
	fd.Reset()
	start := data
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("flight: FlightData: %w", protowire.ParseError(n))
		}
		data = data[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, data); n < 0 {
				return fmt.Errorf("flight: FlightData field %d: %w", num, protowire.ParseError(n))
			}
			data = data[n:]
			continue
		}
		b, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return fmt.Errorf("flight: FlightData field %d: %w", num, protowire.ParseError(n))
		}
		data = data[n:]
		switch num {
		case 1:
			if fd.FlightDescriptor == nil {
				fd.FlightDescriptor = &arrowflight.FlightDescriptor{}
			}
			// a message field that repeats merges, as the generated code does
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, fd.FlightDescriptor); err != nil {
				return fmt.Errorf("flight: FlightData descriptor: %w", err)
			}
		case 2:
			fd.DataHeader = b[:len(b):len(b)]
		case 3:
			fd.AppMetadata = b[:len(b):len(b)]
		case 1000:
			fd.DataBody = b[:len(b):len(b)]
		}
	}
	if len(fd.DataBody) > 0 && !aligned8(fd.DataBody) && aligned8(start) {
		fd.DataHeader = bytes.Clone(fd.DataHeader)
		fd.AppMetadata = bytes.Clone(fd.AppMetadata)
		n := copy(start, fd.DataBody) // overlapping: copy moves
		fd.DataBody = start[:n:n]
	}
	return nil
}

// aligned8 reports whether b starts at a multiple of 8 bytes, the widest alignment of a
// number in a record batch's buffers.
func aligned8(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 }

// streamCodec is the codec of one DoGet stream of a Client: it decodes each FlightData inside
// Unmarshal, through decode, while the frames gRPC received are gRPC's to lend (a Client's
// connection reads frames into pooled buffers it takes back as soon as Unmarshal returns). The
// message is not assembled: its header is copied out and its body handed to decode as the
// frames' bytes, which decode copies where it keeps them. decode's error is kept in err, which
// the stream's reader checks after each Recv (an error returned to gRPC would reach the reader
// as a status without its sentinels).
type streamCodec struct {
	flightDataCodec
	decode func(header []byte, body [][]byte) error
	err    error
}

// Marshal marshals v as flightDataCodec does.
func (c *streamCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := c.flightDataCodec.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

// Unmarshal decodes a FlightData through decode, and any other message as flightDataCodec.
func (c *streamCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*arrowflight.FlightData); !ok || c.err != nil {
		return c.flightDataCodec.Unmarshal(data.Materialize(), v)
	}
	parts := make([][]byte, 0, len(data))
	for _, b := range data {
		if d := b.ReadOnlyData(); len(d) > 0 {
			parts = append(parts, d)
		}
	}
	header, body, err := splitFlightData(parts)
	if errors.Is(err, errGroup) { // rare enough to parse as a whole
		var fd arrowflight.FlightData
		if err := c.flightDataCodec.Unmarshal(data.Materialize(), &fd); err != nil {
			return err
		}
		header, body, err = fd.DataHeader, [][]byte{fd.DataBody}, nil
	}
	if err != nil {
		return err
	}
	c.err = c.decode(header, body)
	return nil
}

// splitFlightData parses a FlightData held in parts (a message split across frames) and returns
// a copy of its data_header and views of its data_body; the last occurrence of each field counts,
// as for the generated code, and other fields are checked and skipped.
func splitFlightData(parts [][]byte) (header []byte, body [][]byte, err error) {
	r := newPartsReader(parts)
	for !r.done() {
		tag, err := r.varint()
		if err != nil {
			return nil, nil, fmt.Errorf("flight: FlightData: %w", err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
			return nil, nil, fmt.Errorf("flight: FlightData: field number %d: %w", num, errMalformed)
		}
		var n uint64
		switch typ {
		case protowire.VarintType:
			_, err = r.varint()
		case protowire.Fixed32Type:
			err = r.skip(4)
		case protowire.Fixed64Type:
			err = r.skip(8)
		case protowire.BytesType:
			if n, err = r.varint(); err == nil && n > uint64(r.left()) {
				err = errMalformed
			}
		case protowire.StartGroupType: // an unknown field no writer of FlightData sends
			err = errGroup
		default:
			err = errMalformed
		}
		if err != nil {
			return nil, nil, fmt.Errorf("flight: FlightData field %d: %w", num, err)
		}
		if typ != protowire.BytesType {
			continue
		}
		switch num {
		case 1: // the descriptor: checked as the generated code would, then dropped
			var d arrowflight.FlightDescriptor
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(r.copy(int(n)), &d); err != nil {
				return nil, nil, fmt.Errorf("flight: FlightData descriptor: %w", err)
			}
		case 2:
			header = r.copy(int(n))
		case 1000:
			body = r.views(int(n))
		default:
			r.views(int(n))
		}
	}
	return header, body, nil
}

var (
	// errMalformed is what a FlightData that is not a protobuf message wraps.
	errMalformed = errors.New("not a protobuf message")
	// errGroup reports a group among a FlightData's fields, which splitFlightData leaves to
	// the whole-message parser.
	errGroup = errors.New("a group field")
)

// partsReader reads a byte sequence held in parts.
type partsReader struct {
	parts [][]byte
	off   int // into parts[0]
	rest  int // the bytes left
}

func newPartsReader(parts [][]byte) *partsReader {
	r := &partsReader{parts: parts}
	for _, p := range parts {
		r.rest += len(p)
	}
	r.trim()
	return r
}

// trim drops the parts read whole.
func (r *partsReader) trim() {
	for len(r.parts) > 0 && r.off == len(r.parts[0]) {
		r.parts, r.off = r.parts[1:], 0
	}
}

func (r *partsReader) done() bool { return r.rest == 0 }

func (r *partsReader) left() int { return r.rest }

// views returns the next n bytes (at most what is left) as views of the parts.
func (r *partsReader) views(n int) [][]byte {
	var out [][]byte
	for n > 0 && r.rest > 0 {
		p := r.parts[0][r.off:]
		k := min(n, len(p))
		out = append(out, p[:k:k])
		n -= k
		r.advance(k)
	}
	return out
}

// advance moves past k bytes of the current part.
func (r *partsReader) advance(k int) {
	r.off += k
	r.rest -= k
	r.trim()
}

// copy returns a copy of the next n bytes (at most what is left).
func (r *partsReader) copy(n int) []byte {
	out := make([]byte, 0, min(n, r.rest))
	for _, v := range r.views(n) {
		out = append(out, v...)
	}
	return out
}

func (r *partsReader) skip(n int) error {
	if n > r.rest {
		return io.ErrUnexpectedEOF
	}
	for n > 0 {
		k := min(n, len(r.parts[0])-r.off)
		r.advance(k)
		n -= k
	}
	return nil
}

// varint reads a protobuf varint.
func (r *partsReader) varint() (uint64, error) {
	var buf [binary.MaxVarintLen64]byte
	k := 0
	for k < len(buf) && r.rest > 0 {
		buf[k] = r.parts[0][r.off]
		r.advance(1)
		k++
		if buf[k-1] < 0x80 {
			break
		}
	}
	v, n := protowire.ConsumeVarint(buf[:k])
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	return v, nil
}
