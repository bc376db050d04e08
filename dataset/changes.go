package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/mmap"
)

// ErrFileChanged reports a file that changed while its mapping was read: it shrank under the
// mapping (whose pages past the new end have no bytes), or it was modified in place while a
// reader that must see one version of it was reading (its size, modification time or change
// time differs: CheckUnchanged).
var ErrFileChanged = mmap.ErrChanged

// FileError is an error about one file of a dataset: it could not be read, or it changed while
// it was read. Its text is "PATH: ERR"; Path is the file as it was opened (for a directory
// dataset, the directory joined with the file's path under it).
type FileError struct {
	Path string
	Err  error
}

// Error returns "PATH: ERR".
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
// the same file (device and inode), size, modification time and change time (to the
// nanosecond, as the file system keeps them: fileid.Compare); for an object, the same URI,
// version and size. A change of the change time alone — a chmod, a touch, a rename, a link
// made, or a write that kept the size and set the modification time back (rsync --inplace -t)
// — is a new version: what it did to the bytes cannot be told.
func sameVersion(was, now fs.FileInfo) bool {
	if w, ok := was.(objectInfo); ok {
		n, ok := now.(objectInfo)
		return ok && w.obj.URI == n.obj.URI && w.obj.Version == n.obj.Version && w.obj.Size == n.obj.Size
	}
	return was != nil && now != nil && fileid.Compare(was, now) == 0
}

// changedInPlace returns the *FileError of the file f maps when it was modified since it was
// mapped — the file itself, not what its path names now, has another size, modification time
// or change time (mmap.Mapping.Changes) — with what says what the error is about ("NAME: "
// for a Source's, or ""), else nil. A file replaced (renamed over) or removed and not written
// to is unchanged: its contents stay whole under the mapping; one written to and then replaced
// or removed is changed, unless the write kept its size and modification time (see
// mmap.Mapping.Changes). An object's reads are checked against the version listed instead;
// a File that maps nothing (its tensors made in memory) has nothing that can change.
func (f *File) changedInPlace(what string) error {
	if f.mapping == nil {
		return nil
	}
	if c := f.mapping.Changes(); c != 0 {
		return &FileError{Path: f.Path, Err: fmt.Errorf("%s%w: %v", what, ErrFileChanged, c)}
	}
	return nil
}

// changedFirst returns err, which a read of f failed with, or — when f was modified since it
// was mapped (changedInPlace, what naming it) and err is neither that change already nor the
// end of the read's context — the change instead: a decode that fails on a file rewritten
// under it ("invalid Parquet file", a batch that no longer verifies) says what became of the
// file, not that it is corrupt. The one place a read's error asks its file.
func (f *File) changedFirst(what string, err error) error {
	if err == nil || errors.Is(err, ErrFileChanged) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if changed := f.changedInPlace(what); changed != nil {
		return changed
	}
	return err
}

// checkRead returns the *FileError of the first of files (each once) modified since it was
// mapped, naming it with what ("NAME: " of the Source read), or nil: what a read that copied
// rows out of them asks once it is done, so that its copy is of the version the files were
// opened at or an error. One fstat a file.
func checkRead(files []*File, what []string) error {
	for i, f := range files {
		if slices.Index(files, f) != i {
			continue
		}
		if err := f.changedInPlace(what[i]); err != nil {
			return err
		}
	}
	return nil
}

// CheckUnchanged returns a *FileError wrapping ErrFileChanged, naming the file and what
// differs, when the file f mapped was modified since it was opened (see Source.CheckUnchanged),
// else nil. A reader that wrote or sent f's tensors calls it once done, before it tells anyone
// the end: what it read then came from one version of the file. An object's every read is of
// the version first seen: nil.
func (f *File) CheckUnchanged() error { return f.changedInPlace("") }

// CheckUnchanged returns a *FileError wrapping ErrFileChanged for the first file of the
// Source's chunks that was modified (truncated, overwritten, appended to, or its change time
// stamped) since it was opened, naming it and what differs ("its change time differs (…)"),
// or nil. It looks at each file mapped, through the descriptor its mapping keeps, whatever its
// path names now: a file written to and then replaced by a rename or removed is changed; one
// only replaced or removed is not, the mapping keeping its old contents whole. A reader that
// sent or copied the Source calls it once it has read every chunk, before it tells its client
// the end: what it read then came from one version of every file. A change of the change time
// alone counts — a chmod, touch or rename of the file cannot be told from a write that kept
// its size and modification time (rsync --inplace -t) — unless a link of the file was made or
// removed since (see mmap.Mapping.Changes). A write within the file system's timestamp tick
// may not be seen; a mapping past the descriptor budget (mmap.Open) whose path names another
// file, or none, counts as changed.
func (s *Source) CheckUnchanged() error {
	for _, p := range s.parts {
		if err := p.file.changedInPlace(s.Name + ": "); err != nil {
			return err
		}
	}
	return nil
}

// CheckChunks returns the *FileError, wrapping ErrFileChanged, of the first file of chunk i of
// srcs (see Chunks; columns of one table, whose chunk i is one file's, or tensors of their
// own) that was modified since it was opened, naming it and what differs, or nil — each file
// asked once (an fstat). A stream that sends a chunk's bytes from views of its file's mapping
// asks it after it copied a message of them and before it sends it, so that no message it
// sends holds bytes of a version after the one it opened. A chunk index outside a Source is
// no file of it.
func CheckChunks(srcs []*Source, i int) error {
	var files []*File
	var what []string
	for _, s := range srcs {
		p, _, err := s.chunkAt(i)
		if err != nil {
			continue
		}
		files, what = append(files, p.file), append(what, s.Name+": ")
	}
	return checkRead(files, what)
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

// Paths returns the path (or URI) of every file the scan of the directory found, in path
// order: those it read, those it could not read (Skipped) and those that hold no tensors.
func (d *Dir) Paths() []string {
	return slices.Sorted(maps.Keys(d.scans))
}
