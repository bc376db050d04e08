package flight

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/internal/parquettest"
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
