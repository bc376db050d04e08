package flight

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	flightgen "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// A Server shuts down in two steps (Shutdown):
//
//   - draining: it refuses new Flight calls and data URL GETs with codes.Unavailable
//     (errShuttingDown), keeping its listener open so that the other services registered on
//     its gRPC server — its health service (health.go), which says NOT_SERVING from then on
//     (Draining, DrainStarted) — still answer; the calls and data streams under way go on,
//     until they end or the grace period (the context given to Shutdown) does;
//   - stopping: each call or data stream still under way is cut with codes.Unavailable
//     saying the grace period it was given, and logged with what it had sent; then the
//     connections are closed and Serve returns.

// cutWait is how long the streams Shutdown cuts have, together, to end with their status and
// for it to reach their clients (a handler blocked sending to a client that takes nothing
// never does) before the connections are closed; stopWait how long the calls of other
// services (a health watch, which never ends by itself) have once the Flight calls are done.
// A Server stops within a second of its grace period.
const (
	cutWait  = 600 * time.Millisecond
	stopWait = 250 * time.Millisecond
)

// ErrShuttingDown is returned by a Client whose call a server refused or cut because it is
// shutting down: retry against another server, or later.
var ErrShuttingDown = errors.New("flight: server shutting down")

// errShuttingDown is the status of a Flight call or data URL GET that arrives while the
// server drains.
var errShuttingDown = status.Error(codes.Unavailable, ErrShuttingDown.Error()+": it takes no new calls; retry against another server or later")

// cutStatus is the status of a call or data stream cut after a grace period of grace.
func cutStatus(grace time.Duration) error {
	return status.Errorf(codes.Unavailable, "%v: the stream was cut after the grace period of %v; retry against another server or later", ErrShuttingDown, grace)
}

// flightService is the prefix of the full names of the Flight service's methods: the calls
// a draining server refuses, and waits for.
var flightService = "/" + flightgen.FlightService_ServiceDesc.ServiceName + "/"

// stream is a Flight call or data URL stream under way, which Shutdown may cut.
type stream interface {
	// stop cuts the stream with cause, a gRPC status, at its next message: the status then
	// follows what it sent.
	stop(cause error)
	// halt cuts what stop did not: a handler waiting for something else than its client.
	halt(cause error)
	// describe says what the stream is, for the log: method, flight, client, bytes sent.
	describe() (method, flight, client string, sent int64)
}

// activeStreams are a Server's streams under way: the Flight calls (of every method) and the
// data URL GETs, which a draining server waits for and refuses more of.
type activeStreams struct {
	mu       sync.Mutex
	draining bool
	started  chan struct{} // closed when draining starts
	streams  map[stream]struct{}
	changed  chan struct{} // closed, and replaced, when a stream ends
}

// init makes the channels; the caller holds mu.
func (a *activeStreams) init() {
	if a.started == nil {
		a.started = make(chan struct{})
		a.changed = make(chan struct{})
		a.streams = map[stream]struct{}{}
	}
}

// add adds st, unless the server drains (then it returns false).
func (a *activeStreams) add(st stream) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	if a.draining {
		return false
	}
	a.streams[st] = struct{}{}
	return true
}

// remove removes st, which ended.
func (a *activeStreams) remove(st stream) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	if _, ok := a.streams[st]; !ok {
		return
	}
	delete(a.streams, st)
	close(a.changed)
	a.changed = make(chan struct{})
}

// drain starts draining and returns how many streams are under way.
func (a *activeStreams) drain() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	if !a.draining {
		a.draining = true
		close(a.started)
	}
	return len(a.streams)
}

// wait waits until no stream is under way (true) or ctx ends (false).
func (a *activeStreams) wait(ctx context.Context) bool {
	for {
		a.mu.Lock()
		a.init()
		n, changed := len(a.streams), a.changed
		a.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// list returns the streams under way.
func (a *activeStreams) list() []stream {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]stream, 0, len(a.streams))
	for st := range a.streams {
		out = append(out, st)
	}
	return out
}

// Draining reports whether the server is draining or stopped: Shutdown was called, new
// Flight calls and data URL GETs are refused (codes.Unavailable), and the calls under way
// finish, or are cut at the end of the grace period: what a health service reports as
// NOT_SERVING.
func (s *Server) Draining() bool {
	s.active.mu.Lock()
	defer s.active.mu.Unlock()
	return s.active.draining
}

// DrainStarted returns a channel that is closed when the server starts draining (Shutdown):
// what a health service watches to say NOT_SERVING.
func (s *Server) DrainStarted() <-chan struct{} {
	s.active.mu.Lock()
	defer s.active.mu.Unlock()
	s.active.init()
	return s.active.started
}

// Shutdown stops the server. It first drains: new Flight calls and data URL GETs are refused
// with codes.Unavailable ("flight: server shutting down: it takes no new calls; retry against
// another server or later"), while the listener stays open for the other services of the
// gRPC server (its health service: NOT_SERVING), and the calls and data streams under way go
// on until they end or ctx does — ctx's deadline is the grace period. Those still under way
// then are cut: each ends with codes.Unavailable, "flight: server shutting down: the stream
// was cut after the grace period of G; retry against another server or later", G being what
// was left of ctx's deadline when Shutdown was called (to a tenth of a second from a second
// on: serve --grace 10s says 10s), and each is logged (Options.Logger,
// at warning: method, flight, client, bytes sent). Shutdown returns within a second of the
// end of ctx, the connections closed (Serve then returns nil), and closes the connections to
// peers and drops the staged uploads.
func (s *Server) Shutdown(ctx context.Context) {
	grace := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		grace = roundGrace(max(time.Until(d), 0))
	}
	n := s.active.drain()
	s.healthDraining()
	if n > 0 {
		s.opts.Logger.Info("flight: shutting down: waiting for the calls under way", "calls", n, "grace", graceText(grace))
	}
	stopWithin := stopWait
	if !s.active.wait(ctx) {
		cause := cutStatus(grace)
		if grace < 0 { // ctx ended without a deadline
			cause = status.Errorf(codes.Unavailable, "%v: the stream was cut; retry against another server or later", ErrShuttingDown)
		}
		stopWithin = s.cutStreams(cause, graceText(grace))
	}
	s.stop(stopWithin)
	s.peers.Range(func(k, v any) bool {
		v.(*Client).Close()
		s.peers.Delete(k)
		return true
	})
	s.staged.close()
}

// roundGrace rounds what is left of a grace period for saying it: to a tenth of a second from
// a second on (the moments between the caller's timer and Shutdown are not part of what the
// caller gave), to a millisecond below.
func roundGrace(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// graceText says a grace period, -1 for none (a context that ended without a deadline).
func graceText(grace time.Duration) string {
	if grace < 0 {
		return "none"
	}
	return grace.String()
}

// cutStreams cuts every stream under way with cause at the end of the grace period, logging
// each, and waits for their handlers to return: each stops at its next message (stop), so
// that a client still reading gets cause after what was sent; those still running after half
// of cutWait are halted. It returns what is left of cutWait, for the statuses to reach
// their clients.
func (s *Server) cutStreams(cause error, grace string) (left time.Duration) {
	deadline := time.Now().Add(cutWait)
	for _, st := range s.active.list() {
		method, flight, client, sent := st.describe()
		st.stop(cause)
		s.opts.Logger.Warn("flight: shutdown cut a stream at the end of the grace period",
			"method", method, "flight", flight, "client", client, "sent_bytes", sent, "grace", grace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cutWait/2)
	defer cancel()
	if !s.active.wait(ctx) {
		for _, st := range s.active.list() {
			st.halt(cause)
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		s.active.wait(ctx)
	}
	return max(time.Until(deadline), stopWait/5)
}

// stop closes the gRPC server and the data endpoint: gracefully for within — the statuses of
// the calls cut on their way, the calls of other services (a health watch) ending — then at
// once.
func (s *Server) stop(within time.Duration) {
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		s.grpc.Stop()
		<-done
	}
	s.mu.Lock()
	hs := s.http
	s.mu.Unlock()
	if hs == nil {
		return
	}
	// The data streams under way have ended or been cut; what is left is connections
	// waiting for a request, and streams stuck writing to clients that take nothing.
	hs.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.streams.Wait()
}

// stop has the call's handler get cause at its next message, sent or received, instead of
// the message: a gRPC handler blocked sending to a client that reads slowly goes on when the
// client reads, and its status follows what it sent — where cancelling its context would
// have gRPC end the call with its own DeadlineExceeded.
func (c *call) stop(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cutBy == nil && c.Context.Err() == nil {
		c.cutBy = cause
	}
}

// halt cuts the call with cause: its context ends.
func (c *call) halt(cause error) { c.cut(cause) }

// describe says what the call is, for the log.
func (c *call) describe() (method, flight, client string, sent int64) {
	c.rec.mu.Lock()
	flight = c.rec.flight
	c.rec.mu.Unlock()
	if p, ok := peer.FromContext(c.Context); ok && p.Addr != nil {
		client = p.Addr.String()
	}
	return strings.TrimPrefix(c.method, flightService), flight, client, c.rec.bytesSent.Load()
}

// dataStream is a data URL's GET under way.
type dataStream struct {
	r      *http.Request
	ticket string
	cancel context.CancelCauseFunc
	w      *streamWriter // once the stream starts: what it sent
	mu     sync.Mutex
}

// stop ends the GET's context with cause: the stream ends at its next message, the status in
// its trailer.
func (d *dataStream) stop(cause error) { d.cancel(cause) }

// halt does nothing more: a GET still writing to a client that takes nothing ends when
// Shutdown closes its connection.
func (d *dataStream) halt(error) {}

// describe says what the GET is, for the log.
func (d *dataStream) describe() (method, flight, client string, sent int64) {
	d.mu.Lock()
	w := d.w
	d.mu.Unlock()
	if w != nil {
		sent = w.sent.Load()
	}
	return "GET " + dataPath, d.ticket, d.r.RemoteAddr, sent
}
