package dataset

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/internal/scratch"
	"github.com/ndarrow/ndarrow/parquet"
)

// PageCache keeps the pages of Parquet files that reads by rows (ReadRows, ReadRowsOf, and
// the tables above them) had to decompress, decompressed, in a scratch file of its own —
// unnamed in its directory, so nothing is left behind, mapped, written with pwrite — so that
// each page is decompressed once, however many reads touch it: a shuffled epoch, whose every
// batch holds rows of most pages, decompresses the table once instead of once a batch. The
// pages live in the kernel's page cache, written to disk when memory is short; none of them is
// anonymous memory.
//
// What it keeps of a file is of that version of the file (that *File): when the File is
// released for the last time — a Table released, a served file's old version once no stream
// reads it — its pages are dropped and their room given back, to the scratch file for the
// pages after and to the disk (Stats().Bytes and DiskBytes go down). Once full it keeps no more
// pages, until room is given back (the reads meanwhile decompress what it does not hold, as
// without it). A PageCache is safe for concurrent use; Close it after the reads that use it.
type PageCache struct {
	file  *scratch.File
	mu    sync.Mutex
	files map[*File]*filePages
	// frees counts the times room was given back; fullAt is 1 + frees when an append last
	// found no room (0: never), so that the cache is full until room is given back after.
	frees   atomic.Int64
	fullAt  atomic.Int64
	hits    atomic.Int64
	kept    atomic.Int64
	reduced error // why a default cache is smaller (Reduced)
	// kepts are the allocator of the buffers of the columns kept (KeepChunk): the last
	// release of a buffer gives its room back.
	kepts keptBuffers
}

// NewPageCache returns a cache of at most size bytes of pages in a scratch file in dir
// (os.TempDir() when empty). It fails where no scratch file can be made (a directory that
// cannot be written, a platform without mmap, an address space too small for size bytes
// more: ulimit -v); see NewDefaultPageCache for the size ndarrow picks.
func NewPageCache(dir string, size int64) (*PageCache, error) {
	f, err := scratch.New(dir, size)
	if err != nil {
		return nil, err
	}
	c := &PageCache{file: f, files: map[*File]*filePages{}}
	c.kepts = keptBuffers{c}
	return c, nil
}

// PageCacheStats say what a PageCache holds and how it was used.
type PageCacheStats struct {
	Bytes     int64 // the bytes of pages kept
	Cap       int64 // the most it keeps
	Pages     int64 // the pages (and columns) kept
	Hits      int64 // the reads of a page that found it kept
	DiskBytes int64 // the bytes of disk its scratch file takes (allocated blocks)
}

// Stats returns what the cache holds and how often it was used.
func (c *PageCache) Stats() PageCacheStats {
	return PageCacheStats{Bytes: c.file.Size(), Cap: c.file.Cap(), Pages: c.kept.Load(), Hits: c.hits.Load(), DiskBytes: c.file.DiskBytes()}
}

// Close drops every page and gives the scratch file back; no read using the cache may be
// under way. A column a reader still retains (an array KeepChunk or Chunk returned, or one
// viewing its buffers) stays readable until released: the file is unmapped after the last.
func (c *PageCache) Close() error {
	c.mu.Lock()
	files := c.files
	c.files = nil
	c.mu.Unlock()
	for _, p := range files {
		p.stopWatching()
		p.drop()
	}
	return c.file.Close()
}

// full reports whether an append found no room since room was last given back.
func (c *PageCache) full() bool {
	at := c.fullAt.Load()
	return at != 0 && at == c.frees.Load()+1
}

// append writes b into the scratch file; a failure (no room, or the disk's) makes the cache
// full until room is given back.
func (c *PageCache) append(b []byte) ([]byte, error) {
	frees := c.frees.Load()
	kept, err := c.file.Append(b)
	if err != nil {
		c.fullAt.Store(frees + 1)
	}
	return kept, err
}

// free gives back the room of a view append returned.
func (c *PageCache) free(view []byte) {
	if len(view) == 0 {
		return
	}
	if err := c.file.Free(view); err != nil {
		panic(fmt.Sprintf("dataset: page cache: %v", err)) // a view freed twice: a bug, not input
	}
	c.frees.Add(1)
}

// of returns the pages kept of file f, a parquet.PageCache. The first call for f has them
// dropped when f's mapping is released for the last time.
func (c *PageCache) of(f *File) *filePages {
	c.mu.Lock()
	p := c.files[f]
	if p != nil {
		c.mu.Unlock()
		return p
	}
	p = &filePages{cache: c, pages: map[int64][]byte{}, chunks: map[int64]arrow.Array{}}
	if c.files == nil { // closed: keeps nothing
		c.mu.Unlock()
		p.dropped = true
		return p
	}
	c.files[f] = p
	c.mu.Unlock()
	if f.mapping != nil { // outside the cache's lock: on a mapping released already it runs at once
		unwatch := f.mapping.AtRelease(func() { c.release(f) })
		p.mu.Lock()
		p.unwatch = unwatch
		p.mu.Unlock()
	}
	return p
}

// release drops the pages kept of f, whose last reference was released: no read of f can be
// under way, none can start, so no view of them is in use but the columns readers retain.
func (c *PageCache) release(f *File) {
	c.mu.Lock()
	p := c.files[f]
	delete(c.files, f)
	c.mu.Unlock()
	if p != nil {
		p.drop()
	}
}

// filePages are the pages kept of one file, by their offsets in it, and the columns decoded
// whole, by the offsets of their chunks. A read that finds a page missing decodes it while
// the others that want it wait (busy), so that reads at once decode it once, not each.
type filePages struct {
	cache   *PageCache
	mu      sync.Mutex
	pages   map[int64][]byte
	chunks  map[int64]arrow.Array
	busy    map[int64]chan struct{} // pages and chunks being decoded, closed when kept or not
	dropped bool                    // the file was released, or the cache closed: keeps nothing
	unwatch func()                  // stops the drop at the file's release (AtRelease)
}

var _ parquet.PageCache = (*filePages)(nil)

// stopWatching keeps the file's release from dropping the pages (the cache dropped them).
func (p *filePages) stopWatching() {
	p.mu.Lock()
	unwatch := p.unwatch
	p.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
}

// drop gives back the room of every page kept and the cache's reference to every column
// kept (a column's room is given back with its last reference), and keeps nothing more.
func (p *filePages) drop() {
	p.mu.Lock()
	pages, chunks, busy := p.pages, p.chunks, p.busy
	p.pages, p.chunks, p.busy = map[int64][]byte{}, map[int64]arrow.Array{}, nil
	p.dropped = true
	p.mu.Unlock()
	for _, ch := range busy { // none, when no read is under way: but never left waiting
		close(ch)
	}
	for _, v := range pages {
		p.cache.free(v)
	}
	for _, arr := range chunks {
		arr.Release()
	}
	p.cache.kept.Add(-int64(len(pages) + len(chunks)))
}

// claim is what Values and Chunk do under the lock when what they want is not kept: wait for
// the read decoding it, or become that read (a miss the caller must end with Keep or
// KeepChunk), or, once the cache is full, miss without a claim. ok is true to look again.
func (p *filePages) claim(key int64) (wait chan struct{}, again bool) {
	if p.dropped || p.cache.full() {
		return nil, false
	}
	if ch, ok := p.busy[key]; ok {
		return ch, true
	}
	if p.busy == nil {
		p.busy = map[int64]chan struct{}{}
	}
	p.busy[key] = make(chan struct{})
	return nil, false
}

// done ends the claim on key, waking the reads that wait for it.
func (p *filePages) done(key int64) {
	if ch, ok := p.busy[key]; ok {
		close(ch)
		delete(p.busy, key)
	}
}

// Values returns the values of the page at offset, if kept, waiting for a read decoding it:
// a view of the scratch file, valid while the file is (its room is given back once the File
// is released). A miss makes the caller the page's decoder until its Keep.
func (p *filePages) Values(offset int64) ([]byte, bool) {
	for {
		p.mu.Lock()
		if v, ok := p.pages[offset]; ok {
			p.mu.Unlock()
			p.cache.hits.Add(1)
			return v, true
		}
		wait, again := p.claim(offset)
		p.mu.Unlock()
		if !again {
			return nil, false
		}
		<-wait
	}
}

// Keep keeps a copy of the page's values unless the cache is full (or its disk), and ends a
// miss's claim; nil values keep nothing (a page not decoded after all).
func (p *filePages) Keep(offset int64, values []byte) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.done(offset)
	if v, ok := p.pages[offset]; ok {
		return v
	}
	if values == nil || p.dropped || p.cache.full() {
		return values
	}
	p.mu.Unlock() // written without the lock: the others that want the page wait for done
	kept, err := p.cache.append(values)
	p.mu.Lock()
	if err != nil { // full, or its disk: keep no more until room is given back
		return values
	}
	if p.dropped { // dropped meanwhile
		p.cache.free(kept)
		return values
	}
	// kept meanwhile by a read that decoded it without a claim (the cache full when it looked)
	if v, ok := p.pages[offset]; ok {
		p.cache.free(kept)
		return v
	}
	p.pages[offset] = kept
	p.cache.kept.Add(1)
	return kept
}

// busyChunk keeps the claims on chunks apart from those on pages: no page is at a negative
// offset.
func busyChunk(offset int64) int64 { return -1 - offset }

// Chunk returns the column kept of the chunk at offset, retained, waiting for a read
// decoding it. A miss makes the caller the chunk's decoder until its KeepChunk.
func (p *filePages) Chunk(offset int64) (arrow.Array, bool) {
	for {
		p.mu.Lock()
		if arr, ok := p.chunks[offset]; ok {
			arr.Retain()
			p.mu.Unlock()
			p.cache.hits.Add(1)
			return arr, true
		}
		wait, again := p.claim(busyChunk(offset))
		p.mu.Unlock()
		if !again {
			return nil, false
		}
		<-wait
	}
}

// KeepChunk keeps a copy of arr whose buffers are in the scratch file, unless the cache is
// full, and ends a miss's claim; it returns what it kept (or arr), retained. A nil arr keeps
// nothing. The copy's buffers give their room back with their last reference: the cache's
// goes when the file is released, a reader's when it releases what it retained.
func (p *filePages) KeepChunk(offset int64, arr arrow.Array) arrow.Array {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.done(busyChunk(offset))
	if kept, ok := p.chunks[offset]; ok {
		kept.Retain()
		return kept
	}
	if arr == nil {
		return nil
	}
	if !p.dropped && !p.cache.full() {
		p.mu.Unlock() // copied without the lock, as Keep writes
		data, err := p.cache.copyData(arr.Data())
		p.mu.Lock()
		if err == nil {
			kept := array.MakeFromData(data)
			data.Release()
			if prev, ok := p.chunks[offset]; ok { // kept meanwhile, as in Keep
				kept.Release()
				prev.Retain()
				return prev
			}
			if !p.dropped {
				p.chunks[offset] = kept
				p.cache.kept.Add(1)
				kept.Retain()
			}
			return kept
		}
	}
	arr.Retain()
	return arr
}

// copyData returns a copy of d whose buffers — its children's and its dictionary's too —
// are in the scratch file, each giving its room back at its last release.
func (c *PageCache) copyData(d arrow.ArrayData) (arrow.ArrayData, error) {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	children := make([]arrow.ArrayData, len(d.Children()))
	defer func() { // the references NewData took are the copy's
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
		for _, ch := range children {
			if ch != nil {
				ch.Release()
			}
		}
	}()
	for i, b := range d.Buffers() {
		if b == nil || b.Len() == 0 {
			continue
		}
		kept, err := c.append(b.Bytes())
		if err != nil {
			return nil, err
		}
		bufs[i] = memory.NewBufferWithAllocator(kept, c.kepts)
	}
	for i, ch := range d.Children() {
		kept, err := c.copyData(ch)
		if err != nil {
			return nil, err
		}
		children[i] = kept
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	if d.DataType().ID() == arrow.DICTIONARY { // (Dictionary is a typed nil otherwise)
		kept, err := c.copyData(d.Dictionary())
		if err != nil {
			out.Release()
			return nil, err
		}
		out.SetDictionary(kept)
		kept.Release()
	}
	return out, nil
}

// keptBuffers is the memory.Allocator of the buffers of the columns a PageCache keeps: their
// bytes are views of its scratch file, whose room Free gives back when a buffer's last
// reference is released. What Allocate gives (nothing of the package asks: the buffers are
// never resized) is Go memory.
type keptBuffers struct{ c *PageCache }

func (a keptBuffers) Allocate(size int) []byte { return make([]byte, size) }

func (a keptBuffers) Reallocate(size int, b []byte) []byte {
	out := make([]byte, size)
	copy(out, b)
	a.Free(b)
	return out
}

func (a keptBuffers) Free(b []byte) {
	if a.c.file.Holds(b) {
		a.c.free(b)
	}
}

// DefaultPageCacheSize is the most bytes a default page cache (NewDefaultPageCache) keeps.
const DefaultPageCacheSize = 16 << 30

// MinPageCacheSize is the least a default page cache keeps: where less can be had,
// NewDefaultPageCache makes none.
const MinPageCacheSize = 64 << 20

// ErrNoPageCache is the error of NewDefaultPageCache where no page cache can be made; reads
// then decompress each page as each needs it.
var ErrNoPageCache = errors.New("no page cache")

// ErrSmallPageCache is what PageCache.Reduced returns of a default page cache smaller than
// DefaultPageCacheSize and than the free space of its directory allows, for want of address
// space.
var ErrSmallPageCache = fmt.Errorf("page cache smaller than the %s default", sizeOf(DefaultPageCacheSize))

// NewDefaultPageCache returns the page cache table.Open, `ndarrow batches` and `ndarrow serve`
// make when not told otherwise, in dir (os.TempDir() when empty): of DefaultPageCacheSize
// bytes, or half the free space of dir if less. Its mapping is address space, not memory; under
// a limit of the address space (ulimit -v, RLIMIT_AS) it takes at most a quarter of what the
// limit leaves, the rest left to the heap and the files read, and where mapping it fails for
// want of address space it is halved until it maps. Such a cache says why it is smaller in
// Reduced. Where less than MinPageCacheSize can be had, or no scratch file can be made at all,
// it returns an error wrapping ErrNoPageCache that says why.
func NewDefaultPageCache(dir string) (*PageCache, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	free, err := scratch.FreeSpaceOf(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoPageCache, err)
	}
	left, limit, limited := scratch.AddressSpaceLeft()
	size, reduced, err := defaultPageCacheSize(dir, free, left, limit, limited)
	if err != nil {
		return nil, err
	}
	for asked := size; ; size /= 2 {
		c, err := NewPageCache(dir, size)
		tooLarge := errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EFBIG) // address space, or the file system's largest file
		switch {
		case err == nil:
			c.reduced = reduced
			return c, nil
		case !tooLarge:
			return nil, fmt.Errorf("%w: %w", ErrNoPageCache, err)
		case size/2 < MinPageCacheSize:
			return nil, fmt.Errorf("%w: even %s could not be mapped: %w", ErrNoPageCache, sizeOf(size), err)
		}
		why := syscall.ENOMEM
		if errors.Is(err, syscall.EFBIG) {
			why = syscall.EFBIG
		}
		reduced = fmt.Errorf("%w: %s, as mapping %s of scratch file in %s failed (%v)", ErrSmallPageCache, sizeOf(size/2), sizeOf(asked), dir, why)
	}
}

// defaultPageCacheSize returns the size NewDefaultPageCache asks for in dir, given the free
// space there and, when limited, the address space the process's limit leaves; reduced says
// why it is smaller than the default for want of address space (ErrSmallPageCache), err why
// there is none (ErrNoPageCache).
func defaultPageCacheSize(dir string, free, left, limit int64, limited bool) (size int64, reduced, err error) {
	size = DefaultPageCacheSize
	if free/2 < size {
		size = free / 2
		if size < MinPageCacheSize {
			return 0, nil, fmt.Errorf("%w: %s has %s free, less than twice the %s of the least page cache", ErrNoPageCache, dir, sizeOf(free), sizeOf(MinPageCacheSize))
		}
	}
	if limited && left/4 < size {
		size = left / 4
		if size < MinPageCacheSize {
			return 0, nil, fmt.Errorf("%w: the address-space limit (ulimit -v, %s) leaves %s, less than four times the %s of the least page cache", ErrNoPageCache, sizeOf(limit), sizeOf(left), sizeOf(MinPageCacheSize))
		}
		reduced = fmt.Errorf("%w: %s, a quarter of the %s the address-space limit (ulimit -v, %s) leaves", ErrSmallPageCache, sizeOf(size), sizeOf(left), sizeOf(limit))
	}
	return size, reduced, nil
}

// Reduced returns why a page cache NewDefaultPageCache made is smaller than
// DefaultPageCacheSize and than the free space of its directory allows (an error wrapping
// ErrSmallPageCache: an address-space limit, a mapping that failed), nil when it is not so.
func (c *PageCache) Reduced() error { return c.reduced }

// sizeOf says n bytes in MiB, or GiB from 1 GiB.
func sizeOf(n int64) string {
	if n >= 1<<30 {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<30)), ".0") + " GiB"
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// FreeSpace returns the bytes free in the file system holding dir (what a PageCache there
// may take), 0 when it cannot tell.
func FreeSpace(dir string) int64 { return scratch.FreeSpace(dir) }
