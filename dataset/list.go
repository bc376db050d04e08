package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/limits"
)

// Listed is a file (or object) of a dataset, as List found it.
type Listed struct {
	Path string // the file's path, or the object's URI
	Size int64
}

// List returns the files a directory dataset at path is made of, in path order, as ScanDir
// walks it, without reading any: the regular files under a directory (names starting with
// "." or "_", and what is under such folders, left out; symbolic links not followed), the
// objects under a prefix (the same rules for their keys), or the file or object path names.
// skipped says which subdirectories could not be listed.
func List(ctx context.Context, path string) (files []Listed, skipped []error, err error) {
	entries, folders, err := walk(ctx, path)
	for _, f := range folders {
		skipped = append(skipped, f.err)
	}
	if err != nil {
		return nil, skipped, err
	}
	files = make([]Listed, len(entries))
	for i, e := range entries {
		files[i] = Listed{e.path, e.info.Size()}
	}
	return files, skipped, nil
}

// Bytes reads the bytes of a file or an object at any offset: of an object, of the version
// its opening saw (a change since is an error wrapping ErrFileChanged). Close it when done.
type Bytes struct {
	io.ReaderAt
	Path string
	Size int64
	c    io.Closer
}

// Close closes the file (an object holds nothing open).
func (b *Bytes) Close() error {
	if b.c == nil {
		return nil
	}
	return b.c.Close()
}

// OpenBytes opens the file or object at path (IsURI) for reads of its bytes. ctx bounds an
// object's reads.
func OpenBytes(ctx context.Context, path string) (*Bytes, error) {
	if IsURI(path) {
		o, err := objstore.Open(ctx, path)
		if err != nil {
			return nil, objectError(err)
		}
		return &Bytes{ReaderAt: objectReaderAt{ctx, o}, Path: path, Size: o.Size}, nil
	}
	f, err := os.Open(path) // read by offset, not mapped: a reader of some records of a file
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return &Bytes{ReaderAt: f, Path: path, Size: info.Size(), c: f}, nil
}

// objectReaderAt reads an object's bytes under a context.
type objectReaderAt struct {
	ctx context.Context
	o   *objstore.Object
}

func (r objectReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.o.ReadRange(r.ctx, p, off)
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	if err != nil {
		err = objectError(err)
	}
	return n, err
}

// TFRecordTensors returns the tensors of TFRecord records — the Examples or SequenceExamples
// of a file's records, or some of them — as ReadTFRecord does, named after base.
func TFRecordTensors(records [][]byte, base string, lim limits.Limits) ([]Tensor, error) {
	return recordTensors(records, base, lim.WithDefaults())
}
