package flight

import (
	"bytes"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestFlightDataCodec: what the codec decodes is what the generated code decodes, the
// byte fields views of the message, and a malformed message an error.
func TestFlightDataCodec(t *testing.T) {
	fd := &arrowflight.FlightData{
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"x"}},
		DataHeader:       []byte("header"),
		AppMetadata:      []byte("meta"),
		DataBody:         make([]byte, 1<<16),
	}
	fd.DataBody[7] = 7
	msg, err := flightDataCodec{}.Marshal(fd)
	require.NoError(t, err)
	var got arrowflight.FlightData
	require.NoError(t, flightDataCodec{}.Unmarshal(msg, &got))
	require.True(t, proto.Equal(fd, &got))
	// the body is a view of the message, moved to its start to be aligned
	require.True(t, aligned8(got.DataBody))
	require.Same(t, &msg[0], &got.DataBody[0])

	// an aligned message whose body is already aligned is viewed where it is
	for pad := range 8 {
		fd.DataHeader = make([]byte, 8+pad)
		msg, err := flightDataCodec{}.Marshal(fd)
		require.NoError(t, err)
		var got arrowflight.FlightData
		require.NoError(t, flightDataCodec{}.Unmarshal(msg, &got))
		require.True(t, proto.Equal(fd, &got), "pad %d", pad)
		require.True(t, aligned8(got.DataBody), "pad %d", pad)
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
		gotErr := flightDataCodec{}.Unmarshal(b, &got)
		if wantErr != nil {
			return // the codec may or may not refuse what it skips: it never panics
		}
		require.NoError(t, gotErr)
		require.True(t, bytes.Equal(want.DataHeader, got.DataHeader))
		require.True(t, bytes.Equal(want.DataBody, got.DataBody))
		require.True(t, bytes.Equal(want.AppMetadata, got.AppMetadata))
		require.True(t, proto.Equal(want.FlightDescriptor, got.FlightDescriptor))
	})
}
