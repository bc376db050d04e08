package flight

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
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

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// TestMemoryBudget: reservations within the budget are granted at once; one that does not fit
// waits for what others give back, in turn, and fails with ResourceExhausted (naming the
// option) after the wait, or as the caller's context says; one larger than the whole budget
// takes all of it; no budget reserves nothing.
func TestMemoryBudget(t *testing.T) {
	ctx := context.Background()
	b := newBudget("memory budget", "serve --memory-budget", 100, 50*time.Millisecond)
	r1, err := b.acquire(ctx, "x", 60)
	require.NoError(t, err)
	r2, err := b.acquire(ctx, "x", 40)
	require.NoError(t, err)
	require.EqualValues(t, 100, b.inUse())

	_, err = b.acquire(ctx, "x", 1)
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.ErrorContains(t, err, "--memory-budget")
	require.EqualValues(t, 1, b.waits.Load())

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.acquire(cctx, "x", 1)
	require.Equal(t, codes.Canceled, status.Code(err))

	r1()
	r2()
	require.EqualValues(t, 0, b.inUse())
	require.EqualValues(t, 100, b.peak.Load())

	b = newBudget("memory budget", "serve --memory-budget", 100, time.Hour)
	r1, err = b.acquire(ctx, "x", 60)
	require.NoError(t, err)
	r2, err = b.acquire(ctx, "x", 40)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		r, err := newBudget("memory budget", "serve --memory-budget", 1, time.Hour).acquire(ctx, "x", 1) // another budget: at once
		if err == nil {
			r()
		}
		rel, err := b.acquire(ctx, "x", 500) // larger than the budget: all of it, once free
		if err == nil {
			rel()
		}
		got <- err
	}()
	r1()
	time.Sleep(10 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("granted while 40 bytes are held: %v", err)
	default:
	}
	r2()
	require.NoError(t, <-got)
	require.EqualValues(t, 0, b.inUse())

	var none *budget
	r, err := none.acquire(ctx, "x", 1<<60)
	require.NoError(t, err)
	r()
	require.Nil(t, newBudget("memory budget", "serve --memory-budget", -1, time.Second))
}

// TestServeParquetWithinABudget serves a Parquet table of many row groups to many clients at
// once under a budget that holds two row groups' decoding: the streams, all started while the
// budget is taken, take turns; the reservations never pass the budget, and every client gets
// every value.
func TestServeParquetWithinABudget(t *testing.T) {
	dir := t.TempDir()
	const rows = 6000
	writeParquet(t, filepath.Join(dir, "table.parquet"), 0, rows, 32<<10)
	s := serve(t, Options{MemoryBudget: 200 << 10, BudgetWait: time.Minute}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	want := ndarray.Must(ndarray.Must(ndarray.Arange(float32(0), float32(rows*8), 1)).Reshape(rows, 8))

	// The budget is held until every client's stream waits for it: they all contend.
	hold, err := s.budget.acquire(context.Background(), "test", s.budget.size)
	require.NoError(t, err)
	const clients = 8
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, s.uri, ClientOptions{})
			got, err := GetDense[float32](context.Background(), c, "table.emb")
			if err == nil && !assert.Equal(t, want.Data(), got.Data()) {
				err = assert.AnError
			}
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return s.budget.waits.Load() >= clients }, time.Minute, time.Millisecond)
	hold()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	b := s.budget
	assert.LessOrEqual(t, b.peak.Load(), b.size)
	assert.Zero(t, b.inUse(), "every reservation was given back")
}

// budgetConstant is what a Server may hold beyond its budgets, as Options.MemoryBudget states.
const budgetConstant = 192 << 20

// The fetch test's served tensor and server: a float32 [fetchRows, fetchCols] column, 64 MiB,
// whose value at (r, c) is r·fetchCols+c (exact in float32: less than 2²⁴), in ZSTD row groups
// of 8 MiB, each counted at 24 MiB of the budget while it is decoded and sent, under a budget
// that holds four such at once. Under the race detector, which slows every byte, all three are
// fetchRaceScale times smaller.
const (
	fetchRows, fetchCols = 16 << 10, 1 << 10
	fetchRowGroupBytes   = 8 << 20
	fetchMemoryBudget    = 96 << 20
	fetchRaceScale       = 16
	fetchDir             = "NDARROW_FETCH_DIR"
)

// fetchScale is what the fetch test's sizes are divided by.
var fetchScale = map[bool]int64{false: 1, true: fetchRaceScale}[childtest.RaceEnabled]

// TestConcurrentFetchesWithinTheBudget serves a ZSTD Parquet-backed tensor of 64 MiB from a
// child process, whose memory is then the server's alone, under a memory budget of 96 MiB, to
// 8 and then 32 clients at once (a fresh child each: the kernel's high-water mark is the
// process's), half by DoGet and half by the data URL, each checking every value as its batches
// arrive: every fetch is whole, the reservations stay within the budget, and the server's
// anonymous memory within MemoryBudget + 192 MiB, its resident memory within that plus the
// pages of the served file (Options.MemoryBudget). Without the budget, the 32 streams decoding
// at once held 700–750 MiB of anonymous memory.
func TestConcurrentFetchesWithinTheBudget(t *testing.T) {
	rows := fetchRows / fetchScale
	dir := t.TempDir()
	x := ndarray.Must(ndarray.Must(ndarray.Arange(float32(0), float32(rows*fetchCols), 1)).Reshape(rows, fetchCols))
	parquettest.WriteTensors(t, filepath.Join(dir, "x.parquet"), parquet.WriterOptions{RowGroupBytes: fetchRowGroupBytes / fetchScale, Compression: parquet.Zstd},
		dataset.Tensor{Name: "emb", Kind: dataset.KindFixedShape, Dense: x})
	for _, clients := range []int{8, 32} {
		t.Run(fmt.Sprintf("clients=%d", clients), func(t *testing.T) {
			uri, done := startServerChild(t, "TestConcurrentFetchesWithinTheBudgetChild", 2<<30, fetchDir+"="+dir)
			defer done()
			require.NotEmpty(t, uri, "the child serves")
			start := time.Now()
			fetchAll(t, uri, "x.emb", clients, x.Data())
			d := time.Since(start)
			t.Logf("%d clients fetched %d MiB each in %v: %.2f GiB/s together", clients, rows*fetchCols*4>>20, d.Round(time.Millisecond),
				float64(int64(clients)*rows*fetchCols*4)/d.Seconds()/(1<<30))
		})
	}
}

// TestConcurrentFetchesWithinTheBudgetChild is the server of TestConcurrentFetchesWithinTheBudget.
func TestConcurrentFetchesWithinTheBudgetChild(t *testing.T) {
	dir := os.Getenv(fetchDir)
	if dir == "" || !childtest.Child(t) {
		t.Skip("the server of TestConcurrentFetchesWithinTheBudget, run only as its child process")
	}
	opts := Options{MemoryBudget: fetchMemoryBudget / fetchScale, BudgetWait: time.Minute}
	debug.SetMemoryLimit(opts.MemoryBudget + DefaultWireBudget(opts.MemoryBudget) + 256<<20) // as serve sets it
	s := serve(t, opts, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(dir, "x.parquet"))
	require.NoError(t, err)
	runtime.GC()
	// What the process maps before serving (its binary's pages, the files' footers) counts
	// neither in the budget nor in the constant: the file's pages are allowed on top of it.
	baseFile, _ := procStatus("RssFile")

	peak := serveChild(s)
	b := s.budget
	t.Logf("child: peak resident %d MiB (anonymous %d MiB, file-backed %d MiB from %d MiB before serving); budget %d MiB reserved at most %d MiB, %d reservations waited; constant %d MiB, file %d MiB",
		peak.HWM>>20, peak.Anon>>20, peak.File>>20, baseFile>>20, b.size>>20, b.peak.Load()>>20, b.waits.Load(), budgetConstant>>20, fi.Size()>>20)
	assert.LessOrEqual(t, b.peak.Load(), b.size)
	require.Eventually(t, func() bool { return b.inUse() == 0 }, 10*time.Second, time.Millisecond, "every reservation is given back")
	if childtest.RaceEnabled { // whose shadow memory grows with what the program touched
		return
	}
	assert.LessOrEqual(t, peak.Anon, b.size+budgetConstant, "anonymous memory: within the budget and the constant")
	assert.LessOrEqual(t, peak.HWM, b.size+budgetConstant+baseFile+fi.Size(),
		"resident memory: within the budget, the constant and the served file's pages")
}

// fetchAll fetches name, a float32 tensor whose values are want, from the server at uri with
// clients clients at once — even ones by DoGet, odd ones by the data URL, each on its own
// connection — checking every value as its batches arrive, none kept.
func fetchAll(t *testing.T, uri, name string, clients int, want []float32) {
	c := dial(t, uri, ClientOptions{})
	dataURL := dataURLOf(t, c, name)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rd interface {
				Next() bool
				Record() arrow.Record
				Err() error
				Release()
			}
			if i%2 == 0 {
				conn, err := arrowflight.NewClientWithMiddleware(uri[len("grpc://"):], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
				if !assert.NoError(t, err) {
					return
				}
				defer conn.Close()
				stream, err := conn.DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte(name)})
				if !assert.NoError(t, err) {
					return
				}
				fr, err := arrowflight.NewRecordReader(stream)
				if !assert.NoError(t, err, "client %d", i) {
					return
				}
				rd = fr
			} else {
				hc := &http.Client{Transport: &http.Transport{}} // a connection of its own
				defer hc.CloseIdleConnections()
				resp, err := hc.Get(dataURL)
				if !assert.NoError(t, err) {
					return
				}
				defer resp.Body.Close()
				if !assert.Equal(t, http.StatusOK, resp.StatusCode, "client %d", i) {
					return
				}
				ir, err := arrowipc.NewReader(resp.Body)
				if !assert.NoError(t, err, "client %d", i) {
					return
				}
				rd = ir
			}
			defer rd.Release()
			n := 0 // the values received
			for rd.Next() {
				col := rd.Record().Column(0).(array.ExtensionArray).Storage().(*array.FixedSizeList)
				got := col.ListValues().(*array.Float32).Float32Values()
				if len(got) > len(want)-n || !bytes.Equal(arrow.Float32Traits.CastToBytes(got), arrow.Float32Traits.CastToBytes(want[n:n+len(got)])) {
					t.Errorf("client %d: the %d values from %d are not those written", i, len(got), n)
					return
				}
				n += len(got)
			}
			assert.NoError(t, rd.Err(), "client %d", i)
			assert.Equal(t, len(want), n, "client %d: every value", i)
		}()
	}
	wg.Wait()
}

// TestBudgetUseBeyondTheBudget: what a budget holds is visible (BudgetUse): the bytes used,
// the peak, the requests waiting; a chunk larger than the whole budget takes all of it and
// counts the rest as Beyond, saying so in the log, and a chunk's copies acquired after it
// (acquireMore) take only what its first part left of the budget — never waiting for room it
// holds itself.
func TestBudgetUseBeyondTheBudget(t *testing.T) {
	ctx := context.Background()
	logs := &syncBuffer{}
	b := newBudget("memory budget", "serve --memory-budget", 100, 20*time.Millisecond)
	b.log = slog.New(slog.NewTextHandler(logs, nil))
	for _, tc := range []struct {
		name             string
		held, more       int64 // acquired first, then acquireMore
		used, beyond     int64 // BudgetUse while both are held
		warns            bool
		beforeUsedBeyond [2]int64 // after the first acquire alone
	}{
		{"within", 30, 50, 80, 0, false, [2]int64{30, 0}},
		{"the copies beyond", 60, 100, 100, 60, true, [2]int64{60, 0}},
		{"the chunk beyond", 150, 50, 100, 100, true, [2]int64{100, 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.String())
			first, err := b.acquire(ctx, "t.parquet", tc.held)
			require.NoError(t, err)
			u := b.use()
			assert.Equal(t, tc.beforeUsedBeyond, [2]int64{u.Used, u.Beyond})
			more, err := b.acquireMore(ctx, "t.parquet", tc.held, tc.more)
			require.NoError(t, err, "it waits for no room it holds")
			u = b.use()
			assert.Equal(t, BudgetUse{Size: 100, Used: tc.used, Peak: max(u.Peak, tc.used), Beyond: tc.beyond, Waits: u.Waits}, u)
			assert.GreaterOrEqual(t, u.Peak, tc.used)
			logged := logs.String()[before:]
			if tc.warns {
				assert.Contains(t, logged, `level=WARN msg="flight: a chunk larger than the whole budget is decoded alone, beyond it" flight=t.parquet`)
				assert.Contains(t, logged, "budget=\"memory budget\" size=100")
			} else {
				assert.Empty(t, logged)
			}
			more()
			first()
			assert.Equal(t, BudgetUse{Size: 100, Peak: u.Peak, Waits: u.Waits}, b.use(), "all given back")
		})
	}
	t.Run("waiting", func(t *testing.T) {
		all, err := b.acquire(ctx, "x", 100)
		require.NoError(t, err)
		waited := make(chan error, 1)
		go func() {
			r, err := b.acquire(ctx, "y", 1)
			if err == nil {
				r()
			}
			waited <- err
		}()
		require.Eventually(t, func() bool { return b.use().Waiting == 1 }, 5*time.Second, time.Millisecond)
		require.Error(t, <-waited, "the budget's wait ends")
		all()
		assert.Zero(t, b.use().Waiting)
	})
	var none *budget
	assert.Equal(t, BudgetUse{}, none.use(), "no bound")
	s := serve(t, Options{MemoryBudget: 1 << 30, WireBudget: 1 << 30}, "grpc")
	memory, wire := s.BudgetUse()
	assert.EqualValues(t, 1<<30, memory.Size)
	assert.EqualValues(t, 1<<30, wire.Size)
	unbounded := serve(t, Options{MemoryBudget: -1}, "grpc")
	memory, wire = unbounded.BudgetUse()
	assert.Equal(t, BudgetUse{}, memory)
	assert.Equal(t, BudgetUse{}, wire)
}

// TestRowGroupsLargerThanTheBudget: a Parquet column, and tables — of strings, of a
// dictionary column whose strings written out copy more than its decoding's estimate (which
// used to wait BudgetWait for room it held itself, and fail) — whose one row group takes more
// than the whole memory budget are served whole, by DoGet and by the data URL: each row group
// decoded alone, holding all of the budget (its peak) and the rest beyond it, as the log
// says; the budget holds nothing after.
func TestRowGroupsLargerThanTheBudget(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "col.parquet"), 0, 2000, 1<<20)
	writeUserParquet(t, filepath.Join(dir, "t.parquet"), 1000, 1000)
	names := make([]string, 2000) // which copy far more than their compressed column chunk
	for i := range names {
		names[i] = strings.Repeat("abcd", 64) + strconv.Itoa(i%7)
	}
	labels := ndarray.Must(ndarray.Arange(int64(0), 2000, 1))
	parquettest.WriteTensors(t, filepath.Join(dir, "s.parquet"), parquet.WriterOptions{RowGroupBytes: 1 << 20, Compression: parquet.Zstd},
		dataset.Tensor{Name: "label", Dense: labels}, dataset.Tensor{Name: "name", Dense: ndarray.Must(ndarray.FromSlice(names, 2000))})
	writeDictParquet(t, filepath.Join(dir, "d.parquet"), 4000)
	logs := &syncBuffer{}
	s := serve(t, Options{MemoryBudget: 16 << 10, BudgetWait: time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil))}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	want := ndarray.Must(ndarray.Must(ndarray.Arange(float32(0), float32(2000*8), 1)).Reshape(2000, 8))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts ClientOptions
	}{{"DoGet", ClientOptions{GRPCOnly: true}}, {"data URL", ClientOptions{}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s.uri, tc.opts)
			got, err := GetDense[float32](ctx, c, "col.emb")
			require.NoError(t, err)
			assert.Equal(t, want.Data(), got.Data())
			table, err := c.GetTable(ctx, "t")
			require.NoError(t, err)
			requireTable(t, filepath.Join(dir, "t.parquet"), "t", table)
			dict, err := c.GetTable(ctx, "d")
			require.NoError(t, err, "the strings its dictionary writes out copy beyond all of the budget, which it holds")
			require.Len(t, dict, 2)
			assert.EqualValues(t, 4000, dict[0].Rows())
			assert.EqualValues(t, 4000, dict[1].Rows())
			strs, err := c.GetTable(ctx, "s")
			require.NoError(t, err)
			require.Len(t, strs, 2)
			assert.Equal(t, labels.Data(), strs[0].Dense.(*ndarray.Dense[int64]).Data())
			assert.Equal(t, names, strs[1].Dense.(*ndarray.Dense[string]).Data())
		})
	}
	memory, _ := s.BudgetUse()
	assert.Equal(t, int64(16<<10), memory.Peak, "all of the budget, never more")
	assert.Zero(t, memory.Used)
	assert.Zero(t, memory.Beyond)
	assert.Contains(t, logs.String(), `msg="flight: a chunk larger than the whole budget is decoded alone, beyond it" flight=col.emb`)
}

// writeDictParquet writes a Parquet file at path of rows rows, one row group: a label and a
// dictionary-encoded column of three long strings.
func writeDictParquet(t *testing.T, path string, rows int) {
	t.Helper()
	catType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64}, {Name: "cat", Type: catType}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	dict := b.Field(1).(*array.BinaryDictionaryBuilder)
	for r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		require.NoError(t, dict.AppendString(strings.Repeat([]string{"red", "green", "blue"}[r%3], 300)))
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, pqparquet.NewWriterProperties(pqparquet.WithMaxRowGroupLength(int64(rows))),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}
