// Package mmap maps files read-only into memory and counts the references to each mapping,
// so that arrays viewing a file keep it mapped until the last one is released.
package mmap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"

	"github.com/ndarrow/ndarrow/internal/sentinel"
)

// Mapping is a read-only file in memory. It starts with one reference, held by the caller of
// Open; the memory is unmapped when the count drops to zero.
type Mapping struct {
	refs  atomic.Int64
	bytes []byte
	unmap func([]byte) error
}

// ErrNotRegular reports a path that is not a regular file: a directory, a device, a pipe.
var ErrNotRegular = errors.New("not a regular file")

// errDirectory is ErrNotRegular for a directory.
var errDirectory = sentinel.New("is a directory", ErrNotRegular)

// Open maps the regular file at path, or reads it whole where the platform cannot map files.
// Its errors read "PATH: reason", naming the path once, and match the os errors beneath
// (errors.Is(err, fs.ErrNotExist)) or ErrNotRegular. The mapping holds one reference:
// Release it (each Retain needs a Release too); the last one unmaps the file.
func Open(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, reason(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, reason(err))
	}
	if !st.Mode().IsRegular() {
		err := ErrNotRegular
		if st.IsDir() {
			err = errDirectory
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, reason(err))
	}
	m.refs.Store(1)
	return m, nil
}

// reason returns what a *fs.PathError wraps (its text names the path and the operation), or
// err itself.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Bytes returns the file's contents; they must not be used after the last Release.
func (m *Mapping) Bytes() []byte { return m.bytes }

// Refs returns the number of references held.
func (m *Mapping) Refs() int64 { return m.refs.Load() }

// Retain adds a reference.
func (m *Mapping) Retain() { m.refs.Add(1) }

// Release drops a reference and unmaps the file at the last one. It panics when called more
// times than there were references, which is a use-after-free waiting to happen.
func (m *Mapping) Release() {
	switch n := m.refs.Add(-1); {
	case n == 0:
		if m.unmap != nil {
			_ = m.unmap(m.bytes)
		}
		m.bytes = nil
	case n < 0:
		panic("mmap: Release called more times than Retain")
	}
}
