package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// IsURI reports whether path names an object in object storage (s3://BUCKET/KEY,
// gs://BUCKET/KEY, or an http:// or https:// URL of a server that answers range requests)
// rather than a local file.
// Every function of the package that takes a path takes such a URI too; see Open.
func IsURI(path string) bool { return objstore.IsURI(path) }

// withoutQuery returns path, or a URI without its query (an https:// URL's signature): what
// names it, and its tensors.
func withoutQuery(path string) string {
	if !IsURI(path) {
		return path
	}
	if u, err := objstore.ParseURI(path); err == nil {
		return u.String()
	}
	return path
}

// fetched reads the object obj, opened or listed at one version, and reads its tensors with read, as mapped does for a
// file: the object laid out as the file it is in a reservation, holding only what was
// fetched (objstore.Buffer), read under Guard. whole says what to fetch before read runs:
// the whole object (every format but Parquet, and Parquet read whole), or, for a Parquet
// object (PAR1 at both ends), only its footer, the rest fetched row group by row group by
// its Sources. Its errors past opening are *FileError.
func fetched(obj *objstore.Object, lim limits.Limits, whole bool, budget *objectBudget, read func(b []byte) ([]Tensor, error)) (*File, error) {
	lim = lim.WithDefaults()
	ctx := context.Background()
	buf, err := obj.NewBuffer()
	if err != nil {
		return nil, err
	}
	f := &File{Path: obj.URI.String(), mapping: buf.Mapping(), remote: buf}
	var was int64
	if budget != nil {
		was = budget.held
	}
	fail := func(err error) (*File, error) {
		buf.Mapping().Release()
		if budget != nil {
			budget.held = was // nothing of it is held
		}
		err = objectError(err)
		var fe *FileError
		if errors.As(err, &fe) && fe.Path == f.Path {
			return nil, err
		}
		return nil, &FileError{Path: f.Path, Err: err}
	}
	if err := fetchFor(ctx, buf, lim, whole, budget); err != nil {
		return fail(err)
	}
	err = Guard(func() error {
		var err error
		f.Tensors, err = read(buf.Mapping().Bytes())
		return err
	})
	if err != nil {
		return fail(err)
	}
	return f, nil
}

// fetchFor fetches what reading the object of buf needs: the whole object (whole), within
// lim.MaxCopySize as the bytes of standard input are; or first its first 16 and last 8 bytes
// (the magic of every format, a Parquet footer's length) and then a Parquet object's footer
// alone, nothing more of an object that is no tensor file (ErrNotTensors), any other object
// whole.
func fetchFor(ctx context.Context, buf *objstore.Buffer, lim limits.Limits, whole bool, budget *objectBudget) error {
	size := buf.Object().Size
	if !whole {
		if err := buf.Fetch(ctx, objstore.Range{Off: 0, Len: probeSize}, objstore.Range{Off: size - 8, Len: 8}); err != nil {
			return err
		}
		b := buf.Mapping().Bytes()
		if isParquetEnds(b) {
			n := int64(binary.LittleEndian.Uint32(b[size-8:]))
			if n > size-12 || n > lim.MaxMetadataSize {
				return nil // the reader says why: it reads the length, not the footer
			}
			return buf.Fetch(ctx, objstore.Range{Off: size - 8 - n, Len: n})
		}
		if !mayHoldTensors(b[:min(size, probeSize)], size) {
			return ErrNotTensors // a CSV, an image: not fetched
		}
	}
	if size > lim.MaxCopySize {
		return fmt.Errorf("fetching %d bytes, more than MaxCopySize %d: %w", size, lim.MaxCopySize, limits.ErrExceeded)
	}
	if err := budget.take(size, lim); err != nil {
		return err
	}
	return buf.Fetch(ctx, objstore.Range{Off: 0, Len: size})
}

// objectBudget is what the objects of one directory dataset may hold in memory together: an
// object other than Parquet is fetched whole and held while it is served, and all of them stay
// within MaxCopySize (a Parquet object holds its footer alone). nil is no bound (one object).
type objectBudget struct{ held int64 }

// take counts n bytes more, or says why they do not fit.
func (b *objectBudget) take(n int64, lim limits.Limits) error {
	if b == nil {
		return nil
	}
	if n > lim.MaxCopySize-b.held {
		return fmt.Errorf("fetching its %d bytes would hold %d bytes of objects in memory, more than MaxCopySize %d (a Parquet object holds only its footer): %w", n, b.held+n, lim.MaxCopySize, limits.ErrExceeded)
	}
	b.held += n
	return nil
}

// held returns the bytes f holds of its object (0 for a file).
func (f *File) held() int64 {
	if f.remote == nil {
		return 0
	}
	n := int64(0)
	for _, r := range f.remote.Fetched() {
		n += r.Len
	}
	return n
}

// probeSize is how much of an object's start a scan fetches to tell whether it may hold
// tensors: the magic of every format, a TFRecord's first header, an IPC message's length.
const probeSize = 16

// mayHoldTensors reports whether an object of size bytes starting with head may be one of
// the formats Detect tells: a format's magic, a TFRecord record header whose CRC verifies, or
// an encapsulated IPC message whose length fits the object. Anything else is not fetched.
func mayHoldTensors(head []byte, size int64) bool {
	for _, magic := range []string{npyMagic, zipMagic, emptyZipMagic, ipcMagic, parquetMagic} {
		if strings.HasPrefix(string(head), magic) {
			return true
		}
	}
	if tfrecord.Probe(head) {
		return true
	}
	start := int64(4)
	if len(head) >= 4 && string(head[:4]) == "\xff\xff\xff\xff" {
		start = 8
	}
	if int64(len(head)) < start {
		return false
	}
	n := int64(int32(binary.LittleEndian.Uint32(head[start-4:])))
	return n > 0 && n <= size-start
}

// isParquetEnds reports whether b, of which the first 16 and last 8 bytes were fetched, starts
// and ends with Parquet's magic.
func isParquetEnds(b []byte) bool {
	return len(b) >= 12 && string(b[:4]) == parquetMagic && string(b[len(b)-4:]) == parquetMagic
}

// objectError returns err, or the *FileError of an object's *objstore.Error (which names
// the object the same way).
func objectError(err error) error {
	var oe *objstore.Error
	if errors.As(err, &oe) {
		return &FileError{Path: oe.URI, Err: oe.Err}
	}
	return err
}

// objectInfo is what a listing says of an object, as the fs.FileInfo a directory's walk
// gives of a file.
type objectInfo struct{ obj *objstore.Object }

func (o objectInfo) Name() string       { return o.obj.URI.Key }
func (o objectInfo) Size() int64        { return o.obj.Size }
func (o objectInfo) Mode() fs.FileMode  { return 0o444 }
func (o objectInfo) ModTime() time.Time { return o.obj.ModTime }
func (o objectInfo) IsDir() bool        { return false }
func (o objectInfo) Sys() any           { return o.obj.Info }

// walkObjects lists the objects under the prefix dir (a directory: dir/…), as walk lists
// files.
func walkObjects(dir string) ([]entry, []error, error) {
	objs, err := objstore.List(context.Background(), dir)
	if err != nil {
		return nil, nil, err
	}
	prefix := strings.TrimSuffix(withoutQuery(dir), "/") + "/"
	var out []entry
	for _, o := range objs {
		rel := strings.TrimPrefix(o.URI.String(), prefix)
		if slices.ContainsFunc(strings.Split(rel, "/"), func(part string) bool { return part == "" || isHidden(part) }) {
			continue
		}
		out = append(out, entry{o.URI.String(), objectInfo{o}})
	}
	return out, nil, nil
}
