package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/flight"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/tfio"
)

// tfioFlags are serve's tensorflow-io endpoint settings.
type tfioFlags struct {
	endpoint, tensors string
	rowsPerBatch      int64
	maxDense          int64
	skipUnreadable    bool         // serve's --skip-unreadable
	logger            *slog.Logger // serve's log
}

// startTFIO serves the tensors of dir named in f.tensors (all when empty) as the Arrow IPC
// stream tensorflow-io's ArrowStreamDataset reads, to every connection on f.endpoint, until
// ctx is done. Each connection gets the directory as the store last found it: the stream is
// made again after the store's directory changed. It returns a function that waits for the
// server to stop (after ctx is done).
func startTFIO(ctx context.Context, dir string, store *flight.Store, f tfioFlags, stdout, stderr io.Writer) (wait func() error, err error) {
	streams := &tfioStreams{dir: dir, f: f, store: store}
	first, err := streams.make(store.Generation())
	if err != nil {
		return nil, err
	}
	ln, err := tfio.Listen(f.endpoint)
	if err != nil {
		first.release()
		return nil, err
	}
	streams.current = first
	s := first.stream
	fmt.Fprintf(stdout, "streaming %d rows of %d columns to tensorflow-io on %s (ArrowStreamDataset(%q, columns, output_types, output_shapes))\n",
		s.Rows(), len(s.Schema().Fields()), f.endpoint, strings.TrimPrefix(f.endpoint, "tcp://"))
	for i, field := range s.Schema().Fields() {
		fmt.Fprintf(stdout, "  column %d %s: %v, row shape %v\n", i, field.Name, field.Type, s.RowShapes()[i])
	}
	done := make(chan error, 1)
	go func() {
		defer streams.close()
		done <- tfio.ServeEach(ctx, ln, streams.next, tfio.Options{
			Allocator: memory.DefaultAllocator, RowsPerBatch: f.rowsPerBatch,
			Logger: f.logger,
		})
	}()
	return func() error { return <-done }, nil
}

// tfioStreams gives each tensorflow-io connection the stream of the directory as the store
// last found it.
type tfioStreams struct {
	dir   string
	f     tfioFlags
	store *flight.Store

	mu      sync.Mutex
	current *tfioStream
}

// tfioStream is the stream of one version of the directory, and the mappings it views,
// released when no connection uses it and it is no longer current.
type tfioStream struct {
	stream *tfio.Stream
	dir    *dataset.Dir
	gen    uint64
	refs   int // connections, plus one while current; under tfioStreams.mu
}

func (s *tfioStream) release() { s.dir.Release() }

// make reads the directory, as it is at the store's generation gen, into a stream.
func (ts *tfioStreams) make(gen uint64) (*tfioStream, error) {
	d, err := dataset.OpenDir(ts.dir, limits.Limits{})
	if err != nil {
		return nil, err
	}
	tensors := d.Tensors
	if ts.f.tensors != "" {
		tensors = nil
		for _, name := range strings.Split(ts.f.tensors, ",") {
			i := indexOfTensor(d.Tensors, name)
			if i < 0 {
				d.Release()
				return nil, fmt.Errorf("--tfio-tensors: %s holds no tensor %q", ts.dir, name)
			}
			tensors = append(tensors, d.Tensors[i])
		}
	}
	if len(tensors) == 0 {
		d.Release()
		return nil, fmt.Errorf("--tfio: %s holds no tensors to stream", ts.dir)
	}
	if !ts.f.skipUnreadable {
		if err := tfioWhole(d, tensors, ts.f.tensors != ""); err != nil {
			d.Release()
			return nil, err
		}
	}
	var s *tfio.Stream
	err = dataset.Guard(func() error { // a sparse tensor's dense form reads its file
		var err error
		s, err = tfio.NewStream(tensors, ts.f.maxDense)
		return err
	})
	if err != nil {
		d.Release()
		if dense := maxDenseError(err, ts.f.maxDense, "stream it dense", ", or leave it out with --tfio-tensors"); dense != err {
			return nil, fmt.Errorf("--tfio: %w", dense)
		}
		return nil, fmt.Errorf("--tfio: %w (pick tensors of one row count with --tfio-tensors)", err)
	}
	s.SetCheck(d.CheckUnchanged) // a file written in place under a connection ends it without its end marker
	return &tfioStream{stream: s, dir: d, gen: gen, refs: 1}, nil
}

// next returns the stream for a new connection, made again when the directory changed, and
// the function that ends the connection's use of it.
func (ts *tfioStreams) next() (*tfio.Stream, func(), error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.current == nil {
		return nil, nil, errors.New("--tfio: stopped")
	}
	if gen := ts.store.Generation(); gen != ts.current.gen {
		fresh, err := ts.make(gen)
		if err != nil {
			return nil, nil, err
		}
		ts.drop(ts.current)
		ts.current = fresh
	}
	c := ts.current
	c.refs++
	return c.stream, func() {
		ts.mu.Lock()
		ts.drop(c)
		ts.mu.Unlock()
	}, nil
}

// drop ends one use of s; the caller holds ts.mu.
func (ts *tfioStreams) drop(s *tfioStream) {
	if s.refs--; s.refs == 0 {
		s.release()
	}
}

// close drops the current stream, once every connection has ended.
func (ts *tfioStreams) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.current != nil {
		ts.drop(ts.current)
		ts.current = nil
	}
}

// tfioWhole returns an error naming the first file of d left out of a table the tensors
// streamed are of (of any table, when picked is false: every tensor is streamed), nil when
// none was.
func tfioWhole(d *dataset.Dir, tensors []tensor, picked bool) error {
	for _, err := range d.Skipped {
		var sf *dataset.SkippedFile
		if !errors.As(err, &sf) {
			continue
		}
		if !picked || slices.ContainsFunc(tensors, func(t tensor) bool { return tableOfTensor(t) == sf.Table }) {
			return fmt.Errorf("--tfio: %w: the table %s is not streamed (serve --skip-unreadable streams the rest)", err, sf.Table)
		}
	}
	return nil
}

// tableOfTensor returns the name of the table a tensor of a directory is a column of: its
// name without .COLUMN, or its name.
func tableOfTensor(t tensor) string {
	if name, ok := strings.CutSuffix(t.Name, "."+t.Column); ok && t.Column != "" {
		return name
	}
	return t.Name
}

// indexOfTensor returns the index of the tensor named name, or -1.
func indexOfTensor(tensors []tensor, name string) int {
	for i, t := range tensors {
		if t.Name == name {
			return i
		}
	}
	return -1
}
