package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// tensor is one tensor found in an input file.
type tensor = dataset.Tensor

// input is the tensors of a file, or of every tensor file of a directory, which view the
// files' mappings until release.
type input struct {
	path    string
	dir     bool
	tensors []tensor
	leftOut []dataset.LeftOut // the columns of its tables that have no tensor form, once each
	skipped []error           // the files of a directory left out (dataset.SkippedFile)
	// skipUnreadable says the command reads a directory without the files of it left out,
	// each named (readOptions.skipUnreadable).
	skipUnreadable bool
	release        func()
	check          func() error // the error of a file of the input modified since it was read, or nil (nil: standard input)
}

// Release drops the input's mappings; its tensors must not be used afterwards.
func (in *input) Release() { in.release() }

// checked returns the error naming the first of the input's files that was modified since it
// was read — its size, modification time or change time differs (dataset.File.CheckUnchanged)
// — when one was, else err: a command checks its input once it has read and written all of
// it, before it takes what it wrote as whole (an output renamed into place, exit status 0),
// and the change also stands for whatever failed meanwhile. An object's every read is of the
// version first seen.
func (in *input) checked(err error) error { return checkedBy(in.check, err) }

// checkedBy returns what check returns — the error of an input file modified since it was
// read — when it is not nil, else err (check nil: err).
func checkedBy(check func() error, err error) error {
	if check != nil {
		if cerr := check(); cerr != nil {
			return cerr
		}
	}
	return err
}

// readOptions say how to read an input: as a TFRecord file compressed so (none, gzip, zlib)
// when compression is not empty; its Examples by the feature spec in the JSON file spec (see
// tfrecord.ReadSpec) when spec is not empty; a directory without its files that cannot be
// read, each named on stderr, when skipUnreadable (else such a file is an error).
type readOptions struct {
	compression    string
	spec           string
	skipUnreadable bool
}

// inputFlags adds --compression, --spec and --skip-unreadable to fs.
func inputFlags(fs *flag.FlagSet) *readOptions {
	o := &readOptions{}
	fs.BoolVar(&o.skipUnreadable, "skip-unreadable", false, "read a directory without its files that cannot be read (cut short, not joining the other parts of their table, two of one base name), each named on stderr; without it such a file is an error")
	fs.StringVar(&o.compression, "compression", "", "read the input as a TFRecord file compressed so: none, gzip or zlib (default: what its name and first bytes say)")
	fs.StringVar(&o.spec, "spec", "", "read a TFRecord file's Examples by the feature spec in this JSON `FILE`, as tf.io.parse_example: "+
		`{"image": {"dtype": "float32", "shape": [28, 28]}, "label": {"dtype": "int64", "shape": [], "default": 0}, "tokens": {"dtype": "int64", "ragged": true}}`)
	return o
}

// features reads the feature spec file o.spec names.
func (o readOptions) features() ([]tfrecord.Feature, error) {
	f, err := os.Open(o.spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	spec, err := tfrecord.ReadSpec(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.spec, err)
	}
	return spec, nil
}

// load reads every tensor of the file at path, memory-mapped, within the default limits; or,
// when path is a directory, of every tensor file in it, under the names serve gives them;
// as o says.
func load(path string, o readOptions) (*input, error) {
	in, err := loadInput(path, o)
	if err == nil {
		in.skipUnreadable = o.skipUnreadable
		inputLoaded(path)
	}
	return in, err
}

// inputLoaded is called with each input path once its tensors are read (views of its
// mapping, values not yet touched), or once the table or Parquet stream a command reads is
// opened (batches, take, convert --to arrows from a file's pages): the test seam where tests
// change the file under a command.
var inputLoaded = func(path string) {}

// stdinName is how standard input is named: its tensors are named after it, stdin.NAME …
const stdinName = "stdin"

// stdinBytes reads standard input whole, or fails past lim.MaxCopySize bytes.
func stdinBytes(lim limits.Limits) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(os.Stdin, lim.MaxCopySize+1))
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	if int64(len(b)) > lim.MaxCopySize {
		return nil, fmt.Errorf("standard input: more than %d bytes: %w", lim.MaxCopySize, limits.ErrExceeded)
	}
	return b, nil
}

// readStdin reads standard input whole, within the copy limit, and reads its tensors from the
// bytes as a file's are read (named stdin, stdin.COLUMN, …; TFRecord told by its first
// record's CRCs, compression given).
func readStdin(compression string) (*input, error) {
	lim := limits.Default()
	b, err := stdinBytes(lim)
	if err != nil {
		return nil, err
	}
	var tensors []tensor
	var left []dataset.LeftOut
	if compression != "" {
		c, cerr := tfrecord.ParseCompression(compression)
		if cerr != nil {
			return nil, cerr
		}
		tensors, err = dataset.ReadTFRecord(b, stdinName, c, lim)
	} else {
		tensors, left, err = dataset.Read(b, stdinName, lim)
	}
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	return &input{path: "standard input", tensors: tensors, leftOut: left, release: func() {}}, nil
}

// loadInput reads the tensors of path, as load does; "-" is standard input.
func loadInput(path string, o readOptions) (*input, error) {
	if o.spec != "" {
		return loadExamples(path, o)
	}
	compression := o.compression
	if path == "-" {
		return readStdin(compression)
	}
	if dataset.IsURI(path) && compression == "" {
		return loadObjects(path)
	}
	st, err := os.Stat(path)
	if compression != "" {
		c, err := tfrecord.ParseCompression(compression)
		if err != nil {
			return nil, err
		}
		if st != nil && st.IsDir() {
			return nil, fmt.Errorf("%s: --compression is for a TFRecord file, not a directory", path)
		}
		f, err := dataset.OpenTFRecord(path, c, limits.Limits{})
		if err != nil {
			return nil, err
		}
		return &input{path: path, tensors: f.Tensors, release: f.Release, check: f.CheckUnchanged}, nil
	}
	if err == nil && st.IsDir() {
		d, err := dataset.OpenDir(path, limits.Limits{})
		if err != nil {
			return nil, err
		}
		return dirInput(path, d), nil
	}
	f, err := dataset.Open(path, limits.Limits{})
	if err != nil {
		return nil, err
	}
	return &input{path: path, tensors: f.Tensors, leftOut: f.LeftOut, release: f.Release, check: f.CheckUnchanged}, nil
}

// loadExamples reads the Examples of the TFRecord file at path ("-": standard input) by the
// feature spec o.spec names, compressed as o.compression says, or else as the name says.
func loadExamples(path string, o readOptions) (*input, error) {
	spec, err := o.features()
	if err != nil {
		return nil, err
	}
	c := tfrecord.CompressionOf(path)
	if o.compression != "" {
		if c, err = tfrecord.ParseCompression(o.compression); err != nil {
			return nil, err
		}
	}
	if path == "-" {
		lim := limits.Default()
		b, err := stdinBytes(lim)
		if err != nil {
			return nil, err
		}
		tensors, left, err := dataset.ReadExamples(b, stdinName, c, spec, lim)
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return &input{path: "standard input", tensors: tensors, leftOut: left, release: func() {}}, nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: --spec is for a TFRecord file of Examples, not a directory", path)
	}
	f, err := dataset.OpenExamples(path, c, spec, limits.Limits{})
	if err != nil {
		return nil, err
	}
	return &input{path: path, tensors: f.Tensors, leftOut: f.LeftOut, release: f.Release, check: f.CheckUnchanged}, nil
}

// loadObjects reads the tensors of the object uri names or, when it names a prefix (it ends
// with "/", or no object has that key but objects are under it), of every tensor object
// under the prefix, as of a directory.
func loadObjects(uri string) (*input, error) {
	if !strings.HasSuffix(uri, "/") {
		f, err := dataset.Open(uri, limits.Limits{})
		if err == nil {
			return &input{path: f.Path, tensors: f.Tensors, leftOut: f.LeftOut, release: f.Release, check: f.CheckUnchanged}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		d, derr := dataset.OpenDir(uri, limits.Limits{})
		if derr != nil || len(d.Sources)+len(d.Skipped) == 0 {
			if derr == nil {
				d.Release()
			}
			return nil, err // no object, and nothing under it either
		}
		return dirInput(uri, d), nil
	}
	d, err := dataset.OpenDir(uri, limits.Limits{})
	if err != nil {
		return nil, err
	}
	return dirInput(uri, d), nil
}

// dirInput returns the input of the directory (or prefix) at path that d holds.
func dirInput(path string, d *dataset.Dir) *input {
	return &input{path: path, dir: true, tensors: d.Tensors, leftOut: d.LeftOut, skipped: d.Skipped, release: d.Release, check: d.CheckUnchanged}
}

// whole returns an error when a directory input left files out: convert and put take all of a
// dataset or nothing, unless told to skip them (skipUnreadable), which reportSkipped names.
func (in *input) whole() error {
	switch {
	case len(in.skipped) == 0 || in.skipUnreadable:
		return nil
	case len(in.skipped) == 1:
		return fmt.Errorf("%w (--skip-unreadable reads the rest)", in.skipped[0])
	}
	return fmt.Errorf("%w (and %d more problems in %s; --skip-unreadable reads the rest)", in.skipped[0], len(in.skipped)-1, in.path)
}

// reportSkipped names on stderr, one line each, the files of a directory input command left
// out (skipUnreadable).
func (in *input) reportSkipped(stderr io.Writer, command string) {
	if in.skipUnreadable {
		reportSkippedFiles(stderr, command, in.skipped)
	}
}

// selectTensor returns the tensors of in, or the one named name when name is not empty (as
// inspect names it, or the column it came from when no other tensor came from one so named).
// A name of a column left out (no tensor form) is an error saying so.
func selectTensor(in *input, name string) ([]tensor, error) {
	if err := in.whole(); err != nil {
		return nil, err
	}
	for _, l := range in.leftOut {
		if name != "" && l.Name == name {
			return nil, fmt.Errorf("%s: %s", in.path, l)
		}
	}
	if len(in.tensors) == 0 {
		switch {
		case len(in.leftOut) > 0:
			return nil, fmt.Errorf("%s: no tensors: %s", in.path, noTensorForm(in.leftOut, true))
		case in.dir:
			return nil, fmt.Errorf("%s: no tensors: no tensor files", in.path)
		}
		return nil, fmt.Errorf("%s: no tensors", in.path)
	}
	if name == "" {
		return in.tensors, nil
	}
	var names []string
	var byColumn []tensor // the tensors of a column of that name, which name alone picks when one
	for _, t := range in.tensors {
		if t.Name == name {
			return []tensor{t}, nil
		}
		names = append(names, t.Name)
		if t.Column == name {
			byColumn = append(byColumn, t)
		}
	}
	if len(byColumn) == 1 {
		return byColumn, nil
	}
	return nil, fmt.Errorf("%s: no tensor %q (it holds %s)", in.path, name, strings.Join(names, ", "))
}

// noTensorForm says that the columns left out are every column there is: "none of its 2
// columns has a tensor form"; with names, followed by the first few of them and their types:
// "(t.s struct<a: int32>, t.m map<utf8, int64>)".
func noTensorForm(left []dataset.LeftOut, names bool) string {
	s := fmt.Sprintf("none of its %d columns has a tensor form", len(left))
	if len(left) == 1 {
		s = "its one column has no tensor form"
	}
	if !names {
		return s
	}
	const most = 4
	var listed []string
	for i, l := range left {
		if i == most {
			listed = append(listed, fmt.Sprintf("and %d more", len(left)-most))
			break
		}
		listed = append(listed, l.Name+" "+l.Type)
	}
	return s + " (" + strings.Join(listed, ", ") + ")"
}

// maxDenseAdvised bounds the --max-dense an error advises: a dense form of more elements (32
// GiB of float64 and up) is more work than a hint should start — of a 3×1e12 matrix, a hash
// or a file of 24 TB.
const maxDenseAdvised = 1 << 32

// maxDenseError returns err, when it is a dense form above the limit --max-dense sets
// (maxDense; 0 or less: the default), saying what to do: the --max-dense that expands it
// (which use says what for: "hash it") when that is at most maxDenseAdvised elements, or else
// instead (", or …"; "" for nothing else). Any other error is returned as it is.
func maxDenseError(err error, maxDense int64, use, instead string) error {
	if maxDense <= 0 {
		maxDense = limits.Default().MaxDenseElements
	}
	var e *limits.ExceededError
	if !errors.As(err, &e) || e.Field != "MaxDenseElements" || e.Limit != maxDense {
		return err
	}
	if e.Needs < 0 {
		return fmt.Errorf("%w: no --max-dense can %s%s", err, use, instead)
	}
	if e.Needs > maxDenseAdvised {
		return fmt.Errorf("%w: no --max-dense is advised to %s: its %d elements are more than %d%s",
			err, use, e.Needs, int64(maxDenseAdvised), strings.Replace(instead, ", or ", "; ", 1))
	}
	return fmt.Errorf("%w: give --max-dense %d to %s%s", err, e.Needs, use, instead)
}

// maxDenseFlag adds --max-dense, the bound on expanding a sparse tensor into its dense form.
func maxDenseFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("max-dense", limits.Default().MaxDenseElements,
		"the most elements a sparse tensor's dense form may hold (its values hashed, or written in a dense format)")
}
