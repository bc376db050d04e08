package flight

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/flightreplay"
	"github.com/ndarrow/ndarrow/ndarray"
)

// servePeer serves, as a third-party Flight server would, one flight name whose stream is
// records, each a record batch message.
func servePeer(t *testing.T, name string, records ...arrow.Record) *Client {
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(records[0].Schema()))
	rows := int64(0)
	for _, r := range records {
		require.NoError(t, w.Write(r))
		rows += r.NumRows()
		r.Release()
	}
	require.NoError(t, w.Close())
	rec := &flightreplay.Recording{Infos: []*arrowflight.FlightInfo{{
		Schema:           arrowflight.SerializeSchema(records[0].Schema(), memory.DefaultAllocator),
		FlightDescriptor: pathDescriptor(name),
		Endpoint:         []*arrowflight.FlightEndpoint{{Ticket: &arrowflight.Ticket{Ticket: []byte(name)}}},
		TotalRecords:     rows,
		TotalBytes:       -1,
	}}}
	rec.AddStream(name, flightData(buf.Bytes(), name))
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	return dial(t, srv.URI(), ClientOptions{})
}

// TestPermutedTensorsFromAPeer: a fixed_shape_tensor column whose cells are laid out in a
// permuted order is not copied as it arrives (its values are not row-major cells) but
// decoded: the tensor fetched is the logical one.
func TestPermutedTensorsFromAPeer(t *testing.T) {
	typ, err := arrowtensor.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{2, 3}, []int{1, 0}, nil)
	require.NoError(t, err)
	batch := func(first, rows int) arrow.Record {
		b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 6, arrow.PrimitiveTypes.Float32)
		defer b.Release()
		values := b.ValueBuilder().(*array.Float32Builder)
		for r := first; r < first+rows; r++ {
			b.Append(true)
			for k := range 6 {
				values.Append(float32(r*6 + k))
			}
		}
		storage := b.NewArray()
		defer storage.Release()
		col := array.NewExtensionArrayWithStorage(typ, storage)
		defer col.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "p", Type: typ}}, nil)
		return array.NewRecord(schema, []arrow.Array{col}, int64(rows))
	}
	c := servePeer(t, "p", batch(0, 3), batch(3, 4))
	got, err := GetDense[float32](context.Background(), c, "p")
	require.NoError(t, err)
	require.Equal(t, ndarray.Shape{7, 3, 2}, got.Shape())
	for r := range int64(7) {
		for i := range int64(3) {
			for j := range int64(2) {
				require.Equal(t, float32(r*6+j*3+i), got.Get(r, i, j), "[%d %d %d]", r, i, j)
			}
		}
	}
}

// TestADecoderKeepsNothing: once a stream's tensors are taken and its decoder released,
// the decoder keeps none of them: gRPC keeps a finished stream, and the codec that holds the
// decoder, for a while after the last message (a fetch of 256 MiB then held twice its size
// while the next one began).
func TestADecoderKeepsNothing(t *testing.T) {
	d := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]) }, 1<<12, 64)
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "t", d, nil, 1000)
	require.NoError(t, err)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	for _, capRows := range []int64{0, 1 << 12} {
		dec := &streamDecoder{name: "t", capRows: capRows, capBytes: 1 << 30}
		var held weak.Pointer[float32]
		func() {
			for _, fd := range flightData(buf.Bytes(), "t") {
				body := bytes.Clone(fd.DataBody)
				require.NoError(t, dec.addParts(fd.DataHeader, [][]byte{body[:len(body)/2], body[len(body)/2:]}))
			}
			require.True(t, dec.direct)
			ts, err := dec.tensors()
			require.NoError(t, err)
			got := ts[0].Dense.(*ndarray.Dense[float32])
			require.Equal(t, d.Data(), got.Data())
			held = weak.Make(&got.Data()[0])
			dec.release()
		}()
		runtime.GC()
		runtime.GC()
		require.Nil(t, held.Value(), "the decoder keeps the tensor it made")
		runtime.KeepAlive(dec)
	}
}
