package dataset

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/internal/saturate"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
)

// Source is one tensor of a directory dataset, described without its values, which are read
// on demand one chunk at a time: a tensor of an Arrow IPC, .npy, .npz or TFRecord file is one
// chunk (the tensor as Open reads it: a view of the mapped file where the format allows), a
// column of an Arrow IPC file of several record batches one chunk per batch (a view of the
// mapped batch), a column of a Parquet file one chunk per row group (decoded as the chunk is
// read), and the
// parts of a table joined are their chunks in path order. Of an object in object storage, a
// Parquet column's row group, an Arrow IPC file's record batch and a run of 64 MiB of a .npy
// file's rows are each a chunk fetched as it is read (see ScanDir). Sending a Source chunk by chunk, as
// the Flight server's DoGet does, holds one chunk in memory at a time however large the
// tensor; Read gives the whole tensor.
//
// A Source is safe for concurrent use. It views its files' mappings, which stay until its Dir
// is released; Retain it to use it beyond that.
type Source struct {
	Name     string   // as OpenDir names the tensor
	Kind     Kind     // the kind of every chunk
	Column   string   // the column or .npz member of the first part, if any
	DimNames []string // the first part's dimension names, nil when it has none
	// Table is the name of the table the Source is a column of — a Parquet, Arrow IPC or
	// TFRecord Examples file's, a directory's table of parts — whose columns are named
	// TABLE.COLUMN and whose chunks align (the same files, the same row groups or batches,
	// in the same order); "" for a tensor of its own (a .npy file, an .npz member, a Tensor
	// message).
	Table string

	desc  Tensor // the first part: a resident tensor, or a Parquet column with no rows
	rows  int64
	parts []sourcePart
	lim   limits.Limits
}

// sourcePart is one file's share of a Source: a tensor read when the file was opened, or a
// column of a Parquet file, read one row group at a time.
type sourcePart struct {
	file     *File
	resident *Tensor
	column   string  // the Parquet column
	base     string  // what the Parquet file's tensors are named after
	rowRows  []int64 // the rows of each chunk read (row group, record batch, run of rows)
	rowBytes []int64 // each chunk's size: a row group's uncompressed (a column of strings': its column chunk's), a batch's or run's bytes
	rowFirst int     // the index in the file of the first chunk read (a Share's)
	// rowPacked, for a Parquet part, says which of its row groups store the column so that a
	// read of some rows decodes more than those rows: compressed pages, or a column read
	// whole (strings, lists); nil for any other part.
	rowPacked []bool
	rowTotal  int // the chunks of the file
	// blocks, for an Arrow IPC file in object storage, are its record batches (rowRows and
	// rowBytes then describe them), each fetched as it is read; nil for a Parquet part.
	blocks []ipc.Block
	// npy, for a .npy file in object storage, is its header: chunkRows rows a chunk, each
	// run of rows fetched as it is read; nil otherwise.
	npy       *npy.Info
	chunkRows int64
	// binary says the part's column of strings is bytes as its file declares it (binary,
	// large_binary, fixed_size_binary: arrowtensor.IsBytesType), not text.
	binary bool
	// readers, for a Parquet part, keeps the readers ReadRows made of its file (all its
	// columns' parts share it).
	readers *readerPool
}

// residentSource returns the Source of a tensor read whole from f.
func residentSource(f *File, t Tensor, lim limits.Limits) *Source {
	return &Source{
		Name: t.Name, Kind: t.ImpliedKind(), Column: t.Column, DimNames: t.DimNames,
		desc: t, rows: t.Rows(), lim: lim,
		parts: []sourcePart{{file: f, resident: &t}},
	}
}

// scanParquet returns the Sources of the Parquet file f holding b, named after base, having
// checked its footer but decoded no values: a column of the file's tensors each (see
// FromRecords), a chunk per row group, and the columns that have no tensor form. A sparse COO
// file, which is one tensor of every column, is read whole instead (within lim.MaxCopySize).
func scanParquet(f *File, b []byte, base string, lim limits.Limits) ([]*Source, []LeftOut, error) {
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: memory.NewGoAllocator(), Limits: lim})
	if err != nil {
		return nil, nil, err
	}
	schema := r.Schema()
	if arrowtensor.IsSparseSchema(schema) {
		ts, _, err := readParquet(b, base, lim)
		if err != nil {
			return nil, nil, err
		}
		out := make([]*Source, len(ts))
		for i, t := range ts {
			out[i] = residentSource(f, t, lim)
		}
		return out, nil, nil
	}
	descs, left, err := parquetTensors(r, nil, base)
	if err != nil {
		return nil, nil, err
	}
	left = append(left, parquetSkipped(r, base)...)
	rowRows := make([]int64, r.NumRowGroups())
	rowBytes := make([]int64, r.NumRowGroups())
	for i := range rowRows {
		rowRows[i] = r.RowGroupRows(i)
		rowBytes[i] = r.RowGroupBytes(i)
	}
	out := make([]*Source, len(descs))
	pool := &readerPool{} // the file's, shared by its columns
	for i, t := range descs {
		bytes := rowBytes
		if t.DType() == ndarray.String { // its own column chunks': a row group's other columns are no measure of its strings
			bytes = make([]int64, len(rowRows))
			for k := range bytes {
				bytes[k] = max(r.ColumnBytes(k, t.Column), 0)
			}
		}
		packed := make([]bool, len(rowRows))
		for k := range packed {
			packed[k] = t.Kind == KindRagged || t.DType() == ndarray.String || r.ColumnCompressed(k, t.Column)
		}
		out[i] = &Source{
			Name: t.Name, Kind: t.ImpliedKind(), Column: t.Column, DimNames: t.DimNames,
			desc: t, rows: r.NumRows(), lim: lim,
			parts: []sourcePart{{file: f, column: t.Column, base: base, rowRows: rowRows, rowBytes: bytes, rowTotal: len(rowRows), readers: pool,
				binary: declaresBytes(schema, t.Column), rowPacked: packed}},
		}
	}
	return out, left, nil
}

// renamed returns a copy of s named name, a column of the table named table (a part of a
// table named after its directory).
func (s *Source) renamed(table, name string) *Source {
	c := s.clone()
	c.Name = name
	if c.Table != "" {
		c.Table = table
	}
	return c
}

// clone returns a copy of s whose parts can grow without changing s's.
func (s *Source) clone() *Source {
	c := *s
	c.parts = slices.Clone(s.parts)
	return &c
}

// join appends the chunks of src, a later part of the same tensor, after s's, or says why it
// cannot: see joinable.
func (s *Source) join(src *Source) error {
	if err := joinable(s.desc, src.desc); err != nil {
		return err
	}
	s.parts = append(s.parts, src.parts...)
	s.rows += src.rows
	return nil
}

// DType returns the element type.
func (s *Source) DType() ndarray.DType { return s.desc.DType() }

// Shape returns the tensor's shape, rows summed over the chunks; ragged dimensions are -1.
func (s *Source) Shape() ndarray.Shape {
	shape := s.desc.Shape().Clone()
	if s.desc.Sparse == nil && len(shape) > 0 {
		shape[0] = s.rows
	}
	return shape
}

// Rows returns the rows of every chunk (see Tensor.Rows).
func (s *Source) Rows() int64 { return s.rows }

// Bytes returns the memory the tensor's values take (as Concat would hold them), or -1 when
// that is not known before the values are read: a ragged or string column of a Parquet file
// (or of an Arrow IPC file read by its batches), whose values' lengths only reading tells.
func (s *Source) Bytes() int64 {
	total := int64(0)
	for _, p := range s.parts {
		switch {
		case p.resident != nil:
			total += tensorBytes(*p.resident)
		case s.desc.Dense != nil && s.desc.DType() != ndarray.String:
			rows := int64(0)
			for _, n := range p.rowRows {
				rows += n
			}
			total += rows * s.desc.Dense.Shape()[1:].Size() * int64(s.desc.DType().Size())
		default:
			return -1
		}
	}
	return total
}

// decodeFactor is what decoding a Parquet row group holds at its peak, over the size of the
// values it gives: arrow-go's decoder holds the values, their definition and repetition
// levels (two bytes each per value) and a decompressed page. Measured at 3× for a float32
// tensor column (BENCHMARKS.md).
const decodeFactor = 3

// DecodeBytes returns, chunk by chunk in the order Chunks yields them, an estimate of the
// memory reading the chunk holds until it is dropped: none for a resident part (its tensor
// views its file), and for a Parquet row group decodeFactor times its values' size (of a
// column of strings, four times its column chunk's uncompressed size and a string header a
// row), or, where that is not known before reading (a ragged column), times the row group's
// uncompressed size
// — one more time for an object's, whose column chunk is fetched into memory first; for a
// record batch of an Arrow IPC file or a run of rows of a .npy file in object storage, its
// bytes.
func (s *Source) DecodeBytes() []int64 {
	var out []int64
	for _, p := range s.parts {
		if p.resident != nil {
			out = append(out, 0)
			continue
		}
		for i, rows := range p.rowRows {
			if p.blocks != nil || p.npy != nil { // its bytes fetched, which its arrays view
				out = append(out, p.rowBytes[i])
				continue
			}
			size := int64(-1)
			switch {
			case s.desc.DType() == ndarray.String && i < len(p.rowBytes):
				// the column chunk's bytes, up to four times over for the strings' headers
				// (a value takes at least four bytes: its length), and a header a row
				size = saturate.Add(saturate.Mul(p.rowBytes[i], 4), saturate.Mul(rows, stringHeader))
			case s.desc.Dense != nil:
				size = saturate.Mul(rows, saturate.Mul(s.desc.Dense.Shape()[1:].Size(), int64(max(s.desc.DType().Size(), 1))))
			}
			if size < 0 && i < len(p.rowBytes) {
				size = p.rowBytes[i]
			}
			factor := int64(decodeFactor)
			if p.file.remote != nil {
				factor++ // the column chunk fetched, held until it is decoded
			}
			out = append(out, saturate.Mul(max(size, 0), factor))
		}
	}
	return out
}

// stringHeader is what a Go string takes beside its bytes.
const stringHeader = 16

// Share returns the k-th of n shares of the Source (0 ≤ k < n): the Source of its chunks
// [⌊k·C/n⌋, ⌊(k+1)·C/n⌋) of C, whole files and Parquet row groups, so that the n shares in
// order hold every chunk once, in row order — what each of n servers over the same files
// serves of the tensor. It returns false when the share holds no chunk.
func (s *Source) Share(k, n int) (*Source, bool) {
	if n <= 0 || k < 0 || k >= n {
		return nil, false
	}
	total := s.NumChunks()
	lo, hi := k*total/n, (k+1)*total/n
	if lo == hi {
		return nil, false
	}
	out := s.clone()
	out.parts, out.rows = nil, 0
	at := 0 // the index of the part's first chunk
	for _, p := range s.parts {
		count := 1
		if p.resident == nil {
			count = len(p.rowRows)
		}
		from, to := max(lo-at, 0), min(hi-at, count)
		at += count
		if from >= to {
			continue
		}
		if p.resident != nil {
			out.parts = append(out.parts, p)
			out.rows += p.resident.Rows()
			continue
		}
		p.rowRows, p.rowBytes = p.rowRows[from:to], p.rowBytes[from:to]
		if p.rowPacked != nil {
			p.rowPacked = p.rowPacked[from:to]
		}
		p.rowFirst += from
		for _, r := range p.rowRows {
			out.rows += r
		}
		out.parts = append(out.parts, p)
	}
	return out, true
}

// NumChunks returns the number of chunks Chunks yields.
func (s *Source) NumChunks() int {
	n := 0
	for _, p := range s.parts {
		if p.resident != nil {
			n++
		} else {
			n += len(p.rowRows)
		}
	}
	return n
}

// Chunks returns an iterator over the tensor's chunks in row order, each read as the
// iteration reaches it, named as the Source: a resident part's tensor as it is (a view of its
// file), a Parquet row group decoded into Go memory the garbage collector reclaims, within
// the limits the directory was opened with. A chunk that cannot be read (a file changed or
// corrupt past its footer, a row group whose rows differ from what the footer says) is
// yielded as an error naming the file, and the iteration ends there. ctx is the iteration's:
// once it is done, a fetch under way from object storage ends, and the next chunk is an
// error wrapping its cause.
func (s *Source) Chunks(ctx context.Context) iter.Seq2[Tensor, error] {
	return func(yield func(Tensor, error) bool) {
		s.chunks(ctx, func(_ *File, t Tensor, err error) bool { return yield(t, err) })
	}
}

// chunks yields the chunks as Chunks does, each with the file it comes from.
func (s *Source) chunks(ctx context.Context, yield func(*File, Tensor, error) bool) {
	for _, p := range s.parts {
		if p.resident != nil {
			if err := context.Cause(ctx); err != nil {
				s.failer(p, func(t Tensor, err error) bool { return yield(p.file, t, err) })(err)
				return
			}
			if !yield(p.file, s.named(*p.resident), nil) {
				return
			}
			continue
		}
		read := s.parquetChunks
		switch {
		case p.blocks != nil:
			read = s.arrowChunks
		case p.npy != nil:
			read = s.npyChunks
		}
		if !read(ctx, p, func(t Tensor, err error) bool { return yield(p.file, t, err) }) {
			return
		}
	}
}

// parquetChunks yields the row groups of a Parquet part, reporting whether the iteration
// goes on.
func (s *Source) parquetChunks(ctx context.Context, p sourcePart, yield func(Tensor, error) bool) bool {
	fail := s.failer(p, yield)
	b := p.file.mapping.Bytes()
	var buf *objstore.Buffer // an object's: this iteration's own, holding one row group at a time
	if p.file.remote != nil {
		var err error
		if buf, err = p.file.remote.Clone(); err != nil {
			return fail(err)
		}
		defer buf.Mapping().Release()
		b = buf.Mapping().Bytes()
	}
	var r *parquet.Reader
	err := Guard(func() error {
		var err error
		r, err = parquet.NewReader(b, parquet.ReaderOptions{
			Allocator: memory.NewGoAllocator(), Limits: s.lim, Columns: []string{p.column},
		})
		return err
	})
	if err != nil {
		return fail(err)
	}
	if r.NumRowGroups() != p.rowTotal {
		return fail(fmt.Errorf("parquet: %d row groups, %d when the file was opened: %w", r.NumRowGroups(), p.rowTotal, parquet.ErrInvalid))
	}
	for j, want := range p.rowRows {
		i := p.rowFirst + j
		if err := context.Cause(ctx); err != nil {
			return fail(err)
		}
		var ranges []objstore.Range
		if buf != nil {
			if ranges, err = s.fetchRowGroup(ctx, buf, r, i); err != nil {
				return fail(err)
			}
		}
		var t Tensor
		err := Guard(func() error {
			var err error
			t, err = s.parquetRowGroup(r, p, i, want)
			return err
		})
		if buf != nil {
			if ferr := buf.Forget(ranges...); ferr != nil && err == nil {
				err = ferr
			}
		}
		if err != nil {
			return fail(err)
		}
		if !yield(s.named(t), nil) {
			return false
		}
	}
	return true
}

// fetchRowGroup fetches into buf the column chunks r reads of row group i, at most the
// limits' MaxCopySize bytes, and returns their ranges.
func (s *Source) fetchRowGroup(ctx context.Context, buf *objstore.Buffer, r *parquet.Reader, i int) ([]objstore.Range, error) {
	var ranges []objstore.Range
	total := int64(0)
	for _, c := range r.ChunkRanges(i) {
		ranges = append(ranges, objstore.Range{Off: c.Offset, Len: c.Length})
		total += c.Length
	}
	if total > s.lim.MaxCopySize {
		return nil, fmt.Errorf("parquet: row group %d: fetching %d bytes, more than MaxCopySize %d: %w", i, total, s.lim.MaxCopySize, limits.ErrExceeded)
	}
	return ranges, objectError(buf.Fetch(ctx, ranges...))
}

// failer returns the function that ends a part's iteration with err, named after the part's
// file and the Source — or, when the file was modified since it was mapped, with that change
// instead (changedFirst): a read that fails on a file rewritten under it is told as the
// change, not as a corrupt file.
func (s *Source) failer(p sourcePart, yield func(Tensor, error) bool) func(error) bool {
	return func(err error) bool {
		err = p.file.changedFirst(s.Name+": ", err)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Path != p.file.Path {
			err = &FileError{Path: p.file.Path, Err: fmt.Errorf("%s: %w", s.Name, err)}
		}
		yield(Tensor{}, err)
		return false
	}
}

// scanArrowFile returns the Sources of the Arrow IPC file f holds b of — mapped whole, or in
// object storage its footer and the metadata of its record batches fetched, nothing else
// (fetchArrowFile) — named after base: a column of the file's tensors each (see
// FromRecords), a chunk per record batch, decoded (over the mapping, or fetched) as it is
// read; and the columns that have no tensor form.
func scanArrowFile(f *File, b []byte, base string, lim limits.Limits) ([]*Source, []LeftOut, error) {
	r, err := ipc.NewBatchReader(b, ipc.BatchOptions{Limits: lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	descs, left, err := FromRecords(r.Schema(), nil, base)
	if err != nil {
		return nil, nil, err
	}
	left = append(skippedColumns(r.Skipped(), base), left...)
	blocks := r.Blocks()
	rowRows := make([]int64, len(blocks))
	rowBytes := make([]int64, len(blocks))
	total := int64(0)
	for i, blk := range blocks {
		if rowRows[i], err = r.BlockRows(i); err != nil {
			return nil, nil, err
		}
		rowBytes[i] = blk.MetaLen + blk.BodyLen
		total += rowRows[i]
	}
	out := make([]*Source, len(descs))
	for i, t := range descs {
		out[i] = &Source{
			Name: t.Name, Kind: t.ImpliedKind(), Column: t.Column, DimNames: t.DimNames,
			desc: t, rows: total, lim: lim,
			parts: []sourcePart{{file: f, column: t.Column, base: base, rowRows: rowRows, rowBytes: rowBytes, rowTotal: len(blocks), blocks: blocks,
				binary: declaresBytes(r.Schema(), t.Column)}},
		}
	}
	return out, left, nil
}

// arrowChunks yields the record batches of an Arrow IPC file part, each decoded over the
// file's mapping (views) or, in object storage, fetched whole into Go memory (that the tensor
// views), reporting whether the iteration goes on.
func (s *Source) arrowChunks(ctx context.Context, p sourcePart, yield func(Tensor, error) bool) bool {
	fail := s.failer(p, yield)
	var r *ipc.BatchReader
	err := Guard(func() error { // the footer and the batches' metadata: mapped, or fetched when scanned
		var err error
		r, err = ipc.NewBatchReader(p.file.mapping.Bytes(), ipc.BatchOptions{Limits: s.lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
		return err
	})
	if err != nil {
		return fail(err)
	}
	defer r.Release()
	for j, want := range p.rowRows {
		i := p.rowFirst + j
		if err := context.Cause(ctx); err != nil {
			return fail(err)
		}
		var t Tensor
		err := Guard(func() error {
			var err error
			t, err = s.arrowBatch(ctx, r, p, i, want)
			return err
		})
		if err != nil {
			return fail(err)
		}
		if !yield(s.named(t), nil) {
			return false
		}
	}
	return true
}

// npyChunkBytes is about what one chunk of a .npy object holds: its rows are fetched and
// sent this many bytes at a time.
var npyChunkBytes int64 = 64 << 20

// scanNpy returns the Source of the .npy file in object storage f holds b of — its header
// fetched, nothing else (fetchNpyHeader) — named base: a chunk per run of rows of about 64 MiB,
// fetched as it is read.
func scanNpy(f *File, b []byte, base string, lim limits.Limits) ([]*Source, error) {
	h, err := npy.ReadHeader(b, lim)
	if err != nil {
		return nil, err
	}
	src, err := rowsSource(f, h, base, "", lim)
	if err != nil {
		return nil, err
	}
	return []*Source{src}, nil
}

// scanNpz returns the Sources of the .npz archive in object storage f holds b of — its
// directory and its arrays' headers fetched, nothing else (fetchNpzHeaders) — named
// base.MEMBER, each member's rows fetched a run at a time as they are read (without the
// member's checksum, which covers all of it: the store's version check stands for it).
func scanNpz(f *File, b []byte, base string, lim limits.Limits) ([]*Source, error) {
	arrays, err := npzArrays(b, lim)
	if err != nil {
		return nil, err
	}
	if arrays == nil {
		return nil, fmt.Errorf("npz: a member that is not an array of rows stored as it is: %w", ErrNotTensors)
	}
	out := make([]*Source, len(arrays))
	for i, a := range arrays {
		if out[i], err = rowsSource(f, a.info, base+"."+a.Name, a.Name, lim); err != nil {
			return nil, fmt.Errorf("npz: member %q: %w", a.Name, err)
		}
	}
	return out, nil
}

// rowsSource returns the Source named name (of column column) of the row-major array h
// describes, in object storage f: a chunk per run of about npyChunkBytes of rows.
func rowsSource(f *File, h npy.Info, name, column string, lim limits.Limits) (*Source, error) {
	empty, err := h.Rows(0, nil)
	if err != nil {
		return nil, err
	}
	d, err := empty.Dense()
	if err != nil {
		return nil, err
	}
	desc := Tensor{Name: name, Kind: KindDense, Column: column, Dense: d}
	chunkRows := max(npyChunkBytes/max(h.RowBytes(), 1), 1)
	var rowRows, rowBytes []int64
	for at := int64(0); at < h.Shape[0] || len(rowRows) == 0; at += chunkRows {
		n := min(chunkRows, h.Shape[0]-at)
		rowRows, rowBytes = append(rowRows, n), append(rowBytes, n*h.RowBytes())
	}
	return &Source{
		Name: name, Kind: KindDense, Column: column, desc: desc, rows: h.Shape[0], lim: lim,
		parts: []sourcePart{{file: f, base: name, column: column, rowRows: rowRows, rowBytes: rowBytes, rowTotal: len(rowRows), npy: &h, chunkRows: chunkRows}},
	}, nil
}

// npyChunks yields the runs of rows of a .npy part in object storage, each fetched into Go
// memory (that the tensor views), reporting whether the iteration goes on.
func (s *Source) npyChunks(ctx context.Context, p sourcePart, yield func(Tensor, error) bool) bool {
	fail := s.failer(p, yield)
	for j, want := range p.rowRows {
		i := p.rowFirst + j
		if err := context.Cause(ctx); err != nil {
			return fail(err)
		}
		if p.rowBytes[j] > s.lim.MaxCopySize {
			return fail(fmt.Errorf("npy: rows %d to %d: fetching %d bytes, more than MaxCopySize %d: %w", int64(i)*p.chunkRows, int64(i)*p.chunkRows+want, p.rowBytes[j], s.lim.MaxCopySize, limits.ErrExceeded))
		}
		data := make([]byte, p.rowBytes[j])
		off := p.npy.DataOffset + int64(i)*p.chunkRows*p.npy.RowBytes()
		if err := p.file.remote.Object().ReadFull(ctx, data, off); err != nil {
			return fail(objectError(err))
		}
		a, err := p.npy.Rows(want, data)
		if err != nil {
			return fail(err)
		}
		d, err := a.Dense()
		if err != nil {
			return fail(err)
		}
		if !yield(s.named(Tensor{Kind: KindDense, Dense: d}), nil) {
			return false
		}
	}
	return true
}

// checkChunk returns chunk i of a part (what: "parquet: row group"), which should hold want
// rows, or why it cannot be one of the Source's chunks (wrapping invalid, the format's
// sentinel, when its rows are not what the footer says).
func (s *Source) checkChunk(t Tensor, what string, i int, want int64, invalid error) (Tensor, error) {
	if t.Rows() != want {
		return Tensor{}, fmt.Errorf("%s %d: %d rows, the footer says %d: %w", what, i, t.Rows(), want, invalid)
	}
	if err := joinable(s.desc, t); err != nil {
		return Tensor{}, fmt.Errorf("%s %d: %w", what, i, err)
	}
	return t, nil
}

// parquetRowGroup decodes row group i of a Parquet part, which the footer said holds want
// rows. The tensor is Go memory: it views nothing of the file.
func (s *Source) parquetRowGroup(r *parquet.Reader, p sourcePart, i int, want int64) (Tensor, error) {
	rec, err := r.ReadRowGroup(i)
	if err != nil {
		return Tensor{}, err
	}
	ts, _, err := parquetTensors(r, []arrow.Record{rec}, p.base)
	rec.Release() // Go memory: the tensor's views stay valid
	switch {
	case err != nil:
		return Tensor{}, err
	case len(ts) != 1:
		return Tensor{}, fmt.Errorf("parquet: column %s is no longer a tensor: %w", p.column, parquet.ErrInvalid)
	}
	return s.checkChunk(ts[0], "parquet: row group", i, want, parquet.ErrInvalid)
}

// named returns a chunk under the Source's name and kind, dictionary-encoded as its first
// part is (a stream's schema says it before any chunk is read): with its own Dictionary, whose
// values index the same, when it has the first part's type, else with the first part's.
func (s *Source) named(t Tensor) Tensor {
	t.Name, t.Kind, t.Column, t.DimNames = s.Name, s.Kind, s.Column, s.DimNames
	switch first := s.desc.Dictionary; {
	case first == nil:
		t.Dictionary = nil
	case t.Dictionary == nil || !arrow.TypeEqual(t.Dictionary.Type, first.Type):
		t.Dictionary = &Dictionary{Type: first.Type}
	}
	return t
}

// Read returns the whole tensor: the chunk itself when there is one resident chunk (a view of
// its file), else every chunk read and joined by Concat into a copy, failing with an error
// wrapping limits.ErrExceeded past the MaxCopySize bytes of the limits the directory was
// opened with. ctx ends the reading as it ends Chunks.
func (s *Source) Read(ctx context.Context) (Tensor, error) {
	if t, ok := s.Resident(); ok {
		return t, nil
	}
	var chunks []Tensor
	total := int64(0)
	var failed error
	s.chunks(ctx, func(f *File, t Tensor, err error) bool {
		if err == nil && total+tensorBytes(t) > s.lim.MaxCopySize {
			err = &FileError{Path: f.Path, Err: fmt.Errorf("%s: reading it takes %s past MaxCopySize %d bytes: %w", s.Name, s.Name, s.lim.MaxCopySize, limits.ErrExceeded)}
		}
		if err != nil {
			failed = err
			return false
		}
		total += tensorBytes(t)
		chunks = append(chunks, t)
		return true
	})
	if failed != nil {
		return Tensor{}, failed
	}
	if len(chunks) == 0 { // a Parquet file of no row groups
		return s.named(s.desc), nil
	}
	var t Tensor
	err := Guard(func() error { // Concat copies the views of mapped files
		var err error
		t, err = Concat(chunks)
		return err
	})
	if err != nil {
		return Tensor{}, err
	}
	return s.named(t), nil
}

// Retain adds a reference to every file the Source's chunks come from, for a user that may
// outlive its Dir.
func (s *Source) Retain() {
	for _, p := range s.parts {
		p.file.Retain()
	}
}

// Release drops the references Retain added.
func (s *Source) Release() {
	for _, p := range s.parts {
		p.file.Release()
	}
}

// Resident returns the tensor when the Source is one chunk read when its file was opened (a
// tensor of a file other than Parquet, not joined), and whether it is.
func (s *Source) Resident() (Tensor, bool) {
	if len(s.parts) == 1 && s.parts[0].resident != nil {
		return s.named(*s.parts[0].resident), true
	}
	return Tensor{}, false
}

// Schema returns the schema of the record batch Tensor.Record makes of every chunk, the
// column named column: what a Flight stream of the tensor carries, known before any chunk is
// read. Strings are utf8 when they are text, and binary (arrowtensor.BinaryOf) when a file
// declares them bytes or a part read already holds a value that is not UTF-8: a chunk's record
// of text then goes as bytes (arrowtensor.AsType).
func (s *Source) Schema(column string) (*arrow.Schema, error) {
	rec, err := s.named(s.desc).Record(memory.NewGoAllocator(), column)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	schema := rec.Schema()
	if s.DType() == ndarray.String && !s.text() {
		fields := schema.Fields()
		for i := range fields {
			fields[i].Type = arrowtensor.BinaryOf(fields[i].Type)
		}
		md := schema.Metadata()
		schema = arrow.NewSchema(fields, &md)
	}
	return schema, nil
}

// text reports whether the Source's strings are text: no part's file declares them bytes, and
// every value of a part read already is valid UTF-8.
func (s *Source) text() bool {
	for _, p := range s.parts {
		if p.binary || p.resident != nil && !allText(*p.resident) {
			return false
		}
	}
	return true
}

// allText reports whether every string of t is valid UTF-8 (true for a tensor of no strings).
func allText(t Tensor) bool {
	switch a := t.Dense.(type) {
	case *ndarray.Dense[string]:
		for v := range a.Values() {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	if a, ok := t.Ragged.(*ragged.Array[string]); ok {
		for _, v := range a.FlatValues() {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

// declaresBytes reports whether schema's column named column holds bytes, not text
// (arrowtensor.IsBytesType).
func declaresBytes(schema *arrow.Schema, column string) bool {
	i := schema.FieldIndices(column)
	return len(i) == 1 && arrowtensor.IsBytesType(schema.Field(i[0]).Type)
}
