package flight

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pqparquet "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// userColumns are the columns of userTable with a tensor form, in order, and its left out.
var (
	userColumns = []string{"emb", "label", "score", "name", "raw", "cat"}
	userLeftOut = "s"
)

// userTable is a table as users have them, rows rows in batches of batch rows: an embedding
// (arrow.fixed_shape_tensor of float32 [4]), an int64 label with a null every seventh row, a
// float64 score, a utf8 name with a null every eleventh row, raw bytes that are not UTF-8, a
// dictionary-encoded category and a struct (which has no tensor form). Release the records.
// The raw bytes of the first 150 rows are text.
func userTable(t testing.TB, rows, batch int) (*arrow.Schema, []arrow.Record) {
	return userTableFrom(t, 0, rows, batch)
}

// userTableFrom is userTable of rows [first, first+rows).
func userTableFrom(t testing.TB, first, rows, batch int) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	mem := memory.DefaultAllocator
	embType, err := arrowtensor.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{4}, nil, nil)
	require.NoError(t, err)
	catType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	structType := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: embType, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "cat", Type: catType, Nullable: true},
		{Name: "s", Type: structType, Nullable: true},
	}, nil)
	var out []arrow.Record
	for lo := first; lo < first+rows; lo += batch {
		hi := min(lo+batch, first+rows)
		b := array.NewRecordBuilder(mem, schema)
		emb := b.Field(0).(*array.ExtensionBuilder).StorageBuilder().(*array.FixedSizeListBuilder)
		embValues := emb.ValueBuilder().(*array.Float32Builder)
		dict := b.Field(5).(*array.BinaryDictionaryBuilder)
		st := b.Field(6).(*array.StructBuilder)
		for r := lo; r < hi; r++ {
			emb.Append(true)
			for k := range 4 {
				embValues.Append(float32(r*4+k) / 8)
			}
			if r%7 == 3 {
				b.Field(1).(*array.Int64Builder).AppendNull()
			} else {
				b.Field(1).(*array.Int64Builder).Append(int64(r % 10))
			}
			b.Field(2).(*array.Float64Builder).Append(float64(r) / 4)
			if r%11 == 5 {
				b.Field(3).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("row %d é", r))
			}
			if r < 150 { // bytes that happen to be text: a chunk of them goes as bytes all the same
				b.Field(4).(*array.BinaryBuilder).Append([]byte(fmt.Sprint("id", r)))
			} else {
				b.Field(4).(*array.BinaryBuilder).Append([]byte{0xff, byte(r), 0x00, byte(r >> 8)})
			}
			require.NoError(t, dict.AppendString([]string{"red", "green", "blue"}[r%3]))
			st.Append(true)
			st.FieldBuilder(0).(*array.Int32Builder).Append(int32(r))
		}
		out = append(out, b.NewRecord())
		b.Release()
	}
	return schema, out
}

// writeUserParquet writes userTable as a Parquet file at path with pqarrow, row groups of
// rowGroup rows, the Arrow schema stored (as pyarrow writes one).
func writeUserParquet(t testing.TB, path string, rows, rowGroup int) {
	writeUserParquetFrom(t, path, 0, rows, rowGroup)
}

// writeUserParquetFrom is writeUserParquet of the rows [first, first+rows) of userTable.
func writeUserParquetFrom(t testing.TB, path string, first, rows, rowGroup int) {
	t.Helper()
	schema, recs := userTableFrom(t, first, rows, rowGroup)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, pqparquet.NewWriterProperties(pqparquet.WithMaxRowGroupLength(int64(rowGroup))),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, w.WriteBuffered(r))
		r.Release()
	}
	require.NoError(t, w.Close())
}

// writeUserArrows writes userTable as an Arrow IPC stream at path (each batch its own
// dictionary, which a file cannot hold).
func writeUserArrows(t testing.TB, path string, rows, batch int) {
	t.Helper()
	schema, recs := userTable(t, rows, batch)
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := arrowipc.NewWriter(f, arrowipc.WithSchema(schema))
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
}

// filled returns t's values with its null rows as a zero, as inspect hashes them.
func filled(t *testing.T, x dataset.Tensor) []byte {
	t.Helper()
	fill := "0"
	if x.DType() == ndarray.String {
		fill = ""
	}
	x, err := x.Filled(fill)
	require.NoError(t, err)
	return valueBytes(t, x)
}

// validOf returns which rows of x are valid, every row when it has no null.
func validOf(x dataset.Tensor) []bool {
	if x.Valid != nil {
		return x.Valid
	}
	out := make([]bool, x.Rows())
	for i := range out {
		out[i] = true
	}
	return out
}

// requireSameColumn checks that got is want: name, kind, dtype, shape, the null rows and
// every value of the others.
func requireSameColumn(t *testing.T, want, got dataset.Tensor) {
	t.Helper()
	require.Equal(t, want.Name, got.Name)
	require.Equal(t, want.ImpliedKind(), got.ImpliedKind(), want.Name)
	require.Equal(t, want.DType(), got.DType(), want.Name)
	require.Equal(t, want.Shape(), got.Shape(), want.Name)
	require.Equal(t, validOf(want), validOf(got), "%s: the null rows", want.Name)
	require.True(t, bytes.Equal(filled(t, want), filled(t, got)), "%s: values differ", want.Name)
}

// requireTable checks that got, a table fetched whole, is the table of the file at path as
// dataset.Open reads it, named name.
func requireTable(t *testing.T, path, name string, got []dataset.Tensor) {
	t.Helper()
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	require.Len(t, got, len(f.Tensors))
	for i, want := range f.Tensors {
		want.Name = name + "." + want.Column
		requireSameColumn(t, want, got[i])
	}
}

// TestPlainAndStringColumns: a plain int64 column with nulls, a string column with nulls,
// bools with nulls and bytes that are not UTF-8 travel by DoGet and by the data URL, their
// null rows kept, in several batches (the first ones without nulls, copied straight into the
// result; the later ones with), as plain Arrow columns (int64, utf8, bool, binary) an arrow-go
// client reads too.
func TestPlainAndStringColumns(t *testing.T) {
	const rows = 20000
	labels := make([]int64, rows)
	names := make([]string, rows)
	flags := make([]bool, rows)
	raw := make([]string, rows)
	valid := make([]bool, rows)
	for i := range rows {
		labels[i], names[i], flags[i], raw[i] = int64(i%10), fmt.Sprintf("name %d ü", i), i%3 == 0, string([]byte{0xfe, byte(i)})
		valid[i] = i < rows/2 || i%5 != 0 // the first batches have no null
	}
	dense := func(a ndarray.Array, withNulls bool) dataset.Tensor {
		x := dataset.Tensor{Kind: dataset.KindDense, Dense: a}
		if withNulls {
			x.Valid = valid
		}
		return x
	}
	columns := map[string]struct {
		x    dataset.Tensor
		wire arrow.Type
	}{
		"label": {dense(ndarray.Must(ndarray.FromSlice(labels, rows)), true), arrow.INT64},
		"name":  {dense(ndarray.Must(ndarray.FromSlice(names, rows)), true), arrow.STRING},
		"flag":  {dense(ndarray.Must(ndarray.FromSlice(flags, rows)), true), arrow.BOOL},
		"raw":   {dense(ndarray.Must(ndarray.FromSlice(raw, rows)), false), arrow.BINARY},
	}
	s := serve(t, Options{Writable: true, MaxMessageBytes: minMessageBytes + messageHeadroom}, "grpc")
	for name, c := range columns {
		require.NoError(t, s.store.Add(name, c.x))
	}
	ctx := context.Background()
	for _, via := range []struct {
		name string
		opts ClientOptions
	}{{"by the data URL", ClientOptions{}}, {"by DoGet", ClientOptions{GRPCOnly: true}}} {
		t.Run(via.name, func(t *testing.T) {
			c := dial(t, s.uri, via.opts)
			for name, col := range columns {
				got, err := c.Get(ctx, name)
				require.NoError(t, err, name)
				want := col.x
				want.Name = name
				requireSameColumn(t, want, got)
			}
		})
	}
	t.Run("uploaded", func(t *testing.T) {
		c := dial(t, s.uri, ClientOptions{MaxMessageBytes: minMessageBytes})
		for name, col := range columns {
			before := s.budget.inUse()
			require.NoError(t, c.Put(ctx, "up_"+name, col.x))
			if col.wire == arrow.STRING || col.wire == arrow.BINARY { // the strings it holds are reserved
				require.Greater(t, s.budget.inUse()-before, stringBytes(col.x), name)
			}
			got, err := c.Get(ctx, "up_"+name)
			require.NoError(t, err, name)
			want := col.x
			want.Name = "up_" + name
			requireSameColumn(t, want, got)
			require.NoError(t, c.Delete(ctx, "up_"+name))
		}
		require.Eventually(t, func() bool { return s.budget.inUse() == 0 }, 5*time.Second, 10*time.Millisecond)
	})
	t.Run("as plain Arrow columns", func(t *testing.T) {
		for name, col := range columns {
			recs := arrowGoGet(t, s.uri, name)
			if col.wire != arrow.BOOL { // 2.5 KB of bits
				require.Greater(t, len(recs), 1, "%s: several batches", name)
			}
			nulls := 0
			for _, r := range recs {
				require.Equal(t, col.wire, r.Column(0).DataType().ID(), name)
				nulls += r.Column(0).NullN()
				r.Release()
			}
			if col.x.Valid != nil {
				require.Equal(t, int(col.x.NullCount()), nulls, name)
			}
		}
	})
}

// TestTableFlights: the tables of a served directory — a Parquet file of many row groups read
// in lockstep, an Arrow IPC file read whole, a directory's table of parts — are each one
// flight of every column with a tensor form (tensor, int64 and float64 with nulls, utf8,
// binary, dictionary) in order, described in FlightInfo with the struct column it leaves out,
// and fetched whole by Client.GetTable, by DoGet and by the data URL, equal to dataset.Open of
// the files; their columns stay flights of their own; an arrow-go client reads the table as
// Arrow columns: plain ones plain, the dictionary-encoded one a dictionary of utf8 (each batch
// after its dictionary, as Arrow C++ sends a table's chunks).
func TestTableFlights(t *testing.T) {
	dir := t.TempDir()
	writeUserParquet(t, filepath.Join(dir, "t.parquet"), 5000, 700)
	writeUserArrows(t, filepath.Join(dir, "u.arrows"), 300, 128)
	writeUserParquet(t, filepath.Join(dir, "parts", "part-0.parquet"), 400, 150)
	writeUserParquetFrom(t, filepath.Join(dir, "parts", "part-1.parquet"), 400, 400, 150)
	joined := filepath.Join(t.TempDir(), "joined.parquet") // what the parts hold together, as one file
	writeUserParquet(t, joined, 800, 150)
	s := serve(t, Options{MaxMessageBytes: minMessageBytes + messageHeadroom}, "grpc")
	names, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	for _, table := range []string{"t", "u", "parts"} {
		require.Contains(t, names, table)
		for _, col := range userColumns {
			require.Contains(t, names, table+"."+col)
		}
		require.NotContains(t, names, table+"."+userLeftOut)
	}
	require.Equal(t, []string{"parts", "t", "u"}, s.store.Tables())
	ctx := context.Background()
	files := map[string]string{"t": filepath.Join(dir, "t.parquet"), "u": filepath.Join(dir, "u.arrows"), "parts": joined}
	rows := map[string]int64{"t": 5000, "u": 300, "parts": 800}

	c := dial(t, s.uri, ClientOptions{})
	for table := range files {
		info, err := c.Info(ctx, table)
		require.NoError(t, err)
		assert.Equal(t, KindTable, info.Kind, table)
		assert.Equal(t, ndarray.Shape{rows[table]}, info.Shape, table)
		require.Len(t, info.Columns, len(userColumns), table)
		for i, col := range info.Columns {
			assert.Equal(t, table+"."+userColumns[i], col.Name)
		}
		assert.Equal(t, ndarray.Shape{rows[table], 4}, info.Columns[0].Shape)
		assert.Equal(t, "int64", info.Columns[1].DType)
		assert.Equal(t, "string", info.Columns[3].DType)
		require.Len(t, info.LeftOut, 1, table)
		assert.Equal(t, table+".s", info.LeftOut[0].Name)
		assert.Contains(t, info.LeftOut[0].Why, "struct")
		_, err = c.Get(ctx, table)
		assert.ErrorIs(t, err, ErrTable)
	}
	for _, via := range []struct {
		name string
		opts ClientOptions
	}{{"by the data URL", ClientOptions{}}, {"by DoGet", ClientOptions{GRPCOnly: true}}} {
		t.Run(via.name, func(t *testing.T) {
			c := dial(t, s.uri, via.opts)
			for table, path := range files {
				got, err := c.GetTable(ctx, table)
				require.NoError(t, err, table)
				requireTable(t, path, table, got)
				label, err := c.Get(ctx, table+".label")
				require.NoError(t, err)
				requireSameColumn(t, got[1], label)
			}
		})
	}
	t.Run("as plain Arrow columns", func(t *testing.T) {
		for table, n := range rows {
			recs := arrowGoGet(t, s.uri, table)
			if table != "u" { // one record of the file, which fits one message
				require.Greater(t, len(recs), 1, "%s: a batch a row group at least", table)
			}
			want := []arrow.Type{arrow.EXTENSION, arrow.INT64, arrow.FLOAT64, arrow.STRING, arrow.BINARY, arrow.DICTIONARY}
			total := int64(0)
			for _, r := range recs {
				for i, f := range r.Schema().Fields() {
					require.Equal(t, userColumns[i], f.Name)
					require.Equal(t, want[i], f.Type.ID(), "%s: %s", table, f.Name) // raw stays bytes, text or not
					if d, ok := f.Type.(*arrow.DictionaryType); ok {
						require.Equal(t, arrow.BinaryTypes.String, d.ValueType, "%s: %s", table, f.Name)
						cat := r.Column(i).(*array.Dictionary)
						require.Positive(t, cat.Dictionary().Len(), "%s: %s: its dictionary came before it", table, f.Name)
					}
				}
				total += r.NumRows()
				r.Release()
			}
			require.Equal(t, n, total)
		}
	})
	require.Zero(t, s.budget.inUse(), "each chunk's reservation given back")
}

// TestUploadedTable: a table uploaded as a pyarrow client does — arrow-go's Flight client, a
// DoPut of a record batch stream of several batches under path "train" — is one flight of
// every column, fetched back whole and column by column, described with the column it leaves
// out; deleting it deletes its columns and gives back what it held of the memory budget.
func TestUploadedTable(t *testing.T) {
	s := serve(t, Options{Writable: true}, "grpc")
	schema, recs := userTable(t, 3000, 512)
	fc, err := arrowflight.NewClientWithMiddleware(strings.TrimPrefix(s.uri, "grpc://"), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer fc.Close()
	ctx := context.Background()
	stream, err := fc.DoPut(ctx)
	require.NoError(t, err)
	w := arrowflight.NewRecordWriter(stream, arrowipc.WithSchema(schema))
	w.SetFlightDescriptor(&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"train"}})
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	require.NoError(t, stream.CloseSend())
	results := 0
	for {
		_, err := stream.Recv()
		if err != nil {
			break
		}
		results++
	}
	require.Equal(t, len(userColumns)+1, results, "each column's result, then the table's")
	require.Positive(t, s.budget.inUse())

	// what the table holds, as dataset reads the stream
	var buf bytes.Buffer
	sw := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	for _, r := range recs {
		require.NoError(t, sw.Write(r))
		r.Release()
	}
	require.NoError(t, sw.Close())
	path := filepath.Join(t.TempDir(), "train.arrows")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

	c := dial(t, s.uri, ClientOptions{})
	info, err := c.Info(ctx, "train")
	require.NoError(t, err)
	require.Equal(t, KindTable, info.Kind)
	require.Len(t, info.LeftOut, 1)
	require.Equal(t, "train.s", info.LeftOut[0].Name)
	got, err := c.GetTable(ctx, "train")
	require.NoError(t, err)
	requireTable(t, path, "train", got)
	for _, col := range got {
		one, err := c.Get(ctx, col.Name)
		require.NoError(t, err)
		requireSameColumn(t, col, one)
	}
	// an arrow-go client (as pyarrow's do_get(b"train")) gets the table back with its labels
	back := arrowGoGet(t, s.uri, "train")
	rows := int64(0)
	for _, r := range back {
		require.Equal(t, "label", r.Schema().Field(1).Name)
		require.Equal(t, arrow.INT64, r.Column(1).DataType().ID())
		rows += r.NumRows()
		r.Release()
	}
	require.Equal(t, int64(3000), rows)

	require.NoError(t, c.Delete(ctx, "train"))
	require.Empty(t, s.store.Names(), "the table's columns go with it")
	require.Eventually(t, func() bool { return s.budget.inUse() == 0 }, 5*time.Second, 10*time.Millisecond,
		"the streams that sent it end, and what it held is given back")
}

// TestPutTable: Client.PutTable sends a table as one DoPut: stored as the table flight and
// its columns at once, fetched back whole; a table over the memory budget stores nothing.
func TestPutTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeUserParquet(t, path, 2000, 300)
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	ctx := context.Background()

	s := serve(t, Options{Writable: true}, "grpc")
	c := dial(t, s.uri, ClientOptions{MaxMessageBytes: minMessageBytes})
	require.NoError(t, c.PutTable(ctx, "t", f.Tensors))
	got, err := c.GetTable(ctx, "t")
	require.NoError(t, err)
	requireTable(t, path, "t", got)
	require.Len(t, s.store.Names(), len(userColumns)+1)

	small := serve(t, Options{Writable: true, MemoryBudget: 64 << 10}, "grpc")
	c = dial(t, small.uri, ClientOptions{})
	err = c.PutTable(ctx, "t", f.Tensors)
	require.Equal(t, codes.ResourceExhausted, status.Code(errorsCause(err)), "%v", err)
	require.Empty(t, small.store.Names())
	require.Zero(t, small.budget.inUse())
}

// errorsCause returns the gRPC status an error of the client wraps, or err.
func errorsCause(err error) error {
	for e := err; e != nil; {
		if _, ok := status.FromError(e); ok {
			return e
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return err
}

// TestTablesToManyClients: many clients fetch tables, their columns and upload tables at once,
// each getting its own values.
func TestTablesToManyClients(t *testing.T) {
	dir := t.TempDir()
	writeUserParquet(t, filepath.Join(dir, "t.parquet"), 3000, 400)
	s := serve(t, Options{Writable: true, MaxMessageBytes: minMessageBytes + messageHeadroom}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	f, err := dataset.Open(filepath.Join(dir, "t.parquet"), limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	clients := 16
	if testing.Short() {
		clients = 8
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(s.uri, ClientOptions{GRPCOnly: i%2 == 0})
			if !assert.NoError(t, err) {
				return
			}
			defer c.Close()
			switch i % 4 {
			case 0, 1:
				got, err := c.GetTable(ctx, "t")
				if assert.NoError(t, err) && assert.Len(t, got, len(f.Tensors)) {
					for k, want := range f.Tensors {
						assert.True(t, bytes.Equal(filled(t, want), filled(t, got[k])), "client %d: %s", i, want.Column)
						assert.Equal(t, validOf(want), validOf(got[k]), "client %d: %s", i, want.Column)
					}
				}
			case 2:
				got, err := c.Get(ctx, "t.name")
				if assert.NoError(t, err) {
					assert.True(t, bytes.Equal(filled(t, f.Tensors[3]), filled(t, got)), "client %d: name", i)
				}
			case 3:
				name := fmt.Sprintf("up%d", i)
				if assert.NoError(t, c.PutTable(ctx, name, f.Tensors)) {
					got, err := c.GetTable(ctx, name)
					if assert.NoError(t, err) && assert.Len(t, got, len(f.Tensors)) {
						assert.True(t, bytes.Equal(filled(t, f.Tensors[1]), filled(t, got[1])), "client %d: label", i)
					}
					assert.NoError(t, c.Delete(ctx, name))
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(t, s.budget.inUse())
}

// TestTableFlightsFollowTheDirectory: a rescan keeps an unchanged table's flight, serves a
// rewritten one from its new contents and drops a removed one with its columns; a table
// whose name a tensor has is served as its columns only, and said so.
func TestTableFlightsFollowTheDirectory(t *testing.T) {
	dir := t.TempDir()
	writeUserParquet(t, filepath.Join(dir, "t.parquet"), 300, 100)
	s := serve(t, Options{}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()

	changes, err := s.store.Rescan()
	require.NoError(t, err)
	require.True(t, changes.Empty(), "%+v", changes)

	tmp := filepath.Join(dir, ".t.parquet")
	writeUserParquetFrom(t, tmp, 1000, 500, 100)
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "t.parquet")))
	changes, err = s.store.Rescan()
	require.NoError(t, err)
	require.Contains(t, changes.Changed, "t")
	got, err := c.GetTable(ctx, "t")
	require.NoError(t, err)
	requireTable(t, filepath.Join(dir, "t.parquet"), "t", got)

	// a tensor of its own in the folder t is named t (t.npy beside t.parquet would be two
	// files of one base name: neither served)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "t"), 0o755))
	require.NoError(t, dataset.Save(filepath.Join(dir, "t", "0.npy"), []dataset.Tensor{{Dense: ndarray.New[float32](2, 2)}}, dataset.WriteOptions{}))
	changes, err = s.store.Rescan()
	require.ErrorContains(t, err, "the table t is served as its columns only: a tensor has its name")
	require.Contains(t, changes.Changed, "t")
	x, err := c.Get(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, ndarray.Shape{2, 2}, x.Shape())
	_, err = c.Get(ctx, "t.label")
	require.NoError(t, err)

	require.NoError(t, os.RemoveAll(filepath.Join(dir, "t")))
	require.NoError(t, os.Remove(filepath.Join(dir, "t.parquet")))
	changes, err = s.store.Rescan()
	require.NoError(t, err)
	require.Contains(t, changes.Removed, "t")
	require.Contains(t, changes.Removed, "t.label")
	require.Empty(t, s.store.Names())
}

// TestPeersTablesNameWhatTheyLeaveOut: a FlightInfo of another server (no ndarrow
// app_metadata) whose schema holds columns with no tensor form is described as a table of the
// others, the rest named in Info.LeftOut.
func TestPeersTablesNameWhatTheyLeaveOut(t *testing.T) {
	schema, recs := userTable(t, 1, 1)
	for _, r := range recs {
		r.Release()
	}
	fi := &arrowflight.FlightInfo{
		Schema:           arrowflight.SerializeSchema(schema, memory.DefaultAllocator),
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"x"}},
		TotalRecords:     10, TotalBytes: -1,
	}
	info, err := infoOf(fi, limits.Limits{})
	require.NoError(t, err)
	require.Equal(t, KindTable, info.Kind)
	require.Equal(t, ndarray.Shape{10}, info.Shape)
	require.Len(t, info.Columns, len(userColumns))
	require.Len(t, info.LeftOut, 1)
	require.Equal(t, "x.s", info.LeftOut[0].Name)
	require.Contains(t, info.LeftOut[0].String(), "struct<a: int32> left out")
}

// TestStringColumnsBytes: what a server tells of a flight of strings — a Parquet column, a
// table of Arrow file parts, an Arrow IPC file, an upload, and each table holding them — is
// never 0 bytes: what its record batches hold (values, offsets and validity), exactly, or -1
// where that is not known before reading.
func TestStringColumnsBytes(t *testing.T) {
	f := newTakeFixture(t, Options{})
	c := dial(t, f.s.uri, ClientOptions{})
	raw := rawClient(t, f.s.uri)
	infos, err := c.List(t.Context())
	require.NoError(t, err)
	streamed := func(t *testing.T, name string) int64 {
		fi, err := raw.GetFlightInfo(t.Context(), pathDescriptor(name))
		require.NoError(t, err)
		stream, err := raw.DoGet(t.Context(), fi.Endpoint[0].Ticket)
		require.NoError(t, err)
		rd, err := arrowflight.NewRecordReader(stream)
		require.NoError(t, err)
		defer rd.Release()
		total := int64(0)
		for rd.Next() {
			n, err := dataset.RecordBytes(rd.Record())
			require.NoError(t, err)
			total += n
		}
		require.NoError(t, rd.Err())
		return total
	}
	strings := map[string]int64{}
	for _, i := range infos {
		holds := i.DType == "string"
		for _, col := range i.Columns {
			holds = holds || col.DType == "string"
		}
		if holds {
			strings[i.Name] = i.Bytes
		}
	}
	for _, name := range []string{"t.name", "t", "parts.name", "parts", "up.name", "up", "a.name", "a"} {
		require.Contains(t, strings, name, "a flight of strings")
	}
	for name, bytes := range strings {
		assert.NotZero(t, bytes, "%s: never 0", name)
		if bytes >= 0 {
			assert.Equal(t, streamed(t, name), bytes, "%s: what its record batches hold", name)
		}
	}
	assert.Equal(t, int64(-1), strings["t.name"], "a Parquet column of strings: unknown before reading")
	assert.Positive(t, strings["up.name"], "an upload's: known")
}
