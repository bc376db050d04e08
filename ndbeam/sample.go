package ndbeam

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/table"
)

func init() {
	register.DoFn3x1[context.Context, string, func(Batch), error](&sampleFn{})
}

// Sample reads n rows of the table at path (as table.Open opens it: a file, a directory of
// parts, a prefix of objects) drawn uniformly at random without replacement — the first n
// positions of the table's permutation keyed by seed (table.BatchOptions' Shuffle), a pure
// function of the table's rows and seed — as a PCollection of Batch of at most
// o.BatchRows rows each (their Source path, First their first position in the permutation):
// n rows, or the table's rows if fewer. One worker reads them, each batch a table.Take of its
// rows: only the pages, batches or bytes holding them (a TFRecord file, which has no row
// index, is read whole when the table is opened).
func Sample(s beam.Scope, path string, n int64, seed uint64, o ReadOptions) beam.PCollection {
	s = s.Scope("ndbeam.Sample")
	return beam.ParDo(s, &sampleFn{N: n, Seed: seed, Table: o.Table, Columns: o.Columns, BatchRows: o.BatchRows}, beam.Create(s, path))
}

// sampleFn reads a sample of a table's rows.
type sampleFn struct {
	N         int64
	Seed      uint64
	Table     string
	Columns   []string
	BatchRows int64
}

func (fn *sampleFn) ProcessElement(ctx context.Context, path string, emit func(Batch)) error {
	t, err := table.Open(path, table.Options{Table: fn.Table})
	if err != nil {
		return fmt.Errorf("ndbeam: %w", err)
	}
	defer t.Release()
	size := fn.BatchRows
	if size <= 0 {
		size = DefaultBatchRows
	}
	left := min(fn.N, t.NumRows())
	mem := memory.NewGoAllocator()
	first := int64(0)
	for b, err := range t.Batches(ctx, table.BatchOptions{Size: min(size, max(left, 1)), Columns: fn.Columns, Shuffle: true, Seed: fn.Seed, Readahead: 1}) {
		if err != nil {
			return fmt.Errorf("ndbeam: %s: %w", path, err)
		}
		if left <= 0 {
			break
		}
		tab := b.Values
		if int64(len(b.Rows)) > left { // the last batch: the sample's last rows
			tab, err = t.Take(ctx, b.Rows[:left], fn.Columns)
			if err != nil {
				return fmt.Errorf("ndbeam: %s: %w", path, err)
			}
		}
		rec, err := dataset.Batch(mem, tab.Columns)
		if err != nil {
			return fmt.Errorf("ndbeam: %s: %w", path, err)
		}
		emit(Batch{Record: rec, Source: path, First: first})
		first += rec.NumRows()
		left -= rec.NumRows()
	}
	return nil
}
