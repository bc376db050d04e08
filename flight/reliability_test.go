package flight

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// callEvery calls every Flight method with ctx on c and returns each one's error, streams
// included (their first Recv).
func callEvery(ctx context.Context, c arrowflight.Client) map[string]error {
	out := map[string]error{}
	desc := pathDescriptor("x")
	_, out["GetFlightInfo"] = c.GetFlightInfo(ctx, desc)
	_, out["GetSchema"] = c.GetSchema(ctx, desc)
	_, out["PollFlightInfo"] = c.PollFlightInfo(ctx, desc)
	if s, err := c.ListFlights(ctx, &arrowflight.Criteria{}); err == nil {
		_, out["ListFlights"] = s.Recv()
	} else {
		out["ListFlights"] = err
	}
	if s, err := c.DoGet(ctx, &arrowflight.Ticket{Ticket: []byte("x")}); err == nil {
		_, out["DoGet"] = s.Recv()
	} else {
		out["DoGet"] = err
	}
	if s, err := c.DoAction(ctx, &arrowflight.Action{Type: ActionList}); err == nil {
		_, out["DoAction"] = s.Recv()
	} else {
		out["DoAction"] = err
	}
	if s, err := c.ListActions(ctx, &arrowflight.Empty{}); err == nil {
		_, out["ListActions"] = s.Recv()
	} else {
		out["ListActions"] = err
	}
	if s, err := c.DoPut(ctx); err == nil {
		_ = s.Send(&arrowflight.FlightData{FlightDescriptor: desc})
		_ = s.CloseSend()
		_, out["DoPut"] = s.Recv()
	} else {
		out["DoPut"] = err
	}
	if s, err := c.DoExchange(ctx); err == nil {
		_ = s.CloseSend()
		_, out["DoExchange"] = s.Recv()
	} else {
		out["DoExchange"] = err
	}
	if s, err := c.Handshake(ctx); err == nil {
		_ = s.Send(&arrowflight.HandshakeRequest{})
		_, out["Handshake"] = s.Recv()
	} else {
		out["Handshake"] = err
	}
	return out
}

// TestAuth checks the Flight rows of RELIABILITY.md: with a token set, every method, streams
// included, refuses a call without it, and malformed authorization headers are
// Unauthenticated, never a panic.
func TestAuth(t *testing.T) {
	s := serve(t, Options{Token: "s3cret"}, "grpc")
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: ndarray.New[int32](4, 2)}))
	raw := rawClient(t, s.uri)
	for _, tc := range []struct {
		name    string
		headers []string // key, value pairs
	}{
		{"none", nil},
		{"empty", []string{"authorization", ""}},
		{"scheme only", []string{"authorization", "Bearer"}},
		{"scheme and space", []string{"authorization", "Bearer "}},
		{"wrong token", []string{"authorization", "Bearer s3cre"}},
		{"longer token", []string{"authorization", "Bearer s3cret0"}},
		{"basic", []string{"authorization", "Basic czNjcmV0"}},
		{"token without scheme", []string{"authorization", "s3cret"}},
		{"two values", []string{"authorization", "Bearer s3cret", "authorization", "Bearer s3cret"}},
		{"trailing junk", []string{"authorization", "Bearer s3cret junk"}},
		{"punctuation", []string{"authorization", "%%%% ;;;; ===="}},
		{"other header", []string{"x-token", "s3cret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), tc.headers...), 10*time.Second)
			defer cancel()
			for method, err := range callEvery(ctx, raw) {
				require.Equal(t, codes.Unauthenticated, status.Code(err), "%s: %v", method, err)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "bearer s3cret")
		for method, err := range callEvery(ctx, raw) {
			require.NotEqual(t, codes.Unauthenticated, status.Code(err), "%s: %v", method, err)
		}
		c := dial(t, s.uri, ClientOptions{Token: "s3cret"})
		got, err := GetDense[int32](context.Background(), c, "x")
		require.NoError(t, err)
		require.Equal(t, ndarray.Shape{4, 2}, got.Shape())
	})
	t.Run("ndarrow client without token", func(t *testing.T) {
		c := dial(t, s.uri, ClientOptions{Token: "nope"})
		_, err := c.Get(context.Background(), "x")
		require.ErrorIs(t, err, ErrUnauthenticated)
		require.ErrorIs(t, c.Put(context.Background(), "y", dataset.Tensor{Dense: ndarray.New[int8](1)}), ErrUnauthenticated)
	})
}

// TestRecoverPanic checks that a handler's panic becomes codes.Internal naming the method,
// with no stack — the stack goes to the server's log — and the server keeps serving.
func TestRecoverPanic(t *testing.T) {
	var log syncBuffer
	s := serve(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))}, "grpc")
	require.NoError(t, s.store.Add("ok", dataset.Tensor{Dense: ndarray.New[int8](3)}))
	poisoned := &entry{tensor: dataset.Tensor{Dense: ndarray.New[int8](3)}} // no record: DoGet panics
	poisoned.refs.Store(2)                                                  // never released
	s.store.mu.Lock()
	s.store.entries["boom"] = poisoned
	s.store.mu.Unlock()
	t.Cleanup(func() { s.store.mu.Lock(); delete(s.store.entries, "boom"); s.store.mu.Unlock() })
	raw := rawClient(t, s.uri)
	stream, err := raw.DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte("boom")})
	require.NoError(t, err)
	_, err = stream.Recv()
	st := status.Convert(err)
	require.Equal(t, codes.Internal, st.Code(), "%v", err)
	require.Equal(t, "/arrow.flight.protocol.FlightService/DoGet: internal error", st.Message())
	require.Contains(t, log.String(), "goroutine", "the stack is logged on the server")
	_, err = raw.GetFlightInfo(context.Background(), pathDescriptor("boom"))
	require.Equal(t, codes.Internal, status.Code(err), "%v", err)

	// The data URL's handler panics before its stream starts: an HTTP error with the status.
	exp := time.Now().Add(time.Minute).Unix()
	q := url.Values{"ticket": {base64.RawURLEncoding.EncodeToString([]byte("boom"))}, "expires": {strconv.FormatInt(exp, 10)},
		"signature": {hex.EncodeToString(s.signer.sign([]byte("boom"), exp))}}
	resp, err := http.Get("http://" + strings.TrimPrefix(s.uri, "grpc://") + dataPath + "?" + q.Encode())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Equal(t, codes.Internal, status.Code(statusIn(resp.Header)), resp.Header.Get(statusHeader))

	c := dial(t, s.uri, ClientOptions{})
	_, err = c.Get(context.Background(), "ok")
	require.NoError(t, err)
}

// flightDataOfSize returns a FlightData whose encoding is exactly n bytes.
func flightDataOfSize(t *testing.T, desc *arrowflight.FlightDescriptor, n int) *arrowflight.FlightData {
	fd := &arrowflight.FlightData{FlightDescriptor: desc}
	base := proto.Size(fd)
	for body := n - base - 2; body >= 0; body-- {
		fd.DataBody = make([]byte, body)
		if proto.Size(fd) == n {
			return fd
		}
	}
	t.Fatalf("no FlightData of %d bytes", n)
	return nil
}

// TestMessageLimits sends uploads in one message of the receive limit (MaxPutBytes and the
// framing's headroom) less one, of the limit and of one more: the first two reach the handler
// (which counts them past MaxPutBytes), the last is refused by gRPC. A tensor whose batches fill messages close to the send limit arrives; an upload in
// batches larger than the server's send limit is taken (a pyarrow do_put of a table in one
// batch); a client takes 16 MiB messages by default (Arrow C++'s servers send such), and one
// over its receive limit is an error that names the option.
func TestMessageLimits(t *testing.T) {
	const limit = 256 << 10
	small := serve(t, Options{Writable: true, MaxMessageBytes: limit, MaxPutBytes: limit - messageHeadroom}, "grpc")
	raw := rawClient(t, small.uri)
	desc := pathDescriptor("big")
	for _, tc := range []struct {
		size int
		says string
	}{{limit - 1, "an upload over"}, {limit, "an upload over"}, {limit + 1, "larger than max"}} {
		stream, err := raw.DoPut(context.Background())
		require.NoError(t, err)
		fd := flightDataOfSize(t, desc, tc.size)
		require.Equal(t, tc.size, proto.Size(fd))
		_ = stream.Send(fd)
		_ = stream.CloseSend()
		_, err = stream.Recv()
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "%d bytes: %v", tc.size, err)
		require.ErrorContains(t, err, tc.says, "%d bytes: the handler counts it, or gRPC refuses it", tc.size)
	}

	// 1000 rows of 1000 bytes: batches of as many rows as fit under the limit.
	s := serve(t, Options{Writable: true, MaxMessageBytes: limit}, "grpc")
	d := randomDense[uint8](mrand.New(mrand.NewPCG(3, 4)), 1000, 1000)
	require.NoError(t, s.store.Add("big", dataset.Tensor{Dense: d}))
	c := dial(t, s.uri, ClientOptions{MaxMessageBytes: limit})
	got, err := GetDense[uint8](context.Background(), c, "big")
	require.NoError(t, err)
	require.Equal(t, d.Data(), got.Data())

	// A row of exactly what a batch may hold passes; one byte more is refused.
	budget := limit - messageHeadroom
	require.NoError(t, s.store.Add("edge", dataset.Tensor{Dense: ndarray.New[uint8](3, int64(budget))}))
	_, err = c.Get(context.Background(), "edge")
	require.NoError(t, err)
	require.NoError(t, s.store.Add("over", dataset.Tensor{Dense: ndarray.New[uint8](3, int64(budget+1))}))
	_, err = c.Get(context.Background(), "over")
	require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)

	// Put splits its batches to the client's limit; a client sending batches above the
	// server's send limit is taken too: uploads are bounded by MaxPutBytes.
	require.NoError(t, c.Put(context.Background(), "up", dataset.Tensor{Dense: d}))
	wide := dial(t, s.uri, ClientOptions{MaxMessageBytes: 4 * limit})
	require.NoError(t, wide.Put(context.Background(), "up", dataset.Tensor{Dense: d}))

	// 16 MiB messages reach a client of default options; one over its limit is a clear error.
	big := serve(t, Options{MaxMessageBytes: 17 << 20}, "grpc")
	x := randomDense[uint8](mrand.New(mrand.NewPCG(5, 6)), 16, 1<<20)
	require.NoError(t, big.store.Add("x", dataset.Tensor{Dense: x}))
	got, err = GetDense[uint8](context.Background(), dial(t, big.uri, ClientOptions{}), "x")
	require.NoError(t, err)
	require.Equal(t, x.Data(), got.Data())
	_, err = dial(t, big.uri, ClientOptions{MaxRecvMessageBytes: 1 << 20}).Get(context.Background(), "x")
	require.ErrorIs(t, err, limits.ErrExceeded)
	require.ErrorContains(t, err, "above the receive limit of 1048576 bytes (ClientOptions.MaxRecvMessageBytes; --max-recv-message-bytes in the CLI)")
}

// settleGoroutines waits for the number of goroutines to come back to at most n.
func settleGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCancelMidStream cancels gets and drops connections while the server streams a large
// tensor: no goroutine stays behind and the server's allocator comes back to zero.
func TestCancelMidStream(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		s := serve(t, Options{MaxMessageBytes: minMessageBytes}, "grpc")
		rng := mrand.New(mrand.NewPCG(5, 6))
		require.NoError(t, s.store.Add("dense", dataset.Tensor{Dense: randomDense[float32](rng, 4096, 1024)}))
		require.NoError(t, s.store.Add("ragged", everyRagged(rng, 200000)[12]))
		for _, name := range []string{"dense", "ragged"} {
			// Cancel after the first messages.
			c, err := Dial(s.uri, ClientOptions{MaxMessageBytes: minMessageBytes})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			_, err = c.Get(ctx, name, WithProgress(func(received, _ int64) {
				if received > 256<<10 {
					cancel()
				}
			}))
			require.ErrorIs(t, err, context.Canceled)
			cancel()
			// Drop the connection in the middle of a stream.
			raw, err := arrowflight.NewClientWithMiddleware(s.uri[len("grpc://"):], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
			require.NoError(t, err)
			stream, err := raw.DoGet(context.Background(), &arrowflight.Ticket{Ticket: []byte(name)})
			require.NoError(t, err)
			_, err = stream.Recv()
			require.NoError(t, err)
			require.NoError(t, raw.Close())
			require.NoError(t, c.Close())
		}
		// The server side ends its streams and releases what it allocated.
		deadline := time.Now().Add(10 * time.Second)
		for s.mem.CurrentAlloc() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	// What stays is the server's own until its cleanup: Serve's goroutine, the splitting
	// listener's and the data endpoint's HTTP server's.
	settleGoroutines(t, before+3)
}

// TestConcurrentClients runs 64 clients getting and putting at once while 16 others send
// garbage FlightData; every good client gets exactly what was put.
func TestConcurrentClients(t *testing.T) {
	s := serve(t, Options{Writable: true, MaxMessageBytes: minMessageBytes * 2}, "grpc")
	rng := mrand.New(mrand.NewPCG(7, 8))
	shared := randomDense[float64](rng, 500, 64)
	require.NoError(t, s.store.Add("shared", dataset.Tensor{Dense: shared}))
	garbage := func(i int) *arrowflight.FlightData {
		r := mrand.New(mrand.NewPCG(uint64(i), 9))
		b := make([]byte, r.IntN(4096))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		fd := &arrowflight.FlightData{DataHeader: b[:len(b)/3], DataBody: b[len(b)/3:]}
		if i%2 == 0 {
			fd.FlightDescriptor = pathDescriptor(fmt.Sprint("junk", i))
		}
		return fd
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(s.uri, ClientOptions{MaxMessageBytes: minMessageBytes * 2})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			ctx := context.Background()
			mine := randomDense[int16](mrand.New(mrand.NewPCG(uint64(i), 1)), int64(100+i*37), 33)
			name := fmt.Sprint("client", i)
			for round := range 3 {
				if err := c.Put(ctx, name, dataset.Tensor{Dense: mine}); err != nil {
					errs <- fmt.Errorf("%s put %d: %w", name, round, err)
					return
				}
				got, err := GetDense[int16](ctx, c, name)
				if err != nil || !sameBits(got, mine) {
					errs <- fmt.Errorf("%s get %d: %v", name, round, err)
					return
				}
				sh, err := GetDense[float64](ctx, c, "shared")
				if err != nil || !sameBits(sh, shared) {
					errs <- fmt.Errorf("%s shared %d: %v", name, round, err)
					return
				}
			}
		}()
	}
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, err := arrowflight.NewClientWithMiddleware(s.uri[len("grpc://"):], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				errs <- err
				return
			}
			defer raw.Close()
			for round := range 5 {
				stream, err := raw.DoPut(context.Background())
				if err != nil {
					errs <- err
					return
				}
				for k := range 3 {
					_ = stream.Send(garbage(i*100 + round*10 + k))
				}
				_ = stream.CloseSend()
				_, err = stream.Recv()
				if code := status.Code(err); code != codes.InvalidArgument {
					errs <- fmt.Errorf("garbage %d: %v, want InvalidArgument", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	names := s.store.Names()
	require.Len(t, names, 65, "only the good uploads are stored: %v", names)
}

// TestShardedFetch serves one tensor from three servers, each holding a block of its rows,
// and fetches it whole from any of them; its version is its parts'.
func TestShardedFetch(t *testing.T) {
	var liss []net.Listener
	var uris []string
	for range 3 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		liss = append(liss, lis)
		uris = append(uris, "grpc://"+lis.Addr().String())
	}
	rng := mrand.New(mrand.NewPCG(9, 10))
	whole := randomDense[float32](rng, 300, 4, 5)
	var rags []ragged.Any
	for k := range 3 {
		s := serveOn(t, liss[k], Options{Shards: uris, Location: uris[k]})
		part, err := whole.Slice(ndarray.Range(int64(k*100), int64(k*100+100)))
		require.NoError(t, err)
		require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: part.Clone()}))
		if k != 1 { // the middle shard has no part of r
			r := everyRagged(rng, 30+k)[10]
			require.NoError(t, s.store.Add("r", r))
			rags = append(rags, r.Ragged)
		}
		if k == 2 { // and its own idea of y
			require.NoError(t, s.store.Add("y", dataset.Tensor{Dense: ndarray.New[int8](3, 2)}))
		} else {
			require.NoError(t, s.store.Add("y", dataset.Tensor{Dense: ndarray.New[int8](3, 3)}))
		}
	}
	wantRagged, err := ragged.ConcatAny(rags...)
	require.NoError(t, err)
	for k := range 3 {
		c := dial(t, uris[k], ClientOptions{})
		info, err := c.Info(context.Background(), "x")
		require.NoError(t, err)
		require.Equal(t, 3, info.Endpoints)
		require.EqualValues(t, 300, info.Rows)
		require.Equal(t, ndarray.Shape{300, 4, 5}, info.Shape)
		require.Equal(t, dataset.KindDense, info.Kind, "a tensor added without a kind is what its field implies")
		require.Equal(t, "upload-1+upload-1+upload-1", info.Version, "each shard's part's version, in row order")
		got, err := GetDense[float32](context.Background(), c, "x")
		require.NoError(t, err)
		require.True(t, sameBits(got, whole))
		var received string
		_, err = c.Get(context.Background(), "x", WithVersion(func(v string) { received = v }))
		require.NoError(t, err)
		require.Equal(t, info.Version, received)
		// each endpoint says its rows: the parts are received into blocks of one allocation
		fi, err := c.fc.GetFlightInfo(context.Background(), pathDescriptor("x"))
		require.NoError(t, err)
		blocks, _ := endpointBlocks(fi, info, "x", DefaultMaxGetBytes)
		require.Len(t, blocks, 3)

		r, err := c.Get(context.Background(), "r")
		require.NoError(t, err)
		requireSame(t, dataset.Tensor{Kind: dataset.KindRagged, Ragged: wantRagged}, r)
		_, err = c.Get(context.Background(), "y")
		require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
		_, err = c.Get(context.Background(), "nowhere")
		require.ErrorIs(t, err, ErrNotFound)
	}
}

// TestTLS serves over TLS and mutual TLS with certificates made here: plaintext and unknown
// certificates are refused.
func TestTLS(t *testing.T) {
	ca, caKey := newCA(t, "test CA")
	other, otherKey := newCA(t, "other CA")
	serverCert := leaf(t, ca, caKey, "server", true)
	clientCert := leaf(t, ca, caKey, "client", false)
	strangerCert := leaf(t, other, otherKey, "stranger", false)
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	s := serve(t, Options{TLS: &tls.Config{Certificates: []tls.Certificate{serverCert}, MinVersion: tls.VersionTLS12}}, "grpc+tls")
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: ndarray.New[int64](2, 2)}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, s.uri, ClientOptions{TLS: &tls.Config{RootCAs: pool}})
	_, err := c.Get(ctx, "x")
	require.NoError(t, err)
	plain := dial(t, "grpc://"+s.uri[len("grpc+tls://"):], ClientOptions{})
	_, err = plain.Get(ctx, "x")
	require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	untrusting := dial(t, s.uri, ClientOptions{TLS: &tls.Config{RootCAs: x509.NewCertPool()}})
	_, err = untrusting.Get(ctx, "x")
	require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)

	m := serve(t, Options{TLS: &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}}, "grpc+tls")
	require.NoError(t, m.store.Add("x", dataset.Tensor{Dense: ndarray.New[int64](2, 2)}))
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{{"client certificate", []tls.Certificate{clientCert}, true}, {"none", nil, false}, {"another CA's", []tls.Certificate{strangerCert}, false}} {
		c := dial(t, m.uri, ClientOptions{TLS: &tls.Config{RootCAs: pool, Certificates: tc.certs}})
		_, err := c.Get(ctx, "x")
		if tc.ok {
			require.NoError(t, err, tc.name)
		} else {
			require.Error(t, err, tc.name)
		}
	}
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

func leaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, server bool) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// sameBits reports whether a and b have the same shape and the same bits in every element
// (NaNs included).
func sameBits[T ndarray.Numeric](a, b *ndarray.Dense[T]) bool {
	return a.Shape().Equal(b.Shape()) && bytes.Equal(rowMajorBytes(a), rowMajorBytes(b))
}

// rowMajorBytes returns the bytes of d's values in row-major order: a view when d is laid out
// so, else a copy's.
func rowMajorBytes[T ndarray.Numeric](d *ndarray.Dense[T]) []byte {
	if v, ok := d.Contiguous(); ok && d.Layout().IsRowMajor() {
		return ndarray.LittleEndianBytes(v)
	}
	return ndarray.LittleEndianBytes(d.Clone().Data())
}

// TestUnreachableInWords: a server that cannot be reached is an error that says so in words,
// naming the address, and matches ErrUnreachable.
func TestUnreachableInWords(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close()) // nothing listens there now
	c := dial(t, "grpc://"+addr, ClientOptions{})
	_, err = c.List(context.Background())
	require.ErrorIs(t, err, ErrUnreachable)
	assert.Equal(t, "cannot reach "+addr+": connection refused", err.Error())
	_, err = c.Get(context.Background(), "x")
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.Contains(t, err.Error(), "cannot reach "+addr+": connection refused")

	for msg, want := range map[string]string{
		`connection error: desc = "transport: Error while dialing: dial tcp 10.0.0.1:8815: i/o timeout"`:            "i/o timeout",
		`connection error: desc = "transport: Error while dialing: dial tcp: lookup nowhere.invalid: no such host"`: "lookup nowhere.invalid: no such host",
		`name resolver error: produced zero addresses`:                                                              "the name resolves to no address",
	} {
		got, ok := unreachable(msg)
		assert.True(t, ok, msg)
		assert.Equal(t, want, got, msg)
	}
	_, ok := unreachable("the server is shutting down")
	assert.False(t, ok)
}
