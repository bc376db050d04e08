package objstore

import (
	"context"
	"io"
	"sync"
)

// readAhead is how many parts of partLimit bytes a Reader fetches ahead of its reader.
const readAhead = 4

// Reader reads an object from start to end, as an io.Reader, fetching the parts ahead of what
// was read concurrently (up to 4 of 8 MiB), each a request conditional on the object's
// version: the object streamed, without ever holding more of it than those parts.
type Reader struct {
	o      *Object
	ctx    context.Context
	cancel context.CancelFunc
	next   int64         // the offset of the next part to start fetching
	queue  []chan result // parts under way, in order
	cur    []byte        // the rest of the part being read
	err    error
	wg     sync.WaitGroup
}

// result is a part fetched, or why not.
type result struct {
	b   []byte
	err error
}

// NewReader returns a Reader of the object. Close it to stop the fetches under way.
func (o *Object) NewReader(ctx context.Context) *Reader {
	ctx, cancel := context.WithCancel(ctx)
	r := &Reader{o: o, ctx: ctx, cancel: cancel}
	for range readAhead {
		r.start()
	}
	return r
}

// start begins fetching the next part, if any is left.
func (r *Reader) start() {
	if r.next >= r.o.Size {
		return
	}
	off, n := r.next, min(partLimit, r.o.Size-r.next)
	r.next += n
	ch := make(chan result, 1)
	r.queue = append(r.queue, ch)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		b := make([]byte, n)
		_, err := r.o.ReadRange(r.ctx, b, off)
		ch <- result{b, err}
	}()
}

// Read reads the next bytes of the object; io.EOF after the last.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if len(r.queue) == 0 {
			return 0, io.EOF
		}
		res := <-r.queue[0]
		r.queue = r.queue[1:]
		if res.err != nil {
			r.err = res.err
			r.cancel()
			return 0, r.err
		}
		r.cur = res.b
		r.start()
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the fetches under way and waits for them.
func (r *Reader) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}
