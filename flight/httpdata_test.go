package flight

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// dataURLOf returns the http(s) location of the first endpoint of name's FlightInfo, after
// checking that the gRPC location comes first.
func dataURLOf(t *testing.T, c *Client, name string) string {
	t.Helper()
	fi, err := c.fc.GetFlightInfo(context.Background(), pathDescriptor(name))
	require.NoError(t, err)
	locs := fi.Endpoint[0].GetLocation()
	require.Len(t, locs, 2)
	require.Equal(t, reuseConnection, locs[0].GetUri(), "clients that take the first location use DoGet")
	return locs[1].GetUri()
}

// TestDataURL fetches a flight's data URL as any HTTP client would and reads it with arrow-go's
// own IPC reader; ndarrow's Client uses it; a URL the server did not sign, an expired one, a
// missing tensor and other requests are refused with their status.
func TestDataURL(t *testing.T) {
	s := serve(t, Options{}, "grpc")
	rng := mrand.New(mrand.NewPCG(1, 2))
	x := randomDense[float32](rng, 6000, 256) // 6 MiB: two batches under the 4 MiB message limit
	require.NoError(t, s.store.Add("x", dataset.Tensor{Kind: dataset.KindFixedShape, Dense: x}))
	c := dial(t, s.uri, ClientOptions{})
	u := dataURLOf(t, c, "x")
	require.True(t, strings.HasPrefix(u, "http://"+strings.TrimPrefix(s.uri, "grpc://")+dataPath+"?"), u)

	resp, err := http.Get(u)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, arrowStreamType, resp.Header.Get("Content-Type"))
	rd, err := arrowipc.NewReader(resp.Body, arrowipc.WithAllocator(memory.DefaultAllocator))
	require.NoError(t, err)
	var got []float32
	for rd.Next() {
		col := rd.Record().Column(0).(array.ExtensionArray).Storage().(*array.FixedSizeList)
		got = append(got, col.ListValues().(*array.Float32).Float32Values()...)
	}
	require.NoError(t, rd.Err())
	rd.Release()
	require.NoError(t, resp.Body.Close())
	require.Equal(t, arrow.Float32Traits.CastToBytes(x.Data()), arrow.Float32Traits.CastToBytes(got))
	require.Empty(t, resp.Trailer.Get(statusHeader))

	before := s.started.Load()
	d, err := GetDense[float32](context.Background(), c, "x")
	require.NoError(t, err)
	require.Equal(t, arrow.Float32Traits.CastToBytes(x.Data()), arrow.Float32Traits.CastToBytes(d.Data()))
	require.Equal(t, before+1, s.started.Load(), "the client fetched the data URL")

	q, err := url.ParseQuery(u[strings.Index(u, "?")+1:])
	require.NoError(t, err)
	at := func(q url.Values) string { return u[:strings.Index(u, "?")+1] + q.Encode() }
	refused := func(u string, code codes.Code, httpCode int) {
		t.Helper()
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, httpCode, resp.StatusCode)
		require.Equal(t, status.Code(statusIn(resp.Header)), code, resp.Header.Get(statusHeader))
	}
	forged := url.Values{"ticket": q["ticket"], "expires": q["expires"], "signature": {strings.Repeat("0", 64)}}
	refused(at(forged), codes.PermissionDenied, http.StatusForbidden)
	later := url.Values{"ticket": q["ticket"], "expires": {strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}, "signature": q["signature"]}
	refused(at(later), codes.PermissionDenied, http.StatusForbidden) // the expiry is signed
	past := time.Now().Add(-time.Minute).Unix()
	expired := url.Values{"ticket": q["ticket"], "expires": {strconv.FormatInt(past, 10)}, "signature": {hex.EncodeToString(s.signer.sign([]byte("x"), past))}}
	refused(at(expired), codes.PermissionDenied, http.StatusForbidden)
	exp := time.Now().Add(time.Minute).Unix()
	missing := url.Values{"ticket": {"bm9wZQ"}, "expires": {strconv.FormatInt(exp, 10)}, "signature": {hex.EncodeToString(s.signer.sign([]byte("nope"), exp))}}
	refused(at(missing), codes.NotFound, http.StatusNotFound)

	base := "http://" + strings.TrimPrefix(s.uri, "grpc://")
	resp, err = http.Get(base + "/elsewhere")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, err = http.Post(u, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestDataURLFallsBackToDoGet: a client told not to, a server that gives no URL, and a URL
// that expired before its GET all end in DoGet, with the same result.
func TestDataURLFallsBackToDoGet(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	x := randomDense[int32](rng, 500, 33)
	for _, tc := range []struct {
		name   string
		server Options
		client ClientOptions
	}{
		{"client GRPCOnly", Options{}, ClientOptions{GRPCOnly: true}},
		{"server GRPCOnly", Options{GRPCOnly: true}, ClientOptions{}},
		{"expired", Options{DataURLLifetime: time.Nanosecond}, ClientOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, tc.server, "grpc")
			require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: x}))
			c := dial(t, s.uri, tc.client)
			fi, err := c.fc.GetFlightInfo(context.Background(), pathDescriptor("x"))
			require.NoError(t, err)
			if tc.name == "expired" { // the URL's expiry is in seconds
				time.Sleep(time.Until(time.Unix(time.Now().Unix()+1, 0)) + 10*time.Millisecond)
			}
			info, err := infoOf(fi, c.opts.Limits)
			require.NoError(t, err)
			ts, err := c.fetch(context.Background(), found{fi: fi, info: info}, nil)
			require.NoError(t, err)
			require.True(t, x.Equal(ts[0].Dense.(*ndarray.Dense[int32])))
			require.Zero(t, s.started.Load(), "fetched by DoGet")
			if tc.server.GRPCOnly {
				require.Empty(t, fi.Endpoint[0].GetLocation())
			}
		})
	}
}

// TestDataURLOverTLS: over TLS the URL is https:// on the same port, fetched by the client
// with its roots, and by an HTTP client that offers HTTP/2 too (curl's default); gRPC still
// works beside it.
func TestDataURLOverTLS(t *testing.T) {
	ca, caKey := newCA(t, "test CA")
	serverCert := leaf(t, ca, caKey, "server", true)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	s := serve(t, Options{TLS: &tls.Config{Certificates: []tls.Certificate{serverCert}, MinVersion: tls.VersionTLS12}}, "grpc+tls")
	x := randomDense[float64](mrand.New(mrand.NewPCG(5, 6)), 700, 100)
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: x}))
	c := dial(t, s.uri, ClientOptions{TLS: &tls.Config{RootCAs: pool}})
	u := dataURLOf(t, c, "x")
	require.True(t, strings.HasPrefix(u, "https://"), u)
	d, err := GetDense[float64](context.Background(), c, "x")
	require.NoError(t, err)
	require.Equal(t, arrow.Float64Traits.CastToBytes(x.Data()), arrow.Float64Traits.CastToBytes(d.Data()))
	require.EqualValues(t, 1, s.started.Load())

	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	defer h2.CloseIdleConnections()
	resp, err := h2.Get(u)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "HTTP/1.1", resp.Proto)
	_, recs, err := readStreamBytes(body)
	require.NoError(t, err)
	require.EqualValues(t, 700, recs)

	// A client that reached its server over TLS does not follow an http:// location it is
	// given (it goes by DoGet).
	grpcLocs, data := c.split([]*arrowflight.Location{{Uri: "http://elsewhere:1/x"}, {Uri: reuseConnection}})
	require.Empty(t, data)
	require.Len(t, grpcLocs, 1)
}

// readStreamBytes reads an Arrow IPC stream with arrow-go's reader and returns its schema
// and rows.
func readStreamBytes(b []byte) (*arrow.Schema, int64, error) {
	rd, err := arrowipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, 0, err
	}
	defer rd.Release()
	rows := int64(0)
	for rd.Next() {
		rows += rd.Record().NumRows()
	}
	return rd.Schema(), rows, rd.Err()
}

// ipcStreamOf returns the Arrow IPC stream ndarrow's data endpoint sends for t.
func ipcStreamOf(t testing.TB, x dataset.Tensor, batchBytes int64) []byte {
	t.Helper()
	recs, err := x.Records(memory.DefaultAllocator, "x", batchBytes)
	require.NoError(t, err)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestDataURLHostilePeers: an HTTP server a FlightInfo points at sends streams that lie, stop
// or exceed the limits: each is one error, nothing panics, and what is not a stream at all
// falls back to DoGet when there is a gRPC location. A stream is whole only when the response
// ends right after its end-of-stream marker with no failure in its trailer.
func TestDataURLHostilePeers(t *testing.T) {
	x := dataset.Tensor{Dense: randomDense[float32](mrand.New(mrand.NewPCG(7, 8)), 1000, 64)}
	good := ipcStreamOf(t, x, 64<<10)
	schema, _, err := readStreamBytes(good)
	require.NoError(t, err)
	lied := bytes.Clone(good)
	// the body length of the second message (the first record batch) made huge
	second := 8 + int(int32(le32(lied[4:]))) // after the schema message
	meta := lied[second+8 : second+8+int(int32(le32(lied[second+4:])))]
	idx := bytes.Index(meta, le64bytes(int64(64<<10)))
	require.Positive(t, idx, "the record batch's body length in its metadata")
	copy(meta[idx:], le64bytes(1<<40))

	for _, tc := range []struct {
		name    string
		body    []byte
		ctype   string
		code    int
		trailer string
		want    string
		cut     bool // the connection closed without the response's last chunk
	}{
		{"truncated", good[:len(good)/2], arrowStreamType, 200, "", "unexpected EOF", false},
		{"no end marker", good[:len(good)-8], arrowStreamType, 200, "", "unexpected EOF", false},
		{"status in trailer", good[:len(good)/2], arrowStreamType, 200, "15 x.npy: file changed while being read", "file changed while being read", false},
		{"status in trailer after the end marker", good, arrowStreamType, 200, "15 x.npy: file changed while being read", "file changed while being read", false},
		{"bytes after the end marker", append(bytes.Clone(good), 0), arrowStreamType, 200, "", "bytes after the end-of-stream marker", false},
		{"cut after the end marker", good, arrowStreamType, 200, "", "unexpected EOF", true},
		{"garbage", bytes.Repeat([]byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0}, 8), arrowStreamType, 200, "", "ipc", false},
		{"huge metadata length", []byte{0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f}, "application/octet-stream", 200, "", "exceeds the limit", false},
		{"body length lie", lied, arrowStreamType, 200, "", "exceeds the limit", false},
		{"not arrow", []byte("<html>"), "text/html", 200, "", "<fallback>", false},
		{"http error", []byte("no"), "text/plain", 500, "", "<fallback>", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.trailer != "" {
					w.Header().Set("Trailer", statusHeader)
				}
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.code)
				w.Write(tc.body)
				if tc.cut {
					http.NewResponseController(w).Flush()
					panic(http.ErrAbortHandler)
				}
				if tc.trailer != "" {
					w.Header().Set(statusHeader, tc.trailer)
				}
			}))
			defer hs.Close()
			c := dial(t, "grpc://127.0.0.1:1", ClientOptions{Limits: limits.Limits{MaxBodySize: 1 << 30}})
			g := &getter{name: "x", schema: schema, lim: c.opts.Limits.WithDefaults(), limit: c.opts.MaxBytes}
			var version string
			_, err := g.fetchURL(context.Background(), c, hs.URL+"/d?signature=secret", nil, &version)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "secret", "the URL's query stays out of messages")
			var early *beforeStream
			if tc.want == "<fallback>" {
				require.ErrorAs(t, err, &early)
				return
			}
			require.False(t, errors.As(err, &early), "%v", err)
			require.ErrorContains(t, err, tc.want)
			if tc.trailer != "" {
				require.Equal(t, codes.DataLoss, status.Code(err))
			}
		})
	}
}

// readSchemaOf decodes the schema of the stream's first message.
func readSchemaOf(data []byte, lim limits.Limits) (*arrow.Schema, error) {
	meta, _, err := ipc.ReadMessageHead(bytes.NewReader(data), 0, lim)
	if err != nil {
		return nil, err
	}
	dec, err := ipc.NewBatchDecoder(meta, ipc.BatchOptions{Limits: lim, SkipUnsupported: true})
	if err != nil {
		return nil, err
	}
	defer dec.Release()
	return dec.Schema(), nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64bytes(v int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// FuzzDataStream feeds bytes to the reader of a data URL's response as a hostile server would
// send them. Seeds: golden tensors as the data endpoint sends them, Arrow's integration
// streams. Each is read against its own first message's schema (as if a FlightInfo had
// given it); a stream that decodes must give tensors whose values can be written.
func FuzzDataStream(f *testing.F) {
	paths, _ := filepath.Glob("../ipc/testdata/arrow-cpp-17/*")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ts, _, err := dataset.Read(b, "seed", limits.Limits{})
		if err != nil {
			continue
		}
		for _, x := range ts {
			if recs, err := x.Records(memory.DefaultAllocator, "seed", 96); err == nil {
				for _, r := range recs {
					r.Release()
				}
				f.Add(ipcStreamOf(f, x, 96))
			}
		}
	}
	streams, _ := filepath.Glob("../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/*/*.stream")
	for _, p := range streams {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := limits.Limits{MaxElements: 1 << 20, MaxCopySize: 64 << 20, MaxDenseElements: 1 << 20, MaxBodySize: 64 << 20}.WithDefaults()
		schema, err := readSchemaOf(data, lim)
		if err != nil {
			return
		}
		g := &getter{name: "f", schema: schema, lim: lim, limit: 1 << 30}
		xs, err := g.readStream(bytes.NewReader(data), 1<<30, nil)
		if err != nil {
			return
		}
		for _, x := range xs {
			var buf bytes.Buffer
			if _, err := x.WriteValues(&buf, lim.MaxDenseElements); err != nil && !errors.Is(err, limits.ErrExceeded) {
				t.Fatalf("%s decoded but its values cannot be written: %v", x.Name, err)
			}
		}
	})
}

// TestArrowCppReadsTheDataURL: Arrow C++ 17 read the stream a data URL of `ndarrow serve
// --max-message-bytes 65536` gave curl for a float32 [300, 64] .npy ((i % 1000) * 0.5):
// testdata/arrow-cpp-17/data_url.arrows, and data_url_read.jsonl is what `golden read` made of
// it, with the SHA-256 of each batch's values it wrote. The server sends those bytes today, and
// Arrow C++'s values are the tensor's rows.
func TestArrowCppReadsTheDataURL(t *testing.T) {
	dir := t.TempDir()
	x := ndarray.FromFunc(func(i []int64) float32 { return float32((i[0]*64+i[1])%1000) * 0.5 }, 300, 64)
	var buf bytes.Buffer
	_, err := npy.Write(&buf, x)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.npy"), buf.Bytes(), 0o644))
	s := serve(t, Options{MaxMessageBytes: 65536}, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	resp, err := http.Get(dataURLOf(t, c, "s"))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	want, err := os.ReadFile("testdata/arrow-cpp-17/data_url.arrows")
	require.NoError(t, err)
	require.Equal(t, want, got, "the stream Arrow C++ read")

	lines := readLines(t, "testdata/arrow-cpp-17/data_url_read.jsonl")
	values := arrow.Float32Traits.CastToBytes(x.Data())
	row := int64(0)
	for _, l := range lines {
		var m struct {
			Shape  []int64 `json:"shape"`
			SHA256 string  `json:"sha256"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		require.Equal(t, int64(64), m.Shape[1])
		require.Equal(t, sha(values[row*256:(row+m.Shape[0])*256]), m.SHA256)
		row += m.Shape[0]
	}
	require.Equal(t, int64(300), row)
}

// readLines returns the non-empty lines of a file.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// TestDataURLWithToken: a server that wants a token gives a FlightInfo only to a caller with
// it, and the data URL in it is fetched without the token (it is presigned).
func TestDataURLWithToken(t *testing.T) {
	s := serve(t, Options{Token: "sesame"}, "grpc")
	x := randomDense[int16](mrand.New(mrand.NewPCG(9, 10)), 100, 7)
	require.NoError(t, s.store.Add("x", dataset.Tensor{Dense: x}))
	_, err := dial(t, s.uri, ClientOptions{}).Get(context.Background(), "x")
	require.ErrorIs(t, err, ErrUnauthenticated)
	c := dial(t, s.uri, ClientOptions{Token: "sesame"})
	d, err := GetDense[int16](context.Background(), c, "x")
	require.NoError(t, err)
	require.True(t, x.Equal(d))
	require.EqualValues(t, 1, s.started.Load())
	resp, err := http.Get(dataURLOf(t, c, "x")) // no authorization header
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestDataStreamEndsWithAStatus: a data stream the server took over ends as a well-formed
// response with its status in the trailer however it failed (a handler's panic among the
// ways), and is cut — which no client takes for an end — only when a chunk is left incomplete.
func TestDataStreamEndsWithAStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		inChunk bool
		want    string
	}{
		{"between chunks", false, "0\r\n" + statusHeader + ": 13 GET /arrow-flight/v1/get: internal error\r\n\r\n"},
		{"inside a chunk", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, client := net.Pipe()
			got := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(client)
				got <- string(b)
			}()
			sw := &streamWriter{srv: &Server{opts: Options{StallTimeout: time.Minute}}, started: true, conn: server, bw: bufio.NewWriter(server), inChunk: tc.inChunk}
			sw.finish(status.Error(codes.Internal, "GET "+dataPath+": internal error"))
			require.Equal(t, tc.want, <-got)
		})
	}
}
