package flight

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
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
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// ErrTooLarge is returned by Get when a tensor exceeds ClientOptions.MaxBytes.
var ErrTooLarge = errors.New("flight: tensor exceeds the client's byte limit")

// ErrInsecureEndpoint is returned by Get when a server over TLS names an endpoint in
// plaintext: following it would send the request, and any client certificate's peer its
// data, in clear.
var ErrInsecureEndpoint = errors.New("flight: an endpoint in plaintext from a server over TLS")

// DefaultMaxGetBytes bounds what one Get receives when ClientOptions leaves MaxBytes zero.
const DefaultMaxGetBytes = 64 << 30

// DefaultMaxRecvMessageBytes is the largest gRPC message a Client takes by default: a record
// batch of 1 GiB, far above what Arrow C++ and pyarrow servers send by default (a table's own
// batches; Arrow C++'s examples stream 16 MiB ones).
const DefaultMaxRecvMessageBytes = 1 << 30

// ClientOptions configure a Client. The zero value suits a default Server.
type ClientOptions struct {
	// TLS configures grpc+tls:// connections; nil uses the system's roots.
	TLS *tls.Config
	// Token, when set, is sent with every call as "authorization: Bearer TOKEN".
	Token string
	// MaxMessageBytes bounds every gRPC message the client sends: the record batches of Put
	// are split to fit. Default DefaultMaxMessageBytes (gRPC's default, which every server
	// takes).
	MaxMessageBytes int
	// MaxRecvMessageBytes bounds one gRPC message the client receives (gRPC holds a message
	// whole as it arrives): a larger one is an error wrapping limits.ErrExceeded that names
	// this option. Default DefaultMaxRecvMessageBytes, which takes the record batches Arrow
	// C++ and pyarrow servers send (they set no limit); never more than MaxBytes.
	MaxRecvMessageBytes int
	// MaxBytes bounds the bytes one Get receives. Default DefaultMaxGetBytes.
	MaxBytes int64
	// Allocator is where Put allocates record batches that cannot view a tensor's memory;
	// default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Limits bound what a server's replies may claim (see package limits); zero fields take
	// their defaults.
	Limits limits.Limits
	// TokenEndpoints are the servers, besides the one dialed, that receive Token when a
	// FlightInfo names them as endpoints ("grpc+tls://b:8815"; the scheme and host:port must
	// match). An endpoint on any other server is fetched without the token: a server cannot
	// make the client hand its credentials to a third party by listing it.
	TokenEndpoints []string
	// GRPCOnly makes Get fetch every stream by DoGet. Otherwise an endpoint that lists an
	// http:// or https:// location (the Flight specification's extended locations; ndarrow's
	// Server gives one) is fetched from it by a plain GET of an Arrow IPC stream, through the
	// same verified decoder and limits, and by DoGet when that fails before the stream starts.
	// The GET carries no token: such a URL is presigned. An http:// location is not followed
	// from a server reached over TLS.
	GRPCOnly bool
}

// Client fetches and uploads tensors over Arrow Flight. It is safe for concurrent use.
//
// Endpoints: Get follows the locations a FlightInfo lists, connecting to each other server
// once. It refuses to go from a server reached over TLS to an endpoint in plaintext
// (ErrInsecureEndpoint), and it sends the bearer token only to the server it dialed and to
// those ClientOptions.TokenEndpoints names.
type Client struct {
	uri    string
	origin origin
	opts   ClientOptions
	conn   *grpc.ClientConn
	fc     arrowflight.Client
	mu     sync.Mutex
	peers  map[string]*Client // other servers an endpoint named
	http   *http.Client       // for endpoints' data URLs
}

// origin is what identifies a server for credentials: its transport and its host:port.
type origin struct {
	tls  bool
	host string
}

// originOf parses a grpc://, grpc+tcp:// or grpc+tls:// URI.
func originOf(uri string) (origin, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return origin{}, fmt.Errorf("flight: %q is not a URI like grpc://host:port", uri)
	}
	switch u.Scheme {
	case "grpc", "grpc+tcp":
		return origin{false, u.Host}, nil
	case "grpc+tls":
		return origin{true, u.Host}, nil
	}
	return origin{}, fmt.Errorf("flight: %q: the scheme is grpc, grpc+tcp or grpc+tls, not %q", uri, u.Scheme)
}

// tokenCredentials sends a bearer token with every call.
type tokenCredentials string

func (t tokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity is false: a token may cross a loopback or private network in
// plaintext; use grpc+tls:// elsewhere.
func (tokenCredentials) RequireTransportSecurity() bool { return false }

// Dial returns a client for the server at uri: grpc://host:port (grpc+tcp:// too) or
// grpc+tls://host:port. It does not wait for the connection; the first call does. Close the
// client when done.
func Dial(uri string, opts ClientOptions) (*Client, error) {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxGetBytes
	}
	if opts.MaxRecvMessageBytes <= 0 {
		opts.MaxRecvMessageBytes = DefaultMaxRecvMessageBytes
	}
	opts.MaxRecvMessageBytes = int(min(int64(opts.MaxRecvMessageBytes), opts.MaxBytes, math.MaxInt32))
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	o, err := originOf(uri)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if o.tls {
		cfg := opts.TLS
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		creds = credentials.NewTLS(cfg)
	}
	dopts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// Flow-control windows and socket buffers sized for record batches of megabytes:
		// gRPC's defaults (64 KiB windows grown by its estimate, 32 KiB buffers) leave a
		// loopback or LAN stream waiting on window updates.
		// Frames received are read into memory outside the heap, reused (framePool).
		experimental.WithBufferPool(frames),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithReadBufferSize(socketBuffer),
		grpc.WithWriteBufferSize(socketBuffer),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(opts.MaxRecvMessageBytes), grpc.MaxCallSendMsgSize(opts.MaxMessageBytes)),
	}
	if opts.Token != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(tokenCredentials(opts.Token)))
	}
	conn, err := grpc.NewClient(o.host, dopts...)
	if err != nil {
		return nil, fmt.Errorf("flight: %s: %w", uri, err)
	}
	return &Client{uri: uri, origin: o, opts: opts, conn: conn, fc: arrowflight.NewClientFromConn(conn, nil), peers: map[string]*Client{}, http: dataClient(opts.TLS)}, nil
}

// dataClient returns the HTTP/1.1 client of data URLs, with the TLS configuration of gRPC's
// (roots, client certificates) offering HTTP/1.1 alone.
func dataClient(cfg *tls.Config) *http.Client {
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // no HTTP/2
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		ReadBufferSize:      64 << 10,
	}}
}

// Close closes the client's connections.
func (c *Client) Close() error {
	c.mu.Lock()
	peers := c.peers
	c.peers = map[string]*Client{}
	c.mu.Unlock()
	for _, p := range peers {
		p.Close()
	}
	c.http.CloseIdleConnections()
	return c.conn.Close()
}

// at returns the client for an endpoint's locations: this one when they are empty or name
// this server, else a connection to the first, made once with the same options but the
// token, which only the servers in TokenEndpoints receive. A plaintext endpoint of a server
// reached over TLS is refused.
func (c *Client) at(locs []*arrowflight.Location) (*Client, error) {
	if len(locs) == 0 || locs[0].GetUri() == c.uri || strings.HasPrefix(locs[0].GetUri(), "arrow-flight-reuse-connection:") {
		return c, nil
	}
	uri := locs[0].GetUri()
	o, err := originOf(uri)
	if err != nil {
		return nil, err
	}
	if c.origin.tls && !o.tls {
		return nil, fmt.Errorf("%w: %s names %s", ErrInsecureEndpoint, c.uri, uri)
	}
	if o == c.origin {
		return c, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.peers[uri]; ok {
		return p, nil
	}
	opts := c.opts
	if !c.sendsTokenTo(o) {
		opts.Token = ""
	}
	p, err := Dial(uri, opts)
	if err != nil {
		return nil, err
	}
	c.peers[uri] = p
	return p, nil
}

// sendsTokenTo reports whether the token may go to the server at o.
func (c *Client) sendsTokenTo(o origin) bool {
	for _, uri := range c.opts.TokenEndpoints {
		if allowed, err := originOf(uri); err == nil && allowed == o {
			return true
		}
	}
	return false
}

// Info describes a flight: one tensor (Kind, DType, Shape, DimNames), or a table of several
// columns (Kind KindTable, Shape its rows, one Info per column in Columns), and the columns of
// its table that have no tensor form, which its stream leaves out or ndarrow does not read
// (LeftOut).
type Info struct {
	Name      string
	Kind      dataset.Kind // empty when the flight holds no tensor ndarrow reads
	DType     string
	Shape     ndarray.Shape // ragged dimensions and a first dimension not announced -1
	DimNames  []string
	Schema    *arrow.Schema // of its record batches
	Rows      int64         // record batch rows: the first dimension, or a sparse tensor's entries; -1 when not announced
	Bytes     int64         // what the record batches' buffers hold; -1 when the server cannot tell before reading them
	Endpoints int
	Columns   []Info // a table's tensor columns, each named NAME.COLUMN as dataset names them; nil for one tensor
	LeftOut   []dataset.LeftOut
	// Version names what an ndarrow server serves under the name now: file-HEX for a tensor
	// of served files (a digest of each file's identity, size, modification time and change
	// time, or of an object's ETag or generation), upload-N for the Nth put since the server started; the
	// parts' versions joined with "+" for a flight of several shards. Two Infos with the same
	// Version describe the same bytes. Empty from other servers.
	Version string
	// Modified is when that version was made: the latest modification time of its files, or
	// the time of the upload; zero when not known.
	Modified time.Time
	// Skipped names the files of an ndarrow server's directory left out of the flight, which
	// it serves without them (serve --skip-unreadable), each "PATH: why" under the directory.
	Skipped []string
	// Unreadable names the files that keep an ndarrow server from serving the flight (a
	// listing describes it, with Rows -1; a Get of it fails with ErrUnreadable), each
	// "PATH: why" under the directory.
	Unreadable []string
}

// KindTable is the Kind of a flight whose record batches hold several columns: a table flight
// of an ndarrow server (a served file's or directory's table, an uploaded one: see Server),
// what a pyarrow do_put of a table leaves on another server, or what an Arrow C++ server
// serves of a file.
const KindTable dataset.Kind = kindTable

// Column returns the Info of the table column named name (NAME.COLUMN or COLUMN).
func (i Info) Column(name string) (Info, bool) {
	for _, c := range i.Columns {
		if c.Name == name || c.Name == i.Name+"."+name {
			return c, true
		}
	}
	return Info{}, false
}

// infoOf decodes a FlightInfo, verifying its schema within lim. A flight ndarrow serves says
// what it holds in its app_metadata; any other is described from its schema and counts.
func infoOf(fi *arrowflight.FlightInfo, lim limits.Limits) (Info, error) {
	d := fi.GetFlightDescriptor()
	info := Info{Rows: fi.GetTotalRecords(), Bytes: fi.GetTotalBytes(), Endpoints: len(fi.GetEndpoint())}
	if d != nil && len(d.Path) == 1 {
		info.Name = d.Path[0]
	}
	r, err := ipc.NewBatchReader(fi.GetSchema(), ipc.BatchOptions{Limits: lim, SkipUnsupported: true})
	if err != nil {
		return Info{}, fmt.Errorf("flight: %s: schema: %w", info.Name, err)
	}
	schema, skipped := r.Schema(), skippedColumns(r.Skipped(), info.Name)
	r.Release()
	info.Schema = schema
	columns, left := describeSchema(info.Name, schema, info.Rows)
	info.LeftOut = append(skipped, left...)
	var meta tensorMetadata
	switch {
	case json.Unmarshal(fi.GetAppMetadata(), &meta) != nil || meta.Kind == "": // not ndarrow's: its schema says
	case meta.Kind == kindTable: // the server's description of each column, and what it left out
		info.Version, info.Modified = meta.version()
		info.Skipped, info.Unreadable = meta.Skipped, meta.Unreadable
		info.Kind, info.Shape, info.Columns = KindTable, meta.Shape, columns
		info.LeftOut = append(info.LeftOut, meta.leftOutOf()...)
		for i, c := range meta.Columns {
			if i < len(columns) && columns[i].Name == c.Name {
				col := &info.Columns[i]
				col.Kind, col.DType, col.Shape, col.DimNames = dataset.Kind(c.Kind), c.DType, c.Shape, c.DimNames
				col.Version, col.Modified = info.Version, info.Modified
			}
		}
		return info, nil
	default:
		info.Kind, info.DType, info.Shape, info.DimNames = dataset.Kind(meta.Kind), meta.DType, meta.Shape, meta.DimNames
		info.Version, info.Modified = meta.version()
		info.Skipped, info.Unreadable = meta.Skipped, meta.Unreadable
		return info, nil
	}
	switch len(columns) {
	case 0:
	case 1:
		c := columns[0]
		info.Kind, info.DType, info.Shape, info.DimNames = c.Kind, c.DType, c.Shape, c.DimNames
	default:
		info.Kind, info.Shape, info.Columns = KindTable, ndarray.Shape{max(info.Rows, -1)}, columns
	}
	return info, nil
}

// version returns the version the metadata names and when it was made (zero when it says
// nothing or nothing RFC 3339).
func (m tensorMetadata) version() (string, time.Time) {
	t, _ := time.Parse(time.RFC3339Nano, m.Modified)
	return m.Version, t
}

// describeSchema describes the tensors record batches of schema hold, rows of them (-1: not
// known), named as dataset names them — what a schema says without reading any batch — and
// the columns that have no tensor form.
func describeSchema(name string, schema *arrow.Schema, rows int64) ([]Info, []dataset.LeftOut) {
	tensors, left, err := dataset.FromRecords(schema, nil, name)
	if err != nil {
		return nil, nil // not something ndarrow reads: Get says why
	}
	out := make([]Info, len(tensors))
	for i, t := range tensors {
		c := Info{Name: t.Name, Kind: t.ImpliedKind(), DType: t.DType().String(), DimNames: t.DimNames, Rows: rows, Bytes: -1, Endpoints: 1}
		if t.Sparse == nil { // a sparse tensor's shape is in its messages, not the schema
			c.Shape = slices.Clone(t.Shape())
			c.Shape[0] = max(rows, -1)
			switch n := rows * c.Shape[1:].Size(); {
			case rows < 0 || t.Dense == nil || t.DType() == ndarray.String:
			case t.DType() == ndarray.Bool:
				c.Bytes = (n + 7) / 8 // Arrow packs bools in bits
			default:
				c.Bytes = n * int64(t.DType().Size())
			}
		}
		out[i] = c
	}
	return out, left
}

// List returns the tensors the server serves, sorted by name.
func (c *Client) List(ctx context.Context) ([]Info, error) {
	stream, err := c.fc.ListFlights(ctx, &arrowflight.Criteria{})
	if err != nil {
		return nil, c.remote(err)
	}
	var out []Info
	for {
		fi, err := stream.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, c.remote(err)
		}
		info, err := infoOf(fi, c.opts.Limits)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
}

// Info describes the tensor named name: with sharded servers, all its parts.
func (c *Client) Info(ctx context.Context, name string) (Info, error) {
	fi, err := c.fc.GetFlightInfo(ctx, pathDescriptor(name))
	if err != nil {
		return Info{}, c.remote(err)
	}
	return infoOf(fi, c.opts.Limits)
}

func pathDescriptor(name string) *arrowflight.FlightDescriptor {
	return &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{name}}
}

// GetOption configures one Get.
type GetOption func(*getConfig)

type getConfig struct {
	progress func(received, total int64)
	version  func(string)
	info     func(Info)
}

// WithInfo has Get, GetTable and Take call f, once the tensors have arrived, with the Info
// of the flight they were fetched by (of a take, the take's: its rows and columns), whose
// Skipped names the files of a served directory the flight is served without.
func WithInfo(f func(Info)) GetOption {
	return func(g *getConfig) { g.info = f }
}

// WithVersion has Get call f, once the tensor has arrived, with the version of what it
// received: the version each endpoint's stream said it sent (see Info.Version), joined with
// "+" in endpoint order, or "" when the server names none (a server other than ndarrow's).
// It may differ from the Info's when the tensor changed between GetFlightInfo and DoGet; a
// stream always sends one version whole.
func WithVersion(f func(version string)) GetOption {
	return func(g *getConfig) { g.version = f }
}

// WithProgress has Get call f after each message with the bytes received so far and the
// total the server announced (0 when it did not). f is called from several goroutines when
// the tensor has several endpoints, never concurrently.
func WithProgress(f func(received, total int64)) GetOption {
	return func(g *getConfig) { g.progress = f }
}

// Get fetches the tensor named name: its FlightInfo, then every endpoint in parallel, the
// parts stacked along the first axis in endpoint order. name is a flight of one tensor, or a
// column of a table as List names it (NAME.COLUMN); a flight of several tensor columns is an
// error wrapping ErrTable (GetTable fetches them all). A dense tensor is received into one
// row-major array, allocated once for the rows the FlightInfo announces (growing past them, up
// to ClientOptions.MaxBytes), each message's values copied in as it arrives, so the tensor is
// held once; other tensors view copies of the message bodies. Everything received is
// verified before it is decoded.
func (c *Client) Get(ctx context.Context, name string, opts ...GetOption) (dataset.Tensor, error) {
	f, err := c.find(ctx, name)
	if err != nil {
		return dataset.Tensor{}, err
	}
	if f.column == "" && f.info.Kind == KindTable {
		names := make([]string, len(f.info.Columns))
		for i, col := range f.info.Columns {
			names[i] = col.Name
		}
		return dataset.Tensor{}, fmt.Errorf("flight: %s is a table of %d tensor columns (%s): get one by name, or all with GetTable: %w",
			name, len(names), strings.Join(names, ", "), ErrTable)
	}
	tensors, err := c.fetch(ctx, f, opts)
	if err != nil {
		return dataset.Tensor{}, err
	}
	if f.column == "" {
		if len(tensors) != 1 {
			return dataset.Tensor{}, fmt.Errorf("flight: %s: a stream of %d tensor columns, not one: %w", name, len(tensors), ipc.ErrInvalid)
		}
		t := tensors[0]
		t.Name, t.Column = name, ""
		return t, nil
	}
	for _, t := range tensors {
		if t.Name == f.column {
			return t, nil
		}
	}
	return dataset.Tensor{}, fmt.Errorf("flight: %s: the stream holds no column %s: %w", f.info.Name, f.column, ipc.ErrInvalid)
}

// GetTable fetches every tensor of the flight named name (see Get): the columns of a table,
// each named NAME.COLUMN as dataset names them and List describes them, or the one tensor of
// any other flight, named name.
func (c *Client) GetTable(ctx context.Context, name string, opts ...GetOption) ([]dataset.Tensor, error) {
	f, err := c.find(ctx, name)
	if err != nil {
		return nil, err
	}
	if f.column != "" {
		t, err := c.Get(ctx, name, opts...)
		return []dataset.Tensor{t}, err
	}
	tensors, err := c.fetch(ctx, f, opts)
	if err != nil {
		return nil, err
	}
	if f.info.Kind != KindTable && len(tensors) == 1 {
		tensors[0].Name, tensors[0].Column = name, ""
	}
	return tensors, nil
}

// Take fetches the given rows of the flight named name, in that order — an index may repeat,
// and a negative one counts from the end — with the columns named (COLUMN or NAME.COLUMN; all
// of them, in order, for none): one take (see TakeTicket) described by GetFlightInfo, then
// fetched by DoGet through the verified decoder Get uses. The tensors are named as GetTable
// names them: a table's columns NAME.COLUMN, the one tensor of any other flight name. A row
// outside the flight is an error wrapping table.ErrRowRange naming it and the flight's rows
// (the server's OutOfRange), a flight the server does not serve ErrNotFound, a column it does
// not have InvalidArgument; a take the server's memory budget cannot hold ResourceExhausted.
func (c *Client) Take(ctx context.Context, name string, rows []int64, columns []string, opts ...GetOption) ([]dataset.Tensor, error) {
	cmd := TakeTicket(name, rows, columns)
	desc := &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: cmd}
	// The rows go in the request, twice in the answer (its descriptor and its ticket), and
	// again in the DoGet of the ticket: each a message within the limits of both sides.
	if n := proto.Size(desc); n > c.opts.MaxMessageBytes {
		return nil, fmt.Errorf("flight: %s: a take of %d rows is a request of %d bytes, above the %d bytes this client sends (ClientOptions.MaxMessageBytes; get --max-message-bytes): take fewer rows at a time, or raise it to at least %d (the server's answer holds the rows twice: within its serve --max-message-bytes): %w",
			name, len(rows), n, c.opts.MaxMessageBytes, n, limits.ErrExceeded)
	}
	fi, err := c.fc.GetFlightInfo(ctx, desc)
	if err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted {
			if got, limit, ok := tooLarge(st.Message()); ok && got >= int64(len(cmd)) { // the server's receive limit, not ours
				return nil, &remoteError{sentinel: limits.ErrExceeded, status: err, msg: fmt.Sprintf(
					"flight: %s: a take of %d rows is a request of %d bytes, above the %d bytes %s receives (serve --max-recv-message-bytes): take fewer rows at a time",
					name, len(rows), got, limit, c.origin.host)}
			}
			if got, limit, ok := tooLargeToSend(st.Message()); ok { // the request was within ours: the server's answer
				return nil, &remoteError{sentinel: limits.ErrExceeded, status: err, msg: fmt.Sprintf(
					"flight: %s: a take of %d rows is an answer of %d bytes (it holds the rows twice), above the %d bytes %s sends (serve --max-message-bytes): take fewer rows at a time, or raise the server's limit",
					name, len(rows), got, limit, c.origin.host)}
			}
			if strings.Contains(st.Message(), limits.ErrExceeded.Error()) {
				return nil, &remoteError{sentinel: limits.ErrExceeded, status: err, msg: st.Message()}
			}
		}
		return nil, c.remote(err)
	}
	fi.FlightDescriptor = pathDescriptor(name) // described as the flight it takes from
	info, err := infoOf(fi, c.opts.Limits)
	if err != nil {
		return nil, err
	}
	tensors, err := c.fetch(ctx, found{fi: fi, info: info}, opts)
	if err != nil {
		return nil, err
	}
	if info.Kind != KindTable && len(tensors) == 1 {
		tensors[0].Name, tensors[0].Column = name, ""
	}
	return tensors, nil
}

// ErrTable is returned by Get for a flight of several tensor columns.
var ErrTable = errors.New("flight: a table of several tensors")

// found is the flight a name asks for: its FlightInfo, decoded, and the table column asked
// for (NAME.COLUMN; empty for the whole flight).
type found struct {
	fi     *arrowflight.FlightInfo
	info   Info
	column string
}

// maxColumnSplits bounds the names Get tries for NAME.COLUMN: one per dot, from the right.
const maxColumnSplits = 4

// find looks name up: a flight of that name, or else a table column List names so.
func (c *Client) find(ctx context.Context, name string) (found, error) {
	fi, err := c.fc.GetFlightInfo(ctx, pathDescriptor(name))
	if err == nil {
		info, err := infoOf(fi, c.opts.Limits)
		return found{fi: fi, info: info}, err
	}
	err = c.remote(err)
	end := len(name)
	for range maxColumnSplits {
		if !errors.Is(err, ErrNotFound) {
			break
		}
		dot := strings.LastIndexByte(name[:end], '.')
		if dot <= 0 {
			break
		}
		end = dot
		tfi, terr := c.fc.GetFlightInfo(ctx, pathDescriptor(name[:dot]))
		if terr != nil {
			if terr = c.remote(terr); !errors.Is(terr, ErrNotFound) {
				return found{}, terr
			}
			continue
		}
		info, ierr := infoOf(tfi, c.opts.Limits)
		if ierr != nil {
			return found{}, ierr
		}
		if _, ok := info.Column(name); ok && info.Kind == KindTable {
			return found{fi: tfi, info: info, column: name}, nil
		}
	}
	return found{}, err
}

// fetch fetches every endpoint of f in parallel and returns the tensors of its record
// batches, named as dataset names them, each stacked along the first axis in endpoint order.
func (c *Client) fetch(ctx context.Context, f found, opts []GetOption) ([]dataset.Tensor, error) {
	var cfg getConfig
	for _, o := range opts {
		o(&cfg)
	}
	fi, info, name := f.fi, f.info, f.info.Name
	if name == "" {
		name = f.column
	}
	if len(fi.Endpoint) == 0 {
		return nil, fmt.Errorf("flight: %s: a FlightInfo without endpoints", name)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := int64(0)
	if len(fi.Endpoint) == 1 { // a stream's result is allocated once, for the rows announced
		rows = max(fi.TotalRecords, 0)
	}
	g := &getter{name: name, rows: rows, schema: info.Schema, lim: c.opts.Limits, limit: c.opts.MaxBytes, total: max(fi.TotalBytes, 0), progress: cfg.progress}
	parts := make([][]dataset.Tensor, len(fi.Endpoint))
	versions := make([]string, len(fi.Endpoint))
	blocks, whole := endpointBlocks(fi, info, name, c.opts.MaxBytes)
	errs := make([]error, len(fi.Endpoint))
	var wg sync.WaitGroup
	for i, ep := range fi.Endpoint {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var block *dataset.Stacker
			if blocks != nil {
				block = blocks[i]
			}
			grpcLocs, dataURL := c.split(ep.GetLocation())
			var err error
			var pc *Client
			if dataURL != "" {
				parts[i], err = g.fetchURL(ctx, c, dataURL, block, &versions[i])
				var early *beforeStream
				if err == nil || !errors.As(err, &early) || (len(grpcLocs) == 0 && len(ep.GetLocation()) > 0) {
					if err != nil {
						errs[i] = fromRemote(hostOf(dataURL), err)
						cancel()
					}
					return
				}
			}
			pc, err = c.at(grpcLocs)
			if err == nil {
				parts[i], err = g.fetch(ctx, pc, ep.GetTicket(), block, &versions[i])
			}
			if err != nil {
				if pc == nil {
					pc = c
				}
				errs[i] = pc.remote(err)
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := parent.Err(); err != nil {
		return nil, fmt.Errorf("flight: %s: %w", name, err)
	}
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("flight: %s: endpoint %d: %w", name, i, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("flight: %s: %w", name, err)
	}
	if cfg.info != nil {
		cfg.info(info)
	}
	if cfg.version != nil {
		if slices.Contains(versions, "") {
			cfg.version("")
		} else {
			cfg.version(strings.Join(versions, "+"))
		}
	}
	if whole != nil {
		t, err := whole()
		if err != nil {
			return nil, fmt.Errorf("flight: %s: %w", name, err)
		}
		return g.assemble([][]dataset.Tensor{{t}}, info)
	}
	return g.assemble(parts, info)
}

// endpointBlocks returns, for a dense tensor whose endpoints each say how many rows they send
// (endpointMetadata, as ndarrow's sharded servers do), Stackers that receive each endpoint's
// rows into its block of one allocation, and the function that returns the whole; nil for
// any other flight, whose parts are stacked once all have arrived.
func endpointBlocks(fi *arrowflight.FlightInfo, info Info, name string, limit int64) ([]*dataset.Stacker, func() (dataset.Tensor, error)) {
	if len(fi.Endpoint) < 2 {
		return nil, nil
	}
	rows := make([]int64, len(fi.Endpoint))
	total := int64(0)
	for i, ep := range fi.Endpoint {
		var meta endpointMetadata
		if json.Unmarshal(ep.GetAppMetadata(), &meta) != nil || meta.Rows == nil || *meta.Rows < 0 || total+*meta.Rows < total {
			return nil, nil
		}
		rows[i] = *meta.Rows
		total += rows[i]
	}
	ts, _, err := dataset.FromRecords(info.Schema, nil, name)
	if err != nil || len(ts) != 1 || ts[0].Dense == nil || ts[0].Dense.Rank() == 0 || ts[0].DType() == ndarray.String {
		return nil, nil // strings are never stacked (streamDecoder)
	}
	cell := ts[0].Shape()[1:].Size() * int64(max(ts[0].DType().Size(), 1))
	if cell > 0 && total > min(limit, maxPreallocation)/cell { // what a peer announces is not trusted past that
		return nil, nil
	}
	blocks, whole, err := dataset.NewStackers(ts[0], rows)
	if err != nil {
		return nil, nil
	}
	return blocks, whole
}

// getter is the state the endpoints of one Get share.
type getter struct {
	name       string
	rows       int64 // what one endpoint's stream is announced to hold (0: not known)
	schema     *arrow.Schema
	lim        limits.Limits
	limit      int64
	total      int64
	received   atomic.Int64
	progressMu sync.Mutex
	progress   func(received, total int64)
}

// count adds n received bytes, failing past the limit.
func (g *getter) count(n int) error {
	got := g.received.Add(int64(n))
	if got > g.limit {
		return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, g.limit)
	}
	if g.progress != nil {
		g.progressMu.Lock()
		g.progress(got, g.total)
		g.progressMu.Unlock()
	}
	return nil
}

// fetch reads the stream of one ticket, each message decoded as it arrives (inside the
// codec's Unmarshal, while gRPC's buffer is lent: see streamCodec), and returns the tensors it
// holds; with block, the stream's rows go into it (endpointBlocks) and what it returns is not
// used.
func (g *getter) fetch(ctx context.Context, c *Client, t *arrowflight.Ticket, block *dataset.Stacker, version *string) ([]dataset.Tensor, error) {
	dec := &streamDecoder{name: g.name, lim: g.lim, capRows: g.rows, capBytes: g.limit, block: block}
	defer dec.release()
	frames.begin()
	defer frames.end()
	schemaChecked := false
	codec := &streamCodec{decode: func(header []byte, parts [][]byte) error {
		size := len(header)
		for _, p := range parts {
			size += len(p)
		}
		if err := g.count(size); err != nil {
			return err
		}
		if err := dec.addParts(header, parts); err != nil {
			return err
		}
		return g.checkSchema(dec, &schemaChecked)
	}}
	var header metadata.MD
	stream, err := c.fc.DoGet(ctx, t, grpc.ForceCodecV2(codec), grpc.Header(&header))
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := header.Get(versionHeader); len(v) == 1 {
			*version = v[0]
		}
	}()
	for {
		_, err := stream.Recv()
		if codec.err != nil {
			return nil, codec.err
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return dec.tensors()
}

// checkSchema checks, once (it does not change), that the schema of dec's stream is the
// FlightInfo's.
func (g *getter) checkSchema(dec *streamDecoder, checked *bool) error {
	if s := dec.schema(); s != nil && !*checked {
		*checked = true
		if !s.Equal(g.schema) {
			return fmt.Errorf("the stream's schema %v is not the FlightInfo's %v: %w", s, g.schema, ipc.ErrInvalid)
		}
	}
	return nil
}

// assemble stacks the parts of the endpoints in order, column by column. The kind and
// dimension names come with the record batches (dataset.Batch's field metadata); the
// dimension names the FlightInfo gives stand in when a server's batches carry none.
func (g *getter) assemble(parts [][]dataset.Tensor, info Info) ([]dataset.Tensor, error) {
	out := make([]dataset.Tensor, len(parts[0]))
	for c := range out {
		column := make([]dataset.Tensor, len(parts))
		for i, p := range parts {
			if len(p) != len(out) {
				return nil, fmt.Errorf("flight: %s: endpoint %d holds %d tensors, endpoint 0 %d: %w", g.name, i, len(p), len(out), ipc.ErrInvalid)
			}
			column[i] = p[c]
		}
		t, err := dataset.Concat(column)
		if err != nil {
			return nil, fmt.Errorf("flight: %w", err)
		}
		t.Name = column[0].Name
		dimNames := info.DimNames
		if col, ok := info.Column(t.Name); ok {
			dimNames = col.DimNames
		}
		if t.DimNames == nil && len(dimNames) == t.Shape().Rank() {
			t.DimNames = dimNames
		}
		out[c] = t
	}
	return out, nil
}

// GetDense fetches a dense tensor of element type T (see Client.Get).
func GetDense[T ndarray.Numeric](ctx context.Context, c *Client, name string, opts ...GetOption) (*ndarray.Dense[T], error) {
	t, err := c.Get(ctx, name, opts...)
	if err != nil {
		return nil, err
	}
	d, ok := t.Dense.(*ndarray.Dense[T])
	if !ok {
		return nil, fmt.Errorf("flight: %s is %s %v: %w", name, t.Kind, t.DType(), ndarray.ErrDType)
	}
	return d, nil
}

// GetRagged fetches a ragged array of element type T (see Client.Get).
func GetRagged[T ndarray.Element](ctx context.Context, c *Client, name string, opts ...GetOption) (*ragged.Array[T], error) {
	t, err := c.Get(ctx, name, opts...)
	if err != nil {
		return nil, err
	}
	a, ok := t.Ragged.(*ragged.Array[T])
	if !ok {
		return nil, fmt.Errorf("flight: %s is %s %v: %w", name, t.Kind, t.DType(), ndarray.ErrDType)
	}
	return a, nil
}

// GetSparse fetches a sparse tensor of element type T, in COO format (see Client.Get).
func GetSparse[T ndarray.Numeric](ctx context.Context, c *Client, name string, opts ...GetOption) (sparse.Tensor[T], error) {
	t, err := c.Get(ctx, name, opts...)
	if err != nil {
		return nil, err
	}
	a, ok := t.Sparse.(sparse.Tensor[T])
	if !ok {
		return nil, fmt.Errorf("flight: %s is %s %v: %w", name, t.Kind, t.DType(), ndarray.ErrDType)
	}
	return a, nil
}

// Put uploads t under name, replacing the server's tensor of that name once the whole upload
// has arrived and been checked. Dense tensors are sent without a copy into the record
// batches, which are split to fit the message limit.
func (c *Client) Put(ctx context.Context, name string, t dataset.Tensor) error {
	if err := CheckName(name); err != nil {
		return err
	}
	recs, err := t.Records(c.opts.Allocator, name, int64(c.opts.MaxMessageBytes-messageHeadroom))
	if errors.Is(err, dataset.ErrBatchTooLarge) {
		return fmt.Errorf("flight: %s: %w", name, splitTooLarge(err, c.opts.MaxMessageBytes, "put it with --max-message-bytes", "flight.ClientOptions.MaxMessageBytes"))
	} else if err != nil {
		return err // dataset's error names the tensor
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err := c.put(ctx, pathDescriptor(name), recs); err != nil {
		return fmt.Errorf("flight: %s: %w", name, err)
	}
	return nil
}

// PutTable uploads tensors, the columns of one table, under name as one DoPut of record
// batches each holding the same rows of every column, in order (dataset.Batch: split between
// rows to fit the message limit) — what a pyarrow do_put of a table sends. Each tensor names
// its Column (else its Name past "name."); all have as many rows. An ndarrow server stores the
// table flight name and each column as name.COLUMN, all at once, once the whole upload has
// arrived and been checked (a table of one column is stored as that tensor, under name).
func (c *Client) PutTable(ctx context.Context, name string, tensors []dataset.Tensor) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if len(tensors) == 0 {
		return fmt.Errorf("flight: %s: a table of no columns: %w", name, ndarray.ErrShape)
	}
	cols := slices.Clone(tensors)
	for i, t := range cols {
		if t.Column == "" {
			cols[i].Column = strings.TrimPrefix(t.Name, name+".")
		}
		if err := CheckName(name + "." + cols[i].Column); err != nil {
			return err
		}
	}
	rec, err := dataset.Batch(c.opts.Allocator, cols)
	if err != nil {
		return fmt.Errorf("flight: %s: %w", name, err)
	}
	defer rec.Release()
	recs, err := dataset.SplitRecord(rec, int64(c.opts.MaxMessageBytes-messageHeadroom))
	if err != nil {
		return fmt.Errorf("flight: %s: %w", name, splitTooLarge(err, c.opts.MaxMessageBytes, "put it with --max-message-bytes", "flight.ClientOptions.MaxMessageBytes"))
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err := c.put(ctx, pathDescriptor(name), recs); err != nil {
		return fmt.Errorf("flight: %s: %w", name, err)
	}
	return nil
}

// PutAll uploads tensors, the i-th under names[i], as one: the server holds each aside as it
// arrives and is checked, and stores them all at once when the last has (ActionCommit), so a
// reader sees all of them or none, and a failure part way stores none (ActionAbort). A server
// that takes no such uploads (it lists no commit action: a Flight server that is not ndarrow)
// gets them one by one, as Put sends them.
func (c *Client) PutAll(ctx context.Context, names []string, tensors []dataset.Tensor) error {
	if len(names) != len(tensors) {
		return fmt.Errorf("flight: PutAll: %d names for %d tensors: %w", len(names), len(tensors), ErrName)
	}
	for _, name := range names {
		if err := CheckName(name); err != nil {
			return err
		}
	}
	if !c.takesCommit(ctx) {
		for i, t := range tensors {
			if err := c.Put(ctx, names[i], t); err != nil {
				return err
			}
		}
		return nil
	}
	var id [16]byte
	_, _ = crand.Read(id[:])
	tx := hex.EncodeToString(id[:])
	for i, t := range tensors {
		err := c.stage(ctx, tx, names[i], t)
		if err != nil {
			_ = c.action(context.WithoutCancel(ctx), ActionAbort, []byte(tx))
			return err
		}
	}
	if err := c.action(ctx, ActionCommit, []byte(tx)); err != nil {
		return fmt.Errorf("flight: committing %d tensors: %w", len(names), err)
	}
	return nil
}

// stage uploads t under name in transaction tx.
func (c *Client) stage(ctx context.Context, tx, name string, t dataset.Tensor) error {
	recs, err := t.Records(c.opts.Allocator, name, int64(c.opts.MaxMessageBytes-messageHeadroom))
	if errors.Is(err, dataset.ErrBatchTooLarge) {
		return fmt.Errorf("flight: %s: %w", name, splitTooLarge(err, c.opts.MaxMessageBytes, "put it with --max-message-bytes", "flight.ClientOptions.MaxMessageBytes"))
	} else if err != nil {
		return err // dataset's error names the tensor
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	cmd, _ := json.Marshal(stageRequest{Tx: tx, Name: name})
	desc := &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: append([]byte(stageCommand), cmd...)}
	if err := c.put(ctx, desc, recs); err != nil {
		return fmt.Errorf("flight: %s: %w", name, err)
	}
	return nil
}

// takesCommit reports whether the server lists ActionCommit.
func (c *Client) takesCommit(ctx context.Context) bool {
	stream, err := c.fc.ListActions(ctx, &arrowflight.Empty{})
	if err != nil {
		return false
	}
	found := false
	for {
		a, err := stream.Recv()
		if err != nil {
			return found
		}
		found = found || a.GetType() == ActionCommit
	}
}

// action runs the action typ with body and drains its results.
func (c *Client) action(ctx context.Context, typ string, body []byte) error {
	stream, err := c.fc.DoAction(ctx, &arrowflight.Action{Type: typ, Body: body})
	if err != nil {
		return c.remote(err)
	}
	return c.remote(drain(stream.Recv))
}

// put sends the record batches of the tensor named name in one DoPut.
func (c *Client) put(ctx context.Context, desc *arrowflight.FlightDescriptor, recs []arrow.Record) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.fc.DoPut(ctx, grpc.ForceCodec(flightDataCodec{}))
	if err != nil {
		return c.remote(err)
	}
	w := arrowflight.NewRecordWriter(stream, arrowipc.WithSchema(recs[0].Schema()), arrowipc.WithAllocator(c.opts.Allocator))
	w.SetFlightDescriptor(desc)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return c.remote(putError(stream, err))
		}
	}
	if err := w.Close(); err != nil {
		return c.remote(putError(stream, err))
	}
	if err := stream.CloseSend(); err != nil {
		return c.remote(err)
	}
	return c.remote(drain(stream.Recv))
}

// putError returns the server's status when a send failed because the server ended the call.
func putError(stream arrowflight.FlightService_DoPutClient, err error) error {
	if errors.Is(err, io.EOF) {
		for {
			if _, rerr := stream.Recv(); rerr != nil {
				if rerr == io.EOF {
					return err
				}
				return rerr
			}
		}
	}
	return err
}

// Delete deletes the tensor named name on the server.
func (c *Client) Delete(ctx context.Context, name string) error {
	stream, err := c.fc.DoAction(ctx, &arrowflight.Action{Type: ActionDelete, Body: []byte(name)})
	if err != nil {
		return c.remote(err)
	}
	return c.remote(drain(stream.Recv))
}

// drain receives until the end of a stream, returning the server's error if it sent one.
func drain[T any](recv func() (T, error)) error {
	for {
		if _, err := recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
