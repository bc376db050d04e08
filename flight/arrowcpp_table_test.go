package flight

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/flightreplay"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// The Flight calls of Arrow C++ 17 around a table with labels, recorded by
// TestRecordArrowCppLabels from labels.arrow (cppLabelsInput): Arrow C++'s server listing and
// streaming it, and its client's DoPut of it. Beside the recording: what Arrow C++'s client
// wrote of the table flight it fetched back from an ndarrow server it had put the table to
// (cppLabelsFetched, an Arrow IPC file of Arrow C++'s writer, zstd-compressed), and what its
// get said.
const (
	cppLabelsRecording = "testdata/arrow-cpp-17/labels.bin.zst"
	cppLabelsFetched   = "testdata/arrow-cpp-17/labels_fetched_by_cpp.arrow.zst"
	cppLabelsGetLine   = "testdata/arrow-cpp-17/labels_get.jsonl"
	// What Arrow C++ reads of the input and of what its client fetched back (each converted to
	// Parquet by parquet_golden from-ipc, read by parquet_golden read): per column its Arrow
	// type, rows and null count.
	cppLabelsInputRead   = "testdata/arrow-cpp-17/labels_input_read.jsonl"
	cppLabelsFetchedRead = "testdata/arrow-cpp-17/labels_fetched_read.jsonl"
)

// cppLabelsRows is the row count of labels.arrow: Arrow C++'s server sends it in a batch of
// 16384 rows and one of 3616.
const cppLabelsRows = 20000

// cppLabels is the table of labels.arrow, named as dataset names its columns: an embedding
// (a plain fixed_size_list<float32>[4], as pyarrow users write one), an int64 label with a
// null every ninth row, a utf8 name that is not ASCII with a null every thirteenth row, and a
// float64 score.
func cppLabels() []dataset.Tensor {
	n := int64(cppLabelsRows)
	emb := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]%1000) + float32(i[1])/4 }, n, 4)
	labels := ndarray.FromFunc(func(i []int64) int64 { return i[0] % 10 }, n)
	names := ndarray.FromFunc(func(i []int64) string { return fmt.Sprintf("näme %d", i[0]) }, n)
	scores := ndarray.FromFunc(func(i []int64) float64 { return float64(i[0]) / 8 }, n)
	labelValid, nameValid := make([]bool, n), make([]bool, n)
	for i := range n {
		labelValid[i], nameValid[i] = i%9 != 4, i%13 != 6
		if !labelValid[i] {
			labels.Set(0, i)
		}
		if !nameValid[i] {
			names.Set("", i)
		}
	}
	return []dataset.Tensor{
		{Name: "labels.emb", Column: "emb", Kind: dataset.KindFixedShape, Dense: emb},
		{Name: "labels.label", Column: "label", Kind: dataset.KindDense, Dense: labels, Valid: labelValid},
		{Name: "labels.name", Column: "name", Kind: dataset.KindDense, Dense: names, Valid: nameValid},
		{Name: "labels.score", Column: "score", Kind: dataset.KindDense, Dense: scores},
	}
}

// cppLabelsInput writes labels.arrow into dir as a pyarrow user's file is: one record batch,
// no ndarrow metadata, the embedding a plain fixed_size_list column.
func cppLabelsInput(t testing.TB, dir string) string {
	t.Helper()
	rec, err := dataset.Batch(memory.DefaultAllocator, cppLabels())
	require.NoError(t, err)
	defer rec.Release()
	fields := make([]arrow.Field, rec.NumCols())
	cols := make([]arrow.Array, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		f.Metadata = arrow.Metadata{}
		col := rec.Column(i)
		if ext, ok := col.(array.ExtensionArray); ok {
			col = ext.Storage()
			f.Type = col.DataType()
		}
		fields[i], cols[i] = f, col
	}
	plain := array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer plain.Release()
	path := filepath.Join(dir, "labels.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(plain.Schema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(plain))
	require.NoError(t, w.Close())
	return path
}

// TestRecordArrowCppLabels records cppLabelsRecording, cppLabelsFetched and cppLabelsGetLine
// from Arrow C++ 17's Flight server and client. It runs only when NDARROW_ARROW_CPP names the
// reference's bin directory:
//
//	NDARROW_ARROW_CPP=$PWD/../shared/reference/arrow-cpp-17/bin go test ./flight -run RecordArrowCppLabels
func TestRecordArrowCppLabels(t *testing.T) {
	bin := os.Getenv("NDARROW_ARROW_CPP")
	if bin == "" {
		t.Skip("NDARROW_ARROW_CPP names Arrow C++ 17's programs (../shared/reference/arrow-cpp-17/bin) to record from")
	}
	dir := t.TempDir()
	input := cppLabelsInput(t, dir)

	// Arrow C++'s server: ListFlights, then DoGet of the table.
	fc, rec := cppFlights(t, bin, dir)
	ctx := context.Background()
	require.Len(t, rec.Infos, 1)
	stream, err := fc.DoGet(ctx, rec.Infos[0].Endpoint[0].Ticket)
	require.NoError(t, err)
	var msgs []*arrowflight.FlightData
	for {
		fd, err := stream.Recv()
		if err != nil {
			break
		}
		msgs = append(msgs, fd)
	}
	rec.AddStream("labels", msgs)

	// Arrow C++'s client: a DoPut of the table, as a recording server receives it.
	rs := &recordingServer{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer()
	arrowflight.RegisterFlightServiceServer(gs, rs)
	go func() { _ = gs.Serve(lis) }()
	runCpp(t, bin, "put", "grpc://"+lis.Addr().String(), "labels", input)
	gs.Stop()
	rec.Put = rs.msgs
	require.NotEmpty(t, rec.Put)
	require.NoError(t, rec.Write(cppLabelsRecording))

	// The table put to an ndarrow server by Arrow C++'s client, and its table flight fetched
	// back by Arrow C++'s client.
	s := serve(t, Options{Writable: true}, "grpc")
	runCpp(t, bin, "put", s.uri, "labels", input)
	out, err := exec.Command(filepath.Join(bin, "flight_ref"), "get", s.uri, "labels", filepath.Join(dir, "back.arrow")).Output()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cppLabelsGetLine, out, 0o644))
	b, err := os.ReadFile(filepath.Join(dir, "back.arrow"))
	require.NoError(t, err)
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cppLabelsFetched, zw.EncodeAll(b, nil), 0o644))
	require.NoError(t, zw.Close())
	for in, out := range map[string]string{input: cppLabelsInputRead, filepath.Join(dir, "back.arrow"): cppLabelsFetchedRead} {
		pq := in + ".parquet"
		b, err := exec.Command(filepath.Join(bin, "parquet_golden"), "from-ipc", in, pq).CombinedOutput()
		require.NoError(t, err, "%s", b)
		b, err = exec.Command(filepath.Join(bin, "parquet_golden"), "read", pq, t.TempDir()).Output()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(out, b, 0o644))
	}
}

// cppColumns returns what Arrow C++ read of each column (recorded in file): its Arrow type,
// rows and null count, by name.
func cppColumns(t *testing.T, file string) map[string][3]any {
	t.Helper()
	out := map[string][3]any{}
	for name, m := range cppExpected(t, filepath.Base(file)) {
		out[name] = [3]any{m["type"], m["rows"], m["null_count"]}
	}
	return out
}

// requireLabels checks that got holds the columns of cppLabels, named after table: each
// column's dtype, shape, null rows and values.
func requireLabels(t *testing.T, table string, got []dataset.Tensor) {
	t.Helper()
	want := cppLabels()
	require.Len(t, got, len(want))
	for i, w := range want {
		w.Name = table + "." + w.Column
		requireSameColumn(t, w, got[i])
	}
}

// TestArrowCppTableServer: ndarrow's client of Arrow C++ 17's server (recorded) describes its
// table of an int64 label and a utf8 name, both with nulls, as a table of plain columns, and
// fetches it whole and column by column with their nulls.
func TestArrowCppTableServer(t *testing.T) {
	rec, err := flightreplay.Read(cppLabelsRecording)
	require.NoError(t, err)
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	c := dial(t, srv.URI(), ClientOptions{})
	ctx := context.Background()

	info, err := c.Info(ctx, "labels")
	require.NoError(t, err)
	require.Equal(t, KindTable, info.Kind)
	require.Equal(t, ndarray.Shape{cppLabelsRows}, info.Shape)
	require.Len(t, info.Columns, 4)
	for i, want := range []struct{ name, kind, dtype string }{
		{"labels.emb", "fixed_shape_tensor", "float32"}, {"labels.label", "dense", "int64"},
		{"labels.name", "dense", "string"}, {"labels.score", "dense", "float64"},
	} {
		require.Equal(t, want.name, info.Columns[i].Name)
		require.Equal(t, want.kind, string(info.Columns[i].Kind), want.name)
		require.Equal(t, want.dtype, info.Columns[i].DType, want.name)
	}
	require.Empty(t, info.LeftOut)
	all, err := c.GetTable(ctx, "labels")
	require.NoError(t, err)
	requireLabels(t, "labels", all)
	label, err := c.Get(ctx, "labels.label")
	require.NoError(t, err)
	requireSameColumn(t, all[1], label)
	name, err := c.Get(ctx, "labels.name")
	require.NoError(t, err)
	requireSameColumn(t, all[2], name)
}

// TestArrowCppTablePut: Arrow C++ 17's client putting the table (recorded) to an ndarrow
// server stores it as one table flight, whose stream an arrow-go client reads with the same
// Arrow types (int64 stays int64, utf8 utf8, nulls kept); and what Arrow C++'s client fetched
// back of that table flight (recorded) holds those types and values.
func TestArrowCppTablePut(t *testing.T) {
	rec, err := flightreplay.Read(cppLabelsRecording)
	require.NoError(t, err)
	ctx := context.Background()
	s := serve(t, Options{Writable: true}, "grpc")
	results, err := flightreplay.SendPut(ctx, strings.TrimPrefix(s.uri, "grpc://"), rec.Put, -1)
	require.NoError(t, err)
	require.Len(t, results, 5, "each column, then the table")
	var meta tensorMetadata
	require.NoError(t, json.Unmarshal(results[4], &meta))
	require.Equal(t, "labels", meta.Name)
	require.Equal(t, kindTable, meta.Kind)
	c := dial(t, s.uri, ClientOptions{})
	all, err := c.GetTable(ctx, "labels")
	require.NoError(t, err)
	requireLabels(t, "labels", all)

	wantTypes := []arrow.Type{arrow.EXTENSION, arrow.INT64, arrow.STRING, arrow.FLOAT64}
	wantNulls := []int{0, int(cppLabels()[1].NullCount()), int(cppLabels()[2].NullCount()), 0}
	nulls := make([]int, 4)
	for _, r := range arrowGoGet(t, s.uri, "labels") {
		for i, col := range r.Columns() {
			require.Equal(t, wantTypes[i], col.DataType().ID(), r.Schema().Field(i).Name)
			nulls[i] += col.NullN()
		}
		r.Release()
	}
	require.Equal(t, wantNulls, nulls)

	// What Arrow C++'s client wrote of the table flight: its own writer's file.
	z, err := os.ReadFile(cppLabelsFetched)
	require.NoError(t, err)
	zr, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer zr.Close()
	b, err := zr.DecodeAll(z, nil)
	require.NoError(t, err)
	schema, err := ipc.ReadSchema(b, ipc.BatchOptions{})
	require.NoError(t, err)
	for i, name := range []string{"emb", "label", "name", "score"} {
		require.Equal(t, name, schema.Field(i).Name)
	}
	require.Equal(t, "arrow.fixed_shape_tensor", schema.Field(0).Type.(arrow.ExtensionType).ExtensionName())
	require.Equal(t, arrow.PrimitiveTypes.Int64, schema.Field(1).Type)
	require.Equal(t, arrow.BinaryTypes.String, schema.Field(2).Type)
	require.Equal(t, arrow.PrimitiveTypes.Float64, schema.Field(3).Type)
	path := filepath.Join(t.TempDir(), "labels.arrow")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	requireLabels(t, "labels", f.Tensors)
	line, err := os.ReadFile(cppLabelsGetLine)
	require.NoError(t, err)
	require.Contains(t, string(line), fmt.Sprintf(`"rows":%d`, cppLabelsRows))

	// Arrow C++ read the same types and null counts in what it fetched back as in what it put;
	// the embedding, a plain fixed_size_list, comes back as the tensor column it is (an
	// arrow.fixed_shape_tensor of that storage).
	in, back := cppColumns(t, cppLabelsInputRead), cppColumns(t, cppLabelsFetchedRead)
	for _, name := range []string{"label", "name", "score"} {
		require.Equal(t, in[name], back[name], name)
	}
	require.Contains(t, back["emb"][0], "arrow.fixed_shape_tensor[value_type=float, shape=[4]]")
	require.Equal(t, [3]any{"int64", float64(cppLabelsRows), float64(cppLabels()[1].NullCount())}, back["label"])
	require.Equal(t, [3]any{"string", float64(cppLabelsRows), float64(cppLabels()[2].NullCount())}, back["name"])
}
