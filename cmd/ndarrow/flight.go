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
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ndarrow/ndarrow/flight"
	"github.com/ndarrow/ndarrow/ipc/tensorfile"
	"github.com/ndarrow/ndarrow/limits"
)

// tlsFlags are the TLS and token flags shared by serve and the client commands.
type tlsFlags struct {
	cert, key, ca, token *string
}

func addTLSFlags(fs *flag.FlagSet, server bool) tlsFlags {
	f := tlsFlags{token: fs.String("token", os.Getenv("NDARROW_TOKEN"), "bearer token (default $NDARROW_TOKEN)")}
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
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8815", "listen on HOST:PORT")
	location := fs.String("location", "", "the URI clients reach this server at, put in FlightInfo endpoints (needed with --shards)")
	shards := fs.String("shards", "", "comma-separated URIs of every server holding a shard of the tensors, this one included, in row order")
	maxMsg := fs.Int("max-message-bytes", flight.DefaultMaxMessageBytes, "gRPC message limit, both ways")
	tf := addTLSFlags(fs, true)
	if !parseCommand(fs, args, stderr, "serve [--addr HOST:PORT] [--tls-cert F --tls-key F [--tls-client-ca F]] [--token T] DIR", 1) {
		return exitUsage
	}
	return finishCommand(stderr, "serve", serve(ctx, fs.Arg(0), *addr, *location, *shards, *maxMsg, tf, stdout, stderr))
}

func serve(ctx context.Context, dir, addr, location, shards string, maxMsg int, tf tlsFlags, stdout, stderr io.Writer) error {
	cfg, err := tf.config(true)
	if err != nil {
		return err
	}
	store := flight.NewStore(nil)
	defer store.Close()
	names, err := store.AddDir(dir, limits.Limits{})
	if err != nil {
		// Files that hold no servable tensor are reported and skipped.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "ndarrow serve: skipped: %s\n", line)
		}
	}
	opts := flight.Options{TLS: cfg, Token: *tf.token, MaxMessageBytes: maxMsg, Location: location}
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
	scheme := "grpc"
	if cfg != nil {
		scheme = "grpc+tls"
	}
	fmt.Fprintf(stdout, "serving %d tensors from %s on %s://%s (Ctrl-C stops)\n", len(names), dir, scheme, lis.Addr())
	for _, n := range names {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return <-done
}

// peerTLS returns how a server with TLS configuration cfg connects to its peers: trusting the
// CA it trusts clients with (its shards share one), presenting its own certificate.
func peerTLS(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.ClientCAs, Certificates: cfg.Certificates}
}

// dialFlags adds the TLS, token and message-limit flags of a client command to fs and returns
// the function that dials a URI with them.
func dialFlags(fs *flag.FlagSet) func(uri string) (*flight.Client, error) {
	tf := addTLSFlags(fs, false)
	maxMsg := fs.Int("max-message-bytes", flight.DefaultMaxMessageBytes, "gRPC message limit, both ways")
	tokenEndpoints := fs.String("token-endpoints", "",
		"comma-separated URIs of other servers (shards) that may receive the token when an endpoint names them")
	return func(uri string) (*flight.Client, error) {
		cfg, err := tf.config(false)
		if err != nil {
			return nil, err
		}
		if cfg != nil && strings.HasPrefix(uri, "grpc://") {
			return nil, fmt.Errorf("TLS flags with %s: use grpc+tls://", uri)
		}
		opts := flight.ClientOptions{TLS: cfg, Token: *tf.token, MaxMessageBytes: *maxMsg}
		if *tokenEndpoints != "" {
			opts.TokenEndpoints = strings.Split(*tokenEndpoints, ",")
		}
		return flight.Dial(uri, opts)
	}
}

func runLs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per tensor")
	dialer := dialFlags(fs)
	if !parseCommand(fs, args, stderr, "ls [--json] [--token T] [--tls-ca F] URI", 1) {
		return exitUsage
	}
	err := func() error {
		c, err := dialer(fs.Arg(0))
		if err != nil {
			return err
		}
		defer c.Close()
		infos, err := c.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			for _, i := range infos {
				_ = enc.Encode(map[string]any{"name": i.Name, "kind": i.Kind, "dtype": i.DType, "shape": i.Shape,
					"dim_names": i.DimNames, "rows": i.Rows, "bytes": i.Bytes, "endpoints": i.Endpoints})
			}
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tDTYPE\tSHAPE\tROWS\tBYTES")
		for _, i := range infos {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%d\t%d\n", i.Name, i.Kind, i.DType, i.Shape, i.Rows, i.Bytes)
		}
		return tw.Flush()
	}()
	return finishCommand(stderr, "ls", err)
}

// formatOf returns the output format an OUT file's extension asks for.
func formatOf(path string) (string, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if _, ok := outputFormats[ext]; ok {
		return ext, nil
	}
	return "", fmt.Errorf("%s: cannot tell the format from the extension; give --to (tensor, npy, arrow, arrows, coo, csr, csc, csf)", path)
}

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("get", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "output format (default: from OUT's extension: .tensor, .npy, .arrow, .arrows)")
	maxDense := maxDenseFlag(fs)
	dialer := dialFlags(fs)
	if !parseCommand(fs, args, stderr, "get [--to FORMAT] [--token T] [--tls-ca F] URI NAME OUT", 3) {
		return exitUsage
	}
	uri, name, out := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	err := func() error {
		format := *to
		if format == "" {
			var err error
			if format, err = formatOf(out); err != nil {
				return err
			}
		}
		if err := checkFormat(format); err != nil {
			return err
		}
		c, err := dialer(uri)
		if err != nil {
			return err
		}
		defer c.Close()
		var opts []flight.GetOption
		if isTerminal(stderr) {
			bar := newProgressBar(stderr, name)
			defer bar.finish()
			opts = append(opts, flight.WithProgress(bar.update))
		}
		t, err := c.Get(ctx, name, opts...)
		if err != nil {
			return err
		}
		if err := writeAtomically(ctx, out, func(w io.Writer) error { return write(format, w, []tensor{t}, *maxDense) }); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s %v %v → %s\n", name, t.Kind, t.DType(), t.Shape(), out)
		return nil
	}()
	return finishCommand(stderr, "get", err)
}

func runPut(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("put", flag.ContinueOnError)
	fs.SetOutput(stderr)
	as := fs.String("name", "", "store a file's only tensor under this name (default: the names inspect gives)")
	dialer := dialFlags(fs)
	if !parseCommand(fs, args, stderr, "put [--name NAME] [--token T] [--tls-ca F] URI FILE", 2) {
		return exitUsage
	}
	err := func() error {
		f, err := tensorfile.Open(fs.Arg(1), limits.Limits{})
		if err != nil {
			return err
		}
		defer f.Release()
		if *as != "" && len(f.Tensors) != 1 {
			return fmt.Errorf("--name with a file of %d tensors", len(f.Tensors))
		}
		c, err := dialer(fs.Arg(0))
		if err != nil {
			return err
		}
		defer c.Close()
		for _, t := range f.Tensors {
			name := t.Name
			if *as != "" {
				name = *as
			}
			if err := c.Put(ctx, name, t); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(stdout, "%s: %s %v %v\n", name, t.Kind, t.DType(), t.Shape())
		}
		return nil
	}()
	return finishCommand(stderr, "put", err)
}

// parseCommand parses the flags of command name, which takes nargs arguments; on a usage error
// it prints the usage line and the flags, and returns false.
func parseCommand(fs *flag.FlagSet, args []string, stderr io.Writer, usage string, nargs int) bool {
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ndarrow "+usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() != nargs {
		fs.Usage()
		return false
	}
	return true
}

// finishCommand prints err, if any, as one line and returns the exit status.
func finishCommand(stderr io.Writer, name string, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "ndarrow %s: %v\n", name, err)
		return exitFail
	}
	return exitOK
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
