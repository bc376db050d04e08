package flight

import (
	"bytes"
	"errors"
	"slices"
	"sync"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestFlightDataCodec: what the codec marshals, the generated code unmarshals, the header
// padded with zeros so that the body is aligned in the message; what it unmarshals is what the
// generated code unmarshals, the byte fields views of the message, the body aligned; a
// malformed message is an error.
func TestFlightDataCodec(t *testing.T) {
	for pad := range 9 {
		fd := &arrowflight.FlightData{
			FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"x"}},
			DataHeader:       bytes.Repeat([]byte{'h'}, 8+pad),
			AppMetadata:      []byte("meta"),
			DataBody:         make([]byte, 1<<16),
		}
		fd.DataBody[7] = 7
		msg, err := flightDataCodec{}.Marshal(fd)
		require.NoError(t, err)
		var generated arrowflight.FlightData
		require.NoError(t, proto.Unmarshal(msg, &generated))
		require.Equal(t, fd.DataBody, generated.DataBody)
		require.Equal(t, fd.AppMetadata, generated.AppMetadata)
		require.True(t, proto.Equal(fd.FlightDescriptor, generated.FlightDescriptor))
		padding := generated.DataHeader[len(fd.DataHeader):]
		require.Equal(t, fd.DataHeader, generated.DataHeader[:len(fd.DataHeader)])
		require.Equal(t, make([]byte, len(padding)), padding)
		require.Zero(t, (len(msg)-len(fd.DataBody))%8, "pad %d: the body starts at a multiple of 8", pad)

		var got arrowflight.FlightData
		require.NoError(t, flightDataCodec{}.Unmarshal(msg, &got))
		require.True(t, proto.Equal(&generated, &got))
		require.True(t, aligned8(got.DataBody))
		require.Same(t, &msg[len(msg)-len(fd.DataBody)], &got.DataBody[0], "a view where it arrived")

		// a peer's message, body misaligned: moved to the message's start, still a view
		peer, err := proto.Marshal(&arrowflight.FlightData{DataHeader: fd.DataHeader, DataBody: fd.DataBody})
		require.NoError(t, err)
		require.NoError(t, flightDataCodec{}.Unmarshal(peer, &got))
		require.Equal(t, fd.DataHeader, got.DataHeader)
		require.Equal(t, fd.DataBody, got.DataBody)
		require.True(t, aligned8(got.DataBody))
	}

	for _, bad := range [][]byte{{0x12}, {0x12, 0x05, 'a'}, {0x82, 0x3e, 0xff, 0xff, 0xff, 0xff, 0x7f}, {0x0a, 0x02, 0xff, 0x01}} {
		require.Error(t, flightDataCodec{}.Unmarshal(bad, &arrowflight.FlightData{}), "%x", bad)
	}
	var other arrowflight.Ticket
	b, _ := proto.Marshal(&arrowflight.Ticket{Ticket: []byte("t")})
	require.NoError(t, flightDataCodec{}.Unmarshal(b, &other))
	require.Equal(t, "t", string(other.Ticket))
}

// FuzzFlightDataCodec: the codec accepts what the generated code accepts, and decodes it
// the same.
func FuzzFlightDataCodec(f *testing.F) {
	seed, _ := proto.Marshal(&arrowflight.FlightData{DataHeader: []byte{1, 2}, DataBody: []byte{3}, AppMetadata: []byte{4},
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: []byte("c")}})
	f.Add(seed)
	f.Add([]byte{0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got arrowflight.FlightData
		wantErr := proto.Unmarshal(b, &want)
		gotErr := flightDataCodec{}.Unmarshal(bytes.Clone(b), &got) // it may move the body within its input
		if wantErr != nil {
			return // the codec may or may not refuse what it skips: it never panics
		}
		require.NoError(t, gotErr)
		again, err := flightDataCodec{}.Marshal(&want)
		require.NoError(t, err)
		var back arrowflight.FlightData
		require.NoError(t, proto.Unmarshal(again, &back))
		require.True(t, bytes.Equal(want.DataBody, back.DataBody))
		require.True(t, bytes.Equal(want.AppMetadata, back.AppMetadata))
		require.True(t, bytes.HasPrefix(back.DataHeader, want.DataHeader))
		require.True(t, bytes.Equal(want.DataHeader, got.DataHeader))
		require.True(t, bytes.Equal(want.DataBody, got.DataBody))
		require.True(t, bytes.Equal(want.AppMetadata, got.AppMetadata))
		require.True(t, proto.Equal(want.FlightDescriptor, got.FlightDescriptor))
	})
}

// splitAt cuts b into parts at the offsets cuts (each taken modulo len(b)+1, in any order),
// as gRPC hands a message over in the frames it arrived in.
func splitAt(b []byte, cuts ...int) [][]byte {
	at := []int{0, len(b)}
	for _, c := range cuts {
		at = append(at, c%(len(b)+1))
	}
	slices.Sort(at)
	var parts [][]byte
	for i := 1; i < len(at); i++ {
		parts = append(parts, b[at[i-1]:at[i]])
	}
	return parts
}

func joinParts(parts [][]byte) []byte { return bytes.Join(parts, nil) }

// TestSplitFlightData: a FlightData cut anywhere into parts gives the data_header and
// data_body the generated code reads, the body as views of the parts; a malformed one is an
// error, and a group field is left to the whole-message parser.
func TestSplitFlightData(t *testing.T) {
	fd := &arrowflight.FlightData{
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"x"}},
		DataHeader:       bytes.Repeat([]byte{'h'}, 300),
		AppMetadata:      []byte("meta"),
		DataBody:         bytes.Repeat([]byte{1, 2, 3, 4, 5}, 20000),
	}
	msg, err := proto.Marshal(fd)
	require.NoError(t, err)
	padded, err := flightDataCodec{}.Marshal(fd)
	require.NoError(t, err)
	for _, cuts := range [][]int{nil, {1}, {2, 3, 4, 5, 6, 7}, {len(msg) - 1}, {16384, 32768, 49152}, {303, 304, 305, 306, 311}} {
		for _, m := range [][]byte{msg, padded} {
			parts := splitAt(m, cuts...)
			_, header, body, err := splitFlightData(parts)
			require.NoError(t, err, "cuts %v", cuts)
			require.Equal(t, fd.DataHeader, header[:len(fd.DataHeader)])
			require.Equal(t, fd.DataBody, joinParts(body))
			last := body[len(body)-1]
			require.Same(t, &m[len(m)-1], &last[len(last)-1], "the body views the parts")
		}
	}

	repeated := append(slices.Clone(msg), protowire.AppendBytes(protowire.AppendTag(nil, 1000, protowire.BytesType), []byte("last"))...)
	_, _, body, err := splitFlightData(splitAt(repeated, 7, 100))
	require.NoError(t, err)
	require.Equal(t, "last", string(joinParts(body)), "the last occurrence counts, as for the generated code")

	unknown := protowire.AppendVarint(protowire.AppendTag(slices.Clone(msg), 77, protowire.VarintType), 300)
	unknown = protowire.AppendFixed64(protowire.AppendTag(unknown, 78, protowire.Fixed64Type), 1)
	_, _, body, err = splitFlightData(splitAt(unknown, len(msg)+1))
	require.NoError(t, err, "unknown fields are skipped")
	require.Equal(t, fd.DataBody, joinParts(body))

	for _, bad := range [][]byte{{0x12}, {0x12, 0x05, 'a'}, {0x82, 0x3e, 0xff, 0xff, 0xff, 0xff, 0x7f}, {0x0a, 0x02, 0xff, 0x01}, {0x00}, {0x0f}, {0x09, 1, 2}} {
		_, _, _, err := splitFlightData(splitAt(bad, 1))
		require.Error(t, err, "%x", bad)
	}

	group := protowire.AppendTag(protowire.AppendTag(slices.Clone(msg), 9, protowire.StartGroupType), 9, protowire.EndGroupType)
	_, _, _, err = splitFlightData(splitAt(group, 5))
	require.ErrorIs(t, err, errGroup)
	var gotHeader []byte
	var gotBody [][]byte
	codec := &streamCodec{decode: func(h []byte, b [][]byte) error { gotHeader, gotBody = h, b; return nil }}
	require.NoError(t, codec.Unmarshal(bufferSlice(splitAt(group, 5, 900)), &arrowflight.FlightData{}))
	require.Equal(t, fd.DataHeader, gotHeader)
	require.Equal(t, fd.DataBody, joinParts(gotBody))
}

// bufferSlice holds parts as gRPC hands a received message to a codec.
func bufferSlice(parts [][]byte) mem.BufferSlice {
	var out mem.BufferSlice
	for _, p := range parts {
		out = append(out, mem.SliceBuffer(p))
	}
	return out
}

// FuzzSplitFlightData: whatever the generated code reads, splitFlightData reads the same from
// the message cut anywhere; what it does not, splitFlightData refuses or reads, never panicking.
func FuzzSplitFlightData(f *testing.F) {
	seed, _ := proto.Marshal(&arrowflight.FlightData{DataHeader: []byte{1, 2}, DataBody: bytes.Repeat([]byte{3}, 100), AppMetadata: []byte{4},
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: []byte("c")}})
	f.Add(seed, uint16(3), uint16(50))
	f.Add([]byte{0x12, 0x00}, uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, cut1, cut2 uint16) {
		var want arrowflight.FlightData
		wantErr := proto.Unmarshal(b, &want)
		_, header, body, err := splitFlightData(splitAt(b, int(cut1), int(cut2)))
		if wantErr != nil || errors.Is(err, errGroup) {
			return
		}
		require.NoError(t, err)
		require.True(t, bytes.Equal(want.DataHeader, header))
		require.True(t, bytes.Equal(want.DataBody, joinParts(body)))
	})
}

// TestServerCodecMarshal: a DoGet's message, its body written into frame buffers, is the
// message flightDataCodec marshals, and the frames go back to the pool once gRPC frees them
// (or, not handed to gRPC, once the sender frees them); other messages marshal as
// flightDataCodec's.
func TestServerCodecMarshal(t *testing.T) {
	out := func() int {
		frames.mu.Lock()
		defer frames.mu.Unlock()
		return frames.out
	}
	before := out()
	for _, size := range []int{0, 100, frameBytes - 1, frameBytes, 3*frameBytes + 5} {
		body := bytes.Repeat([]byte{7, 8, 9}, size/3+1)[:size]
		want, err := flightDataCodec{}.Marshal(&arrowflight.FlightData{DataHeader: bytes.Repeat([]byte{'h'}, 13), DataBody: body})
		require.NoError(t, err)
		fd := &framedData{header: bytes.Repeat([]byte{'h'}, 13)}
		for _, cut := range splitAt(body, 7, frameBytes+3) {
			n, err := fd.body.Write(cut)
			require.NoError(t, err)
			require.Equal(t, len(cut), n)
		}
		require.Equal(t, size, fd.body.size)
		got, err := serverCodec{}.Marshal(fd)
		require.NoError(t, err)
		require.Nil(t, fd.body.bufs, "the frames are gRPC's")
		require.Equal(t, want, got.Materialize(), "body of %d bytes", size)
		got.Free()
		require.Equal(t, before, out(), "every frame back in the pool")
	}
	unsent := &framedData{}
	_, _ = unsent.body.Write(make([]byte, 3*frameBytes))
	require.Equal(t, before+3, out())
	unsent.body.free()
	require.Equal(t, before, out())

	fd := &arrowflight.FlightData{DataHeader: []byte("h"), DataBody: make([]byte, 2*frameBytes)}
	want, err := flightDataCodec{}.Marshal(fd)
	require.NoError(t, err)
	got, err := serverCodec{}.Marshal(fd)
	require.NoError(t, err)
	require.Equal(t, want, got.Materialize())
	got, err = serverCodec{}.Marshal(&arrowflight.Ticket{Ticket: []byte("t")})
	require.NoError(t, err)
	var back arrowflight.Ticket
	require.NoError(t, serverCodec{}.Unmarshal(got, &back))
	require.Equal(t, "t", string(back.Ticket))
}

// TestFramePool: frames are reused, kept with their pages up to maxWarmFrames while a stream
// runs and idleWarmFrames once none does, the others' pages given back; larger buffers go to
// gRPC's pool.
func TestFramePool(t *testing.T) {
	p := &framePool{}
	p.begin()
	var held []*[]byte
	for range maxWarmFrames + 100 {
		b := p.Get(frameBytes)
		require.Len(t, *b, frameBytes)
		(*b)[0], (*b)[frameBytes-1] = 1, 2 // writable, whole
		held = append(held, b)
	}
	short := p.Get(10)
	require.Len(t, *short, 10)
	require.Equal(t, frameBytes, cap(*short))
	p.Put(short)
	for _, b := range held {
		p.Put(b)
	}
	require.Len(t, p.warm, maxWarmFrames)
	again := p.Get(frameBytes)
	require.Same(t, held[maxWarmFrames-2], again, "the last warm frame put back is handed out first")
	p.Put(again)
	p.end()
	require.Len(t, p.warm, idleWarmFrames)
	require.Equal(t, 0, p.active)
	b := p.Get(frameBytes)
	(*b)[0] = 3
	p.Put(b)

	big := p.Get(frameBytes + 1)
	require.Len(t, *big, frameBytes+1)
	warm := len(p.warm)
	p.Put(big)
	require.Len(t, p.warm, warm, "a larger buffer is gRPC's pool's")

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.begin()
			defer p.end()
			for i := range 2000 {
				b := p.Get(1 + i%frameBytes)
				(*b)[0] = byte(i)
				p.Put(b)
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, len(p.warm), idleWarmFrames)
}
