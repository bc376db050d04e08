package flight

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
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
