package flight

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/table"
)

// Message and upload limits a Server uses when Options leaves them zero.
const (
	// DefaultMaxMessageBytes is gRPC's default receive limit, which every Flight client
	// accepts without being told otherwise.
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxPutBytes bounds one DoPut upload.
	DefaultMaxPutBytes = 1 << 30
	// minMessageBytes is the smallest message limit a Server takes.
	minMessageBytes = 64 << 10
	// messageHeadroom is what a batch leaves of the message limit for the FlightData framing,
	// the record batch metadata and the padding of its buffers.
	messageHeadroom = 16 << 10

	// The flow-control windows of a stream and of a connection, and the size of a
	// connection's read and write buffers, on both sides: what one stream may have in flight
	// before the receiver acknowledges it, so a record batch of megabytes streams without
	// stopping (see BENCHMARKS.md).
	streamWindow = 16 << 20
	connWindow   = 64 << 20
	socketBuffer = 1 << 20
)

// Options configure a Server. The zero value serves plaintext gRPC without authentication,
// read-only, with the default limits.
type Options struct {
	// Writable makes the server take uploads (DoPut, and the commit and abort of a PutAll's
	// transaction) and deletes (ActionDelete); without it they are refused with
	// codes.PermissionDenied (a Client's error is ErrReadOnly), and only what the Store holds
	// is served. A Writable server without a Token takes them from any client that reaches it:
	// Serve logs a warning saying so.
	Writable bool
	// TLS, when set, makes the server speak TLS with this configuration (certificates set);
	// set ClientCAs and ClientAuth = tls.RequireAndVerifyClientCert for mutual TLS.
	TLS *tls.Config
	// Token, when set, is the bearer token every call must carry in its "authorization"
	// metadata ("Bearer TOKEN"); calls without it fail with codes.Unauthenticated.
	Token string
	// MaxMessageBytes bounds every gRPC message the server sends: DoGet splits tensors into
	// record batches that fit. Default DefaultMaxMessageBytes; at least 64 KiB. A message it
	// receives is bounded by MaxPutBytes instead (an upload in one batch).
	MaxMessageBytes int
	// MaxPutBytes bounds the bytes of one DoPut upload. Default DefaultMaxPutBytes.
	MaxPutBytes int64
	// Location is the URI clients reach this server at ("grpc://host:8815"), put in the
	// endpoints of its FlightInfo; empty means "the server you asked".
	Location string
	// Shards, when set, are the URIs of every server that holds a shard of the catalogue,
	// Location among them, in the order their rows stack. GetFlightInfo then asks each of
	// the others (with the same TLS roots and token, see Peer) for its part of the tensor and
	// answers with one endpoint per server that has one.
	Shards []string
	// Peer is how the server connects to the other shards.
	Peer ClientOptions
	// Allocator is where the server allocates what it sends; default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Limits bound what an upload may claim: the metadata, body and decompressed size of
	// its messages, the lengths of its arrays, the dense form of a sparse tensor. Zero
	// fields take their defaults (package limits), except MaxBodySize and MaxCopySize, which
	// default to MaxPutBytes: no message of an upload is larger, and no upload decompresses
	// to more.
	Limits limits.Limits
	// Logger receives what the server does not send to clients: an access record per call
	// (see accesslog.go), failed authentications and TLS handshakes, problems of its TLS
	// certificate at Serve, what its budgets hold (StatusInterval), the stack of a panic in a
	// handler. Default slog.Default().
	Logger *slog.Logger
	// StatusInterval is how often the log says what the budgets hold, the connections and
	// calls under way and the page cache (ServerStatus): at info when that changed since the
	// last record at info, else at debug. Default DefaultStatusInterval; negative: never.
	StatusInterval time.Duration
	// PageCache, when set, keeps the pages of served compressed Parquet files that takes and
	// mini-batches decompress (and the columns they decode whole), so that each is decoded
	// once, not once per request or batch that needs it (see dataset.PageCache; its pages
	// are file-backed, outside MemoryBudget; a served file's old version's are dropped once
	// a Rescan replaced it and no request reads it). It stays the caller's: close it after
	// the server has stopped.
	PageCache *dataset.PageCache
	// MemoryBudget bounds the memory the server holds for its clients' data: what DoGets and
	// data URLs hold decoding (Parquet row groups, estimated as dataset.Source.DecodeBytes
	// does), what uploads hold while they arrive and once staged or stored, until they are
	// deleted. Each reserves before it allocates: a DoGet whose next chunk does not fit waits
	// its turn (BudgetWait); an upload that does not fit waits as long when it holds nothing
	// yet or is the eldest holding any, and otherwise fails at once (uploads never wait on one
	// another in a circle); a wait that ends without room fails with ResourceExhausted naming
	// the budget — nothing is evicted to make room. 0 takes DefaultMemoryBudget();
	// negative means no bound.
	//
	// Beyond MemoryBudget and WireBudget the process holds at most a constant 192 MiB of
	// anonymous memory — the Go runtime, the frame buffers kept for reuse (at most 80 MiB),
	// garbage not yet collected (with the collector's memory limit at the two budgets and
	// 256 MiB, as serve sets it) — and the pages of the served files it reads, which are
	// mapped: file-backed, the kernel's page cache to drop, at most the files' size. Fetches
	// whose clients read them take little of WireBudget (a connection's buffers, a call's
	// window, the frames of the message being sent), so that N fetches at once hold at most
	// MemoryBudget + 192 MiB of anonymous memory whatever N, and that plus the pages of the
	// file resident (TestConcurrentFetchesWithinTheBudget: 8 and 32 clients). Counted at
	// three times their values while decoded, a float32 tensor's row groups take less than
	// the budget: 8 and 32 fetches of a 256 MiB one (two 128 MiB row groups) under budgets
	// of 512 MiB to 2 GiB held 0.6–1.0 times the budget of anonymous memory.
	MemoryBudget int64
	// WireBudget bounds the memory that what arrives on the server's port holds before a
	// handler takes it: about 2 MiB for each connection, the 1 MiB flow-control window of each
	// call, and what each message may hold while it is received (MaxRecvMessageBytes). A
	// connection that does not fit is closed at once, a call refused with ResourceExhausted,
	// a message waits its turn up to BudgetWait. 0 takes DefaultWireBudget(MemoryBudget);
	// negative means no bound (and no MemoryBudget means none either).
	WireBudget int64
	// BudgetWait is how long a request waits for its share of MemoryBudget or WireBudget
	// before failing with ResourceExhausted. Default DefaultBudgetWait.
	BudgetWait time.Duration
	// MaxRecvMessageBytes bounds one message the server receives, an upload's record batch
	// included: gRPC refuses a larger one, before reading it, with ResourceExhausted. Default
	// DefaultServerRecvMessageBytes, at most MaxPutBytes and the framing's headroom; a client
	// uploading a table in larger batches splits them (pyarrow: write_table(table,
	// max_chunksize=ROWS)).
	MaxRecvMessageBytes int
	// StallTimeout bounds how long a message may take to arrive (a request, each batch of an
	// upload) or to be taken by the client (each batch of a DoGet, each chunk of a data URL's
	// response): a call that stalls longer ends with DeadlineExceeded, a data URL's response
	// is cut, and what they held is given back. Default DefaultStallTimeout.
	StallTimeout time.Duration
	// IdleTimeout is how long a connection may go without a call before the server closes
	// it. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConnections bounds the connections the server holds at once; one more is closed as
	// soon as it is accepted. Default DefaultMaxConnections.
	MaxConnections int
	// MaxStreams bounds the calls one connection may have under way at once (HTTP/2's
	// SETTINGS_MAX_CONCURRENT_STREAMS). Default DefaultMaxStreams.
	MaxStreams int
	// GRPCOnly serves gRPC alone. Otherwise the port also answers HTTP/1.1 GETs of the data
	// of its flights, and each FlightEndpoint lists, after its gRPC location, a presigned
	// http:// (https:// with TLS) URL of it (see "data endpoint" in httpdata.go): a client
	// that knows the Flight specification's extended locations fetches it there, without
	// gRPC's framing; any other uses DoGet.
	GRPCOnly bool
	// DataURLLifetime is how long those URLs are good for. Default DefaultDataURLLifetime.
	DataURLLifetime time.Duration
}

// Server is an Arrow Flight server for the tensors of a Store.
type Server struct {
	arrowflight.BaseFlightServer
	store   *Store
	opts    Options
	grpc    *grpc.Server
	peers   sync.Map // URI → *Client
	staged  *staging // uploads of open transactions (ActionCommit)
	budget  *budget  // Options.MemoryBudget
	wire    *budget  // Options.WireBudget
	maxRecv int      // the largest message received
	httpOn  bool     // the port answers GETs of data URLs (not GRPCOnly, a TCP listener)
	signer  signer   // of the data URLs
	mu      sync.Mutex
	http    *http.Server          // the data endpoint's, when httpOn
	streams sync.WaitGroup        // its streams under way
	started atomic.Int64          // its streams started, ever
	conns   map[net.Conn]struct{} // the connections they took over
	active  activeStreams         // the Flight calls and data streams under way (Shutdown)

	health      *health.Server                   // its states (health.go)
	calls       atomic.Int64                     // gRPC calls under way
	dataStreams atomic.Int64                     // data URLs' responses under way
	admitted    atomic.Pointer[admittedListener] // what Serve accepts on
}

// NewServer returns a server for the tensors of store. Start it with Serve; stop it with
// Shutdown (the store stays the caller's to Close).
func NewServer(store *Store, opts Options) (*Server, error) {
	if opts.MaxMessageBytes == 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxMessageBytes < minMessageBytes {
		return nil, fmt.Errorf("flight: a message limit of %d bytes is below %d", opts.MaxMessageBytes, minMessageBytes)
	}
	if opts.MaxPutBytes <= 0 {
		opts.MaxPutBytes = DefaultMaxPutBytes
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Limits.MaxBodySize <= 0 {
		opts.Limits.MaxBodySize = opts.MaxPutBytes
	}
	if opts.Limits.MaxCopySize <= 0 {
		opts.Limits.MaxCopySize = opts.MaxPutBytes
	}
	opts.Limits = opts.Limits.WithDefaults()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if len(opts.Shards) > 0 && opts.Location == "" {
		return nil, errors.New("flight: Shards needs this server's Location among them")
	}
	if len(opts.Shards) > 0 && opts.Peer.Token == "" {
		opts.Peer.Token = opts.Token
	}
	if opts.MemoryBudget == 0 {
		opts.MemoryBudget = DefaultMemoryBudget()
	}
	if opts.WireBudget == 0 && opts.MemoryBudget > 0 {
		opts.WireBudget = DefaultWireBudget(opts.MemoryBudget)
	}
	if opts.BudgetWait <= 0 {
		opts.BudgetWait = DefaultBudgetWait
	}
	if opts.DataURLLifetime <= 0 {
		opts.DataURLLifetime = DefaultDataURLLifetime
	}
	if opts.StatusInterval == 0 {
		opts.StatusInterval = DefaultStatusInterval
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = DefaultStallTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.MaxRecvMessageBytes <= 0 {
		opts.MaxRecvMessageBytes = DefaultServerRecvMessageBytes
	}
	// An upload's message may be as large as the upload, within the receive limit.
	maxRecv := int(min(int64(opts.MaxRecvMessageBytes), opts.MaxPutBytes+messageHeadroom, math.MaxInt32))
	maxRecv = max(maxRecv, minMessageBytes)
	s := &Server{store: store, opts: opts, staged: &staging{budget: 4 * opts.MaxPutBytes}, maxRecv: maxRecv, health: newHealth(),
		budget: newBudget("memory budget", "serve --memory-budget", opts.MemoryBudget, opts.BudgetWait),
		wire:   newBudget("wire budget", "serve --wire-budget", opts.WireBudget, opts.BudgetWait)}
	if s.budget != nil {
		s.budget.log = opts.Logger
	}
	if s.wire != nil {
		// Uploads' messages and DoGets' frames, which wait their turn, leave part of the wire
		// budget to the calls that start (their windows, their connections'), which cannot
		// wait, and to requests arriving, which go first: a server busy with uploads still
		// answers a listing or a delete.
		s.wire.headroom = max(s.wire.size/8, 2*int64(maxRecv))
	}
	if need := minWireBudget(maxRecv, opts.MaxMessageBytes); s.wire != nil && s.wire.size < need {
		return nil, fmt.Errorf("flight: a wire budget of %d bytes (serve --wire-budget) holds not even one call receiving a message of %d bytes (serve --max-recv-message-bytes) and sending two of %d (serve --max-message-bytes) beside the room it keeps for requests: it takes at least %d bytes",
			s.wire.size, maxRecv, opts.MaxMessageBytes, need)
	}
	gopts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxRecv),
		grpc.MaxSendMsgSize(opts.MaxMessageBytes),
		grpc.ForceServerCodecV2(serverCodec{}),
		// A call's window is what a client may send it before the server reads: each call
		// reserves it from the wire budget (admission.go). The connection's is decoupled from
		// what the server reads, so it bounds nothing and may be large.
		grpc.InitialWindowSize(serverStreamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.ReadBufferSize(socketBuffer),
		grpc.WriteBufferSize(socketBuffer),
		grpc.MaxConcurrentStreams(uint32(opts.MaxStreams)),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: opts.IdleTimeout, // a connection without a call
			Time:              opts.IdleTimeout, // then a ping, which a dead peer does not answer
			Timeout:           20 * time.Second,
		}),
		grpc.ConnectionTimeout(sniffTimeout), // the HTTP/2 preface and settings
		grpc.InTapHandle(s.admitCall),
		grpc.StatsHandler(callStats{s}),
		grpc.ChainUnaryInterceptor(s.admitUnary, s.recoverUnary, s.authUnary),
		grpc.ChainStreamInterceptor(s.admitStream, s.recoverStream, s.authStream),
	}
	if opts.TLS != nil && opts.GRPCOnly {
		gopts = append(gopts, grpc.Creds(loggedTLS{credentials.NewTLS(opts.TLS), s.opts.Logger}))
	} // else Serve's splitListener terminates TLS and hands gRPC its connections
	if _, err := crand.Read(s.signer.key[:]); err != nil {
		return nil, fmt.Errorf("flight: a key for data URLs: %w", err)
	}
	s.grpc = grpc.NewServer(gopts...)
	arrowflight.RegisterFlightServiceServer(s.grpc, s)
	healthgrpc.RegisterHealthServer(s.grpc, healthService{Server: s.health, s: s})
	return s, nil
}

// minWireBudget is the smallest wire budget that, beside its headroom (an eighth of it, at
// least two messages received), holds one message received of maxRecv bytes and the two
// messages of maxMessage bytes a DoGet sends.
func minWireBudget(maxRecv, maxMessage int) int64 {
	one := int64(maxRecv) + 2*int64(maxMessage)
	return max(one+2*int64(maxRecv), (8*one+6)/7)
}

// Serve accepts connections on lis until Shutdown; it returns nil after a Shutdown. Unless
// Options.GRPCOnly, a TCP listener's connections are gRPC's or the data endpoint's by what
// they speak. Serve may be called once.
func (s *Server) Serve(lis net.Listener) error {
	s.warnWritable()
	admitted := &admittedListener{Listener: lis, s: s}
	s.admitted.Store(admitted)
	lis = admitted
	if s.opts.TLS != nil {
		s.logCertificates(lis.Addr())
	}
	defer s.logStatus()()
	if s.opts.GRPCOnly || lis.Addr().Network() != "tcp" {
		if s.opts.TLS != nil && !s.opts.GRPCOnly { // gRPC has no credentials of its own here
			cfg := s.opts.TLS.Clone()
			cfg.NextProtos = []string{"h2"}
			lis = &handshakeLoggingListener{Listener: tls.NewListener(lis, cfg), log: s.opts.Logger}
		}
		return s.serveGRPC(lis)
	}
	split := newSplitListener(lis, s.opts.TLS, s.opts.Logger)
	hs := &http.Server{
		Handler:           http.HandlerFunc(s.serveData),
		ReadHeaderTimeout: sniffTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          log.New(errorLogWriter{s.opts.Logger}, "", 0),
	}
	s.httpOn = true
	s.mu.Lock()
	s.http = hs
	s.mu.Unlock()
	go split.run()
	go hs.Serve(split.http)
	err := s.serveGRPC(split.grpc)
	split.Close()
	return err
}

func (s *Server) serveGRPC(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// track adds (or, with done, removes) a connection a data stream took over.
func (s *Server) track(c net.Conn, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if done {
		delete(s.conns, c)
		return
	}
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
}

// reuseConnection is the location that means "the server you asked" (Flight.rst, "Connection
// Reuse").
const reuseConnection = "arrow-flight-reuse-connection://?"

// localCommand is the command of a FlightDescriptor for the part of a tensor one shard holds,
// which shards ask one another for.
const localCommand = "ndarrow.local:"

// tensorMetadata is the app_metadata of a FlightInfo: what the tensor is, in JSON; or, for a
// table flight (Kind "table", Shape its rows, no DType), its columns and the columns left out
// (see table.go).
type tensorMetadata struct {
	Name     string            `json:"name,omitempty"` // in a PutResult: the name stored under
	Kind     string            `json:"kind"`
	DType    string            `json:"dtype,omitempty"`
	Shape    []int64           `json:"shape"`
	DimNames []string          `json:"dim_names,omitempty"`
	Columns  []columnMetadata  `json:"columns,omitempty"`
	LeftOut  []leftOutMetadata `json:"left_out,omitempty"`
	// Version names the version served (see Info.Version); Modified says when it was made,
	// RFC 3339.
	Version  string `json:"version,omitempty"`
	Modified string `json:"modified,omitempty"`
	// Skipped names the files of a served directory's table left out of the flight
	// (Store.SetSkipUnreadable), each "PATH: why" under the directory; Unreadable those that
	// keep it from being served (without SetSkipUnreadable): a ListFlights lists it with no
	// rows, and any other call for it fails with FailedPrecondition.
	Skipped    []string `json:"skipped,omitempty"`
	Unreadable []string `json:"unreadable,omitempty"`
}

func metadataOf(t dataset.Tensor) tensorMetadata {
	return tensorMetadata{Kind: string(t.Kind), DType: t.DType().String(), Shape: t.Shape(), DimNames: t.DimNames}
}

// versionHeader is the gRPC header of a DoGet (and the HTTP header of a data endpoint's
// stream) that names the version of the tensor the stream sends (tensorMetadata.Version).
const versionHeader = "ndarrow-version"

// endpointMetadata is the app_metadata of a FlightEndpoint ndarrow serves: the rows its
// stream sends, so that a client fetching the endpoints of several servers at once receives
// each into its block of one allocation.
type endpointMetadata struct {
	Rows    *int64 `json:"rows"`
	Version string `json:"version,omitempty"` // of the part the endpoint sends
}

// localInfo describes the tensor of entry e as served here.
//
// Unless the server is GRPCOnly, each endpoint lists two locations: where DoGet takes the
// ticket (Options.Location, or the Flight specification's "arrow-flight-reuse-connection://?",
// the server asked), which clients that take the first location use, then the presigned URL
// of the data endpoint on the host:port the call reached (dataLocation).
//
// The flight of a table with files that cannot be read (tensorMetadata.Unreadable), which a
// listing alone describes, has no rows or bytes (-1) and no data URL: its ticket's DoGet
// fails naming the files.
func (s *Server) localInfo(ctx context.Context, name string, e *entry) *arrowflight.FlightInfo {
	meta, _ := json.Marshal(e.meta)
	rows, bytes := e.rows, e.bytes
	unreadable := len(e.meta.Unreadable) > 0
	epMeta, _ := json.Marshal(endpointMetadata{Rows: &rows, Version: e.meta.Version})
	if unreadable {
		rows, bytes = -1, -1
		epMeta, _ = json.Marshal(endpointMetadata{})
	}
	ep := &arrowflight.FlightEndpoint{Ticket: &arrowflight.Ticket{Ticket: []byte(name)}, AppMetadata: epMeta}
	if s.opts.Location != "" {
		ep.Location = []*arrowflight.Location{{Uri: s.opts.Location}}
	}
	if u := s.dataLocation(ctx, ep.Ticket.Ticket); u != "" && !unreadable {
		if len(ep.Location) == 0 {
			ep.Location = []*arrowflight.Location{{Uri: reuseConnection}}
		}
		ep.Location = append(ep.Location, &arrowflight.Location{Uri: u})
	}
	return &arrowflight.FlightInfo{
		Schema:           arrowflight.SerializeSchema(e.schema, s.opts.Allocator),
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{name}},
		Endpoint:         []*arrowflight.FlightEndpoint{ep},
		TotalRecords:     rows,
		TotalBytes:       bytes,
		Ordered:          true,
		AppMetadata:      meta,
	}
}

// unreadableInfo describes, for a listing, the table name of a served directory none of whose
// files can be read (parts, "PATH: why" each): a table of no columns (an empty schema), no
// rows or bytes (-1), one endpoint whose DoGet fails naming the files.
func (s *Server) unreadableInfo(name string, parts []string) *arrowflight.FlightInfo {
	meta, _ := json.Marshal(tensorMetadata{Kind: kindTable, Unreadable: parts})
	epMeta, _ := json.Marshal(endpointMetadata{})
	ep := &arrowflight.FlightEndpoint{Ticket: &arrowflight.Ticket{Ticket: []byte(name)}, AppMetadata: epMeta}
	if s.opts.Location != "" {
		ep.Location = []*arrowflight.Location{{Uri: s.opts.Location}}
	}
	return &arrowflight.FlightInfo{
		Schema:           arrowflight.SerializeSchema(arrow.NewSchema(nil, nil), s.opts.Allocator),
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{name}},
		Endpoint:         []*arrowflight.FlightEndpoint{ep},
		TotalRecords:     -1,
		TotalBytes:       -1,
		Ordered:          true,
		AppMetadata:      meta,
	}
}

// nameOf returns the tensor name a descriptor asks for, and whether it asks for this shard's
// part only.
func nameOf(d *arrowflight.FlightDescriptor) (string, bool, error) {
	switch {
	case d == nil:
		return "", false, status.Error(codes.InvalidArgument, "no flight descriptor")
	case d.Type == arrowflight.DescriptorPATH && len(d.Path) == 1:
		return d.Path[0], false, nil
	case d.Type == arrowflight.DescriptorCMD && strings.HasPrefix(string(d.Cmd), localCommand):
		return strings.TrimPrefix(string(d.Cmd), localCommand), true, nil
	}
	return "", false, status.Errorf(codes.InvalidArgument, "a flight descriptor names one tensor: a path of one element, not %v", d)
}

// statusOf maps an error to a gRPC status: the sentinels of bad input to InvalidArgument,
// limits to ResourceExhausted, a flight of a table with files that cannot be read
// (ErrUnreadable) to FailedPrecondition — the server's files must be mended, or served
// without them, before it can be served: no retry of the call can succeed — anything else to
// Internal.
func statusOf(err error) error {
	return statusOr(err, codes.Internal)
}

// uploadStatus maps an error that decoding an upload gave: whatever it wraps, it comes from
// the client's bytes, so it is InvalidArgument unless a more precise code fits.
func uploadStatus(err error) error {
	return statusOr(err, codes.InvalidArgument)
}

// statusOr maps err to a status, with code for errors no sentinel places.
func statusOr(err error, code codes.Code) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, limits.ErrExceeded):
		code = codes.ResourceExhausted
	case errors.Is(err, table.ErrRowRange):
		code = codes.OutOfRange
	case errors.Is(err, ErrTicket), errors.Is(err, table.ErrNoColumn):
		code = codes.InvalidArgument
	case errors.Is(err, ErrName), errors.Is(err, arrow.ErrInvalid), errors.Is(err, ipc.ErrUnsupported), errors.Is(err, parquet.ErrUnsupported),
		errors.Is(err, dataset.ErrNotTensors), errors.Is(err, ndarray.ErrDType), errors.Is(err, ndarray.ErrShape),
		errors.Is(err, ndarray.ErrIndex), errors.Is(err, ragged.ErrInvalid), errors.Is(err, sparse.ErrInvalid),
		errors.Is(err, arrowtensor.ErrNull), errors.Is(err, arrowtensor.ErrUnsupported):
		code = codes.InvalidArgument
	case errors.Is(err, dataset.ErrBatchTooLarge), errors.Is(err, ErrFromDirectory), errors.Is(err, ErrUnreadable):
		code = codes.FailedPrecondition
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}

// GetFlightInfo describes a tensor: with Shards, the parts every shard holds, one endpoint
// each, in row order. A descriptor whose command is a take (see TakeTicket) is described as
// its answer, checked but not read: one endpoint, on this server, whose ticket is the take; a
// batches command (see BatchesTicket) likewise.
func (s *Server) GetFlightInfo(ctx context.Context, d *arrowflight.FlightDescriptor) (*arrowflight.FlightInfo, error) {
	if d.GetType() == arrowflight.DescriptorCMD && isBatches(d.GetCmd()) {
		return s.batchesInfo(ctx, d.GetCmd())
	}
	if d.GetType() == arrowflight.DescriptorCMD && isTake(d.GetCmd()) {
		return s.takeInfo(ctx, d.GetCmd())
	}
	name, local, err := nameOf(d)
	if err != nil {
		return nil, err
	}
	callOf(ctx).noteFlight(name, "")
	if local || len(s.opts.Shards) == 0 {
		e, err := s.store.get(name)
		if err != nil {
			return nil, statusOf(err)
		}
		defer e.release()
		return s.localInfo(ctx, name, e), nil
	}
	return s.shardedInfo(ctx, name)
}

// shardedInfo gathers the parts of a tensor from every shard.
func (s *Server) shardedInfo(ctx context.Context, name string) (*arrowflight.FlightInfo, error) {
	parts := make([]*arrowflight.FlightInfo, len(s.opts.Shards))
	errs := make([]error, len(s.opts.Shards))
	var wg sync.WaitGroup
	for i, uri := range s.opts.Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = s.shardInfo(ctx, uri, name)
		}()
	}
	wg.Wait()
	var out *arrowflight.FlightInfo
	var schema *arrow.Schema
	var versions []string // of the parts, in order
	var skipped []string  // the files the parts leave out
	modified := ""
	for i, p := range parts {
		switch {
		case status.Code(errs[i]) == codes.NotFound:
			continue
		case status.Code(errs[i]) == codes.FailedPrecondition: // a table with files that cannot be read
			return nil, status.Errorf(codes.FailedPrecondition, "shard %s: %s", s.opts.Shards[i], status.Convert(errs[i]).Message())
		case errs[i] != nil:
			return nil, status.Errorf(codes.Unavailable, "shard %s: %v", s.opts.Shards[i], errs[i])
		}
		var pm tensorMetadata
		if json.Unmarshal(p.AppMetadata, &pm) == nil && pm.Version != "" {
			versions = append(versions, pm.Version)
			modified = max(modified, pm.Modified) // RFC 3339 in UTC: in time order
		}
		for _, f := range pm.Skipped {
			if !slices.Contains(skipped, f) {
				skipped = append(skipped, f)
			}
		}
		sch, err := ipc.ReadSchema(p.Schema, ipc.BatchOptions{Limits: s.opts.Limits})
		if err != nil {
			return nil, status.Errorf(codes.Internal, "shard %s: schema: %v", s.opts.Shards[i], err)
		}
		for _, ep := range p.Endpoint {
			if len(ep.Location) == 0 {
				ep.Location = []*arrowflight.Location{{Uri: s.opts.Shards[i]}}
			}
		}
		if out == nil {
			out, schema = p, sch
			out.FlightDescriptor = &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{name}}
			continue
		}
		if !sch.Equal(schema) {
			return nil, status.Errorf(codes.FailedPrecondition, "shard %s holds %s as %v, an earlier shard as %v", s.opts.Shards[i], name, sch, schema)
		}
		out.Endpoint = append(out.Endpoint, p.Endpoint...)
		out.TotalRecords += p.TotalRecords
		if out.TotalBytes >= 0 {
			out.TotalBytes += p.TotalBytes
		}
		if p.TotalBytes < 0 { // unknown on one shard: unknown in all
			out.TotalBytes = -1
		}
	}
	if out == nil {
		return nil, statusOf(fmt.Errorf("%w: %q on any shard", ErrNotFound, name))
	}
	// The first dimension of the whole is the rows of all parts (sparse tensors, whose rows
	// are entries, are not split).
	// The version of the whole is its parts', joined with "+" in row order.
	var meta tensorMetadata
	if json.Unmarshal(out.AppMetadata, &meta) == nil && meta.Kind != "" {
		if len(meta.Shape) > 0 && !strings.HasPrefix(meta.Kind, "sparse_") {
			meta.Shape[0] = out.TotalRecords
			for _, c := range meta.Columns { // a table's
				if len(c.Shape) > 0 {
					c.Shape[0] = out.TotalRecords
				}
			}
		}
		meta.Version, meta.Modified = strings.Join(versions, "+"), modified
		meta.Skipped = skipped
		out.AppMetadata, _ = json.Marshal(meta)
	}
	return out, nil
}

// shardInfo returns the FlightInfo of the part of name the shard at uri holds.
func (s *Server) shardInfo(ctx context.Context, uri, name string) (*arrowflight.FlightInfo, error) {
	if uri == s.opts.Location {
		e, err := s.store.get(name)
		if err != nil {
			return nil, statusOf(err)
		}
		defer e.release()
		return s.localInfo(ctx, name, e), nil
	}
	c, err := s.peer(uri)
	if err != nil {
		return nil, err
	}
	return c.fc.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: []byte(localCommand + name)})
}

// peer returns a client for the shard at uri, connecting once.
func (s *Server) peer(uri string) (*Client, error) {
	if c, ok := s.peers.Load(uri); ok {
		return c.(*Client), nil
	}
	c, err := Dial(uri, s.opts.Peer)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.peers.LoadOrStore(uri, c); loaded {
		c.Close()
		return prev.(*Client), nil
	}
	return c, nil
}

// GetSchema returns the schema of a tensor's record batches.
func (s *Server) GetSchema(ctx context.Context, d *arrowflight.FlightDescriptor) (*arrowflight.SchemaResult, error) {
	name, _, err := nameOf(d)
	if err != nil {
		return nil, err
	}
	callOf(ctx).noteFlight(name, "")
	e, err := s.store.get(name)
	if err != nil {
		return nil, statusOf(err)
	}
	defer e.release()
	return &arrowflight.SchemaResult{Schema: arrowflight.SerializeSchema(e.schema, s.opts.Allocator)}, nil
}

// ListFlights sends one FlightInfo per tensor of this server whose name starts with the
// criteria's expression, sorted by name — those of tables with files that cannot be read too,
// with no rows and the files in their app_metadata's "unreadable" (a table none of whose
// files can be read listed by its name alone), which any other call for them refuses.
func (s *Server) ListFlights(c *arrowflight.Criteria, stream arrowflight.FlightService_ListFlightsServer) error {
	prefix := string(c.GetExpression())
	callOf(stream.Context()).noteFlight(prefix, "")
	unreadable, parts := s.store.unreadableTables()
	names := s.store.Names()
	for _, name := range unreadable {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		var info *arrowflight.FlightInfo
		e, err := s.store.lookup(name)
		switch {
		case err == nil:
			info = s.localInfo(stream.Context(), name, e)
			e.release()
		case parts[name] != nil:
			info = s.unreadableInfo(name, parts[name])
		default:
			continue // deleted meanwhile
		}
		if err := stream.Send(info); err != nil {
			return err
		}
	}
	return nil
}

// DoGet sends a tensor as record batches, each under the message limit; a batches ticket
// (see BatchesTicket) the mini-batches it asks for, a batch's cursor in the app_metadata of
// its record batch; a take ticket (see TakeTicket) the rows it asks for, read and held (within the memory budget) before the first
// is sent, against the version of the flight current when it starts: a tensor added whole
// from its record batch, a Source chunk by chunk, each read as the stream reaches it. Every
// read of a mapped file happens on the handler's goroutine, under dataset.Guard: a file that
// shrinks under the stream, or (checked once every chunk is sent) was modified in place while
// it was sent — whatever its path names by then — fails this stream with codes.DataLoss naming
// the file; every other stream goes on.
func (s *Server) DoGet(t *arrowflight.Ticket, stream arrowflight.FlightService_DoGetServer) error {
	var e *entry
	var err error
	if isBatches(t.GetTicket()) {
		return s.doGetBatches(t.GetTicket(), stream)
	}
	if isTake(t.GetTicket()) {
		e, err = s.takeEntry(stream.Context(), t.GetTicket())
	} else {
		callOf(stream.Context()).noteFlight(string(t.GetTicket()), "")
		if e, err = s.store.get(string(t.GetTicket())); err != nil {
			err = statusOf(err)
		}
	}
	if err != nil {
		return err
	}
	defer e.release()
	if e.meta.Version != "" { // which version this stream sends, whatever the name serves by its end
		_ = stream.SetHeader(metadata.Pairs(versionHeader, e.meta.Version))
		callOf(stream.Context()).noteVersion(e.meta.Version)
	}
	frames.begin() // its messages are marshaled into frame buffers (serverCodec)
	defer frames.end()
	if err := s.streamEntry(stream.Context(), e, &payloadSender{stream: stream}); err != nil {
		return s.fileStatus(e, "DoGet", err)
	}
	return nil
}

// streamEntry writes the stream of the tensor of e to pw under dataset.Guard (sendEntry). When
// the stream fails and a file of e's Source was modified in place meanwhile, the error is
// that change (dataset.ErrFileChanged, naming the file): it explains whatever else failed (a
// Parquet row group that no longer decodes, a write that met a page with no bytes under it).
func (s *Server) streamEntry(ctx context.Context, e *entry, pw arrowipc.PayloadWriter) error {
	err := dataset.Guard(func() error { return s.sendEntry(ctx, e, pw) })
	if err != nil && (e.source != nil || e.columns != nil) && !errors.Is(err, dataset.ErrFileChanged) {
		if changed := e.checkUnchanged(); changed != nil {
			s.opts.Logger.Debug("flight: a stream failed on a changed file", "err", err.Error())
			return changed
		}
	}
	return err
}

// checkedSender is a payload writer that asks a check, once it has a message's body in hand
// and before the message can be taken as sent whole, whether the file the body comes from is
// unchanged, and fails the stream when it is not (payloadSender, streamWriter).
type checkedSender interface {
	setCheck(check func() error)
}

// sendEntry writes the stream of the tensor of e to pw: DoGet's FlightData, or the data
// endpoint's Arrow IPC stream. Each message of a file's bytes is checked against the file
// when pw is a checkedSender — the files of the chunk it comes from (dataset.CheckChunks: an
// fstat each), once the message is copied and before it is sent — so that no message of a
// version after the one the stream began with is sent; and a Source's files are checked
// (CheckUnchanged) once every chunk is written and before the stream's end (the data
// endpoint's end-of-stream marker), so that a stream whose file was modified in place under
// it never ends as whole.
func (s *Server) sendEntry(ctx context.Context, e *entry, pw arrowipc.PayloadWriter) (err error) {
	setCheck := func(func() error) {}
	if cs, ok := pw.(checkedSender); ok && (e.source != nil || e.columns != nil) {
		setCheck = cs.setCheck
	}
	gate := &abandonable{PayloadWriter: pw}
	w := arrowipc.NewWriterWithPayloadWriter(gate, arrowipc.WithSchema(e.schema), arrowipc.WithAllocator(s.opts.Allocator))
	defer func() {
		if err != nil {
			gate.abandon(w) // the dictionaries it last sent, let go
		}
	}()
	if e.record != nil { // its Source, when it has one, is its file's: the record views it
		setCheck(e.checkUnchanged)
		if err := s.send(ctx, w, e.schema, e.record); err != nil {
			return err
		}
		return s.closeWhole(w, e)
	}
	if e.columns != nil { // a table's columns, read chunk by chunk in lockstep
		return s.sendTable(ctx, e, w, setCheck)
	}
	// Each chunk is decoded (as the iteration reaches it) under its share of the memory
	// budget, reserved before and given back once it is sent.
	costs := e.source.DecodeBytes()
	reserve := func(chunk int) (func(), error) {
		if chunk >= len(costs) {
			return func() {}, nil
		}
		return s.budget.acquire(ctx, e.source.Name, costs[chunk])
	}
	release, err := reserve(0)
	if err != nil {
		return err
	}
	defer func() { release() }()
	chunk := 0
	for t, err := range e.source.Chunks(ctx) {
		if err != nil {
			return err
		}
		rec, err := t.Record(s.store.mem, e.source.Name)
		if err != nil {
			return fmt.Errorf("flight: %s: chunk %d: %w", e.source.Name, chunk, err)
		}
		srcs, i := []*dataset.Source{e.source}, chunk
		setCheck(func() error { return dataset.CheckChunks(srcs, i) })
		err = s.send(ctx, w, e.schema, rec)
		rec.Release()
		if err != nil {
			return err
		}
		release()
		release = func() {}
		chunk++
		if release, err = reserve(chunk); err != nil {
			release = func() {}
			return err
		}
	}
	return s.closeWhole(w, e)
}

// closeWhole ends the stream w wrote of e once e's Source, if any, is known to have been sent
// from one version of every file (CheckUnchanged).
func (s *Server) closeWhole(w *arrowipc.Writer, e *entry) error {
	if err := e.checkUnchanged(); err != nil {
		return err
	}
	return w.Close()
}

// fileStatus returns the status a client gets for err, which serving the tensor of e gave:
// codes.DataLoss for a file that changed while it was read, else as statusOf maps it; a file
// of a directory is named by its path under the directory, which the server's log alone
// (Options.Logger) gets whole.
func (s *Server) fileStatus(e *entry, method string, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	s.opts.Logger.Warn("flight: "+method+" failed", "err", err.Error())
	msg := err.Error()
	var fe *dataset.FileError
	if errors.As(err, &fe) {
		msg = strings.ReplaceAll(msg, fe.Path, relativePath(e.root, fe.Path))
	}
	if errors.Is(err, dataset.ErrFileChanged) {
		return status.Error(codes.DataLoss, msg+s.store.rescanHint(e))
	}
	st := status.Convert(statusOf(err))
	return status.Error(st.Code(), msg)
}

// relativePath returns path under root, or its base name when it is not under root: what a
// client is told of a server's file.
func relativePath(root, path string) string {
	if root != "" {
		if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(path)
}

// send writes rec to w in record batches under the message limit, with the stream's schema.
// A chunk's field metadata may differ from the first part's, and its strings be text where
// the stream's are bytes (conform); its types may not differ otherwise.
func (s *Server) send(ctx context.Context, w *arrowipc.Writer, schema *arrow.Schema, rec arrow.Record) error {
	return s.sendPieces(ctx, w, schema, rec, nil)
}

// sendPieces is send, running beforeLast (when not nil) before the last record batch is
// written.
func (s *Server) sendPieces(ctx context.Context, w *arrowipc.Writer, schema *arrow.Schema, rec arrow.Record, beforeLast func()) error {
	rec, err := arrowtensor.Conform(rec, schema)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	defer rec.Release()
	batches, err := dataset.SplitRecord(rec, int64(s.opts.MaxMessageBytes-messageHeadroom))
	if err != nil {
		return statusOf(splitTooLarge(err, s.opts.MaxMessageBytes, "serve it with --max-message-bytes", "flight.Options.MaxMessageBytes"))
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for i, b := range batches {
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		if beforeLast != nil && i == len(batches)-1 {
			beforeLast()
		}
		if err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// The actions a Server takes.
const (
	ActionList   = "list"   // one result per tensor: its name, kind, dtype and shape as JSON
	ActionDelete = "delete" // body: a tensor name; deletes it
	ActionReload = "reload" // rescans the served directories; one result: what changed, as JSON
	ActionCommit = "commit" // body: an upload transaction; stores its staged tensors at once
	ActionAbort  = "abort"  // body: an upload transaction; drops its staged tensors
)

// ListActions lists the actions the server takes: ActionList, ActionReload and ActionStatus,
// and on a Writable server ActionDelete, ActionCommit and ActionAbort.
func (s *Server) ListActions(_ *arrowflight.Empty, stream arrowflight.FlightService_ListActionsServer) error {
	for _, a := range []struct {
		*arrowflight.ActionType
		writes bool // taken by a Writable server only
	}{
		{&arrowflight.ActionType{Type: ActionList, Description: "one JSON object per tensor: name, kind, dtype, shape"}, false},
		{&arrowflight.ActionType{Type: ActionDelete, Description: "delete the tensor named by the body"}, true},
		{&arrowflight.ActionType{Type: ActionReload, Description: "rescan the served directories now; one JSON object: added, changed, removed, skipped"}, false},
		{&arrowflight.ActionType{Type: ActionCommit, Description: "store the tensors staged under the transaction the body names, all at once"}, true},
		{&arrowflight.ActionType{Type: ActionAbort, Description: "drop the tensors staged under the transaction the body names"}, true},
		{&arrowflight.ActionType{Type: ActionStatus, Description: "one JSON object: what the memory and wire budgets hold, the connections and calls under way, the page cache"}, false},
	} {
		if a.writes && !s.opts.Writable {
			continue
		}
		if err := stream.Send(a.ActionType); err != nil {
			return err
		}
	}
	return nil
}

// listEntry is one result of ActionList.
type listEntry struct {
	Name string `json:"name"`
	tensorMetadata
}

// ReloadResult is the result of ActionReload: the names of the tensors that appeared,
// changed and disappeared, and the problems the rescan found that it had not reported before,
// each naming its file by its path under the served directory.
type ReloadResult struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
	Skipped []string `json:"skipped,omitempty"`
}

// DoAction runs ActionList, ActionDelete, ActionReload, ActionCommit, ActionAbort or
// ActionStatus; a server that is not Writable refuses ActionDelete, ActionCommit and
// ActionAbort with codes.PermissionDenied (ErrReadOnly). ActionReload, which rescans the
// served directories (what SIGHUP does), and ActionStatus are no client's writes and are
// taken either way.
func (s *Server) DoAction(a *arrowflight.Action, stream arrowflight.FlightService_DoActionServer) error {
	named := ""
	if a.GetType() == ActionDelete {
		named = string(a.GetBody())
	}
	callOf(stream.Context()).noteAction(a.GetType(), named)
	switch a.GetType() {
	case ActionStatus:
		return stream.Send(s.statusResult())
	case ActionList:
		for _, name := range s.store.Names() {
			e, err := s.store.lookup(name)
			if err != nil {
				continue // deleted meanwhile
			}
			b, _ := json.Marshal(listEntry{Name: name, tensorMetadata: e.meta})
			e.release()
			if err := stream.Send(&arrowflight.Result{Body: b}); err != nil {
				return err
			}
		}
		return nil
	case ActionDelete:
		if err := s.refuseWrite("a delete"); err != nil {
			return err
		}
		if err := s.store.Delete(string(a.GetBody())); err != nil {
			return statusOf(err)
		}
		return stream.Send(&arrowflight.Result{Body: a.GetBody()})
	case ActionReload:
		changes, err := s.store.Rescan()
		res := ReloadResult{Added: changes.Added, Changed: changes.Changed, Removed: changes.Removed}
		if err != nil {
			s.opts.Logger.Warn("flight: reload: skipped", "err", err.Error())
			res.Skipped = s.store.describeProblems(err)
		}
		b, _ := json.Marshal(res)
		return stream.Send(&arrowflight.Result{Body: b})
	case ActionCommit, ActionAbort:
		if err := s.refuseWrite("an upload's " + a.GetType()); err != nil {
			return err
		}
		t, err := s.staged.take(string(a.GetBody()))
		if err != nil {
			return status.Error(codes.NotFound, err.Error())
		}
		if a.GetType() == ActionAbort {
			t.release()
			return stream.Send(&arrowflight.Result{Body: a.GetBody()})
		}
		b, _ := json.Marshal(s.store.commit(t))
		return stream.Send(&arrowflight.Result{Body: b})
	}
	return status.Errorf(codes.InvalidArgument, "unknown action %q (%s, %s, %s, %s, %s, %s)", a.GetType(), ActionList, ActionDelete, ActionReload, ActionCommit, ActionAbort, ActionStatus)
}

// Handshake answers a handshake with an empty payload: authentication is the bearer token
// every call carries, checked before any handler runs.
func (s *Server) Handshake(stream arrowflight.FlightService_HandshakeServer) error {
	for {
		if _, err := stream.Recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := stream.Send(&arrowflight.HandshakeResponse{}); err != nil {
			return err
		}
	}
}
