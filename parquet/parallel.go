package parquet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/ndarrow/ndarrow/internal/mmap"
)

// ReadRowGroups decodes row groups [first, last) and calls yield with each, in order; the
// record is yield's to Release. With ReaderOptions.Parallelism above 1 the row groups are
// decoded that many at once, ahead of yield, on goroutines of its own (each with its own
// arrow-go reader, faults on a shrinking mapping and panics turned into errors): at most
// Parallelism decoded row groups are held at once, the one yield has included. It returns
// the first error from decoding or from yield, or ctx's, releasing what it decoded ahead.
func (r *Reader) ReadRowGroups(ctx context.Context, first, last int, yield func(i int, rec arrow.Record) error) error {
	if first < 0 || last > r.NumRowGroups() || first > last {
		return fmt.Errorf("parquet: row groups [%d, %d) of %d", first, last, r.NumRowGroups())
	}
	workers := min(r.parallel, last-first)
	if workers <= 1 {
		for i := first; i < last; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := r.ReadRowGroup(i)
			if err != nil {
				return err
			}
			if err := yield(i, rec); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	type decoded struct {
		rec arrow.Record
		err error
	}
	slots := make([]chan decoded, last-first) // row group first+k arrives in slots[k]
	for k := range slots {
		slots[k] = make(chan decoded, 1)
	}
	tokens := make(chan struct{}, workers) // a token per decoded row group not yet yielded
	var next atomic.Int64
	next.Store(int64(first))
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		for _, s := range slots {
			select {
			case d := <-s:
				if d.rec != nil {
					d.rec.Release()
				}
			default:
			}
		}
	}()
	for range workers {
		fr, err := arrowFileReader(r.b, r.md, r.mem)
		if err != nil {
			return err
		}
		for _, i := range r.structs { // the manifest as r's plan made it
			appendChildren(fr, i)
		}
		worker := *r
		worker.fr = fr
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1) - 1)
				if i >= last {
					return
				}
				rec, err := worker.readGuarded(i)
				slots[i-first] <- decoded{rec, err}
			}
		}()
	}
	for i := first; i < last; i++ {
		var d decoded
		select {
		case d = <-slots[i-first]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if d.err != nil {
			return d.err
		}
		err := yield(i, d.rec)
		<-tokens // the record is the caller's now
		if err != nil {
			return err
		}
	}
	return nil
}

// readGuarded is ReadRowGroup on a goroutine of the package's own: a fault on a mapping whose
// file shrank, and any panic, is an error.
func (r *Reader) readGuarded(i int) (rec arrow.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			if rec != nil {
				rec.Release()
			}
			rec, err = nil, fmt.Errorf("parquet: row group %d: %v: %w", i, p, ErrInvalid)
		}
	}()
	err = mmap.Guard(func() error {
		var err error
		rec, err = r.ReadRowGroup(i)
		return err
	})
	return rec, err
}
