package objstore

import (
	"context"
	"fmt"
	"io"
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
