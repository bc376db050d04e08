package dataset

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// TableWriter writes a table to one file a batch of rows at a time, as Write writes it whole:
// Parquet (the batches' rows in row groups as the writer forms them), an Arrow IPC file or
// stream (a record batch per batch), or TFRecord (a tf.train.Example per row). Every batch
// has the first one's columns, of its types (arrowtensor.Conform: text where the first has
// bytes is taken as bytes). Batches whose dictionary-encoded columns have other dictionaries
// go into a stream as they are (each batch after its dictionary, a replacement where it
// changed) and into an Arrow IPC file, which holds one dictionary a column, unified: a
// dictionary a column of every batch's values, each once, in the order they come, the
// batches' indices mapped into it — the batches held in a temporary file (os.TempDir) until
// Close writes the file, the unified dictionaries within WriteOptions.MaxCopySize. Close it to
// end the file, and to let go of what it holds after a failure; what was written before a
// failure is not a file (write it to a temporary file, as Save does).
type TableWriter struct {
	format  Format
	opts    WriteOptions
	w       io.Writer
	schema  *arrow.Schema
	parquet *parquet.Writer
	file    *arrowipc.FileWriter
	stream  *arrowipc.Writer
	records *tfrecord.Writer
	dicts   *fileDictionaries // an Arrow IPC file's batches with dictionary columns, until Close
	seeker  io.WriteSeeker    // where that file goes
	failed  error             // the write that failed an Arrow IPC file of dictionaries
	rows    int64
	warned  bool // told opts.Warn what the Examples lose
}

// NewTableWriter returns a writer of a table to w in format — FormatParquet, FormatArrow (w
// must report its position: an io.Seeker asked for Seek(0, io.SeekCurrent)), FormatArrows or
// FormatTFRecord, any other an error wrapping ErrFormat — with opts' Parquet codec and
// encoding and TFRecord compression; opts.Warn is told, with the first batch of TFRecord, what
// the Examples lose (dtypes, shapes, dimension names), as Write tells it.
func NewTableWriter(w io.Writer, format Format, opts WriteOptions) (*TableWriter, error) {
	switch format {
	case FormatParquet, FormatArrow, FormatArrows, FormatTFRecord:
	default:
		return nil, fmt.Errorf("%s holds no table written by batches (Parquet, Arrow IPC and TFRecord do): %w", format, ErrFormat)
	}
	return &TableWriter{format: format, opts: opts, w: w}, nil
}

// Rows returns the rows written so far.
func (t *TableWriter) Rows() int64 { return t.rows }

// Write writes the rows of tensors, a table's columns (see Batch), as WriteRecord does.
func (t *TableWriter) Write(tensors []Tensor) error {
	rec, err := Batch(memory.DefaultAllocator, tensors)
	if err != nil {
		return err
	}
	defer rec.Release()
	return t.WriteRecord(rec)
}

// WriteRecord writes the rows of rec, conformed to the first record's schema. To TFRecord,
// whose Examples hold no nulls, a column with null rows is an error wrapping
// arrowtensor.ErrNull that names it.
func (t *TableWriter) WriteRecord(rec arrow.Record) error {
	if t.failed != nil {
		return fmt.Errorf("a batch before failed: %w", t.failed)
	}
	if t.schema == nil {
		if err := t.start(rec.Schema()); err != nil {
			return err
		}
	}
	conformed, err := arrowtensor.Conform(rec, t.schema)
	if err != nil {
		return err
	}
	defer conformed.Release()
	switch {
	case t.parquet != nil:
		err = t.parquet.Write(conformed)
	case t.dicts != nil:
		if err = t.dicts.add(conformed); err != nil {
			t.dicts.close() // nothing more is written
			t.failed = err
		}
	case t.file != nil:
		err = explainNested(t.file.Write(conformed), t.schema)
	case t.stream != nil:
		err = t.stream.Write(conformed)
	default:
		err = t.writeExamples(conformed)
	}
	if err == nil {
		t.rows += conformed.NumRows()
	}
	return err
}

// start opens the format's writer for the table of schema.
func (t *TableWriter) start(schema *arrow.Schema) error {
	var err error
	switch t.format {
	case FormatParquet:
		t.parquet, err = parquet.NewWriter(t.w, schema, parquet.WriterOptions{Compression: t.opts.ParquetCompression, Encoding: t.opts.ParquetEncoding})
	case FormatArrow:
		ws, ok := t.w.(interface {
			io.Writer
			io.Seeker
		})
		if !ok {
			return errors.New("an Arrow IPC file needs a seekable output")
		}
		if hasDictionaryColumns(schema) { // unified, and written at Close
			t.seeker = ws
			t.dicts, err = newFileDictionaries(schema, t.mem(), t.maxCopy())
			break
		}
		t.file, err = arrowipc.NewFileWriter(ws, arrowipc.WithSchema(schema))
	case FormatArrows:
		t.stream = arrowipc.NewWriter(t.w, arrowipc.WithSchema(schema))
	case FormatTFRecord:
		t.records, err = tfrecord.NewWriter(t.w, t.opts.TFRecordCompression)
	}
	if err == nil {
		t.schema = schema
	}
	return err
}

// mem returns what the writer allocates its own copies from: opts.Allocator, or Go's.
func (t *TableWriter) mem() memory.Allocator {
	if t.opts.Allocator != nil {
		return t.opts.Allocator
	}
	return memory.DefaultAllocator
}

// maxCopy returns what the unified dictionaries of an Arrow IPC file may take:
// opts.MaxCopySize, or the default limit.
func (t *TableWriter) maxCopy() int64 {
	return limits.Limits{MaxCopySize: t.opts.MaxCopySize}.WithDefaults().MaxCopySize
}

// writeExamples writes rec's rows as tf.train.Examples, a feature per column.
func (t *TableWriter) writeExamples(rec arrow.Record) error {
	tensors, left, err := FromRecords(rec.Schema(), []arrow.Record{rec}, "")
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("%s: a tf.train.Example has no feature for it: %w", left[0], arrowtensor.ErrUnsupported)
	}
	for i := range tensors {
		tensors[i].Name = tensors[i].Column // what errors and warnings name
	}
	tensors, err = prepare(FormatTFRecord, tensors, &t.opts)
	if err != nil {
		return err
	}
	if !t.warned { // what the Examples lose, said once: every batch has the first one's columns
		exampleWarnings(tensors, t.opts)
		t.warned = true
	}
	cols := make([]tfrecord.Column, len(tensors))
	for i, tn := range tensors {
		cols[i] = tfrecord.Column{Name: tn.Column, Dense: tn.Dense, Ragged: tn.Ragged, Sparse: tn.Sparse}
	}
	_, err = tfrecord.WriteExamples(t.records, cols)
	return err
}

// Close ends the file: a Parquet footer, an Arrow IPC file's footer or a stream's end; a table
// of no batch is written with no columns only as a TFRecord file of no record (the others
// need a schema: an error wrapping ErrFormat). It does not close w.
func (t *TableWriter) Close() error {
	switch {
	case t.parquet != nil:
		return t.parquet.Close()
	case t.failed != nil: // what it held is let go
		return fmt.Errorf("no Arrow IPC file written: a batch failed: %w", t.failed)
	case t.dicts != nil:
		err := t.dicts.writeFile(t.seeker)
		t.dicts = nil
		return err
	case t.file != nil:
		return explainNested(t.file.Close(), t.schema)
	case t.stream != nil:
		return t.stream.Close()
	case t.records != nil:
		return t.records.Close()
	case t.format == FormatTFRecord:
		return nil
	}
	return fmt.Errorf("no batch written: a %s file needs its columns: %w", t.format, ErrFormat)
}
