package objstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/ndarrow/ndarrow/internal/mmap"
)

// Range is bytes [Off, Off+Len) of an object.
type Range struct{ Off, Len int64 }

// End returns Off+Len.
func (r Range) End() int64 { return r.Off + r.Len }

// How Fetch turns ranges into requests, as Arrow C++'s read coalescing does: ranges less than
// holeLimit apart are fetched as one (the hole's bytes are cheaper than a request), and a
// range longer than partLimit is fetched as parts of it, fetchesInFlight at once.
const (
	holeLimit       = 8 << 10
	partLimit       = 8 << 20
	fetchesInFlight = 8
)

// Buffer is an object laid out in memory as the file it is: a reservation (mmap.Reserve) the
// size of the object, into which Fetch reads the ranges a reader needs. Its Mapping is read
// as a mapped file is — inside mmap.Guard, where a read of bytes not fetched is an error
// wrapping mmap.ErrNotFetched — and holds, in memory, only what was fetched. A Buffer is safe
// for concurrent use; Fetch calls are served one at a time.
type Buffer struct {
	obj *Object
	m   *mmap.Mapping

	mu   sync.Mutex
	have []Range // fetched, sorted, disjoint, not adjacent
}

// NewBuffer returns an empty Buffer of the object. Its mapping holds one reference: release
// it (Mapping().Release()) when nothing reads it.
func (o *Object) NewBuffer() (*Buffer, error) {
	m, err := mmap.Reserve(o.URI.String(), o.Size)
	if err != nil {
		return nil, err
	}
	return &Buffer{obj: o, m: m}, nil
}

// Object returns the object the buffer holds.
func (b *Buffer) Object() *Object { return b.obj }

// Mapping returns the buffer's memory.
func (b *Buffer) Mapping() *mmap.Mapping { return b.m }

// Fetched returns the ranges fetched so far, in order.
func (b *Buffer) Fetched() []Range {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.have)
}

// Fetch reads the ranges rs of the object into the buffer, but for the bytes already there:
// ranges clipped to the object, merged across holes of less than 8 KiB, split into parts of 8
// MiB read 8 at a time, each a request conditional on the object's version. When it returns
// nil every byte of rs can be read from Mapping().Bytes().
func (b *Buffer) Fetch(ctx context.Context, rs ...Range) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var want []Range
	for _, r := range rs {
		r.Off = max(r.Off, 0)
		end := min(r.End(), b.obj.Size)
		if end > r.Off {
			want = append(want, Range{r.Off, end - r.Off})
		}
	}
	want = subtract(coalesce(want, holeLimit), b.have) // never a fetched byte again: a reader may be reading it
	err := b.obj.readParts(ctx, want, func(p Range) ([]byte, error) { return b.m.Commit(p.Off, p.Len) })
	if err != nil {
		return err
	}
	b.have = coalesce(append(b.have, want...), 0)
	return nil
}

// ReadFull reads bytes [off, off+len(p)) of the object into p, as parts of 8 MiB read 8 at
// a time, each a request conditional on the object's version.
func (o *Object) ReadFull(ctx context.Context, p []byte, off int64) error {
	if off < 0 || off > o.Size-int64(len(p)) {
		return named(o.URI, fmt.Errorf("read of bytes [%d, +%d) of %d: %w", off, len(p), o.Size, ErrTruncated))
	}
	return o.readParts(ctx, []Range{{off, int64(len(p))}}, func(r Range) ([]byte, error) {
		return p[r.Off-off : r.End()-off], nil
	})
}

// readParts reads the ranges rs of the object, split into parts of partLimit bytes read
// fetchesInFlight at a time, each into the memory dst gives it; the first failure cancels
// the rest and is returned.
func (o *Object) readParts(ctx context.Context, rs []Range, dst func(Range) ([]byte, error)) error {
	var parts []Range
	for _, r := range rs {
		for off := r.Off; off < r.End(); off += partLimit {
			parts = append(parts, Range{off, min(partLimit, r.End()-off)})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var failOnce sync.Once
	var failure error // the first: the others are its cancelling them
	fail := func(err error) {
		failOnce.Do(func() { failure = err })
		cancel(err)
	}
	slots := make(chan struct{}, fetchesInFlight)
	for _, p := range parts {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			fail(named(o.URI, fmt.Errorf("read: %w", context.Cause(ctx))))
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			b, err := dst(p)
			if err == nil {
				_, err = o.ReadRange(ctx, b, p.Off)
			}
			if err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	return failure
}

// Clone returns a new Buffer of the same object version holding copies of what b has fetched
// (a Parquet footer, for a reader of a row group of its own). Its mapping holds one reference.
func (b *Buffer) Clone() (*Buffer, error) {
	c, err := b.obj.NewBuffer()
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.have {
		dst, err := c.m.Commit(r.Off, r.Len)
		if err != nil {
			c.m.Release()
			return nil, err
		}
		copy(dst, b.m.Bytes()[r.Off:r.End()])
	}
	c.have = slices.Clone(b.have)
	return c, nil
}

// Forget gives back the memory of the ranges rs (whole pages inside them), which must be
// fetched again before they are read.
func (b *Buffer) Forget(rs ...Range) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range coalesce(rs, 0) {
		if err := b.m.Decommit(max(r.Off, 0), min(r.End(), b.obj.Size)-max(r.Off, 0)); err != nil {
			return err
		}
	}
	b.have = subtract(b.have, rs)
	return nil
}

// coalesce sorts rs and merges the ranges less than hole bytes apart (hole 0: overlapping or
// adjacent ones).
func coalesce(rs []Range, hole int64) []Range {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Off, b.Off) })
	var out []Range
	for _, r := range rs {
		if r.Len <= 0 {
			continue
		}
		if n := len(out); n > 0 && r.Off <= out[n-1].End()+hole {
			if end := r.End(); end > out[n-1].End() {
				out[n-1].Len = end - out[n-1].Off
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// subtract returns what of the sorted, disjoint ranges rs is not in have (sorted, disjoint).
func subtract(rs, have []Range) []Range {
	have = coalesce(have, 0)
	var out []Range
	for _, r := range rs {
		off, end := r.Off, r.End()
		for _, h := range have {
			if h.End() <= off || h.Off >= end {
				continue
			}
			if h.Off > off {
				out = append(out, Range{off, h.Off - off})
			}
			off = max(off, h.End())
		}
		if end > off {
			out = append(out, Range{off, end - off})
		}
	}
	return out
}
