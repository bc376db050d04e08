package flight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/float16"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// randomDense returns a tensor of shape with random bits in every element.
func randomDense[T ndarray.Numeric](rng *rand.Rand, shape ...int64) *ndarray.Dense[T] {
	d := ndarray.New[T](shape...)
	raw := make([]byte, len(d.Data())*d.DType().Size())
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	vals, _ := ndarray.ViewBytes[T](raw)
	copy(d.Data(), vals)
	return d
}

// valueBytes returns the tensor's values as inspect hashes them.
func valueBytes(t *testing.T, x dataset.Tensor) []byte {
	t.Helper()
	var b bytes.Buffer
	_, err := x.WriteValues(&b, 0)
	require.NoError(t, err)
	return b.Bytes()
}

// requireSame checks that got is want bit for bit: dtype, shape, values, and a ragged
// array's row splits.
func requireSame(t *testing.T, want, got dataset.Tensor) {
	t.Helper()
	require.Equal(t, want.Kind, got.Kind, "dense stays dense, CSR stays CSR")
	require.Equal(t, want.DType(), got.DType())
	require.Equal(t, want.Shape(), got.Shape())
	require.Equal(t, want.DimNames, got.DimNames, "the name of every dimension")
	require.True(t, bytes.Equal(valueBytes(t, want), valueBytes(t, got)), "values differ")
	if want.Ragged != nil {
		// A uniform inner dimension may come back as an inner shape or a uniform partition.
		require.Equal(t, want.Ragged.RowSplits()[0], got.Ragged.RowSplits()[0])
	}
}

// everyDense returns a random [rows, 3, 2] tensor of every Arrow tensor dtype.
func everyDense(rng *rand.Rand, rows int64) []dataset.Tensor {
	dense := func(d ndarray.Array) dataset.Tensor {
		return dataset.Tensor{Kind: dataset.KindDense, DimNames: []string{"row", "", "xy"}, Dense: d}
	}
	return []dataset.Tensor{
		dense(randomDense[int8](rng, rows, 3, 2)), dense(randomDense[int16](rng, rows, 3, 2)),
		dense(randomDense[int32](rng, rows, 3, 2)), dense(randomDense[int64](rng, rows, 3, 2)),
		dense(randomDense[uint8](rng, rows, 3, 2)), dense(randomDense[uint16](rng, rows, 3, 2)),
		dense(randomDense[uint32](rng, rows, 3, 2)), dense(randomDense[uint64](rng, rows, 3, 2)),
		dense(randomDense[float16.Num](rng, rows, 3, 2)), dense(randomDense[float32](rng, rows, 3, 2)),
		dense(randomDense[float64](rng, rows, 3, 2)),
	}
}

// randomRagged returns a [rows, -1, 2] ragged array of T with rows of 0 to 4 values.
func randomRagged[T ndarray.Element](rng *rand.Rand, rows int, value func(int) T) dataset.Tensor {
	splits := []int64{0}
	for range rows {
		splits = append(splits, splits[len(splits)-1]+rng.Int64N(5))
	}
	values := make([]T, splits[rows]*2)
	for i := range values {
		values[i] = value(rng.IntN(1000))
	}
	a, err := ragged.Make(values, ndarray.Shape{2}, ragged.RowSplits(splits))
	if err != nil {
		panic(err)
	}
	return dataset.Tensor{Kind: dataset.KindRagged, Ragged: a}
}

func everyRagged(rng *rand.Rand, rows int) []dataset.Tensor {
	return []dataset.Tensor{
		randomRagged(rng, rows, func(i int) int8 { return int8(i) }), randomRagged(rng, rows, func(i int) int16 { return int16(i) }),
		randomRagged(rng, rows, func(i int) int32 { return int32(i) }), randomRagged(rng, rows, func(i int) int64 { return int64(i) }),
		randomRagged(rng, rows, func(i int) uint8 { return uint8(i) }), randomRagged(rng, rows, func(i int) uint16 { return uint16(i) }),
		randomRagged(rng, rows, func(i int) uint32 { return uint32(i) }), randomRagged(rng, rows, func(i int) uint64 { return uint64(i) }),
		randomRagged(rng, rows, func(i int) float16.Num { return float16.New(float32(i)) }),
		randomRagged(rng, rows, func(i int) float32 { return float32(i) / 7 }), randomRagged(rng, rows, func(i int) float64 { return float64(i) / 7 }),
		randomRagged(rng, rows, func(i int) bool { return i%3 == 0 }), randomRagged(rng, rows, func(i int) string { return fmt.Sprint("v", i) }),
	}
}

func everySparse(rng *rand.Rand) []dataset.Tensor {
	sp := func(a sparse.Array) dataset.Tensor {
		return dataset.Tensor{Kind: dataset.SparseKind(a.Format()), Sparse: a}
	}
	mask := func(d *ndarray.Dense[float64]) {
		for i := range d.Data() {
			if i%3 != 0 {
				d.Data()[i] = 0
			}
		}
	}
	f := randomDense[float64](rng, 40, 5, 3)
	mask(f)
	i := ndarray.New[int32](7, 9)
	i.Data()[5], i.Data()[62] = 3, -4
	out := []dataset.Tensor{sp(sparse.FromDense(f)), sp(sparse.FromDense(i))}
	for _, format := range []sparse.Format{sparse.FormatCSR, sparse.FormatCSC, sparse.FormatCSF} {
		a, err := sparse.FromDenseAs(i, format)
		if err != nil {
			panic(err)
		}
		out = append(out, sp(a))
	}
	csf, err := sparse.FromDenseAs(f, sparse.FormatCSF)
	if err != nil {
		panic(err)
	}
	named := sp(csf)
	named.DimNames = []string{"a", "b", "c"}
	return append(out, named)
}

// arrowGoGet fetches a ticket with arrow-go's own Flight client and reader, an independent
// decoder of what the server sends, and returns the record batches.
func arrowGoGet(t *testing.T, uri, name string) []arrow.Record {
	t.Helper()
	c, err := arrowflight.NewClientWithMiddleware(uri[len("grpc://"):], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer c.Close()
	stream, err := c.DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte(name)})
	require.NoError(t, err)
	rd, err := arrowflight.NewRecordReader(stream)
	require.NoError(t, err)
	defer rd.Release()
	var out []arrow.Record
	for rd.Next() {
		rec := rd.Record()
		rec.Retain()
		out = append(out, rec)
	}
	require.NoError(t, rd.Err())
	return out
}

// TestRoundTripEveryDType puts a tensor of every dtype and kind with ndarrow's client, gets it
// back with it and with arrow-go's client, and checks every bit, with small messages so that
// the tensors travel in several batches.
func TestRoundTripEveryDType(t *testing.T) {
	s := serve(t, Options{Writable: true, MaxMessageBytes: minMessageBytes + messageHeadroom/2}, "grpc")
	c := dial(t, s.uri, ClientOptions{MaxMessageBytes: minMessageBytes})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	var all []dataset.Tensor
	all = append(all, everyDense(rng, 3000)...)
	all = append(all, everyDense(rng, 1)...)
	all = append(all, everyDense(rng, 0)...)
	all = append(all, everyRagged(rng, 4000)...)
	all = append(all, everySparse(rng)...)
	for i, want := range all {
		name := fmt.Sprintf("t%02d_%v_%s", i, want.DType(), want.Kind)
		t.Run(name, func(t *testing.T) {
			require.NoError(t, c.Put(ctx, name, want))
			got, err := c.Get(ctx, name)
			require.NoError(t, err)
			requireSame(t, want, got)

			// arrow-go decodes the same stream: its records, written back out by its own IPC
			// writer, hold the same tensor.
			recs := arrowGoGet(t, s.uri, name)
			var buf bytes.Buffer
			w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(recs[0].Schema()))
			for _, r := range recs {
				require.NoError(t, w.Write(r))
				r.Release()
			}
			require.NoError(t, w.Close())
			viaArrowGo, _, err := dataset.Read(buf.Bytes(), name, limits.Limits{})
			require.NoError(t, err)
			require.Len(t, viaArrowGo, 1)
			requireSame(t, want, viaArrowGo[0])
		})
	}
	infos, err := c.List(ctx)
	require.NoError(t, err)
	require.Len(t, infos, len(all))
	for _, in := range infos {
		require.Equal(t, 1, in.Endpoints)
	}
	require.NoError(t, c.Delete(ctx, infos[0].Name))
	_, err = c.Get(ctx, infos[0].Name)
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, codes.NotFound, status.Code(err))
}

// TestServeDirectory serves the golden files from a directory and checks that every tensor
// comes back with the values Arrow C++ and NumPy wrote (expected.jsonl's sha256) — but for
// batch_tensors.arrow and batch_tensors.arrows, two files of one base name, which are never
// joined (their columns were served as one of twice the rows): neither is served, and a
// client asking for one of their tensors is told why.
func TestServeDirectory(t *testing.T) {
	s := serve(t, Options{}, "grpc")
	names, err := s.store.AddDir("../ipc/testdata/arrow-cpp-17", limits.Limits{})
	require.ErrorIs(t, err, dataset.ErrSameBaseName)
	require.ErrorContains(t, err, "batch_tensors.arrow: batch_tensors.arrows beside it")
	require.ErrorContains(t, err, "batch_tensors.arrows: batch_tensors.arrow beside it")
	require.Contains(t, names, "dense_int32_4x3_strided")
	require.NotContains(t, names, "batch_tensors.nested")
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()
	_, err = c.Get(ctx, "batch_tensors.nested")
	require.ErrorIs(t, err, ErrUnreadable)
	require.Equal(t, codes.FailedPrecondition, status.Code(err))
	require.ErrorContains(t, err, "unreadable part batch_tensors.arrow: batch_tensors.arrows beside it")
	require.NotContains(t, err.Error(), "testdata", "the server's path stays on the server")
	expected := readExpected(t, "../ipc/testdata/arrow-cpp-17/expected.jsonl")
	checked := 0
	for _, name := range names {
		want, ok := expected[name]
		if !ok {
			continue
		}
		got, err := c.Get(ctx, name)
		require.NoError(t, err, name)
		require.Equal(t, want.SHA256, sha(valueBytes(t, got)), name)
		if want.Shape != nil {
			require.Equal(t, want.Shape, []int64(got.Shape()), name)
		}
		checked++
	}
	require.Greater(t, checked, 25)
}

// TestErrors checks what the server says to requests it cannot serve.
func TestErrors(t *testing.T) {
	s := serve(t, Options{Writable: true}, "grpc")
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()
	_, err := c.Get(ctx, "missing")
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, c.Delete(ctx, "missing"), ErrNotFound)
	require.ErrorIs(t, c.Put(ctx, "../etc", dataset.Tensor{Dense: ndarray.New[int8](1)}), ErrName)
	require.ErrorIs(t, s.store.Add("scalar", dataset.Tensor{Dense: ndarray.New[int8]()}), ndarray.ErrShape)
	// strings travel, as a utf8 column (binary where a value is not UTF-8)
	words := ndarray.Must(ndarray.FromSlice([]string{"a", "\xff\xfe", ""}, 3))
	require.NoError(t, s.store.Add("str", dataset.Tensor{Dense: words}))
	got, err := c.Get(ctx, "str")
	require.NoError(t, err)
	require.Equal(t, words.Data(), got.Dense.(*ndarray.Dense[string]).Data())
	// bool tensors travel, of any rank (a fixed_size_list<bool> column)
	for _, shape := range [][]int64{{3}, {2, 2, 2}} {
		mask := ndarray.FromFunc(func(i []int64) bool { return i[0]%2 == 0 }, shape...)
		require.NoError(t, s.store.Add("b", dataset.Tensor{Dense: mask}))
		got, err := c.Get(ctx, "b")
		require.NoError(t, err)
		require.True(t, mask.Equal(got.Dense.(*ndarray.Dense[bool])), "%v", got)
	}
	require.ErrorIs(t, s.store.Add("s", dataset.Tensor{Dense: ndarray.New[int8]()}), ndarray.ErrShape)

	// One row larger than a message: refused up front, with the reason.
	require.NoError(t, s.store.Add("wide", dataset.Tensor{Dense: ndarray.New[float64](2, DefaultMaxMessageBytes/8)}))
	_, err = c.Get(ctx, "wide")
	require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
	require.ErrorContains(t, err, "row 0 holds 4194304 bytes, more than a message of the 4194304-byte limit holds (4177920, the rest is framing; a row goes whole in one message): serve it with --max-message-bytes 4259840 or more (flight.Options.MaxMessageBytes)")

	raw := rawClient(t, s.uri)
	_, err = raw.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"a", "b"}})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	act, err := raw.DoAction(ctx, &arrowflight.Action{Type: "frobnicate"})
	require.NoError(t, err)
	_, err = act.Recv()
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}

// rawClient returns arrow-go's Flight client for a plaintext server.
func rawClient(t testing.TB, uri string) arrowflight.Client {
	t.Helper()
	c, err := arrowflight.NewClientWithMiddleware(uri[len("grpc://"):], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// collect drains a stream, returning its error (nil at a clean end).
func collect[T any](recv func() (T, error)) error {
	for {
		_, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
