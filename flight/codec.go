package flight

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/memcopy"
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
	head, err := flightDataHead(fd, len(fd.DataBody), len(fd.DataBody))
	if err != nil {
		return nil, err
	}
	return append(head, fd.DataBody...), nil
}

// flightDataHead returns the bytes of a FlightData's message before the bytes of a data_body of
// body bytes (its tag and length included; fd's own DataBody is not looked at), with room for
// extra more: the data_header padded so that the body starts at a multiple of 8 bytes (see
// Marshal).
func flightDataHead(fd *arrowflight.FlightData, body, extra int) ([]byte, error) {
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
	head := len(fd.DataHeader)
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

// serverCodec is the gRPC codec of a Server's calls. It marshals the record batches of a DoGet
// (framedData) as a head and the body payloadSender copied into frame buffers, which gRPC gives
// back to the pool once written: a DoGet's messages leave no garbage. Anything else it
// marshals as flightDataCodec; it unmarshals as flightDataCodec, into memory of each message's
// own, which a DoPut's records keep viewing.
type serverCodec struct{ flightDataCodec }

// Marshal marshals v: a framedData as its head and frames, anything else as flightDataCodec.
func (c serverCodec) Marshal(v any) (mem.BufferSlice, error) {
	fd, ok := v.(*framedData)
	if !ok {
		b, err := c.flightDataCodec.Marshal(v)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	head, err := flightDataHead(&arrowflight.FlightData{DataHeader: fd.header, AppMetadata: fd.appMetadata}, fd.body.size, 0)
	if err != nil {
		return nil, err
	}
	out := make(mem.BufferSlice, 0, 1+len(fd.body.bufs))
	out = append(out, mem.SliceBuffer(head))
	for _, b := range fd.body.bufs {
		out = append(out, mem.NewBuffer(b, frames))
	}
	fd.body.bufs = nil // gRPC's now
	return out, nil
}

// framedData is a FlightData a Server's DoGet sends: a record batch's metadata and its body,
// already in frame buffers.
type framedData struct {
	header      []byte
	appMetadata []byte
	body        frameWriter
}

// frameWriter collects what is written to it in frame buffers (frames).
type frameWriter struct {
	bufs []*[]byte
	size int
}

// Write copies p into frame buffers (memcopy: calls the goroutine can be preempted at).
func (w *frameWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if k := len(w.bufs); k == 0 || len(*w.bufs[k-1]) == frameBytes {
			b := frames.Get(frameBytes)
			*b = (*b)[:0]
			w.bufs = append(w.bufs, b)
		}
		last := w.bufs[len(w.bufs)-1]
		k := min(len(p), frameBytes-len(*last))
		*last = (*last)[:len(*last)+k]
		p = p[memcopy.Copy((*last)[len(*last)-k:], p[:k]):]
	}
	w.size += n
	return n, nil
}

// free puts back the frame buffers gRPC was not given.
func (w *frameWriter) free() {
	for _, b := range w.bufs {
		frames.Put(b)
	}
	w.bufs, w.size = nil, 0
}

// payloadSender is the ipc.PayloadWriter of a Server's DoGet: arrow-go's IPC writer makes
// each message's metadata and gives its body buffers, which are copied once, from the record
// (a mapped file's, on the handler's goroutine, under Guard) into frame buffers, and sent as
// they are. appMetadata, when set, goes with the next record batch message sent (a batches
// stream's cursor), and is cleared then. check, when set (setCheck), is asked once a
// message's body is copied into its frames and before it is sent: an error from it (the file
// the body was copied from changed) fails the stream with that message unsent, so that no
// message holds bytes of a version after the one the stream began with.
type payloadSender struct {
	stream      grpc.ServerStream
	appMetadata []byte
	call        *call // of stream, for its access record; found at the first message
	found       bool
	check       func() error
}

// setCheck has the messages sent from now on checked by check (nil: none).
func (s *payloadSender) setCheck(check func() error) { s.check = check }

func (s *payloadSender) Start() error { return nil }

func (s *payloadSender) Close() error { return nil }

// WritePayload sends one message.
func (s *payloadSender) WritePayload(p arrowipc.Payload) error {
	meta := p.Meta()
	defer meta.Release()
	fd := &framedData{header: meta.Bytes()}
	if s.appMetadata != nil && isRecordBatch(meta.Bytes()) {
		fd.appMetadata, s.appMetadata = s.appMetadata, nil
	}
	defer fd.body.free() // what Marshal did not hand to gRPC
	if err := p.SerializeBody(&fd.body); err != nil {
		return err
	}
	if s.check != nil && fd.body.size > 0 { // copied: what is sent is what the check vouches for
		if err := s.check(); err != nil {
			return err
		}
	}
	if !s.found {
		s.call, s.found = callOf(s.stream.Context()), true
	}
	rows := recordBatchRows(meta.Bytes())
	if err := s.stream.SendMsg(fd); err != nil {
		return err
	}
	s.call.noteRowsSent(rows)
	return nil
}

// abandonable is the payload writer of an IPC writer whose stream may fail: once abandoned it
// sends and ends nothing, so that the writer is closed after a failure only to let go of the
// dictionaries it last sent (arrow-go's writer keeps them until Close), never to end the
// stream as whole (a data URL's end-of-stream marker).
type abandonable struct {
	arrowipc.PayloadWriter
	abandoned bool
}

func (a *abandonable) Start() error {
	if a.abandoned {
		return nil
	}
	return a.PayloadWriter.Start()
}

func (a *abandonable) WritePayload(p arrowipc.Payload) error {
	if a.abandoned {
		return nil
	}
	return a.PayloadWriter.WritePayload(p)
}

func (a *abandonable) Close() error {
	if a.abandoned {
		return nil
	}
	return a.PayloadWriter.Close()
}

// abandon closes w, writing through a, after its stream failed: what w holds is released,
// nothing is sent.
func (a *abandonable) abandon(w *arrowipc.Writer) {
	a.abandoned = true
	_ = w.Close()
}

// isRecordBatch reports whether header, a message's flatbuffer that arrow-go's IPC writer
// made (not input), is a record batch's.
func isRecordBatch(header []byte) bool {
	return len(header) >= 8 && arrowfb.GetRootAsMessage(header, 0).HeaderType() == arrowfb.MessageHeaderRecordBatch
}

// Unmarshal decodes a DoPut's message (a putMessage) through its decode while gRPC lends the
// frames, without a copy of the message; any other as flightDataCodec, viewing a copy of
// data.
func (c serverCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if m, ok := v.(*putMessage); ok {
		if m.arrived != nil {
			m.arrived()
		}
		m.err = decodeFrames(data, m.decode)
		return nil
	}
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
	return decodeFrames(data, func(_ []byte, header []byte, body [][]byte) error {
		c.err = c.decode(header, body)
		return nil
	})
}

// decodeFrames parses the FlightData held in data (the frames gRPC received it in) and calls
// decode with its descriptor's bytes (nil when it has none), a copy of its data_header and
// views of its data_body, which decode copies where it keeps them.
func decodeFrames(data mem.BufferSlice, decode func(desc, header []byte, body [][]byte) error) error {
	parts := make([][]byte, 0, len(data))
	for _, b := range data {
		if d := b.ReadOnlyData(); len(d) > 0 {
			parts = append(parts, d)
		}
	}
	desc, header, body, err := splitFlightData(parts)
	if errors.Is(err, errGroup) { // rare enough to parse as a whole
		var fd arrowflight.FlightData
		if err := (flightDataCodec{}).Unmarshal(data.Materialize(), &fd); err != nil {
			return err
		}
		desc = nil
		if fd.FlightDescriptor != nil {
			if desc, err = proto.Marshal(fd.FlightDescriptor); err != nil {
				return err
			}
		}
		header, body, err = fd.DataHeader, [][]byte{fd.DataBody}, nil
	}
	if err != nil {
		return err
	}
	return decode(desc, header, body)
}

// splitFlightData parses a FlightData held in parts (a message split across frames) and returns
// a copy of its descriptor's bytes (checked as the generated code would check them) and of its
// data_header, and views of its data_body; the last occurrence of each field counts, as for the
// generated code (descriptors merge), and other fields are checked and skipped.
func splitFlightData(parts [][]byte) (desc, header []byte, body [][]byte, err error) {
	r := newPartsReader(parts)
	for !r.done() {
		tag, err := r.varint()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("flight: FlightData: %w", err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
			return nil, nil, nil, fmt.Errorf("flight: FlightData: field number %d: %w", num, errMalformed)
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
			return nil, nil, nil, fmt.Errorf("flight: FlightData field %d: %w", num, err)
		}
		if typ != protowire.BytesType {
			continue
		}
		switch num {
		case 1: // the descriptor: checked as the generated code would (a repeated one merges)
			b := r.copy(int(n))
			var d arrowflight.FlightDescriptor
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, &d); err != nil {
				return nil, nil, nil, fmt.Errorf("flight: FlightData descriptor: %w", err)
			}
			desc = append(desc, b...)
		case 2:
			header = r.copy(int(n))
		case 1000:
			body = r.views(int(n))
		default:
			r.views(int(n))
		}
	}
	return desc, header, body, nil
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
