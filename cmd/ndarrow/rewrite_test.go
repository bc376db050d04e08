//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// rewriteKeepingTimes writes the bytes of the file with over the file at path in place and
// sets its times back, until its change time differs (fileidtest.RewriteKeepingTimes, for a
// child process, which has no *testing.T: it panics on an error).
func rewriteKeepingTimes(path, with string) {
	b, err := os.ReadFile(with)
	if err == nil {
		var before os.FileInfo
		if before, err = os.Stat(path); err == nil && before.Size() != int64(len(b)) {
			err = errors.New("the size would tell")
		}
		if err == nil {
			err = os.WriteFile(path, b, 0) // truncates to 0 and writes again: the same size at the end
		}
		for err == nil {
			if err = os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
				break
			}
			var now os.FileInfo
			if now, err = os.Stat(path); err == nil && !fileid.ChangeTimeOf(now).Equal(fileid.ChangeTimeOf(before)) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	panic(err)
}

// stamped is what an error says of a file rewritten keeping its size and modification time.
const stamped = "file changed while being read: its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)"

// parquetVersion is a Parquet file of a table t of rows rows: label, every value v, and
// emb, rows×2 floats; of the same size for v 0x0202020202020202 and 0x0303030303030303, ZSTD
// or not (constant columns, whose ZSTD pages are runs of one byte).
func parquetVersion(t *testing.T, rows, v int64, c parquet.Compression) []byte {
	ts := []dataset.Tensor{{Name: "label", Column: "label", Dense: ndarray.Full(v, rows)}, {Name: "emb", Column: "emb", Dense: ndarray.Full(float32(v&0xff), rows, 2)}}
	var b bytes.Buffer
	require.NoError(t, dataset.Write(&b, dataset.FormatParquet, ts, dataset.WriteOptions{ParquetCompression: c}))
	return b.Bytes()
}

// twoVersions writes version 1 of a Parquet table of rows rows at dir/t.parquet and returns
// its path and the bytes of version 2, of the same size.
func twoVersions(t *testing.T, dir string, rows int64, c parquet.Compression) (string, []byte) {
	v1, v2 := parquetVersion(t, rows, 0x0202020202020202, c), parquetVersion(t, rows, 0x0303030303030303, c)
	require.Len(t, v2, len(v1), "the versions are of one size")
	require.NotEqual(t, v1, v2)
	in := filepath.Join(dir, "t.parquet")
	require.NoError(t, os.WriteFile(in, v1, 0o644))
	return in, v2
}

// child is a command line run as a process of its own, its standard error gathered (read
// while the child runs, as a failure's message).
type child struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	exited chan error
}

// startChild starts the command line as a process of its own; stdout, when not nil, gets the
// read end of a pipe of its standard output, to be read to its end before status is asked
// (Wait closes it).
func startChild(t *testing.T, stdout *io.ReadCloser, args ...string) *child {
	c := &child{cmd: exec.Command(os.Args[0], args...), exited: make(chan error, 1)}
	c.cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
	c.cmd.Stderr = &c.stderr
	if stdout != nil {
		var err error
		*stdout, err = c.cmd.StdoutPipe()
		require.NoError(t, err)
	}
	require.NoError(t, c.cmd.Start())
	if stdout == nil {
		go func() { c.exited <- c.cmd.Wait() }()
	}
	return c
}

// status waits for the child to end and returns its exit status.
func (c *child) status(t *testing.T) int {
	var err error
	if c.cmd.Stdout != nil { // a pipe, read to its end
		err = c.cmd.Wait()
	} else {
		err = <-c.exited
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// openFIFO opens the FIFO at path for reading once the child opens it for writing, or fails
// the test with the child's standard error when the child ends first.
func (c *child) openFIFO(t *testing.T, path string) *os.File {
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			f = nil
		}
		opened <- f
	}()
	select {
	case f := <-opened:
		require.NotNil(t, f)
		return f
	case err := <-c.exited:
		if w, werr := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); werr == nil { // let the opener go
			w.Close()
		}
		if f := <-opened; f != nil {
			f.Close()
		}
		t.Fatalf("the child ended (%v) before it opened %s: %s", err, path, c.stderr.String())
		return nil
	}
}

// requireFailedNaming requires the child's standard error to be the one line of an error of
// command name naming the file in once, which says it changed and what differs.
func requireFailedNaming(t *testing.T, stderr, name, in string) {
	t.Helper()
	assert.True(t, strings.HasPrefix(stderr, "ndarrow "+name+": "+in+": "), stderr)
	assert.Contains(t, stderr, stamped)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
	assert.Equal(t, 1, strings.Count(stderr, in), "the file named once: %s", stderr)
}

// TestConvertToAPipeFailsWhenItsInputIsRewritten: `convert --to arrows` of a Parquet file to
// standard output, a pipe the test reads slowly — from the file's pages (uncompressed) and
// decoded (ZSTD) — whose input is rewritten in place once the output has begun, keeping its
// size and modification time (rsync --inplace -t): the command cannot end before the test
// reads the rest, so the rewrite is always under it, and it exits 1 with one line naming the
// file and what differs. Standard output holds labels of the version read and no byte of the
// new version: what goes to a pipe is copied, checked against the file, then written (it
// once wrote on after the rewrite, the exit status alone telling its reader: an Arrow stream
// cut at a message's end reads as whole).
func TestConvertToAPipeFailsWhenItsInputIsRewritten(t *testing.T) {
	v1Label, v2Label := bytes.Repeat([]byte{2}, 8), bytes.Repeat([]byte{3}, 8) // 0x0202020202020202, 0x0303030303030303
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			in, v2 := twoVersions(t, t.TempDir(), 1<<20, c) // 8 MiB of labels: more than a pipe holds
			var stdout io.ReadCloser
			ch := startChild(t, &stdout, "convert", "--to", "arrows", in, "-")
			head := make([]byte, 4096)
			_, err := io.ReadFull(stdout, head) // the file is open and being written out
			require.NoError(t, err, ch.stderr.String())
			fileidtest.RewriteKeepingTimes(t, in, v2)
			rest, err := io.ReadAll(stdout)
			require.NoError(t, err)
			assert.Equal(t, exitFail, ch.status(t))
			requireFailedNaming(t, ch.stderr.String(), "convert", in)
			got := append(head, rest...)
			assert.True(t, bytes.Contains(got, v1Label), "labels of the version read")
			assert.False(t, bytes.Contains(got, v2Label), "a label of the new version, at byte %d of %d", bytes.Index(got, v2Label), len(got))
			assert.Less(t, len(got), 8<<20, "not every label: it stopped at the rewrite")
		})
	}
}

// TestBatchesFailsWhenItsInputIsRewritten: `batches` of a Parquet file (uncompressed and
// ZSTD) to a .arrows file, its cursors to a FIFO the test reads slowly, whose input is
// rewritten in place keeping its size and modification time once the first cursor is
// written: the command cannot end before the test reads the other cursors, so the rewrite is
// always under it; it exits 1 with one line naming the file and what differs, and leaves
// nothing at OUT.
func TestBatchesFailsWhenItsInputIsRewritten(t *testing.T) {
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			in, v2 := twoVersions(t, dir, 4096, c) // 4096 cursors of about 50 bytes: more than a pipe holds
			cursors := filepath.Join(dir, "cursors")
			require.NoError(t, syscall.Mkfifo(cursors, 0o644))
			ch := startChild(t, nil, "batches", "--batch-size", "1", "--shuffle", "7", "--cursors", cursors, in, filepath.Join(dir, "out.arrows"))
			f := ch.openFIFO(t, cursors)
			defer f.Close()
			r := bufio.NewReader(f)
			first, err := r.ReadString('\n') // the table is open and its batches being written
			require.NoError(t, err, ch.stderr.String())
			require.True(t, strings.HasPrefix(first, "c2."), first)
			fileidtest.RewriteKeepingTimes(t, in, v2)
			_, err = io.Copy(io.Discard, r)
			require.NoError(t, err)
			assert.Equal(t, exitFail, ch.status(t))
			requireFailedNaming(t, ch.stderr.String(), "batches", in)
			assertOnly(t, dir, "t.parquet", "cursors")
		})
	}
}

// TestCommandsFailWhenTheirInputIsRewritten: every command that reads a local file, run as a
// process whose input is rewritten in place keeping its size and modification time once it is
// open (NDARROW_REWRITE_INPUTS_WITH) — convert to an Arrow stream from a Parquet file's pages
// and decoded, convert to another format, take, batches, inspect, put — exits 1 with one line
// naming the file and what differs, and leaves nothing at OUT (a regular file, or a FIFO given
// nothing but what was written before the check); inspect prints nothing of the file.
func TestCommandsFailWhenTheirInputIsRewritten(t *testing.T) {
	s := startServe(t, t.TempDir(), "--writable")
	for _, tc := range []struct {
		name  string
		codec parquet.Compression
		args  func(in, out string) []string
		out   string // OUT's name, "" for none
	}{
		{"convert --to arrows from the pages", parquet.Uncompressed, func(in, out string) []string { return []string{"convert", "--to", "arrows", in, out} }, "out.arrows"},
		{"convert --to arrows, decoded", parquet.Zstd, func(in, out string) []string { return []string{"convert", "--to", "arrows", in, out} }, "out.arrows"},
		{"convert --to arrows to a FIFO", parquet.Uncompressed, func(in, out string) []string { return []string{"convert", "--to", "arrows", in, out} }, "fifo"},
		{"convert to npz", parquet.Zstd, func(in, out string) []string { return []string{"convert", in, out} }, "out.npz"},
		{"take", parquet.Uncompressed, func(in, out string) []string { return []string{"take", "--rows", "0,5,-1", in, out} }, "out.npz"},
		{"batches", parquet.Zstd, func(in, out string) []string { return []string{"batches", "--batch-size", "100", in, out} }, "out.arrows"},
		{"inspect", parquet.Zstd, func(in, _ string) []string { return []string{"inspect", "--json", in} }, ""},
		{"put", parquet.Zstd, func(in, _ string) []string { return []string{"put", s.uri, in} }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, v2 := twoVersions(t, dir, 4096, tc.codec)
			with := filepath.Join(t.TempDir(), "v2")
			require.NoError(t, os.WriteFile(with, v2, 0o644))
			out := filepath.Join(dir, tc.out)
			var got <-chan []byte
			if tc.out == "fifo" {
				require.NoError(t, syscall.Mkfifo(out, 0o644))
				got = readFIFO(out)
			}
			cmd := exec.Command(os.Args[0], tc.args(in, out)...)
			cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1", "NDARROW_REWRITE_INPUTS_WITH="+with)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v: %s", err, stderr.String())
			assert.Equal(t, exitFail, exit.ExitCode(), stderr.String())
			name := tc.args(in, out)[0]
			if name == "put" {
				assert.Contains(t, stderr.String(), "the server holds what was sent, which may mix two versions: put it again")
			}
			requireFailedNaming(t, stderr.String(), name, in)
			switch tc.out {
			case "":
				if name == "inspect" {
					assert.Empty(t, stdout.String(), "nothing of a file that changed")
				}
				assertOnly(t, dir, "t.parquet")
			case "fifo":
				<-got
				assertOnly(t, dir, "t.parquet", "fifo")
			default:
				assertOnly(t, dir, "t.parquet")
			}
		})
	}
}

// TestConvertOfAViewToAPipeWritesNoByteOfARewrite: `convert` of a file whose tensor is a view
// of its mapping — a .npy file, an Arrow IPC file of one batch — to standard output, a pipe
// the test reads slowly (as .npy, as an Arrow stream), the input rewritten in place keeping
// its size and modification time once the output has begun: it exits 1 naming the file, and
// standard output holds values of the version read and none of the new one (each MiB copied
// from the mapping, checked, then written).
func TestConvertOfAViewToAPipeWritesNoByteOfARewrite(t *testing.T) {
	v1, v2 := math.Float32frombits(0x02020202), math.Float32frombits(0x03030303)
	for _, tc := range []struct{ in, to string }{{"x.npy", "npy"}, {"x.npy", "arrows"}, {"x.arrow", "arrows"}, {"x.arrow", "tensor"}} {
		t.Run(tc.in+" to "+tc.to, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, tc.in)
			version := func(v float32) []byte {
				path := filepath.Join(t.TempDir(), tc.in)
				require.NoError(t, dataset.Save(path, []dataset.Tensor{{Name: "x", Dense: ndarray.Full(v, 8192, 256)}}, dataset.WriteOptions{})) // 8 MiB
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				return b
			}
			b1, b2 := version(v1), version(v2)
			require.Len(t, b2, len(b1))
			require.NoError(t, os.WriteFile(in, b1, 0o644))
			var stdout io.ReadCloser
			ch := startChild(t, &stdout, "convert", "--to", tc.to, in, "-")
			head := make([]byte, 4096)
			_, err := io.ReadFull(stdout, head)
			require.NoError(t, err, ch.stderr.String())
			fileidtest.RewriteKeepingTimes(t, in, b2)
			rest, err := io.ReadAll(stdout)
			require.NoError(t, err)
			assert.Equal(t, exitFail, ch.status(t))
			requireFailedNaming(t, ch.stderr.String(), "convert", in)
			got := append(head, rest...)
			assert.True(t, bytes.Contains(got, bytes.Repeat([]byte{2}, 16)), "values of the version read")
			assert.False(t, bytes.Contains(got, bytes.Repeat([]byte{3}, 16)), "a value of the new version, at byte %d of %d", bytes.Index(got, bytes.Repeat([]byte{3}, 16)), len(got))
		})
	}
}
