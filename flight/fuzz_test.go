package flight

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/table"
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

// FuzzFlightData feeds FlightData messages to the decoder a Client's Get and a Server's
// DoPut share, as a hostile peer would send them. Seeds: every golden tensor sent as the
// server sends it, in batches of a few rows. A tensor that decodes must write its values,
// and re-encoded as the server would send it, decode to the same values.
func FuzzFlightData(f *testing.F) {
	paths, _ := filepath.Glob("../ipc/testdata/arrow-cpp-17/*")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ts, _, err := dataset.Read(b, "seed", limits.Limits{})
		if err != nil {
			continue
		}
		for _, t := range ts {
			if msgs := flightMessages(t, "seed", 96); msgs != nil {
				f.Add(encodeFuzz(msgs))
			}
		}
	}
	// Arrow's integration streams, every type, as FlightData.
	streams, _ := filepath.Glob("../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/*/*.stream")
	for _, p := range streams {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var msgs []fuzzMessage
		for _, fd := range flightData(b, "seed") {
			msgs = append(msgs, fuzzMessage{fd.DataHeader, fd.DataBody})
		}
		f.Add(encodeFuzz(msgs))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := decodeFuzz(data)
		lim := limits.Limits{MaxElements: 1 << 20, MaxCopySize: 64 << 20, MaxDenseElements: 1 << 20}
		xs, err := decodeMessages(msgs, lim)
		if err != nil {
			return
		}
		for _, x := range xs {
			roundTrip(t, x, lim)
		}
	})
}

// roundTrip checks that x, decoded from FlightData, is sent as FlightData that decodes to
// the same values.
func roundTrip(t *testing.T, x dataset.Tensor, lim limits.Limits) {
	t.Helper()
	var want bytes.Buffer
	if _, err := x.WriteValues(&want, lim.MaxDenseElements); err != nil {
		if errors.Is(err, limits.ErrExceeded) {
			return
		}
		t.Fatalf("%s decoded but its values cannot be written: %v", x.Name, err)
	}
	again := flightMessages(x, "f", 0)
	if again == nil {
		return // a tensor Flight cannot carry (a scalar, say)
	}
	backs, err := decodeMessages(again, lim)
	if err != nil || len(backs) != 1 {
		t.Fatalf("%s: what the server would send does not decode to one tensor: %v", x.Name, err)
	}
	back := backs[0]
	var got bytes.Buffer
	_, _ = back.WriteValues(&got, lim.MaxDenseElements)
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Fatalf("%s: values differ after a round trip", x.Name)
	}
}

// decodeMessages decodes FlightData messages as a Client or Server does.
func decodeMessages(msgs []fuzzMessage, lim limits.Limits) ([]dataset.Tensor, error) {
	dec := &streamDecoder{name: "f", lim: lim}
	defer dec.release()
	for _, m := range msgs {
		if err := dec.add(m.header, m.body); err != nil {
			return nil, err
		}
	}
	return dec.tensors()
}

// flightMessages returns the FlightData a server sends for t in batches of at most
// batchBytes bytes (0: one batch), or nil when Flight cannot carry t.
func flightMessages(t dataset.Tensor, name string, batchBytes int64) []fuzzMessage {
	recs, err := t.Records(memory.DefaultAllocator, name, batchBytes)
	if err != nil {
		return nil
	}
	var c captureData
	w := arrowflight.NewRecordWriter(&c, arrowipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		_ = w.Write(r)
		r.Release()
	}
	_ = w.Close()
	return c.msgs
}

// FuzzTakeTicket: any bytes as a take ticket are refused (wrapping ErrTicket) or give a
// request of a name, at most the limit's rows and columns each named once, which TakeTicket
// writes back as a ticket that parses to the same request; the work is linear in the ticket.
func FuzzTakeTicket(f *testing.F) {
	f.Add([]byte(`{"take":{"name":"t","rows":[3,-1,3],"columns":["emb","label"]}}`))
	f.Add([]byte(`{"take":{"name":"t","rows":[]}}`))
	f.Add([]byte(`{"take":{"name":"t","rows":[1e400]}}`))
	f.Add([]byte(`{"take":{"name":"t","rows":[1],"columns":["a","a"]}} {}`))
	f.Add([]byte(`{"take":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parseTake(b, 64)
		if err != nil {
			if !errors.Is(err, ErrTicket) {
				t.Fatalf("%q: %v does not wrap ErrTicket", b, err)
			}
			return
		}
		if req.Name == "" || req.Rows == nil || len(req.Rows) > 64 {
			t.Fatalf("%q: accepted %+v", b, req)
		}
		seen := map[string]bool{}
		for _, c := range req.Columns {
			if c == "" || seen[c] {
				t.Fatalf("%q: column %q accepted twice or empty", b, c)
			}
			seen[c] = true
		}
		again, err := parseTake(TakeTicket(req.Name, req.Rows, req.Columns), 64)
		if err != nil {
			t.Fatalf("%q: TakeTicket of %+v does not parse: %v", b, req, err)
		}
		if again.Name != req.Name || !slices.Equal(again.Rows, req.Rows) || !slices.Equal(again.Columns, req.Columns) {
			t.Fatalf("%q: %+v written back parses to %+v", b, req, again)
		}
	})
}

// FuzzBatchesCommand: any bytes as a batches command are refused (wrapping ErrBatches) or
// give a request of a name, a batch size above 0, a shard inside the shards, columns each
// named once and a cursor, which BatchesTicket writes back as a command that parses to the
// same options; the work is linear in the command.
func FuzzBatchesCommand(f *testing.F) {
	f.Add([]byte(`{"batches":{"name":"t","batch_size":256,"shuffle":true,"seed":42,"epoch":3,"shard":1,"shards":4,"drop_last":true,"columns":["emb","label"]}}`))
	f.Add([]byte(`{"batches":{"name":"t","batch_size":1,"after":"c1.0123456789abcdef.1.42.3.256.1.4.1.17"}}`))
	f.Add([]byte(`{"batches":{"name":"t","batch_size":0}}`))
	f.Add([]byte(`{"batches":{"name":"t","batch_size":2,"shard":4,"shards":4}}`))
	f.Add([]byte(`{"batches":{"name":"t","batch_size":2,"seed":18446744073709551616}}`))
	f.Add([]byte(`{"batches":{"name":"t","batch_size":2,"after":"c1"}} {}`))
	f.Add([]byte(`{"batches":null,"take":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, o, err := parseBatches(b)
		if err != nil {
			if !errors.Is(err, ErrBatches) {
				t.Fatalf("%q: %v does not wrap ErrBatches", b, err)
			}
			return
		}
		if req.Name == "" || o.Size <= 0 || o.Shard < 0 || o.Shard >= max(o.Shards, 1) || int64(o.Shards) > table.MaxShards || o.Epoch < 0 || (!o.Shuffle && o.Seed != 0) {
			t.Fatalf("%q: accepted %+v", b, req)
		}
		seen := map[string]bool{}
		for _, c := range o.Columns {
			if c == "" || seen[c] {
				t.Fatalf("%q: column %q accepted twice or empty", b, c)
			}
			seen[c] = true
		}
		if !isBatches(b) {
			t.Fatalf("%q: parsed, but DoGet would not route it to batches", b)
		}
		again, o2, err := parseBatches(BatchesTicket(req.Name, o))
		if err != nil {
			t.Fatalf("%q: BatchesTicket of %+v does not parse: %v", b, o, err)
		}
		if again.Name != req.Name || !slices.Equal(o.Columns, o2.Columns) || (o.After == nil) != (o2.After == nil) ||
			(o.After != nil && *o.After != *o2.After) {
			t.Fatalf("%q: %+v written back parses to %+v", b, o, o2)
		}
		o.Columns, o2.Columns, o.After, o2.After = nil, nil, nil, nil
		if !reflect.DeepEqual(o, o2) {
			t.Fatalf("%q: %+v written back parses to %+v", b, o, o2)
		}
	})
}
