package flight

import (
	"bytes"
	"fmt"
	"unsafe"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// flightDataCodec is the gRPC codec of ndarrow's Flight calls, both sides. It decodes a
// FlightData's data_header, app_metadata and data_body as views of the message gRPC received,
// where the generated code would copy each (a record batch's body is most of the message). A
// Server's gRPC allocates each received message afresh (no receive buffer pool is configured)
// and does not touch it after Unmarshal (no stats handler is installed), so a DoPut's records
// may keep viewing it. A Client's connection reuses its receive buffers, so its DoGet streams
// decode each message inside Unmarshal (streamCodec) and keep copies only.
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
		return field(1, len(desc), fd.FlightDescriptor != nil) + field(2, head+pad, head > 0) +
			field(3, len(fd.AppMetadata), len(fd.AppMetadata) > 0) + protowire.SizeTag(1000) + protowire.SizeVarint(uint64(body))
	}
	if head > 0 && body > 0 {
		for before()%8 != 0 && pad < 16 {
			pad++
		}
	}
	out := make([]byte, 0, before()+body)
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
		out = protowire.AppendBytes(out, fd.DataBody)
	}
	return out, nil
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
// Unmarshal, through decode, while the message's bytes are gRPC's to lend (a Client's
// connection reads messages into buffers it reuses as soon as Unmarshal returns); decode
// copies what it keeps. Unmarshal leaves the FlightData's byte fields empty and keeps
// decode's error in err, which the stream's reader checks after each Recv (an error
// returned to gRPC would reach the reader as a status without its sentinels).
type streamCodec struct {
	flightDataCodec
	decode func(fd *arrowflight.FlightData) error
	err    error
}

// Unmarshal decodes a FlightData through decode, and any other message as flightDataCodec.
func (c *streamCodec) Unmarshal(data []byte, v any) error {
	fd, ok := v.(*arrowflight.FlightData)
	if !ok || c.err != nil {
		return c.flightDataCodec.Unmarshal(data, v)
	}
	if err := c.flightDataCodec.Unmarshal(data, fd); err != nil {
		return err
	}
	c.err = c.decode(fd)
	fd.DataHeader, fd.AppMetadata, fd.DataBody = nil, nil, nil // gRPC's again
	return nil
}
