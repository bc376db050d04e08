package objstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stallBytes is the least a request must move in each window of StallTimeout: bytes of its
// answer's body (or of its own body, sent), unless it ends within the window.
const stallBytes = 1 << 20

// stallGuard cancels a request's context when it stops making progress (the stall rule): no
// answer within StallTimeout of the request, or, once the answer began, a window of
// StallTimeout that moved fewer than stallBytes bytes. A store that sends a byte at a time
// cannot defeat it; what the store sends is counted where the body is read (bounded), so
// every reader of the answer — an SDK's decoders included — is watched.
type stallGuard struct {
	cancel   context.CancelCauseFunc
	window   time.Duration
	moved    atomic.Int64 // in the current window
	mu       sync.Mutex
	timer    *time.Timer
	start    time.Time // of the current window
	answered bool
	done     bool
}

// guardKey is the context key of a request's stallGuard, for bounded to find it.
type guardKey struct{}

// watch returns a context for one request, cancelled with an error wrapping ErrStalled when
// the request breaks the stall rule, and its guard; stop it when the request is done.
func watch(ctx context.Context) (context.Context, *stallGuard) {
	ctx, cancel := context.WithCancelCause(ctx)
	g := &stallGuard{cancel: cancel, window: StallTimeout, start: time.Now()}
	g.timer = time.AfterFunc(g.window, g.tick)
	return context.WithValue(ctx, guardKey{}, g), g
}

// guardOf returns the guard of a request's context, or nil.
func guardOf(ctx context.Context) *stallGuard {
	g, _ := ctx.Value(guardKey{}).(*stallGuard)
	return g
}

// tick ends a window: the request stalled unless the window moved stallBytes.
func (g *stallGuard) tick() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	if wait := g.window - time.Since(g.start); wait > 0 { // the window was restarted
		g.timer.Reset(wait)
		return
	}
	if n := g.moved.Swap(0); n >= stallBytes {
		g.start = time.Now()
		g.timer.Reset(g.window)
		return
	}
	g.done = true
	if !g.answered {
		g.cancel(fmt.Errorf("no answer in %v: %w", g.window, ErrStalled))
		return
	}
	g.cancel(fmt.Errorf("fewer than %d bytes in %v: %w", stallBytes, g.window, ErrStalled))
}

// began starts a new window when the store's answer (its status and headers) arrives.
func (g *stallGuard) began() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answered = true
	g.moved.Store(0)
	g.start = time.Now()
}

// progress counts n bytes moved.
func (g *stallGuard) progress(n int) { g.moved.Add(int64(n)) }

// stop ends the watch and releases the context.
func (g *stallGuard) stop() {
	g.mu.Lock()
	g.done = true
	g.timer.Stop()
	g.mu.Unlock()
	g.cancel(nil)
}

// readFull fills p from r, the body of a request watched under ctx, and then reads r's end:
// an answer that goes on past p is an error wrapping ErrBadAnswer. It returns the context's
// cause when the guard or the caller ended the request.
func readFull(ctx context.Context, r io.Reader, p []byte) error {
	for len(p) > 0 {
		n, err := r.Read(p)
		p = p[n:]
		if err != nil {
			if len(p) == 0 && err == io.EOF {
				return nil
			}
			return bodyError(ctx, err)
		}
	}
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		if n > 0 {
			return fmt.Errorf("the store sent more bytes than asked for: %w", ErrBadAnswer)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return bodyError(ctx, err)
		}
	}
}

// bodyError returns the error of a read of a body that failed with err.
func bodyError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Bounds on a store's answers, whoever reads them (an SDK's decoders included): an answer past
// its bound is an error wrapping ErrBadAnswer, not memory.
const (
	// maxAnswer bounds the body of a successful answer to a request for no range: a listing
	// page, an object's description, an upload's receipt.
	maxAnswer = 16 << 20
	// maxErrorAnswer bounds the body of an answer of status 300 or more: an error's XML or
	// JSON, a redirect.
	maxErrorAnswer = 64 << 10
)

// answerTooLong is the error of an answer whose body went past its bound.
type answerTooLong struct {
	status int
	limit  int64
	ranged bool // a successful answer to a ranged read
}

func (e *answerTooLong) Error() string {
	switch {
	case e.ranged:
		return fmt.Sprintf("the store sent more than the %d bytes asked for", e.limit)
	case e.status >= 300:
		return fmt.Sprintf("the store's answer (%d %s) is longer than %d bytes", e.status, http.StatusText(e.status), e.limit)
	}
	return fmt.Sprintf("the store's answer is longer than %d bytes", e.limit)
}

// Unwrap returns ErrBadAnswer.
func (e *answerTooLong) Unwrap() error { return ErrBadAnswer }

// boundedTransport bounds the body of every answer (see bounded) and counts it as its
// request's progress.
type boundedTransport struct{ base http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return bounded(req, t.base.RoundTrip)
}

// boundedDoer does to an SDK's HTTP client what boundedTransport does to a transport: every
// body the SDK reads, its error decoders' included, is bounded before the SDK sees it.
type boundedDoer struct {
	base interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (d boundedDoer) Do(req *http.Request) (*http.Response, error) { return bounded(req, d.base.Do) }

// bounded sends req with send and bounds the answer's body: an answer of status 300 or more
// to maxErrorAnswer bytes, a successful answer to a request for a range ("Range: bytes=A-B")
// to the B-A+1 bytes of the range, any other to maxAnswer. The request's stallGuard, if any,
// is told of the answer and counts the bytes read of the body, and of req's body sent.
func bounded(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	g := guardOf(req.Context())
	if g != nil && req.Body != nil && req.Body != http.NoBody && req.ContentLength > 0 {
		r := *req // a RoundTripper does not change its request
		r.Body = &countedBody{ReadCloser: req.Body, g: g}
		req = &r
	}
	resp, err := send(req)
	if err != nil {
		return resp, err
	}
	if g != nil {
		g.began()
	}
	b := &boundedBody{ReadCloser: resp.Body, g: g, tooLong: &answerTooLong{status: resp.StatusCode, limit: maxAnswer}}
	switch first, last, ok := rangeAsked(req.Header.Get("Range")); {
	case resp.StatusCode >= 300:
		b.tooLong.limit = maxErrorAnswer
	case ok:
		b.tooLong.limit, b.tooLong.ranged = last-first+1, true
	}
	b.left = b.tooLong.limit
	resp.Body = b
	return resp, nil
}

// rangeAsked returns the range of a request's Range header of one range, "bytes=A-B".
func rangeAsked(h string) (first, last int64, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	if !found || !strings.HasPrefix(h, "bytes=") {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return 0, 0, false
	}
	return first, last, true
}

// boundedBody fails a read past its limit, and counts what is read as progress.
type boundedBody struct {
	io.ReadCloser
	left    int64
	g       *stallGuard // nil: not watched
	tooLong *answerTooLong
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, b.tooLong
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.g != nil {
		b.g.progress(n)
	}
	return n, err
}

// countedBody counts the bytes of a request's body sent as its progress.
type countedBody struct {
	io.ReadCloser
	g *stallGuard
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.g.progress(n)
	return n, err
}

// boundedClient is the HTTP client of the stores' API calls.
var boundedClient = &http.Client{Transport: boundedTransport{http.DefaultTransport}}
