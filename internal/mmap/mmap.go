// Package mmap maps files read-only into memory and counts the references to each mapping,
// so that arrays viewing a file keep it mapped until the last one is released.
//
// A mapping is only as stable as the file under it: when the file shrinks, reading the pages
// past its new end raises SIGBUS, which Go turns into a fatal error that kills the process.
// Guard runs a function that reads mappings so that such a fault becomes an error naming the
// file (a *FaultError, wrapping ErrChanged) instead. Every goroutine that reads a mapping
// must do so inside Guard. A mapping keeps its file open, so that what became of the file is
// asked of the file itself, not of the path it was opened by (Changes).
package mmap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/sentinel"
)

// Mapping is a read-only file in memory. It starts with one reference, held by the caller of
// Open; the memory is unmapped when the count drops to zero.
type Mapping struct {
	refs  atomic.Int64
	bytes []byte
	unmap func([]byte) error
	path  string
	info  fs.FileInfo
	// file is the file mapped, kept open while the mapping lives so that Unchanged and the
	// attribution of faults look at the file itself, whatever its path names now; nil past
	// the descriptor budget (keepDescriptor) and where nothing is mapped.
	file *os.File
	// reserved says the mapping is Reserve's: pages committed one range at a time.
	reserved bool
	// atRelease are what runs at the last Release (AtRelease).
	atRelease releaseHooks
}

// ErrNotRegular reports a path that is not a regular file: a directory, a device, a pipe.
var ErrNotRegular = errors.New("not a regular file")

// errDirectory is ErrNotRegular for a directory.
var errDirectory = sentinel.New("is a directory", ErrNotRegular)

// ErrChanged reports a mapped file that changed while it was read: it shrank, so that pages
// of its mapping no longer have bytes under them.
var ErrChanged = errors.New("file changed while being read")

// Open maps the regular file at path, or reads it whole where the platform cannot map files.
// Its errors read "PATH: reason", naming the path once, and match the os errors beneath
// (errors.Is(err, fs.ErrNotExist)) or ErrNotRegular. The mapping holds one reference:
// Release it (each Retain needs a Release too); the last one unmaps the file.
//
// A mapping keeps its file open (one descriptor, closed with the last Release), so that
// Unchanged follows the file mapped rather than its path — within a budget of half the
// process's limit of open files (RLIMIT_NOFILE), the rest left to connections; a mapping
// past it keeps none, and Unchanged can then only look at the path (see Unchanged).
func Open(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, reason(err))
	}
	kept := false
	defer func() {
		if !kept {
			f.Close()
		}
	}()
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
	m.path, m.info = path, st
	m.refs.Store(1)
	if m.unmap != nil {
		if kept = keepDescriptor(); kept {
			m.file = f
		}
		live.add(m)
	}
	return m, nil
}

// descriptors is how many files mappings keep open; maxDescriptors, their budget: half the
// process's soft limit of open files, which Go raises to the hard limit at start. A mapping
// already pins its file in the kernel, and the mappings of a process are bounded
// (vm.max_map_count, 65530 by default), so the budget binds only under a low hard limit.
var (
	descriptors    atomic.Int64
	maxDescriptors = sync.OnceValue(descriptorBudget)
)

// keepDescriptor reserves a descriptor of the budget, and reports whether there was one.
func keepDescriptor() bool {
	if descriptors.Add(1) <= maxDescriptors() {
		return true
	}
	descriptors.Add(-1)
	return false
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

// Bytes returns the file's contents; they must not be used after the last Release, and must
// be read inside Guard.
func (m *Mapping) Bytes() []byte { return m.bytes }

// Path returns the path the file was opened by.
func (m *Mapping) Path() string { return m.path }

// Info returns what the file was when it was mapped: its size, modification time, change time
// (fileid.ChangeTimeOf) and identity (os.SameFile).
func (m *Mapping) Info() fs.FileInfo { return m.info }

// Unchanged reports whether the file mapped is still as Open mapped it: Changes is 0.
func (m *Mapping) Unchanged() bool { return m.Changes() == 0 }

// Changes returns what became of the file mapped since Open mapped it, 0 when nothing did:
// which of its size, modification time and change time (ctime) differ (fileid.Compare) — of
// the file itself (fstat of the descriptor the mapping keeps), whatever its path names now.
//
// A file replaced by a rename, or removed, keeps its contents whole under the mapping: it is
// unchanged unless it was written to. Its change time says nothing then — losing its last
// name (or a name of several) stamps it, whatever became of its bytes — so the change time is
// compared only while the file has as many links as it had when mapped; while it does, any
// change of it counts: a write that kept the size and set the modification time back (what
// `rsync --inplace -t` leaves), and so also a chmod, chown, touch, or a rename of the file
// itself, which cannot be told from such a write. A write that kept the size and the
// modification time, followed by a link made or removed (the file then renamed over or
// removed), is not seen.
//
// A mapping past the descriptor budget looks at its path instead, and reports fileid.Inode
// (or fileid.Gone) when the path no longer names the file: it cannot tell such a file from
// one modified. A mapping of nothing (an empty file), a copy (where the platform maps nothing)
// and a reservation have nothing that can change: 0.
//
// The change and modification times are the file system's: a write that keeps the size and
// lands in the same tick of its clock as the change before Open cannot be told. Linux since
// 6.13 gives a change that follows a stat of the file a time of its own (multigrain
// timestamps, on ext4, XFS, Btrfs and tmpfs), and Open's stat is one; earlier kernels and
// other file systems stamp a write with a clock of a few milliseconds' tick (a second or two
// on some).
func (m *Mapping) Changes() fileid.Change {
	if m.info == nil || m.unmap == nil || m.reserved {
		return 0
	}
	var st fs.FileInfo
	var err error
	if m.file != nil {
		st, err = m.file.Stat()
	} else {
		st, err = os.Stat(m.path)
	}
	if err != nil {
		st = nil
	}
	return changesOf(m.info, st)
}

// changesOf returns what differs between was, the stat of a file when it was mapped, and now,
// a stat of it since (nil: none), as Changes counts it: the change time only while the file
// has as many links as it had.
func changesOf(was, now fs.FileInfo) fileid.Change {
	c := fileid.Compare(was, now)
	if c&fileid.ChangeTime != 0 && fileid.LinksOf(was) != fileid.LinksOf(now) {
		c &^= fileid.ChangeTime // a link made or removed stamps it: it tells nothing of the bytes
	}
	return c
}

// CheckUnchanged returns a *ChangedError saying what became of the file mapped (Changes) when
// anything did, else nil.
func (m *Mapping) CheckUnchanged() error {
	if c := m.Changes(); c != 0 {
		return &ChangedError{Path: m.path, Changes: c}
	}
	return nil
}

// ChangedError is a mapped file that changed since it was mapped, not (or not yet) under a
// read of its pages: what differs (Mapping.Changes). It wraps ErrChanged.
type ChangedError struct {
	Path    string // the file, as it was opened
	Changes fileid.Change
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s: %v: %v", e.Path, ErrChanged, e.Changes)
}

// Unwrap returns ErrChanged.
func (e *ChangedError) Unwrap() error { return ErrChanged }

// Refs returns the number of references held.
func (m *Mapping) Refs() int64 { return m.refs.Load() }

// Retain adds a reference.
func (m *Mapping) Retain() { m.refs.Add(1) }

// Release drops a reference and unmaps the file at the last one. It panics when called more
// times than there were references, which is a use-after-free waiting to happen.
func (m *Mapping) Release() {
	switch n := m.refs.Add(-1); {
	case n == 0:
		m.atRelease.run()
		if m.unmap != nil {
			live.remove(m)
			_ = m.unmap(m.bytes)
		}
		if m.file != nil {
			m.file.Close()
			descriptors.Add(-1)
		}
		m.bytes = nil
	case n < 0:
		panic("mmap: Release called more times than Retain")
	}
}

// FaultError is a fault reading a mapping whose file shrank under it, wrapping ErrChanged,
// or one reading bytes of a reservation that were never fetched, wrapping ErrNotFetched.
type FaultError struct {
	Path       string // the file, as it was opened
	Offset     int64  // the byte of the file whose page faulted
	NotFetched bool   // a reservation's page that no Commit made readable
}

func (e *FaultError) Error() string {
	if e.NotFetched {
		return fmt.Sprintf("%s: %v (byte %d)", e.Path, ErrNotFetched, e.Offset)
	}
	return fmt.Sprintf("%s: %v (its mapped bytes end before byte %d)", e.Path, ErrChanged, e.Offset)
}

// Unwrap returns ErrChanged, or ErrNotFetched.
func (e *FaultError) Unwrap() error {
	if e.NotFetched {
		return ErrNotFetched
	}
	return ErrChanged
}

// Guard runs f on the calling goroutine with faults on memory turned into panics
// (debug.SetPanicOnFault) and returns what f returns, or a *FaultError when f touched a page
// of a live mapping whose file shrank — whether the fault's panic reached Guard or a
// dependency recovered it and returned it wrapped in an error (arrow-go's IPC writer does).
// The file is the one mapped, measured through the mapping's descriptor whatever its path
// names now; one that is no longer as it was mapped explains a fault too (it was truncated
// and written again since). Any other panic, a fault outside every mapping among them, goes
// on. Guard may be nested; the goroutine's setting is restored when it returns.
func Guard(f func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			fe := faultOf(p)
			if fe == nil {
				panic(p)
			}
			err = fe
		}
	}()
	err = f()
	var rerr runtime.Error
	switch {
	case err == nil:
	case errors.As(err, &rerr):
		if fe := faultOf(rerr); fe != nil {
			return fe
		}
	case isEFAULT(err):
		// a system call (a write of the mapped bytes to a file or socket) met a page with
		// no bytes under it: the kernel says EFAULT, not where
		if fe := live.shrunk(); fe != nil {
			return fe
		}
	}
	return err
}

// IsFault reports whether p, a value recovered from a panic, is a fault on a page of a live
// mapping (a file that shrank). A recover that nets a decoder's panics re-panics such a
// value, so that the Guard above it reports the file: "if mmap.IsFault(p) { panic(p) }".
func IsFault(p any) bool { return faultOf(p) != nil }

// faultOf returns the FaultError of a recovered panic when it is a memory fault inside a
// mapping whose file shrank, else nil.
func faultOf(p any) *FaultError {
	rerr, ok := p.(runtime.Error)
	if !ok {
		return nil
	}
	addr, ok := rerr.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	return live.fault(addr.Addr())
}

// live is every mapping not yet unmapped, and the last ones unmapped, to name the file a
// fault address falls in. The unmapped ones matter because a fault unwinds like a panic:
// the deferred Release of the very mapping that faulted may unmap it before Guard recovers.
var live = registry{maps: map[*Mapping]span{}}

// span is the address range of a mapping, whole pages.
type span struct{ start, end uintptr }

// unmapped is a mapping recently unmapped, or, with file, a live one.
type unmapped struct {
	span
	path     string
	info     fs.FileInfo
	reserved bool
	file     *os.File // a live mapping's kept descriptor (nil once unmapped)
}

// graveSize is how many unmapped mappings the registry remembers.
const graveSize = 64

type registry struct {
	mu    sync.Mutex
	maps  map[*Mapping]span
	grave [graveSize]unmapped
	next  int
}

func spanOf(b []byte) span {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(cap(b))
	if pg := uintptr(os.Getpagesize()); end%pg != 0 {
		end += pg - end%pg // a mapping covers whole pages
	}
	return span{start, end}
}

func (r *registry) add(m *Mapping) {
	r.mu.Lock()
	r.maps[m] = spanOf(m.bytes)
	r.mu.Unlock()
}

func (r *registry) remove(m *Mapping) {
	r.mu.Lock()
	r.grave[r.next%graveSize] = unmapped{r.maps[m], m.path, m.info, m.reserved, nil}
	r.next++
	delete(r.maps, m)
	r.mu.Unlock()
}

// fault returns the FaultError of a fault at addr: in a mapping, live or recently unmapped,
// whose file explains it (see faultedAt). It returns nil for a fault no changed file explains.
func (r *registry) fault(addr uintptr) *FaultError {
	r.mu.Lock()
	var candidates []unmapped
	for m, sp := range r.maps {
		if addr >= sp.start && addr < sp.end {
			candidates = append(candidates, unmapped{sp, m.path, m.info, m.reserved, m.file})
		}
	}
	for i := range min(r.next, graveSize) {
		// the most recently unmapped first: an address range may be mapped again later
		if u := r.grave[(r.next-1-i+graveSize)%graveSize]; addr >= u.start && addr < u.end {
			candidates = append(candidates, u)
		}
	}
	r.mu.Unlock()
	for _, c := range candidates {
		off := int64(addr - c.start)
		if c.reserved {
			return &FaultError{Path: c.path, Offset: off, NotFetched: true}
		}
		if c.faultedAt(off) {
			return &FaultError{Path: c.path, Offset: off}
		}
	}
	return nil
}

// shrunk returns the FaultError of a mapping, live or recently unmapped, whose file is now
// shorter than the mapping, for an error (EFAULT) that says a system call found memory it
// could not read without saying where, or nil.
func (r *registry) shrunk() *FaultError {
	r.mu.Lock()
	var candidates []unmapped
	for m, sp := range r.maps {
		if !m.reserved {
			candidates = append(candidates, unmapped{sp, m.path, m.info, false, m.file})
		}
	}
	for i := range min(r.next, graveSize) { // released since the call failed, most recent first
		candidates = append(candidates, r.grave[(r.next-1-i+graveSize)%graveSize])
	}
	r.mu.Unlock()
	for _, c := range candidates {
		if c.reserved {
			continue
		}
		if st := c.now(); st != nil && c.info != nil && st.Size() < c.info.Size() {
			return &FaultError{Path: c.path, Offset: st.Size()}
		}
	}
	return nil
}

// now returns what the file mapped is now — through the kept descriptor, else by its path
// when the path still names it — or nil when that cannot be told.
func (c unmapped) now() fs.FileInfo {
	if c.file != nil {
		st, err := c.file.Stat()
		if err != nil {
			return nil
		}
		return st
	}
	st, err := os.Stat(c.path)
	if err != nil || c.info == nil || !os.SameFile(st, c.info) {
		return nil
	}
	return st
}

// faultedAt reports whether the mapping's file explains a fault at its byte off: it is now
// shorter than off, or no longer as it was mapped (a file truncated and written again faults
// in between), or what it is cannot be told (a mapping without its descriptor whose path
// names another file, or none).
func (c unmapped) faultedAt(off int64) bool {
	st := c.now()
	return st == nil || c.info == nil || st.Size() <= off || changesOf(c.info, st) != 0
}
