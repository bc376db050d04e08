package flight

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/table"
)

// writePlainArrow writes userTable's columns but its dictionary and struct as an Arrow IPC
// file of several record batches of batch rows.
func writePlainArrow(t testing.TB, path string, rows, batch int) {
	t.Helper()
	_, recs := userTable(t, rows, batch)
	keep := []int{0, 1, 2, 3, 4}
	var fields []arrow.Field
	for _, i := range keep {
		fields = append(fields, recs[0].Schema().Field(i))
	}
	schema := arrow.NewSchema(fields, nil)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(schema))
	require.NoError(t, err)
	for _, r := range recs {
		cols := make([]arrow.Array, len(keep))
		for i, k := range keep {
			cols[i] = r.Column(k)
		}
		plain := array.NewRecord(schema, cols, r.NumRows())
		require.NoError(t, w.Write(plain))
		plain.Release()
		r.Release()
	}
	require.NoError(t, w.Close())
}

// takeFixture is a server holding the flights the take tests take rows of, and the rows each
// has.
type takeFixture struct {
	s    *testServer
	rows map[string]int64
}

// newTakeFixture serves a directory of a Parquet table of several row groups (t), an Arrow
// IPC file of several batches (a), a table of Arrow file parts (parts), a standalone .npy
// tensor (x), and uploads a table (up) and a tensor (dense), with opts.
func newTakeFixture(t *testing.T, opts Options) takeFixture {
	t.Helper()
	dir := t.TempDir()
	writeUserParquet(t, filepath.Join(dir, "t.parquet"), 5000, 700)
	writePlainArrow(t, filepath.Join(dir, "a.arrow"), 450, 100)
	for i := range 2 {
		_, recs := userTableFrom(t, i*200, 200, 200) // a dictionary of one batch: an IPC file holds it
		f, err := os.Create(filepath.Join(mkdir(t, dir, "parts"), fmt.Sprintf("part-%d.arrow", i)))
		require.NoError(t, err)
		w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(recs[0].Schema()))
		require.NoError(t, err)
		require.NoError(t, w.Write(recs[0]))
		recs[0].Release()
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
	}
	x := ndarray.New[float32](37, 3, 2)
	for i := range x.Data() {
		x.Data()[i] = float32(i) / 4
	}
	f, err := os.Create(filepath.Join(dir, "x.npy"))
	require.NoError(t, err)
	_, err = npy.Write(f, x)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	opts.Writable = true // the fixture uploads "up" and "dense"
	s := serve(t, opts, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()
	schema, recs := userTable(t, 900, 256)
	upload, left, err := dataset.FromRecords(schema, recs, "up")
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.NoError(t, c.PutTable(ctx, "up", upload))
	for _, r := range recs {
		r.Release()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, c.Put(ctx, "dense", dataset.Tensor{Dense: randomDense[int16](rng, 64, 5)}))
	return takeFixture{s: s, rows: map[string]int64{"t": 5000, "a": 450, "parts": 400, "x": 37, "up": 900, "dense": 64, "t.label": 5000}}
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(p, 0o755))
	return p
}

// wantTake returns the rows of the tensors of a whole flight (GetTable's) as a take gives
// them: normalized, in order, the columns picked.
func wantTake(t *testing.T, name string, whole []dataset.Tensor, rows []int64, columns []string) []dataset.Tensor {
	t.Helper()
	n := whole[0].Rows()
	at := make([]int64, len(rows))
	for i, r := range rows {
		if r < 0 {
			r += n
		}
		at[i] = r
	}
	picked := whole
	if len(columns) > 0 {
		picked = nil
		for _, c := range columns {
			for _, w := range whole {
				if w.Name == c || w.Name == name+"."+c {
					picked = append(picked, w)
				}
			}
		}
		require.Len(t, picked, len(columns))
	}
	out := make([]dataset.Tensor, len(picked))
	for i, w := range picked {
		got, err := w.TakeRows(at)
		require.NoError(t, err)
		out[i] = got
	}
	return out
}

// TestTakeRows: rows of every kind of flight — a Parquet table of several row groups, an
// Arrow IPC file of several batches, a table of Arrow file parts, a column of a table, a
// standalone .npy tensor, an uploaded table and an uploaded tensor — taken in order,
// shuffled, repeated, counted from the end, none, and with columns picked, equal the rows of
// the whole flight fetched by GetTable (TakeRows), by DoGet and by the data URL's client
// alike, and the memory budget is all given back.
func TestTakeRows(t *testing.T) {
	fx := newTakeFixture(t, Options{MaxMessageBytes: minMessageBytes + messageHeadroom})
	ctx := context.Background()
	c := dial(t, fx.s.uri, ClientOptions{})
	held := fx.s.budget.inUse() // the uploads'
	rng := rand.New(rand.NewPCG(3, 4))
	for name, n := range fx.rows {
		whole, err := c.GetTable(ctx, name)
		require.NoError(t, err, name)
		random := make([]int64, 300)
		for i := range random {
			random[i] = rng.Int64N(2*n) - n // negative ones too
		}
		cases := []struct {
			name    string
			rows    []int64
			columns []string
		}{
			{"the first rows in order", []int64{0, 1, 2}, nil},
			{"rows shuffled and repeated", []int64{n - 1, 3, n / 2, 3, 0, n - 1}, nil},
			{"rows counted from the end", []int64{-1, -n, -2}, nil},
			{"random rows across fragments", random, nil},
			{"no rows", []int64{}, nil},
		}
		if len(whole) > 1 {
			cases = append(cases,
				struct {
					name    string
					rows    []int64
					columns []string
				}{"columns picked by name, in the order asked", []int64{5, 1, 5}, []string{"label", name + ".emb"}},
				struct {
					name    string
					rows    []int64
					columns []string
				}{"one string column", random[:40], []string{"name"}})
		} else {
			cases = append(cases, struct {
				name    string
				rows    []int64
				columns []string
			}{"the tensor named as its one column", []int64{2, 0}, []string{name}})
		}
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				got, err := c.Take(ctx, name, tc.rows, tc.columns)
				require.NoError(t, err)
				want := wantTake(t, name, whole, tc.rows, tc.columns)
				require.Len(t, got, len(want))
				for i := range want {
					requireSameColumn(t, want[i], got[i])
				}
			})
		}
	}
	require.Equal(t, held, fx.s.budget.inUse(), "every take's reservation given back")
}

// TestTakeErrors: a row outside the flight (OutOfRange naming the row and the rows,
// table.ErrRowRange in Go), a name not served (NotFound), a column the table does not have or
// left out (InvalidArgument naming it), a sparse tensor, columns of a tensor, and a take
// larger than MaxCopySize or the memory budget (ResourceExhausted) each fail alone, clearly.
func TestTakeErrors(t *testing.T) {
	fx := newTakeFixture(t, Options{})
	ctx := context.Background()
	c := dial(t, fx.s.uri, ClientOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	require.NoError(t, c.Put(ctx, "coo", everySparse(rng)[0]))
	for _, tc := range []struct {
		name     string
		flight   string
		rows     []int64
		columns  []string
		code     codes.Code
		contains []string
		is       error
	}{
		{"a row past the end", "t", []int64{0, 5000}, nil, codes.OutOfRange, []string{"row 5000", "5000 rows"}, table.ErrRowRange},
		{"a row before the start", "x", []int64{-38}, nil, codes.OutOfRange, []string{"row -38", "37 rows"}, table.ErrRowRange},
		{"a row past an upload's end", "up", []int64{900}, nil, codes.OutOfRange, []string{"row 900", "900 rows"}, table.ErrRowRange},
		{"the most negative row", "dense", []int64{-1 << 63}, nil, codes.OutOfRange, []string{"row -9223372036854775808"}, table.ErrRowRange},
		{"a name not served", "nope", []int64{0}, nil, codes.NotFound, []string{"nope"}, ErrNotFound},
		{"a column the table does not have", "t", []int64{0}, []string{"label", "nope"}, codes.InvalidArgument, []string{"no column nope", "emb, label"}, nil},
		{"a column left out", "t", []int64{0}, []string{"s"}, codes.InvalidArgument, []string{"no column s", "no tensor form"}, nil},
		{"a column named twice", "t", []int64{0}, []string{"label", "t.label"}, codes.InvalidArgument, []string{"twice"}, nil},
		{"a column of a tensor", "x", []int64{0}, []string{"a"}, codes.InvalidArgument, []string{"not a table"}, nil},
		{"a sparse tensor", "coo", []int64{0}, nil, codes.InvalidArgument, []string{"sparse"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Take(ctx, tc.flight, tc.rows, tc.columns)
			require.Error(t, err)
			assert.Equal(t, tc.code, status.Code(err), err.Error())
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			// a DoGet of the ticket, without GetFlightInfo before it, says the same
			raw := rawClient(t, fx.s.uri)
			stream, err := raw.DoGet(ctx, &arrowflight.Ticket{Ticket: TakeTicket(tc.flight, tc.rows, tc.columns)})
			require.NoError(t, err)
			err = collect(stream.Recv)
			assert.Equal(t, tc.code, status.Code(err), fmt.Sprint(err))
		})
	}
	t.Run("more than MaxCopySize", func(t *testing.T) {
		s := newTakeFixture(t, Options{Limits: limits.Limits{MaxCopySize: 64 << 10}})
		c := dial(t, s.s.uri, ClientOptions{})
		rows := make([]int64, 5000)
		for i := range rows {
			rows[i] = int64(i)
		}
		_, err := c.Take(ctx, "t", rows, nil)
		assert.Equal(t, codes.ResourceExhausted, status.Code(err), fmt.Sprint(err))
		assert.ErrorContains(t, err, "MaxCopySize")
		_, err = c.Take(ctx, "t", rows[:10], nil) // a small one still goes
		assert.NoError(t, err)
	})
	t.Run("more than the memory budget", func(t *testing.T) {
		s := newTakeFixture(t, Options{MemoryBudget: 8 << 20, WireBudget: 64 << 20, MaxRecvMessageBytes: 8 << 20, Limits: limits.Limits{MaxCopySize: 1 << 30}})
		c := dial(t, s.s.uri, ClientOptions{})
		held := s.s.budget.inUse()
		rows := make([]int64, 600000)
		for i := range rows {
			rows[i] = int64(i % 900)
		}
		_, err := c.Take(ctx, "up", rows, nil)
		assert.Equal(t, codes.ResourceExhausted, status.Code(err), fmt.Sprint(err))
		assert.ErrorContains(t, err, "memory budget")
		_, err = c.Take(ctx, "up", rows[:10], nil)
		assert.NoError(t, err)
		require.Equal(t, held, s.s.budget.inUse())
	})
}

// TestTakeHostileTickets: tickets no client should send — not JSON, JSON of another shape,
// numbers that are no int64, fields unknown, more after the object, more rows than
// Limits.MaxElements, a ticket past the receive limit — each get a clear error by DoGet and
// by GetFlightInfo, never a panic, and the server serves on.
func TestTakeHostileTickets(t *testing.T) {
	s := serve(t, Options{Writable: true, Limits: limits.Limits{MaxElements: 1000}, MaxRecvMessageBytes: 1 << 20}, "grpc")
	ctx := context.Background()
	c := dial(t, s.uri, ClientOptions{})
	v, err := ndarray.FromSlice([]int64{10, 11, 12, 13}, 4)
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, "v", dataset.Tensor{Dense: v}))
	held := s.budget.inUse()
	many := TakeTicket("v", make([]int64, 1001), nil)
	huge := append([]byte(`{"take":{"name":"v","rows":[`), bytes.Repeat([]byte("0,"), 1<<20)...)
	huge = append(huge, []byte("0]}}")...)
	for _, tc := range []struct {
		name     string
		ticket   string
		code     codes.Code
		contains string
	}{
		{"not JSON", `{not json`, codes.InvalidArgument, "invalid take ticket"},
		{"cut short", `{"take":{"name":"v","rows":[1,`, codes.InvalidArgument, "invalid take ticket"},
		{"no take", `{}`, codes.InvalidArgument, `no "take"`},
		{"take null", `{"take":null}`, codes.InvalidArgument, `no "take"`},
		{"no name", `{"take":{"rows":[1]}}`, codes.InvalidArgument, `no "name"`},
		{"no rows", `{"take":{"name":"v"}}`, codes.InvalidArgument, `no "rows"`},
		{"rows not a list", `{"take":{"name":"v","rows":"1,2"}}`, codes.InvalidArgument, "invalid take ticket"},
		{"a row too large for int64", `{"take":{"name":"v","rows":[99999999999999999999999]}}`, codes.InvalidArgument, "invalid take ticket"},
		{"a row not an integer", `{"take":{"name":"v","rows":[1.5]}}`, codes.InvalidArgument, "invalid take ticket"},
		{"a row of 1e400", `{"take":{"name":"v","rows":[1e400]}}`, codes.InvalidArgument, "invalid take ticket"},
		{"a field unknown", `{"take":{"name":"v","rows":[1],"limit":3}}`, codes.InvalidArgument, `unknown field "limit"`},
		{"more after the object", `{"take":{"name":"v","rows":[1]}}{}`, codes.InvalidArgument, "more after"},
		{"an empty column", `{"take":{"name":"v","rows":[1],"columns":[""]}}`, codes.InvalidArgument, "invalid take ticket"},
		{"the most negative row", `{"take":{"name":"v","rows":[-9223372036854775808]}}`, codes.OutOfRange, "of a flight of 4 rows"},
		{"the largest row", `{"take":{"name":"v","rows":[9223372036854775807]}}`, codes.OutOfRange, "of a flight of 4 rows"},
		{"more rows than MaxElements", string(many), codes.ResourceExhausted, "MaxElements"},
		{"a ticket past the receive limit", string(huge), codes.ResourceExhausted, "larger than max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := rawClient(t, s.uri)
			stream, err := raw.DoGet(ctx, &arrowflight.Ticket{Ticket: []byte(tc.ticket)})
			require.NoError(t, err)
			err = collect(stream.Recv)
			require.Error(t, err)
			assert.Equal(t, tc.code, status.Code(err), err.Error())
			assert.Contains(t, err.Error(), tc.contains)
			_, err = raw.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: []byte(tc.ticket)})
			assert.Equal(t, tc.code, status.Code(err), fmt.Sprint(err))
		})
	}
	got, err := c.Take(ctx, "v", []int64{3, -4}, nil) // still serving
	require.NoError(t, err)
	assert.Equal(t, []int64{13, 10}, got[0].Dense.(*ndarray.Dense[int64]).Data())
	require.Equal(t, held, s.budget.inUse())
	err = s.store.Add("{x", dataset.Tensor{Dense: v})
	assert.ErrorIs(t, err, ErrName, "a name starting with '{' would read as a take")
}

// TestTakeByAnyFlightClient: arrow-go's own Flight client — no ndarrow code — takes rows with
// the ticket README documents, written by hand, by DoGet and by GetFlightInfo of the command
// then DoGet of its endpoint's ticket, and reads with arrow-go's IPC reader a stream whose
// schema is the whole table's DoGet's, its columns picked, holding the rows asked.
func TestTakeByAnyFlightClient(t *testing.T) {
	fx := newTakeFixture(t, Options{})
	ctx := context.Background()
	raw := rawClient(t, fx.s.uri)
	whole := arrowGoGet(t, fx.s.uri, "t")
	fullSchema := whole[0].Schema()
	for _, r := range whole {
		r.Release()
	}
	c := dial(t, fx.s.uri, ClientOptions{})
	all, err := c.GetTable(ctx, "t")
	require.NoError(t, err)

	read := func(t *testing.T, ticket []byte) (*arrow.Schema, []arrow.Record) {
		stream, err := raw.DoGet(ctx, &arrowflight.Ticket{Ticket: ticket})
		require.NoError(t, err)
		rd, err := arrowflight.NewRecordReader(stream)
		require.NoError(t, err)
		defer rd.Release()
		var recs []arrow.Record
		for rd.Next() {
			rd.Record().Retain()
			recs = append(recs, rd.Record())
		}
		require.NoError(t, rd.Err())
		return rd.Schema(), recs
	}
	check := func(t *testing.T, schema *arrow.Schema, recs []arrow.Record, rows []int64, columns []string) {
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		var want []arrow.Field
		for _, col := range columns {
			want = append(want, fullSchema.Field(fullSchema.FieldIndices(col)[0]))
		}
		require.True(t, arrow.NewSchema(want, nil).Equal(schema), "%v", schema)
		got, _, err := dataset.FromRecords(schema, recs, "t")
		require.NoError(t, err)
		expect := wantTake(t, "t", all, rows, columns)
		require.Len(t, got, len(expect))
		for i := range expect {
			requireSameColumn(t, expect[i], got[i])
		}
	}
	rows := []int64{4999, 0, 17, 17, -2, 2100}
	t.Run("DoGet of the ticket written by hand", func(t *testing.T) {
		ticket := []byte(`{"take": {"name": "t", "rows": [4999, 0, 17, 17, -2, 2100], "columns": ["emb", "name", "label"]}}`)
		schema, recs := read(t, ticket)
		check(t, schema, recs, rows, []string{"emb", "name", "label"})
	})
	t.Run("GetFlightInfo of the command, then DoGet of its endpoint", func(t *testing.T) {
		cmd := []byte(`{"take":{"name":"t","rows":[4999,0,17,17,-2,2100]}}`)
		fi, err := raw.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: cmd})
		require.NoError(t, err)
		assert.Equal(t, int64(len(rows)), fi.TotalRecords)
		require.Len(t, fi.Endpoint, 1)
		infoSchema, err := arrowflight.DeserializeSchema(fi.Schema, nil)
		require.NoError(t, err)
		assert.True(t, fullSchema.Equal(infoSchema))
		schema, recs := read(t, fi.Endpoint[0].Ticket.Ticket)
		check(t, schema, recs, rows, userColumns)
	})
}

// TestTakeManyClients: 16 clients at once take random rows of a Parquet table, an uploaded
// table, a column and a .npy tensor, each answer exact, the memory budget given back.
func TestTakeManyClients(t *testing.T) {
	fx := newTakeFixture(t, Options{})
	ctx := context.Background()
	c := dial(t, fx.s.uri, ClientOptions{})
	held := fx.s.budget.inUse()
	names := []string{"t", "up", "t.label", "x", "parts"}
	wholes := map[string][]dataset.Tensor{}
	for _, name := range names {
		w, err := c.GetTable(ctx, name)
		require.NoError(t, err)
		wholes[name] = w
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			cc, err := Dial(fx.s.uri, ClientOptions{GRPCOnly: g%2 == 0})
			if err != nil {
				errs <- err
				return
			}
			defer cc.Close()
			for i := range 12 {
				name := names[(g+i)%len(names)]
				n := fx.rows[name]
				rows := make([]int64, 1+rng.IntN(200))
				for k := range rows {
					rows[k] = rng.Int64N(n)
				}
				got, err := cc.Take(ctx, name, rows, nil)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					return
				}
				for k, w := range wholes[name] {
					want, err := w.TakeRows(rows)
					if err != nil {
						errs <- err
						return
					}
					if k >= len(got) || !bytes.Equal(valueBytesOf(want), valueBytesOf(got[k])) {
						errs <- fmt.Errorf("%s: column %d differs", name, k)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, held, fx.s.budget.inUse())
}

// valueBytesOf is filled's bytes without a testing.T, for goroutines: a tensor's values, its
// null rows as zeros, strings as their lengths and bytes.
func valueBytesOf(x dataset.Tensor) []byte {
	fill := "0"
	if x.DType() == ndarray.String {
		fill = ""
	}
	x, err := x.Filled(fill)
	if err != nil {
		return []byte(err.Error())
	}
	var b bytes.Buffer
	if _, err := x.WriteValues(&b, 0); err != nil {
		return []byte(err.Error())
	}
	fmt.Fprint(&b, x.Valid)
	return b.Bytes()
}

// TestTakeAboveTheServersReceiveLimit: a take whose rows make a request larger than the
// server receives says so — the server's limit and its option, not the client's — and is
// limits.ErrExceeded.
func TestTakeAboveTheServersReceiveLimit(t *testing.T) {
	s := serve(t, Options{Writable: true, MaxRecvMessageBytes: 1 << 20}, "grpc")
	ctx := context.Background()
	c := dial(t, s.uri, ClientOptions{})
	v, err := ndarray.FromSlice([]int64{10, 11, 12, 13}, 4)
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, "v", dataset.Tensor{Dense: v}))
	_, err = c.Take(ctx, "v", make([]int64, 1<<20), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, limits.ErrExceeded)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, err.Error(), "a take of 1048576 rows")
	assert.Contains(t, err.Error(), "serve --max-recv-message-bytes")
}

// echoInfoServer is a Flight server of no limit of its own on what it answers: GetFlightInfo
// answers with the command as the ticket, and gRPC's send limit is all that bounds it (as a
// server before ndarrow checked its answers).
type echoInfoServer struct{ arrowflight.BaseFlightServer }

func (echoInfoServer) GetFlightInfo(_ context.Context, d *arrowflight.FlightDescriptor) (*arrowflight.FlightInfo, error) {
	return &arrowflight.FlightInfo{FlightDescriptor: d, Endpoint: []*arrowflight.FlightEndpoint{{Ticket: &arrowflight.Ticket{Ticket: d.Cmd}}}}, nil
}

// TestTakeAboveAMessageLimit: a take whose rows make a message above a limit — the request
// above the client's send limit, the answer (the rows twice) above the server's — fails with
// limits.ErrExceeded naming that limit, its option and how to raise it, never gRPC's bare
// "message larger than max"; within the limits raised as they say, the same take answers.
func TestTakeAboveAMessageLimit(t *testing.T) {
	ctx := context.Background()
	rows := make([]int64, 300_000) // "0," each: a request of about 600 KB, an answer of 1.2 MB
	foreign := func(t *testing.T) string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		gs := grpc.NewServer(grpc.MaxSendMsgSize(1 << 20))
		arrowflight.RegisterFlightServiceServer(gs, &echoInfoServer{})
		go func() { _ = gs.Serve(lis) }()
		t.Cleanup(gs.Stop)
		return "grpc://" + lis.Addr().String()
	}
	for _, tc := range []struct {
		name       string
		server     Options
		client     ClientOptions
		uri        func(t *testing.T) string
		want, what string
	}{
		{"the client's send limit", Options{}, ClientOptions{MaxMessageBytes: 512 << 10}, nil,
			"a take of 300000 rows is a request of", "above the 524288 bytes this client sends (ClientOptions.MaxMessageBytes; get --max-message-bytes): take fewer rows at a time, or raise it to at least"},
		{"the server's send limit", Options{MaxMessageBytes: 1 << 20}, ClientOptions{}, nil,
			"a take of 300000 rows is a FlightInfo of", "above the 1048576 bytes this server sends (serve --max-message-bytes; Options.MaxMessageBytes): take fewer rows at a time, or raise the server's limit"},
		{"a server that leaves it to gRPC", Options{}, ClientOptions{}, foreign,
			"a take of 300000 rows is an answer of", "(it holds the rows twice), above the 1048576 bytes 127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uri := ""
			if tc.uri != nil {
				uri = tc.uri(t)
			} else {
				opts := tc.server
				opts.Writable = true // it uploads v
				s := serve(t, opts, "grpc")
				uri = s.uri
				v, err := ndarray.FromSlice([]int64{10, 11, 12, 13}, 4)
				require.NoError(t, err)
				require.NoError(t, dial(t, uri, ClientOptions{}).Put(ctx, "v", dataset.Tensor{Dense: v}))
			}
			_, err := dial(t, uri, tc.client).Take(ctx, "v", rows, nil)
			require.ErrorIs(t, err, limits.ErrExceeded)
			assert.Contains(t, err.Error(), "flight: v: "+tc.want)
			assert.Contains(t, err.Error(), tc.what)
			assert.NotContains(t, err.Error(), "rpc error")
			if tc.uri == nil && tc.client.MaxMessageBytes == 0 {
				assert.Equal(t, codes.ResourceExhausted, status.Code(err), "the server's status")
			}
		})
	}
	t.Run("within the limits raised", func(t *testing.T) {
		s := serve(t, Options{Writable: true, MaxMessageBytes: 2 << 20}, "grpc")
		v, err := ndarray.FromSlice([]int64{10, 11, 12, 13}, 4)
		require.NoError(t, err)
		c := dial(t, s.uri, ClientOptions{MaxMessageBytes: 1 << 20})
		require.NoError(t, c.Put(ctx, "v", dataset.Tensor{Dense: v}))
		got, err := c.Take(ctx, "v", rows, nil)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.EqualValues(t, len(rows), got[0].Rows())
	})
}

// TestTakeOfALargeDictionary: a take of rows of a dictionary-encoded column of an Arrow IPC
// file sends, within a message limit of 64 KiB, the rows and a dictionary of the values they
// hold — not the file's 200,000 — and a take whose rows hold a dictionary larger than a
// message fails saying it is the dictionary, not a row, the limit the server was given, and
// the serve option and value that raise it. Within that, the same take answers.
func TestTakeOfALargeDictionary(t *testing.T) {
	ctx := t.Context()
	const n = 200_000
	values := make([]string, n)
	for i := range values {
		values[i] = fmt.Sprintf("category-%022d", i) // 31 bytes: a dictionary of 6.2 MB
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	dir := t.TempDir()
	require.NoError(t, dataset.Save(filepath.Join(dir, "big.arrow"), []dataset.Tensor{
		{Name: "big.label", Column: "label", Dense: ndarray.Must(ndarray.Arange[int64](0, n, 1))},
		{Name: "big.cat", Column: "cat", Dense: ndarray.Must(ndarray.FromSlice(values, n)), Dictionary: &dataset.Dictionary{Type: dictType, Values: values}},
	}, dataset.WriteOptions{}))
	many := make([]int64, 2000) // 2000 values of 31 bytes and their offsets: a dictionary of 70,004 bytes
	for i := range many {
		many[i] = int64(i * 97)
	}
	for _, tc := range []struct {
		name  string
		limit int
		rows  []int64
		fails string
	}{
		{"two rows", 64 << 10, []int64{0, 1}, ""},
		{"rows whose dictionary is larger than a message", 64 << 10, many,
			"column cat's dictionary holds 70004 bytes, more than a message of the 65536-byte limit holds (49152, the rest is framing; a dictionary goes whole in a message of its own): serve it with --max-message-bytes 131072 or more (flight.Options.MaxMessageBytes)"},
		{"the same rows, the limit raised as said", 128 << 10, many, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, Options{MaxMessageBytes: tc.limit}, "grpc")
			_, err := s.store.AddDir(dir, limits.Limits{})
			require.NoError(t, err)
			got, err := dial(t, s.uri, ClientOptions{}).Take(ctx, "big", tc.rows, nil)
			if tc.fails != "" {
				require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
				assert.Contains(t, err.Error(), "flight: big: ")
				assert.Contains(t, err.Error(), tc.fails)
				assert.NotContains(t, err.Error(), "one row exceeds")
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 2)
			cat := got[1]
			require.Equal(t, "cat", cat.Column)
			require.NotNil(t, cat.Dictionary, "still a dictionary")
			assert.Len(t, cat.Dictionary.Values, len(tc.rows), "the values the rows hold alone")
			want := make([]string, len(tc.rows))
			for i, r := range tc.rows {
				want[i] = values[r]
			}
			assert.Equal(t, want, must(dataset.DenseOf[string](cat)).Data())
			assert.Equal(t, tc.rows, must(dataset.DenseOf[int64](got[0])).Data())
		})
	}
}
