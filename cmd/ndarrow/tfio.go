package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/tfio"
)

// tfioFlags are serve's tensorflow-io endpoint settings.
type tfioFlags struct {
	endpoint, tensors string
	rowsPerBatch      int64
	maxDense          int64
}

// startTFIO serves the tensors of dir named in f.tensors (all when empty) as the Arrow IPC
// stream tensorflow-io's ArrowStreamDataset reads, to every connection on f.endpoint, until
// ctx is done. It returns a function that waits for the server to stop (after ctx is done).
func startTFIO(ctx context.Context, dir string, f tfioFlags, stdout io.Writer) (wait func() error, err error) {
	d, err := dataset.OpenDir(dir, limits.Limits{})
	if err != nil {
		return nil, err
	}
	tensors := d.Tensors
	if f.tensors != "" {
		tensors = nil
		for _, name := range strings.Split(f.tensors, ",") {
			i := indexOfTensor(d.Tensors, name)
			if i < 0 {
				d.Release()
				return nil, fmt.Errorf("--tfio-tensors: %s holds no tensor %q", dir, name)
			}
			tensors = append(tensors, d.Tensors[i])
		}
	}
	if len(tensors) == 0 {
		d.Release()
		return nil, fmt.Errorf("--tfio: %s holds no tensors to stream", dir)
	}
	s, err := tfio.NewStream(tensors, f.maxDense)
	if err != nil {
		d.Release()
		return nil, fmt.Errorf("--tfio: %w (pick tensors of one row count with --tfio-tensors)", err)
	}
	ln, err := tfio.Listen(f.endpoint)
	if err != nil {
		d.Release()
		return nil, err
	}
	fmt.Fprintf(stdout, "streaming %d rows of %d columns to tensorflow-io on %s (ArrowStreamDataset(%q, columns, output_types, output_shapes))\n",
		s.Rows(), len(tensors), f.endpoint, strings.TrimPrefix(f.endpoint, "tcp://"))
	for i, field := range s.Schema().Fields() {
		fmt.Fprintf(stdout, "  column %d %s: %v, row shape %v\n", i, field.Name, field.Type, s.RowShapes()[i])
	}
	done := make(chan error, 1)
	go func() {
		defer d.Release()
		done <- tfio.Serve(ctx, ln, s, tfio.Options{Allocator: memory.DefaultAllocator, RowsPerBatch: f.rowsPerBatch})
	}()
	return func() error { return <-done }, nil
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
