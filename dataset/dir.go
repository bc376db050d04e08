package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Dir is the tensors of the tensor files under one directory, read as one dataset — the
// tensors `ndarrow serve DIR` serves.
//
// A file directly in the directory gives its tensors the names Open gives them (NAME,
// NAME.COLUMN, …). A file in a subdirectory belongs to the table that subdirectory holds: its
// tensors are named after the subdirectory instead of the file (TABLE, TABLE.COLUMN, …), so
// the parts of a table written by Spark, Ray or DuckDB (part-0.parquet, part-1.parquet, …,
// in Hive-style key=value folders or not) give one tensor per column. Hive-style folders
// (key=value) name no table: files under the directory's own key=value folders belong to the
// table the directory is, named after it. Tensors of the same name are concatenated, rows of
// each file after the rows of the files before it in path order.
type Dir struct {
	Path    string
	Tensors []Tensor // one per name, in the order the names first appear in path order
	Skipped []error  // one per file that could not be read and per part that could not be joined
	files   []*File
	fileOf  map[string]*File
}

// OpenDir opens every tensor file under dir, recursively (symbolic links are not followed;
// names starting with "." or "_", such as Spark's _SUCCESS, are left out, as are files that
// are not tensor files), each as Open does, memory-mapped and read within lim, in path order,
// and joins the tensors of each name with Concat. A file that fails to read, and a part whose
// dtype or cell shape differs from the first part's or that would take the joined tensor past
// lim.MaxCopySize bytes, is left out and reported in Skipped, one error each naming the file.
// OpenDir fails only when dir cannot be listed.
//
// A tensor of one part views its file's mapping; a joined one is a copy. Release the Dir when
// the tensors are no longer used (a user that outlives it retains a file with File).
func OpenDir(dir string, lim limits.Limits) (*Dir, error) {
	lim = lim.WithDefaults()
	d := &Dir{Path: dir, fileOf: map[string]*File{}}
	parts := map[string][]Tensor{}
	partFiles := map[string][]string{}
	var order []string
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			d.Skipped = append(d.Skipped, err)
			return nil
		}
		if path == dir {
			return nil
		}
		if strings.HasPrefix(de.Name(), ".") || strings.HasPrefix(de.Name(), "_") {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !de.Type().IsRegular() {
			return nil
		}
		base := tableName(dir, path)
		if base == "" {
			base = BaseName(path)
		}
		f, err := openNamed(path, base, lim)
		switch {
		case errors.Is(err, ErrNotTensors):
			return nil
		case err != nil:
			d.Skipped = append(d.Skipped, err)
			return nil
		}
		d.files = append(d.files, f)
		for _, t := range f.Tensors {
			if _, seen := parts[t.Name]; !seen {
				order = append(order, t.Name)
				d.fileOf[t.Name] = f
			}
			parts[t.Name] = append(parts[t.Name], t)
			partFiles[t.Name] = append(partFiles[t.Name], path)
		}
		return nil
	})
	if err != nil {
		d.Release()
		return nil, err
	}
	for _, name := range order {
		t, skipped := join(parts[name], partFiles[name], lim.MaxCopySize)
		d.Tensors = append(d.Tensors, t)
		d.Skipped = append(d.Skipped, skipped...)
	}
	return d, nil
}

// join concatenates the parts of one tensor, from the files at paths, leaving out (and
// reporting) each part that does not fit the ones before it or would take the copy past
// maxBytes.
func join(parts []Tensor, paths []string, maxBytes int64) (Tensor, []error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	var skipped []error
	kept := parts[:1]
	total := tensorBytes(parts[0])
	for i, p := range parts[1:] {
		n := tensorBytes(p)
		if total+n > maxBytes {
			skipped = append(skipped, fmt.Errorf("%s: %s: joining it would copy more than MaxCopySize %d bytes: %w", paths[i+1], p.Name, maxBytes, limits.ErrExceeded))
			continue
		}
		if err := joinable(kept[0], p); err != nil {
			skipped = append(skipped, fmt.Errorf("%s: %s does not join the part in %s: %w", paths[i+1], p.Name, paths[0], err))
			continue
		}
		kept = append(kept, p)
		total += n
	}
	t, err := Concat(kept)
	if err != nil { // each part joins the first, so all do
		return parts[0], append(skipped, fmt.Errorf("%s: %w", paths[0], err))
	}
	return t, skipped
}

// joinable returns why Concat would refuse to put part after first, or nil: parts join when
// both are dense (or both ragged) of one dtype and the same shape past the rows; a sparse
// tensor is never split.
func joinable(first, part Tensor) error {
	switch {
	case first.Sparse != nil || part.Sparse != nil:
		return fmt.Errorf("a sparse tensor in several parts: %w", ndarray.ErrShape)
	case (first.Dense == nil) != (part.Dense == nil):
		return fmt.Errorf("%s and %s: %w", first.ImpliedKind(), part.ImpliedKind(), ndarray.ErrShape)
	case first.DType() != part.DType():
		return fmt.Errorf("%v and %v: %w", first.DType(), part.DType(), ndarray.ErrDType)
	}
	a, b := first.Shape(), part.Shape()
	if len(a) == 0 || len(a) != len(b) || first.Dense != nil && !slices.Equal(a[1:], b[1:]) {
		return fmt.Errorf("shapes %v and %v: %w", a, b, ndarray.ErrShape)
	}
	return nil
}

// tensorBytes is the memory a tensor's values take.
func tensorBytes(t Tensor) int64 {
	width := int64(t.DType().Size())
	if t.DType() == ndarray.String {
		width = 16 // a string header per value
	}
	switch {
	case t.Dense != nil:
		return t.Dense.Shape().Size() * width
	case t.Ragged != nil:
		return t.NNZ()*width + t.Rows()*8
	}
	return t.NNZ() * width
}

// tableName returns the name the tensors of the file at path get in the dataset at dir: the
// first folder under dir that is not a Hive-style key=value folder; dir's own name when every
// folder on the way is one; "" (the file's own name) for a file directly in dir.
func tableName(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return ""
	}
	folders := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
	if len(folders) == 1 && folders[0] == "." {
		return ""
	}
	for _, f := range folders {
		if !isHivePartition(f) {
			return f
		}
	}
	return filepath.Base(filepath.Clean(dir))
}

// isHivePartition reports whether a folder name is a Hive-style partition, key=value.
func isHivePartition(name string) bool {
	k, _, ok := strings.Cut(name, "=")
	return ok && k != ""
}

// File returns the file the tensor named name came from (the first part's, for a tensor
// joined from several), or nil when d has no such tensor. Retain it to keep the tensor's
// memory beyond the Dir's Release.
func (d *Dir) File(name string) *File { return d.fileOf[name] }

// Release releases every file of d; its tensors must not be used afterwards unless their
// file was retained.
func (d *Dir) Release() {
	for _, f := range d.files {
		f.Release()
	}
	d.files = nil
}
