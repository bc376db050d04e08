package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeGetPut runs serve on a directory, then ls, get and put against it, as two shells
// would.
func TestServeGetPut(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"dense_int32_4x3_strided.tensor", "batch_tensors.arrow", "csr_float_4x4_i32.tensor"} {
		b, err := os.ReadFile(filepath.Join("../../ipc/testdata/arrow-cpp-17", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	lis.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--token", "t0k", "--writable", dir}, &out, &errOut)
	}()
	uri := "grpc://" + addr
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "serving") }, 10*time.Second, 10*time.Millisecond)

	code, stdout, stderr := runCLI("ls", "--token", "t0k", uri)
	require.Equal(t, exitOK, code, stderr)
	for _, name := range []string{"dense_int32_4x3_strided", "batch_tensors.images", "batch_tensors.nested", "csr_float_4x4_i32"} {
		require.Contains(t, stdout, name)
	}
	code, _, stderr = runCLI("ls", uri)
	require.Equal(t, exitFail, code)
	require.Contains(t, stderr, "Unauthenticated")

	expected := map[string]string{}
	for _, line := range strings.Split(readFile(t, "../../ipc/testdata/arrow-cpp-17/expected.jsonl"), "\n") {
		for _, name := range []string{"dense_int32_4x3_strided", "batch_tensors.images", "batch_tensors.nested", "csr_float_4x4_i32"} {
			if strings.Contains(line, `"name": "`+name+`"`) {
				expected[name] = line[strings.Index(line, `"sha256": "`)+11:][:64]
			}
		}
	}
	for name, out := range map[string]string{
		"dense_int32_4x3_strided": "a.npy", "batch_tensors.images": "b.tensor", "batch_tensors.nested": "c.arrows", "csr_float_4x4_i32": "d.coo",
	} {
		path := filepath.Join(t.TempDir(), out)
		code, _, stderr := runCLI("get", "--token", "t0k", uri, name, path)
		require.Equal(t, exitOK, code, stderr)
		code, stdout, stderr := runCLI("inspect", "--json", path)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, stdout, expected[name], name)
	}
	code, _, stderr = runCLI("get", "--token", "t0k", uri, "nope", filepath.Join(t.TempDir(), "x.npy"))
	require.Equal(t, exitFail, code)
	require.Contains(t, stderr, "no such tensor")
	code, _, stderr = runCLI("get", "--token", "t0k", uri, "batch_tensors.images", filepath.Join(t.TempDir(), "x.what"))
	require.Equal(t, exitUsage, code, "an extension that names no format is a usage error")
	require.Contains(t, stderr, "--to")

	code, _, stderr = runCLI("put", "--token", "t0k", "--name", "uploaded", uri, filepath.Join(dir, "dense_int32_4x3_strided.tensor"))
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ = runCLI("ls", "--json", "--token", "t0k", uri)
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, `"name":"uploaded"`)

	cancel()
	require.Equal(t, exitOK, <-done, errOut.String())
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestGetByDataURLAndByDoGet: `get` fetches the same file by the endpoint's data URL (the
// default) and with --grpc-only; `serve --grpc-only` lists no data URL and `get` falls back to
// DoGet by itself.
func TestGetByDataURLAndByDoGet(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../ipc/testdata/arrow-cpp-17/batch_tensors.arrow")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.arrow"), b, 0o644))
	var outs []string
	for _, tc := range []struct{ serve, get []string }{
		{nil, nil},
		{nil, []string{"--grpc-only"}},
		{[]string{"--grpc-only"}, nil},
	} {
		s := startServe(t, dir, tc.serve...)
		out := filepath.Join(t.TempDir(), "images.npy")
		code, _, stderr := runCLI(append(append([]string{"get"}, tc.get...), s.uri, "b.images", out)...)
		require.Equal(t, exitOK, code, stderr)
		outs = append(outs, readFile(t, out))
		s.stop()
	}
	require.Equal(t, outs[0], outs[1])
	require.Equal(t, outs[0], outs[2])
	require.NotEmpty(t, outs[0])
}

// TestGetSaysWhichVersion: ls --json gives each served tensor's version and when it was made
// — a served file's (file-HEX, its modification time), an upload's (upload-N) — and get says
// which version it fetched, beside what it wrote.
func TestGetSaysWhichVersion(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(x, must(os.ReadFile("../../npy/testdata/numpy/f64_fortran.npy")), 0o644))
	when := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	require.NoError(t, os.Chtimes(x, when, when))
	s := startServe(t, dir, "--writable")
	code, _, stderr := runCLI("put", "--name", "up", s.uri, x)
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := runCLI("ls", "--json", s.uri)
	require.Equal(t, exitOK, code, stderr)
	type listed struct {
		Version  string `json:"version"`
		Modified string `json:"modified"`
	}
	got := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var line struct {
			Name string `json:"name"`
			listed
		}
		require.NoError(t, dec.Decode(&line))
		got[line.Name] = line.listed
	}
	require.Regexp(t, `^file-[0-9a-f]{16}$`, got["x"].Version)
	assert.Equal(t, "2026-05-04T03:02:01Z", got["x"].Modified)
	assert.Equal(t, "upload-1", got["up"].Version)
	_, err := time.Parse(time.RFC3339Nano, got["up"].Modified)
	assert.NoError(t, err)

	for name, version := range map[string]string{"x": got["x"].Version, "up": "upload-1"} {
		out := filepath.Join(t.TempDir(), "out.npy")
		code, stdout, stderr := runCLI("get", s.uri, name, out)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, name+": dense float64 (3, 5) (version "+version+") → "+out+"\n", stdout)
	}
}

// TestDeleteOfAServedFile: delete of a tensor read from a file of the served directory (a
// subdirectory of one file is a tensor of its own) fails in one line saying so and naming the
// file under the directory; the tensor stays served.
func TestDeleteOfAServedFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "x.npy"), must(os.ReadFile("../../npy/testdata/numpy/f64_fortran.npy")), 0o644))
	s := startServe(t, dir, "--writable")
	code, stdout, stderr := runCLI("delete", s.uri, "sub")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "ndarrow delete: flight: a tensor of a served directory: sub is read from sub/x.npy; remove the file to remove it\n", stderr)
	assert.NotContains(t, stderr, dir, "the server's path stays with the server")
	code, stdout, stderr = runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "sub ")
}
