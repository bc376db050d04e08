package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// serveProcess is `ndarrow serve` running as a process of its own.
type serveProcess struct {
	cmd            *exec.Cmd
	uri            string
	stdout, stderr *syncBuffer
	exited         chan error
}

// startServeProcess starts `ndarrow serve ARGS... DIR` as a child process on a free port.
func startServeProcess(t *testing.T, dir string, args ...string) *serveProcess {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	lis.Close()
	p := &serveProcess{uri: "grpc://" + addr, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	p.cmd = exec.Command(os.Args[0], append(append([]string{"serve", "--addr", addr}, args...), dir)...)
	p.cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	require.Eventually(t, func() bool {
		select {
		case err := <-p.exited:
			t.Fatalf("serve exited: %v\n%s", err, p.stderr.String())
		default:
		}
		return strings.Contains(p.stdout.String(), "serving")
	}, 10*time.Second, 10*time.Millisecond)
	return p
}

// stop ends the server with SIGTERM and requires a graceful exit that printed no stack.
func (p *serveProcess) stop(t *testing.T) {
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		require.NoError(t, err, p.stderr.String())
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	assert.NotContains(t, p.stderr.String(), "goroutine")
	assert.NotContains(t, p.stderr.String(), "fatal")
}

// lsNames returns what `ndarrow ls --json` lists: name → shape.
func lsNames(t *testing.T, uri string) map[string]string {
	code, stdout, stderr := runCLI("ls", "--json", uri)
	require.Equal(t, exitOK, code, stderr)
	out := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var line struct {
			Name  string  `json:"name"`
			Shape []int64 `json:"shape"`
		}
		require.NoError(t, dec.Decode(&line))
		out[line.Name] = fmt.Sprint(line.Shape)
	}
	return out
}

// followLimit is how soon a change must show: the second, more under the race
// detector, which slows everything several times (the plain run holds the second).
var followLimit = map[bool]time.Duration{false: time.Second, true: 3 * time.Second}[childtest.RaceEnabled]

// requireListed waits up to followLimit for `ndarrow ls` to list name with shape (shape ""
// for: not listed).
func requireListed(t *testing.T, uri, name, shape string) {
	t.Helper()
	start := time.Now()
	for {
		got, ok := lsNames(t, uri)[name]
		if (shape == "" && !ok) || (shape != "" && got == shape) {
			return
		}
		if time.Since(start) > followLimit {
			t.Fatalf("after %v ls lists %s as %q, want %q", followLimit, name, got, shape)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeNpyFile(t *testing.T, path string, rows int64, v float32) {
	var buf bytes.Buffer
	_, err := npy.Write(&buf, ndarray.Full(v, rows, 1024))
	require.NoError(t, err)
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	require.NoError(t, os.WriteFile(tmp, buf.Bytes(), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// TestServeSurvivesItsFilesChanging is the issue's session as a user would run it: `ndarrow
// get` of a large file while it is truncated under the running server. The server lives on;
// each get either writes the file's values or fails with one line naming the file by its path
// under DIR; files that appear are listed within a second; a refused column names its file
// the same way; serve --tfio gives a new connection the directory as it is now.
func TestServeSurvivesItsFilesChanging(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	writeNpyFile(t, x, 4096, 1) // 16 MiB
	parquettest.WriteNullElement(t, filepath.Join(dir, "nulls.parquet"), 64)
	sock := filepath.Join(t.TempDir(), "tfio.sock")
	p := startServeProcess(t, dir, "--max-message-bytes", "1048576", "--tfio", "unix://"+sock, "--tfio-tensors", "x")
	assert.Equal(t, int64(4096), tfioRows(t, sock))

	out := t.TempDir()
	var wg sync.WaitGroup
	results := make(chan string, 64)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				code, _, stderr := runCLI("get", p.uri, "x", filepath.Join(out, fmt.Sprintf("x%d-%d.npy", i, j)))
				if code == exitOK {
					results <- "ok"
				} else {
					results <- stderr
				}
			}
		}()
	}
	for range 8 {
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, os.Truncate(x, 1_000_000))
		writeNpyFile(t, x, 4096, 1)
	}
	wg.Wait()
	close(results)
	changed := 0
	for r := range results {
		if r == "ok" {
			continue
		}
		assert.Equal(t, 1, strings.Count(r, "\n"), r)
		assert.NotContains(t, r, dir, "the server's path")
		if strings.Contains(r, "x.npy: file changed while being read") {
			changed++
		} else {
			assert.Contains(t, r, "unreadable part x.npy: ", "not served while truncated")
		}
	}
	t.Logf("%d of 16 gets met a truncation", changed)
	select {
	case err := <-p.exited:
		t.Fatalf("the server died: %v\n%s", err, p.stderr.String())
	default:
	}
	assert.Contains(t, p.stderr.String(), x, "the server's log names the file whole")

	// A refused column names its file under DIR.
	code, _, stderr := runCLI("get", p.uri, "nulls.emb", filepath.Join(out, "nulls.npy"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "nulls.parquet: nulls.emb: ")
	assert.NotContains(t, stderr, dir)

	// A new file, and a new tfio connection after a replace.
	writeNpyFile(t, filepath.Join(dir, "y.npy"), 3, 2)
	requireListed(t, p.uri, "y", "[3 1024]")
	writeNpyFile(t, x, 100, 3)
	requireListed(t, p.uri, "x", "[100 1024]")
	assert.Equal(t, int64(100), tfioRows(t, sock))
	assert.Regexp(t, `changed: added ([a-z]+, )*y\b`, p.stdout.String(), "serve prints what changed")
	p.stop(t)
}

// TestServeWithoutWatching: with --watch=false the directory is rescanned at SIGHUP only.
func TestServeWithoutWatching(t *testing.T) {
	dir := t.TempDir()
	writeNpyFile(t, filepath.Join(dir, "a.npy"), 2, 1)
	p := startServeProcess(t, dir, "--watch=false")
	writeNpyFile(t, filepath.Join(dir, "b.npy"), 2, 1)
	time.Sleep(300 * time.Millisecond)
	assert.NotContains(t, lsNames(t, p.uri), "b", "no rescan without a signal")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	requireListed(t, p.uri, "b", "[2 1024]")
	p.stop(t)
}

// tfioRows reads one tensorflow-io stream from the socket and returns its rows.
func tfioRows(t *testing.T, sock string) int64 {
	conn, err := net.Dial("unix", sock)
	require.NoError(t, err)
	b, err := io.ReadAll(conn)
	conn.Close()
	require.NoError(t, err)
	r, err := arrowipc.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer r.Release()
	rows := int64(0)
	for r.Next() {
		rows += r.Record().NumRows()
	}
	require.NoError(t, r.Err())
	return rows
}
