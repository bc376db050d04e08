// Package bounded reads lengths that come from untrusted input without letting the length
// decide the allocation: memory grows with the bytes that actually arrive.
package bounded

import (
	"io"
	"os"
)

// firstChunk is the largest allocation made before any byte has arrived.
const firstChunk = 64 << 10

// ReadFull reads exactly n bytes from r. When r can tell how many bytes remain (a
// bytes.Reader, strings.Reader or bytes.Buffer, or a regular *os.File) and that covers n, it
// allocates n bytes once; otherwise it starts with 64 KiB and doubles as data arrives, so a
// corrupt length costs at most about twice the bytes r really holds. The buffer is 8-byte
// aligned, as every Go allocation of that size is. On a short read it returns the bytes read
// and io.EOF or io.ErrUnexpectedEOF.
func ReadFull(r io.Reader, n int64) ([]byte, error) {
	if n <= firstChunk || remaining(r) >= n {
		b := make([]byte, n)
		got, err := io.ReadFull(r, b)
		return b[:got], err
	}
	b := make([]byte, 0, firstChunk)
	for int64(len(b)) < n {
		if len(b) == cap(b) {
			grown := make([]byte, len(b), min(n, 2*int64(cap(b))))
			copy(grown, b)
			b = grown
		}
		got, err := io.ReadFull(r, b[len(b):cap(b)])
		b = b[:len(b)+got]
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// remaining returns how many bytes r says are left to read, or -1 when it cannot tell.
func remaining(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case *os.File:
		st, err := v.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return -1
		}
		pos, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return st.Size() - pos
	}
	return -1
}
