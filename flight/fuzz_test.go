package flight

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ipc/tensorfile"
)

// fuzzMessage is one FlightData's metadata and body.
type fuzzMessage struct{ header, body []byte }

// encodeFuzz lays FlightData out for the fuzzer: per message, a little-endian uint32 length
// and the metadata, then a uint32 length and the body.
func encodeFuzz(msgs []fuzzMessage) []byte {
	var b []byte
	for _, m := range msgs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.header)))
		b = append(b, m.header...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.body)))
		b = append(b, m.body...)
	}
	return b
}

func decodeFuzz(b []byte) []fuzzMessage {
	var out []fuzzMessage
	next := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, false
		}
		v := b[:n]
		b = b[n:]
		return v, true
	}
	for len(out) < 1024 {
		h, ok := next()
		if !ok {
			break
		}
		body, _ := next()
		out = append(out, fuzzMessage{h, body})
	}
	return out
}

// captureData collects what a Flight record writer sends.
type captureData struct{ msgs []fuzzMessage }

func (c *captureData) Send(fd *arrowflight.FlightData) error {
	c.msgs = append(c.msgs, fuzzMessage{bytes.Clone(fd.DataHeader), bytes.Clone(fd.DataBody)})
	return nil
}

// FuzzFlightData feeds FlightData messages to both of the client's decoders (record batches
// of a fixed_shape_tensor column read in place; anything else assembled into a stream for the
// ipc readers), as a hostile server would send them. Seeds: every golden tensor sent as the
// server sends it, in batches of a few rows.
func FuzzFlightData(f *testing.F) {
	paths, _ := filepath.Glob("../ipc/testdata/arrow-cpp-17/*")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ts, err := tensorfile.Read(b, "seed")
		if err != nil {
			continue
		}
		for _, t := range ts {
			recs, err := t.Records(memory.DefaultAllocator, "seed", 96)
			if err != nil {
				continue
			}
			var c captureData
			w := arrowflight.NewRecordWriter(&c, arrowipc.WithSchema(recs[0].Schema()))
			for _, r := range recs {
				_ = w.Write(r)
				r.Release()
			}
			_ = w.Close()
			f.Add(encodeFuzz(c.msgs))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := decodeFuzz(data)
		if len(msgs) == 0 {
			return
		}
		if dec, err := ipc.NewColumnDecoder(msgs[0].header); err == nil {
			ok := true
			for _, m := range msgs[1:] {
				if dec.Decode(m.header, m.body) != nil {
					ok = false
					break
				}
			}
			if cols := dec.Columns(); ok && len(cols) == 1 && len(cols[0].Chunks) > 0 {
				if d, err := tensorfile.ColumnDense(cols[0].Chunks, cols[0].Type); err == nil {
					_, _ = d.WriteTo(io.Discard)
				}
			}
		}
		var buf []byte
		for _, m := range msgs {
			var err error
			if buf, err = appendMessage(buf, m.header, m.body); err != nil {
				return
			}
		}
		buf = append(buf, endOfStream...)
		ts, err := tensorfile.Read(buf, "f")
		if err != nil {
			return
		}
		for _, x := range ts {
			var want bytes.Buffer
			if _, err := x.WriteValues(&want); err != nil {
				t.Fatalf("%s read but its values cannot be written: %v", x.Name, err)
			}
			// Re-encoded as the server would send it, it reads back the same.
			rec, err := x.Record(memory.DefaultAllocator, "f")
			if err != nil {
				continue // a tensor Flight cannot carry (a scalar, say)
			}
			var enc bytes.Buffer
			w := arrowipc.NewWriter(&enc, arrowipc.WithSchema(rec.Schema()))
			if err := w.Write(rec); err != nil {
				t.Fatalf("%s: re-encode: %v", x.Name, err)
			}
			rec.Release()
			_ = w.Close()
			back, err := tensorfile.Read(enc.Bytes(), "f")
			if err != nil || len(back) != 1 {
				t.Fatalf("%s: re-encoded stream does not read: %v", x.Name, err)
			}
			var got bytes.Buffer
			_, _ = back[0].WriteValues(&got)
			if !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Fatalf("%s: values differ after a round trip", x.Name)
			}
		}
	})
}
