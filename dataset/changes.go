package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ndarrow/ndarrow/internal/mmap"
)

// ErrFileChanged reports a file that changed while its mapping was read: it shrank under the
// mapping (whose pages past the new end have no bytes), or it was modified in place while a
// reader that must see one version of it was reading.
var ErrFileChanged = mmap.ErrChanged

// FileError is an error about one file of a dataset: it could not be read, or it changed while
// it was read. Its text is "PATH: ERR"; Path is the file as it was opened (for a directory
// dataset, the directory joined with the file's path under it).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// Guard runs f, which reads tensors that view mapped files, and returns what f returns — or,
// when a file shrank under its mapping while f read it, a *FileError naming the file that
// wraps ErrFileChanged (the file mapped is the one measured, through the descriptor its
// mapping keeps, whatever its path names now). Without Guard such a read is a fault that ends
// the process (Go's "fatal error: fault"). A file modified in place without shrinking faults
// nowhere: Source.CheckUnchanged tells it. The fault unwinds f like a panic: f must hold no
// lock it releases other than by defer. Guard works on the calling goroutine only: a
// goroutine f starts needs a Guard of its own.
func Guard(f func() error) error {
	err := mmap.Guard(f)
	var fault *mmap.FaultError
	if errors.As(err, &fault) && fault.NotFetched { // a reader strayed outside what it fetched
		return &FileError{Path: fault.Path, Err: fmt.Errorf("%w (byte %d)", mmap.ErrNotFetched, fault.Offset)}
	}
	if errors.As(err, &fault) {
		return &FileError{Path: fault.Path, Err: fmt.Errorf("%w (its mapped bytes end before byte %d)", ErrFileChanged, fault.Offset)}
	}
	return err
}

// sameVersion reports whether the file info now describes the same file as was, unchanged:
// the same file (device and inode), size and modification time (to the nanosecond, as the
// file system keeps it); for an object, the same URI, version and size.
func sameVersion(was, now fs.FileInfo) bool {
	if w, ok := was.(objectInfo); ok {
		n, ok := now.(objectInfo)
		return ok && w.obj.URI == n.obj.URI && w.obj.Version == n.obj.Version && w.obj.Size == n.obj.Size
	}
	return was != nil && now != nil && os.SameFile(was, now) && was.Size() == now.Size() && was.ModTime().Equal(now.ModTime())
}

// modifiedInPlace reports whether the file f maps was modified in place since it was mapped:
// the file itself — not what its path names now — has another size or modification time
// (mmap.Mapping.Unchanged). A file replaced (renamed over) or removed and not written to is
// not: its contents stay whole under the mapping; one written to and then replaced or
// removed is. An object's reads are checked against the version listed instead.
func (f *File) modifiedInPlace() bool { return !f.mapping.Unchanged() }

// CheckUnchanged returns a *FileError wrapping ErrFileChanged for the first file of the
// Source's chunks that was modified in place (truncated, overwritten, appended to) since it
// was opened, or nil. It looks at each file mapped, through the descriptor its mapping keeps,
// whatever its path names now: a file written to and then replaced by a rename or removed is
// changed; one only replaced or removed is not, the mapping keeping its old contents whole. A
// reader that sent or copied the Source calls it once it has read every chunk, before it
// tells its client the end: what it read then came from one version of every file. A write
// that keeps the size within the file system's timestamp tick may not be seen (see
// mmap.Mapping.Unchanged); a mapping past the descriptor budget (mmap.Open) whose path
// names another file, or none, counts as changed.
func (s *Source) CheckUnchanged() error {
	for _, p := range s.parts {
		if p.file.modifiedInPlace() {
			return &FileError{Path: p.file.Path, Err: fmt.Errorf("%s: %w (modified in place)", s.Name, ErrFileChanged)}
		}
	}
	return nil
}

// SameAs reports whether o reads the same chunks of the same mapped files as s: a Source of
// a Dir that Rescan found unchanged.
func (s *Source) SameAs(o *Source) bool {
	if s.Name != o.Name || len(s.parts) != len(o.parts) {
		return false
	}
	for i, p := range s.parts {
		q := o.parts[i]
		if p.file.mapping != q.file.mapping || p.resident != q.resident || p.column != q.column || p.rowFirst != q.rowFirst || len(p.rowRows) != len(q.rowRows) {
			return false
		}
	}
	return true
}

// Files returns the paths of the files the Source's chunks come from, in chunk order.
func (s *Source) Files() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.file.Path
	}
	return out
}

// CheckUnchanged returns the error of the first of the directory's Sources whose files were
// modified in place since they were opened (Source.CheckUnchanged), or nil.
func (d *Dir) CheckUnchanged() error {
	for _, src := range d.Sources {
		if err := src.CheckUnchanged(); err != nil {
			return err
		}
	}
	return nil
}
