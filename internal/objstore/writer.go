package objstore

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// PartSize is the size of each part of an object Create writes (the last may be smaller);
// S3 takes at most 10 000 parts, so objects of up to 80 GiB.
const PartSize = 8 << 20

// MinPartSize is the least a part but the last may hold (S3's rule).
const MinPartSize = 5 << 20

// maxParts is S3's limit on the parts of one object.
const maxParts = 10000

// partsInFlight is how many parts a Writer sends at once.
const partsInFlight = 4

// Writer writes one object, part by part (an S3 multipart upload), as an io.Writer; the
// object appears, whole, only when Close succeeds. Abort, or a failed Write or Close, leaves
// no object (and no upload behind: the parts sent are discarded). It holds at most
// partsInFlight+1 parts in memory. Write, Seek and Close are for one goroutine; Abort may be
// called from any, at any time (an interruption).
type Writer struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	u      URI
	up     upload
	buf    []byte
	next   int // the number of the next part
	pos    int64

	wg     sync.WaitGroup
	slots  chan struct{}
	mu     sync.Mutex
	err    error // the first failure
	closed bool  // by Close or Abort: no part is sent after
}

// Create returns a Writer of the object uri names. ctx bounds the whole upload: cancelling it
// fails the Writer, which then leaves nothing.
func Create(ctx context.Context, uri string) (*Writer, error) {
	u, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	st, err := storeFor(ctx, u)
	if err != nil {
		return nil, err
	}
	up, err := st.create(ctx, u)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	return &Writer{ctx: ctx, cancel: cancel, u: u, up: up, next: 1, slots: make(chan struct{}, partsInFlight)}, nil
}

// URI returns the object's URI.
func (w *Writer) URI() URI { return w.u }

func (w *Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Write buffers p and sends each part as it fills, PartSize bytes at a time, concurrently
// with the writes that follow.
func (w *Writer) Write(p []byte) (int, error) {
	if err := w.failed(); err != nil {
		return 0, err
	}
	if err := context.Cause(w.ctx); err != nil {
		return 0, named(w.u, fmt.Errorf("write: %w", err))
	}
	n := len(p)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, PartSize)
		}
		k := min(len(p), PartSize-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == PartSize {
			if err := w.send(w.buf); err != nil {
				return n - len(p), err
			}
			w.buf = nil
		}
	}
	w.pos += int64(n)
	return n, nil
}

// send uploads part b on its own goroutine once a slot is free.
func (w *Writer) send(b []byte) error {
	if w.next > maxParts {
		err := named(w.u, fmt.Errorf("write: more than %d parts of %d bytes", maxParts, PartSize))
		w.fail(err)
		return err
	}
	select {
	case w.slots <- struct{}{}:
	case <-w.ctx.Done():
		err := named(w.u, fmt.Errorf("write: %w", context.Cause(w.ctx)))
		w.fail(err)
		return err
	}
	n := w.next
	w.next++
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.slots
		return w.err
	}
	w.wg.Add(1) // never after closed, so Abort's Wait sees every part
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		defer func() { <-w.slots }()
		if err := w.up.part(w.ctx, n, b); err != nil {
			w.fail(err)
		}
	}()
	return w.failed()
}

// Seek reports the number of bytes written (Seek(0, io.SeekCurrent)), all the seeking an
// Arrow IPC file writer does; the position cannot move.
func (w *Writer) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, named(w.u, fmt.Errorf("an object being written cannot seek"))
	}
	return w.pos, nil
}

// Close sends what is buffered and completes the object, which then appears whole; on any
// failure the upload is aborted and nothing appears.
func (w *Writer) Close() error {
	if err := w.failed(); err != nil {
		w.Abort()
		return err
	}
	if w.next == 1 { // fewer bytes than a part: one request
		if !w.close() {
			return w.failed()
		}
		defer w.cancel(nil)
		return w.up.put(w.ctx, w.buf)
	}
	if len(w.buf) > 0 {
		_ = w.send(w.buf)
		w.buf = nil
	}
	if !w.close() {
		return w.failed()
	}
	defer w.cancel(nil)
	w.wg.Wait()
	err := w.failed()
	if err == nil {
		err = w.up.complete(w.ctx)
	}
	if err != nil {
		_ = w.up.abort(w.ctx)
		return err
	}
	return nil
}

// close marks the Writer closed, reporting whether it was open.
func (w *Writer) close() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		if w.err == nil {
			w.err = named(w.u, fmt.Errorf("closed twice"))
		}
		return false
	}
	w.closed = true
	return true
}

// Abort discards what was written: no object appears, the parts sent are discarded and those
// being sent cancelled. It does nothing after Close or Abort.
func (w *Writer) Abort() error {
	aborted := named(w.u, fmt.Errorf("aborted"))
	w.fail(aborted)
	if !w.close() {
		return nil
	}
	w.cancel(aborted)
	w.wg.Wait()
	return w.up.abort(w.ctx)
}
