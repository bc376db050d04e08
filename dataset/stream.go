package dataset

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// WriteParquetStream writes the tensors of the Parquet file at path to w as an Arrow IPC
// stream — what Write(w, FormatArrows, tensors) writes of the tensors Open reads from the
// file, in a record batch per row group — when each tensor is a column as the file stores it
// (none left out, none of another type) and every column's pages hold its values as they are
// (parquet.StreamOptions.OnlyFromFile, set whatever o says; o.Populate as given): the values
// are written from the mapped file, never read into memory. ok is false, and nothing is written, for any other file: Open it and Write
// its tensors then. Errors name the file.
func WriteParquetStream(w io.Writer, path string, o parquet.StreamOptions, lim limits.Limits) (ok bool, err error) {
	mem := memory.NewGoAllocator()
	r, err := parquet.Open(path, parquet.ReaderOptions{Allocator: mem, Limits: lim.WithDefaults()})
	if err != nil {
		return false, nil // Open says why
	}
	defer r.Close()
	if len(r.Skipped()) > 0 {
		return false, nil
	}
	tensors, left, err := FromRecords(r.Schema(), nil, BaseName(path))
	if err != nil || len(left) > 0 {
		return false, nil
	}
	rec, err := Batch(mem, tensors)
	if err != nil {
		return false, nil
	}
	same := rec.Schema().Equal(r.Schema()) && rec.Schema().Metadata().Equal(r.Schema().Metadata())
	rec.Release()
	if !same {
		return false, nil
	}
	o.OnlyFromFile = true
	err = r.WriteArrowStream(w, o)
	if errors.Is(err, parquet.ErrNotFromFile) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}
