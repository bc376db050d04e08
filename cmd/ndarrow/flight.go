package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/flight"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/table"
)

// tlsFlags are the TLS and token flags shared by serve and the client commands.
type tlsFlags struct {
	cert, key, ca, token *string
	fs                   *flag.FlagSet
}

func addTLSFlags(fs *flag.FlagSet, server bool) tlsFlags {
	f := tlsFlags{token: fs.String("token", "", "bearer token (default $NDARROW_TOKEN)"), fs: fs}
	if server {
		f.cert = fs.String("tls-cert", "", "serve TLS with this PEM certificate (chain) file")
		f.key = fs.String("tls-key", "", "the PEM private key of --tls-cert")
		f.ca = fs.String("tls-client-ca", "", "require client certificates signed by this PEM CA (mutual TLS)")
	} else {
		f.cert = fs.String("tls-cert", "", "client certificate (PEM) for mutual TLS")
		f.key = fs.String("tls-key", "", "the PEM private key of --tls-cert")
		f.ca = fs.String("tls-ca", "", "trust servers signed by this PEM CA (default: the system's roots)")
	}
	return f
}

// bearer returns the token: --token's, or $NDARROW_TOKEN when --token is not given — read
// then, not as the flag's default, which --help would print.
func (f tlsFlags) bearer() string {
	given := false
	f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "token" })
	if given {
		return *f.token
	}
	return os.Getenv("NDARROW_TOKEN")
}

// config returns the TLS configuration the flags ask for, nil for none.
func (f tlsFlags) config(server bool) (*tls.Config, error) {
	if *f.cert == "" && *f.key == "" && *f.ca == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if (*f.cert == "") != (*f.key == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if *f.cert != "" {
		pair, err := tls.LoadX509KeyPair(*f.cert, *f.key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	} else if server {
		return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if *f.ca != "" {
		pem, err := os.ReadFile(*f.ca)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificates", *f.ca)
		}
		if server {
			cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
		} else {
			cfg.RootCAs = pool
		}
	}
	return cfg, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8815", "listen on HOST:PORT")
	watch := fs.Bool("watch", true, "follow DIR's changes as they are notified, or by listing an s3:// or gs:// prefix every --poll (SIGHUP and the reload action rescan either way)")
	poll := fs.Duration("poll", flight.DefaultPollInterval, "how often --watch lists an s3:// or gs:// prefix for changes")
	location := fs.String("location", "", "the URI clients reach this server at, put in FlightInfo endpoints (needed with --shards)")
	shards := fs.String("shards", "", "comma-separated URIs of every server holding a shard of the tensors, this one included, in row order")
	share := fs.String("shard", "", "K/N: serve only the K-th (from 0) of N shares of each tensor's files and row groups, N servers over the same DIR each serving one (list them, in K order, in --shards)")
	maxMsg := fs.Int("max-message-bytes", flight.DefaultMaxMessageBytes, "the largest gRPC message sent (DoGet splits tensors to fit; the FlightInfo of a take holds its rows twice, as JSON text); uploads are bounded by their size")
	grpcOnly := fs.Bool("grpc-only", false, "serve gRPC alone: no HTTP GET of each flight's data on the same port (and no http(s):// location in FlightInfo)")
	skipUnreadable := fs.Bool("skip-unreadable", false, "serve a table some of whose files cannot be read (cut short, not joining the other parts, two of one base name) without them, each named on stderr and in its flights' app_metadata (\"skipped\"); without it such a table is not served: a client asking for it is told which file")
	var lim serveLimits
	fs.Var(budgetSize{&lim.memory}, "memory-budget", "the most bytes the server holds for clients' data: what gets decode (Parquet row groups; one larger than the whole budget is decoded alone, beyond it, as the log says; mapped files take none), what uploads hold arriving, staged and stored until deleted; a get beyond it waits its turn, an upload fails (`SIZE`: bytes, or with KiB, MiB, GiB, TiB; default: a quarter of the machine's memory; -1: no bound)")
	fs.Var(budgetSize{&lim.wire}, "wire-budget", "the most bytes what arrives holds before it is handled: about 2 MiB per connection, 1 MiB per call, each message while it is received (`SIZE`; default: a quarter of --memory-budget, at least 512 MiB)")
	fs.IntVar(&lim.maxRecv, "max-recv-message-bytes", flight.DefaultServerRecvMessageBytes, "the largest message received: an upload's record batches must fit")
	fs.DurationVar(&lim.stall, "stall-timeout", flight.DefaultStallTimeout, "how long a message may take to arrive, or a client to take one, before its call is cut")
	fs.DurationVar(&lim.idle, "idle-timeout", flight.DefaultIdleTimeout, "how long a connection may stay without a call before it is closed")
	fs.IntVar(&lim.conns, "max-connections", flight.DefaultMaxConnections, "the most connections held at once; more are closed as they come")
	fs.BoolVar(&lim.writable, "writable", false, "take uploads (put) and deletes from clients; without it the server is read-only and refuses them with PermissionDenied (give --token too: without one, any client that reaches the server may write)")
	fs.DurationVar(&lim.grace, "grace", defaultGrace, "at SIGTERM or Ctrl-C, how long the calls under way may take to finish (new ones are refused) before they are cut with Unavailable")
	lim.pageCache = autoSize
	fs.Var(&lim.pageCache, "page-cache", "decode each page of served compressed Parquet files that takes and mini-batches read once, into a scratch file in TMPDIR of at most `SIZE` (auto: 16GiB, or half its free space if less, under ulimit -v a quarter of the address space it leaves; said on stderr when smaller so, or none; 0: none); a file's pages are dropped once its version is no longer served")
	tf := addTLSFlags(fs, true)
	lf := addLogFlags(fs)
	var tfi tfioFlags
	fs.StringVar(&tfi.endpoint, "tfio", "", "also stream the tensors to tensorflow-io's ArrowStreamDataset on tcp://A.B.C.D:PORT or unix://PATH")
	fs.StringVar(&tfi.tensors, "tfio-tensors", "", "comma-separated names of the tensors --tfio streams, as columns (default: all; equal row counts)")
	fs.Int64Var(&tfi.rowsPerBatch, "tfio-batch-rows", 1<<16, "rows per record batch of the --tfio stream")
	fs.Int64Var(&tfi.maxDense, "max-dense", limits.Default().MaxDenseElements, "the most elements a sparse tensor's dense form may hold in the --tfio stream")
	if code, ok := parseArgs(fs, "serve", args, stdout, stderr, 1, 1); !ok {
		return code
	}
	if *poll <= 0 {
		return usageError(stderr, "serve", fmt.Errorf("--poll %v: not a positive duration", *poll))
	}
	if lim.grace < 0 {
		return usageError(stderr, "serve", fmt.Errorf("--grace %v: a negative duration", lim.grace))
	}
	k, n, err := parseShare(*share)
	if err != nil {
		return usageError(stderr, "serve", err)
	}
	if n > 1 && *shards != "" && len(strings.Split(*shards, ",")) != n {
		return usageError(stderr, "serve", fmt.Errorf("--shard %s: --shards lists %d servers, not %d", *share, len(strings.Split(*shards, ",")), n))
	}
	logger, lines, err := lf.open(stderr)
	if err != nil {
		return usageError(stderr, "serve", err)
	}
	tfi.skipUnreadable, tfi.logger = *skipUnreadable, logger
	return finishCommand(ctx, stderr, "serve", serve(ctx, fs.Arg(0), *addr, *location, *shards, k, n, *maxMsg, lim, *watch, *poll, *grpcOnly, *skipUnreadable, tf, tfi, logger, stdout, lines))
}

// parseShare parses --shard K/N; "" is 0/1, the whole.
func parseShare(s string) (k, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	if !ok || kerr != nil || nerr != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("--shard %q: not K/N with 0 ≤ K < N", s)
	}
	return k, n, nil
}

// serveLimits are the flags that bound what clients can make a server hold, whether they may
// write, and how long they have at shutdown.
type serveLimits struct {
	memory, wire   int64
	maxRecv, conns int
	stall, idle    time.Duration
	pageCache      autoByteSize
	writable       bool
	grace          time.Duration
}

// defaultGrace is serve's --grace: what the calls under way have to finish at SIGTERM, within
// the 30 seconds Kubernetes gives a pod before SIGKILL.
const defaultGrace = 10 * time.Second

func serve(ctx context.Context, dir, addr, location, shards string, shareK, shareN int, maxMsg int, lim serveLimits, watch bool, poll time.Duration, grpcOnly, skipUnreadable bool, tf tlsFlags, tfi tfioFlags, logger *slog.Logger, stdout, stderr io.Writer) error {
	cfg, err := tf.config(true)
	if err != nil {
		return err
	}
	if err := readableDir(dir); err != nil {
		return err
	}
	// The flags and the address are checked before the directory is read: a bad one fails at
	// once, before a large directory is mapped.
	store := flight.NewStore(nil)
	defer store.Close()
	store.SetPollInterval(poll)
	store.SetSkipUnreadable(skipUnreadable)
	if err := store.SetShare(shareK, shareN); err != nil {
		return err
	}
	opts := flight.Options{TLS: cfg, Token: tf.bearer(), MaxMessageBytes: maxMsg, Location: location, GRPCOnly: grpcOnly,
		MemoryBudget: lim.memory, WireBudget: lim.wire, MaxRecvMessageBytes: lim.maxRecv,
		StallTimeout: lim.stall, IdleTimeout: lim.idle, MaxConnections: lim.conns, Writable: lim.writable, Logger: logger}
	budget, wire := lim.memory, lim.wire
	if budget == 0 {
		budget = flight.DefaultMemoryBudget()
	}
	if wire == 0 && budget > 0 {
		wire = flight.DefaultWireBudget(budget)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && budget > 0 && wire > 0 {
		// What the server holds for its clients is bounded by the two budgets. Collecting
		// garbage as the heap nears their sum, rather than at twice the live heap, keeps it
		// there.
		debug.SetMemoryLimit(budget + wire + 256<<20)
	}
	// The page cache is not closed: a handler cut off by a shutdown that did not end in time
	// may still read it. Its file has no name; the process gives it back as it ends.
	if opts.PageCache, err = newPageCache(int64(lim.pageCache), "serve", stderr); err != nil {
		return err
	}
	if shards != "" {
		opts.Shards = strings.Split(shards, ",")
		opts.Peer = flight.ClientOptions{TLS: peerTLS(cfg)}
	}
	srv, err := flight.NewServer(store, opts)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer lis.Close()
	names, err := store.AddDir(dir, limits.Limits{})
	reportSkipped(stderr, err, skipUnreadable)
	if tfi.endpoint != "" {
		tctx, stop := context.WithCancel(ctx)
		waitTFIO, err := startTFIO(tctx, dir, store, tfi, stdout, stderr)
		if err != nil {
			stop()
			return err
		}
		defer func() { stop(); _ = waitTFIO() }()
	}
	scheme := "grpc"
	if cfg != nil {
		scheme = "grpc+tls"
	}
	printBanner(ctx, stdout, logger, store, names, dir, scheme+"://"+lis.Addr().String())
	reportLeftOut(stderr, "serve", store.LeftOut())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	follow := followDir(ctx, store, watch, skipUnreadable, stdout, stderr)
	defer follow()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(stdout, "shutting down: the calls under way have %v to finish\n", lim.grace)
	sctx, cancel := context.WithTimeout(context.Background(), lim.grace)
	defer cancel()
	srv.Shutdown(sctx)
	return <-done
}

// printBanner prints serve's start-up banner on stdout: how many tensors and tables it serves
// from dir at uri and, when its log takes debug records, a line per flight.
func printBanner(ctx context.Context, stdout io.Writer, logger *slog.Logger, store *flight.Store, names []string, dir, uri string) {
	tables := store.Tables()
	fmt.Fprintf(stdout, "serving %d tensors%s from %s on %s (Ctrl-C stops)\n", len(names)-len(tables), tableCount(len(tables)), dir, uri)
	if logger == nil || !logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	for _, n := range names {
		if slices.Contains(tables, n) {
			fmt.Fprintf(stdout, "  %s (table: its columns together)\n", n)
			continue
		}
		fmt.Fprintf(stdout, "  %s\n", n)
	}
}

// tableCount says how many table flights there are beside the tensors, if any.
func tableCount(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " and 1 table"
	}
	return fmt.Sprintf(" and %d tables", n)
}

// reportLeftOut names, one line each on stderr, the columns of tables that have no tensor form
// and that command leaves out.
func reportLeftOut(stderr io.Writer, command string, left []dataset.LeftOut) {
	for _, l := range left {
		fmt.Fprintf(stderr, "ndarrow %s: %s\n", command, l)
	}
}

// reportSkipped prints the problems err joins, the tensor files that cannot be served, one
// line each: "unreadable:" for a file whose table is not served (without --skip-unreadable),
// "skipped:" for any other.
func reportSkipped(stderr io.Writer, err error, skipUnreadable bool) {
	if err == nil {
		return
	}
	problems := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		problems = j.Unwrap()
	}
	for _, p := range problems {
		label := "skipped"
		if !skipUnreadable && errors.Is(p, dataset.ErrUnreadable) {
			label = "unreadable"
		}
		for _, line := range strings.Split(p.Error(), "\n") {
			fmt.Fprintf(stderr, "ndarrow serve: %s: %s\n", label, line)
		}
	}
}

// followDir keeps the store's directory up to date — at each change notification when watch
// is set, and at each SIGHUP — printing what changed, until ctx is done or the returned
// function is called (which waits for the rescan under way).
func followDir(ctx context.Context, store *flight.Store, watch, skipUnreadable bool, stdout, stderr io.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex // one report at a time
	report := func(c flight.Changes, err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(c.Added)+len(c.Changed)+len(c.Removed) > 0 {
			fmt.Fprintf(stdout, "%s changed:%s%s%s\n", strings.Join(store.Dirs(), ", "),
				changeList(" added", c.Added), changeList(" changed", c.Changed), changeList(" removed", c.Removed))
		}
		for _, f := range c.Gone { // a table of parts served smaller: never in silence
			fmt.Fprintf(stderr, "ndarrow serve: gone: %s: what was made of it is served without it\n", f)
		}
		reportSkipped(stderr, err, skipUnreadable)
	}
	var wg sync.WaitGroup
	if watch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := store.Watch(ctx, report); err != nil {
				fmt.Fprintf(stderr, "ndarrow serve: %v: changes are followed at SIGHUP only\n", err)
			}
		}()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				report(store.Rescan())
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// changeList returns " LABEL a, b" for names, nothing for none.
func changeList(label string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	return label + " " + strings.Join(names, ", ")
}

// peerTLS returns how a server with TLS configuration cfg connects to its peers: trusting the
// CA it trusts clients with (its shards share one), presenting its own certificate.
func peerTLS(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.ClientCAs, Certificates: cfg.Certificates}
}

// clientFlags adds the TLS, token and message-limit flags of a client command to fs and
// returns the function that dials a URI with them and calls use with the client, closed
// afterwards.
func clientFlags(fs *flag.FlagSet, stderr io.Writer) func(uri string, use func(*flight.Client) error) error {
	tf := addTLSFlags(fs, false)
	maxMsg := fs.Int("max-message-bytes", flight.DefaultMaxMessageBytes, "the largest gRPC message sent (put splits its batches to fit; get --rows sends its rows in one, as JSON text)")
	maxRecv := fs.Int("max-recv-message-bytes", flight.DefaultMaxRecvMessageBytes, "the largest gRPC message taken from a server (one record batch)")
	tokenEndpoints := fs.String("token-endpoints", "",
		"comma-separated URIs of other servers (shards) that may receive the token when an endpoint names them")
	grpcOnly := fs.Bool("grpc-only", false, "fetch by DoGet alone, never from an endpoint's http(s):// data location")
	return func(uri string, use func(*flight.Client) error) error {
		cfg, err := tf.config(false)
		if err != nil {
			return err
		}
		if cfg != nil && strings.HasPrefix(uri, "grpc://") {
			return fmt.Errorf("TLS flags with %s: use grpc+tls://", uri)
		}
		token := tf.bearer()
		if token != "" && !strings.HasPrefix(uri, "grpc+tls://") {
			fmt.Fprintf(stderr, "ndarrow %s: the token goes to %s in clear (no TLS): anyone on the network path can read it; dial grpc+tls:// beyond loopback or a trusted network\n", fs.Name(), uri)
		}
		opts := flight.ClientOptions{TLS: cfg, Token: token, MaxMessageBytes: *maxMsg, MaxRecvMessageBytes: *maxRecv, GRPCOnly: *grpcOnly}
		if *tokenEndpoints != "" {
			opts.TokenEndpoints = strings.Split(*tokenEndpoints, ",")
		}
		c, err := flight.Dial(uri, opts)
		if err != nil {
			return err
		}
		defer c.Close()
		return use(c)
	}
}

// readableDir returns an error unless dir is a directory this process can list.
func readableDir(dir string) error {
	if dataset.IsURI(dir) {
		return nil // listing it is the first thing serving it does
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	f, err := os.Open(dir)
	if err == nil {
		_, err = f.ReadDir(1)
		f.Close()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", dir, errors.Unwrap(err))
	}
	return nil
}

// lsLine is what `ls --json` prints of a tensor: the fields it shares with `inspect --json`
// (name, kind, dtype, shape, dim_names) under the same names and in the same order, then what
// a server tells (rows, bytes, endpoints) and, for a column of a table, the table's flight;
// of a table flight (kind "table", shape its rows), the names of its columns and the columns
// it leaves out; the files of a served directory it is served without (skipped), or that keep
// it from being served (unreadable), each "PATH: why".
type lsLine struct {
	Name       string        `json:"name"`
	Kind       string        `json:"kind"`
	DType      string        `json:"dtype"`
	Shape      []int64       `json:"shape"`
	DimNames   []string      `json:"dim_names"`
	Rows       int64         `json:"rows"`
	Bytes      int64         `json:"bytes"`
	Endpoints  int           `json:"endpoints"`
	Table      string        `json:"table,omitempty"`
	Columns    []string      `json:"columns,omitempty"`
	LeftOut    []leftOutLine `json:"left_out,omitempty"`
	Version    string        `json:"version,omitempty"`  // flight.Info.Version
	Modified   string        `json:"modified,omitempty"` // flight.Info.Modified, RFC 3339
	Skipped    []string      `json:"skipped,omitempty"`
	Unreadable []string      `json:"unreadable,omitempty"`
}

func runLs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per tensor")
	withClient := clientFlags(fs, stderr)
	if code, ok := parseArgs(fs, "ls", args, stdout, stderr, 1, 1); !ok {
		return code
	}
	err := withClient(fs.Arg(0), func(c *flight.Client) error {
		flights, err := c.List(ctx)
		if err != nil {
			return err
		}
		// A table is listed, then its columns, each a tensor get fetches by that name: an
		// ndarrow server's are flights of their own, listed as such; another server's are
		// listed below their table. The columns a flight leaves out are named on stderr.
		listed := map[string]bool{}
		for _, i := range flights {
			listed[i.Name] = true
		}
		var infos []flight.Info
		var tables []string
		told := map[string]bool{} // the files named on stderr: a table's and its columns' are the same
		for _, i := range flights {
			infos, tables = append(infos, i), append(tables, "")
			reportLeftOut(stderr, "ls", i.LeftOut)
			for _, f := range i.Skipped {
				if !told[f] {
					told[f] = true
					reportServedWithout(stderr, "ls", i.Name, []string{f})
				}
			}
			todo := "serve --skip-unreadable serves the rest"
			if i.Kind == flight.KindTable && len(i.Columns) == 0 { // listed for its files alone
				todo = "no file of it can be read"
			}
			for _, f := range i.Unreadable {
				if !told[f] {
					told[f] = true
					fmt.Fprintf(stderr, "ndarrow ls: %s: not served: %s %s (%s)\n", i.Name, dataset.ErrUnreadable, f, todo)
				}
			}
			if i.Kind != flight.KindTable {
				continue
			}
			for _, col := range i.Columns {
				if !listed[col.Name] {
					col.Endpoints = i.Endpoints
					infos, tables = append(infos, col), append(tables, i.Name)
				}
			}
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			for n, i := range infos {
				names := i.DimNames
				if names == nil {
					names = []string{} // as inspect --json prints it
				}
				line := lsLine{Name: i.Name, Kind: string(i.Kind), DType: i.DType, Shape: i.Shape,
					DimNames: names, Rows: i.Rows, Bytes: i.Bytes, Endpoints: i.Endpoints, Table: tables[n], Version: i.Version,
					Skipped: i.Skipped, Unreadable: i.Unreadable}
				if !i.Modified.IsZero() {
					line.Modified = i.Modified.UTC().Format(time.RFC3339Nano)
				}
				for _, c := range i.Columns {
					line.Columns = append(line.Columns, c.Name)
				}
				for _, l := range i.LeftOut {
					line.LeftOut = append(line.LeftOut, leftOutLine{Name: l.Name, Column: l.Column, LeftOut: l.Type, Why: l.Why})
				}
				_ = enc.Encode(line)
			}
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tDTYPE\tSHAPE\tROWS\tBYTES")
		for _, i := range infos {
			kind, dtype, shape, rows, bytes := string(i.Kind), i.DType, fmt.Sprint(i.Shape), fmt.Sprint(i.Rows), fmt.Sprint(i.Bytes)
			switch {
			case i.Kind == flight.KindTable: // its columns' dtypes below it
				dtype = "-"
			case kind == "": // a flight of no tensor ndarrow reads
				kind, dtype, shape = "-", "-", "-"
			}
			if i.Bytes < 0 {
				bytes = "-"
			}
			if i.Rows < 0 { // not announced, or not served (unreadable)
				rows = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, kind, dtype, shape, rows, bytes)
		}
		return tw.Flush()
	})
	return finishCommand(ctx, stderr, "ls", err)
}

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("get", flag.ContinueOnError)
	to := fs.String("to", "", "output format (default: OUT's extension): "+formatNames())
	pick := fs.String("tensor", "", "of a table, get only this column (COLUMN or NAME.COLUMN, as ls prints it)")
	rowsFlag := fs.String("rows", "", "get only these rows, in this order: `LIST` of indices separated by commas (negative ones count from the end), or @FILE with one index a line")
	columns := fs.String("columns", "", "with --rows or --batch-size, of a table only these columns, in this order: `NAMES` separated by commas")
	bf := addBatchFlags(fs)
	writeOpts := writeFlags(fs, stderr, "get")
	withClient := clientFlags(fs, stderr)
	if code, ok := parseArgs(fs, "get", args, stdout, stderr, 3, 3); !ok {
		return code
	}
	if *bf.size != 0 {
		if *rowsFlag != "" || *pick != "" || *to != "" {
			return usageError(stderr, "get", errors.New("--batch-size writes mini-batches as an Arrow IPC stream: not with --rows, --tensor or --to"))
		}
		o, err := bf.options(*columns)
		if err != nil {
			return usageError(stderr, "get", err)
		}
		if err := checkStreamOutput(fs.Arg(2)); err != nil {
			return usageError(stderr, "get", err)
		}
		return finishCommand(ctx, stderr, "get", withClient(fs.Arg(0), func(c *flight.Client) error {
			return getBatches(ctx, c, fs.Arg(1), fs.Arg(2), *bf.cursors, o, stdout, stderr)
		}))
	}
	if seen := bf.seen(fs); len(seen) > 0 {
		return usageError(stderr, "get", fmt.Errorf("%s: only with --batch-size N", strings.Join(seen, ", ")))
	}
	if *to != "" {
		if err := checkFormat(*to); err != nil {
			return usageError(stderr, "get", err)
		}
	}
	var rows []int64
	var cols []string
	switch {
	case *rowsFlag != "":
		var err error
		if rows, err = parseRows(*rowsFlag); err != nil {
			return finishCommand(ctx, stderr, "get", err)
		}
		if *columns != "" {
			cols = strings.Split(*columns, ",")
		}
		if *pick != "" {
			if cols != nil {
				return usageError(stderr, "get", errors.New("--tensor and --columns pick columns both: give one"))
			}
			cols = []string{*pick}
		}
	case *columns != "":
		return usageError(stderr, "get", errors.New("--columns picks the columns of --rows: without --rows, --tensor picks one"))
	}
	uri, name, out := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	if err := checkOutput(out); err != nil {
		return finishCommand(ctx, stderr, "get", err)
	}
	format, err := outputFormat(*to, out)
	if err != nil {
		return finishCommand(ctx, stderr, "get", err)
	}
	// What get holds is the tensor, received into place, and what is garbage once a message
	// is copied in: collected when the heap has grown by 2%, not doubled, the process peaks
	// near the tensor's size (1.07× for 1 GiB; see BENCHMARKS.md). The tensor holds no
	// pointers, so a collection does not scan it, and little else is allocated: collections
	// are few and short.
	defer debug.SetGCPercent(debug.SetGCPercent(2))
	err = withClient(uri, func(c *flight.Client) error {
		var opts []flight.GetOption
		if isTerminal(stderr) {
			bar := newProgressBar(stderr, name)
			defer bar.finish()
			opts = append(opts, flight.WithProgress(bar.update))
		}
		var received string
		var fetched flight.Info
		opts = append(opts, flight.WithVersion(func(v string) { received = v }), flight.WithInfo(func(i flight.Info) { fetched = i }))
		var tensors []tensor
		if rows != nil {
			tensors, err = takeTensors(ctx, c, name, rows, cols, dataset.Format(format), opts)
		} else {
			tensors, err = getTensors(ctx, c, name, *pick, dataset.Format(format), opts)
		}
		if err != nil {
			return err
		}
		reportServedWithout(stderr, "get", name, fetched.Skipped)
		wopts := writeOpts().forOutput(out)
		if *pick == "" && len(cols) == 0 && dataset.HoldsSeveral(dataset.Format(format)) {
			// the columns of the flight the stream leaves out, or ndarrow cannot read, named
			if info, err := c.Info(ctx, name); err == nil {
				for _, l := range info.LeftOut {
					wopts.warn(l.String())
				}
			}
		}
		skipped := map[string]bool{}
		warn := wopts.warn
		wopts.warn = func(s string) {
			if name, _, ok := strings.Cut(s, ": skipped: "); ok {
				skipped[name] = true
			}
			warn(s)
		}
		if err := writeOutput(ctx, out, stdout, func(w io.Writer) error { return write(format, w, tensors, wopts) }); err != nil {
			return err
		}
		if out != "-" { // standard output holds the tensors
			for _, t := range tensors {
				if skipped[t.Name] {
					continue
				}
				fmt.Fprintf(stdout, "%s: %s %v %v%s → %s\n", t.Name, t.Kind, t.DType(), t.Shape(), versionNote(received), out)
			}
		}
		return nil
	})
	return finishCommand(ctx, stderr, "get", err)
}

// versionNote returns " (version V)" for the version a get received, "" for none.
func versionNote(version string) string {
	if version == "" {
		return ""
	}
	return " (version " + version + ")"
}

// getBatches writes what get --batch-size writes: the mini-batches o asks of the table
// flight name, as the server streams them, to out (an Arrow IPC stream, as ndarrow batches
// writes it), and each batch's cursor to the file cursors (when not ""). After the cursor of
// an epoch's last batch it writes a stream of no batch and says so on stderr, as batches does.
func getBatches(ctx context.Context, c *flight.Client, name, out, cursors string, o table.BatchOptions, stdout, stderr io.Writer) error {
	if err := checkOutput(out); err != nil {
		return err
	}
	rows := int64(-1) // the table's rows, when its Info tells them
	// An Info refused is the stream's error too: it says what is wrong.
	if info, err := c.Info(ctx, name); err == nil {
		reportServedWithout(stderr, "get", name, info.Skipped)
		rows = info.Rows
	}
	finished := false
	err := writeBatches(ctx, out, cursors, c.Batches(ctx, name, o), stdout, func() ([]dataset.Tensor, error) {
		if o.After == nil {
			return nil, noBatchError(name, rows, o)
		}
		// None after a cursor the server took: the epoch is finished.
		finished = true
		return c.Take(ctx, name, []int64{}, o.Columns) // the columns, of no row: the stream's schema
	}, nil) // the server checks its files: a change under a batch is the stream's error (DataLoss)
	if err == nil && finished {
		fmt.Fprintf(stderr, "ndarrow get: %s\n", epochFinished(name, o))
	}
	return err
}

// reportServedWithout names on stderr each file of the served directory the flight name is
// served without (serve --skip-unreadable), as ls does.
func reportServedWithout(stderr io.Writer, command, name string, skipped []string) {
	for _, f := range skipped {
		fmt.Fprintf(stderr, "ndarrow %s: %s: served without %s\n", command, name, f)
	}
}

// getTensors fetches what get writes: the column pick of the flight name, or every tensor
// of it when format holds several, or its one tensor.
func getTensors(ctx context.Context, c *flight.Client, name, pick string, format dataset.Format, opts []flight.GetOption) ([]tensor, error) {
	if pick != "" {
		if !strings.HasPrefix(pick, name+".") {
			pick = name + "." + pick
		}
		t, err := c.Get(ctx, pick, opts...)
		return []tensor{t}, err
	}
	if !dataset.HoldsSeveral(format) {
		// a table's columns are listed before anything is fetched
		if info, err := c.Info(ctx, name); err == nil && info.Kind == flight.KindTable {
			names := make([]string, len(info.Columns))
			for i, col := range info.Columns {
				names[i] = strings.TrimPrefix(col.Name, name+".")
			}
			return nil, fmt.Errorf("%s is a table of %d tensors (%s); a .%s file holds one: pick it with --tensor, or write .npz, .arrow or .parquet",
				name, len(names), strings.Join(names, ", "), format)
		}
		t, err := c.Get(ctx, name, opts...)
		return []tensor{t}, err
	}
	return c.GetTable(ctx, name, opts...)
}

// takeTensors fetches what get --rows writes: the rows of the flight name (the columns cols
// of a table, or all of them), as one tensor where format holds one.
func takeTensors(ctx context.Context, c *flight.Client, name string, rows []int64, cols []string, format dataset.Format, opts []flight.GetOption) ([]tensor, error) {
	tensors, err := c.Take(ctx, name, rows, cols, opts...)
	if err != nil {
		return nil, err
	}
	if len(tensors) > 1 && !dataset.HoldsSeveral(format) {
		names := make([]string, len(tensors))
		for i, t := range tensors {
			names[i] = strings.TrimPrefix(t.Name, name+".")
		}
		return nil, fmt.Errorf("%s is a table of %d tensors (%s); a .%s file holds one: pick it with --tensor or --columns, or write .npz, .arrow or .parquet",
			name, len(names), strings.Join(names, ", "), format)
	}
	return tensors, nil
}

func runPut(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("put", flag.ContinueOnError)
	pick := fs.String("tensor", "", "upload only the tensor of this name (as inspect prints it, or its column's)")
	as := fs.String("name", "", "store the one tensor uploaded under this name (default: the name inspect prints)")
	input := inputFlags(fs)
	withClient := clientFlags(fs, stderr)
	if code, ok := parseArgs(fs, "put", args, stdout, stderr, 2, 2); !ok {
		return code
	}
	err := dataset.Guard(func() (err error) { // the file may shrink while it is sent
		f, err := load(fs.Arg(1), *input)
		if err != nil {
			return err
		}
		left := f.leftOut
		defer f.Release()
		defer func() { err = sentWhole(f, err) }()
		tensors, err := selectTensor(f, *pick)
		if err != nil {
			return err
		}
		f.reportSkipped(stderr, "put")
		if table, ok := tableOf(tensors); ok && *pick == "" {
			if *as != "" {
				table = *as
			}
			reportLeftOut(stderr, "put", left)
			return putTable(ctx, withClient, fs.Arg(0), table, tensors, stdout)
		}
		if *as != "" && len(tensors) != 1 {
			return fmt.Errorf("%s holds %d tensors: --name needs one (pick it with --tensor), or a table", fs.Arg(1), len(tensors))
		}
		if *pick == "" {
			reportLeftOut(stderr, "put", left)
		}
		names := make([]string, len(tensors))
		for i, t := range tensors {
			names[i] = t.Name
			if *as != "" {
				names[i] = *as
			}
			// Every tensor is checked before any is sent: one Flight cannot carry stops the
			// upload before it stores anything.
			if err := flight.CheckName(names[i]); err != nil {
				return err
			}
			rec, err := t.Record(memory.DefaultAllocator, names[i])
			if err != nil {
				return err
			}
			rec.Release()
		}
		return withClient(fs.Arg(0), func(c *flight.Client) error {
			// All of the file or nothing: the server stores them at once (a server that is
			// not ndarrow gets them one by one).
			if err := c.PutAll(ctx, names, tensors); err != nil {
				return err // it names the tensor
			}
			for i, t := range tensors {
				fmt.Fprintf(stdout, "%s: %s %v %v\n", names[i], t.Kind, t.DType(), t.Shape())
			}
			return nil
		})
	})
	return finishCommand(ctx, stderr, "put", err)
}

// sentWhole returns err, the error of an upload of in's tensors, or, when a file of in was
// modified while it was sent (input.checked), an error saying so: the server then holds what
// was sent, which may mix two versions of the file, and the file is to be put again.
func sentWhole(in *input, err error) error {
	cerr := in.checked(nil)
	switch {
	case cerr == nil:
		return err
	case err == nil:
		return fmt.Errorf("%w: the server holds what was sent, which may mix two versions: put it again", cerr)
	}
	return cerr
}

// tableOf returns the name of the table tensors are the columns of — two or more, each named
// TABLE.COLUMN after one TABLE, of as many rows (dataset.TableOf): a record-batch file's, a
// directory's table of parts — and whether they are.
func tableOf(tensors []tensor) (string, bool) {
	if len(tensors) < 2 || tensors[0].Column == "" {
		return "", false
	}
	name, ok := strings.CutSuffix(tensors[0].Name, "."+tensors[0].Column)
	if !ok {
		return "", false
	}
	for _, t := range tensors {
		if t.Sparse != nil || t.Name != name+"."+t.Column {
			return "", false
		}
	}
	if _, err := dataset.TableOf(name, tensors, nil); err != nil {
		return "", false
	}
	return name, true
}

// putTable uploads tensors, the columns of the table name, as one (flight.Client.PutTable):
// the server stores the table and each column at once.
func putTable(ctx context.Context, withClient func(string, func(*flight.Client) error) error, uri, name string, tensors []tensor, stdout io.Writer) error {
	if err := flight.CheckName(name); err != nil {
		return err
	}
	// Every column is checked before anything is sent.
	cols := make([]tensor, len(tensors))
	for i, t := range tensors {
		cols[i] = t
		if err := flight.CheckName(name + "." + t.Column); err != nil {
			return err
		}
	}
	rec, err := dataset.Batch(memory.DefaultAllocator, cols)
	if err != nil {
		return err
	}
	rec.Release()
	return withClient(uri, func(c *flight.Client) error {
		if err := c.PutTable(ctx, name, cols); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: table of %d columns, %d rows\n", name, len(cols), cols[0].Rows())
		for _, t := range cols {
			fmt.Fprintf(stdout, "%s.%s: %s %v %v\n", name, t.Column, t.Kind, t.DType(), t.Shape())
		}
		return nil
	})
}

func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	withClient := clientFlags(fs, stderr)
	if code, ok := parseArgs(fs, "delete", args, stdout, stderr, 2, 2); !ok {
		return code
	}
	err := withClient(fs.Arg(0), func(c *flight.Client) error { return c.Delete(ctx, fs.Arg(1)) })
	return finishCommand(ctx, stderr, "delete", err)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws a download's progress on one terminal line, at most ten times a second.
type progressBar struct {
	w     io.Writer
	name  string
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, name string) *progressBar { return &progressBar{w: w, name: name} }

func (p *progressBar) update(received, total int64) {
	if now := time.Now(); now.Sub(p.last) < 100*time.Millisecond && received < total {
		return
	} else {
		p.last = now
	}
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = min(float64(received)/float64(total), 1)
	}
	filled := int(frac * width)
	fmt.Fprintf(p.w, "\r%s [%s%s] %s / %s %3.0f%%", p.name, strings.Repeat("#", filled), strings.Repeat(" ", width-filled),
		mib(received), mib(total), 100*frac)
	p.drawn = true
}

func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// progressMin is the size of values below which convert and inspect draw no progress: what
// takes less than a moment.
const progressMin = 64 << 20

// withProgress returns w, counting the bytes written through it into a progress bar named name
// on stderr when stderr is a terminal and total (the bytes expected) is large enough to wait
// for, and the function that ends the bar's line.
func withProgress(w io.Writer, stderr io.Writer, name string, total int64) (io.Writer, func()) {
	if total < progressMin || !isTerminal(stderr) {
		return w, func() {}
	}
	p := &progressWriter{w: w, bar: newProgressBar(stderr, name), total: total}
	return p, p.bar.finish
}

// progressWriter passes writes to w and draws how many bytes of total went through.
type progressWriter struct {
	w     io.Writer
	bar   *progressBar
	n     int64
	total int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	p.bar.update(min(p.n, p.total), p.total)
	return n, err
}

// Seek reports the position, as positionWriter does, when w can say it: an Arrow IPC file's
// writer asks.
func (p *progressWriter) Seek(offset int64, whence int) (int64, error) {
	if s, ok := p.w.(io.Seeker); ok {
		return s.Seek(offset, whence)
	}
	return 0, errors.New("the output cannot seek")
}

// valueBytes is the bytes of t's values as hashing or writing them goes through: its dense
// form's for a dense or sparse tensor, its stored values' for a ragged one (0 for strings,
// whose size is unknown before they are read).
func valueBytes(t tensor) int64 {
	width := int64(t.DType().Size())
	if t.Ragged != nil {
		return t.NNZ() * width
	}
	return t.Shape().Size() * width
}
