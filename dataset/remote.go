package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/npy"
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

// fetched reads the tensors of the object obj, opened or listed at one version, with read, as
// mapped does for a file: the object is laid out as the file it is in a reservation that holds
// only what was fetched (objstore.Buffer), and read under Guard. Unless whole, only what
// describing it takes is fetched first (fetchFor: a Parquet or Arrow IPC file's footer, a
// .npy or .npz file's headers), and read is told the object was fetched in part; its Sources
// fetch the rest as they are read. A read that needs more than the part fetched is handed the
// whole object. Its errors past opening are *FileError.
func fetched(ctx context.Context, obj *objstore.Object, lim limits.Limits, whole bool, budget *objectShare, read func(b []byte, partial bool) ([]Tensor, error)) (*File, error) {
	lim = lim.WithDefaults()
	buf, err := obj.NewBuffer()
	if err != nil {
		return nil, err
	}
	f := &File{Path: obj.URI.String(), mapping: buf.Mapping(), remote: buf}
	was := budget.held()
	fail := func(err error) (*File, error) {
		buf.Mapping().Release()
		budget.restore(was) // nothing of it is held
		err = objectError(err)
		var fe *FileError
		if errors.As(err, &fe) && fe.Path == f.Path {
			return nil, err
		}
		return nil, &FileError{Path: f.Path, Err: err}
	}
	partial, err := fetchFor(ctx, buf, lim, whole, budget)
	if err != nil {
		return fail(err)
	}
	err = Guard(func() error {
		var err error
		f.Tensors, err = read(buf.Mapping().Bytes(), partial)
		return err
	})
	if partial && errors.Is(err, mmap.ErrNotFetched) {
		// A reader that needs more than the part fetched for it: the object whole, read so.
		if _, err = fetchFor(ctx, buf, lim, true, budget); err != nil {
			return fail(err)
		}
		err = Guard(func() error {
			var err error
			f.Tensors, err = read(buf.Mapping().Bytes(), false)
			return err
		})
	}
	if err != nil {
		return fail(err)
	}
	return f, nil
}

// fetchFor fetches what reading the object of buf needs: the whole object (whole), within
// lim.MaxCopySize as the bytes of standard input are; or first its first 16 and last 10
// bytes (the magic of every format, a Parquet or Arrow IPC file footer's length) and then a
// Parquet object's footer alone, an Arrow IPC file's footer, dictionaries and batch metadata
// (fetchArrowFile), a .npy file's header (fetchNpyHeader), an .npz archive's directory and
// headers (fetchNpzHeaders), nothing more of an object that is
// no tensor file (ErrNotTensors), any other object whole. It reports whether the object was
// fetched in part.
func fetchFor(ctx context.Context, buf *objstore.Buffer, lim limits.Limits, whole bool, budget *objectShare) (partial bool, err error) {
	size := buf.Object().Size
	if !whole {
		if err := buf.Fetch(ctx, objstore.Range{Off: 0, Len: probeSize}, objstore.Range{Off: size - 10, Len: 10}); err != nil {
			return false, err
		}
		b := buf.Mapping().Bytes()
		if isParquetEnds(b) {
			n := int64(binary.LittleEndian.Uint32(b[size-8:]))
			if n > size-12 || n > lim.MaxMetadataSize {
				return true, nil // the reader says why: it reads the length, not the footer
			}
			return true, buf.Fetch(ctx, objstore.Range{Off: size - 8 - n, Len: n})
		}
		if isArrowFileEnds(b) {
			if ok, err := fetchArrowFile(ctx, buf, lim); ok || err != nil {
				return ok, err
			}
		}
		if strings.HasPrefix(string(b[:min(size, probeSize)]), zipMagic) {
			if ok, err := fetchNpzHeaders(ctx, buf, lim); ok || err != nil {
				return ok, err
			}
		}
		if strings.HasPrefix(string(b[:min(size, probeSize)]), npyMagic) {
			if ok, err := fetchNpyHeader(ctx, buf, lim); ok || err != nil {
				return ok, err
			}
		}
		if !mayHoldTensors(b[:min(size, probeSize)], size) {
			return false, ErrNotTensors // a CSV, an image: not fetched
		}
	}
	if size > lim.MaxCopySize {
		return false, fmt.Errorf("fetching %d bytes, more than MaxCopySize %d: %w", size, lim.MaxCopySize, limits.ErrExceeded)
	}
	if err := budget.take(size, lim); err != nil {
		return false, err
	}
	return false, buf.Fetch(ctx, objstore.Range{Off: 0, Len: size})
}

// fetchArrowFile fetches what describing the Arrow IPC file of buf (its ends fetched) takes:
// the footer, the dictionaries and the metadata of each record batch — not the batches'
// bodies, which its Sources fetch one block at a time. It reports false (and the object is
// then fetched whole, for the reader to read or to say what is wrong with it) for a footer
// that does not read, a file with dictionaries (decoded whole), and a sparse tensor's batch
// (one tensor of every column, read whole).
func fetchArrowFile(ctx context.Context, buf *objstore.Buffer, lim limits.Limits) (bool, error) {
	b := buf.Mapping().Bytes()
	opts := ipc.BatchOptions{Limits: lim}
	off, n, err := ipc.FileFooter(b, opts)
	if err != nil {
		return false, nil
	}
	if err := buf.Fetch(ctx, objstore.Range{Off: off, Len: n}); err != nil {
		return false, err
	}
	dicts, records, err := ipc.FileBlocks(b, opts)
	if err != nil || len(dicts) > 0 {
		return false, nil
	}
	ranges := make([]objstore.Range, len(records))
	for i, r := range records {
		ranges[i] = objstore.Range{Off: r.Offset, Len: r.MetaLen}
	}
	if err := buf.Fetch(ctx, ranges...); err != nil {
		return false, err
	}
	var sparseSchema bool
	err = Guard(func() error {
		r, err := ipc.NewBatchReader(b, ipc.BatchOptions{Limits: lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
		if err != nil {
			return err
		}
		defer r.Release()
		sparseSchema = arrowtensor.IsSparseSchema(r.Schema())
		return nil
	})
	return err == nil && !sparseSchema, nil
}

// fetchNpyHeader fetches the header of the .npy object of buf (its first 16 bytes fetched),
// whose values its Source fetches a run of rows at a time. It reports false (and the object
// is then fetched whole, for the reader to read or to say what is wrong with it) for a header
// that does not read, values that do not fill the rest of the object, and arrays that are not
// rows: column-major ones and scalars.
func fetchNpyHeader(ctx context.Context, buf *objstore.Buffer, lim limits.Limits) (bool, error) {
	b := buf.Mapping().Bytes()
	n, err := npy.HeaderSize(b[:min(int64(len(b)), probeSize)], lim)
	if err != nil || n > int64(len(b)) {
		return false, nil
	}
	if err := buf.Fetch(ctx, objstore.Range{Off: 0, Len: n}); err != nil {
		return false, err
	}
	h, err := npy.ReadHeader(b[:n], lim)
	if err != nil || h.Fortran || len(h.Shape) == 0 || h.DataOffset+h.DataLen != int64(len(b)) {
		return false, nil
	}
	return true, nil
}

// fetchNpzHeaders fetches what describing the .npz object of buf takes — its central
// directory, each member's local header and .npy header — by reading them as npzArrays does
// and fetching, at each byte not yet fetched that the reading reaches, the 64 KiB from there
// (a fault under Guard, not a wrong value). Each member's values are fetched as they are read.
// It reports false (and the object is then fetched whole) for an archive that does not read,
// a deflated member (decompressed whole), and a member that is no array of rows.
func fetchNpzHeaders(ctx context.Context, buf *objstore.Buffer, lim limits.Limits) (bool, error) {
	b := buf.Mapping().Bytes()
	size := int64(len(b))
	const window = 64 << 10
	// Whole pages only: a page partly fetched reads zeros where it was not, not a fault.
	pg := int64(os.Getpagesize())
	pages := func(off, n int64) objstore.Range {
		lo := max(off, 0) / pg * pg
		return objstore.Range{Off: lo, Len: (off+n+pg-1)/pg*pg - lo}
	}
	// The first 64 KiB (the first member's headers) and the last 64 KiB + 22: the end of
	// central directory record and the comment before it.
	if err := buf.Fetch(ctx, pages(0, window), pages(size-window-22, window+22)); err != nil {
		return false, err
	}
	for range maxNpzFetches {
		var arrays []npzArray
		err := mmap.Guard(func() error {
			var err error
			arrays, err = npzArrays(b, lim)
			return err
		})
		var fault *mmap.FaultError
		switch {
		case errors.As(err, &fault) && fault.NotFetched:
			if err := buf.Fetch(ctx, pages(fault.Offset, window)); err != nil {
				return false, err
			}
		case err != nil:
			return false, nil
		default:
			return arrays != nil, nil
		}
	}
	return false, nil
}

// maxNpzFetches bounds the ranges fetchNpzHeaders fetches before it fetches the object whole.
const maxNpzFetches = 256

// npzArray is a member of an .npz archive in object storage and the header of its array.
type npzArray struct {
	npy.Member
	info npy.Info // DataOffset in the archive
}

// npzArrays returns the members of the .npz archive b and their arrays' headers, or nil when
// a member is deflated, column-major, a scalar or holds more or less than its array.
func npzArrays(b []byte, lim limits.Limits) ([]npzArray, error) {
	members, err := npy.NpzMembers(b, lim)
	if err != nil {
		return nil, err
	}
	out := make([]npzArray, 0, len(members))
	for _, m := range members {
		if !m.Stored {
			return nil, nil
		}
		data := b[m.DataOffset : m.DataOffset+m.Size]
		n, err := npy.HeaderSize(data[:min(m.Size, probeSize)], lim)
		if err != nil || n > m.Size {
			return nil, nil
		}
		h, err := npy.ReadHeader(data[:n], lim)
		if err != nil || h.Fortran || len(h.Shape) == 0 || h.DataOffset+h.DataLen != m.Size {
			return nil, nil
		}
		h.DataOffset += m.DataOffset
		out = append(out, npzArray{m, h})
	}
	return out, nil
}

// isArrowFileEnds reports whether b, of which the first 16 and last 10 bytes were fetched,
// starts and ends with an Arrow IPC file's magic.
func isArrowFileEnds(b []byte) bool {
	return len(b) >= 18 && string(b[:6]) == ipcMagic && string(b[len(b)-6:]) == ipcMagic
}

// streamedTFRecord reads the TFRecord object at uri (or obj, listed at one version),
// compressed as c, streaming it (objstore.Reader: parts fetched ahead of the reader) and
// decoding records as they arrive into tensors named after base, as ReadTFRecord reads a
// file; the records, decompressed, within lim.MaxCopySize (and budget). The tensors are Go
// memory: nothing of the object is held after. Its errors past opening are *FileError.
func streamedTFRecord(ctx context.Context, uri string, obj *objstore.Object, base string, c tfrecord.Compression, lim limits.Limits, budget *objectShare) (*File, error) {
	lim = lim.WithDefaults()
	if obj == nil {
		var err error
		if obj, err = objstore.Open(ctx, uri); err != nil {
			return nil, err
		}
	}
	buf, err := obj.NewBuffer() // holds nothing: the File's mapping, for Retain and Release
	if err != nil {
		return nil, err
	}
	f := &File{Path: obj.URI.String(), mapping: buf.Mapping(), remote: buf}
	fail := func(err error) (*File, error) {
		buf.Mapping().Release()
		err = objectError(err)
		var fe *FileError
		if errors.As(err, &fe) && fe.Path == f.Path {
			return nil, err
		}
		return nil, &FileError{Path: f.Path, Err: err}
	}
	r := obj.NewReader(ctx)
	defer r.Close()
	tr, err := tfrecord.NewReader(r, tfrecord.Options{Compression: c, MaxDecompressedSize: lim.MaxCopySize})
	if err != nil {
		return fail(err)
	}
	defer tr.Close()
	var records [][]byte
	total := int64(0)
	for {
		rec, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		if total += int64(len(rec)); total > lim.MaxCopySize {
			return fail(fmt.Errorf("tfrecord: records of more than MaxCopySize %d bytes: %w", lim.MaxCopySize, limits.ErrExceeded))
		}
		records = append(records, bytes.Clone(rec))
	}
	if f.Tensors, err = recordTensors(records, base, lim); err != nil {
		return fail(err)
	}
	if err := budget.take(total, lim); err != nil { // what the tensors hold, about
		return fail(err)
	}
	f.decoded = total
	return f, nil
}

// objectBudget is what the objects of one directory dataset may hold in memory together: an
// object other than Parquet is fetched whole and held while it is served, and all of them stay
// within MaxCopySize (a Parquet object holds its footer alone), granted as if the objects were
// read one at a time in path order — each takes its bytes if those the objects before it hold
// leave room — although they are read concurrently: an object whose bytes would not fit if
// every object before it still being read took all it may (its size) waits for them to be
// read. The result is the same whatever the order the reads end in.
type objectBudget struct {
	mu      sync.Mutex
	changed *sync.Cond
	max     int64
	took    []int64 // by object: what it holds
	most    []int64 // by object: the most it may hold, until it is read (done)
	done    []bool
	settled int   // the objects before it are all done
	before  int64 // what they hold
}

// newObjectBudget returns the budget of n objects within max bytes.
func newObjectBudget(n int, max int64) *objectBudget {
	b := &objectBudget{max: max, took: make([]int64, n), most: make([]int64, n), done: make([]bool, n)}
	b.changed = sync.NewCond(&b.mu)
	return b
}

// share returns the account of object i, which may hold at most most bytes.
func (b *objectBudget) share(i int, most int64) *objectShare {
	b.mu.Lock()
	b.most[i] = most
	b.mu.Unlock()
	return &objectShare{b, i}
}

// finish marks object i read, holding what it took (or, for an object an earlier scan read,
// held bytes more).
func (b *objectBudget) finish(i int, held int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.took[i] += held
	b.done[i] = true
	for b.settled < len(b.done) && b.done[b.settled] {
		b.before += b.took[b.settled]
		b.settled++
	}
	b.changed.Broadcast()
}

// objectShare is one object's account in its directory's objectBudget; nil is no bound (one
// object, read alone).
type objectShare struct {
	b *objectBudget
	i int
}

// take counts n bytes more, or says why they do not fit.
func (s *objectShare) take(n int64, lim limits.Limits) error {
	if s == nil {
		return nil
	}
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		held, known := b.before, true // what the objects before this one hold, or may
		for j := b.settled; j < s.i; j++ {
			held += b.took[j]
			if !b.done[j] {
				held += max(b.most[j]-b.took[j], 0)
				known = false
			}
		}
		if n <= b.max-held {
			b.took[s.i] += n
			return nil
		}
		if known {
			return fmt.Errorf("fetching its %d bytes would hold %d bytes of objects in memory, more than MaxCopySize %d (a Parquet object holds only its footer): %w", n, held+n, lim.MaxCopySize, limits.ErrExceeded)
		}
		b.changed.Wait()
	}
}

// held returns what the object holds so far.
func (s *objectShare) held() int64 {
	if s == nil {
		return 0
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.b.took[s.i]
}

// restore sets what the object holds back to n, what held said before a read that failed.
func (s *objectShare) restore(n int64) {
	if s == nil {
		return
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.took[s.i] = n
	s.b.changed.Broadcast()
}

// held returns the bytes f holds of its object (0 for a file).
func (f *File) held() int64 {
	if f.remote == nil {
		return 0
	}
	n := f.decoded
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

// isParquetEnds reports whether b, of which the first 16 and last 10 bytes were fetched, starts
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
func walkObjects(ctx context.Context, dir string) ([]entry, []folderError, error) {
	objs, err := objstore.List(ctx, dir)
	if errors.Is(err, objstore.ErrNotListable) && !strings.HasSuffix(withoutQuery(dir), "/") {
		objs, err = nil, nil // an http(s) URL: no prefix to list, so one object
	}
	if err != nil {
		return nil, nil, err
	}
	if len(objs) == 0 && !strings.HasSuffix(withoutQuery(dir), "/") { // no prefix: one object, a dataset of its own
		o, err := objstore.Open(ctx, dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, nil // an empty prefix
			}
			return nil, nil, err
		}
		return []entry{{o.URI.String(), objectInfo{o}}}, nil, nil
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
