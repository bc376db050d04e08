package flight

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	flightgen "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// What a Server takes of its clients' connections and calls when Options leaves it zero (see
// Options for each).
const (
	// DefaultServerRecvMessageBytes bounds one message a Server receives (a Client's is
	// DefaultMaxRecvMessageBytes).
	DefaultServerRecvMessageBytes = 64 << 20
	// DefaultStallTimeout is how long a message may take to arrive or to be taken.
	DefaultStallTimeout = time.Minute
	// DefaultIdleTimeout is how long a connection may stay without a call.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultMaxConnections bounds the connections a Server holds at once.
	DefaultMaxConnections = 1024
	// DefaultMaxStreams bounds the calls of one connection at once.
	DefaultMaxStreams = 100
)

const (
	// serverStreamWindow is the flow-control window of each stream a Server receives on:
	// what a client may send on a call before the server reads it (a message larger than it
	// is let in whole once the server starts to read it). Small, since every call reserves it
	// from the wire budget: uploads send larger messages than it anyway.
	serverStreamWindow = 256 << 10
	// connectionCost is what a Server reserves from its wire budget for each gRPC connection
	// that makes a call: gRPC's read and write buffers and the rest of its state.
	connectionCost = 2*socketBuffer + 64<<10
	// dataStreamCost is what it reserves for each data URL's stream: its connection's buffers
	// and the chunk copies of a TLS stream.
	dataStreamCost = 512 << 10
)

// DefaultWireBudget returns the wire budget a Server takes when Options.WireBudget is 0, for a
// memory budget of memoryBudget bytes: a quarter of it, at least 512 MiB.
func DefaultWireBudget(memoryBudget int64) int64 { return max(memoryBudget/4, 512<<20) }

// A Server admits what arrives on its port against its wire budget before gRPC or net/http
// allocate for it, and cuts what stops:
//
//   - at most MaxConnections are open (admittedListener: one more is closed at once); a gRPC
//     connection reserves connectionCost with its first call (its buffers are used from then
//     on), a data URL's stream dataStreamCost; gRPC closes a connection that has no call for
//     IdleTimeout, and net/http one that sends no request;
//   - a call (a gRPC stream) reserves its flow-control window when its headers arrive
//     (admitCall, gRPC's tap: refused with ResourceExhausted when that does not fit within the
//     whole budget, of which what waits leaves an eighth to this), a DoGet two messages'
//     frames once its handler starts, and each
//     message it receives reserves what the message may hold while it arrives (a unary call's
//     request in callStats.TagRPC, before gRPC reads it; a stream's in watchedStream.RecvMsg),
//     waiting its turn up to BudgetWait;
//   - a message that takes longer than StallTimeout to arrive, or to be taken by the client
//     (a DoGet whose client stopped reading), ends its call (the call's context is cancelled,
//     which ends gRPC's wait) with DeadlineExceeded.
//
// What a call holds of the wire budget is given back when it ends, whatever ends it.

// call is what a Server keeps of one gRPC call from the moment it is admitted, and the call's
// context: gRPC's own, which the Server can also end (cut) — as a deadline, so that what
// gRPC tells a client of a call cut for a stall, or for a request that never found room, is
// DeadlineExceeded.
type call struct {
	context.Context // gRPC's, made cancellable by the server
	s               *Server
	method          string
	unary           bool
	cost            int64 // reserved for the call's life: its window
	cancel          context.CancelCauseFunc

	mu      sync.Mutex
	cutBy   error       // why the server ended the call, if it did
	ended   bool        // its context ended (end ran)
	request int64       // reserved for a unary call's request while it arrives
	arrival *time.Timer // cuts a unary call whose request does not arrive
	handled bool        // its handler ran: Shutdown waits for it to return, not for end

	rec callRecord // what its access record says (accesslog.go)
}

type callKey struct{}

// callOf returns the call ctx belongs to, nil outside one.
func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// Value returns the call itself for callKey.
func (c *call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// Err returns context.DeadlineExceeded once the server cut the call.
func (c *call) Err() error {
	err := c.Context.Err()
	if err == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cutBy != nil {
		return context.DeadlineExceeded
	}
	return err
}

// cut ends the call for cause (context.Cause of the call tells it).
func (c *call) cut(cause error) {
	c.mu.Lock()
	if c.cutBy == nil && c.Context.Err() == nil {
		c.cutBy = cause
	}
	c.mu.Unlock()
	c.cancel(cause)
}

// unaryMethods are the full names of the Flight service's unary methods, whose request gRPC
// reads before any handler runs.
var unaryMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, md := range flightgen.FlightService_ServiceDesc.Methods {
		m["/"+flightgen.FlightService_ServiceDesc.ServiceName+"/"+md.MethodName] = true
	}
	return m
}()

// sendsData are the methods whose calls send record batches: each holds up to two messages in
// frame buffers (one gRPC writes, the next marshaled), which it reserves before its handler
// runs.
var sendsData = map[string]bool{
	"/" + flightgen.FlightService_ServiceDesc.ServiceName + "/DoGet":      true,
	"/" + flightgen.FlightService_ServiceDesc.ServiceName + "/DoExchange": true,
}

// sendsMany are the methods whose clients send a stream of messages (record batches), which
// wait for the wire budget behind the requests of other calls.
var sendsMany = map[string]bool{
	"/" + flightgen.FlightService_ServiceDesc.ServiceName + "/DoPut":      true,
	"/" + flightgen.FlightService_ServiceDesc.ServiceName + "/DoExchange": true,
	"/" + flightgen.FlightService_ServiceDesc.ServiceName + "/Handshake":  true,
}

// admitCall is the Server's gRPC tap: it runs on the connection's reader goroutine, before gRPC
// creates the call, and must not wait. It reserves the call's flow-control window, refusing the
// call when the wire budget has no room, and gives the call a context the Server can end.
func (s *Server) admitCall(ctx context.Context, info *tap.Info) (context.Context, error) {
	flightCall := strings.HasPrefix(info.FullMethodName, flightService)
	if flightCall && s.Draining() {
		s.logRefused(ctx, info.FullMethodName, errShuttingDown)
		return nil, errShuttingDown
	}
	cost := int64(serverStreamWindow)
	conn, _ := ctx.Value(connKey{}).(*grpcConn)
	if conn != nil && conn.charged.CompareAndSwap(false, true) {
		// The connection's first call: its buffers will be used from now on.
		if !s.wire.tryReserve(connectionCost) {
			conn.charged.Store(false)
			err := status.Errorf(codes.ResourceExhausted,
				"flight: %s: the server's wire budget of %d bytes (serve --wire-budget) is held by other connections and calls; retry later",
				info.FullMethodName, s.wire.size)
			s.logRefused(ctx, info.FullMethodName, err)
			return nil, err
		}
	}
	if !s.wire.tryReserve(cost) {
		err := status.Errorf(codes.ResourceExhausted,
			"flight: %s: the server's wire budget of %d bytes (serve --wire-budget) is held by other connections and calls; retry later",
			info.FullMethodName, s.wire.size)
		s.logRefused(ctx, info.FullMethodName, err)
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	c := &call{Context: ctx, s: s, method: info.FullMethodName, cancel: cancel, unary: unaryMethods[info.FullMethodName], cost: cost}
	if flightCall && !s.active.add(c) { // Shutdown began meanwhile
		cancel(errShuttingDown)
		s.wire.release(cost)
		s.logRefused(ctx, info.FullMethodName, errShuttingDown)
		return nil, errShuttingDown
	}
	s.calls.Add(1)
	context.AfterFunc(ctx, c.end)
	return c, nil
}

// end gives back what the call holds of the wire budget, and, if no handler ran, tells
// Shutdown the call is over; it runs once the call's context ends.
func (c *call) end() {
	c.mu.Lock()
	if !c.handled {
		defer c.s.active.remove(c)
	}
	c.ended = true
	request := c.request
	c.request = 0
	if c.arrival != nil {
		c.arrival.Stop()
	}
	c.mu.Unlock()
	c.s.wire.release(c.cost + request)
	c.s.calls.Add(-1)
}

// awaitRequest reserves, for a unary call, what its request may hold while gRPC reads it, and
// starts the clock on its arrival. It runs on the call's goroutine before gRPC reads the
// request; a call that gets no room in BudgetWait, or whose request does not arrive in
// StallTimeout, is cut.
func (c *call) awaitRequest(ctx context.Context) {
	n := int64(c.s.maxRecv)
	if err := c.s.wire.reserveRequest(ctx, c.method, n); err != nil {
		c.s.opts.Logger.Warn("flight: a call's request refused", "method", c.method, "err", err.Error())
		c.cut(err)
		return
	}
	c.mu.Lock()
	if c.ended { // while it waited: end gave back what it held then
		c.mu.Unlock()
		c.s.wire.release(n)
		return
	}
	c.request = n
	c.arrival = time.AfterFunc(c.s.opts.StallTimeout, func() {
		err := fmt.Errorf("flight: %s: the request did not arrive in %v (serve --stall-timeout)", c.method, c.s.opts.StallTimeout)
		c.s.opts.Logger.Warn("flight: a call cut", "method", c.method, "err", err.Error())
		c.cut(err)
	})
	c.mu.Unlock()
}

// started marks the call's handler started: a unary call's request has arrived, and what was
// reserved for it is given back.
func (c *call) started() {
	c.mu.Lock()
	request := c.request
	c.request = 0
	if c.arrival != nil {
		c.arrival.Stop()
	}
	c.mu.Unlock()
	c.s.wire.release(request)
}

// watch cuts the call unless the step what (a message received or sent) is done within
// StallTimeout; the returned function ends the watch.
func (c *call) watch(what string) (stop func() bool) {
	t := time.AfterFunc(c.s.opts.StallTimeout, func() {
		err := fmt.Errorf("flight: %s: %s in %v (serve --stall-timeout): %w", c.method, what, c.s.opts.StallTimeout, context.DeadlineExceeded)
		c.s.opts.Logger.Warn("flight: a call cut", "method", c.method, "err", err.Error())
		c.cut(err)
	})
	return t.Stop
}

// callStats is the Server's gRPC stats handler: its TagRPC runs on each call's goroutine
// before gRPC reads a unary call's request, where waiting for the wire budget is allowed.
type callStats struct{ s *Server }

func (h callStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if c := callOf(ctx); c != nil && c.unary {
		c.awaitRequest(ctx)
	}
	return ctx
}

// HandleRPC counts the bytes of a call's messages and, at its end, writes its access record
// (accesslog.go).
func (h callStats) HandleRPC(ctx context.Context, st stats.RPCStats) {
	c := callOf(ctx)
	if c == nil {
		return
	}
	switch st := st.(type) {
	case *stats.InPayload:
		c.rec.bytesReceived.Add(int64(st.Length))
	case *stats.OutPayload:
		c.rec.bytesSent.Add(int64(st.Length))
	case *stats.End:
		h.s.logCall(ctx, c, st)
	}
}

// TagConn gives each gRPC connection a grpcConn, which its calls find in their context.
func (h callStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &grpcConn{})
}

// HandleConn gives back, when a connection ends, what it holds of the wire budget.
func (h callStats) HandleConn(ctx context.Context, st stats.ConnStats) {
	if _, ok := st.(*stats.ConnEnd); !ok {
		return
	}
	if c, _ := ctx.Value(connKey{}).(*grpcConn); c != nil && c.charged.CompareAndSwap(true, false) {
		h.s.wire.release(connectionCost)
	}
}

// grpcConn is what a Server keeps of a gRPC connection: whether it holds connectionCost of the
// wire budget, which it reserves with its first call (a connection that never makes one holds
// only its place among MaxConnections, and what an idle connection costs, some 60 KiB).
type grpcConn struct {
	charged   atomic.Bool
	toldClear atomic.Bool // the log said a token arrived on it in clear
}

type connKey struct{}

// admitUnary is the first of a Server's unary interceptors: the request has arrived.
func (s *Server) admitUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c := callOf(ctx)
	if c == nil {
		return handler(ctx, req)
	}
	c.started()
	defer c.handle()()
	resp, err := handler(ctx, req)
	if cutBy := c.cutCause(); err != nil && cutBy != nil {
		return nil, statusOr(cutBy, codes.DeadlineExceeded) // cut by the server: say why
	}
	return resp, err
}

// handle marks the call's handler running and returns what tells Shutdown, when the handler
// returns, that the call is over: its status is then on its way to the client.
func (c *call) handle() (returned func()) {
	c.mu.Lock()
	c.handled = true
	c.mu.Unlock()
	return func() { c.s.active.remove(c) }
}

// cutCause returns why the server cut the call, nil when it did not.
func (c *call) cutCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cutBy
}

// admitStream is the first of a Server's stream interceptors: the handler's messages are
// received within the wire budget and watched (watchedStream).
func (s *Server) admitStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	c := callOf(ss.Context())
	if c == nil {
		return handler(srv, ss)
	}
	c.started()
	defer c.handle()()
	if sendsData[c.method] {
		n := 2 * int64(s.opts.MaxMessageBytes)
		if err := s.wire.reserve(ss.Context(), c.method, n); err != nil {
			return budgetStatus(ss.Context(), err)
		}
		defer s.wire.release(n)
	}
	err := handler(srv, &watchedStream{ServerStream: ss, c: c})
	if cutBy := c.cutCause(); err != nil && cutBy != nil {
		// Cut by the server: say why (a client still reading gets it).
		return statusOr(cutBy, codes.DeadlineExceeded)
	}
	return err
}

// watchedStream is a call's stream as its handler sees it: each message received reserves
// what it may hold from the wire budget (MaxRecvMessageBytes) while it arrives, and each
// message received or sent must be done within StallTimeout; once the server has cut the call
// (or is stopping it: call.stop), none is received or sent: the handler gets the status.
type watchedStream struct {
	grpc.ServerStream
	c        *call
	received bool // a message was received: the call's request, for a call that takes one
}

func (w *watchedStream) RecvMsg(m any) error {
	if cutBy := w.c.cutCause(); cutBy != nil {
		return statusOr(cutBy, codes.DeadlineExceeded)
	}
	n := int64(w.c.s.maxRecv)
	reserve := w.c.s.wire.reserve // the messages of a stream that sends many: an upload's
	if !w.received && !sendsMany[w.c.method] {
		reserve = w.c.s.wire.reserveRequest // the request of a call that takes one
	}
	w.received = true
	if err := reserve(w.Context(), w.c.method, n); err != nil {
		return budgetStatus(w.Context(), err)
	}
	defer w.c.s.wire.release(n)
	stop := w.c.watch("no message arrived")
	defer stop()
	if pm, ok := m.(*putMessage); ok {
		pm.arrived = func() { stop() } // decoding it, which may wait for the memory budget, is not arriving
	}
	return w.ServerStream.RecvMsg(m)
}

func (w *watchedStream) SendMsg(m any) error {
	if cutBy := w.c.cutCause(); cutBy != nil { // the call's status, rather than gRPC's of its context
		return statusOr(cutBy, codes.DeadlineExceeded)
	}
	defer w.c.watch("the client took no message")()
	return w.ServerStream.SendMsg(m)
}

// admittedListener accepts the connections of lis while fewer than MaxConnections are open;
// others are closed as soon as they are accepted.
type admittedListener struct {
	net.Listener
	s    *Server
	open atomic.Int64
}

func (l *admittedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > int64(l.s.opts.MaxConnections) {
			l.open.Add(-1)
			l.s.opts.Logger.Debug("flight: connection refused: MaxConnections open", "remote", c.RemoteAddr().String())
			c.Close()
			continue
		}
		return &admittedConn{Conn: c, l: l}, nil
	}
}

// admittedConn is a connection its listener admitted: closing it gives back its place.
type admittedConn struct {
	net.Conn
	l    *admittedListener
	once sync.Once
}

// CloseWrite shuts the connection's writing side, when it has one to shut (a TCP
// connection's): lingerClose.
func (c *admittedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *admittedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
