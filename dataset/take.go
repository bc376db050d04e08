package dataset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/internal/fanout"
	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
)

// TakeRows returns the rows of t at the given indices, in that order (an index may repeat),
// as a copy that views nothing of t: a dense tensor's cells and their validity (nil when no
// row taken is null), a ragged tensor's rows. A dictionary-encoded column's rows keep its
// encoding, their dictionary narrowed to the values they hold (Dictionary.Values nil: Batch
// indexes them as the rows give them, as of a Parquet file's take): a take of two rows
// carries two values, not the file's every one. An index outside [0, Rows) fails with an
// error wrapping ndarray.ErrShape; a sparse tensor has no rows to take (ndarray.ErrShape).
func (t Tensor) TakeRows(rows []int64) (Tensor, error) {
	n := t.Rows()
	for _, r := range rows {
		if r < 0 || r >= n {
			return Tensor{}, fmt.Errorf("dataset: %s: row %d of %d: %w", t.Name, r, n, ndarray.ErrShape)
		}
	}
	out := t
	switch {
	case t.Sparse != nil:
		return Tensor{}, fmt.Errorf("dataset: %s: rows of a sparse tensor: %w", t.Name, ndarray.ErrShape)
	case t.Ragged != nil:
		a, err := ragged.TakeAny(t.Ragged, rows)
		if err != nil {
			return Tensor{}, fmt.Errorf("dataset: %s: %w", t.Name, err)
		}
		out.Ragged = a
		return out, nil
	}
	ops, err := opsOf(t.DType())
	if err != nil {
		return Tensor{}, err
	}
	out.Dense = ops.takeRows(t.Dense, rows)
	out.Dictionary = narrowed(t.Dictionary)
	out.Valid = nil // unless a row taken is null
	for _, r := range rows {
		if t.Valid != nil && !t.Valid[r] {
			out.Valid = make([]bool, len(rows))
			for k, r := range rows {
				out.Valid[k] = t.Valid[r]
			}
			break
		}
	}
	return out, nil
}

// narrowed returns the dictionary of rows taken of a column of dictionary d: its type, no
// values (nil for no dictionary).
func narrowed(d *Dictionary) *Dictionary {
	if d == nil {
		return nil
	}
	return &Dictionary{Type: d.Type}
}

// takeRows returns the rows of a (a *ndarray.Dense[T] of rank 1 or more) at rows, checked,
// as a new row-major array.
func takeRows[T ndarray.Element](a ndarray.Array, rows []int64) ndarray.Array {
	d := a.(*ndarray.Dense[T])
	shape := d.Shape()
	out := ndarray.New[T](append(ndarray.Shape{int64(len(rows))}, shape[1:]...)...)
	cell := shape[1:].Size()
	if d.Layout().IsRowMajor() {
		if src, ok := d.Contiguous(); ok {
			dst := out.Data()
			for i, r := range rows {
				copy(dst[int64(i)*cell:int64(i+1)*cell], src[r*cell:(r+1)*cell])
			}
			return out
		}
	}
	for i, r := range rows {
		row, _ := d.Slice(ndarray.At(r))
		dst, _ := out.Slice(ndarray.At(int64(i)))
		_ = ndarray.Copy(dst, row) // shapes match by construction
	}
	return out
}

// TakeRowsOf returns the rows at the given indices of parts joined along their first axis —
// an index counts the rows of the parts in order, as if Concat had joined them — as one copy
// made without joining them first. Parts join as Concat says; an index outside fails with an
// error wrapping ndarray.ErrShape.
func TakeRowsOf(parts []Tensor, rows []int64) (Tensor, error) {
	if len(parts) == 1 {
		return parts[0].TakeRows(rows)
	}
	dense := len(parts) > 0
	nulls := false
	total := int64(0)
	for _, p := range parts {
		dense = dense && p.Dense != nil && p.Dense.DType() == parts[0].Dense.DType() && p.Dense.Rank() > 0 &&
			p.Dense.Shape()[1:].Equal(parts[0].Dense.Shape()[1:])
		nulls = nulls || p.Valid != nil
		total += p.Rows()
	}
	if !dense { // ragged parts, or parts Concat refuses: joined, then taken
		t, err := Concat(parts)
		if err != nil {
			return Tensor{}, err
		}
		return t.TakeRows(rows)
	}
	for _, r := range rows {
		if r < 0 || r >= total {
			return Tensor{}, fmt.Errorf("dataset: %s: row %d of %d: %w", parts[0].Name, r, total, ndarray.ErrShape)
		}
	}
	ops, err := opsOf(parts[0].DType())
	if err != nil {
		return Tensor{}, err
	}
	arrays := make([]ndarray.Array, len(parts))
	for i, p := range parts {
		arrays[i] = p.Dense
	}
	out := parts[0]
	out.Dense = ops.takeRowsOf(arrays, rows)
	out.Dictionary = narrowed(parts[0].Dictionary)
	out.Valid = nil
	if nulls {
		firsts := partFirsts(parts)
		for i, r := range rows {
			k := partOf(firsts, r)
			if v := parts[k].Valid; v != nil && !v[r-firsts[k]] {
				if out.Valid == nil {
					out.Valid = make([]bool, len(rows))
					for j := range out.Valid {
						out.Valid[j] = true
					}
				}
				out.Valid[i] = false
			}
		}
	}
	return out, nil
}

// partFirsts returns the first row of each part counted across parts, and one more: the rows.
func partFirsts(parts []Tensor) []int64 {
	out := make([]int64, len(parts)+1)
	for i, p := range parts {
		out[i+1] = out[i] + p.Rows()
	}
	return out
}

// partOf returns the part whose rows hold row r, given partFirsts.
func partOf(firsts []int64, r int64) int {
	return sort.Search(len(firsts)-1, func(j int) bool { return firsts[j+1] > r })
}

// takeRowsOf returns the rows at rows (checked) of parts (*ndarray.Dense[T] of one cell
// shape) joined along their first axis, as a new row-major array.
func takeRowsOf[T ndarray.Element](parts []ndarray.Array, rows []int64) ndarray.Array {
	typed := make([]*ndarray.Dense[T], len(parts))
	firsts := make([]int64, len(parts)+1)
	flat := make([][]T, len(parts)) // a part's values when row-major and contiguous
	for i, p := range parts {
		typed[i] = p.(*ndarray.Dense[T])
		firsts[i+1] = firsts[i] + typed[i].Dim(0)
		if typed[i].Layout().IsRowMajor() {
			flat[i], _ = typed[i].Contiguous()
		}
	}
	shape := typed[0].Shape()
	out := ndarray.New[T](append(ndarray.Shape{int64(len(rows))}, shape[1:]...)...)
	cell := shape[1:].Size()
	dst := out.Data()
	for i, r := range rows {
		k := partOf(firsts, r)
		local := r - firsts[k]
		if flat[k] != nil {
			copy(dst[int64(i)*cell:int64(i+1)*cell], flat[k][local*cell:(local+1)*cell])
			continue
		}
		row, _ := typed[k].Slice(ndarray.At(local))
		d, _ := out.Slice(ndarray.At(int64(i)))
		_ = ndarray.Copy(d, row) // shapes match by construction
	}
	return out
}

// ChunkRows returns the number of rows of each chunk Chunks yields, in order: what ReadRows
// numbers chunks and rows by.
func (s *Source) ChunkRows() []int64 {
	var out []int64
	for _, p := range s.parts {
		if p.resident != nil {
			out = append(out, p.resident.Rows())
			continue
		}
		out = append(out, p.rowRows...)
	}
	return out
}

// ReadRows returns the given rows of chunk i (see ChunkRows), a copy that views nothing of
// the files, reading only what those rows need: of a tensor read when its file was opened
// (mapped), the rows' cells; of a Parquet row group, the pages holding the rows; of an Arrow
// IPC file's record batch, that batch (fetched, in object storage); of a .npy object, the
// rows' bytes, fetched in runs of adjacent rows. rows must be ascending and distinct, each
// inside the chunk: anything else fails with an error wrapping ndarray.ErrShape, before
// anything is read. Errors name the file as Chunks' do; a file modified since it was mapped
// fails the read once the rows are copied (see ReadRowsOf); ctx ends a fetch under way.
func (s *Source) ReadRows(ctx context.Context, i int, rows []int64) (Tensor, error) {
	ts, err := ReadRowsOf(ctx, []*Source{s}, i, rows)
	if err != nil {
		return Tensor{}, err
	}
	return ts[0], nil
}

// ReadRowsOf returns the given rows of chunk i of each of srcs — columns of one table, whose
// chunks hold the same rows — as ReadRows does, each file read once for every column it
// holds: a Parquet row group's pages of all those columns, an Arrow IPC record batch decoded
// once. Once the rows are copied it asks each file it read (and only those: one fstat each)
// whether it was modified since it was mapped — its size, modification time or change time
// differs (File.CheckUnchanged) — and fails then with a *FileError naming the file and what
// differs, wrapping ErrFileChanged: the rows it returns are of the version the files were
// opened at, never of two (a page of a page cache and a page of the file rewritten since,
// among them). A read that fails on a file so modified fails with that change too.
func ReadRowsOf(ctx context.Context, srcs []*Source, i int, rows []int64) ([]Tensor, error) {
	if len(srcs) == 0 {
		return nil, nil
	}
	parts := make([]sourcePart, len(srcs))
	locals := make([]int, len(srcs))
	var want int64
	for k, s := range srcs {
		p, j, err := s.chunkAt(i)
		if err != nil {
			return nil, err
		}
		parts[k], locals[k] = p, j
		n := p.rowRows
		rowsHere := int64(0)
		if p.resident != nil {
			rowsHere = p.resident.Rows()
		} else {
			rowsHere = n[j]
		}
		if k == 0 {
			want = rowsHere
		} else if rowsHere != want {
			return nil, fmt.Errorf("dataset: %s: chunk %d holds %d rows, %s's %d: %w", s.Name, i, rowsHere, srcs[0].Name, want, ndarray.ErrShape)
		}
	}
	for k, r := range rows {
		if r < 0 || r >= want || (k > 0 && r <= rows[k-1]) {
			return nil, fmt.Errorf("dataset: %s: chunk %d of %d rows: rows must be ascending and distinct, inside the chunk (row %d): %w", srcs[0].Name, i, want, r, ndarray.ErrShape)
		}
	}
	// The columns of each file's chunk read together: a Parquet row group's, a record batch's.
	groups := map[chunkKey][]int{}
	for k, p := range parts {
		if p.resident == nil && p.npy == nil {
			key := chunkKey{p.file, p.blocks != nil, locals[k] + p.rowFirst}
			groups[key] = append(groups[key], k)
		}
	}
	out := make([]Tensor, len(srcs))
	done := make([]bool, len(srcs))
	for k, s := range srcs {
		if done[k] {
			continue
		}
		p := parts[k]
		// The sources read with this one: the other columns of the same file's chunk.
		group := []int{k}
		if p.resident == nil && p.npy == nil {
			group = groups[chunkKey{p.file, p.blocks != nil, locals[k] + p.rowFirst}]
		}
		var failed error
		fail := s.failer(p, func(_ Tensor, err error) bool { failed = err; return false })
		if err := context.Cause(ctx); err != nil {
			fail(err)
			return nil, failed
		}
		var got []Tensor
		err := Guard(func() error {
			var err error
			chunk := p.rowFirst + locals[k]
			switch {
			case p.resident != nil:
				var t Tensor
				t, err = p.resident.TakeRows(rows)
				got = []Tensor{t}
			case p.npy != nil:
				var t Tensor
				t, err = s.npyRows(ctx, p, chunk, rows)
				got = []Tensor{t}
			default:
				columns := make([]string, len(group))
				for g, m := range group {
					columns[g] = parts[m].column
				}
				if p.blocks != nil {
					got, err = s.arrowRows(ctx, p, chunk, want, columns, rows)
				} else {
					got, err = s.parquetRows(ctx, p, chunk, want, columns, rows)
				}
			}
			return err
		})
		if err != nil {
			fail(err)
			return nil, failed
		}
		for g, m := range group {
			t, err := srcs[m].checkChunk(got[g], "chunk", i, int64(len(rows)), ndarray.ErrShape)
			if err != nil {
				srcs[m].failer(parts[m], func(_ Tensor, err error) bool { failed = err; return false })(err)
				return nil, failed
			}
			out[m], done[m] = srcs[m].named(t), true
		}
	}
	// Every file read, asked once the rows are copied: a copy of one version, or an error.
	files := make([]*File, len(parts))
	what := make([]string, len(parts))
	for k, p := range parts {
		files[k], what[k] = p.file, srcs[k].Name+": "
	}
	if err := checkRead(files, what); err != nil {
		return nil, err
	}
	return out, nil
}

// chunkKey names one chunk of one file: its Parquet row group or record batch.
type chunkKey struct {
	file  *File
	batch bool // a record batch, not a row group
	index int
}

// ReadsWhole reports whether a read of some rows of chunk i (ReadRows, ReadRowsOf) decodes
// more than those rows — a Parquet row group whose column is stored compressed (whole pages
// decompressed) or read whole (strings, ragged lists) — so that reads of parts of the chunk
// apart would decode some of it twice. An unknown chunk reports false.
func (s *Source) ReadsWhole(i int) bool {
	p, j, err := s.chunkAt(i)
	return err == nil && p.rowPacked != nil && p.rowPacked[j]
}

// chunkAt returns the part chunk i of the Source is in and its index among the part's
// chunks read.
func (s *Source) chunkAt(i int) (sourcePart, int, error) {
	at := i
	for _, p := range s.parts {
		n := len(p.rowRows)
		if p.resident != nil {
			n = 1
		}
		if at < n {
			return p, at, nil
		}
		at -= n
	}
	return sourcePart{}, 0, fmt.Errorf("dataset: %s: chunk %d of %d: %w", s.Name, i, s.NumChunks(), ndarray.ErrShape)
}

// parquetRows reads rows of row group i of the columns of a Parquet part (of one file),
// which the footer says holds want rows: only the pages holding the rows (parquet.Reader
// TakeRows). Of an object, the column chunks' offset indexes are fetched first, then the
// byte ranges TakeRows reads (TakeRanges: a page's header and levels and the rows' bytes of
// an uncompressed tensor column, the pages holding the rows of a compressed one, the whole
// column chunk of any other), at most MaxCopySize bytes.
func (s *Source) parquetRows(ctx context.Context, p sourcePart, i int, want int64, columns []string, rows []int64) (_ []Tensor, err error) {
	b := p.file.mapping.Bytes()
	var buf *objstore.Buffer // an object's: this read's own
	if shared := p.file.remote; shared != nil {
		// The row group's page index, fetched once into the object's own buffer (beside its
		// footer), so that every read's buffer, a clone, starts with it.
		r, err := parquet.NewReader(shared.Mapping().Bytes(), parquet.ReaderOptions{Allocator: memory.NewGoAllocator(), Limits: s.lim, Columns: columns})
		if err != nil {
			return nil, err
		}
		if err := s.fetchRanges(ctx, shared, i, r.PageIndexRanges(i)); err != nil {
			return nil, err
		}
		if buf, err = shared.Clone(); err != nil {
			return nil, err
		}
		defer buf.Mapping().Release()
		b = buf.Mapping().Bytes()
	}
	var r *parquet.Reader
	key := strings.Join(columns, "\x00")
	if buf == nil && p.readers != nil { // a mapped file's: its footer and offset indexes decoded once
		if r = p.readers.get(key); r != nil {
			defer func() {
				if err == nil {
					p.readers.put(key, r)
				}
			}()
		}
	}
	if r == nil {
		if r, err = parquet.NewReader(b, parquet.ReaderOptions{Allocator: memory.NewGoAllocator(), Limits: s.lim, Columns: columns}); err != nil {
			return nil, err
		}
		if buf == nil && p.readers != nil {
			defer func() {
				if err == nil {
					p.readers.put(key, r)
				}
			}()
		}
	}
	if r.NumRowGroups() != p.rowTotal {
		return nil, fmt.Errorf("parquet: %d row groups, %d when the file was opened: %w", r.NumRowGroups(), p.rowTotal, parquet.ErrInvalid)
	}
	r.SetPageCache(nil)
	if buf == nil && p.readers != nil {
		if c := p.readers.pageCache(); c != nil {
			r.SetPageCache(c.of(p.file))
		}
	}
	if buf != nil {
		ranges, err := r.TakeRanges(i, rows)
		if err != nil {
			return nil, err
		}
		if err := s.fetchRanges(ctx, buf, i, ranges); err != nil {
			return nil, err
		}
	}
	rec, err := r.TakeRows(i, rows)
	if err != nil {
		return nil, err
	}
	ts, _, err := parquetTensors(r, []arrow.Record{rec}, p.base)
	rec.Release() // Go memory: the tensors' views stay valid
	if err != nil {
		return nil, err
	}
	return pickColumns(ts, columns, "parquet: row group", i, int64(len(rows)), parquet.ErrInvalid)
}

// readerPool keeps the parquet.Readers reads of one mapped Parquet file made, by the columns
// they read, for the reads after them: a reader decodes the footer and each offset index once,
// not once a read. A reader is used by one read at a time; one whose read failed is dropped.
type readerPool struct {
	mu    sync.Mutex
	free  map[string][]*parquet.Reader
	pages *PageCache // where the reads keep the pages they decompress, if anywhere
}

// pageCache returns the cache the pool's reads keep pages in, or nil.
func (p *readerPool) pageCache() *PageCache {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pages
}

// UsePageCache has the Source's reads by rows of mapped Parquet files (ReadRows, ReadRowsOf)
// keep the pages they decompress in c, and take them from there, so that each is
// decompressed once; nil keeps none. The other columns of the same files, which share their
// readers, use c too. c must stay open while the Source is read.
func (s *Source) UsePageCache(c *PageCache) {
	for _, p := range s.parts {
		if p.readers != nil {
			p.readers.mu.Lock()
			p.readers.pages = c
			p.readers.mu.Unlock()
		}
	}
}

// ReadsPages reports whether a page cache would serve the Source's reads by rows: it has
// parts of mapped Parquet files (see UsePageCache).
func (s *Source) ReadsPages() bool {
	for _, p := range s.parts {
		if p.readers != nil {
			return true
		}
	}
	return false
}

// pooledReaders is the most readers a pool keeps of one set of columns.
const pooledReaders = 8

// get returns a reader of the columns key names given back before, or nil.
func (p *readerPool) get(key string) *parquet.Reader {
	p.mu.Lock()
	defer p.mu.Unlock()
	rs := p.free[key]
	if len(rs) == 0 {
		return nil
	}
	r := rs[len(rs)-1]
	p.free[key] = rs[:len(rs)-1]
	return r
}

// put gives back a reader of the columns key names, kept unless the pool holds enough.
func (p *readerPool) put(key string, r *parquet.Reader) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[string][]*parquet.Reader{}
	}
	if len(p.free[key]) < pooledReaders {
		p.free[key] = append(p.free[key], r)
	}
}

// fetchRanges fetches the byte ranges rs of a Parquet object (of row group i) into buf, at
// most the limits' MaxCopySize bytes.
func (s *Source) fetchRanges(ctx context.Context, buf *objstore.Buffer, i int, rs []parquet.ByteRange) error {
	ranges := make([]objstore.Range, len(rs))
	total := int64(0)
	for k, c := range rs {
		ranges[k] = objstore.Range{Off: c.Offset, Len: c.Length}
		total += c.Length
	}
	if total > s.lim.MaxCopySize {
		return fmt.Errorf("parquet: row group %d: fetching %d bytes, more than MaxCopySize %d: %w", i, total, s.lim.MaxCopySize, limits.ErrExceeded)
	}
	return objectError(buf.Fetch(ctx, ranges...))
}

// arrowRows reads rows of record batch i of the columns of an Arrow IPC file part, which its
// footer says holds want rows: the batch decoded once over the mapping (a file's) or fetched
// (an object's).
func (s *Source) arrowRows(ctx context.Context, p sourcePart, i int, want int64, columns []string, rows []int64) ([]Tensor, error) {
	r, err := ipc.NewBatchReader(p.file.mapping.Bytes(), ipc.BatchOptions{Limits: s.lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
	if err != nil {
		return nil, err
	}
	defer r.Release()
	ts, err := s.arrowBatchColumns(ctx, r, p, i, want, columns)
	if err != nil {
		return nil, err
	}
	for k, t := range ts {
		if ts[k], err = t.TakeRows(rows); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// arrowBatch returns record batch i of an Arrow IPC file part as the Source's tensor: over
// the file's mapping, or fetched into Go memory from object storage.
func (s *Source) arrowBatch(ctx context.Context, r *ipc.BatchReader, p sourcePart, i int, want int64) (Tensor, error) {
	ts, err := s.arrowBatchColumns(ctx, r, p, i, want, []string{p.column})
	if err != nil {
		return Tensor{}, err
	}
	return s.checkChunk(ts[0], "ipc: record batch", i, want, ipc.ErrInvalid)
}

// arrowBatchColumns returns the tensors of the columns named of record batch i of an Arrow
// IPC file part, in that order.
func (s *Source) arrowBatchColumns(ctx context.Context, r *ipc.BatchReader, p sourcePart, i int, want int64, columns []string) ([]Tensor, error) {
	blk := p.blocks[i]
	size := blk.MetaLen + blk.BodyLen
	var data []byte
	if p.file.remote == nil {
		data = p.file.mapping.Bytes()[blk.Offset : blk.Offset+size] // inside the file: the footer's blocks are checked
	} else {
		if size > s.lim.MaxCopySize {
			return nil, fmt.Errorf("ipc: record batch %d: fetching %d bytes, more than MaxCopySize %d: %w", i, size, s.lim.MaxCopySize, limits.ErrExceeded)
		}
		data = make([]byte, size)
		if err := p.file.remote.Object().ReadFull(ctx, data, blk.Offset); err != nil {
			return nil, objectError(err)
		}
	}
	rec, err := r.DecodeBlock(i, data)
	if err != nil {
		return nil, err
	}
	ts, _, err := FromRecords(r.Schema(), []arrow.Record{rec}, p.base)
	rec.Release() // Go memory or the mapping: the tensor's views stay valid
	if err != nil {
		return nil, err
	}
	return pickColumns(ts, columns, "ipc: record batch", i, want, ipc.ErrInvalid)
}

// pickColumns returns the tensors of ts of the columns named, in that order, each checked to
// hold want rows: an error wrapping invalid names chunk i (what: "parquet: row group") where
// a column is no longer a tensor or holds other rows.
func pickColumns(ts []Tensor, columns []string, what string, i int, want int64, invalid error) ([]Tensor, error) {
	out := make([]Tensor, len(columns))
	for k, c := range columns {
		m := slices.IndexFunc(ts, func(t Tensor) bool { return t.Column == c })
		if m < 0 {
			return nil, fmt.Errorf("%s %d: column %s is no longer a tensor: %w", what, i, c, invalid)
		}
		if ts[m].Rows() != want {
			return nil, fmt.Errorf("%s %d: %d rows, the footer says %d: %w", what, i, ts[m].Rows(), want, invalid)
		}
		out[k] = ts[m]
	}
	return out, nil
}

// npyRowFetches is how many runs of rows of a .npy object are fetched at once.
const npyRowFetches = 8

// npyRows fetches rows (of run i) of a .npy part in object storage: each run of adjacent
// rows one ranged read, npyRowFetches at a time.
func (s *Source) npyRows(ctx context.Context, p sourcePart, i int, rows []int64) (Tensor, error) {
	rowBytes := p.npy.RowBytes()
	total := int64(len(rows)) * rowBytes
	if total > s.lim.MaxCopySize {
		return Tensor{}, fmt.Errorf("npy: %d rows: fetching %d bytes, more than MaxCopySize %d: %w", len(rows), total, s.lim.MaxCopySize, limits.ErrExceeded)
	}
	data := make([]byte, total)
	first := int64(i) * p.chunkRows // the run's first row in the array
	type run struct{ at, row, n int64 }
	var runs []run
	for k := 0; k < len(rows); {
		e := k + 1
		for e < len(rows) && rows[e] == rows[e-1]+1 {
			e++
		}
		runs = append(runs, run{int64(k), first + rows[k], int64(e - k)})
		k = e
	}
	obj := p.file.remote.Object()
	if err := fanout.Each(ctx, len(runs), npyRowFetches, func(ctx context.Context, k int) error {
		rn := runs[k]
		dst := data[rn.at*rowBytes : (rn.at+rn.n)*rowBytes]
		if err := obj.ReadFull(ctx, dst, p.npy.DataOffset+rn.row*rowBytes); err != nil {
			return objectError(err)
		}
		return nil
	}); err != nil {
		return Tensor{}, err
	}
	a, err := p.npy.Rows(int64(len(rows)), data)
	if err != nil {
		return Tensor{}, err
	}
	d, err := a.Dense()
	if err != nil {
		return Tensor{}, err
	}
	return Tensor{Kind: KindDense, Dense: d}, nil
}

// Version returns what identifies the version of the file f read, as a string: of a file, its
// path, device and inode, size, modification time and change time (to the nanosecond); of an
// object, its URI, size and the store's version (ETag or generation). Two reads of one path
// that give the same Version read the same bytes, as far as the file system or store can tell
// (see ScanDir's Rescan); a chmod or touch of a file gives it another Version, as a write does.
func (f *File) Version() string {
	id := f.Identity()
	if id.Object {
		return fmt.Sprintf("%s\x00%d\x00%s", id.Path, id.Size, id.Version)
	}
	if f.mapping.Info() == nil {
		return f.Path
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%d\x00%d\x00%d", id.Path, id.Device, id.Inode, id.Size, id.Modified.UnixNano(), id.Changed.UnixNano())
}

// Identity is what tells a version of a file from another, attribute by attribute, as the
// file system or store gave it when the file was opened: two versions of one path differ in
// at least one of Device and Inode (or Version), Size, Modified and Changed.
type Identity struct {
	Path   string // the file's path, as opened, or the object's URI
	Object bool   // an object in a store, not a file
	// Device and Inode tell one file from another put at its path (zeros for an object, and
	// where the platform does not say).
	Device, Inode uint64
	Version       string // an object's version, its ETag or generation, which tells one object from another put under its key
	Size          int64
	Modified      time.Time // the modification time; an object's as the store listed it (zero when it said none)
	Changed       time.Time // a file's change time (ctime); zero for an object and where the platform keeps none
}

// Identity returns the identity of the version of the file f read (see Version, which it
// spells out).
func (f *File) Identity() Identity {
	if f.remote != nil {
		o := f.remote.Object()
		return Identity{Path: o.URI.String(), Object: true, Version: o.Version, Size: o.Size, Modified: o.ModTime}
	}
	id := Identity{Path: f.Path}
	if info := f.mapping.Info(); info != nil {
		id.Device, id.Inode = fileid.DevIno(info)
		id.Size, id.Modified, id.Changed = info.Size(), info.ModTime(), fileid.ChangeTimeOf(info)
	}
	return id
}

// Modified returns when the file f read was last modified: the file's modification time, or
// what the store said of the object (zero when it said nothing).
func (f *File) Modified() time.Time {
	if f.remote != nil {
		return f.remote.Object().ModTime
	}
	if info := f.mapping.Info(); info != nil {
		return info.ModTime()
	}
	return time.Time{}
}

// Modified returns the latest modification time of the files of the Source's parts.
func (s *Source) Modified() time.Time {
	var last time.Time
	for _, p := range s.parts {
		if m := p.file.Modified(); m.After(last) {
			last = m
		}
	}
	return last
}

// Versions returns the Version of the file of each of the Source's parts, in order, beside
// the number of chunks each part gives.
func (s *Source) Versions() (versions []string, chunks []int) {
	for _, p := range s.parts {
		n := len(p.rowRows)
		if p.resident != nil {
			n = 1
		}
		versions, chunks = append(versions, p.file.Version()), append(chunks, n)
	}
	return versions, chunks
}

// Identities returns the Identity of the file of each of the Source's parts, in order (as
// Versions and Paths give them).
func (s *Source) Identities() []Identity {
	out := make([]Identity, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.file.Identity()
	}
	return out
}

// Paths returns the path (or URI) of the file of each of the Source's parts, in order.
func (s *Source) Paths() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.file.Path
	}
	return out
}
