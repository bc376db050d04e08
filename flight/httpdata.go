package flight

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/internal/memcopy"
	"github.com/ndarrow/ndarrow/ipc"
)

// A Server answers, on its gRPC port, plain HTTP/1.1 GETs of the data of its flights: the
// "extended location URIs" of the Flight specification (Flight.rst, "Extended Location
// URIs"), an http:// or https:// location in a FlightEndpoint whose GET returns the stream
// DoGet would, as an Arrow IPC stream. Its URL is presigned — the ticket, an expiry and an
// HMAC of both under a key the server makes at start — so it is as good as the FlightInfo it
// came in, which only an authorized caller gets; and it can be fetched by any HTTP client
// (curl piped into pyarrow.ipc.open_stream). ndarrow's Client prefers it: the response's body
// is read straight from the socket into the result, where gRPC copies each byte through
// HTTP/2 frames first (see BENCHMARKS.md).
//
// One port: a connection is gRPC's when it starts with HTTP/2's preface (plaintext) or
// negotiates "h2" alone by ALPN (TLS, which the server then terminates itself), and the data
// endpoint's otherwise.

// Header and path names of the data endpoint.
const (
	// dataPath is the path of the data endpoint's URLs.
	dataPath = "/arrow-flight/v1/get"
	// statusHeader carries a failure's gRPC code and message, "CODE MESSAGE": in the
	// response's headers when it fails before its stream starts, in its trailer after.
	statusHeader = "Ndarrow-Status"
	// arrowStreamType is the media type of an Arrow IPC stream.
	arrowStreamType = "application/vnd.apache.arrow.stream"
	// DefaultDataURLLifetime is how long a data URL a FlightInfo gives is good for when
	// Options leaves DataURLLifetime zero.
	DefaultDataURLLifetime = 15 * time.Minute
	// sniffTimeout bounds how long a new connection may take to show which protocol it speaks
	// (its first bytes, or its TLS handshake).
	sniffTimeout = 10 * time.Second
)

// signer makes and checks the signatures of data URLs.
type signer struct{ key [32]byte }

// sign returns the signature of ticket expiring at exp (Unix seconds).
func (s *signer) sign(ticket []byte, exp int64) []byte {
	m := hmac.New(sha256.New, s.key[:])
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(exp))
	m.Write(b[:])
	m.Write(ticket)
	return m.Sum(nil)
}

// dataLocation returns the URL a client GETs the stream of ticket at, on the server the
// call of ctx reached (its :authority, so an address forwarded to the server works as the
// client dialed it); "" when the server serves no HTTP or the call names no host.
func (s *Server) dataLocation(ctx context.Context, ticket []byte) string {
	if !s.httpOn {
		return ""
	}
	md, _ := metadata.FromIncomingContext(ctx)
	auth := md.Get(":authority")
	if len(auth) != 1 || auth[0] == "" {
		return ""
	}
	host := auth[0]
	if _, _, err := net.SplitHostPort(host); err != nil {
		return ""
	}
	scheme := "http"
	if s.opts.TLS != nil {
		scheme = "https"
	}
	exp := time.Now().Add(s.opts.DataURLLifetime).Unix()
	q := url.Values{
		"ticket":    {base64.RawURLEncoding.EncodeToString(ticket)},
		"expires":   {strconv.FormatInt(exp, 10)},
		"signature": {hex.EncodeToString(s.signer.sign(ticket, exp))},
	}
	u := url.URL{Scheme: scheme, Host: host, Path: dataPath, RawQuery: q.Encode()}
	return u.String()
}

// ticketOf returns the ticket a data URL's query presigns, or an error when its signature
// is not the server's or it has expired.
func (s *Server) ticketOf(q url.Values) ([]byte, error) {
	ticket, err := base64.RawURLEncoding.DecodeString(q.Get("ticket"))
	if err != nil {
		return nil, errors.New("a malformed ticket")
	}
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil {
		return nil, errors.New("a malformed expiry")
	}
	sig, err := hex.DecodeString(q.Get("signature"))
	if err != nil || !hmac.Equal(sig, s.signer.sign(ticket, exp)) {
		return nil, errors.New("a URL this server did not sign")
	}
	if time.Now().Unix() > exp {
		return nil, errors.New("an expired URL: ask for the flight again")
	}
	return ticket, nil
}

// httpStatus is the HTTP status of a response failing with gRPC code c.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.NotFound:
		return http.StatusNotFound
	case codes.PermissionDenied, codes.Unauthenticated:
		return http.StatusForbidden
	case codes.InvalidArgument, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.ResourceExhausted, codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// serveData answers a GET of a data URL with the flight's Arrow IPC stream: the stream DoGet
// sends, read under Guard on this goroutine, within the memory budget. A failure before the
// stream starts is an HTTP error with the status in statusHeader; after, the stream stops
// without its end-of-stream marker and the status is the response's trailer. The marker is
// written only once the stream is known whole (its files unchanged, see sendEntry), and
// then the response ends with no status: the one ending a client takes as success.
func (s *Server) serveData(w http.ResponseWriter, r *http.Request) {
	// Shutdown waits for the streams, which net/http does not once they own their
	// connection (Hijack).
	s.streams.Add(1)
	defer s.streams.Done()
	s.dataStreams.Add(1)
	defer s.dataStreams.Add(-1)
	rec := &dataRecord{start: time.Now()}
	defer s.logData(r, rec) // after the recovery below has set its status
	failed := func(err error) {
		rec.err = err
		fail(w, err)
	}
	var sw *streamWriter
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			err := s.panicStatus("GET "+dataPath, v)
			rec.err = err
			switch {
			case sw == nil || !sw.started: // nothing written yet
				fail(w, err)
			case sw.conn != nil: // taken over: ended here, with the status if it can be
				sw.finish(err)
			default:
				panic(http.ErrAbortHandler) // the client sees the stream cut, without its marker
			}
		}
	}()
	if r.URL.Path != dataPath {
		rec.code = http.StatusNotFound
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rec.code = http.StatusMethodNotAllowed
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET", http.StatusMethodNotAllowed)
		return
	}
	ticket, err := s.ticketOf(r.URL.Query())
	if err != nil {
		failed(status.Error(codes.PermissionDenied, err.Error()))
		return
	}
	rec.flight = logText(string(ticket))
	// Shutdown refuses the GET while it drains, and cuts the stream at the end of its grace
	// period (the status in the trailer).
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	ds := &dataStream{r: r, ticket: string(ticket), cancel: cancel}
	if !s.active.add(ds) {
		failed(errShuttingDown)
		return
	}
	defer s.active.remove(ds)
	e, err := s.store.get(string(ticket))
	if err != nil {
		failed(statusOf(err))
		return
	}
	defer e.release()
	if e.meta.Version != "" {
		w.Header().Set(versionHeader, e.meta.Version)
		rec.version = e.meta.Version
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", arrowStreamType)
		return
	}
	if !s.wire.tryReserve(dataStreamCost) {
		failed(status.Errorf(codes.ResourceExhausted, "flight: the server's wire budget of %d bytes (serve --wire-budget) is held by other connections and calls; retry later", s.wire.size))
		return
	}
	defer s.wire.release(dataStreamCost)
	sw = &streamWriter{srv: s, w: w, tls: r.TLS != nil || s.opts.TLS != nil}
	rec.sw = sw
	ds.mu.Lock()
	ds.w = sw
	ds.mu.Unlock()
	if err = s.streamEntry(ctx, e, sw); err != nil {
		err = s.fileStatus(e, "GET", err)
	}
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		err = context.Cause(ctx) // Shutdown's status
	}
	rec.err = err
	if !sw.started {
		if err != nil {
			fail(w, err)
		}
		return
	}
	sw.finish(err)
}

// fail answers with the HTTP status of err, a gRPC status, its code and message in
// statusHeader and its message as the body.
func fail(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	w.Header().Set(statusHeader, strconv.Itoa(int(st.Code()))+" "+oneLine(st.Message()))
	http.Error(w, st.Message(), httpStatus(st.Code()))
}

// oneLine returns msg as one header-safe line.
func oneLine(msg string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
}

// streamWriter is the ipc.PayloadWriter of the data endpoint: each message encapsulated as
// the IPC stream format has it (continuation marker, metadata length, metadata padded to 8
// bytes, body), and the end-of-stream marker at Close.
//
// At its first message it takes the connection over from net/http (Hijack) and writes the
// response itself, chunked: a large buffer of a plaintext stream goes from the record (a
// mapped file's) to the socket without a copy, and when the file shrinks under it the kernel
// stops at the missing page (EFAULT, which Guard reports as the file's change) with the
// response still well formed — the chunk is completed with zeros and the trailer carries the
// status — where net/http would cut the connection and the client learn nothing. Small
// buffers, and every buffer over TLS, are copied into a chunk first, by a copy a fault stops
// before anything of the chunk is written.
//
// check, when set (setCheck), is asked before the last byte of each message's body is
// written: the rest of the body is written (straight from the mapping) and that byte copied
// first, so that a message read from a file that changed meanwhile is never whole on the wire —
// the stream ends one byte short of it, which no Arrow reader takes as a stream's end (a body
// is read whole, its length said by its metadata), and the trailer says why.
type streamWriter struct {
	srv     *Server
	w       http.ResponseWriter
	tls     bool
	started bool
	conn    net.Conn
	bw      *bufio.Writer
	scratch []byte
	broken  error        // the connection failed: nothing more is sent
	inChunk bool         // a chunk is begun and not completed: the response cannot end well
	sent    atomic.Int64 // the bytes of the stream written to the connection
	rows    int64        // the rows of the record batches written
	check   func() error
}

// setCheck has the messages written from now on checked by check (nil: none).
func (s *streamWriter) setCheck(check func() error) { s.check = check }

// directWrite is the size from which a plaintext buffer is written straight to the socket.
const directWrite = 64 << 10

func (s *streamWriter) Start() error { return nil }

// start takes the connection over and writes the response's head.
func (s *streamWriter) start() error {
	if s.started {
		return s.broken
	}
	s.started = true
	conn, brw, err := http.NewResponseController(s.w).Hijack()
	if err != nil {
		s.broken = err
		return err
	}
	s.conn, s.bw = conn, brw.Writer
	s.srv.track(conn, false)
	s.srv.started.Add(1)
	conn.SetReadDeadline(time.Time{})
	s.deadline()
	version := ""
	if v := s.w.Header().Get(versionHeader); v != "" { // set by serveData: the entry's
		version = "\r\n" + versionHeader + ": " + v
	}
	_, err = s.bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: " + arrowStreamType + version +
		"\r\nTransfer-Encoding: chunked\r\nTrailer: " + statusHeader + "\r\nConnection: close\r\n\r\n")
	return s.fail(err)
}

// fail marks the connection broken by err (nil: not broken).
func (s *streamWriter) fail(err error) error {
	if err != nil && s.broken == nil {
		s.broken = err
	}
	return err
}

// Write sends p as one chunk.
func (s *streamWriter) Write(p []byte) (int, error) {
	if err := s.start(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if s.tls || len(p) < directWrite {
		return s.writeCopied(p)
	}
	s.deadline()
	s.inChunk = true
	fmt.Fprintf(s.bw, "%x\r\n", len(p))
	if err := s.bw.Flush(); err != nil {
		return 0, s.fail(err)
	}
	// Piece by piece, each within the stall timeout: a client that takes bytes too slowly is
	// cut, one that takes them steadily is not, however large the chunk.
	n := 0
	var err error
	for n < len(p) && err == nil {
		s.deadline()
		var k int
		k, err = s.conn.Write(p[n:min(len(p), n+stallPiece)])
		n += k
		s.sent.Add(int64(k))
	}
	if err != nil {
		if !errors.Is(err, syscall.EFAULT) {
			return n, s.fail(err)
		}
		// The mapping lost the page at p[n]: the chunk is completed with zeros (the trailer
		// tells the client to drop them) and the error goes up to Guard.
		if _, werr := s.bw.Write(make([]byte, len(p)-n)); werr != nil {
			s.fail(werr)
		}
	}
	if _, werr := s.bw.WriteString("\r\n"); werr != nil {
		return n, s.fail(werr)
	}
	s.inChunk = false
	if err != nil {
		// The kernel does not say where: reading the pages from p[n] on faults where it
		// stopped, and the fault's address names the file to Guard.
		touch(p[n:])
	}
	return n, err
}

// stallPiece is the most a data stream writes to its connection at once: each piece must be
// taken within the server's StallTimeout.
const stallPiece = 4 << 20

// deadline gives the client StallTimeout to take what is written next.
func (s *streamWriter) deadline() {
	s.conn.SetWriteDeadline(time.Now().Add(s.srv.opts.StallTimeout))
}

// sink keeps touch's reads.
var sink atomic.Uint32

// touch reads a byte of every page of p.
func touch(p []byte) {
	sum := byte(0)
	for i := 0; i < len(p); i += 4096 {
		sum += p[i]
	}
	sink.Add(uint32(sum))
}

// writeCopied sends p as chunks of copies of at most copyChunk bytes.
func (s *streamWriter) writeCopied(p []byte) (int, error) {
	const copyChunk = 256 << 10
	done := 0
	for len(p) > 0 {
		k := min(len(p), copyChunk)
		if cap(s.scratch) < k {
			s.scratch = make([]byte, copyChunk)
		}
		chunk := s.scratch[:k]
		memcopy.Copy(chunk, p[:k]) // a fault panics here, before the chunk is begun
		s.deadline()
		fmt.Fprintf(s.bw, "%x\r\n", k)
		s.bw.Write(chunk)
		if _, err := s.bw.WriteString("\r\n"); err != nil {
			return done, s.fail(err)
		}
		done += k
		s.sent.Add(int64(k))
		p = p[k:]
	}
	return done, nil
}

// WritePayload writes one message: its body's last byte only once check says its file is
// unchanged.
func (s *streamWriter) WritePayload(p arrowipc.Payload) error {
	meta := p.Meta()
	defer meta.Release()
	if err := ipc.WriteMessageMetadata(s, meta.Bytes()); err != nil {
		return err
	}
	if err := s.writeBody(p); err != nil {
		return err
	}
	s.rows += recordBatchRows(meta.Bytes())
	return nil
}

// writeBody writes p's body; with a check, all but its last byte, then the check, then the
// last byte, so that a message of a file's bytes is whole only once found unchanged.
func (s *streamWriter) writeBody(p arrowipc.Payload) error {
	if s.check == nil {
		return p.SerializeBody(s)
	}
	body := &heldBack{w: s}
	if err := p.SerializeBody(body); err != nil {
		return err
	}
	if !body.holds {
		return nil // no body: nothing of a file
	}
	if err := s.check(); err != nil {
		return err // the message one byte short: never taken as whole
	}
	_, err := s.Write(body.last[:])
	return err
}

// heldBack writes what it is given but its last byte, which it copies and holds.
type heldBack struct {
	w     io.Writer
	last  [1]byte
	holds bool // last holds a byte not yet written
}

func (h *heldBack) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if h.holds {
		if _, err := h.w.Write(h.last[:]); err != nil {
			return 0, err
		}
		h.holds = false
	}
	memcopy.Copy(h.last[:], p[len(p)-1:]) // read now, before the check (a fault panics here)
	if _, err := h.w.Write(p[:len(p)-1]); err != nil {
		return 0, err
	}
	h.holds = true
	return len(p), nil
}

// Close writes the end-of-stream marker.
func (s *streamWriter) Close() error {
	return ipc.WriteEndOfStream(s)
}

// finish ends a started response: the last chunk, with err's status as the trailer when the
// stream failed, and closes the connection. A connection that failed, or a chunk left
// incomplete, can only be cut: the client then sees the response end early, which it never
// takes as success.
func (s *streamWriter) finish(err error) {
	if s.conn == nil {
		return
	}
	defer s.srv.track(s.conn, true)
	defer s.conn.Close()
	if s.broken != nil || s.inChunk {
		return
	}
	s.deadline()
	s.bw.WriteString("0\r\n")
	if err != nil {
		st := status.Convert(err)
		s.bw.WriteString(statusHeader + ": " + strconv.Itoa(int(st.Code())) + " " + oneLine(st.Message()) + "\r\n")
	}
	s.bw.WriteString("\r\n")
	s.bw.Flush()
}

// splitListener hands the connections of one listener to gRPC or to the data endpoint by what
// they speak (see the package's data-endpoint note above).
type splitListener struct {
	lis        net.Listener
	tls        *tls.Config // nil: plaintext
	grpc, http *connQueue
	log        *slog.Logger
	once       sync.Once
	done       chan struct{}
}

func newSplitListener(lis net.Listener, cfg *tls.Config, log *slog.Logger) *splitListener {
	l := &splitListener{lis: lis, log: log, done: make(chan struct{})}
	l.grpc = &connQueue{addr: lis.Addr(), conns: make(chan net.Conn), done: l.done, close: l.Close}
	l.http = &connQueue{addr: lis.Addr(), conns: make(chan net.Conn), done: l.done, close: l.Close}
	if cfg != nil {
		base := cfg.Clone()
		own := base.GetConfigForClient
		base.GetConfigForClient = nil
		l.tls = &tls.Config{
			// gRPC clients offer "h2" alone (grpc-go) or with "grpc-exp" (gRPC C++); an HTTP
			// client that also speaks HTTP/1.1 (curl, Go's) gets it, and the data endpoint.
			GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
				c := base
				if own != nil {
					if o, err := own(hello); err != nil || o != nil {
						if err != nil {
							return nil, err
						}
						c = o
					}
				}
				c = c.Clone()
				if slices.Contains(hello.SupportedProtos, "h2") && !slices.Contains(hello.SupportedProtos, "http/1.1") {
					c.NextProtos = []string{"h2"}
				} else {
					c.NextProtos = []string{"http/1.1"}
				}
				return c, nil
			},
		}
	}
	return l
}

// run accepts connections until the listener is closed, sorting each on its own goroutine.
func (l *splitListener) run() error {
	for {
		c, err := l.lis.Accept()
		if err != nil {
			l.Close()
			return err
		}
		go l.sort(c)
	}
}

// sort hands c to the queue of what it speaks, or closes it when it says nothing in time.
func (l *splitListener) sort(c net.Conn) {
	c.SetDeadline(time.Now().Add(sniffTimeout))
	var to *connQueue
	if l.tls != nil {
		tc := tls.Server(c, l.tls)
		if err := tc.Handshake(); err != nil {
			logHandshake(l.log, c.RemoteAddr(), err)
			lingerClose(c)
			return
		}
		c = tc
		to = l.http
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			to = l.grpc
		}
	} else {
		br := bufio.NewReaderSize(c, 16)
		first, err := br.Peek(4)
		if err != nil {
			c.Close()
			return
		}
		c = &peekedConn{Conn: c, r: br}
		to = l.http
		if string(first) == "PRI " { // HTTP/2's connection preface
			to = l.grpc
		}
		if first[0] == 0x16 && first[1] == 0x03 { // a TLS handshake record: net/http answers it with an error
			l.log.Warn("flight: a client spoke TLS to this plaintext port", "client", c.RemoteAddr().String(),
				"hint", "it should dial grpc:// (or the server be started with --tls-cert and --tls-key)")
		}
	}
	c.SetDeadline(time.Time{})
	select {
	case to.conns <- c:
	case <-l.done:
		c.Close()
	}
}

// Close closes the listener and both queues.
func (l *splitListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.lis.Close()
	})
	return err
}

// connQueue is the net.Listener of one side of a splitListener.
type connQueue struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	close func() error
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error   { return q.close() }
func (q *connQueue) Addr() net.Addr { return q.addr }

// peekedConn is a connection whose first bytes were read into r, which reads them again.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if c.r.Buffered() > 0 {
		return c.r.Read(p)
	}
	return c.Conn.Read(p)
}

// errorLogWriter is the io.Writer of the HTTP server's error log: each line to the Logger.
type errorLogWriter struct{ log *slog.Logger }

func (w errorLogWriter) Write(p []byte) (int, error) {
	w.log.Debug("flight: http: " + strings.TrimSpace(string(p)))
	return len(p), nil
}
