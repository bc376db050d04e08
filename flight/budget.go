package flight

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/internal/sysmem"
)

// DefaultMemoryBudget returns the memory budget a Server takes when Options.MemoryBudget is 0:
// a quarter of the memory the machine (or the container) gives the process, at least 256 MiB;
// 1 GiB where that is not known.
func DefaultMemoryBudget() int64 {
	total, ok := sysmem.Total()
	if !ok {
		return 1 << 30
	}
	return max(total/4, 256<<20)
}

// DefaultBudgetWait is how long a DoGet waits for its share of the memory budget when
// Options.BudgetWait is 0.
const DefaultBudgetWait = time.Minute

// memoryBudget bounds the memory the DoGets of a Server hold decoding at once (Parquet row
// groups, decoded into memory as a stream reaches them): each chunk's estimate
// (dataset.Source.DecodeBytes) is reserved before it is decoded and given back once it is
// sent. A DoGet whose chunk does not fit waits, in the order they came, up to wait, then fails
// with ResourceExhausted; a chunk larger than the whole budget waits for all of it.
type memoryBudget struct {
	size int64
	wait time.Duration
	sem  *semaphore.Weighted

	inUse, peak, waits atomic.Int64 // what is reserved, the most ever, the reservations that waited
}

func newMemoryBudget(size int64, wait time.Duration) *memoryBudget {
	if size <= 0 {
		return nil
	}
	return &memoryBudget{size: size, wait: wait, sem: semaphore.NewWeighted(size)}
}

// acquire reserves n bytes for the stream of name and returns what gives them back. A nil
// budget (none) and n ≤ 0 reserve nothing.
func (b *memoryBudget) acquire(ctx context.Context, name string, n int64) (release func(), err error) {
	if b == nil || n <= 0 {
		return func() {}, nil
	}
	n = min(n, b.size)
	if !b.sem.TryAcquire(n) {
		b.waits.Add(1)
		if err := b.waitFor(ctx, name, n); err != nil {
			return nil, err
		}
	}
	for in := b.inUse.Add(n); ; {
		if p := b.peak.Load(); in <= p || b.peak.CompareAndSwap(p, in) {
			break
		}
	}
	return func() { b.inUse.Add(-n); b.sem.Release(n) }, nil
}

// waitFor waits up to b.wait for n bytes.
func (b *memoryBudget) waitFor(ctx context.Context, name string, n int64) error {
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return status.Errorf(codes.ResourceExhausted,
				"flight: %s: waited %v for %d bytes of the server's memory budget of %d bytes (serve --memory-budget), which other transfers hold; retry later",
				name, b.wait, n, b.size)
		}
		return status.FromContextError(err).Err()
	}
	return nil
}
