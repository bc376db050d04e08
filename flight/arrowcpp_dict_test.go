package flight

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/flightreplay"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
)

// What Arrow C++ 17's Flight client fetched of the dictionary-encoded column of two files an
// ndarrow server served — cppDictInput's dict.arrow (an Arrow IPC file of two record batches
// sharing one dictionary, as pyarrow writes a pandas category) and dict.parquet (Arrow C++'s
// Parquet of it, its Arrow schema stored) — recorded by TestRecordArrowCppDictionaries: what
// flight_ref get printed of each flight (cppDictGets), the IPC file its client wrote of each
// (cppDictFetched, by flight), and what Arrow C++ reads of those (cppDictFetchedRead); and
// Arrow C++'s own server and client with dict.arrow (cppDictRecording).
const (
	// cppDictRecording is Arrow C++'s server listing and streaming dict.arrow, and its
	// client's DoPut of it.
	cppDictRecording   = "testdata/arrow-cpp-17/dict.bin.zst"
	cppDictParquet     = "testdata/arrow-cpp-17/dict.parquet"
	cppDictGets        = "testdata/arrow-cpp-17/dict_get.jsonl"
	cppDictFetched     = "testdata/arrow-cpp-17/dict_fetched_%s.arrow"
	cppDictFetchedRead = "testdata/arrow-cpp-17/dict_fetched_read.jsonl"
)

// cppDictFlights are the flights fetched: each file's table flight, and its dictionary
// column's own.
var cppDictFlights = []string{"dict", "dict.cat", "dictp", "dictp.cat"}

// cppDictRows are the rows of cat ("" for a null row), and cppDictValues its dictionary, of
// which indigo indexes no row.
var (
	cppDictRows   = []string{"red", "green", "", "blue", "red", "green", "blue", "blue", "red", ""}
	cppDictValues = []string{"red", "green", "blue", "indigo"}
)

// cppDictInput writes dict.arrow into dir: a category cat (dictionary<int32, utf8>) beside an
// int64 label, in two record batches of 6 and 4 rows sharing one dictionary, no ndarrow
// metadata.
func cppDictInput(t testing.TB, dir string) string {
	t.Helper()
	mem := memory.DefaultAllocator
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "cat", Type: dictType, Nullable: true}, {Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	dict, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["red", "green", "blue", "indigo"]`))
	require.NoError(t, err)
	defer dict.Release()
	path := filepath.Join(dir, "dict.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(schema))
	require.NoError(t, err)
	for _, b := range []struct {
		idx, labels string
	}{{`[0, 1, null, 2, 0, 1]`, `[0, 1, 2, 3, 4, 5]`}, {`[2, 2, 0, null]`, `[6, 7, 8, 9]`}} {
		idx, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(b.idx))
		require.NoError(t, err)
		labels, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(b.labels))
		require.NoError(t, err)
		cat := array.NewDictionaryArray(dictType, idx, dict)
		rec := array.NewRecord(schema, []arrow.Array{cat, labels}, int64(idx.Len()))
		require.NoError(t, w.Write(rec))
		rec.Release()
		cat.Release()
		idx.Release()
		labels.Release()
	}
	require.NoError(t, w.Close())
	return path
}

// cppDictDir returns a directory of dict.arrow and dict.parquet (as committed) to serve, the
// Parquet file named dictp so that its table is a flight of its own.
func cppDictDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	cppDictInput(t, dir)
	b, err := os.ReadFile(cppDictParquet)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dictp.parquet"), b, 0o644))
	return dir
}

// TestRecordArrowCppDictionaries records what Arrow C++ 17's client fetches of an ndarrow
// server's dictionary-encoded columns (see cppDictGets) — Arrow C++ writing dict.parquet
// first. It runs only when NDARROW_ARROW_CPP names the reference's bin directory:
//
//	NDARROW_ARROW_CPP=$PWD/../shared/reference/arrow-cpp-17/bin go test ./flight -run RecordArrowCppDictionaries
func TestRecordArrowCppDictionaries(t *testing.T) {
	bin := os.Getenv("NDARROW_ARROW_CPP")
	if bin == "" {
		t.Skip("NDARROW_ARROW_CPP names Arrow C++ 17's programs (../shared/reference/arrow-cpp-17/bin) to record from")
	}
	work := t.TempDir()
	input := cppDictInput(t, work)
	b, err := exec.Command(filepath.Join(bin, "parquet_golden"), "from-ipc", input, cppDictParquet).CombinedOutput()
	require.NoError(t, err, "%s", b)

	// Arrow C++'s server streaming dict.arrow, and its client putting it.
	fc, rec := cppFlights(t, bin, work)
	require.Len(t, rec.Infos, 1)
	stream, err := fc.DoGet(context.Background(), rec.Infos[0].Endpoint[0].Ticket)
	require.NoError(t, err)
	var msgs []*arrowflight.FlightData
	for {
		fd, err := stream.Recv()
		if err != nil {
			break
		}
		msgs = append(msgs, fd)
	}
	rec.AddStream("dict", msgs)
	rs := &recordingServer{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer()
	arrowflight.RegisterFlightServiceServer(gs, rs)
	go func() { _ = gs.Serve(lis) }()
	runCpp(t, bin, "put", "grpc://"+lis.Addr().String(), "dict", input)
	gs.Stop()
	rec.Put = rs.msgs
	require.NoError(t, rec.Write(cppDictRecording))

	s := serve(t, Options{}, "grpc")
	_, err = s.store.AddDir(cppDictDir(t), limits.Limits{})
	require.NoError(t, err)
	var gets, read []string
	for _, name := range cppDictFlights {
		out := strings.ReplaceAll(cppDictFetched, "%s", name)
		line, err := exec.Command(filepath.Join(bin, "flight_ref"), "get", s.uri, name, out).Output()
		require.NoError(t, err, name)
		gets = append(gets, strings.TrimSpace(string(line)))
		pq := filepath.Join(work, name+".parquet")
		b, err := exec.Command(filepath.Join(bin, "parquet_golden"), "from-ipc", out, pq).CombinedOutput()
		require.NoError(t, err, "%s", b)
		b, err = exec.Command(filepath.Join(bin, "parquet_golden"), "read", pq, t.TempDir()).Output()
		require.NoError(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			m["flight"] = name
			l2, _ := json.Marshal(m)
			read = append(read, string(l2))
		}
	}
	require.NoError(t, os.WriteFile(cppDictGets, []byte(strings.Join(gets, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(cppDictFetchedRead, []byte(strings.Join(read, "\n")+"\n"), 0o644))
}

// requireCppDictColumn checks that cat, read back of a file written of a flight, holds the
// rows of cppDictRows, their nulls, and a dictionary of values in dictionary order (the
// input's, or for the Parquet file's, whose stored dictionary is decoded, in the order the
// rows give them).
func requireCppDictColumn(t *testing.T, flight string, cat dataset.Tensor, values []string) {
	t.Helper()
	require.Equal(t, cppDictRows, must(dataset.DenseOf[string](cat)).Data(), flight)
	require.Equal(t, []bool{true, true, false, true, true, true, true, true, true, false}, cat.Valid, flight)
	require.NotNil(t, cat.Dictionary, "%s: a dictionary", flight)
	require.Equal(t, "dictionary<values=utf8, indices=int32, ordered=false>", cat.Dictionary.Type.String(), flight)
	require.Equal(t, values, cat.Dictionary.Values, "%s: the dictionary sent", flight)
}

// TestArrowCppFetchesDictionaries: Arrow C++ 17's client (recorded) fetched the served
// dictionary-encoded column as dictionary<values=string, indices=int32> — of the table flight
// of an Arrow IPC file and of a Parquet file that stores it so, and of each one's column
// flight — with every row and null, the IPC file's dictionary as the file holds it (an unused
// value too), and wrote it as an IPC file of one dictionary; ndarrow's client and arrow-go's
// fetch the same, each stream's one dictionary batch before its record batches.
func TestArrowCppFetchesDictionaries(t *testing.T) {
	fromFile, fromParquet := cppDictValues, []string{"red", "green", "blue"}
	lines, err := os.ReadFile(cppDictGets)
	require.NoError(t, err)
	gets := strings.Split(strings.TrimSpace(string(lines)), "\n")
	require.Len(t, gets, len(cppDictFlights))
	for i, name := range cppDictFlights {
		var get struct {
			Name string `json:"name"`
			Rows int64  `json:"rows"`
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal([]byte(gets[i]), &get))
		require.Equal(t, name, get.Name)
		require.Equal(t, int64(len(cppDictRows)), get.Rows, name)
		require.Equal(t, "dictionary<values=string, indices=int32, ordered=0>", get.Type, "%s: what Arrow C++'s client saw", name)

		path := strings.ReplaceAll(cppDictFetched, "%s", name)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		dicts, _, err := ipc.FileBlocks(b, ipc.BatchOptions{})
		require.NoError(t, err)
		require.Len(t, dicts, 1, "%s: Arrow C++'s file writer took one dictionary", name)
		f, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err)
		values := fromFile
		if strings.HasPrefix(name, "dictp") {
			values = fromParquet
		}
		requireCppDictColumn(t, name, f.Tensors[0], values)
		if !strings.Contains(name, ".") {
			require.Len(t, f.Tensors, 2, name)
			require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, must(dataset.DenseOf[int64](f.Tensors[1])).Data(), name)
		}
		f.Release()
	}
	read, err := os.ReadFile(cppDictFetchedRead)
	require.NoError(t, err)
	for _, l := range strings.Split(strings.TrimSpace(string(read)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		if name := m["name"].(string); name == "cat" || strings.HasSuffix(name, ".cat") {
			require.Equal(t, "dictionary<values=string, indices=int32, ordered=0>", m["type"], m["flight"])
			require.Equal(t, float64(2), m["null_count"], m["flight"])
		}
	}

	// The same flights now, to ndarrow's client and arrow-go's.
	s := serve(t, Options{}, "grpc")
	_, err = s.store.AddDir(cppDictDir(t), limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()
	for _, table := range []string{"dict", "dictp"} {
		values := fromFile
		if table == "dictp" {
			values = fromParquet
		}
		all, err := c.GetTable(ctx, table)
		require.NoError(t, err)
		requireCppDictColumn(t, table, all[0], values)
		col, err := c.Get(ctx, table+".cat")
		require.NoError(t, err)
		requireCppDictColumn(t, table+".cat", col, values)
		batches := map[string]int{"dict": 2, "dictp": 1}[table] // the file's record batches, its row group
		want := []arrowfb.MessageHeader{arrowfb.MessageHeaderSchema, arrowfb.MessageHeaderDictionaryBatch}
		for range batches {
			want = append(want, arrowfb.MessageHeaderRecordBatch)
		}
		for _, name := range []string{table, table + ".cat"} {
			require.Equal(t, want, messageTypes(t, s.uri, name), "%s: the dictionary batch once, then the record batches", name)
			var rows []string
			for _, r := range arrowGoGet(t, s.uri, name) {
				cat := r.Column(0).(*array.Dictionary)
				require.Equal(t, arrow.DICTIONARY, cat.DataType().ID(), name)
				for i := range cat.Len() {
					v := ""
					if cat.IsValid(i) {
						v = cat.Dictionary().(*array.String).Value(cat.GetValueIndex(i))
					}
					rows = append(rows, v)
				}
				r.Release()
			}
			require.Equal(t, cppDictRows, rows, "%s: arrow-go's client", name)
		}
	}
}

// TestArrowCppDictionaryPeers: ndarrow's client of Arrow C++ 17's server (recorded) reads its
// stream of dict.arrow — a dictionary batch, then record batches — as a table whose category
// keeps the file's dictionary; Arrow C++'s client putting it (recorded) to an ndarrow server
// stores the category as that dictionary, which streams back so.
func TestArrowCppDictionaryPeers(t *testing.T) {
	rec, err := flightreplay.Read(cppDictRecording)
	require.NoError(t, err)
	var types []arrowfb.MessageHeader
	for _, fd := range rec.Streams["dict"] {
		if len(fd.DataHeader) > 0 {
			types = append(types, arrowfb.GetRootAsMessage(fd.DataHeader, 0).HeaderType())
		}
	}
	require.Equal(t, []arrowfb.MessageHeader{arrowfb.MessageHeaderSchema, arrowfb.MessageHeaderDictionaryBatch,
		arrowfb.MessageHeaderRecordBatch, arrowfb.MessageHeaderRecordBatch}, types, "Arrow C++ sends the dictionary once, before the record batches")
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	all, err := dial(t, srv.URI(), ClientOptions{}).GetTable(ctx, "dict")
	require.NoError(t, err)
	requireCppDictColumn(t, "Arrow C++'s server", all[0], cppDictValues)

	s := serve(t, Options{Writable: true}, "grpc")
	_, err = flightreplay.SendPut(ctx, strings.TrimPrefix(s.uri, "grpc://"), rec.Put, -1)
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	all, err = c.GetTable(ctx, "dict")
	require.NoError(t, err)
	requireCppDictColumn(t, "put by Arrow C++'s client", all[0], cppDictValues)
	for _, r := range arrowGoGet(t, s.uri, "dict") {
		require.Equal(t, "dictionary<values=utf8, indices=int32, ordered=false>", r.Schema().Field(0).Type.String())
		r.Release()
	}
}

// messageTypes returns the header types of the FlightData a DoGet of name sends.
func messageTypes(t *testing.T, uri, name string) []arrowfb.MessageHeader {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(uri, "grpc://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := arrowflight.NewFlightServiceClient(conn).DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte(name)})
	require.NoError(t, err)
	var out []arrowfb.MessageHeader
	for {
		fd, err := stream.Recv()
		if err != nil {
			break
		}
		if len(fd.DataHeader) > 0 {
			out = append(out, arrowfb.GetRootAsMessage(fd.DataHeader, 0).HeaderType())
		}
	}
	return out
}

// must returns v, panicking on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
