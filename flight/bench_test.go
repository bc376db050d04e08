package flight

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/heappeak"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// benchRows × benchCols float32 is the 256 MiB tensor of the DoGet benchmarks.
const benchRows, benchCols = 65536, 1024

// plainServer is arrow-go's own Flight server sending a record batch of one plain float32
// column: the baseline.
type plainServer struct {
	arrowflight.BaseFlightServer
	batches []arrow.Record
}

func (p *plainServer) DoGet(_ *arrowflight.Ticket, stream arrowflight.FlightService_DoGetServer) error {
	w := arrowflight.NewRecordWriter(stream, arrowipc.WithSchema(p.batches[0].Schema()))
	defer w.Close()
	for _, b := range p.batches {
		if err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// drainArrowGo reads a ticket with arrow-go's client and reader, touching every batch.
func drainArrowGo(b *testing.B, c arrowflight.Client, ticket string) int64 {
	stream, err := c.DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte(ticket)})
	require.NoError(b, err)
	rd, err := arrowflight.NewRecordReader(stream)
	require.NoError(b, err)
	defer rd.Release()
	rows := int64(0)
	for rd.Next() {
		rows += rd.Record().NumRows()
	}
	require.NoError(b, rd.Err())
	return rows
}

func reportGBs(b *testing.B, n int64) {
	b.SetBytes(n)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkDoGet moves a 256 MiB float32 tensor over loopback gRPC with the default 4 MiB
// messages: ndarrow's server read by ndarrow's client into one Dense (one copy out of the
// messages), the same stream drained by arrow-go's reader, and arrow-go's own server sending
// the same bytes as a plain float32 column in the same number of batches.
func BenchmarkDoGet(b *testing.B) {
	d := ndarray.New[float32](benchRows, benchCols)
	for i := range d.Data() {
		d.Data()[i] = float32(i)
	}
	size := int64(len(d.Data()) * 4)
	s := serve(b, Options{}, "grpc")
	require.NoError(b, s.store.Add("t", dataset.Tensor{Dense: d}))
	c := dial(b, s.uri, ClientOptions{MaxBytes: 2 * size})

	b.Run("ndarrow/Get", func(b *testing.B) {
		for range b.N {
			got, err := GetDense[float32](context.Background(), c, "t")
			require.NoError(b, err)
			require.EqualValues(b, benchRows, got.Dim(0))
		}
		reportGBs(b, size)
	})
	b.Run("ndarrow/arrow-go-reader", func(b *testing.B) {
		raw := rawClient(b, s.uri)
		for range b.N {
			require.EqualValues(b, benchRows, drainArrowGo(b, raw, "t"))
		}
		reportGBs(b, size)
	})

	// The baseline: the same bytes as a plain float32 column, batches of the same rows.
	rec, err := dataset.Tensor{Dense: d}.Record(memory.DefaultAllocator, "t")
	require.NoError(b, err)
	defer rec.Release()
	batches, err := dataset.SplitRecord(rec, DefaultMaxMessageBytes-messageHeadroom)
	require.NoError(b, err)
	plain := &plainServer{}
	for _, batch := range batches {
		rows := int(batch.NumRows())
		start := int(batch.Column(0).Data().Offset()) * benchCols
		vals := d.Data()[start : start+rows*benchCols]
		col := array.NewFloat32Data(array.NewData(arrow.PrimitiveTypes.Float32, len(vals),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0))
		schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: arrow.PrimitiveTypes.Float32}}, nil)
		plain.batches = append(plain.batches, array.NewRecord(schema, []arrow.Array{col}, int64(len(vals))))
		col.Release()
		batch.Release()
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	gs := grpc.NewServer()
	arrowflight.RegisterFlightServiceServer(gs, plain)
	go gs.Serve(lis)
	defer gs.Stop()
	raw, err := arrowflight.NewClientWithMiddleware(lis.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(b, err)
	defer raw.Close()
	b.Run("arrow-go/plain-record-batches", func(b *testing.B) {
		for range b.N {
			require.EqualValues(b, benchRows*benchCols, drainArrowGo(b, raw, "t"))
		}
		reportGBs(b, size)
	})
}

// BenchmarkDoGetParquet serves a float32 fixed_shape_tensor column [rows, 1024] as a Parquet
// file of 64 MiB row groups (ZSTD) and, as the baseline, as an Arrow IPC file, both through
// AddDir, and drains each DoGet with arrow-go's reader. GB/s counts the float32 payload;
// peak-MiB is the most heap held above the start while serving: for Parquet it should not
// grow with the file, since DoGet decodes a row group at a time.
func BenchmarkDoGetParquet(b *testing.B) {
	sizes := []int64{64 << 20, 512 << 20}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, size := range sizes {
		rows := size / (benchCols * 4)
		d := ndarray.New[float32](rows, benchCols)
		for i := range d.Data() {
			d.Data()[i] = float32(i)
		}
		rec, err := dataset.Tensor{Kind: dataset.KindFixedShape, Dense: d}.Record(memory.DefaultAllocator, "emb")
		require.NoError(b, err)
		dir := b.TempDir()
		f, err := os.Create(filepath.Join(dir, "t.parquet"))
		require.NoError(b, err)
		w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{RowGroupBytes: 64 << 20})
		require.NoError(b, err)
		require.NoError(b, w.Write(rec))
		require.NoError(b, w.Close())
		require.NoError(b, f.Close())
		f, err = os.Create(filepath.Join(dir, "a.arrow"))
		require.NoError(b, err)
		iw, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(rec.Schema()))
		require.NoError(b, err)
		require.NoError(b, iw.Write(rec))
		require.NoError(b, iw.Close())
		require.NoError(b, f.Close())
		rec.Release()
		d = nil

		s := serve(b, Options{}, "grpc")
		_, err = s.store.AddDir(dir, limits.Limits{})
		require.NoError(b, err)
		raw := rawClient(b, s.uri)
		for _, ticket := range []string{"t.emb", "a.emb"} {
			format := map[string]string{"t.emb": "parquet", "a.emb": "arrow"}[ticket]
			b.Run(fmt.Sprintf("%s/%dMiB", format, size>>20), func(b *testing.B) {
				stop := heappeak.Watch()
				for range b.N {
					require.EqualValues(b, rows, drainArrowGo(b, raw, ticket))
				}
				peak := stop()
				reportGBs(b, size)
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			})
		}
	}
}

// BenchmarkFetch fetches a float32 tensor of 256 MiB and 1 GiB from ndarrow's server on
// loopback with GetDense (received into one array allocated once), from the endpoint's data
// URL (the values read from the socket straight into place) and by DoGet (-grpc: each
// message copied in from gRPC's frames and dropped), beside the floor: the same bytes written by one goroutine into a loopback TCP
// connection and read by another into one preallocated buffer. peak-MiB is the most memory
// held above the start while fetching — the heap and the frame buffers mapped outside it
// (framePool), the server's messages on their way included (its tensor is held before the
// start); per-tensor is that over the tensor's size.
func BenchmarkFetch(b *testing.B) {
	for _, rows := range []int64{65536, 262144} {
		d := ndarray.New[float32](rows, benchCols)
		for i := range d.Data() {
			d.Data()[i] = float32(i)
		}
		size := int64(len(d.Data()) * 4)
		s := serve(b, Options{}, "grpc")
		require.NoError(b, s.store.Add("t", dataset.Tensor{Dense: d}))
		for _, via := range []string{"", "-grpc"} {
			c := dial(b, s.uri, ClientOptions{MaxBytes: 2 * size, GRPCOnly: via == "-grpc"})
			b.Run(fmt.Sprintf("ndarrow-GetDense%s/%dMiB", via, size>>20), func(b *testing.B) {
				// as ndarrow get runs: garbage collected when the heap has grown by 2%
				defer debug.SetGCPercent(debug.SetGCPercent(2))
				runtime.GC()
				stop := heappeak.WatchWith(frames.resident)
				for range b.N {
					b.StopTimer()
					runtime.GC() // the last iteration's tensor
					b.StartTimer()
					got, err := GetDense[float32](context.Background(), c, "t")
					require.NoError(b, err)
					require.EqualValues(b, rows, got.Dim(0))
				}
				peak := stop()
				reportGBs(b, size)
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(peak)/float64(size), "per-tensor")
			})
		}
		src := arrow.Float32Traits.CastToBytes(d.Data())
		b.Run(fmt.Sprintf("raw-tcp/%dMiB", size>>20), func(b *testing.B) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(b, err)
			defer lis.Close()
			go func() {
				for {
					conn, err := lis.Accept()
					if err != nil {
						return
					}
					_, _ = conn.Write(src)
					conn.Close()
				}
			}()
			for range b.N {
				conn, err := net.Dial("tcp", lis.Addr().String())
				require.NoError(b, err)
				dst := make([]byte, len(src))
				_, err = io.ReadFull(conn, dst)
				require.NoError(b, err)
				conn.Close()
			}
			reportGBs(b, size)
		})
	}
}

// BenchmarkPut uploads a 256 MiB float32 tensor with ndarrow's client (4 MiB messages) to a
// server on loopback: the server decodes each message from the frames it arrived in straight
// into storage that grows in place, every byte reserved from its memory budget first. The
// metrics: throughput, and the most the memory budget held per byte uploaded (the upload is
// held once; it was held 2.2 times when the result grew by copies and each message was
// copied out of its frames). The baseline is the same bytes over raw TCP into one allocation.
func BenchmarkPut(b *testing.B) {
	d := ndarray.New[float32](benchRows, benchCols)
	for i := range d.Data() {
		d.Data()[i] = float32(i)
	}
	size := int64(len(d.Data()) * 4)
	s := serve(b, Options{Writable: true}, "grpc")
	c := dial(b, s.uri, ClientOptions{})
	b.Run(fmt.Sprintf("ndarrow-Put/%dMiB", size>>20), func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			_ = c.Delete(context.Background(), "t")
			runtime.GC()
			b.StartTimer()
			require.NoError(b, c.Put(context.Background(), "t", dataset.Tensor{Dense: d}))
		}
		reportGBs(b, size)
		b.ReportMetric(float64(s.budget.peak.Load())/float64(size), "held-per-byte")
	})
	src := arrow.Float32Traits.CastToBytes(d.Data())
	b.Run(fmt.Sprintf("raw-tcp/%dMiB", size>>20), func(b *testing.B) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(b, err)
		defer lis.Close()
		go func() {
			for {
				conn, err := lis.Accept()
				if err != nil {
					return
				}
				dst := make([]byte, len(src))
				_, _ = io.ReadFull(conn, dst)
				conn.Write([]byte{1})
				conn.Close()
			}
		}()
		for range b.N {
			conn, err := net.Dial("tcp", lis.Addr().String())
			require.NoError(b, err)
			_, err = conn.Write(src)
			require.NoError(b, err)
			_, err = io.ReadFull(conn, make([]byte, 1))
			require.NoError(b, err)
			conn.Close()
		}
		reportGBs(b, size)
	})
}
