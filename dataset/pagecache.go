package dataset

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/internal/scratch"
	"github.com/ndarrow/ndarrow/parquet"
)

// PageCache keeps the pages of Parquet files that reads by rows (ReadRows, ReadRowsOf, and
// the tables above them) had to decompress, decompressed, in a scratch file of its own —
// unnamed in its directory, so nothing is left behind, mapped, its room allocated on disk
// before it is written — so that each page is decompressed once, however many reads touch
// it: a shuffled epoch, whose every batch holds rows of most pages, decompresses the table
// once instead of once a batch. The pages live in the kernel's page cache, written to disk
// when memory is short; none of them is anonymous memory. Once full it keeps no more pages
// (the reads after decompress what it does not hold, as without it). A PageCache is safe for
// concurrent use; Close it after the reads that use it.
type PageCache struct {
	file  *scratch.File
	mu    sync.Mutex
	files map[*File]*filePages
	full  atomic.Bool
	hits  atomic.Int64
	kept  atomic.Int64
}

// NewPageCache returns a cache of at most size bytes of pages in a scratch file in dir
// (os.TempDir() when empty). It fails where no scratch file can be made (a directory that
// cannot be written, a platform without fallocate and mmap).
func NewPageCache(dir string, size int64) (*PageCache, error) {
	f, err := scratch.New(dir, size)
	if err != nil {
		return nil, err
	}
	return &PageCache{file: f, files: map[*File]*filePages{}}, nil
}

// PageCacheStats say what a PageCache holds and how it was used.
type PageCacheStats struct {
	Bytes int64 // the bytes of pages kept
	Cap   int64 // the most it keeps
	Pages int64 // the pages kept
	Hits  int64 // the reads of a page that found it kept
}

// Stats returns what the cache holds and how often it was used.
func (c *PageCache) Stats() PageCacheStats {
	return PageCacheStats{Bytes: c.file.Size(), Cap: c.file.Cap(), Pages: c.kept.Load(), Hits: c.hits.Load()}
}

// Close gives the scratch file back. No read using the cache may be under way.
func (c *PageCache) Close() error {
	c.mu.Lock()
	c.files = nil
	c.mu.Unlock()
	return c.file.Close()
}

// of returns the pages kept of file f, a parquet.PageCache.
func (c *PageCache) of(f *File) *filePages {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.files[f]
	if p == nil {
		p = &filePages{cache: c, pages: map[int64][]byte{}, chunks: map[int64]arrow.Array{}}
		if c.files != nil {
			c.files[f] = p
		}
	}
	return p
}

// filePages are the pages kept of one file, by their offsets in it, and the columns decoded
// whole, by the offsets of their chunks. A read that finds a page missing decodes it while
// the others that want it wait (busy), so that reads at once decode it once, not each.
type filePages struct {
	cache  *PageCache
	mu     sync.Mutex
	pages  map[int64][]byte
	chunks map[int64]arrow.Array
	busy   map[int64]chan struct{} // pages and chunks being decoded, closed when kept or not
}

var _ parquet.PageCache = (*filePages)(nil)

// claim is what Values and Chunk do under the lock when what they want is not kept: wait for
// the read decoding it, or become that read (a miss the caller must end with Keep or
// KeepChunk), or, once the cache is full, miss without a claim. ok is true to look again.
func (p *filePages) claim(key int64) (wait chan struct{}, again bool) {
	if p.cache.full.Load() {
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

// Values returns the values of the page at offset, if kept, waiting for a read decoding it.
// A miss makes the caller the page's decoder until its Keep.
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
	if values == nil || p.cache.full.Load() {
		return values
	}
	p.mu.Unlock() // written without the lock: the others that want the page wait for done
	kept, err := p.cache.file.Append(values)
	p.mu.Lock()
	if err != nil { // full, or its disk: keep no more
		p.cache.full.Store(true)
		return values
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
// nothing.
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
	if !p.cache.full.Load() {
		p.mu.Unlock() // copied without the lock, as Keep writes
		data, err := p.cache.copyData(arr.Data())
		p.mu.Lock()
		if err == nil {
			kept := array.MakeFromData(data)
			data.Release()
			p.chunks[offset] = kept
			p.cache.kept.Add(1)
			kept.Retain()
			return kept
		}
		p.cache.full.Store(true)
	}
	arr.Retain()
	return arr
}

// copyData returns a copy of d whose buffers — its children's and its dictionary's too —
// are in the scratch file.
func (c *PageCache) copyData(d arrow.ArrayData) (arrow.ArrayData, error) {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b == nil || b.Len() == 0 {
			continue
		}
		kept, err := c.file.Append(b.Bytes())
		if err != nil {
			return nil, err
		}
		bufs[i] = memory.NewBufferBytes(kept)
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	defer func() {
		for _, ch := range children {
			if ch != nil {
				ch.Release()
			}
		}
	}()
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

// FreeSpace returns the bytes free in the file system holding dir (what a PageCache there
// may take), 0 when it cannot tell.
func FreeSpace(dir string) int64 { return scratch.FreeSpace(dir) }
