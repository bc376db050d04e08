package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/sparse"
)

// TestMain runs the command itself when a test starts this binary as a child process with
// NDARROW_RUN_MAIN=1, so that signals and exit statuses are tested on the real process;
// NDARROW_SHRINK_INPUTS_TO=N truncates each input file to N bytes once it is mapped, and
// NDARROW_REWRITE_INPUTS_WITH=FILE writes FILE's bytes over it in place, its size and times
// kept (what rsync --inplace -t leaves); NDARROW_ADDRESS_SPACE_EXTRA=N limits the process's
// address space to what it maps at start and N bytes more (ulimit -v).
func TestMain(m *testing.M) {
	if os.Getenv("NDARROW_RUN_MAIN") == "1" {
		limitAddressSpaceForMain()
		if with := os.Getenv("NDARROW_REWRITE_INPUTS_WITH"); with != "" {
			inputLoaded = func(path string) { rewriteKeepingTimes(path, with) }
		}
		if size := os.Getenv("NDARROW_SHRINK_INPUTS_TO"); size != "" {
			n, err := strconv.ParseInt(size, 10, 64)
			if err != nil {
				panic(err)
			}
			inputLoaded = func(path string) { // the file shrinks once it is mapped
				if err := os.Truncate(path, n); err != nil {
					panic(err)
				}
			}
		}
		main()
	}
	os.Exit(m.Run())
}

// hostileCOO writes the hostile input: a COO tensor whose shape claims
// [1895825411, 4] with 4 stored values — a 30 GB dense form of float32.
func hostileCOO(t *testing.T) string {
	c := sparse.NewCOO[float32](1895825411, 4)
	for i := range int64(4) {
		c.Set(float32(i+1), i*1000, i)
	}
	path := filepath.Join(t.TempDir(), "hostile.coo")
	var buf bytes.Buffer
	_, err := ipc.WriteSparse[float32](&buf, c, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// TestDenseFormsAreBounded: hashing or writing the dense form of a sparse tensor whose shape
// claims far more than it stores is refused at once, naming the shape and the limit, and
// leaves no output; the flag raises the limit.
func TestDenseFormsAreBounded(t *testing.T) {
	path := hostileCOO(t)
	start := time.Now()
	code, stdout, stderr := runCLI("inspect", "--json", path)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "shape (1895825411, 4) has 7583301644 elements, above the limit of 268435456")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)

	out := filepath.Join(filepath.Dir(path), "out.npy")
	code, _, stderr = runCLI("convert", "--to", "npy", path, out)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "above the limit of 268435456")
	assertOnly(t, filepath.Dir(path), "hostile.coo")

	code, _, stderr = runCLI("convert", "--to", "csr", path, out)
	assert.Equal(t, exitFail, code, "a CSR's row pointers follow the shape too")
	assert.Contains(t, stderr, "needs 1895825412 pointers")
	assertOnly(t, filepath.Dir(path), "hostile.coo")
	assert.Less(t, time.Since(start), 5*time.Second, "refused, not attempted")

	code, stdout, stderr = runCLI("convert", "--to", "coo", path, out)
	assert.Equal(t, exitOK, code, "sparse to sparse costs what is stored: %s", stderr)
	assert.Empty(t, stdout)

	small := filepath.Join(t.TempDir(), "small.coo")
	c := sparse.NewCOO[float32](300, 4)
	c.Set(1, 2, 3)
	var buf bytes.Buffer
	_, err := ipc.WriteSparse[float32](&buf, c, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(small, buf.Bytes(), 0o644))
	code, _, stderr = runCLI("inspect", "--max-dense", "1000", small)
	assert.Equal(t, exitFail, code, "1200 elements above a limit of 1000")
	assert.Contains(t, stderr, "above the limit of 1000")
	code, _, stderr = runCLI("inspect", "--max-dense", "1200", small)
	assert.Equal(t, exitOK, code, stderr)
}

// assertOnly checks that dir holds exactly the named files: no output, no temporary.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, names, got)
}

// TestInterruptStopsLongWork starts `ndarrow inspect` on a sparse tensor whose dense form
// (the limit raised for it) takes half a minute to hash, interrupts it with SIGINT and
// SIGTERM, and checks that it stops within a second with the conventional status.
func TestInterruptStopsLongWork(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts child processes that hash for a second each")
	}
	path := hostileCOO(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "inspect", "--max-dense", "10000000000", path)
			cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			time.Sleep(300 * time.Millisecond) // hashing is under way
			sent := time.Now()
			require.NoError(t, cmd.Process.Signal(tc.sig))
			err := cmd.Wait()
			took := time.Since(sent)
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v: %s", err, stderr.String())
			assert.Equal(t, tc.code, exit.ExitCode(), stderr.String())
			assert.Less(t, took, time.Second, "stopped within a second")
			assert.Regexp(t, "interrupted|terminated", stderr.String())
		})
	}
}

// TestInterruptedGetSaysSo interrupts `ndarrow get` from a server that accepts the connection
// and never answers: the one line says "interrupted", not what the call was doing when it
// stopped ("context canceled"), and the status is 130.
func TestInterruptedGetSaysSo(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	out := filepath.Join(t.TempDir(), "out.npy")
	cmd := exec.Command(os.Args[0], "get", "grpc://"+lis.Addr().String(), "drip", out)
	cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(300 * time.Millisecond) // connecting, waiting
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v: %s", err, stderr.String())
	assert.Equal(t, 130, exit.ExitCode(), stderr.String())
	assert.Equal(t, "ndarrow get: interrupted\n", stderr.String())
	assert.NoFileExists(t, out)
}

// TestInterruptedCommandsLeaveNothing drives runInterruptible with commands standing in for
// real ones: one that stops when its context ends, one that never does (abandoned after the
// grace period, its temporary file removed), and serve, which is waited for.
func TestInterruptedCommandsLeaveNothing(t *testing.T) {
	interrupt := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) }

	cooperative := func(ctx context.Context, _ []string, _, _ io.Writer) int {
		interrupt()
		<-ctx.Done()
		return exitFail
	}
	start := time.Now()
	assert.Equal(t, 130, runInterruptible(cooperative, []string{"inspect"}, io.Discard, io.Discard))
	assert.Less(t, time.Since(start), grace, "a command that stops is not waited for beyond its return")

	tmp := filepath.Join(t.TempDir(), ".out.npy.123.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("half"), 0o644))
	stuck := func(ctx context.Context, _ []string, _, _ io.Writer) int {
		temporaries.add(tmp)
		interrupt()
		select {} // never returns: a conversion deep in a loop, say
	}
	var stderr bytes.Buffer
	start = time.Now()
	assert.Equal(t, 130, runInterruptible(stuck, []string{"convert"}, io.Discard, &stderr))
	assert.Less(t, time.Since(start), time.Second)
	assert.NoFileExists(t, tmp, "the temporary file of an abandoned command is removed")
	assert.Contains(t, stderr.String(), "ndarrow: interrupted\n")

	graceful := func(ctx context.Context, _ []string, _, _ io.Writer) int {
		interrupt()
		<-ctx.Done()
		time.Sleep(2 * grace) // a graceful shutdown takes its time
		return exitOK
	}
	assert.Equal(t, exitOK, runInterruptible(graceful, []string{"serve"}, io.Discard, io.Discard), "serve shuts down and exits 0")
}

// TestWriteAtomicallyRemovesItsTemporaryOnInterruption: a write cut by the context leaves
// neither the output nor the temporary file.
func TestWriteAtomicallyRemovesItsTemporaryOnInterruption(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	err := writeAtomically(ctx, filepath.Join(dir, "out.tensor"), func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 1024)); err != nil {
			return err
		}
		cancel(interruption{os.Interrupt})
		_, err := w.Write(make([]byte, 1024))
		return err
	})
	assert.ErrorContains(t, err, "interrupted")
	assertOnly(t, dir)
}
