package objstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// stallGuard cancels a request's context when StallTimeout passes without progress: no
// answer to the request, or no byte of its body.
type stallGuard struct {
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

// watch returns a context for one request that is cancelled after StallTimeout without
// progress, and its guard; stop it when the request is done.
func watch(ctx context.Context) (context.Context, *stallGuard) {
	ctx, cancel := context.WithCancelCause(ctx)
	g := &stallGuard{cancel: cancel}
	g.timer = time.AfterFunc(StallTimeout, func() {
		cancel(fmt.Errorf("no byte for %v: %w", StallTimeout, ErrStalled))
	})
	return ctx, g
}

// progress restarts the clock.
func (g *stallGuard) progress() { g.timer.Reset(StallTimeout) }

// stop ends the watch and releases the context.
func (g *stallGuard) stop() {
	g.timer.Stop()
	g.cancel(nil)
}

// readFull fills p from r, the body of a request g watches, counting each read as progress;
// it returns the context's cause when the guard or the caller ended the request.
func (g *stallGuard) readFull(ctx context.Context, r io.Reader, p []byte) error {
	for len(p) > 0 {
		n, err := r.Read(p)
		p = p[n:]
		if n > 0 {
			g.progress()
		}
		if err != nil {
			if len(p) == 0 {
				return nil
			}
			if cause := context.Cause(ctx); cause != nil {
				return cause
			}
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// maxAnswer bounds the body of a store's answer to anything but a ranged read (a listing
// page, an error, an upload's receipt): a store that sends more is an error, not memory.
const maxAnswer = 16 << 20

// errAnswerTooLong is the error of an answer longer than maxAnswer.
var errAnswerTooLong = fmt.Errorf("the store's answer is longer than %d bytes", maxAnswer)

// boundedTransport limits the body of every answer to a request without a Range header to
// maxAnswer bytes; a ranged read's body is read only as far as the range.
type boundedTransport struct{ base http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return bounded(req, t.base.RoundTrip)
}

// boundedDoer does to an SDK's HTTP client what boundedTransport does to a transport.
type boundedDoer struct {
	base interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (d boundedDoer) Do(req *http.Request) (*http.Response, error) { return bounded(req, d.base.Do) }

// bounded sends req with send and bounds the answer's body unless req asks for a range.
func bounded(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := send(req)
	if err != nil || req.Header.Get("Range") != "" {
		return resp, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxAnswer}
	return resp, nil
}

// boundedBody fails a read past its limit.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n > 0 {
			return 0, errAnswerTooLong
		}
		return b.ReadCloser.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// boundedClient is the HTTP client of the stores' API calls.
var boundedClient = &http.Client{Transport: boundedTransport{http.DefaultTransport}}
