package ipc

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndarrow/ndarrow/internal/mmap"
)

// TensorReader reads the tensors of a stream of encapsulated Tensor messages — what Arrow
// C++'s ipc::WriteTensor and pyarrow.ipc.write_tensor write, one or more back to back —
// until the end of the input or the end-of-stream marker.
//
// Trust model: the input may be anything. Every length, offset, shape, stride and buffer is
// checked before use and against the reader's Limits; bad input gives an error wrapping
// ErrInvalid, ErrLimit or io.ErrUnexpectedEOF, never a panic, and a reader from an io.Reader
// allocates only as bytes arrive. A TensorReader is not safe for concurrent use.
type TensorReader struct {
	lim    Limits
	src    []byte    // the whole input, for byte and mapped readers
	r      io.Reader // the input of a streaming reader
	pos    int64
	owner  *mmap.Mapping
	closed bool
	err    error
}

// NewBytesReader returns a reader over the messages in b. Tensors it returns view b without
// copying; b must not change while they are in use.
func NewBytesReader(b []byte, lim Limits) *TensorReader {
	return &TensorReader{lim: lim.WithDefaults(), src: b}
}

// NewReader returns a reader that reads messages from r, copying each body once into memory
// it allocates.
func NewReader(r io.Reader, lim Limits) *TensorReader {
	return &TensorReader{lim: lim.WithDefaults(), r: r}
}

// OpenFile memory-maps the file at path (where the platform can; elsewhere it reads it whole)
// and returns a reader whose tensors view the mapping without copying. The mapping lives until
// the reader is closed and every tensor it returned has been released.
func OpenFile(path string, lim Limits) (*TensorReader, error) {
	m, err := mmap.Open(path) // the reader's own reference, dropped by Close
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	return &TensorReader{lim: lim.WithDefaults(), src: m.Bytes(), owner: m}, nil
}

// Next returns the next dense tensor, or io.EOF after the last one. A SparseTensor message
// is an error wrapping ErrUnsupported (read mixed streams with NextAny). After an error other
// than io.EOF the reader stops: every later call returns the same error. Release the tensor
// when it was read from a file (see Tensor).
func (rd *TensorReader) Next() (*Tensor, error) {
	t, err := rd.NextAny()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(*Tensor); ok {
		return d, nil
	}
	t.Release()
	rd.err = fmt.Errorf("ipc: tensor at byte %d: a SparseTensor message where a dense tensor was expected (use NextSparse or NextAny): %w", t.Offset(), ErrUnsupported)
	return nil, rd.err
}

// NextSparse returns the next sparse tensor, or io.EOF after the last one. A dense Tensor
// message is an error wrapping ErrUnsupported (read mixed streams with NextAny). Release the
// tensor when it was read from a file (see Tensor).
func (rd *TensorReader) NextSparse() (*SparseTensor, error) {
	t, err := rd.NextAny()
	if err != nil {
		return nil, err
	}
	if s, ok := t.(*SparseTensor); ok {
		return s, nil
	}
	t.Release()
	rd.err = fmt.Errorf("ipc: tensor at byte %d: a dense Tensor message where a sparse tensor was expected (use Next or NextAny): %w", t.Offset(), ErrUnsupported)
	return nil, rd.err
}

// NextAny returns the next tensor, dense (*Tensor) or sparse (*SparseTensor), or io.EOF after
// the last one.
func (rd *TensorReader) NextAny() (AnyTensor, error) {
	if rd.closed {
		return nil, fmt.Errorf("ipc: Next on a closed reader: %w", os.ErrClosed)
	}
	if rd.err != nil {
		return nil, rd.err
	}
	var m message
	var n int64
	var err error
	if rd.r != nil {
		m, n, err = readMessage(rd.r, rd.pos, rd.lim)
	} else {
		m, n, err = parseMessage(rd.src[rd.pos:], rd.pos, rd.lim)
	}
	rd.pos += n
	if err != nil {
		rd.err = err
		return nil, err
	}
	t, err := decodeAny(m, rd.lim)
	if err != nil {
		rd.err = err
		return nil, err
	}
	if rd.owner != nil {
		rd.owner.Retain()
		switch t := t.(type) {
		case *Tensor:
			t.owner = rd.owner
		case *SparseTensor:
			t.owner = rd.owner
		}
	}
	return t, nil
}

// Close releases the reader's reference to a memory-mapped file; tensors still held keep the
// mapping alive until they are released. Close on other readers only stops them.
func (rd *TensorReader) Close() error {
	if rd.closed {
		return nil
	}
	rd.closed = true
	if rd.owner != nil {
		rd.owner.Release()
	}
	return nil
}

// ReadAll returns every tensor of the input. It stops at the first error, returning no
// tensors with it (and releasing those it had read). Release each tensor when they were read
// from a file (see Tensor).
func (rd *TensorReader) ReadAll() ([]*Tensor, error) {
	var out []*Tensor
	for {
		t, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			for _, t := range out {
				t.Release()
			}
			return nil, err
		}
		out = append(out, t)
	}
}
