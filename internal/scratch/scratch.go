// Package scratch keeps bytes a process computed and reads again — decompressed pages,
// decoded column chunks — outside its heap: in a file of its own, removed as soon as it is
// made, mapped into memory. The kernel keeps the file's pages in its page cache while there
// is room and writes them to disk when there is not; they are never anonymous memory.
//
// What is appended is written to the file (pwrite), never through the mapping, so a full disk
// is an error from Append, never a fault on a write (and no page is read from disk to be
// overwritten); what was written is read through the mapping. The file has no name, so
// nothing else can shrink it under a reader. Free gives a view's room back: the next appends
// reuse it, and the file's blocks under it are given back to the file system (a hole punched,
// fallocate(2)), so that what the file takes on disk follows what it holds. Where the platform
// cannot map it, New fails and callers go without.
package scratch

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"unsafe"
)

// ErrFull is returned by Append when the bytes would not fit in the room the File has left.
var ErrFull = errors.New("scratch: full")

// ErrNotHeld is returned by Free for bytes that are not a view Append returned and no Free
// gave back since.
var ErrNotHeld = errors.New("scratch: not a view held")

// File is a scratch file, mapped whole, whose room Append takes and Free gives back. It is
// safe for concurrent use.
type File struct {
	mu     sync.Mutex
	f      *os.File
	b      []byte // the mapping: the file's whole size (sparse where nothing is held)
	end    int64  // past it, nothing is held and every block was given back
	used   int64  // the bytes of the views held
	held   map[int64]int64
	free   freeRoom // the room given back below end
	closed bool     // Close was called: unmapped once no view is held
	done   bool     // unmapped
	err    error    // what unmapping and closing the file gave, for Close
	// noHoles says the file system cannot punch holes: freed room is reused, not given back.
	noHoles bool
}

// New returns an empty scratch file of at most size bytes in dir (os.TempDir() when empty).
// Close it when done with it (the views still held stay readable until given back).
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
	return &File{f: f, b: b, held: map[int64]int64{}}, nil
}

// Append writes b into room of the file — given back by an earlier Free, or past what was
// ever held — and returns what it wrote: a view of the mapping, valid until it is given to
// Free (or the File is closed and unmapped). It fails with an error wrapping ErrFull when b
// does not fit in the room left, or with the error of the write (no space left on the disk, a
// quota); the room it took is then given back. An empty b takes no room: its view is empty.
func (s *File) Append(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return []byte{}, nil
	}
	n := int64(len(b))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("scratch: append after close: %w", ErrFull)
	}
	at, ok := s.free.take(n)
	if !ok {
		if s.end+n > int64(len(s.b)) {
			left := int64(len(s.b)) - s.used
			s.mu.Unlock()
			return nil, fmt.Errorf("scratch: %d bytes, more than the room left (%d bytes, not all in one piece): %w", n, left, ErrFull)
		}
		at = s.end
		s.end += n
	}
	s.held[at] = n
	s.used += n
	view := s.b[at : at+n : at+n]
	s.mu.Unlock()
	// Outside the lock: the range is this call's alone (a hole is punched only in room no
	// view holds, under the lock).
	if _, err := s.f.WriteAt(b, at); err != nil {
		_ = s.Free(view)
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return view, nil
}

// Free gives back the room of view, a view Append returned: the appends after may reuse it,
// so the view, and any slice of it, must not be read after. The blocks of the file under it
// that no other view shares are given back to the file system. Bytes that are not such a
// view (or were given back already) are ErrNotHeld; an empty view holds no room. The last
// Free after Close unmaps the file.
func (s *File) Free(view []byte) error {
	if len(view) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.offsetOf(view)
	if !ok || s.held[at] != int64(len(view)) {
		return fmt.Errorf("scratch: %d bytes: %w", len(view), ErrNotHeld)
	}
	n := int64(len(view))
	delete(s.held, at)
	s.used -= n
	start, end := s.free.put(at, n)
	if end == s.end { // the room at the end: past it nothing is held, its last block too
		s.free.remove(start, end-start)
		s.end = start
		end = alignUp(end)
	}
	s.punch(at, at+n, start, end)
	if s.closed && len(s.held) == 0 {
		s.unmap()
	}
	return nil
}

// offsetOf returns where in the file the view starts, and whether it is inside the mapping.
func (s *File) offsetOf(view []byte) (int64, bool) {
	if s.done || len(s.b) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(view)))
	if p < base || p-base >= uintptr(len(s.b)) {
		return 0, false
	}
	return int64(p - base), true
}

// Holds reports whether b begins inside the file's mapping (a view Append returned, or a
// slice of one).
func (s *File) Holds(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.offsetOf(b)
	return ok
}

// punch gives back to the file system the blocks of [from, to), just freed, that lie wholly
// inside [start, end), the free room around it. The caller holds the lock: no Append can take
// the room meanwhile.
func (s *File) punch(from, to, start, end int64) {
	if s.noHoles {
		return
	}
	lo := max(alignUp(start), alignDown(from))
	hi := min(alignDown(end), alignUp(to))
	if hi <= lo {
		return
	}
	if err := punchHole(s.f, lo, hi-lo); err != nil {
		s.noHoles = true // reused, not given back
	}
}

// block is the unit of room given back to the file system: a page of the mapping.
const block = 4096

func alignDown(n int64) int64 { return n &^ (block - 1) }
func alignUp(n int64) int64   { return (n + block - 1) &^ (block - 1) }

// Size returns the bytes of the views held.
func (s *File) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Cap returns the most bytes the file holds.
func (s *File) Cap() int64 { return int64(len(s.b)) }

// DiskBytes returns the bytes of disk the file takes (its allocated blocks, stat's st_blocks),
// 0 when it cannot tell or once it is closed.
func (s *File) DiskBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0
	}
	return diskBytes(s.f)
}

// Close takes no more appends and gives the file back: unmapped and closed at once when no
// view is held, else at the last Free — so that views still held (an array a reader retained)
// stay readable until they are given back, and none after. It returns what unmapping gave,
// when it happened now.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if len(s.held) == 0 {
		s.unmap()
		return s.err
	}
	return nil
}

// unmap unmaps and closes the file; the caller holds the lock.
func (s *File) unmap() {
	if s.done {
		return
	}
	s.done = true
	s.err = unmap(s.b)
	if cerr := s.f.Close(); s.err == nil {
		s.err = cerr
	}
	s.b = nil
}

// freeRoom is the room given back below a File's end, in pieces that do not touch (a piece
// given back next to another is joined to it), found by size class for Append.
type freeRoom struct {
	byStart map[int64]int64 // a piece's start: its length
	byEnd   map[int64]int64 // a piece's end: its start
	classes [65][]int64     // by the bit length of a piece's length: the starts
	slot    map[int64]int   // a piece's start: its index in its class
}

// classOf is the size class of a piece of n bytes (n > 0): pieces of class c hold at least
// 2^(c-1) bytes and fewer than 2^c.
func classOf(n int64) int { return bits.Len64(uint64(n)) }

// add records a piece, not touching another.
func (r *freeRoom) add(start, n int64) {
	if r.byStart == nil {
		r.byStart, r.byEnd, r.slot = map[int64]int64{}, map[int64]int64{}, map[int64]int{}
	}
	r.byStart[start] = n
	r.byEnd[start+n] = start
	c := classOf(n)
	r.slot[start] = len(r.classes[c])
	r.classes[c] = append(r.classes[c], start)
}

// remove forgets the piece [start, start+n).
func (r *freeRoom) remove(start, n int64) {
	delete(r.byStart, start)
	delete(r.byEnd, start+n)
	c, i := classOf(n), r.slot[start]
	last := len(r.classes[c]) - 1
	if i != last { // the last piece of the class takes its place
		moved := r.classes[c][last]
		r.classes[c][i] = moved
		r.slot[moved] = i
	}
	r.classes[c] = r.classes[c][:last]
	delete(r.slot, start)
}

// put records [at, at+n) as free, joined to the pieces it touches, and returns the piece it
// is now part of.
func (r *freeRoom) put(at, n int64) (start, end int64) {
	start, end = at, at+n
	if before, ok := r.byEnd[start]; ok {
		r.remove(before, start-before)
		start = before
	}
	if after, ok := r.byStart[end]; ok {
		r.remove(end, after)
		end += after
	}
	r.add(start, end-start)
	return start, end
}

// searched is how many pieces of n's own class take looks at for one of at least n bytes
// before taking one of a larger class, which always fits.
const searched = 8

// take returns the start of room for n bytes (n > 0), cut from a free piece, and whether
// there was one: a piece of n's class that fits, if one of the last few given back does,
// else one of the next larger class that has any.
func (r *freeRoom) take(n int64) (int64, bool) {
	c := classOf(n)
	found, at := false, int64(0)
	own := r.classes[c]
	for i := len(own) - 1; i >= 0 && i >= len(own)-searched; i-- {
		if r.byStart[own[i]] >= n {
			found, at = true, own[i]
			break
		}
	}
	for k := c + 1; !found && k < len(r.classes); k++ {
		if m := len(r.classes[k]); m > 0 {
			found, at = true, r.classes[k][m-1]
		}
	}
	if !found {
		return 0, false
	}
	size := r.byStart[at]
	r.remove(at, size)
	if size > n {
		r.add(at+n, size-n)
	}
	return at, true
}

// FreeSpace returns the bytes free to an unprivileged user in the file system holding dir,
// 0 when it cannot tell.
func FreeSpace(dir string) int64 {
	n, _ := freeSpace(dir)
	return n
}

// FreeSpaceOf returns the bytes free to an unprivileged user in the file system holding dir,
// or why it cannot tell (statfs's error: dir missing, say).
func FreeSpaceOf(dir string) (int64, error) { return freeSpace(dir) }

// AddressSpaceLeft returns, under a limit of the process's address space (RLIMIT_AS, ulimit
// -v), the bytes of it the process does not map yet and the limit, and whether there is a
// limit. A File's mapping takes its whole size of address space (not of memory).
func AddressSpaceLeft() (left, limit int64, limited bool) { return addressSpaceLeft() }
