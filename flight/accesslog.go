package flight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	flightgen "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	flatbuffers "github.com/google/flatbuffers/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

// A Server's access log (Options.Logger) has one record per call, written when the call
// ends (callStats.HandleRPC, on stats.End): "flight: call" at info — at warn, "flight:
// authentication failed", for a call refused for its token, and "flight: call" at warn for one
// that failed on the server's side (Internal, Unknown, DataLoss); a health check's at debug —
// and one per GET of a data URL, "flight: data URL" (at warn for a URL the server did not
// sign or that expired; a request for any other path at debug), with these attributes:
//
//	method          the Flight method (DoGet, DoPut, GetFlightInfo, ListFlights, DoAction, …;
//	                grpc.health.v1.Health/Check for the health service), or GET for a data URL
//	flight          the flight it names, when it names one (a DoAction's body for delete)
//	kind            take or batches for a DoGet or GetFlightInfo of those commands, stage for a
//	                DoPut of an upload transaction
//	action          a DoAction's type
//	version         the version of the flight a DoGet or data URL sent
//	client          the client's address
//	identity        who the call says it is: "token:" and the first 6 hex digits of the SHA-256
//	                of the bearer token it carried (never the token), "none" for none, "url"
//	                for a data URL (presigned: it carries no token)
//	bytes_sent, bytes_received   the bytes of the messages (gRPC's, without their 5-byte
//	                framing; a data URL's response body)
//	rows_sent, rows_received     the rows of the record batches
//	duration        from the call's headers to its end
//	status          the gRPC code (OK, NotFound, …); error its message when not OK
//
// A token that reaches a server without TLS is also said once per connection, at warn
// ("flight: a bearer token arrived in clear").

// callRecord is what a call's access record says beyond what gRPC tells at its end.
type callRecord struct {
	mu      sync.Mutex
	flight  string
	kind    string
	action  string
	version string

	bytesSent, bytesReceived atomic.Int64
	rowsSent, rowsReceived   atomic.Int64
}

// noteFlight records the flight a call names, and what kind of command it is ("" for a plain
// name). It does nothing outside a call.
func (c *call) noteFlight(name, kind string) {
	if c == nil {
		return
	}
	c.rec.mu.Lock()
	c.rec.flight, c.rec.kind = logText(name), kind
	c.rec.mu.Unlock()
}

// noteAction records a DoAction's type and, when it names one, its flight.
func (c *call) noteAction(typ, flight string) {
	if c == nil {
		return
	}
	c.rec.mu.Lock()
	c.rec.action, c.rec.flight = logText(typ), logText(flight)
	c.rec.mu.Unlock()
}

// maxLogText bounds what a record says of what a client sent (a flight's name, an action's
// type, a status message naming them): a ticket may be megabytes.
const maxLogText = 512

// logText returns s, cut to maxLogText bytes (at a rune's start) with the length it had.
func logText(s string) string {
	if len(s) <= maxLogText {
		return s
	}
	cut := maxLogText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// noteVersion records the version of the flight a call sends.
func (c *call) noteVersion(v string) {
	if c == nil {
		return
	}
	c.rec.mu.Lock()
	c.rec.version = v
	c.rec.mu.Unlock()
}

// noteRowsSent adds n to the rows a call sent.
func (c *call) noteRowsSent(n int64) {
	if c != nil {
		c.rec.rowsSent.Add(n)
	}
}

// noteRowsReceived adds n to the rows a call received.
func (c *call) noteRowsReceived(n int64) {
	if c != nil {
		c.rec.rowsReceived.Add(n)
	}
}

// recordBatchRows returns the rows of the record batch whose message header (a flatbuffer
// arrow-go's IPC writer made, not input) is header, 0 for any other message.
func recordBatchRows(header []byte) int64 {
	if !isRecordBatch(header) {
		return 0
	}
	var tab flatbuffers.Table
	if !arrowfb.GetRootAsMessage(header, 0).Header(&tab) {
		return 0
	}
	var rb arrowfb.RecordBatch
	rb.Init(tab.Bytes, tab.Pos)
	return rb.Length()
}

// healthPrefix is the full name prefix of the methods of gRPC's health service.
var healthPrefix = "/grpc.health.v1.Health/"

// flightPrefix is the full name prefix of the Flight service's methods.
var flightPrefix = "/" + flightgen.FlightService_ServiceDesc.ServiceName + "/"

// shortMethod is the name the access log gives a call's method: a Flight method by its name
// alone, any other by its service and name.
func shortMethod(full string) string {
	if m, ok := strings.CutPrefix(full, flightPrefix); ok {
		return m
	}
	return strings.TrimPrefix(full, "/")
}

// tokenIdentity returns what the access log says of the bearer token in md: "token:" and the
// first 6 hex digits of its SHA-256 (printf %s "$TOKEN" | sha256sum | cut -c1-6), "none"
// when there is none. The token itself is never logged.
func tokenIdentity(md metadata.MD) string {
	values := md.Get("authorization")
	if len(values) == 0 {
		return "none"
	}
	token := values[0]
	if scheme, rest, ok := strings.Cut(token, " "); ok && strings.EqualFold(scheme, "Bearer") {
		token = rest
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return "token:" + hex.EncodeToString(sum[:3])
}

// serverSideCode reports whether a call ending with code c failed on the server's side, which
// the log says at warn.
func serverSideCode(c codes.Code) bool {
	return c == codes.Internal || c == codes.Unknown || c == codes.DataLoss
}

// logCall writes the access record of the call c, which ended as end says.
func (s *Server) logCall(ctx context.Context, c *call, end *stats.End) {
	md, _ := metadata.FromIncomingContext(ctx)
	identity := tokenIdentity(md)
	if identity != "none" && s.opts.TLS == nil {
		s.warnTokenInClear(ctx, identity)
	}
	st := status.Convert(end.Error)
	level, msg := slog.LevelInfo, "flight: call"
	switch {
	case strings.HasPrefix(c.method, healthPrefix):
		level = slog.LevelDebug
	case st.Code() == codes.Unauthenticated:
		level, msg = slog.LevelWarn, "flight: authentication failed"
	case serverSideCode(st.Code()):
		level = slog.LevelWarn
	}
	if !s.opts.Logger.Enabled(ctx, level) {
		return
	}
	client := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		client = p.Addr.String()
	}
	c.rec.mu.Lock()
	flight, kind, action, version := c.rec.flight, c.rec.kind, c.rec.action, c.rec.version
	c.rec.mu.Unlock()
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs, slog.String("method", shortMethod(c.method)))
	attrs = appendNamed(attrs, flight, kind, action, version)
	attrs = append(attrs, slog.String("client", client), slog.String("identity", identity),
		slog.Int64("bytes_sent", c.rec.bytesSent.Load()), slog.Int64("bytes_received", c.rec.bytesReceived.Load()),
		slog.Int64("rows_sent", c.rec.rowsSent.Load()), slog.Int64("rows_received", c.rec.rowsReceived.Load()),
		slog.Duration("duration", end.EndTime.Sub(end.BeginTime)), slog.String("status", st.Code().String()))
	if st.Code() != codes.OK {
		attrs = append(attrs, slog.String("error", logText(st.Message())))
	}
	s.opts.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// logRefused writes the access record of a call the server refused before it began (the wire
// budget had no room for it, or the server drains): at warn, its bytes and rows zero.
func (s *Server) logRefused(ctx context.Context, method string, err error) {
	if !s.opts.Logger.Enabled(ctx, slog.LevelWarn) {
		return
	}
	md, _ := metadata.FromIncomingContext(ctx)
	client := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		client = p.Addr.String()
	}
	st := status.Convert(err)
	s.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "flight: call", slog.String("method", shortMethod(method)),
		slog.String("client", client), slog.String("identity", tokenIdentity(md)),
		slog.Int64("bytes_sent", 0), slog.Int64("bytes_received", 0), slog.Int64("rows_sent", 0), slog.Int64("rows_received", 0),
		slog.Duration("duration", 0), slog.String("status", st.Code().String()), slog.String("error", logText(st.Message())))
}

// appendNamed appends the attributes a call has when it names them.
func appendNamed(attrs []slog.Attr, flight, kind, action, version string) []slog.Attr {
	for _, a := range []struct{ key, value string }{{"flight", flight}, {"kind", kind}, {"action", action}, {"version", version}} {
		if a.value != "" {
			attrs = append(attrs, slog.String(a.key, a.value))
		}
	}
	return attrs
}

// warnTokenInClear says, once per connection, that a call brought a bearer token over a
// connection without TLS.
func (s *Server) warnTokenInClear(ctx context.Context, identity string) {
	conn, _ := ctx.Value(connKey{}).(*grpcConn)
	if conn == nil || !conn.toldClear.CompareAndSwap(false, true) {
		return
	}
	client := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		client = p.Addr.String()
	}
	s.opts.Logger.Warn("flight: a bearer token arrived in clear (this server has no TLS): anyone on the network path can read it; serve with --tls-cert and --tls-key, or keep the port on loopback or a trusted network",
		"client", client, "identity", identity)
}

// dataRecord is what the access record of a data URL's GET says.
type dataRecord struct {
	start   time.Time
	flight  string
	version string
	err     error // the status it ended with; nil: OK
	code    int   // the HTTP status of a request that is not a data URL's, 0 for one
	sw      *streamWriter
}

// logData writes the access record of the GET r of a data URL (or of what is not one, at
// debug).
func (s *Server) logData(r *http.Request, rec *dataRecord) {
	st := status.Convert(rec.err)
	level := slog.LevelInfo
	switch {
	case rec.code != 0:
		level = slog.LevelDebug
	case serverSideCode(st.Code()), st.Code() == codes.PermissionDenied: // a URL not signed, or expired
		level = slog.LevelWarn
	}
	ctx := r.Context()
	if !s.opts.Logger.Enabled(ctx, level) {
		return
	}
	var bytes, rows int64
	if rec.sw != nil {
		bytes, rows = rec.sw.sent.Load(), rec.sw.rows
	}
	attrs := make([]slog.Attr, 0, 14)
	attrs = append(attrs, slog.String("method", r.Method))
	attrs = appendNamed(attrs, rec.flight, "", "", rec.version)
	attrs = append(attrs, slog.String("client", r.RemoteAddr), slog.String("identity", "url"),
		slog.Int64("bytes_sent", bytes), slog.Int64("bytes_received", 0),
		slog.Int64("rows_sent", rows), slog.Int64("rows_received", 0),
		slog.Duration("duration", time.Since(rec.start)))
	if rec.code != 0 {
		attrs = append(attrs, slog.String("path", r.URL.Path), slog.Int("http_status", rec.code))
	} else {
		attrs = append(attrs, slog.String("status", st.Code().String()))
		if st.Code() != codes.OK {
			attrs = append(attrs, slog.String("error", logText(st.Message())))
		}
	}
	s.opts.Logger.LogAttrs(ctx, level, "flight: data URL", attrs...)
}
