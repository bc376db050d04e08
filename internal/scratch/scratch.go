// Package scratch keeps bytes a process computed and reads again — decompressed pages,
// decoded column chunks — outside its heap: in a file of its own, removed as soon as it is
// made, mapped into memory. The kernel keeps the file's pages in its page cache while there
// is room and writes them to disk when there is not; they are never anonymous memory.
//
// A File only grows. What is appended is written to the file (pwrite), never through the
// mapping, so a full disk is an error from Append, never a fault on a write (and no page is
// read from disk to be overwritten); what was written is read through the mapping. The file
// has no name, so nothing else can shrink it under a reader. Where the platform cannot map
// it, New fails and callers go without.
package scratch

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// ErrFull is returned by Append when the bytes would not fit in the File's size.
var ErrFull = errors.New("scratch: full")

// File is an append-only scratch file, mapped whole. It is safe for concurrent use.
type File struct {
	mu     sync.Mutex
	f      *os.File
	b      []byte // the mapping: the file's whole size (sparse beyond what was written)
	used   int64  // bytes appended, or being appended
	closed bool
}

// New returns an empty scratch file of at most size bytes in dir (os.TempDir() when empty).
// Close it when no view of it is used any more.
func New(dir string, size int64) (*File, error) {
	if size <= 0 {
		return nil, fmt.Errorf("scratch: a size of %d bytes: %w", size, ErrFull)
	}
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, ".ndarrow-scratch-*")
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	// Unnamed at once: a process that dies leaves nothing behind.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("scratch: %w", err)
	}
	b, err := mapFile(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("scratch: mapping %d bytes in %s: %w", size, dir, err)
	}
	return &File{f: f, b: b}, nil
}

// Append writes b at the end of the file and returns what it wrote: a view of the mapping,
// valid until Close. It fails with an error wrapping ErrFull when b does not fit, or with the
// error of the write (no space left on the disk, a quota); the bytes it set aside then stay
// unused.
func (s *File) Append(b []byte) ([]byte, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("scratch: append after close: %w", ErrFull)
	}
	at := s.used
	end := at + int64(len(b))
	if end > int64(len(s.b)) {
		s.mu.Unlock()
		return nil, fmt.Errorf("scratch: %d bytes more than the %d left: %w", len(b), int64(len(s.b))-at, ErrFull)
	}
	s.used = end
	view := s.b[at:end:end]
	s.mu.Unlock()
	// Outside the lock: the range is this call's alone. Close waits for no write; a File is
	// closed once nothing uses it.
	if _, err := s.f.WriteAt(b, at); err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return view, nil
}

// Size returns the bytes appended so far.
func (s *File) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Cap returns the most bytes the file holds.
func (s *File) Cap() int64 { return int64(len(s.b)) }

// Close unmaps the file and gives its room back; no view Append returned may be used after.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := unmap(s.b)
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.b = nil
	return err
}

// FreeSpace returns the bytes free to an unprivileged user in the file system holding dir,
// 0 when it cannot tell.
func FreeSpace(dir string) int64 { return freeSpace(dir) }
