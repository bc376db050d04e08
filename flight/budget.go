package flight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/internal/sysmem"
	"github.com/ndarrow/ndarrow/limits"
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

// DefaultBudgetWait is how long a request waits for its share of a budget when
// Options.BudgetWait is 0.
const DefaultBudgetWait = time.Minute

// budget is memory that requests reserve before they allocate it. A reservation is granted
// while what is reserved stays within size; one that does not fit waits, in the order they
// came, up to wait (or until its context ends), then fails with an error wrapping
// limits.ErrExceeded that names the budget and the option that sets it. A nil *budget bounds
// nothing.
//
// A Server has two: its memory budget (Options.MemoryBudget), for the data of requests —
// what DoGets and data URLs hold decoding, what uploads hold while they arrive, staged and
// stored until deleted — and its wire budget (Options.WireBudget), for what arrives on the
// wire before a handler takes it — each connection's buffers, each stream's flow-control
// window, each message while it is received — so that a full memory budget (uploads stored
// up to it) still leaves room to list, delete and fetch.
type budget struct {
	name     string // "memory budget"
	option   string // "serve --memory-budget"
	size     int64
	headroom int64 // what reservations that wait leave to tryReserve's (the wire budget's calls)
	wait     time.Duration

	mu      sync.Mutex
	used    int64
	queue   []*budgetWaiter // in the order they came
	holding []uint64        // the reservations that hold bytes, by the order they began to
	seq     uint64

	peak, waits atomic.Int64 // the most ever reserved; the reservations that waited
	beyond      atomic.Int64 // held now beyond size by chunks larger than it (acquire)
	log         *slog.Logger // says when a chunk is decoded beyond the budget; nil: nothing
}

// BudgetUse is what one of a Server's budgets holds now (see Server.BudgetUse).
type BudgetUse struct {
	// Size is the budget's bytes; 0 for no bound (the other fields are then 0 too).
	Size int64 `json:"size"`
	// Used is the bytes reserved now, at most Size; Peak the most reserved at once since the
	// server started.
	Used int64 `json:"used"`
	Peak int64 `json:"peak"`
	// Beyond is the bytes held now beyond Size: the decoding of a chunk (a Parquet row group)
	// larger than the whole memory budget, which a DoGet or data URL decodes alone, holding
	// all of the budget and this much more (the log says each time). Always 0 for the wire
	// budget.
	Beyond int64 `json:"beyond"`
	// Waiting is the requests waiting for room now; Waits those that ever waited.
	Waiting int   `json:"waiting"`
	Waits   int64 `json:"waits"`
}

// BudgetUse returns what the server's memory budget (Options.MemoryBudget) and wire budget
// (Options.WireBudget) hold now: a snapshot, for a log or a status action.
func (s *Server) BudgetUse() (memory, wire BudgetUse) {
	return s.budget.use(), s.wire.use()
}

// use returns what b holds now.
func (b *budget) use() BudgetUse {
	if b == nil {
		return BudgetUse{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetUse{Size: b.size, Used: b.used, Peak: b.peak.Load(), Beyond: b.beyond.Load(), Waiting: len(b.queue), Waits: b.waits.Load()}
}

// budgetWaiter is a reservation waiting for its bytes: ready is closed once they are granted.
type budgetWaiter struct {
	n       int64
	request bool // a request arriving (reserveRequest): ahead of the others, headroom included
	ready   chan struct{}
	granted bool
}

// fits reports whether w's bytes fit now; the caller holds mu.
func (b *budget) fits(n int64, request bool) bool {
	limit := b.size - b.headroom
	if request {
		limit = b.size
	}
	return b.used+n <= limit
}

// newBudget returns a budget of size bytes (nil for size ≤ 0: no bound).
func newBudget(name, option string, size int64, wait time.Duration) *budget {
	if size <= 0 {
		return nil
	}
	return &budget{name: name, option: option, size: size, wait: wait}
}

// inUse returns the bytes reserved now.
func (b *budget) inUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// grant adds n to what is reserved; the caller holds mu.
func (b *budget) grant(n int64) {
	b.used += n
	for p := b.peak.Load(); b.used > p && !b.peak.CompareAndSwap(p, b.used); p = b.peak.Load() {
	}
}

// tryReserve reserves n bytes if they fit now, ahead of any reservation waiting and within the
// headroom those leave: what a call takes when it starts, on a goroutine that must not wait.
func (b *budget) tryReserve(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.size {
		return false
	}
	b.grant(n)
	return true
}

// reserve reserves n bytes for what (a tensor, a call), waiting for them as the budget says,
// within all of it but its headroom. n larger than that fails at once.
func (b *budget) reserve(ctx context.Context, what string, n int64) error {
	return b.reserveAs(ctx, what, n, false)
}

// reserveRequest reserves n bytes for a request while it arrives (a call's first and only
// message, held for as long as it takes to arrive): ahead of the reservations that wait for
// data, and within the whole budget, headroom included, so that a listing or a delete is not
// held behind uploads.
func (b *budget) reserveRequest(ctx context.Context, what string, n int64) error {
	return b.reserveAs(ctx, what, n, true)
}

func (b *budget) reserveAs(ctx context.Context, what string, n int64, request bool) error {
	if b == nil || n <= 0 {
		return nil
	}
	if n > b.size-b.headroom {
		return fmt.Errorf("flight: %s: %d bytes, more than the server's whole %s of %d bytes (%s): %w",
			what, n, b.name, b.size, b.option, limits.ErrExceeded)
	}
	b.mu.Lock()
	ahead := 0 // the waiters it queues behind
	for ahead < len(b.queue) && (!request || b.queue[ahead].request) {
		ahead++
	}
	if ahead == 0 && b.fits(n, request) {
		b.grant(n)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, request: request, ready: make(chan struct{})}
	b.queue = slices.Insert(b.queue, ahead, w)
	b.mu.Unlock()
	b.waits.Add(1)

	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = fmt.Errorf("flight: %s: waiting for %d bytes of the server's %s: %w", what, n, b.name, context.Cause(ctx))
	case <-timer.C:
		err = fmt.Errorf("flight: %s: waited %v for %d bytes of the server's %s of %d bytes (%s), which other requests hold; retry later: %w",
			what, b.wait, n, b.name, b.size, b.option, limits.ErrExceeded)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted { // granted as it gave up: given back
		b.used -= n
		b.grantWaiting()
		return err
	}
	if i := slices.Index(b.queue, w); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	b.grantWaiting() // the ones behind it may fit now
	return err
}

// release gives back n bytes reserved before.
func (b *budget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.used < 0 {
		panic(fmt.Sprintf("flight: %s: %d bytes released more than reserved", b.name, -b.used))
	}
	b.grantWaiting()
}

// grantWaiting grants the waiting reservations that fit, in order; the caller holds mu.
func (b *budget) grantWaiting() {
	for len(b.queue) > 0 && b.fits(b.queue[0].n, b.queue[0].request) {
		w := b.queue[0]
		b.queue = b.queue[1:]
		b.grant(w.n)
		w.granted = true
		close(w.ready)
	}
}

// acquire reserves the bytes of one chunk a stream decodes and returns what gives them back;
// its error is a gRPC status. A chunk larger than the whole budget is not refused — a file's
// row group may be larger than a server's budget, and there is no smaller piece to decode —
// but decoded alone: it waits until it can reserve all of the budget, then holds that and
// what it needs beyond, which BudgetUse counts (Beyond) and the log says.
func (b *budget) acquire(ctx context.Context, name string, n int64) (release func(), err error) {
	return b.acquireMore(ctx, name, 0, n)
}

// acquireMore is acquire of n bytes more for a chunk that acquired held bytes before.
func (b *budget) acquireMore(ctx context.Context, name string, held, n int64) (release func(), err error) {
	if b == nil || n <= 0 {
		return func() {}, nil
	}
	held = max(held, 0)
	take := max(min(held+n, b.size)-min(held, b.size), 0) // what n takes of the budget
	beyond := n - take
	if take > 0 {
		if err := b.reserve(ctx, name, take); err != nil {
			return nil, budgetStatus(ctx, err)
		}
	}
	if beyond > 0 {
		b.beyond.Add(beyond)
		if b.log != nil {
			b.log.Warn("flight: a chunk larger than the whole budget is decoded alone, beyond it",
				"flight", name, "bytes", held+n, "budget", b.name, "size", b.size, "beyond", held+n-b.size, "option", b.option)
		}
	}
	return func() {
		b.release(take)
		b.beyond.Add(-beyond)
	}, nil
}

// budgetStatus returns the gRPC status of a reservation's failure.
func budgetStatus(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, limits.ErrExceeded) {
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Error(codes.ResourceExhausted, err.Error())
}

// hold registers a reservation that begins to hold bytes and returns its place; the caller
// holds no lock.
func (b *budget) hold() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	b.holding = append(b.holding, b.seq)
	return b.seq
}

// unhold removes the reservation of place seq, which holds nothing any more.
func (b *budget) unhold(seq uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i, ok := slices.BinarySearch(b.holding, seq); ok {
		b.holding = slices.Delete(b.holding, i, i+1)
	}
}

// eldest reports whether the reservation of place seq began to hold bytes before every other
// that holds some now.
func (b *budget) eldest(seq uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.holding) > 0 && b.holding[0] == seq
}

// reservation is what one request holds of a budget, reserved piece by piece and given back
// piece by piece or whole (Close): a dataset.Reserver. While it holds nothing, a reservation
// waits its turn as the budget says. Once it holds something, only the eldest of the
// reservations holding bytes waits for more; any other fails at once when what it asks for
// does not fit, and gives way: uploads each holding part of the budget and waiting for the
// others' parts would wait for nothing, and this way the eldest goes on. Safe for concurrent
// use.
type reservation struct {
	b    *budget
	ctx  context.Context // a wait ends with it
	what string

	mu   sync.Mutex
	held int64
	seq  uint64 // its place among the reservations holding bytes (budget.hold), while it holds
}

// newReservation returns an empty reservation of b for what.
func (b *budget) newReservation(ctx context.Context, what string) *reservation {
	return &reservation{b: b, ctx: ctx, what: what}
}

// Reserve reserves n bytes more: waiting as the budget says while the reservation holds
// nothing or is the eldest holding bytes, failing at once when they do not fit otherwise.
func (r *reservation) Reserve(n int64) error {
	if n <= 0 || r.b == nil {
		return nil
	}
	r.mu.Lock()
	held, seq := r.held, r.seq
	r.mu.Unlock()
	switch {
	case held == 0: // waits its turn
		if err := r.b.reserve(r.ctx, r.what, n); err != nil {
			return err
		}
	case r.b.tryReserve(n): // fits now
	case r.b.eldest(seq): // waits, the others giving way
		if err := r.b.reserve(r.ctx, r.what, n); err != nil {
			return err
		}
	default:
		return fmt.Errorf("flight: %s: %d bytes more than the server's %s of %d bytes (%s) has free, beside the %d bytes it holds; delete tensors to make room, or retry later: %w",
			r.what, n, r.b.name, r.b.size, r.b.option, held, limits.ErrExceeded)
	}
	r.mu.Lock()
	if r.held == 0 {
		r.seq = r.b.hold()
	}
	r.held += n
	r.mu.Unlock()
	return nil
}

// Release gives back n bytes of what the reservation holds (all of it when it holds less).
func (r *reservation) Release(n int64) {
	if r.b == nil {
		return
	}
	r.mu.Lock()
	n = min(max(n, 0), r.held)
	r.held -= n
	if r.held == 0 && r.seq != 0 {
		r.b.unhold(r.seq)
		r.seq = 0
	}
	r.mu.Unlock()
	r.b.release(n)
}

// Held returns the bytes the reservation holds.
func (r *reservation) Held() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Close gives back everything the reservation holds.
func (r *reservation) Close() { r.Release(r.Held()) }
