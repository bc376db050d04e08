//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// readFIFO reads the FIFO at path whole, on a goroutine of its own (its open blocks until a
// writer opens it), and sends what it read (nil: it could not be opened).
func readFIFO(path string) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	return got
}

// ndarrowProcess runs the command line as a process of its own and returns its status, its
// standard output and its standard error.
func ndarrowProcess(t *testing.T, args ...string) (int, []byte, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.Bytes(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.Bytes(), stderr.String()
	}
	t.Fatalf("%v: %v", args, err)
	return 0, nil, ""
}

const image = "../../npy/testdata/numpy/u8_image.npy"

// TestOutputsAsAUnixToolWritesThem replays what a first-time user hit: a device or a FIFO
// given as OUT is written in place, not replaced by a regular file; "-" is standard output
// for every format; a directory as OUT is an error naming it once.
func TestOutputsAsAUnixToolWritesThem(t *testing.T) {
	dir := t.TempDir()
	want := filepath.Join(dir, "want.npy")
	code, _, stderr := runCLI("convert", image, want)
	require.Equal(t, exitOK, code, stderr)
	wantBytes, err := os.ReadFile(want)
	require.NoError(t, err)

	t.Run("a FIFO stands in for a device", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		got := readFIFO(fifo)
		code, stdout, stderr := ndarrowProcess(t, "convert", "--to", "npy", image, fifo)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stdout)
		assert.Equal(t, wantBytes, <-got, "the reader of the FIFO got the file")
		st, err := os.Lstat(fifo)
		require.NoError(t, err)
		assert.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "still a FIFO")
		assertOnly(t, dir, "fifo", "want.npy")
		require.NoError(t, os.Remove(fifo))
	})

	// Parquet to an Arrow stream: a file written from its pages and one decoded (ZSTD), each
	// opened once — the fast path decides before the FIFO is opened
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		t.Run(fmt.Sprintf("a FIFO given an Arrow stream of Parquet, %v", c), func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "t.parquet")
			ts := []dataset.Tensor{{Name: "x", Column: "x", Dense: ndarray.Must(ndarray.Arange[int64](0, 1000, 1))}}
			require.NoError(t, dataset.Save(in, ts, dataset.WriteOptions{ParquetCompression: c}))
			fifo := filepath.Join(dir, "fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o644))
			defer os.Remove(fifo)
			got := readFIFO(fifo)
			code, _, stderr := ndarrowProcess(t, "convert", "--to", "arrows", in, fifo)
			require.Equal(t, exitOK, code, stderr)
			tensors, _, err := dataset.Read(<-got, "t", limits.Limits{})
			require.NoError(t, err, "the reader of the FIFO got the whole stream")
			require.Len(t, tensors, 1)
			assert.EqualValues(t, 1000, tensors[0].Rows())
		})
	}

	t.Run("/dev/null", func(t *testing.T) {
		code, _, stderr := ndarrowProcess(t, "convert", "--to", "arrow", image, os.DevNull)
		require.Equal(t, exitOK, code, stderr)
		st, err := os.Stat(os.DevNull)
		require.NoError(t, err)
		assert.NotZero(t, st.Mode()&os.ModeCharDevice, "still a device")
	})

	// batches and get --batch-size write an Arrow stream to any OUT written in place, as every
	// other output: whatever its name
	t.Run("batches to /dev/null and a FIFO", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "t.parquet")
		writeLabelled(t, in, 100)
		code, stdout, stderr := ndarrowProcess(t, "batches", "--batch-size", "16", in, os.DevNull)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stdout)
		st, err := os.Stat(os.DevNull)
		require.NoError(t, err)
		assert.NotZero(t, st.Mode()&os.ModeCharDevice, "still a device")

		fifo := filepath.Join(dir, "fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		defer os.Remove(fifo)
		got := readFIFO(fifo)
		code, _, stderr = ndarrowProcess(t, "batches", "--batch-size", "16", in, fifo)
		require.Equal(t, exitOK, code, stderr)
		var rows []int64
		for _, b := range labels(t, <-got) {
			rows = append(rows, b...)
		}
		assert.Len(t, rows, 100, "the reader of the FIFO got every batch")
		st, err = os.Lstat(fifo)
		require.NoError(t, err)
		assert.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "still a FIFO")

		code, _, stderr = runCLI("batches", "--batch-size", "16", in, filepath.Join(dir, "b.parquet"))
		assert.Equal(t, exitUsage, code, "a regular file's name still says its format")
		assert.Contains(t, stderr, "OUT is an Arrow IPC stream: a .arrows file, - (standard output), or a device or FIFO")
	})

	for _, format := range []string{"npy", "npz", "arrow", "arrows", "tensor", "parquet"} {
		t.Run("- as "+format, func(t *testing.T) {
			code, stdout, stderr := ndarrowProcess(t, "convert", "--to", format, image, "-")
			require.Equal(t, exitOK, code, stderr)
			tensors, _, err := dataset.Read(stdout, "stdout", limits.Limits{})
			require.NoError(t, err)
			require.Len(t, tensors, 1)
			assert.Equal(t, ndarray.Shape{8, 8, 3}, tensors[0].Shape())
			if format == "npy" {
				assert.Equal(t, wantBytes, stdout, "the bytes a file gets")
			}
		})
	}

	t.Run("a directory", func(t *testing.T) {
		code, _, stderr := runCLI("convert", image, dir)
		assert.Equal(t, exitFail, code)
		assert.Equal(t, "ndarrow convert: "+dir+": is a directory\n", stderr)
	})
}

// TestCommandLinesAsUsersTypeThem: flags after the operands, a bad --to as a usage error,
// serve's bad address before its directory is read, an unreachable server in words.
func TestCommandLinesAsUsersTypeThem(t *testing.T) {
	code, stdout, stderr := runCLI("inspect", image, "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, `{"name":"u8_image"`), stdout)

	out := filepath.Join(t.TempDir(), "x.npy")
	code, _, stderr = runCLI("convert", image, out, "--to", "npy")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCLI("convert", "--", image, out)
	require.Equal(t, exitOK, code, stderr)

	code, _, stderr = runCLI("convert", "--to", "bogus", image, out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--to "bogus": unknown format`)
	code, _, _ = runCLI("get", "--to", "bogus", "grpc://127.0.0.1:1", "x", out)
	assert.Equal(t, exitUsage, code)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.npy"), []byte("\x93NUMPY"), 0o644))
	code, stdout, stderr = runCLI("serve", "--addr", "127.0.0.1:99999", dir)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "invalid port")
	assert.NotContains(t, stderr, "bad.npy", "the directory was not read")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)

	code, _, stderr = runCLI("ls", "grpc://127.0.0.1:1")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow ls: cannot reach 127.0.0.1:1: connection refused\n", stderr)
}

// TestJSONFieldsAgree: ls --json and inspect --json print the fields they share under one
// name, in one order; inspect summarizes a ragged tensor's row splits unless --splits.
func TestJSONFieldsAgree(t *testing.T) {
	const ragged = "../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow"
	dir := t.TempDir() // batch_tensors.arrow alone: beside batch_tensors.arrows neither is served
	b, err := os.ReadFile(ragged)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "batch_tensors.arrow"), b, 0o644))
	s := startServe(t, dir)
	code, lsOut, stderr := runCLI("ls", "--json", s.uri)
	require.Equal(t, exitOK, code, stderr)
	code, inspectOut, stderr := runCLI("inspect", "--json", ragged)
	require.Equal(t, exitOK, code, stderr)
	keys := func(line string) []string {
		var out []string
		dec := json.NewDecoder(strings.NewReader(line))
		_, _ = dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			out = append(out, k.(string))
			var skip json.RawMessage
			_ = dec.Decode(&skip)
		}
		return out
	}
	shared := []string{"name", "kind", "dtype", "shape", "dim_names"}
	first := strings.Split(lsOut, "\n")[0]
	if strings.Contains(first, `"kind":"table"`) { // a table flight's line, then its columns'
		first = strings.Split(lsOut, "\n")[1]
	}
	lsKeys := keys(first)
	assert.Equal(t, append(shared, "rows", "bytes", "endpoints", "version", "modified"), lsKeys)
	for _, line := range strings.Split(strings.TrimSpace(inspectOut), "\n") {
		var order []string
		for _, k := range keys(line) {
			if slices.Contains(shared, k) {
				order = append(order, k)
			}
		}
		assert.Equal(t, shared, order, line)
		assert.NotContains(t, line, "row_splits")
	}
	assert.Contains(t, inspectOut, `"nrows":`)
	_, withSplits, _ := runCLI("inspect", "--json", "--splits", ragged)
	assert.Contains(t, withSplits, `"row_splits":[[`)
}

// TestStandardInput: "-" as the input reads standard input whole, as a file of its format,
// its tensors named stdin…; with "-" as OUT too, convert is a filter.
func TestStandardInput(t *testing.T) {
	image, err := os.ReadFile(image)
	require.NoError(t, err)
	run := func(in []byte, args ...string) (int, []byte, string) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
		cmd.Stdin = bytes.NewReader(in)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), stdout.Bytes(), stderr.String()
		}
		require.NoError(t, err)
		return 0, stdout.Bytes(), stderr.String()
	}
	code, out, stderr := run(image, "inspect", "--json", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, string(out), `"name":"stdin","kind":"dense","dtype":"uint8","shape":[8,8,3]`)

	code, arrows, stderr := run(image, "convert", "--to", "arrows", "-", "-")
	require.Equal(t, exitOK, code, stderr)
	code, npyBytes, stderr := run(arrows, "convert", "--to", "npy", "-", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, image, npyBytes, "npy → arrows → npy through two pipes, bit for bit")

	code, _, stderr = run([]byte("not a tensor"), "inspect", "-")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow inspect: standard input: "+dataset.ErrNotTensors.Error()+"\n", stderr)
}
