package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
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
// table the directory is, named after it. The files directly in the directory that are named
// as writers of datasets name parts (part-…, data_…, NAME-NNNNN-of-NNNNN.…: isPartName) and
// are Parquet, Arrow or TFRecord files are the parts of that table too, however many there
// are — one part or a hundred, the table has the directory's name — the directory
// pyarrow.dataset reads as one; the directory's other files keep their own names. Tensors of
// the same name are concatenated, rows of each file after the rows of the files before it in
// path order.
//
// Two files of one folder whose names differ only in their extension (t.parquet and t.arrow,
// x.tfrecord and x.tfrecord.gz, x.npy and x.npz: BaseName) are never joined, nor served
// under one name: both are left out, each a SkippedFile naming the other (ErrSameBaseName),
// in a subdirectory's table as in the directory's own files.
type Dir struct {
	Path    string
	Sources []*Source // one per name, in the order the names first appear in path order
	Tensors []Tensor  // OpenDir only: each Source read whole, in the same order
	// Skipped holds, once each, every file (and folder) left out: one that could not be read,
	// a part that does not join its table, two files of one base name. Each is a
	// *SkippedFile, which names the file and the table its tensors would have been part of.
	Skipped []error
	LeftOut []LeftOut // the columns of its tables that have no tensor form, once each, named as a tensor of them would be
	files   []*File
	scans   map[string]*fileScan // by path: what each file under Path gave, for Rescan
	lim     limits.Limits
}

// fileScan is what one file of a directory gave when it was scanned: its tensors as
// Sources of their own (not yet joined with other parts), or why it gave none.
type fileScan struct {
	info    fs.FileInfo // the file as it was read (nil when it could not be)
	file    *File       // nil when it gave no tensors
	format  Format
	sources []*Source
	err     error // why the file was skipped; nil for a file that is not a tensor file
}

// ScanDir opens every tensor file under dir, recursively (symbolic links are not followed;
// names starting with "." or "_", such as Spark's _SUCCESS, are left out, as are files that
// are not tensor files), memory-mapped, in path order, and describes the tensors of each name
// as one Source whose chunks are the parts in path order. A Parquet file's footer is checked
// and its values left to be read chunk by chunk, one row group at a time; any other file is
// read as Open reads it. Chunks are read within lim. A file that fails to open (a file
// whose extension names a format but that holds no tensors, an empty part-3.parquet, among
// them), a part one of whose columns differs in kind, dtype or cell shape from the first
// part's (left out whole: its table's columns keep the same parts), two files of one folder
// whose names differ only in their extension (see Dir), and a folder that cannot be listed,
// are left out and reported in Skipped, one *SkippedFile each naming the file and its table
// (SkippedOf gives a table's). ScanDir fails only when dir cannot be listed.
//
// dir may be a prefix of objects (IsURI: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX), listed
// and read as a directory: a Parquet object's footer is fetched and each row group's column
// chunk as it is read, an Arrow IPC file's footer and batch metadata and each record batch as
// it is read, a .npy file's header and each run of rows as it is read; any other object is
// fetched whole, all of them together within lim.MaxCopySize (the rest in Skipped, as if the
// objects were read one at a time in path order). The prefix is listed first and its objects
// then read 8 at a time, so that one slow object holds no other: it is skipped, named, at the
// stall deadline (see objstore.StallTimeout). Every read is of the version listed: an object
// replaced since is an error wrapping ErrFileChanged.
//
// dir may also name one file, or one object (a URI that is no prefix of objects): the
// dataset of its tensors alone, named after it.
//
// Release the Dir when the Sources are no longer used (a user that outlives it retains them).
func ScanDir(dir string, lim limits.Limits) (*Dir, error) {
	return scanDir(context.Background(), dir, lim.WithDefaults(), nil)
}

// Rescan returns the directory as it is now, d left as it was: a file whose identity (device
// and inode), size and modification time are those it had when d read it gives the same
// Sources as in d (its mapping shared, not read again; Source.SameAs tells them), any other
// file is opened anew, and files no longer there are gone. A file renamed over is another
// file even with the same size and modification time: d's mapping holds the old one, whose
// inode number no new file can take. Only a file that changed is read, so a rescan costs a
// walk and a stat per file. Both Dirs hold their own references: release d when its Sources
// are no longer used. A file being written is served once a complete read of it succeeds
// (until then it is in Skipped); one that changes in place after that is read again by the
// next Rescan — unless the write kept its size and its modification time, which a file
// system whose timestamps tick (Linux before 6.13, see mmap.Mapping.Unchanged) does for a
// write in the tick of the modification before d read it, and a writer that restores the
// time does too.
//
// Call Rescan before releasing d.
func (d *Dir) Rescan() (*Dir, error) {
	return scanDir(context.Background(), d.Path, d.lim, d.scans)
}

// scansInFlight is how many objects of a prefix a scan reads at once.
const scansInFlight = 8

// scanDir reads dir as ScanDir does, reusing the scans of prev whose files are unchanged. The
// objects of a prefix, listed first, are read scansInFlight at a time, so that one slow object
// holds no other (it fails alone, as the stall rule of objstore says); the files of a
// directory one at a time.
func scanDir(ctx context.Context, dir string, lim limits.Limits, prev map[string]*fileScan) (*Dir, error) {
	d := &Dir{Path: dir, scans: map[string]*fileScan{}, lim: lim}
	entries, folders, err := walk(ctx, dir)
	if err != nil {
		return nil, err
	}
	order := make([]*fileScan, len(entries))
	budget := newObjectBudget(len(entries), lim.MaxCopySize)
	slots := make(chan struct{}, scansInFlight)
	var wg sync.WaitGroup
	for i, e := range entries {
		sc := prev[e.path]
		switch {
		case sc == nil || !sameVersion(sc.info, e.info):
			share := budget.share(i, objectMost(e, lim))
			scan := func() {
				order[i] = scanFile(ctx, dir, e.path, e.info, lim, share) // holds the mapping's first reference: d's
				budget.finish(i, 0)
			}
			if !IsURI(dir) {
				scan()
				continue
			}
			slots <- struct{}{} // in path order: an object waits only for those before it
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				scan()
			}()
			continue
		case sc.file != nil:
			sc.file.Retain() // d's reference to a file an earlier Dir read
			budget.finish(i, sc.file.held())
		default:
			budget.finish(i, 0)
		}
		order[i] = sc
	}
	wg.Wait()
	for i, sc := range order {
		if sc.file != nil {
			d.files = append(d.files, sc.file)
		}
		d.scans[entries[i].path] = sc
	}
	partsOf := rootTable(dir, entries, order)
	tableOf := func(path string) string { // the table of the file at path
		switch name := tableName(dir, path); {
		case name != "":
			return name
		case partsOf != "" && isRootPart(dir, path, d.scans[path]):
			return partsOf
		}
		return BaseName(path)
	}
	for _, f := range folders {
		d.Skipped = append(d.Skipped, &SkippedFile{Path: f.path, Table: tableOf(filepath.Join(f.path, "_")), Err: f.err})
	}
	sameName := sameBaseNames(entries, order)
	byName := map[string]*Source{}
	firstPath := map[string]string{}
	leftOut := map[string]bool{}
	for i, sc := range order {
		path := entries[i].path
		skip := func(err error) {
			d.Skipped = append(d.Skipped, &SkippedFile{Path: path, Table: tableOf(path), Err: err})
		}
		if others, ok := sameName[i]; ok {
			skip(fmt.Errorf("%s: %s beside it: %w: neither is read (rename or move one)", path, strings.Join(others, ", "), ErrSameBaseName))
			continue
		}
		if sc.err != nil {
			skip(sc.err)
		}
		if sc.file == nil {
			continue
		}
		root := partsOf != "" && isRootPart(dir, path, sc)
		// The file's Sources, under the names of its table, join the parts before them all or
		// none: a part whose one column does not join is left out whole, so that the columns of
		// its table keep the same parts.
		sources := make([]*Source, len(sc.sources))
		var why error
		for k, src := range sc.sources {
			if root {
				src = src.renamed(partsOf, partsOf+"."+src.Column)
			}
			sources[k] = src
			if first, seen := byName[src.Name]; seen && why == nil {
				if err := joinable(first.desc, src.desc); err != nil {
					why = fmt.Errorf("%s: %s does not join the part in %s: %w", path, src.Name, firstPath[src.Name], err)
				}
			}
		}
		if why != nil {
			skip(why)
			continue
		}
		for _, l := range sc.file.LeftOut {
			if root {
				l.Name = partsOf + "." + l.Column
			}
			if !leftOut[l.Name] {
				leftOut[l.Name] = true
				d.LeftOut = append(d.LeftOut, l)
			}
		}
		for _, src := range sources {
			first, seen := byName[src.Name]
			if !seen {
				first = src.clone()
				byName[src.Name], firstPath[src.Name] = first, path
				d.Sources = append(d.Sources, first)
				continue
			}
			if err := first.join(src); err != nil { // joinable said it joins
				return nil, fmt.Errorf("dataset: %s: %w", path, err)
			}
		}
	}
	return d, nil
}

// entry is a file (or object) of a directory dataset, as its walk found it.
type entry struct {
	path string
	info fs.FileInfo
}

// folderError is a folder of a directory dataset that could not be listed, and why.
type folderError struct {
	path string
	err  error
}

// walk lists the regular files under dir, recursively, in path order, leaving out names
// starting with "." or "_" (and what is under such folders) and not following symbolic links;
// skipped says which subdirectories could not be listed. dir may be a prefix of objects
// (IsURI): its objects are listed, with the same rules for the parts of their keys under it.
func walk(ctx context.Context, dir string) (entries []entry, skipped []folderError, err error) {
	if IsURI(dir) {
		return walkObjects(ctx, dir)
	}
	if info, err := os.Stat(dir); err == nil && info.Mode().IsRegular() { // one file: a dataset of its own
		return []entry{{dir, info}}, nil, nil
	}
	err = filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			skipped = append(skipped, folderError{path, err})
			return nil
		}
		if path == dir {
			return nil
		}
		if isHidden(de.Name()) {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !de.Type().IsRegular() {
			return nil
		}
		info, err := de.Info()
		if err != nil {
			return nil // removed since it was listed
		}
		entries = append(entries, entry{path, info})
		return nil
	})
	return entries, skipped, err
}

// isHidden reports whether a file or folder name is left out of a directory dataset: hidden
// (".name") or a writer's bookkeeping ("_SUCCESS", "_delta_log").
func isHidden(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// rootTable returns the name of the table the files directly in dir are the parts of — dir's
// own name (dirName) when one or more of them is a part (isRootPart: part-0.parquet,
// part-00001-….snappy.parquet, data_0.parquet, train-00003-of-00128.tfrecord), whatever
// their count, so that a table keeps its name as parts come and go — or "" when none is: the
// directory pyarrow.dataset, Spark, DuckDB, TensorFlow's sharded writers and Beam write. A
// part that cannot be read counts too: the table it belongs to is the same.
func rootTable(dir string, entries []entry, scans []*fileScan) string {
	for i, e := range entries {
		if isRootPart(dir, e.path, scans[i]) {
			return dirName(dir)
		}
	}
	return ""
}

// isRootPart reports whether the file at path, which sc scanned, is a part of the table of
// the directory dir's own files: it is directly in dir, is named as a part (isPartName) and is
// a Parquet, Arrow IPC or TFRecord file — as its extension says, or, for a name that says no
// format, as its bytes said when it was read.
func isRootPart(dir, path string, sc *fileScan) bool {
	if filepath.Dir(path) != filepath.Clean(dir) || !isPartName(filepath.Base(withoutQuery(path))) {
		return false
	}
	format, err := FormatOf(withoutQuery(path))
	if err != nil && sc != nil && sc.file != nil {
		format, err = sc.format, nil
	}
	if err != nil {
		return false
	}
	switch format {
	case FormatParquet, FormatArrow, FormatArrows, FormatTFRecord:
		return true
	}
	return false
}

// dirName is the name of the directory (or prefix) dir: the last element of its absolute path
// ("train" for "." in train/), or of the prefix.
func dirName(dir string) string {
	if !IsURI(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			return filepath.Base(abs)
		}
	}
	return filepath.Base(filepath.Clean(withoutQuery(dir)))
}

// sameBaseNames returns, by index in entries, the tensor files (those scans read, or failed
// to) that share their folder and their BaseName with another — t.parquet and t.arrow,
// x.tfrecord and x.tfrecord.gz, x.npy and x.npz — each with the names of the others.
func sameBaseNames(entries []entry, scans []*fileScan) map[int][]string {
	type key struct{ folder, base string }
	groups := map[key][]int{}
	for i, e := range entries {
		if sc := scans[i]; sc.file == nil && sc.err == nil {
			continue // not a tensor file
		}
		k := key{filepath.Dir(withoutQuery(e.path)), BaseName(e.path)}
		groups[k] = append(groups[k], i)
	}
	out := map[int][]string{}
	for _, group := range groups {
		if len(group) < 2 {
			continue
		}
		for _, i := range group {
			for _, j := range group {
				if j != i {
					out[i] = append(out[i], filepath.Base(withoutQuery(entries[j].path)))
				}
			}
		}
	}
	return out
}

// isPartName reports whether a file name is one a writer of datasets gives its parts: it
// starts with "part" or "data" followed by "-", "_" or ".", or it is a shard's,
// NAME-NNNNN-of-NNNNN.EXT (TensorFlow's and Beam's: train-00003-of-00128.tfrecord).
func isPartName(name string) bool {
	for _, prefix := range []string{"part", "data"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" && strings.ContainsRune("-_.", rune(rest[0])) {
			return true
		}
	}
	return shardName.MatchString(name)
}

// shardName matches NAME-NNNNN-of-NNNNN followed by an extension.
var shardName = regexp.MustCompile(`-[0-9]+-of-[0-9]+\.`)

// objectMost returns the most the object of a directory dataset's entry e may hold of its
// objectBudget: its size, or, for a compressed TFRecord object (its records decompressed),
// MaxCopySize; nothing for a file.
func objectMost(e entry, lim limits.Limits) int64 {
	if _, ok := e.info.(objectInfo); !ok {
		return 0
	}
	if IsTFRecordName(e.path) && tfrecord.CompressionOf(withoutQuery(e.path)) != tfrecord.None {
		return lim.MaxCopySize
	}
	return e.info.Size()
}

// scanFile opens the file at path, under dir, whose directory entry said info. A file that
// holds no tensors is not a tensor file, unless its extension names a format (an empty
// part-3.parquet, say): then it is one that cannot be read.
func scanFile(ctx context.Context, dir, path string, info fs.FileInfo, lim limits.Limits, budget *objectShare) *fileScan {
	base := tableName(dir, path)
	if base == "" {
		base = BaseName(path)
	}
	f, sources, format, err := scanNamed(ctx, path, info, base, lim, budget)
	_, named := FormatOf(withoutQuery(path))
	switch {
	case errors.Is(err, ErrNotTensors) && named != nil: // README.md, a .bin of raw bytes
		return &fileScan{info: info}
	case errors.Is(err, ErrNotTensors): // t.parquet, empty or not Parquet: a tensor file by its name, unreadable
		return &fileScan{info: info, err: err}
	case err != nil:
		return &fileScan{info: info, err: err}
	}
	if f.remote != nil {
		return &fileScan{info: info, file: f, format: format, sources: sources} // read at that version
	}
	return &fileScan{info: f.mapping.Info(), file: f, format: format, sources: sources}
}

// OpenDir opens the tensor files under dir as ScanDir does and reads every Source whole
// (Source.Read), within lim: a tensor of one part of a file other than Parquet views its
// file's mapping; a joined one, and a Parquet column, is a copy, of at most lim.MaxCopySize
// bytes. A Source that cannot be read, or would copy more, is left out of both Sources and
// Tensors and reported in Skipped (a SkippedFile naming its file, or its first file, and its
// table). OpenDir fails only when dir cannot be listed.
//
// Release the Dir when the tensors are no longer used (a user that outlives it retains the
// Source).
func OpenDir(dir string, lim limits.Limits) (*Dir, error) {
	d, err := ScanDir(dir, lim)
	if err != nil {
		return nil, err
	}
	sources := d.Sources[:0]
	for _, src := range d.Sources {
		t, err := src.Read(context.Background())
		if err != nil {
			sf := &SkippedFile{Path: d.Path, Table: src.Table, Err: err}
			if sf.Table == "" {
				sf.Table = src.Name
			}
			var fe *FileError
			switch files := src.Files(); {
			case errors.As(err, &fe):
				sf.Path = fe.Path
			case len(files) > 0:
				sf.Path = files[0]
			}
			d.Skipped = append(d.Skipped, sf)
			continue
		}
		sources = append(sources, src)
		d.Tensors = append(d.Tensors, t)
	}
	d.Sources = sources
	return d, nil
}

// joinable returns why part cannot follow first in one tensor, or nil: parts join when both
// are dense (or both ragged, with row splits of one width) of one dtype and the same shape
// past the rows (so that Concat joins them and their record batches have one schema); a
// sparse tensor is never split.
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
	if len(a) == 0 || len(a) != len(b) || !slices.Equal(a[1:], b[1:]) {
		return fmt.Errorf("shapes %v and %v: %w", a, b, ndarray.ErrShape)
	}
	if first.Ragged != nil && first.Ragged.SplitDType() != part.Ragged.SplitDType() {
		return fmt.Errorf("%v and %v row splits (a list and a large_list): %w", first.Ragged.SplitDType(), part.Ragged.SplitDType(), ndarray.ErrDType)
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
	return dirName(dir)
}

// isHivePartition reports whether a folder name is a Hive-style partition, key=value.
func isHivePartition(name string) bool {
	k, _, ok := strings.Cut(name, "=")
	return ok && k != ""
}

// Limits returns the limits d reads within: those it was scanned with, defaults filled in.
func (d *Dir) Limits() limits.Limits { return d.lim }

// Release releases every file of d; its tensors and Sources must not be used afterwards
// unless the Source was retained.
func (d *Dir) Release() {
	for _, f := range d.files {
		f.Release()
	}
	d.files = nil
}
