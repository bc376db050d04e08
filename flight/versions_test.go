package flight

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// smallBuffers is a listener whose connections have small socket buffers: a server writing to
// a client that stopped reading is held within a few hundred KiB of what the client read.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(64 << 10)
		tc.SetReadBuffer(64 << 10)
	}
	return c, err
}

// dialSmall dials with a small receive buffer.
func dialSmall(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(64 << 10)
	}
	return c, err
}

// slowRawClient is arrow-go's Flight client with small flow-control windows and socket
// buffers: a stream it stops reading holds its server within a few messages.
func slowRawClient(t *testing.T, uri string) arrowflight.Client {
	c, err := arrowflight.NewClientWithMiddleware(strings.TrimPrefix(uri, "grpc://"), nil, nil,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dialSmall(ctx, "tcp", addr) }))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// pausingTransport makes an HTTP client that stops reading a response once after bytes of its
// body, calls pause, and reads on: a client that pauses mid-stream.
type pausingTransport struct {
	base  http.RoundTripper
	after int64
	pause func()
}

func (p *pausingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(r)
	if err == nil {
		resp.Body = &pausingBody{ReadCloser: resp.Body, left: p.after, pause: p.pause}
	}
	return resp, err
}

type pausingBody struct {
	io.ReadCloser
	left  int64
	once  sync.Once
	pause func()
}

func (b *pausingBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.once.Do(b.pause)
	} else if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// pausingHTTP returns an HTTP client over connections with small receive buffers that pauses
// as pausingTransport says.
func pausingHTTP(after int64, pause func()) *http.Client {
	tr := dataClient(nil).Transport.(*http.Transport).Clone()
	tr.DialContext = dialSmall
	return &http.Client{Transport: &pausingTransport{base: tr, after: after, pause: pause}}
}

// eosMarker is the end of a whole Arrow IPC stream.
var eosMarker = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}

// TestAStreamSendsOneVersion: a served file of 8 MiB streamed to a client that pauses after
// its first messages, while the file is overwritten in place (not truncated: no page goes
// missing, only the check at the end can tell) and then renamed over, removed or left alone. Whatever its path names when the
// stream ends, the file the stream started on changed: by DoGet, by ndarrow's client of the
// data URL and by any HTTP client of it, the stream fails with DataLoss naming the file by its
// path under the directory — the data URL's response without its end-of-stream marker and
// with the status in its trailer — and never ends as whole. The server serves on.
func TestAStreamSendsOneVersion(t *testing.T) {
	const rows, cols = 2048, 1024
	for _, via := range []string{"DoGet", "data URL", "data URL, any HTTP client"} {
		for _, then := range []string{"renamed over", "removed", "left alone"} {
			t.Run(via+": overwritten in place, then "+then, func(t *testing.T) {
				dir := t.TempDir()
				x := filepath.Join(dir, "x.npy")
				replaceFile(t, x, npyBytes(t, rows, cols, 1))
				replaceFile(t, filepath.Join(dir, "y.npy"), npyBytes(t, 16, 4, 7))
				old := time.Now().Add(-time.Hour) // a write after this has another time, whatever the clock's tick
				require.NoError(t, os.Chtimes(x, old, old))
				lis, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				s := serveOn(t, smallBuffers{lis}, Options{MaxMessageBytes: 256 << 10})
				_, err = s.store.AddDir(dir, limits.Limits{})
				require.NoError(t, err)
				c := dial(t, s.uri, ClientOptions{})
				ctx := context.Background()

				change := func() { // overwritten in place, not truncated: no page goes missing
					f, err := os.OpenFile(x, os.O_WRONLY, 0)
					require.NoError(t, err)
					_, err = f.WriteAt(npyBytes(t, rows, cols, 2), 0)
					require.NoError(t, err)
					require.NoError(t, f.Close())
					switch then {
					case "renamed over":
						replaceFile(t, x, npyBytes(t, 16, cols, 3))
					case "removed":
						require.NoError(t, os.Remove(x))
					}
				}
				var err2 error
				switch via {
				case "DoGet":
					stream, err := slowRawClient(t, s.uri).DoGet(ctx, &arrowflight.Ticket{Ticket: []byte("x")})
					require.NoError(t, err)
					for range 3 { // the schema and two batches of 32
						_, err := stream.Recv()
						require.NoError(t, err)
					}
					change()
					err2 = collect(stream.Recv)
				case "data URL":
					c.http = pausingHTTP(1<<20, change)
					before := s.started.Load()
					_, err2 = c.Get(ctx, "x")
					require.Equal(t, before+1, s.started.Load(), "the client fetched the data URL")
				default:
					resp, err := pausingHTTP(1<<20, change).Get(dataURLOf(t, c, "x"))
					require.NoError(t, err)
					body, err := io.ReadAll(resp.Body)
					require.NoError(t, err, "the response ends well formed")
					resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode)
					require.False(t, bytes.HasSuffix(body, eosMarker), "no end-of-stream marker")
					err2 = statusIn(resp.Trailer)
					require.Error(t, err2, "the status is in the trailer")
				}
				require.Equal(t, codes.DataLoss, status.Code(err2), "%v", err2)
				// What the server found depends on when it looked: each message is checked, so the
				// check may come between the write and the rename or removal (then the change
				// time is compared too) or after it (the change time stamped by losing its name
				// too: not compared).
				says := []string{"its modification time and change time differ (written to, or touched)"}
				if then != "left alone" {
					says = append(says, "its modification time differs (written to, or touched)")
				}
				msg := status.Convert(err2).Message()
				assert.True(t, slices.ContainsFunc(says, func(s string) bool {
					return strings.Contains(msg, "x.npy: x: file changed while being read: "+s)
				}), "%q says one of %q", msg, says)
				assert.NotContains(t, err2.Error(), dir, "the server's path stays with the server")

				got, err := c.Get(ctx, "y")
				require.NoError(t, err, "the server serves on")
				assert.Equal(t, float32(7), got.Dense.(*ndarray.Dense[float32]).Get(15, 3))
			})
		}
	}
}

// TestChurnServesOneVersion: clients get a served file over and over, by the data URL and by
// DoGet, while a writer makes a new version of it every few milliseconds, in turn renaming a
// new file over it (the server rescans then, and serves the new file) and rewriting that file
// in place with its size kept — overwritten, or truncated and written again — under the
// streams that run on it, which the next rename leaves behind. Every version is filled with a
// value of its own: each get that succeeds holds exactly one version whole, and the version
// it says it received (WithVersion) names that one alone; the others end in DataLoss, nothing
// else.
func TestChurnServesOneVersion(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	const cols = 1024
	rowsOf := func(v int) int64 { return int64(448 + 64*((v/2)%2)) } // 1.75 or 2 MiB, the same for a file and its rewrite
	replaceFile(t, x, npyBytes(t, rowsOf(1), cols, 1))
	s := serve(t, Options{MaxMessageBytes: 256 << 10}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	ctx := context.Background()

	var (
		wg              sync.WaitGroup
		done            atomic.Bool
		written         atomic.Int64 // the last version written
		whole, dataLoss atomic.Int64
		failures        = make(chan string, 16)
		versionsMu      sync.Mutex
		valueOf         = map[string]float32{} // what each version received held: one value each
	)
	fail := func(msg string) {
		select {
		case failures <- msg:
		default:
		}
	}
	written.Store(1)
	for i := range 4 {
		c := dial(t, s.uri, ClientOptions{GRPCOnly: i%2 == 1}) // two by the data URL, two by DoGet
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				var version string
				got, err := c.Get(ctx, "x", WithVersion(func(v string) { version = v }))
				switch {
				case status.Code(err) == codes.DataLoss:
					dataLoss.Add(1)
					continue
				case err != nil:
					fail(fmt.Sprintf("client %d: %v", i, err))
					continue
				}
				vals := got.Dense.(*ndarray.Dense[float32]).Ravel()
				v := vals[0]
				other := slices.IndexFunc(vals, func(e float32) bool { return e != v })
				switch {
				case v < 1 || int64(v) > written.Load() || float32(int(v)) != v:
					fail(fmt.Sprintf("client %d: a value %v no version has", i, v))
				case other >= 0:
					fail(fmt.Sprintf("client %d: version %v mixed with value %v at %d", i, v, vals[other], other))
				case got.Rows() != rowsOf(int(v)):
					fail(fmt.Sprintf("client %d: %d rows of version %v, which has %d", i, got.Rows(), v, rowsOf(int(v))))
				case !strings.HasPrefix(version, "file-"):
					fail(fmt.Sprintf("client %d: the version received is %q", i, version))
				default:
					whole.Add(1)
					versionsMu.Lock()
					if was, ok := valueOf[version]; ok && was != v {
						fail(fmt.Sprintf("client %d: version %s received with values %v and %v", i, version, was, v))
					}
					valueOf[version] = v
					versionsMu.Unlock()
				}
			}
		}()
	}

	deadline := time.Now().Add(2 * time.Second)
	for v := 2; time.Now().Before(deadline); v += 2 {
		written.Store(int64(v))
		replaceFile(t, x, npyBytes(t, rowsOf(v), cols, float32(v)))
		_, err := s.store.Rescan()
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond) // streams start on the new file
		if v%8 == 0 {
			time.Sleep(20 * time.Millisecond) // and now and then end on it, however slow the machine
		}

		b := npyBytes(t, rowsOf(v+1), cols, float32(v+1))
		written.Store(int64(v + 1))
		if v%4 == 0 { // overwritten: no page of the file goes missing
			f, err := os.OpenFile(x, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(b, 0)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		} else { // truncated and written again
			require.NoError(t, os.WriteFile(x, b, 0o644))
		}
		time.Sleep(time.Millisecond)
	}
	done.Store(true)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	t.Logf("gets: %d whole, %d DataLoss; %d versions written", whole.Load(), dataLoss.Load(), written.Load())
	assert.Positive(t, whole.Load())

	// Once the writer stops, the last version is served whole.
	_, err = s.store.Rescan()
	require.NoError(t, err)
	got, err := dial(t, s.uri, ClientOptions{}).Get(ctx, "x")
	require.NoError(t, err)
	last := written.Load()
	assert.Equal(t, rowsOf(int(last)), got.Rows())
	assert.Equal(t, -1, slices.IndexFunc(got.Dense.(*ndarray.Dense[float32]).Ravel(), func(e float32) bool { return e != float32(last) }))
}

// TestEveryFlightHasAVersion: a served file's tensor is file-HEX, modified when the file was,
// the same across rescans that find it unchanged and another once it is replaced; each put
// is upload-N, N counting the puts (a table's columns share their table's); List, Info and
// the stream itself (by DoGet and by the data URL) say the same version.
func TestEveryFlightHasAVersion(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	replaceFile(t, x, npyBytes(t, 4, 3, 1))
	when := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	require.NoError(t, os.Chtimes(x, when, when))
	s := serve(t, Options{Writable: true}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	ctx := context.Background()
	clients := map[string]*Client{"DoGet": dial(t, s.uri, ClientOptions{GRPCOnly: true}), "data URL": dial(t, s.uri, ClientOptions{})}
	received := func(name string) map[string]string {
		out := map[string]string{}
		for via, c := range clients {
			before := s.started.Load()
			_, err := c.Get(ctx, name, WithVersion(func(v string) { out[via] = v }))
			require.NoError(t, err)
			if via == "data URL" {
				require.Equal(t, before+1, s.started.Load(), "fetched by the data URL")
			}
		}
		return out
	}

	c := clients["DoGet"]
	info, err := c.Info(ctx, "x")
	require.NoError(t, err)
	require.Regexp(t, `^file-[0-9a-f]{16}$`, info.Version)
	assert.True(t, when.Equal(info.Modified), "%v", info.Modified)
	assert.Equal(t, map[string]string{"DoGet": info.Version, "data URL": info.Version}, received("x"))
	_, err = s.store.Rescan()
	require.NoError(t, err)
	again, err := c.Info(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, info.Version, again.Version, "unchanged: the same version")

	replaceFile(t, x, npyBytes(t, 4, 3, 2))
	_, err = s.store.Rescan()
	require.NoError(t, err)
	replaced, err := c.Info(ctx, "x")
	require.NoError(t, err)
	assert.NotEqual(t, info.Version, replaced.Version)
	assert.True(t, replaced.Modified.After(when))
	assert.Equal(t, map[string]string{"DoGet": replaced.Version, "data URL": replaced.Version}, received("x"))

	put := func(name string) {
		require.NoError(t, c.Put(ctx, name, dataset.Tensor{Dense: ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3}, 3))}))
	}
	start := time.Now()
	put("u")
	put("v")
	put("u")
	require.NoError(t, c.PutTable(ctx, "tab", []dataset.Tensor{
		{Name: "tab.a", Column: "a", Dense: ndarray.Must(ndarray.FromSlice([]int64{1, 2}, 2))},
		{Name: "tab.b", Column: "b", Dense: ndarray.Must(ndarray.FromSlice([]float32{1, 2}, 2))},
	}))
	infos, err := c.List(ctx)
	require.NoError(t, err)
	versions := map[string]string{}
	for _, i := range infos {
		versions[i.Name] = i.Version
		if strings.HasPrefix(i.Version, "upload-") {
			assert.False(t, i.Modified.Before(start.Add(-time.Second)), "%s: modified at its upload", i.Name)
		}
	}
	assert.Equal(t, map[string]string{"x": replaced.Version, "u": "upload-3", "v": "upload-2", "tab": "upload-4", "tab.a": "upload-4", "tab.b": "upload-4"}, versions)
	assert.Equal(t, map[string]string{"DoGet": "upload-3", "data URL": "upload-3"}, received("u"))
	tab, err := c.Info(ctx, "tab")
	require.NoError(t, err)
	for _, col := range tab.Columns {
		assert.Equal(t, "upload-4", col.Version, col.Name)
	}
}
