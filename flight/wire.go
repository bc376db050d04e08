package flight

import (
	"encoding/binary"
	"fmt"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ipc"
)

// appendMessage appends one FlightData's message, metadata header and body, to buf as an
// encapsulated IPC message (continuation marker, length, metadata padded to 8 bytes, body),
// so that the messages of a stream become an Arrow IPC stream the ipc readers verify. It
// checks what framing needs: the metadata is a verified Message whose body length is the
// body's; the rest is the readers' job. Empty FlightData (app metadata only) adds nothing.
func appendMessage(buf, header, body []byte) ([]byte, error) {
	if len(header) == 0 {
		if len(body) != 0 {
			return buf, fmt.Errorf("a body of %d bytes without metadata: %w", len(body), ipc.ErrInvalid)
		}
		return buf, nil
	}
	if err := arrowfb.VerifyMessage(header); err != nil {
		return buf, fmt.Errorf("message metadata: %w: %w", ipc.ErrInvalid, err)
	}
	if n := arrowfb.GetRootAsMessage(header, 0).BodyLength(); n != int64(len(body)) {
		return buf, fmt.Errorf("message metadata says a body of %d bytes, %d came: %w", n, len(body), ipc.ErrInvalid)
	}
	padded := (len(header) + 7) &^ 7
	var prefix [8]byte
	binary.LittleEndian.PutUint32(prefix[:4], 0xffffffff)
	binary.LittleEndian.PutUint32(prefix[4:], uint32(padded))
	buf = append(buf, prefix[:]...)
	buf = append(buf, header...)
	buf = append(buf, make([]byte, padded-len(header))...)
	return append(buf, body...), nil
}

// endOfStream is the IPC end-of-stream marker.
var endOfStream = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
