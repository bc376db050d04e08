package flight

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

// testServer is a Server on a loopback port, with a checked allocator for its store and
// sends.
type testServer struct {
	*Server
	store *Store
	mem   *memory.CheckedAllocator
	uri   string
}

// serve starts a server on 127.0.0.1 with opts, stopped (and its allocator checked for leaks)
// when the test ends. scheme is "grpc" or "grpc+tls".
func serve(t testing.TB, opts Options, scheme string) *testServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return serveScheme(t, lis, opts, scheme)
}

// serveOn starts a plaintext server on lis.
func serveOn(t testing.TB, lis net.Listener, opts Options) *testServer {
	return serveScheme(t, lis, opts, "grpc")
}

func serveScheme(t testing.TB, lis net.Listener, opts Options, scheme string) *testServer {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	store := NewStore(mem)
	if opts.Allocator == nil {
		opts.Allocator = mem
	}
	uri := scheme + "://" + lis.Addr().String()
	if len(opts.Shards) > 0 && opts.Location == "" {
		opts.Location = uri
	}
	srv, err := NewServer(store, opts)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		require.NoError(t, <-done)
		store.Close()
		mem.AssertSize(t, 0)
	})
	return &testServer{Server: srv, store: store, mem: mem, uri: uri}
}

// dial returns a client for s closed when the test ends.
func dial(t testing.TB, uri string, opts ClientOptions) *Client {
	t.Helper()
	c, err := Dial(uri, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// expectedLine is the part of a golden expected.jsonl line the tests compare.
type expectedLine struct {
	Name   string  `json:"name"`
	Shape  []int64 `json:"shape"`
	NRows  int64   `json:"nrows"` // of a ragged tensor
	SHA256 string  `json:"sha256"`
}

func readExpected(t testing.TB, path string) map[string]expectedLine {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]expectedLine{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var e expectedLine
		require.NoError(t, json.Unmarshal(line, &e))
		out[e.Name] = e
	}
	return out
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
