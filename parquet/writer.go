// Package parquet writes record batches of tensor columns to Parquet files and reads them
// back, with the Arrow schema stored in the footer (ARROW:schema)
// so that Arrow C++, pyarrow and this package restore arrow.fixed_shape_tensor and
// arrow.variable_shape_tensor columns, fixed-size and large lists. Engines that ignore the
// stored schema (DuckDB, Spark) see the storage: lists of the tensors' values. Tensor columns
// of floats and 32- and 64-bit integers are written and read by this package's own page code (its direct
// paths, with BYTE_STREAM_SPLIT); every other column goes through arrow-go's pqarrow.
//
// arrow-go's reader is not safe on untrusted input by itself: ReadTable decodes on goroutines
// of its own (a panic there kills the process), its Thrift code sizes slices from counts in
// the footer, and its decoders size buffers from page headers. Reader checks the footer and
// every page header first, decodes on the caller's goroutine, column by column, and turns a
// panic into an error. Importing this package registers, with arrow-go's codec registry,
// ZSTD, Snappy, GZIP and Brotli decoders that write no more than a page declares.
package parquet

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// ErrUnsupported is wrapped by errors about options, columns, codecs and encodings the
// writer or the reader does not take.
var ErrUnsupported = errors.New("unsupported by ndarrow's Parquet support")

// Compression is the codec of every column chunk.
type Compression int

// The codecs the writer offers: what Spark, DuckDB, Arrow C++ and pyarrow all read.
const (
	Zstd Compression = iota // the default
	Snappy
	Uncompressed
	Gzip
)

// String returns "zstd", "snappy", "none" or "gzip".
func (c Compression) String() string {
	switch c {
	case Zstd:
		return "zstd"
	case Snappy:
		return "snappy"
	case Uncompressed:
		return "none"
	case Gzip:
		return "gzip"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// ParseCompression returns the codec named s (any case; "" is the default, zstd).
func ParseCompression(s string) (Compression, error) {
	for _, c := range []Compression{Zstd, Snappy, Uncompressed, Gzip} {
		if strings.EqualFold(s, c.String()) {
			return c, nil
		}
	}
	switch strings.ToLower(s) {
	case "":
		return Zstd, nil
	case "uncompressed":
		return Uncompressed, nil
	}
	return 0, fmt.Errorf("parquet: compression %q: not zstd, snappy, gzip or none: %w", s, ErrUnsupported)
}

func (c Compression) codec() (compress.Compression, error) {
	switch c {
	case Zstd:
		return compress.Codecs.Zstd, nil
	case Snappy:
		return compress.Codecs.Snappy, nil
	case Uncompressed:
		return compress.Codecs.Uncompressed, nil
	case Gzip:
		return compress.Codecs.Gzip, nil
	}
	return 0, fmt.Errorf("parquet: %v: %w", c, ErrUnsupported)
}

// DefaultRowGroupBytes is the row-group size when WriterOptions.RowGroupBytes is zero: 128 MiB
// of Arrow data, what Spark and DuckDB read well in parallel.
const DefaultRowGroupBytes = 128 << 20

// DefaultPageBytes is the values a data page of the direct writer holds at most when
// WriterOptions.PageBytes is zero: 64 KiB, so that a reader with the page index fetches a row
// of a tensor column (a page: 64 rows of 256 float32s) with one small range request, at little
// cost to a full scan (BENCHMARKS.md, "parquet: pages for random access").
const DefaultPageBytes = 64 << 10

// WriterOptions say how to write.
type WriterOptions struct {
	Compression Compression
	// RowGroupBytes is the Arrow data (buffers, before encoding) a row group holds at most:
	// a row group ends when the next row would pass it (default DefaultRowGroupBytes; a row
	// larger than it is a row group of its own).
	RowGroupBytes int64
	// Dictionary turns dictionary encoding on (pqarrow's and Arrow C++'s default). It is off
	// by default: tensor values (embeddings, pixels) seldom repeat, and trying costs writes
	// three times the time.
	Dictionary bool
	// Encoding is the values' encoding (default Plain). ByteStreamSplit takes only files
	// whose columns are all floats (16, 32, 64 bits) or 32- and 64-bit integers, flat or in fixed-size lists.
	Encoding Encoding
	// PageBytes is the values (before encoding and compression) a data page holds at most,
	// in whole rows, at least one row a page (default DefaultPageBytes) — of a ragged column
	// about that much: its page ends with the row that reaches it. Files pqarrow writes keep
	// arrow-go's 1 MiB pages unless it is set.
	PageBytes int64
	// Allocator serves the writer's buffers (default memory.DefaultAllocator).
	Allocator memory.Allocator
}

// Writer writes record batches of one schema to a Parquet file, batch by batch: a tensor
// larger than memory can be written a batch at a time. A batch's whole row groups are written
// straight through; the rows that begin a row group later batches complete are held in
// memory until it is. Statistics are written for every column.
//
// A file whose columns are all bools, floats (16, 32 or 64 bits) or 32- and 64-bit integers,
// flat, in fixed-size lists (arrow.fixed_shape_tensor) or in a list or large_list (a ragged
// tensor), is written without pqarrow (see directwrite.go): the same schema and levels, pages
// built and compressed on GOMAXPROCS goroutines, each page whole rows, and a page index (a
// ColumnIndex and an OffsetIndex per column chunk) before the footer, for readers that fetch
// rows by their number or skip pages by their values. Other files, and files with dictionary
// encoding asked for, are written by pqarrow, which writes no page index (arrow-go v17 has no
// page index writer) and may begin a page inside a list row.
type Writer struct {
	direct   *directWriter // nil: pqarrow writes
	fw       *pqarrow.FileWriter
	schema   *arrow.Schema // the batches'
	storage  *arrow.Schema // what pqarrow writes: large_list as list (see storageSchema)
	mem      memory.Allocator
	maxBytes int64
	rows     int64 // rows in the current buffered row group
	bytes    int64 // Arrow bytes in the current buffered row group
	fresh    bool  // the next buffered write starts a new row group
	closed   bool
}

// NewWriter returns a writer of record batches of schema to w. Close must be called to write
// the footer.
func NewWriter(w io.Writer, schema *arrow.Schema, opts WriterOptions) (*Writer, error) {
	return newWriter(w, schema, opts, true)
}

// newWriter is NewWriter; direct false leaves every file to pqarrow.
func newWriter(w io.Writer, schema *arrow.Schema, opts WriterOptions, direct bool) (*Writer, error) {
	codec, err := opts.Compression.codec()
	if err != nil {
		return nil, err
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = DefaultRowGroupBytes
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Encoding != Plain && opts.Encoding != ByteStreamSplit {
		return nil, fmt.Errorf("parquet: %v: %w", opts.Encoding, ErrUnsupported)
	}
	cols, ok := directColumns(schema)
	if ok && opts.Encoding == ByteStreamSplit {
		for _, c := range cols {
			ok = ok && !c.plan.bitPacked && !c.ragged() // BYTE_STREAM_SPLIT has no bools; see below
		}
	}
	if ok && direct && !opts.Dictionary {
		d, err := newDirectWriter(w, schema, cols, opts)
		if err != nil {
			return nil, err
		}
		return &Writer{direct: d, schema: schema, mem: opts.Allocator, maxBytes: opts.RowGroupBytes, fresh: true}, nil
	}
	if opts.Encoding != Plain {
		if opts.Dictionary {
			return nil, fmt.Errorf("parquet: %v encoding with dictionary encoding: %w", opts.Encoding, ErrUnsupported)
		}
		for _, f := range schema.Fields() {
			if cols, ok := directColumns(arrow.NewSchema([]arrow.Field{f}, nil)); !ok || cols[0].plan.bitPacked || cols[0].ragged() {
				return nil, fmt.Errorf("parquet: %v encoding of column %q (%v): only for columns of floats, 32- and 64-bit integers or fixed-size binaries, flat or in fixed-size lists: %w",
					opts.Encoding, f.Name, f.Type, ErrUnsupported)
			}
		}
		return nil, fmt.Errorf("parquet: %v encoding: pqarrow does not write it: %w", opts.Encoding, ErrUnsupported)
	}
	propOpts := []pq.WriterProperty{
		pq.WithCompression(codec),
		pq.WithStats(true),
		pq.WithAllocator(opts.Allocator),
		pq.WithMaxRowGroupLength(1 << 62), // row groups end by bytes, not rows
		pq.WithCreatedBy("ndarrow"),
		pq.WithDictionaryDefault(opts.Dictionary),
	}
	if opts.PageBytes > 0 {
		propOpts = append(propOpts, pq.WithDataPageSize(opts.PageBytes))
	}
	props := pq.NewWriterProperties(propOpts...)
	storage, narrowed := storageSchema(schema)
	var arrowOpts []pqarrow.WriterOption
	if !narrowed {
		arrowOpts = append(arrowOpts, pqarrow.WithStoreSchema())
	}
	arrowProps := pqarrow.NewArrowWriterProperties(append(arrowOpts, pqarrow.WithAllocator(opts.Allocator))...)
	// arrow-go closes a sink that is an io.Closer when the file is closed: the caller's
	// writer is the caller's to close, so pqarrow sees a plain io.Writer.
	fw, err := pqarrow.NewFileWriter(storage, struct{ io.Writer }{w}, props, arrowProps)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	if narrowed {
		// The original schema, large_list included, as WithStoreSchema stores a schema.
		serialized := flight.SerializeSchema(schema, opts.Allocator)
		if err := fw.AppendKeyValueMetadata("ARROW:schema", base64.StdEncoding.EncodeToString(serialized)); err != nil {
			return nil, fmt.Errorf("parquet: %w", err)
		}
	}
	return &Writer{fw: fw, schema: schema, storage: storage, mem: opts.Allocator, maxBytes: opts.RowGroupBytes, fresh: true}, nil
}

// Write adds the rows of rec, whose schema must be the writer's, ending row groups by
// WriterOptions.RowGroupBytes.
func (w *Writer) Write(rec arrow.Record) error {
	if w.closed {
		return fmt.Errorf("parquet: write after Close")
	}
	if !rec.Schema().Equal(w.schema) {
		return fmt.Errorf("parquet: a batch of schema %v, the file's is %v", rec.Schema(), w.schema)
	}
	n := rec.NumRows()
	if n == 0 {
		return nil
	}
	if w.direct != nil {
		if err := w.direct.check(rec); err != nil {
			return err
		}
	}
	perRow := max(1, recordBytes(rec)/n)
	for lo := int64(0); lo < n; {
		if w.rows > 0 && w.bytes+perRow > w.maxBytes {
			w.rows, w.bytes, w.fresh = 0, 0, true // the group is full
		}
		take := min(n-lo, max(1, (w.maxBytes-w.bytes)/perRow))
		part := rec.NewSlice(lo, lo+take)
		var err error
		if w.rows == 0 && lo+take < n {
			// A whole row group in one part: written straight through, column by column,
			// not held in memory as a buffered row group is.
			err = w.write(part, false)
			w.fresh = true
		} else {
			if w.fresh {
				if err := w.newBufferedRowGroup(); err != nil {
					part.Release()
					return err
				}
				w.fresh = false
			}
			err = w.write(part, true)
			w.rows += take
			w.bytes += take * perRow
		}
		part.Release()
		if err != nil {
			return err
		}
		lo += take
	}
	return nil
}

// write hands pqarrow the rows of part, in the storage schema: into the buffered row group,
// or as a row group of their own.
func (w *Writer) write(part arrow.Record, buffered bool) error {
	if w.direct != nil {
		if buffered {
			w.direct.add(part)
			return nil
		}
		if err := w.direct.flush(); err != nil {
			return err
		}
		return w.direct.writeRowGroup([]arrow.Record{part})
	}
	stored, err := storageRecord(w.mem, part, w.storage)
	if err != nil {
		return err
	}
	defer stored.Release()
	part = stored
	write := w.fw.Write
	if buffered {
		write = w.fw.WriteBuffered
	}
	if err := write(part); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// newBufferedRowGroup ends the buffered row group and begins the next.
func (w *Writer) newBufferedRowGroup() error {
	if w.direct != nil {
		return w.direct.flush()
	}
	w.fw.NewBufferedRowGroup()
	return nil
}

// recordBytes returns the bytes of Arrow data the rows of rec hold (only the part of each
// buffer a slice views): what sizes row groups.
func recordBytes(rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		d := c.Data()
		n += rangeBytes(d.DataType(), d, int64(d.Offset()), int64(d.Len()))
	}
	return n
}

// rangeBytes returns the bytes elements [off, off+n) of d, of type t, take in its buffers and
// its children's.
func rangeBytes(t arrow.DataType, d arrow.ArrayData, off, n int64) int64 {
	validity := (n + 7) / 8
	switch t := t.(type) {
	case arrow.ExtensionType:
		return rangeBytes(t.StorageType(), d, off, n)
	case *arrow.BooleanType:
		return 2 * validity
	case arrow.FixedWidthDataType:
		return validity + n*int64(t.BitWidth()/8)
	case *arrow.ListType, *arrow.LargeListType, *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		lo, hi, width := offsetsRange(t, d, off, n)
		size := validity + (n+1)*width
		if list, ok := t.(arrow.ListLikeType); ok {
			return size + rangeBytes(list.Elem(), d.Children()[0], lo, hi-lo)
		}
		return size + hi - lo
	case *arrow.FixedSizeListType:
		size := int64(t.Len())
		return validity + rangeBytes(t.Elem(), d.Children()[0], off*size, n*size)
	case *arrow.StructType:
		size := validity
		for i, f := range t.Fields() {
			size += rangeBytes(f.Type, d.Children()[i], off, n)
		}
		return size
	}
	var size int64
	for _, b := range d.Buffers() {
		if b != nil {
			size += int64(b.Len())
		}
	}
	return size
}

// offsetsRange returns the range of child elements (or bytes) rows [off, off+n) of an
// offsets-based array cover, and the offsets' width.
func offsetsRange(t arrow.DataType, d arrow.ArrayData, off, n int64) (lo, hi, width int64) {
	b := d.Buffers()[1]
	if b == nil || n == 0 {
		return 0, 0, 4
	}
	switch t.ID() {
	case arrow.LARGE_LIST, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		o := arrow.Int64Traits.CastFromBytes(b.Bytes())
		return o[off], o[off+n], 8
	}
	o := arrow.Int32Traits.CastFromBytes(b.Bytes())
	return int64(o[off]), int64(o[off+n]), 4
}

// Close writes the last row group and the footer (with the Arrow schema). It does not close
// the io.Writer NewWriter was given.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.direct != nil {
		return w.direct.close()
	}
	if err := w.fw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}
