package main

import (
	"errors"
	"io"
	"os"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/memcopy"
)

// checkedRun is how many bytes a checkedWriter copies before it asks its inputs whether they
// changed and writes them on: one fstat a MiB.
const checkedRun = 1 << 20

// checkedAsWritten returns w, the output out ("-": stdout) that a command writes what it read
// of its inputs to, so that no byte of a version of an input after the one it read reaches a
// reader that takes the output as it comes — a pipe, a FIFO, a socket, standard output of any
// kind but a character device, which nothing renames into place once whole and whose reader
// takes a stream that stops at a message's end as whole: what is written to such an output
// goes through a copy of checkedRun bytes, check asked before each copy is written on (check
// nil: standard input, nothing to ask). A copy made before a check that finds the input
// unchanged holds bytes of the version read; once a check fails nothing more is written, and
// the command fails with check's error. flush writes what is left, after a last check. Any
// other output — a regular file renamed into place, an object's upload completed, both once
// the command checked its inputs; a character device (/dev/null), which reads nothing — is w
// itself, as written, and flush does nothing.
func checkedAsWritten(out string, stdout io.Writer, w io.Writer, check func() error) (io.Writer, func() error) {
	if check == nil || discards(out, stdout) || out != "-" && !writtenInPlace(out) {
		return w, func() error { return nil }
	}
	c := &checkedWriter{w: w, check: check, buf: make([]byte, 0, checkedRun)}
	return c, c.flush
}

// checkedWriter copies what it is given into buf and writes each full buf to w once check
// finds the inputs unchanged.
type checkedWriter struct {
	w      io.Writer
	check  func() error
	buf    []byte
	pos    int64 // the bytes written to w
	failed error // a check or a write failed: nothing more is written
}

// Write copies p (a view of a mapped file, say: read now, before the check) and writes on the
// copies that fill buf.
func (c *checkedWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if c.failed != nil {
			return n, c.failed
		}
		k := memcopy.Copy(c.buf[len(c.buf):cap(c.buf)], p)
		c.buf, p, n = c.buf[:len(c.buf)+k], p[k:], n+k
		if len(c.buf) == cap(c.buf) {
			c.flush()
		}
	}
	return n, c.failed
}

// flush writes what buf holds once check finds the inputs unchanged.
func (c *checkedWriter) flush() error {
	if c.failed != nil || len(c.buf) == 0 {
		return c.failed
	}
	if err := c.check(); err != nil {
		c.failed = err
		return err
	}
	n, err := c.w.Write(c.buf)
	c.pos += int64(n)
	c.buf = c.buf[:0]
	c.failed = err
	return err
}

// Seek reports the position (what was given, written on or not), as positionWriter does: all
// the seeking an Arrow IPC file's writer does.
func (c *checkedWriter) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, errors.New("the output cannot seek")
	}
	return c.pos + int64(len(c.buf)), nil
}

// discards reports whether output out ("-": stdout) is a character device, such as /dev/null:
// what it is given may never be read.
func discards(out string, stdout io.Writer) bool {
	var st os.FileInfo
	var err error
	switch f, isFile := stdout.(*os.File); {
	case out != "-":
		if dataset.IsURI(out) {
			return false
		}
		st, err = os.Stat(out)
	case isFile:
		st, err = f.Stat()
	default:
		return false
	}
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
