package mmap

import (
	"errors"
	"fmt"
	"os"

	"github.com/ndarrow/ndarrow/internal/sentinel"
)

// ErrNotFetched is wrapped by the FaultError of a read of a reserved mapping's bytes that no
// Commit made readable: a reader that strayed outside the byte ranges it fetched.
var ErrNotFetched = errors.New("read a byte range that was not fetched")

// errTooLarge is Reserve's error for a size beyond the address space it allows.
var errTooLarge = sentinel.New("larger than a reservation may be", ErrNotRegular)

// MaxReserve is the largest mapping Reserve makes: 16 TiB of address space.
const MaxReserve = 1 << 44

// Reserve returns a mapping of size bytes that holds nothing yet: address space no memory
// backs, every page of which faults until Commit makes it readable. It is how an object
// fetched range by range (from object storage) is laid out as the file it is, so that the
// readers of mapped files read it unchanged, touching only what was fetched; a read of
// anything else is a FaultError wrapping ErrNotFetched under Guard, naming name. The mapping
// holds one reference; the last Release unmaps it. Where the platform maps nothing it is
// size bytes of the heap.
func Reserve(name string, size int64) (*Mapping, error) {
	if size < 0 || size > MaxReserve {
		return nil, fmt.Errorf("%s: %d bytes: %w", name, size, errTooLarge)
	}
	m := &Mapping{path: name, reserved: true}
	m.refs.Store(1)
	if size == 0 {
		return m, nil
	}
	b, unmap, err := reserve(size)
	if err != nil {
		return nil, fmt.Errorf("%s: reserving %d bytes: %w", name, size, err)
	}
	m.bytes, m.unmap = b, unmap
	if unmap != nil {
		live.add(m)
	}
	return m, nil
}

// pageRange returns the bytes [lo, hi) of the pages that hold bytes [off, off+n) of m (inner:
// only the pages wholly inside it, the last one counting whole when it ends the mapping).
func (m *Mapping) pageRange(off, n int64, inner bool) (lo, hi int64) {
	pg := int64(os.Getpagesize())
	size := int64(len(m.bytes))
	if inner {
		lo, hi = (off+pg-1)/pg*pg, (off+n)/pg*pg
		if off+n == size {
			hi = size
		}
	} else {
		lo, hi = off/pg*pg, min((off+n+pg-1)/pg*pg, size)
	}
	return lo, max(hi, lo)
}

// Commit makes bytes [off, off+n) of a mapping from Reserve readable and writable (whole
// pages: the bytes around them on the same pages too) and returns them, for the caller to
// fill before any reader is told they are there. Commit of committed bytes keeps what they
// hold.
func (m *Mapping) Commit(off, n int64) ([]byte, error) {
	if !m.reserved || off < 0 || n < 0 || off > int64(len(m.bytes))-n {
		return nil, fmt.Errorf("%s: commit of bytes [%d, +%d) outside a reservation of %d", m.path, off, n, len(m.bytes))
	}
	if n == 0 {
		return m.bytes[off:off], nil
	}
	lo, hi := m.pageRange(off, n, false)
	if err := protect(m.bytes[lo:hi], true); err != nil {
		return nil, fmt.Errorf("%s: %w", m.path, err)
	}
	return m.bytes[off : off+n], nil
}

// Decommit gives back the memory of the whole pages inside bytes [off, off+n) of a mapping
// from Reserve, which fault again until committed anew. Nothing may read them meanwhile.
func (m *Mapping) Decommit(off, n int64) error {
	if !m.reserved || off < 0 || n < 0 || off > int64(len(m.bytes))-n {
		return fmt.Errorf("%s: decommit of bytes [%d, +%d) outside a reservation of %d", m.path, off, n, len(m.bytes))
	}
	lo, hi := m.pageRange(off, n, true)
	if hi == lo {
		return nil
	}
	if err := protect(m.bytes[lo:hi], false); err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	return nil
}
