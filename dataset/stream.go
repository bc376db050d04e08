package dataset

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// ParquetStream is a Parquet file whose tensors are its columns as it stores them and whose
// every value its pages hold as it is (OpenParquetStream): Write writes them as an Arrow IPC
// stream from the mapped file, never read into memory.
type ParquetStream struct {
	path string
	r    *parquet.Reader
}

// OpenParquetStream maps the Parquet file at path and returns it as a ParquetStream when each
// tensor Open would read from it is a column as the file stores it (none left out, none of
// another type) and every column chunk is uncompressed PLAIN fixed-width values with no null
// (parquet.Reader.WritesFromFile); nil for any other file: Open it and Write its tensors then.
// Close what it returns.
func OpenParquetStream(path string, lim limits.Limits) *ParquetStream {
	mem := memory.NewGoAllocator()
	r, err := parquet.Open(path, parquet.ReaderOptions{Allocator: mem, Limits: lim.WithDefaults()})
	if err != nil {
		return nil // Open says why
	}
	if len(r.Skipped()) > 0 {
		r.Close()
		return nil
	}
	tensors, left, err := parquetTensors(r, nil, BaseName(path))
	same := err == nil && len(left) == 0
	if same {
		rec, err := Batch(mem, tensors)
		same = err == nil && rec.Schema().Equal(r.Schema()) && rec.Schema().Metadata().Equal(r.Schema().Metadata())
		if err == nil {
			rec.Release()
		}
	}
	if !same || !r.WritesFromFile() {
		r.Close()
		return nil
	}
	return &ParquetStream{path: path, r: r}
}

// Write writes the file's tensors to w as an Arrow IPC stream — what Write(w, FormatArrows,
// tensors) writes of the tensors Open reads from the file, in a record batch per row group —
// every value from the mapped file (parquet.Reader.WriteArrowStream; o.OnlyFromFile is set
// whatever o says, o.Populate as given). Errors name the file.
func (s *ParquetStream) Write(w io.Writer, o parquet.StreamOptions) error {
	o.OnlyFromFile = true
	if err := s.r.WriteArrowStream(w, o); err != nil {
		var fe *FileError
		if errors.As(err, &fe) { // w's own, naming a file already (a check of this one)
			return err
		}
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// CheckUnchanged returns a *FileError wrapping ErrFileChanged, naming the file and what
// differs, when the file was modified since OpenParquetStream mapped it (see
// Source.CheckUnchanged), else nil. Call it once Write is done, before the stream is taken as
// whole (an output renamed into place, a success reported): a file rewritten in place under
// Write may have given the stream pages of two versions.
func (s *ParquetStream) CheckUnchanged() error {
	var changed *mmap.ChangedError
	if err := s.r.CheckUnchanged(); errors.As(err, &changed) {
		return &FileError{Path: s.path, Err: fmt.Errorf("%w: %v", ErrFileChanged, changed.Changes)}
	} else if err != nil {
		return err
	}
	return nil
}

// Close unmaps the file.
func (s *ParquetStream) Close() error { return s.r.Close() }
