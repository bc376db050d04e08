package flight

import (
	"bytes"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/require"
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
