package flight

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/flightreplay"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// The Flight calls of Arrow C++ 17 (../shared/reference/arrow-cpp-17's flight_ref) that
// testdata/arrow-cpp-17 holds, recorded by TestRecordArrowCpp from the files cppInputs
// makes: a server streaming a [32768, 256] float32 tensor in 16 MiB batches (big) and a table
// of five tensor columns (table), and a client's DoPut of that table.
const cppRecording = "testdata/arrow-cpp-17/flight.bin.zst"

// cppBig is the tensor of big.arrow: 32 MiB, two 16 MiB batches as Arrow C++'s server sends it.
func cppBig() *ndarray.Dense[float32] {
	return ndarray.FromFunc(func(i []int64) float32 { return float32((i[0]*256+i[1])%1000) / 4 }, 32768, 256)
}

// cppTableRows is the row count of table.arrow: a batch of 16384 rows, then one of 3616.
const cppTableRows = 20000

// cppTable is the tensor columns of table.arrow, named as dataset names them.
func cppTable() []dataset.Tensor {
	n := int64(cppTableRows)
	images := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]%97) + float32(i[1]*8+i[2])/64 }, n, 8, 8)
	masks := ndarray.FromFunc(func(i []int64) bool { return (i[0]+i[1])%3 == 0 }, n, 64)
	labels := ndarray.FromFunc(func(i []int64) int64 { return i[0] % 10 }, n, 1)
	embeddings := ndarray.FromFunc(func(i []int64) float64 { return float64(i[0]%50*4+i[1]) / 8 }, n, 4)
	splits := []int64{0}
	var values []int32
	for r := range n {
		for k := range r % 7 {
			values = append(values, int32(r%100*7+k))
		}
		splits = append(splits, int64(len(values)))
	}
	tokens, err := ragged.FromRowSplits(values, splits)
	if err != nil {
		panic(err)
	}
	return []dataset.Tensor{
		{Name: "table.images", Column: "images", Kind: dataset.KindFixedShape, Dense: images, DimNames: []string{"", "h", "w"}},
		{Name: "table.masks", Column: "masks", Kind: dataset.KindFixedShape, Dense: masks},
		{Name: "table.labels", Column: "labels", Kind: dataset.KindFixedShape, Dense: labels},
		{Name: "table.tokens", Column: "tokens", Kind: dataset.KindRagged, Ragged: tokens},
		{Name: "table.embeddings", Column: "embeddings", Kind: dataset.KindFixedShape, Dense: embeddings},
	}
}

// cppInputs writes big.arrow and table.arrow into dir as a pyarrow user's files are: no
// ndarrow metadata, the embeddings and masks plain fixed_size_list columns.
func cppInputs(t testing.TB, dir string) {
	t.Helper()
	write := func(name string, tensors []dataset.Tensor) {
		rec, err := dataset.Batch(memory.DefaultAllocator, tensors)
		require.NoError(t, err)
		defer rec.Release()
		fields := make([]arrow.Field, rec.NumCols())
		cols := make([]arrow.Array, rec.NumCols())
		for i, f := range rec.Schema().Fields() {
			f.Metadata = arrow.Metadata{}
			col := rec.Column(i)
			if ext, ok := col.(array.ExtensionArray); ok && (f.Name == "embeddings" || f.Name == "masks") {
				col = ext.Storage()
				f.Type = col.DataType()
			}
			fields[i], cols[i] = f, col
		}
		plain := array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		defer plain.Release()
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		defer f.Close()
		w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(plain.Schema()))
		require.NoError(t, err)
		require.NoError(t, w.Write(plain))
		require.NoError(t, w.Close())
	}
	write("big.arrow", []dataset.Tensor{{Name: "big.x", Column: "x", Kind: dataset.KindFixedShape, Dense: cppBig()}})
	write("table.arrow", cppTable())
}

// TestRecordArrowCpp records cppRecording from Arrow C++ 17's Flight server and client, and
// what Arrow C++ reads of the inputs and fetches back from an ndarrow server it put the table
// to. It runs only when NDARROW_ARROW_CPP names the reference's bin directory:
//
//	NDARROW_ARROW_CPP=$PWD/../shared/reference/arrow-cpp-17/bin go test ./flight -run RecordArrowCpp
func TestRecordArrowCpp(t *testing.T) {
	bin := os.Getenv("NDARROW_ARROW_CPP")
	if bin == "" {
		t.Skip("NDARROW_ARROW_CPP names Arrow C++ 17's programs (../shared/reference/arrow-cpp-17/bin) to record from")
	}
	dir := t.TempDir()
	cppInputs(t, dir)
	out := filepath.Dir(cppRecording)
	require.NoError(t, os.MkdirAll(out, 0o755))

	// What Arrow C++ reads of the inputs: the values every peer must agree on.
	var golden []string
	for _, name := range []string{"big.arrow", "table.arrow"} {
		golden = append(golden, cppRead(t, bin, filepath.Join(dir, name), "")...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, "inputs_read.jsonl"), []byte(strings.Join(golden, "\n")+"\n"), 0o644))

	// Arrow C++'s server: ListFlights, then DoGet of every flight.
	fc, rec := cppFlights(t, bin, dir)
	ctx := context.Background()
	require.Len(t, rec.Infos, 2)
	for _, fi := range rec.Infos {
		ticket := fi.Endpoint[0].Ticket
		stream, err := fc.DoGet(ctx, ticket)
		require.NoError(t, err)
		var msgs []*arrowflight.FlightData
		for {
			fd, err := stream.Recv()
			if err != nil {
				break
			}
			msgs = append(msgs, fd)
		}
		rec.AddStream(string(ticket.Ticket), msgs)
	}

	// Arrow C++'s client: a DoPut of the table, as a recording server receives it.
	rs := &recordingServer{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(1 << 30))
	arrowflight.RegisterFlightServiceServer(gs, rs)
	go func() { _ = gs.Serve(lis) }()
	runCpp(t, bin, "put", "grpc://"+lis.Addr().String(), "table", filepath.Join(dir, "table.arrow"))
	gs.Stop()
	rec.Put = rs.msgs
	require.NotEmpty(t, rec.Put)
	require.NoError(t, rec.Write(cppRecording))

	// The table put to an ndarrow server, each column fetched back by Arrow C++'s client.
	s := serve(t, Options{Writable: true}, "grpc")
	runCpp(t, bin, "put", s.uri, "table", filepath.Join(dir, "table.arrow"))
	var fetched []string
	for _, name := range s.store.Names() {
		file := filepath.Join(t.TempDir(), name+".arrow")
		runCpp(t, bin, "get", s.uri, name, file)
		fetched = append(fetched, cppRead(t, bin, file, name)...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, "put_fetched_by_cpp.jsonl"), []byte(strings.Join(fetched, "\n")+"\n"), 0o644))
}

// cppRead returns what Arrow C++'s golden reader reads of the IPC file at path, a JSON line
// per column (its batches, which it names N.COLUMN, joined), with the sha256 of the values it
// dumped (not of bools: it dumps none) and of a ragged column's row splits (int64,
// little-endian) in place of the splits; flight, when not empty, is added as "flight".
func cppRead(t testing.TB, bin, path, flight string) []string {
	t.Helper()
	dumps := t.TempDir()
	b, err := exec.Command(filepath.Join(bin, "golden"), "read", path, dumps).Output()
	require.NoError(t, err, path)
	// the batches of a column (N.COLUMN) joined: values, lengths, row splits
	type column struct {
		m      map[string]any
		values []byte
		splits []byte
		base   int64
	}
	var order []string
	columns := map[string]*column{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		batch := m["name"].(string)
		_, name, _ := strings.Cut(batch, ".")
		c := columns[name]
		if c == nil {
			c = &column{m: m}
			columns[name], order = c, append(order, name)
			m["name"] = name
		} else {
			for _, k := range []string{"nnz", "nrows", "nvals"} {
				if v, ok := m[k].(float64); ok {
					c.m[k] = c.m[k].(float64) + v
				}
			}
			if shape, ok := m["shape"].([]any); ok {
				c.m["shape"].([]any)[0] = c.m["shape"].([]any)[0].(float64) + shape[0].(float64)
			}
		}
		v, _ := os.ReadFile(filepath.Join(dumps, batch+".bin"))
		c.values = append(c.values, v...)
		if splits, ok := m["row_splits"].([]any); ok {
			require.Len(t, splits, 1, "%s: one level of row splits", batch)
			level := splits[0].([]any)
			for i, x := range level {
				if i > 0 || c.splits == nil {
					c.splits = binary.LittleEndian.AppendUint64(c.splits, uint64(c.base+int64(x.(float64))))
				}
			}
			c.base += int64(level[len(level)-1].(float64))
		}
	}
	var out []string
	for _, name := range order {
		c := columns[name]
		if len(c.values) > 0 {
			c.m["sha256"] = sha(c.values)
		}
		if c.splits != nil {
			c.m["row_splits_sha256"] = sha(c.splits)
			delete(c.m, "row_splits")
		}
		if flight != "" {
			c.m["flight"] = flight
		}
		l, _ := json.Marshal(c.m)
		out = append(out, string(l))
	}
	return out
}

// recordingServer keeps the messages of the DoPuts it receives.
type recordingServer struct {
	arrowflight.BaseFlightServer
	msgs []*arrowflight.FlightData
}

func (r *recordingServer) DoPut(stream arrowflight.FlightService_DoPutServer) error {
	for {
		fd, err := stream.Recv()
		if err != nil {
			return nil
		}
		r.msgs = append(r.msgs, fd)
	}
}

// startCpp starts cmd, an Arrow C++ server, killed when the test ends, and returns the port
// its "ready PORT" line names.
func startCpp(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	var port string
	_, err = fmt.Sscanf(line, "ready %s", &port)
	require.NoError(t, err, line)
	return port
}

// runCpp runs one of Arrow C++'s flight_ref commands, failing the test on an error.
func runCpp(t testing.TB, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, filepath.Join(bin, "flight_ref"), args...).CombinedOutput()
	require.NoError(t, err, "flight_ref %v: %s", args, b)
}

// cppReplay serves the recording of Arrow C++'s server until the test ends.
func cppReplay(t *testing.T) (*flightreplay.Recording, *flightreplay.Server) {
	t.Helper()
	rec, err := flightreplay.Read(cppRecording)
	require.NoError(t, err)
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	return rec, srv
}

// cppExpected returns what Arrow C++ read, recorded in file, by column name.
func cppExpected(t *testing.T, file string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(cppRecording), file))
	require.NoError(t, err)
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		out[m["name"].(string)] = m
	}
	return out
}

// requireSameTensor checks that got holds want's kind, dtype, shape and values, and, where
// Arrow C++ dumped them (cpp, by column), the values Arrow C++ read.
func requireSameTensor(t *testing.T, want, got dataset.Tensor, cpp map[string]any) {
	t.Helper()
	require.Equal(t, want.DType(), got.DType(), want.Name)
	require.Equal(t, want.Shape(), got.Shape(), want.Name)
	var w, g strings.Builder
	_, err := want.WriteValues(&w, 1<<30)
	require.NoError(t, err)
	_, err = got.WriteValues(&g, 1<<30)
	require.NoError(t, err)
	require.True(t, w.String() == g.String(), "%s: values differ", want.Name)
	if h, ok := cpp["sha256"].(string); ok { // a ragged tensor's: its flat values
		require.Equal(t, h, sha([]byte(g.String())), "%s: the values Arrow C++ read", want.Name)
	}
	if want.Ragged != nil {
		require.Equal(t, want.Ragged.RowSplits(), got.Ragged.RowSplits(), want.Name)
	}
	if h, ok := cpp["row_splits_sha256"].(string); ok && got.Ragged != nil {
		var raw []byte
		for _, s := range got.Ragged.RowSplits()[0] {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(s))
		}
		require.Equal(t, h, sha(raw), "%s: the row splits Arrow C++ read", want.Name)
	}
}

// TestArrowCppServer fetches from Arrow C++ 17's Flight server, as recorded: a tensor in
// 16 MiB batches (above gRPC's 4 MiB default), a table of five tensor columns described from
// its schema, each column and the whole table, bit for bit.
func TestArrowCppServer(t *testing.T) {
	_, srv := cppReplay(t)
	c := dial(t, srv.URI(), ClientOptions{})
	ctx := context.Background()
	cpp := cppExpected(t, "inputs_read.jsonl")
	table := cppTable()

	infos, err := c.List(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 2)
	byName := map[string]Info{infos[0].Name: infos[0], infos[1].Name: infos[1]}
	big := byName["big"]
	require.Equal(t, dataset.KindFixedShape, big.Kind)
	require.Equal(t, "float32", big.DType)
	require.Equal(t, ndarray.Shape{32768, 256}, big.Shape)
	require.Equal(t, int64(32768), big.Rows)
	tab := byName["table"]
	require.Equal(t, KindTable, tab.Kind)
	require.Len(t, tab.Columns, len(table))
	for i, want := range table {
		col := tab.Columns[i]
		require.Equal(t, want.Name, col.Name)
		require.Equal(t, want.DType().String(), col.DType, col.Name)
		shape := want.Shape()
		if want.Ragged != nil {
			shape = ndarray.Shape{cppTableRows, -1}
			require.Equal(t, int64(-1), col.Bytes, col.Name)
		} else if want.DType() == ndarray.Bool {
			require.Equal(t, shape[1:].Size()*cppTableRows/8, col.Bytes, col.Name) // in bits
		} else {
			require.Equal(t, shape[1:].Size()*int64(want.DType().Size())*cppTableRows, col.Bytes, col.Name)
		}
		require.Equal(t, shape, col.Shape, col.Name)
		require.Equal(t, int64(cppTableRows), col.Rows, col.Name)
	}

	x, err := c.Get(ctx, "big")
	require.NoError(t, err)
	requireSameTensor(t, dataset.Tensor{Name: "big", Dense: cppBig()}, x, cpp["x"])

	all, err := c.GetTable(ctx, "table")
	require.NoError(t, err)
	require.Len(t, all, len(table))
	for i, want := range table {
		require.Equal(t, want.Name, all[i].Name)
		requireSameTensor(t, want, all[i], cpp[want.Column])
	}
	images, err := GetDense[float32](ctx, c, "table.images")
	require.NoError(t, err)
	requireSameTensor(t, table[0], dataset.Tensor{Dense: images}, cpp["images"])
	tokens, err := GetRagged[int32](ctx, c, "table.tokens")
	require.NoError(t, err)
	requireSameTensor(t, table[3], dataset.Tensor{Ragged: tokens}, cpp["tokens"])

	_, err = c.Get(ctx, "table")
	require.ErrorIs(t, err, ErrTable)
	require.ErrorContains(t, err, "table.images, table.masks, table.labels, table.tokens, table.embeddings")
	_, err = c.Get(ctx, "table.nope")
	require.ErrorIs(t, err, ErrNotFound)

	// the limit that bounds memory is ndarrow's, and it says so
	small := dial(t, srv.URI(), ClientOptions{MaxRecvMessageBytes: 8 << 20})
	_, err = small.Get(ctx, "big")
	require.ErrorIs(t, err, limits.ErrExceeded)
	require.ErrorContains(t, err, "--max-recv-message-bytes")
}

// TestArrowCppPut replays Arrow C++ 17's client putting the table: stored as its five tensor
// columns, all at once, fetched back bit for bit (and, as recorded, by Arrow C++'s client
// too); a put that stops halfway or lies about a column's length stores nothing.
func TestArrowCppPut(t *testing.T) {
	rec, err := flightreplay.Read(cppRecording)
	require.NoError(t, err)
	cpp := cppExpected(t, "inputs_read.jsonl")
	ctx := context.Background()
	table := cppTable()

	s := serve(t, Options{Writable: true}, "grpc")
	addr := strings.TrimPrefix(s.uri, "grpc://")
	results, err := flightreplay.SendPut(ctx, addr, rec.Put, -1)
	require.NoError(t, err)
	require.Len(t, results, len(table)+1, "each column, then the table")
	c := dial(t, s.uri, ClientOptions{})
	for i, want := range table {
		var meta tensorMetadata
		require.NoError(t, json.Unmarshal(results[i], &meta))
		require.Equal(t, want.Name, meta.Name)
		got, err := c.Get(ctx, want.Name)
		require.NoError(t, err)
		requireSameTensor(t, want, got, cpp[want.Column])
	}
	var meta tensorMetadata
	require.NoError(t, json.Unmarshal(results[len(table)], &meta))
	require.Equal(t, "table", meta.Name)
	require.Equal(t, kindTable, meta.Kind)
	require.Len(t, meta.Columns, len(table))
	require.Len(t, s.store.Names(), len(table)+1)
	all, err := c.GetTable(ctx, "table")
	require.NoError(t, err)
	require.Len(t, all, len(table))
	for i, want := range table {
		require.Equal(t, want.Name, all[i].Name)
		requireSameTensor(t, want, all[i], cpp[want.Column])
	}

	// What Arrow C++'s client fetched back of each column, recorded with the reference.
	back := cppExpected(t, "put_fetched_by_cpp.jsonl")
	require.Len(t, back, len(table))
	for _, want := range table {
		got, in := back[want.Name], cpp[want.Column]
		require.NotNil(t, got, want.Name)
		require.Equal(t, in["sha256"], got["sha256"], want.Name)
		count := func(m map[string]any) any { // a plain fixed_size_list column is ragged to Arrow C++'s reader
			if n, ok := m["nvals"]; ok {
				return n
			}
			return m["nnz"]
		}
		require.Equal(t, count(in), count(got), want.Name)
		if got["row_splits_sha256"] != nil {
			require.Equal(t, in["row_splits_sha256"], got["row_splits_sha256"], want.Name)
		}
	}

	// Failures leave the store as it was.
	for _, tc := range []struct {
		name string
		msgs func() []*arrowflight.FlightData
		upTo int
		code string
	}{
		{"cancelled before the last message", func() []*arrowflight.FlightData { return rec.Put }, len(rec.Put) - 1, "cancel"},
		{"a column shorter than its batch", func() []*arrowflight.FlightData {
			msgs := slices.Clone(rec.Put)
			bad := proto.Clone(msgs[1]).(*arrowflight.FlightData)
			setFirstNodeLength(t, bad.DataHeader, 100)
			msgs[1] = bad
			return msgs
		}, -1, "InvalidArgument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, Options{Writable: true}, "grpc")
			_, err := flightreplay.SendPut(ctx, strings.TrimPrefix(s.uri, "grpc://"), tc.msgs(), tc.upTo)
			require.Error(t, err)
			require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(tc.code))
			require.Empty(t, s.store.Names())
		})
	}
}

// setFirstNodeLength sets the length of the first field node of a record batch message.
func setFirstNodeLength(t *testing.T, header []byte, n int64) {
	t.Helper()
	msg := arrowfb.GetRootAsMessage(header, 0)
	require.Equal(t, arrowfb.MessageHeaderRecordBatch, msg.HeaderType())
	var tbl flatbuffers.Table
	require.True(t, msg.Header(&tbl))
	var rb arrowfb.RecordBatch
	rb.Init(tbl.Bytes, tbl.Pos)
	var node arrowfb.FieldNode
	require.True(t, rb.Nodes(&node, 0))
	require.True(t, node.MutateLength(n))
}

// TestConcurrentGetsShareOneClient: one Client's Gets at once, over one connection whose
// receive buffers gRPC reuses between messages and streams, each get its own values: dense
// streams stacked as they come, tables and ragged columns kept as copies.
func TestConcurrentGetsShareOneClient(t *testing.T) {
	_, srv := cppReplay(t)
	c := dial(t, srv.URI(), ClientOptions{})
	table := cppTable()
	big := dataset.Tensor{Name: "big", Dense: cppBig()}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var want []dataset.Tensor
			var got []dataset.Tensor
			var err error
			switch i % 3 {
			case 0:
				var x dataset.Tensor
				x, err = c.Get(context.Background(), "big")
				want, got = []dataset.Tensor{big}, []dataset.Tensor{x}
			case 1:
				want = table
				got, err = c.GetTable(context.Background(), "table")
			case 2:
				var x dataset.Tensor
				x, err = c.Get(context.Background(), "table.tokens")
				want, got = table[3:4], []dataset.Tensor{x}
			}
			if err == nil && len(got) != len(want) {
				err = fmt.Errorf("get %d: %d tensors, want %d", i, len(got), len(want))
			}
			for k := range min(len(got), len(want)) {
				var w, g bytes.Buffer
				_, _ = want[k].WriteValues(&w, 1<<30)
				_, _ = got[k].WriteValues(&g, 1<<30)
				if err == nil && !bytes.Equal(w.Bytes(), g.Bytes()) {
					err = fmt.Errorf("get %d: %s: values differ", i, want[k].Name)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestBlocksHoldWhatWasAnnounced: a stream received into its block of a whole (a shard's part)
// that sends more rows than its endpoint announced is refused as they come; fewer, when the
// whole is assembled.
func TestBlocksHoldWhatWasAnnounced(t *testing.T) {
	lim := limits.Limits{}.WithDefaults()
	msgs := flightMessages(dataset.Tensor{Dense: ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]) }, 4, 2)}, "f", 16)
	require.Greater(t, len(msgs), 2, "several batches")
	first := dataset.Tensor{Name: "f", Dense: ndarray.New[float32](0, 2)}
	for _, tc := range []struct {
		announced int64
		err       string
	}{{4, ""}, {3, "more than the 3 announced"}, {5, "holds 4 rows of 5"}} {
		blocks, whole, err := dataset.NewStackers(first, []int64{tc.announced, 1})
		require.NoError(t, err)
		dec := &streamDecoder{name: "f", lim: lim, block: blocks[0]}
		for _, m := range msgs {
			if err = dec.add(m.header, m.body); err != nil {
				break
			}
		}
		dec.release()
		if err == nil {
			require.NoError(t, blocks[1].Add(dataset.Tensor{Dense: ndarray.New[float32](1, 2)}))
			var got dataset.Tensor
			got, err = whole()
			if err == nil {
				require.Equal(t, []float32{0, 0, 1, 1, 2, 2, 3, 3, 0, 0}, got.Dense.(*ndarray.Dense[float32]).Data())
			}
		}
		if tc.err == "" {
			require.NoError(t, err)
		} else {
			require.ErrorContains(t, err, tc.err)
		}
	}
}

// TestAPeerThatOverstatesItsRows: a FlightInfo announcing far more rows than its stream holds
// costs a preallocation bounded by the client's limits, and the result is what came.
func TestAPeerThatOverstatesItsRows(t *testing.T) {
	rec, err := flightreplay.Read(cppRecording)
	require.NoError(t, err)
	for _, fi := range rec.Infos {
		fi.TotalRecords = 1 << 40
	}
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	c := dial(t, srv.URI(), ClientOptions{MaxBytes: 64 << 20})
	x, err := c.Get(context.Background(), "big")
	require.NoError(t, err)
	requireSameTensor(t, dataset.Tensor{Name: "big", Dense: cppBig()}, x, nil)
	info, err := c.Info(context.Background(), "big")
	require.NoError(t, err)
	require.Equal(t, ndarray.Shape{1 << 40, 256}, info.Shape, "Info says what the peer said")
}

// cppFlights starts Arrow C++'s Flight server (flight_ref in bin) on the files of dir and
// returns a client of it, closed with the test, and a recording of its ListFlights.
func cppFlights(t *testing.T, bin, dir string) (arrowflight.FlightServiceClient, *flightreplay.Recording) {
	port := startCpp(t, exec.Command(filepath.Join(bin, "flight_ref"), "serve", "0", dir))
	conn, err := grpc.NewClient("127.0.0.1:"+port, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	fc := arrowflight.NewFlightServiceClient(conn)
	rec := &flightreplay.Recording{}
	list, err := fc.ListFlights(context.Background(), &arrowflight.Criteria{})
	require.NoError(t, err)
	for {
		fi, err := list.Recv()
		if err != nil {
			break
		}
		rec.Infos = append(rec.Infos, fi)
	}
	return fc, rec
}
