// Package tfio serves tensors to tensorflow-io's ArrowStreamDataset: to each connection on a
// TCP or Unix socket, one Arrow IPC stream of record batches in exactly the form that dataset
// reads (tensorflow-io embeds Arrow C++ 7 and reads a short list of types):
//
//   - columns of bool, int8…int64, uint8…uint64, float16, float32, float64 or utf8 (and binary),
//     or list<T> of the numbers and bools with 32-bit offsets — no large, fixed-size, nested,
//     dictionary or extension types (no metadata at all);
//   - no nulls (no validity bitmaps);
//   - every stream ends with the end-of-stream marker.
//
// [CheckTensorFlowIO] states these rules; [NewStream] maps tensors onto them: a tensor of
// shape [rows] is a column of scalars; a dense or fixed_shape_tensor tensor of shape
// [rows, d1, …] a list<T> of each row's d1·… values in row-major order (tf.reshape(x, [d1, …])
// restores a row; Stream.RowShapes says the shapes); a ragged tensor a list<T> of each row's
// flat values; a sparse tensor its dense form, within a bound.
package tfio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// ErrRule is wrapped by every error about a schema or batch tensorflow-io cannot read.
var ErrRule = errors.New("not what tensorflow-io's ArrowStreamDataset reads")

// CheckTensorFlowIO returns an error wrapping ErrRule unless schema and batches are what
// ArrowStreamDataset reads: the column types and the absence of nulls that
// arrowtensor.CheckTensorFlowIO states (bool, integers, float16/32/64, utf8, binary, and
// list<T> of the numbers and bools with 32-bit offsets), plus what a stream adds: no schema or
// field metadata (so no extension type), and batches of the stream's schema.
func CheckTensorFlowIO(schema *arrow.Schema, batches ...arrow.Record) error {
	if md := schema.Metadata(); md.Len() > 0 {
		return fmt.Errorf("tfio: schema metadata %v: %w", md.Keys(), ErrRule)
	}
	for _, f := range schema.Fields() {
		if hasMetadata(f) {
			return fmt.Errorf("tfio: column %q: field metadata (extension types are not read): %w", f.Name, ErrRule)
		}
	}
	if err := arrowtensor.CheckTensorFlowIOSchema(schema); err != nil {
		return fmt.Errorf("tfio: %w: %w", err, ErrRule)
	}
	for i, rec := range batches {
		if !rec.Schema().Equal(schema) {
			return fmt.Errorf("tfio: batch %d: schema differs from the stream's: %w", i, ErrRule)
		}
		if err := arrowtensor.CheckTensorFlowIO(rec); err != nil {
			return fmt.Errorf("tfio: batch %d: %w: %w", i, err, ErrRule)
		}
	}
	return nil
}

// hasMetadata reports whether a field or a list's item field carries metadata.
func hasMetadata(f arrow.Field) bool {
	if f.Metadata.Len() > 0 {
		return true
	}
	if l, ok := f.Type.(*arrow.ListType); ok {
		return l.ElemField().Metadata.Len() > 0
	}
	return false
}

// Stream is tensors of equal row counts mapped onto the columns ArrowStreamDataset reads.
type Stream struct {
	schema    *arrow.Schema
	cols      []column
	rows      int64
	rowShapes [][]int64
	check     func() error // SetCheck's
}

// SetCheck makes WriteTo call check after the last batch, before the end-of-stream marker: an
// error from it (a mapped file written in place while the stream was sent, say) ends the
// stream without its marker, which tensorflow-io's reader takes for a failure rather than
// the whole stream.
func (s *Stream) SetCheck(check func() error) { s.check = check }

// column gives the Arrow array of rows [lo, hi) of one tensor.
type column interface {
	slice(mem memory.Allocator, lo, hi int64) (arrow.Array, error)
	// values returns the number of values rows [lo, hi) hold.
	values(lo, hi int64) int64
}

// NewStream maps tensors (the columns, named after their Column, else their Name) onto the
// types ArrowStreamDataset reads; see the package documentation. All must have the same
// number of rows. A sparse tensor goes in its dense form, failing above maxDense elements
// (≤ 0: the default limit). The stream views the tensors' memory: keep them alive while it is
// written.
func NewStream(tensors []dataset.Tensor, maxDense int64) (*Stream, error) {
	if len(tensors) == 0 {
		return nil, fmt.Errorf("tfio: no tensors")
	}
	s := &Stream{rows: -1}
	var fields []arrow.Field
	for _, t := range tensors {
		if t.Sparse != nil {
			d, err := t.DenseArray(maxDense)
			if err != nil {
				return nil, fmt.Errorf("tfio: %s: %w", t.Name, err)
			}
			t.Dense, t.Sparse = d, nil
		}
		rows := t.Rows()
		if s.rows >= 0 && rows != s.rows {
			return nil, fmt.Errorf("tfio: %s has %d rows, %s %d: the columns of one stream need the same", t.Name, rows, tensors[0].Name, s.rows)
		}
		s.rows = rows
		newColumn, ok := columnMakers[t.DType()]
		if t.DType() == ndarray.String && (t.Ragged != nil || t.Shape().Rank() > 1) {
			return nil, fmt.Errorf("tfio: %s: strings go only in columns of one string per row, not lists: %w", t.Name, ErrRule)
		}
		if !ok {
			return nil, fmt.Errorf("tfio: %s: dtype %v: %w", t.Name, t.DType(), ErrRule)
		}
		col, typ, shape, err := newColumn(t)
		if err != nil {
			return nil, fmt.Errorf("tfio: %s: %w", t.Name, err)
		}
		name := t.Column
		if name == "" {
			name = t.Name
		}
		fields = append(fields, arrow.Field{Name: name, Type: typ})
		s.cols = append(s.cols, col)
		s.rowShapes = append(s.rowShapes, shape)
	}
	s.schema = arrow.NewSchema(fields, nil)
	return s, nil
}

// Schema returns the stream's schema.
func (s *Stream) Schema() *arrow.Schema { return s.schema }

// Rows returns the number of rows the stream holds.
func (s *Stream) Rows() int64 { return s.rows }

// RowShapes returns, per column, the shape of one row's values (nil for a scalar column; -1
// for a ragged dimension): tf.reshape(row, shape) restores a row of a list<T> column.
func (s *Stream) RowShapes() [][]int64 { return s.rowShapes }

// WriteTo writes the stream to w: the schema, record batches of at most rowsPerBatch rows
// (≤ 0: 65536) each holding fewer than 2^31 list values, and the end-of-stream marker — only
// when every batch was written and the check (SetCheck) passed: a stream that failed ends
// without it, so that no reader takes it for whole. The batches view the tensors' memory
// where Arrow's layout allows and allocate the rest (offsets, bit-packed bools, strings) from
// mem, released batch by batch. ctx stops it between batches.
func (s *Stream) WriteTo(ctx context.Context, w io.Writer, mem memory.Allocator, rowsPerBatch int64) error {
	if rowsPerBatch <= 0 {
		rowsPerBatch = 1 << 16
	}
	// On failure the writer is dropped, not closed (Close writes the end marker): it holds
	// nothing but w, the stream having no dictionaries.
	wr := arrowipc.NewWriter(w, arrowipc.WithSchema(s.schema), arrowipc.WithAllocator(mem))
	for lo := int64(0); lo < s.rows; {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi, err := s.batchEnd(lo, rowsPerBatch)
		if err != nil {
			return err
		}
		if err := s.writeBatch(wr, mem, lo, hi); err != nil {
			return err
		}
		lo = hi
	}
	if s.check != nil {
		if err := s.check(); err != nil {
			return err
		}
	}
	return wr.Close() // writes the schema too when there were no rows, then the end marker
}

// batchEnd returns the end of the batch starting at row lo: at most rows rows, and no list
// holding 2^31 values or more (tensorflow-io's lists have 32-bit offsets).
func (s *Stream) batchEnd(lo, rows int64) (int64, error) {
	hi := min(s.rows, lo+rows)
	for _, c := range s.cols {
		for hi > lo+1 && c.values(lo, hi) > math.MaxInt32 {
			hi = lo + (hi-lo)/2
		}
		if c.values(lo, hi) > math.MaxInt32 {
			return 0, fmt.Errorf("tfio: row %d holds %d values, more than a list with 32-bit offsets can: %w", lo, c.values(lo, hi), ErrRule)
		}
	}
	return hi, nil
}

func (s *Stream) writeBatch(wr *arrowipc.Writer, mem memory.Allocator, lo, hi int64) error {
	cols := make([]arrow.Array, 0, len(s.cols))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range s.cols {
		a, err := c.slice(mem, lo, hi)
		if err != nil {
			return err
		}
		cols = append(cols, a)
	}
	rec := array.NewRecord(s.schema, cols, hi-lo)
	defer rec.Release()
	return wr.Write(rec)
}

// columnMakers is the one table of per-dtype column makers.
var columnMakers = map[ndarray.DType]func(dataset.Tensor) (column, arrow.DataType, []int64, error){
	ndarray.Int8: numberColumn[int8], ndarray.Int16: numberColumn[int16], ndarray.Int32: numberColumn[int32],
	ndarray.Int64: numberColumn[int64], ndarray.Uint8: numberColumn[uint8], ndarray.Uint16: numberColumn[uint16],
	ndarray.Uint32: numberColumn[uint32], ndarray.Uint64: numberColumn[uint64], ndarray.Float16: numberColumn[float16.Num],
	ndarray.Float32: numberColumn[float32], ndarray.Float64: numberColumn[float64],
	ndarray.Bool:   func(t dataset.Tensor) (column, arrow.DataType, []int64, error) { return newColumn[bool](t, nil) },
	ndarray.String: func(t dataset.Tensor) (column, arrow.DataType, []int64, error) { return newColumn[string](t, nil) },
}

// numberColumn is newColumn for numbers, whose values Arrow views as little-endian bytes.
func numberColumn[T ndarray.Numeric](t dataset.Tensor) (column, arrow.DataType, []int64, error) {
	return newColumn(t, ndarray.LittleEndianBytes[T])
}

// flatColumn is a tensor as flat values and, for a list column, each row's offsets into them.
type flatColumn[T ndarray.Element] struct {
	flat    []T
	width   int64   // values per row of a uniform column (1 for scalars)
	splits  []int64 // ragged rows' splits into values (nil when uniform)
	isList  bool
	valType arrow.DataType
	toBytes func([]T) []byte // a number's little-endian bytes (nil for bool and string)
}

func newColumn[T ndarray.Element](t dataset.Tensor, toBytes func([]T) []byte) (column, arrow.DataType, []int64, error) {
	c := &flatColumn[T]{valType: arrowType[T](), toBytes: toBytes}
	var shape []int64
	switch {
	case t.Ragged != nil:
		r, ok := t.Ragged.(*ragged.Array[T])
		if !ok {
			return nil, nil, nil, fmt.Errorf("%T is not a ragged array", t.Ragged)
		}
		// FlatValues are the values of the rows r holds, in row order (a view): each row's
		// offset into them is the sum of the rows before it.
		c.flat, c.isList = r.FlatValues(), true
		c.splits = make([]int64, r.NumRows()+1)
		for i := range r.NumRows() {
			c.splits[i+1] = c.splits[i] + int64(len(r.RowValues(i)))
		}
		shape = append([]int64(nil), r.Shape()[1:]...)
	default:
		d, ok := t.Dense.(*ndarray.Dense[T])
		if !ok {
			return nil, nil, nil, fmt.Errorf("%T is not a dense array", t.Dense)
		}
		c.flat, c.width = d.Ravel(), 1
		if d.Rank() >= 2 {
			c.isList = true
			shape = append([]int64(nil), d.Shape()[1:]...)
			c.width = ndarray.Shape(shape).Size()
		}
	}
	typ := c.valType
	if c.isList {
		typ = arrow.ListOfNonNullable(c.valType)
	}
	return c, typ, shape, nil
}

// arrowType returns the Arrow type of T's values.
func arrowType[T ndarray.Element]() arrow.DataType {
	switch d := ndarray.DTypeOf[T](); d {
	case ndarray.Bool:
		return arrow.FixedWidthTypes.Boolean
	case ndarray.String:
		return arrow.BinaryTypes.String
	default:
		return d.ArrowType()
	}
}

func (c *flatColumn[T]) offset(row int64) int64 {
	if c.splits != nil {
		return c.splits[row]
	}
	return row * c.width
}

func (c *flatColumn[T]) values(lo, hi int64) int64 {
	if !c.isList {
		return 0
	}
	return c.offset(hi) - c.offset(lo)
}

func (c *flatColumn[T]) slice(mem memory.Allocator, lo, hi int64) (arrow.Array, error) {
	vals := c.flat[c.offset(lo):c.offset(hi)]
	data := valuesData(mem, c.valType, vals, c.toBytes)
	if !c.isList {
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	defer data.Release()
	offsets := memory.NewResizableBuffer(mem)
	offsets.Resize(int(hi-lo+1) * 4)
	o := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	base := c.offset(lo)
	for i := lo; i <= hi; i++ {
		o[i-lo] = int32(c.offset(i) - base)
	}
	list := array.NewData(arrow.ListOfNonNullable(c.valType), int(hi-lo), []*memory.Buffer{nil, offsets}, []arrow.ArrayData{data}, 0, 0)
	offsets.Release()
	defer list.Release()
	return array.MakeFromData(list), nil
}

// valuesData returns the array data of flat values: a view of numbers, a copy of bools and
// strings into buffers from mem.
func valuesData[T ndarray.Element](mem memory.Allocator, typ arrow.DataType, vals []T, toBytes func([]T) []byte) arrow.ArrayData {
	switch v := any(vals).(type) {
	case []bool:
		b := array.NewBooleanBuilder(mem)
		b.AppendValues(v, nil)
		return built(b)
	case []string:
		b := array.NewStringBuilder(mem)
		b.AppendValues(v, nil)
		return built(b)
	}
	return array.NewData(typ, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(toBytes(vals))}, nil, 0, 0)
}

// built returns the data of the array b holds, and releases b.
func built(b array.Builder) arrow.ArrayData {
	defer b.Release()
	a := b.NewArray()
	defer a.Release()
	a.Data().Retain()
	return a.Data()
}

// Listen listens on an endpoint as tensorflow-io's ArrowStreamDataset names them:
// "tcp://A.B.C.D:PORT" (or "A.B.C.D:PORT"; tensorflow-io takes dotted-quad IPv4 only) or
// "unix://PATH".
func Listen(endpoint string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		if path == "" {
			return nil, fmt.Errorf("tfio: endpoint %q: no socket path", endpoint)
		}
		return net.Listen("unix", path)
	}
	hostPort := strings.TrimPrefix(endpoint, "tcp://")
	ap, err := netip.ParseAddrPort(hostPort)
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("tfio: endpoint %q: want tcp://A.B.C.D:PORT (IPv4, as tensorflow-io connects) or unix://PATH", endpoint)
	}
	return net.Listen("tcp4", hostPort)
}

// Options configure Serve.
type Options struct {
	Allocator    memory.Allocator // default memory.DefaultAllocator
	RowsPerBatch int64            // default 65536
	Logger       *slog.Logger     // default: discard
}

// Serve writes the stream to each connection ln accepts, each on a goroutine of its own, and
// closes it, until ctx is done; then it closes ln, waits for the connections being written
// (which ctx also stops) and returns nil. A failure to write one connection (the client went
// away, a mapped file under the stream shrank) is logged, not returned; a panic while writing
// one is logged with the connection and closes only that connection.
func Serve(ctx context.Context, ln net.Listener, s *Stream, opts Options) error {
	return ServeEach(ctx, ln, func() (*Stream, func(), error) { return s, func() {}, nil }, opts)
}

// ServeEach serves as Serve does, with the stream each connection gets from next, called once
// per connection as it is accepted: the stream, and a function called when the connection is
// done with it. A server whose tensors change (a directory that changes) gives each new
// connection the stream of the moment and releases a stream no connection uses any more. A
// connection next fails for is closed at once, the error logged.
func ServeEach(ctx context.Context, ln net.Listener, next func() (*Stream, func(), error), opts Options) error {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			defer func() {
				if p := recover(); p != nil {
					opts.Logger.Error("tfio: panic writing a stream", "remote", conn.RemoteAddr().String(), "panic", fmt.Sprint(p))
				}
			}()
			s, done, err := next()
			if err != nil {
				opts.Logger.Warn("tfio: no stream to send", "remote", conn.RemoteAddr().String(), "err", err)
				return
			}
			defer done()
			// The stream views the tensors' memory, mapped files among them.
			err = dataset.Guard(func() error { return s.WriteTo(ctx, conn, opts.Allocator, opts.RowsPerBatch) })
			if err != nil {
				opts.Logger.Warn("tfio: stream not finished", "remote", conn.RemoteAddr().String(), "err", err)
			}
		}()
	}
}
