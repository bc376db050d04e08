package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ndarrow/ndarrow/limits"
)

// Dir is the tensors of the tensor files of one directory, read as one dataset under the
// names Open gives each file's tensors — the names `ndarrow serve DIR` serves them under.
type Dir struct {
	Path    string
	Tensors []Tensor // every tensor whose name no earlier file took, file by file in name order
	Skipped []error  // one per file that could not be read and per name a later file gave again
	files   []*File
	fileOf  map[string]*File
}

// OpenDir opens every tensor file in dir — not its subdirectories, hidden files or files that
// are not tensor files (ErrNotTensors) — as Open does, memory-mapped and read within lim, in
// name order. A file that fails to read, and a tensor whose name an earlier file gave, are left
// out and reported in Skipped, one error each naming the file. OpenDir fails only when dir
// cannot be listed. The tensors view the files' mappings: Release the Dir when they are no
// longer used (a user that outlives it retains a file with File).
func OpenDir(dir string, lim limits.Limits) (*Dir, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: dir, fileOf: map[string]*File{}}
	for _, de := range ents { // os.ReadDir sorts by name
		if !de.Type().IsRegular() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, de.Name())
		f, err := Open(path, lim)
		switch {
		case errors.Is(err, ErrNotTensors):
			continue
		case err != nil:
			d.Skipped = append(d.Skipped, err)
			continue
		}
		d.files = append(d.files, f)
		for _, t := range f.Tensors {
			if prev, taken := d.fileOf[t.Name]; taken {
				d.Skipped = append(d.Skipped, fmt.Errorf("%s: the name %s is taken by %s", path, t.Name, prev.Path))
				continue
			}
			d.fileOf[t.Name] = f
			d.Tensors = append(d.Tensors, t)
		}
	}
	return d, nil
}

// File returns the file the tensor named name came from, or nil when d has no such tensor.
// Retain it to keep the tensor's memory beyond the Dir's Release.
func (d *Dir) File(name string) *File { return d.fileOf[name] }

// Release releases every file of d; its tensors must not be used afterwards unless their
// file was retained.
func (d *Dir) Release() {
	for _, f := range d.files {
		f.Release()
	}
	d.files = nil
}
