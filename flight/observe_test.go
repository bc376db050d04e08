package flight

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/table"
)

// jsonLog returns a logger writing JSON records of every level to the returned buffer.
func jsonLog() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// logRecords parses a JSON log, one object a line.
func logRecords(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		out = append(out, r)
	}
	return out
}

// matches reports whether record r has message msg (that prefix, when msg ends with "…")
// and, for each key of want, that value (compared as fmt.Sprint prints them).
func matches(r map[string]any, msg string, want map[string]string) bool {
	got, _ := r["msg"].(string)
	if prefix, ok := strings.CutSuffix(msg, "…"); ok && !strings.HasPrefix(got, prefix) || !ok && got != msg {
		return false
	}
	for k, v := range want {
		if fmt.Sprint(r[k]) != v {
			return false
		}
	}
	return true
}

// awaitRecord waits for the record of message msg with the attributes want in log (a call's
// is written once gRPC has sent its status, which the client may see first), and returns it.
func awaitRecord(t *testing.T, log *syncBuffer, msg string, want map[string]string) map[string]any {
	t.Helper()
	var found map[string]any
	require.Eventually(t, func() bool {
		for _, r := range logRecords(t, log.String()) {
			if matches(r, msg, want) {
				found = r
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no record %q %v in the log:\n%s", msg, want, log.String())
	return found
}

// tokenHash is what the log says of token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:3])
}

// TestAccessLogOneRecordPerCall: every call — a listing, a FlightInfo, a DoGet, a data URL's
// GET, a take, mini-batches, an upload, a delete, the status action, one for a flight that does
// not exist, a GET of a URL the server did not sign, one refused for its token — has its record in the server's log, naming the
// method, the flight (and kind), the client's address, the token's identity (a hash), the
// bytes and rows sent and received, the duration and the status; the token itself, and the
// wrong one, appear nowhere in the log; a token arriving without TLS is said once per
// connection.
func TestAccessLogOneRecordPerCall(t *testing.T) {
	const token, wrong = "s3cret-token-value", "not-the-token"
	logger, log := jsonLog()
	dir := t.TempDir()
	writeUserParquet(t, filepath.Join(dir, "t.parquet"), 3000, 400)
	s := serve(t, Options{Token: token, Logger: logger, Writable: true}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	ctx := t.Context()
	c := dial(t, s.uri, ClientOptions{Token: token})
	grpcOnly := dial(t, s.uri, ClientOptions{Token: token, GRPCOnly: true})
	id := tokenHash(token)

	for _, tc := range []struct {
		name string
		call func() error
		msg  string
		want map[string]string
		sent bool // bytes sent > 0
		recv bool // bytes received > 0
	}{
		{"ListFlights", func() error { _, err := c.List(ctx); return err }, "flight: call",
			map[string]string{"method": "ListFlights", "status": "OK", "identity": id}, true, false},
		{"GetFlightInfo", func() error { _, err := c.Info(ctx, "t"); return err }, "flight: call",
			map[string]string{"method": "GetFlightInfo", "flight": "t", "status": "OK", "identity": id, "rows_sent": "0"}, true, true},
		{"DoGet", func() error { _, err := grpcOnly.Get(ctx, "t.label"); return err }, "flight: call",
			map[string]string{"method": "DoGet", "flight": "t.label", "status": "OK", "identity": id, "rows_sent": "3000", "rows_received": "0"}, true, true},
		{"data URL", func() error { _, err := c.Get(ctx, "t.score"); return err }, "flight: data URL",
			map[string]string{"method": "GET", "flight": "t.score", "status": "OK", "identity": "url", "rows_sent": "3000"}, true, false},
		{"take", func() error { _, err := c.Take(ctx, "t", []int64{5, 1, 7}, []string{"label"}); return err }, "flight: call",
			map[string]string{"method": "DoGet", "flight": "t", "kind": "take", "status": "OK", "identity": id, "rows_sent": "3"}, true, true},
		{"batches", func() error {
			for _, err := range c.Batches(ctx, "t", table.BatchOptions{Size: 1000, Columns: []string{"label"}}) {
				if err != nil {
					return err
				}
			}
			return nil
		}, "flight: call",
			map[string]string{"method": "DoGet", "flight": "t", "kind": "batches", "status": "OK", "identity": id, "rows_sent": "3000"}, true, true},
		{"DoPut", func() error { return c.Put(ctx, "up", dataset.Tensor{Dense: ndarray.New[int64](5, 2)}) }, "flight: call",
			map[string]string{"method": "DoPut", "flight": "up", "status": "OK", "identity": id, "rows_received": "5", "rows_sent": "0"}, true, true},
		{"delete", func() error { return c.Delete(ctx, "up") }, "flight: call",
			map[string]string{"method": "DoAction", "action": "delete", "flight": "up", "status": "OK", "identity": id}, true, true},
		{"status", func() error { return drain(mustAction(t, c, ActionStatus).Recv) }, "flight: call",
			map[string]string{"method": "DoAction", "action": "status", "status": "OK", "identity": id}, true, true},
		{"not found", func() error {
			_, err := c.Get(ctx, "nope")
			assert.ErrorIs(t, err, ErrNotFound)
			return nil
		}, "flight: call",
			map[string]string{"method": "GetFlightInfo", "flight": "nope", "status": "NotFound", "error": `flight: no such tensor: "nope"`}, false, true},
		{"unsigned data URL", func() error {
			resp, err := http.Get("http://" + strings.TrimPrefix(s.uri, "grpc://") + dataPath + "?ticket=dA&expires=1&signature=00")
			if err != nil {
				return err
			}
			resp.Body.Close()
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
			return nil
		}, "flight: data URL",
			map[string]string{"method": "GET", "status": "PermissionDenied", "error": "a URL this server did not sign", "identity": "url", "level": "WARN"}, false, false},
		{"wrong token", func() error {
			_, err := dial(t, s.uri, ClientOptions{Token: wrong}).List(ctx)
			assert.ErrorIs(t, err, ErrUnauthenticated)
			return nil
		}, "flight: authentication failed",
			map[string]string{"method": "ListFlights", "status": "Unauthenticated", "identity": tokenHash(wrong), "level": "WARN"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.call())
			r := awaitRecord(t, log, tc.msg, tc.want)
			assert.Contains(t, r["client"], "127.0.0.1:")
			assert.Contains(t, r, "duration")
			assert.GreaterOrEqual(t, r["duration"], 0.0)
			for key, positive := range map[string]bool{"bytes_sent": tc.sent, "bytes_received": tc.recv} {
				require.Contains(t, r, key)
				if positive {
					assert.Positive(t, r[key], key)
				} else {
					assert.Zero(t, r[key], key)
				}
			}
		})
	}
	text := log.String()
	assert.NotContains(t, text, token, "the token is never logged")
	assert.NotContains(t, text, wrong, "nor a wrong one")

	// Each connection that brought a token without TLS was told of once.
	withToken := map[string]bool{}
	clear := map[string]int{}
	for _, r := range logRecords(t, text) {
		if r["msg"] == "flight: call" || r["msg"] == "flight: authentication failed" {
			if id, _ := r["identity"].(string); strings.HasPrefix(id, "token:") {
				withToken[r["client"].(string)] = true
			}
		}
		if strings.HasPrefix(r["msg"].(string), "flight: a bearer token arrived in clear") {
			clear[r["client"].(string)]++
		}
	}
	require.Len(t, withToken, 3, "the three clients' connections")
	for client := range withToken {
		assert.Equal(t, 1, clear[client], client)
	}
}

// TestAccessLogOfWhatIsRefusedOrHuge: a call the wire budget has no room for has its record at
// warn (ResourceExhausted), and so has a call refused because the server drains (Unavailable);
// an upload to a read-only server has its record (PermissionDenied); a flight name of 100 KB is logged cut to its first 512 bytes and
// its length, in the record's flight and error alike.
func TestAccessLogOfWhatIsRefusedOrHuge(t *testing.T) {
	logger, log := jsonLog()
	s := serve(t, Options{Logger: logger}, "grpc")
	ctx := t.Context()

	huge := strings.Repeat("n", 100<<10)
	_, err := dial(t, s.uri, ClientOptions{}).Info(ctx, huge)
	require.ErrorIs(t, err, ErrNotFound)
	cut := strings.Repeat("n", maxLogText) + fmt.Sprintf("… (%d bytes)", len(huge))
	r := awaitRecord(t, log, "flight: call", map[string]string{"method": "GetFlightInfo", "flight": cut, "status": "NotFound"})
	assert.LessOrEqual(t, len(r["error"].(string)), maxLogText+len("… (1000000 bytes)"), "the error, cut")
	assert.NotContains(t, log.String(), strings.Repeat("n", maxLogText+1))

	held := s.wire.size - s.wire.inUse()
	require.True(t, s.wire.tryReserve(held), "the whole wire budget, held")
	_, err = dial(t, s.uri, ClientOptions{}).List(ctx)
	s.wire.release(held)
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	r = awaitRecord(t, log, "flight: call", map[string]string{"method": "ListFlights", "status": "ResourceExhausted", "level": "WARN", "identity": "none"})
	assert.Contains(t, r["client"], "127.0.0.1:")
	assert.Contains(t, r["error"], "wire budget")

	err = dial(t, s.uri, ClientOptions{}).Put(ctx, "up", dataset.Tensor{Dense: ndarray.New[int32](2)})
	require.ErrorIs(t, err, ErrReadOnly)
	r = awaitRecord(t, log, "flight: call", map[string]string{"method": "DoPut", "status": "PermissionDenied", "identity": "none"})
	assert.Contains(t, r["error"], "--writable")

	c := dial(t, s.uri, ClientOptions{})
	_, err = c.List(ctx)
	require.NoError(t, err, "a connection up before the shutdown")
	s.active.drain() // what Shutdown does first
	_, err = c.List(ctx)
	require.ErrorIs(t, err, ErrShuttingDown)
	r = awaitRecord(t, log, "flight: call", map[string]string{"method": "ListFlights", "status": "Unavailable", "level": "WARN"})
	assert.Contains(t, r["error"], "shutting down")
}

// mustAction starts the action typ on c's server.
func mustAction(t *testing.T, c *Client, typ string) arrowflight.FlightService_DoActionClient {
	t.Helper()
	stream, err := c.fc.DoAction(t.Context(), &arrowflight.Action{Type: typ})
	require.NoError(t, err)
	return stream
}

// TestHealthWithoutTokenFollowsDraining: gRPC's health service answers without the token a
// server's Flight calls need, SERVING for the server and for the Flight service; a Watch is
// told NOT_SERVING once Shutdown begins (the server drains), then ends with Unavailable, and
// Shutdown does not wait for it.
func TestHealthWithoutTokenFollowsDraining(t *testing.T) {
	logger, log := jsonLog()
	s := serve(t, Options{Token: "t0k", Logger: logger}, "grpc")
	conn, err := grpc.NewClient(strings.TrimPrefix(s.uri, "grpc://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	ctx := t.Context()

	_, err = dial(t, s.uri, ClientOptions{}).List(ctx)
	require.ErrorIs(t, err, ErrUnauthenticated, "Flight calls need the token")
	for _, service := range []string{"", "arrow.flight.protocol.FlightService"} {
		res, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		require.NoError(t, err, "service %q", service)
		assert.Equal(t, healthpb.HealthCheckResponse_SERVING, res.GetStatus(), "service %q", service)
	}
	_, err = health.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	awaitRecord(t, log, "flight: call", map[string]string{"method": "grpc.health.v1.Health/Check", "status": "OK", "level": "DEBUG", "identity": "none"})

	watch, err := health.Watch(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	first, err := watch.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, first.GetStatus())
	assert.False(t, s.Draining())

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.Shutdown(sctx)
	}()
	next, err := watch.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, next.GetStatus(), "draining")
	assert.True(t, s.Draining())
	_, err = watch.Recv()
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "shutting down")
	<-stopped // the watch did not hold the shutdown up
	awaitRecord(t, log, "flight: draining: health NOT_SERVING", nil)
}

// TestStatusActionAndLog: the status action answers what the budgets hold of their size, the
// connections and calls under way and the flights served, as JSON; the log says it every
// StatusInterval.
func TestStatusActionAndLog(t *testing.T) {
	logger, log := jsonLog()
	s := serve(t, Options{Logger: logger, MemoryBudget: 64 << 20, WireBudget: 600 << 20, StatusInterval: 5 * time.Millisecond}, "grpc")
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: ndarray.New[int64](4, 2)}))
	require.NoError(t, s.store.Add("y", dataset.Tensor{Dense: ndarray.New[int64](4, 2)}))
	c := dial(t, s.uri, ClientOptions{})
	res, err := mustAction(t, c, ActionStatus).Recv()
	require.NoError(t, err)
	var st ServerStatus
	require.NoError(t, json.Unmarshal(res.GetBody(), &st))
	assert.Equal(t, int64(64<<20), st.MemoryBudget.Size)
	assert.Equal(t, int64(600<<20), st.WireBudget.Size)
	assert.Positive(t, st.WireBudget.Used, "the status call's own window and its connection")
	assert.Equal(t, int64(1), st.Connections)
	assert.Equal(t, DefaultMaxConnections, st.MaxConnections)
	assert.Equal(t, int64(1), st.Calls, "the status call itself")
	assert.Equal(t, 2, st.Flights)
	assert.False(t, st.Draining)
	assert.Nil(t, st.PageCache)

	r := awaitRecord(t, log, "flight: status", map[string]string{"level": "INFO", "flights": "2"})
	budget, ok := r["memory_budget"].(map[string]any)
	require.True(t, ok, "%v", r)
	assert.Equal(t, float64(64<<20), budget["size"])
	assert.Contains(t, r, "connections")
	assert.Contains(t, r, "calls")
	// Unchanged, the next records are at debug.
	awaitRecord(t, log, "flight: status", map[string]string{"level": "DEBUG", "flights": "2"})
}

// testCert returns a certificate signed by ca for the template edit makes of a server leaf
// valid for an hour around now and naming 127.0.0.1.
func testCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, edit func(*x509.Certificate)) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	edit(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestCertificateProblems: a certificate that is expired, not yet valid, names no host in a
// subjectAltName, or does not cover the address served or the location is warned of; one
// served on every address is noted with the hosts it covers; one that fits says nothing.
func TestCertificateProblems(t *testing.T) {
	ca, caKey := newCA(t, "ca")
	loopback := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8815}
	every := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8815}
	for _, tc := range []struct {
		name     string
		edit     func(*x509.Certificate)
		addr     net.Addr
		location string
		warnings []string
		notes    []string
	}{
		{"fits", func(*x509.Certificate) {}, loopback, "", nil, nil},
		{"expired", func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
		}, loopback, "",
			[]string{`the TLS certificate "CN=server" expired on `, "clients refuse it (x509: certificate has expired): renew it"}, nil},
		{"not yet valid", func(c *x509.Certificate) {
			c.NotBefore = time.Now().Add(time.Hour)
			c.NotAfter = time.Now().Add(2 * time.Hour)
		}, loopback, "",
			[]string{`the TLS certificate "CN=server" is not valid until `, "check this machine's clock"}, nil},
		{"CN only", func(c *x509.Certificate) { c.IPAddresses = nil }, loopback, "",
			[]string{`the TLS certificate "CN=server" names no host in a subjectAltName, only its subject's CN`, "subjectAltName=DNS:HOST,IP:ADDRESS"}, nil},
		{"another address", func(c *x509.Certificate) { c.IPAddresses = []net.IP{net.ParseIP("10.1.2.3")} }, loopback, "",
			[]string{`the TLS certificate "CN=server" covers IP:10.1.2.3, not 127.0.0.1, the address the server listens on`}, nil},
		{"a name, not the address", func(c *x509.Certificate) { c.IPAddresses, c.DNSNames = nil, []string{"data.example.com"} }, loopback, "",
			nil, []string{`covers DNS:data.example.com, not 127.0.0.1, the address the server listens on: clients must dial one of its names`}},
		{"every address", func(c *x509.Certificate) { c.DNSNames = []string{"localhost"} }, every, "",
			nil, []string{`serving TLS on every address of the machine: clients must dial a host the TLS certificate "CN=server" covers: DNS:localhost, IP:127.0.0.1`}},
		{"location not covered", func(*x509.Certificate) {}, loopback, "grpc+tls://data.example.com:8815",
			[]string{`covers IP:127.0.0.1, not data.example.com (the host of the server's location): clients dialing grpc+tls://data.example.com:8815 refuse it`}, nil},
		{"location covered", func(c *x509.Certificate) { c.DNSNames = []string{"data.example.com"} }, every, "grpc+tls://data.example.com:8815",
			nil, []string{"serving TLS on every address"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert := testCert(t, ca, caKey, tc.edit)
			warnings, notes := certificateProblems([]tls.Certificate{cert}, tc.addr, tc.location, time.Now())
			requireSentences(t, tc.warnings, warnings, "warnings")
			requireSentences(t, tc.notes, notes, "notes")
		})
	}
}

// requireSentences requires one sentence in got, holding every part of want, or none when
// want is empty.
func requireSentences(t *testing.T, want, got []string, what string) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, got, what)
		return
	}
	require.Len(t, got, 1, "%s: %q", what, got)
	for _, part := range want {
		assert.Contains(t, got[0], part, what)
	}
}

// TestServeWarnsOfAnExpiredCertificate: Serve logs the problems of its certificate at warn.
func TestServeWarnsOfAnExpiredCertificate(t *testing.T) {
	ca, caKey := newCA(t, "ca")
	cert := testCert(t, ca, caKey, func(c *x509.Certificate) {
		c.NotBefore, c.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	})
	logger, log := jsonLog()
	serve(t, Options{Logger: logger, TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}, "grpc+tls")
	r := awaitRecord(t, log, `flight: the TLS certificate "CN=server" expired on …`, map[string]string{"level": "WARN"})
	assert.Contains(t, r["msg"], "clients refuse it (x509: certificate has expired): renew it")
}

// TestTLSMismatchSaidPlainly: a plaintext client of a TLS server, and a TLS client of a
// plaintext server, fail with ErrTLS saying which scheme to dial (the status still
// Unavailable), and the server logs the failed handshake, or the TLS it was spoken, with the
// client's address; a client that does not trust the certificate, or dials an address the
// certificate does not name, is told so, and the server logs that the client refused it.
func TestTLSMismatchSaidPlainly(t *testing.T) {
	ca, caKey := newCA(t, "ca")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	good := testCert(t, ca, caKey, func(*x509.Certificate) {})
	cnOnly := testCert(t, ca, caKey, func(c *x509.Certificate) { c.IPAddresses = nil })
	ctx := t.Context()
	for _, grpcOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("grpc-only %v", grpcOnly), func(t *testing.T) {
			for _, tc := range []struct {
				name      string
				cert      *tls.Certificate // the server's; nil: plaintext
				client    func(addr string) (*Client, error)
				error     string
				serverLog map[string]string // what the server logs of it, at warn
			}{
				{"plaintext client, TLS server", &good,
					func(addr string) (*Client, error) { return Dial("grpc://"+addr, ClientOptions{}) },
					"closed the connection before speaking gRPC: if it serves TLS, dial grpc+tls://",
					map[string]string{"msg": "flight: TLS handshake failed", "hint": "the client speaks gRPC without TLS: it should dial grpc+tls://"}},
				{"TLS client, plaintext server", nil,
					func(addr string) (*Client, error) {
						return Dial("grpc+tls://"+addr, ClientOptions{TLS: &tls.Config{RootCAs: pool}})
					},
					"does not speak TLS: dial grpc://", nil},
				{"untrusted certificate", &good,
					func(addr string) (*Client, error) { return Dial("grpc+tls://"+addr, ClientOptions{}) },
					"is signed by an authority this client does not trust: give its CA (ndarrow --tls-ca",
					map[string]string{"msg": "flight: TLS handshake failed", "hint": "the client does not trust this server's certificate: it needs the CA that signed it (ndarrow --tls-ca), and to dial a host the certificate names"}},
				{"certificate without a SAN", &cnOnly,
					func(addr string) (*Client, error) {
						return Dial("grpc+tls://"+addr, ClientOptions{TLS: &tls.Config{RootCAs: pool}})
					},
					"does not name 127.0.0.1 in a subjectAltName: dial a host it names, or reissue it with subjectAltName=DNS:…,IP:…", nil},
			} {
				t.Run(tc.name, func(t *testing.T) {
					logger, log := jsonLog()
					opts := Options{Logger: logger, GRPCOnly: grpcOnly}
					scheme := "grpc"
					if tc.cert != nil {
						opts.TLS, scheme = &tls.Config{Certificates: []tls.Certificate{*tc.cert}}, "grpc+tls"
					}
					s := serve(t, opts, scheme)
					addr := s.uri[strings.Index(s.uri, "://")+3:]
					c, err := tc.client(addr)
					require.NoError(t, err)
					defer c.Close()
					_, err = c.List(ctx)
					require.ErrorIs(t, err, ErrTLS)
					assert.Equal(t, codes.Unavailable, status.Code(err))
					assert.Contains(t, err.Error(), addr)
					assert.Contains(t, err.Error(), tc.error)
					assert.NotContains(t, err.Error(), "\n", "one line")
					if tc.serverLog != nil {
						msg := tc.serverLog["msg"]
						want := map[string]string{"level": "WARN"}
						for k, v := range tc.serverLog {
							if k != "msg" {
								want[k] = v
							}
						}
						r := awaitRecord(t, log, msg, want)
						assert.Contains(t, r["client"], "127.0.0.1:")
					}
					if tc.cert == nil && !grpcOnly { // the port sorts what it is spoken
						awaitRecord(t, log, "flight: a client spoke TLS to this plaintext port", map[string]string{"level": "WARN"})
					}
				})
			}
		})
	}
}

// TestMutualTLSRefusalsSaidPlainly: a client refused by a server requiring client
// certificates — sending none, or one of a CA the server does not trust — is told which, in
// one line matching ErrTLS, over TLS 1.2 and 1.3 (where a client learns of the refusal only
// after its side of the handshake: the server lets it read the alert before it closes); the
// server logs the refusal with a hint.
func TestMutualTLSRefusalsSaidPlainly(t *testing.T) {
	ca, caKey := newCA(t, "ca")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	other, otherKey := newCA(t, "other")
	serverCert := testCert(t, ca, caKey, func(*x509.Certificate) {})
	stranger := leaf(t, other, otherKey, "stranger", false)
	for _, grpcOnly := range []bool{false, true} {
		for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			for _, tc := range []struct {
				name  string
				certs []tls.Certificate
				error string
			}{
				{"no certificate", nil, "refused the TLS handshake: if it requires a client certificate (mutual TLS), give one (ndarrow --tls-cert and --tls-key"},
				{"another CA's", []tls.Certificate{stranger}, "refused this client's certificate: it must be signed by a CA the server trusts (serve --tls-client-ca)"},
			} {
				t.Run(fmt.Sprintf("grpc-only %v, TLS %x, %s", grpcOnly, version, tc.name), func(t *testing.T) {
					logger, log := jsonLog()
					s := serve(t, Options{Logger: logger, GRPCOnly: grpcOnly, TLS: &tls.Config{Certificates: []tls.Certificate{serverCert},
						ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}}, "grpc+tls")
					c := dial(t, s.uri, ClientOptions{TLS: &tls.Config{RootCAs: pool, MaxVersion: version, Certificates: tc.certs}})
					_, err := c.List(t.Context())
					require.ErrorIs(t, err, ErrTLS)
					assert.Contains(t, err.Error(), tc.error)
					assert.Equal(t, codes.Unavailable, status.Code(err))
					awaitRecord(t, log, "flight: TLS handshake failed", map[string]string{"level": "WARN",
						"hint": "mutual TLS: the client sent no certificate (ndarrow --tls-cert and --tls-key)"}) // Go's client sends none the server's CAs did not sign
				})
			}
		}
	}
}

// TestTokenOverTLSNotWarned: a token that arrives over TLS is not said to arrive in clear.
func TestTokenOverTLSNotWarned(t *testing.T) {
	ca, caKey := newCA(t, "ca")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	logger, log := jsonLog()
	s := serve(t, Options{Logger: logger, Token: "t0k", TLS: &tls.Config{Certificates: []tls.Certificate{testCert(t, ca, caKey, func(*x509.Certificate) {})}}}, "grpc+tls")
	c := dial(t, s.uri, ClientOptions{Token: "t0k", TLS: &tls.Config{RootCAs: pool}})
	_, err := c.List(t.Context())
	require.NoError(t, err)
	awaitRecord(t, log, "flight: call", map[string]string{"method": "ListFlights", "identity": tokenHash("t0k"), "status": "OK"})
	assert.NotContains(t, log.String(), "arrived in clear")
}
