package parquet

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/ndarrow/ndarrow/internal/memcopy"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ndarray"
)

// The direct writer writes files whose every column is what the direct reader reads (a flat
// column of numbers or bools, or fixed-size lists of them at any depth:
// arrow.fixed_shape_tensor's storage), or a list or large_list of them (a ragged tensor),
// without pqarrow: the Parquet schema is the one pqarrow gives those columns, but each page's
// repetition and definition levels are RLE runs that follow from the shape or the offsets (one
// run of definition levels, a few runs of repetition levels per row), values are written straight
// from the column's buffer (PLAIN) or split into byte streams (BYTE_STREAM_SPLIT), and the
// pages of a column chunk are built and compressed on GOMAXPROCS goroutines while the caller's
// goroutine writes the finished ones in order. Nulls, at any level, are written level by level.
// Footer and page headers are written by compactWriter; the Arrow schema is stored as pqarrow
// stores it, so every reader restores the same Arrow types.

// Encoding is how the writer encodes column values.
type Encoding int

// The value encodings the writer offers.
const (
	// Plain is Parquet's PLAIN encoding (the default).
	Plain Encoding = iota
	// ByteStreamSplit is Parquet's BYTE_STREAM_SPLIT encoding: value byte k of every value
	// together, which compresses floating-point data better. Only for columns of floats
	// (float16 included) and 32- and 64-bit integers, flat or in fixed-size lists
	// (arrow.fixed_shape_tensor); a column chunk with nulls is written PLAIN.
	ByteStreamSplit
)

// String returns "plain" or "byte_stream_split".
func (e Encoding) String() string {
	switch e {
	case Plain:
		return "plain"
	case ByteStreamSplit:
		return "byte_stream_split"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// ParseEncoding returns the encoding named s (any case; "" is Plain).
func ParseEncoding(s string) (Encoding, error) {
	for _, e := range []Encoding{Plain, ByteStreamSplit} {
		if len(s) == len(e.String()) && bytes.EqualFold([]byte(s), []byte(e.String())) {
			return e, nil
		}
	}
	if s == "" {
		return Plain, nil
	}
	return 0, fmt.Errorf("parquet: encoding %q: not plain or byte_stream_split: %w", s, ErrUnsupported)
}

// thriftCode is the encoding's number in parquet.thrift.
func (e Encoding) thriftCode() int32 {
	if e == ByteStreamSplit {
		return encodingByteStreamSplit
	}
	return 0
}

// pageOverhead is what a page of a fixed-size column takes besides its rows' values and
// repetition levels, at most: its header, the lengths of its levels and a few runs of
// definition levels.
const pageOverhead = 64

// maxDirectRowBytes bounds a row the direct writer takes, so that a page of one row stays far
// below Parquet's 2 GiB page limit.
const maxDirectRowBytes = 1 << 28

// writeColumn is a column the direct writer writes.
type writeColumn struct {
	name     string
	plan     directPlan
	nullable []bool // per list level, then the leaf: whether its Parquet node is optional
	maxDef   int
	maxRep   int
	unsigned bool
	repRow   []levelRun // the repetition levels of one row without nulls
	ops      statsOps

	depth    int  // list levels: the plan's fixed-size lists, or 1 for a variable list
	variable bool // a list or large_list (wide) of the plan's leaf: offsets give each row's values
	wide     bool

	// nested, when set, are the levels of lists nested two deep or more, one variable at
	// least (nestedPlanOf): written level by level (levelEmitter.emitNested).
	nested []nestedLevel
}

// ragged reports whether c's rows vary in length: a variable list, or nested lists.
func (c *writeColumn) ragged() bool { return c.variable || c.nested != nil }

// levelRun is count levels of value v.
type levelRun struct {
	v     int
	count int64
}

// directColumns returns the columns of schema as the direct writer writes them, false when
// any is not a column it writes.
func directColumns(schema *arrow.Schema) ([]writeColumn, bool) {
	cols := make([]writeColumn, 0, schema.NumFields())
	for _, f := range schema.Fields() {
		if levels, leaf, ok := nestedPlanOf(f.Type); ok {
			c := writeColumn{name: f.Name, plan: leaf, depth: len(levels), nested: levels}
			c.nullable = append(c.nullable, true) // every column is written optional (storageSchema)
			for _, lv := range levels {
				c.nullable = append(c.nullable, lv.typ.(arrow.ListLikeType).ElemField().Nullable)
			}
			if !c.setLevelsAndStats() {
				return nil, false
			}
			cols = append(cols, c)
			continue
		}
		plan, ok := directPlanOf(f.Type)
		if !ok {
			switch l := f.Type.(type) {
			case *arrow.ListType:
				plan, ok = directPlanOf(l.Elem())
			case *arrow.LargeListType:
				plan, ok = directPlanOf(l.Elem())
			}
			if ok && len(plan.lists) > 0 {
				ok = false // lists of fixed-size lists: pqarrow's
			}
			plan.lists, plan.sizes = nil, nil
		}
		if !ok || plan.cell*plan.width > maxDirectRowBytes {
			return nil, false
		}
		c := writeColumn{name: f.Name, plan: plan, depth: len(plan.lists)}
		c.nullable = append(c.nullable, true) // every column is written optional (storageSchema)
		for _, l := range plan.lists {
			c.nullable = append(c.nullable, l.ElemField().Nullable)
		}
		if len(plan.lists) == 0 {
			// A list or large_list of a leaf the plan takes: one variable list level.
			var elem arrow.Field
			switch l := f.Type.(type) {
			case *arrow.ListType:
				elem = l.ElemField()
			case *arrow.LargeListType:
				elem, c.wide = l.ElemField(), true
			}
			if elem.Type != nil {
				c.variable, c.depth = true, 1
				c.nullable = append(c.nullable, elem.Nullable)
			}
		}
		if !c.setLevelsAndStats() {
			return nil, false
		}
		c.repRow = repTemplate(plan.sizes)
		cols = append(cols, c)
	}
	return cols, true
}

// setLevelsAndStats sets c's maximum levels and statistics from its depth, nullability and
// leaf; false for a leaf the direct writer does not write.
func (c *writeColumn) setLevelsAndStats() bool {
	c.maxRep = c.depth
	c.maxDef = 0
	for _, n := range c.nullable {
		if n {
			c.maxDef++
		}
	}
	c.maxDef += c.depth // a repeated node per list
	switch c.plan.leaf.ID() {
	case arrow.BOOL:
		c.ops = boolStats()
	case arrow.FLOAT16:
		c.ops = float16Stats()
	case arrow.FLOAT32:
		c.ops = floatStats[float32]()
	case arrow.FLOAT64:
		c.ops = floatStats[float64]()
	case arrow.INT32:
		c.ops = intStats[int32]()
	case arrow.INT64:
		c.ops = intStats[int64]()
	case arrow.UINT32:
		c.ops, c.unsigned = intStats[uint32](), true
	case arrow.UINT64:
		c.ops, c.unsigned = intStats[uint64](), true
	case arrow.FIXED_SIZE_BINARY:
		c.ops = binaryStats(int(c.plan.width))
	default:
		return false
	}
	return true
}

// repTemplate returns the repetition levels of one row of nested lists of sizes (outer to
// inner, none empty) as runs: a value's level is one more than the outermost list whose index
// it advances.
func repTemplate(sizes []int64) []levelRun {
	if len(sizes) == 0 {
		return []levelRun{{0, 1}}
	}
	strides := make([]int64, len(sizes))
	cell := int64(1)
	for k := len(sizes) - 1; k >= 0; k-- {
		strides[k] = cell
		cell *= sizes[k]
	}
	runs := []levelRun{{0, 1}}
	for s := int64(1); s < cell; s++ {
		v := len(sizes)
		for k, st := range strides {
			if s%st == 0 {
				v = k + 1
				break
			}
		}
		if last := &runs[len(runs)-1]; last.v == v {
			last.count++
		} else {
			runs = append(runs, levelRun{v, 1})
		}
	}
	return runs
}

// runEncoder writes levels in Parquet's RLE/bit-packing hybrid: a run of 8 or more equal
// levels as an RLE run; shorter ones gathered and, once they make a group of 8, bit-packed in
// groups (a group begun before a long run is completed from it), as Arrow C++ and arrow-go
// write them: a pattern of short runs (the levels of small cells: 0 2 2 1 2 2 …) takes its
// bit width a level, not two bytes a run. Fewer than 8 short levels before a long run (a
// tensor row's first level before the rest) stay RLE runs, which readers walk fastest.
type runEncoder struct {
	b     []byte
	bits  int // bit width of a level
	width int // bytes of an RLE run's value
	v     int // the pending run
	n     int64
	lit   []int // levels waiting to be bit-packed
}

func (e *runEncoder) reset(maxLevel int) {
	e.bits = bits.Len(uint(maxLevel))
	e.b, e.width, e.n, e.lit = e.b[:0], (e.bits+7)/8, 0, e.lit[:0]
}

func (e *runEncoder) add(v int, n int64) {
	if n == 0 {
		return
	}
	if e.n > 0 && v == e.v {
		e.n += n
		return
	}
	e.settle()
	e.v, e.n = v, n
}

// settle encodes the pending run: bit-packed with the levels before it when short, else as
// an RLE run once the levels before it are bit-packed.
func (e *runEncoder) settle() {
	v, n := e.v, e.n
	e.n = 0
	if n == 0 {
		return
	}
	if n < 8 && e.bits > 0 {
		for range n {
			e.lit = append(e.lit, v)
		}
		if len(e.lit) >= 512 {
			e.pack(len(e.lit) / 8)
		}
		return
	}
	if len(e.lit) < 8 {
		e.literalRuns() // a short run or two before a long one: RLE runs, as they were
	} else if k := len(e.lit) % 8; k != 0 {
		take := min(int64(8-k), n)
		for range take {
			e.lit = append(e.lit, v)
		}
		n -= take
	}
	if len(e.lit) > 0 {
		e.pack(len(e.lit) / 8)
	}
	e.rle(v, n)
}

// rle writes n levels of v as RLE runs.
func (e *runEncoder) rle(v int, n int64) {
	for n > 0 {
		c := min(n, 1<<30) // readers take run lengths as 32-bit counts
		e.b = binary.AppendUvarint(e.b, uint64(c)<<1)
		for i := range e.width {
			e.b = append(e.b, byte(v>>(8*i)))
		}
		n -= c
	}
}

// literalRuns writes the gathered levels as RLE runs, equal neighbours merged.
func (e *runEncoder) literalRuns() {
	for i := 0; i < len(e.lit); {
		j := i
		for j < len(e.lit) && e.lit[j] == e.lit[i] {
			j++
		}
		e.rle(e.lit[i], int64(j-i))
		i = j
	}
	e.lit = e.lit[:0]
}

// pack writes the first groups×8 gathered levels as one bit-packed run and keeps the rest.
func (e *runEncoder) pack(groups int) {
	if groups == 0 {
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(groups)<<1|1)
	start := len(e.b)
	e.b = append(e.b, make([]byte, groups*e.bits)...)
	out := e.b[start:]
	for i, v := range e.lit[:groups*8] {
		for j := range e.bits {
			if v>>j&1 != 0 {
				bit := i*e.bits + j
				out[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	e.lit = append(e.lit[:0], e.lit[groups*8:]...)
}

// flush ends the levels: the pending run, and the gathered levels padded to a group (the
// reader stops at the page's count).
func (e *runEncoder) flush() {
	e.settle()
	if len(e.lit) < 8 {
		e.literalRuns()
		return
	}
	if k := len(e.lit) % 8; k != 0 {
		for range 8 - k {
			e.lit = append(e.lit, 0)
		}
	}
	e.pack(len(e.lit) / 8)
}

// statsOps are a leaf type's statistics: minMax returns the least and greatest of the n
// values in values (little-endian bytes, or bits for bools; NaNs ignored; a zero minimum is
// -0 and a zero maximum +0, as Parquet asks) PLAIN-encoded, false when there is none; less
// orders two such values.
type statsOps struct {
	minMax func(values []byte, n int64) (lo, hi []byte, ok bool)
	less   func(a, b []byte) bool
}

// boolStats are the statistics of bools (false before true), bit-packed as PLAIN has them
// and written as one byte each.
func boolStats() statsOps {
	return statsOps{
		minMax: func(values []byte, n int64) ([]byte, []byte, bool) {
			if n == 0 {
				return nil, nil, false
			}
			set := int64(bitutil.CountSetBits(values, 0, int(n)))
			lo, hi := byte(0), byte(0)
			if set == n {
				lo = 1
			}
			if set > 0 {
				hi = 1
			}
			return []byte{lo}, []byte{hi}, true
		},
		less: func(a, b []byte) bool { return a[0] < b[0] },
	}
}

func floatStats[T float32 | float64]() statsOps {
	return statsOps{
		minMax: func(values []byte, _ int64) ([]byte, []byte, bool) {
			v, _ := ndarray.ViewBytes[T](values)
			i := 0
			for i < len(v) && v[i] != v[i] {
				i++ // NaN
			}
			if i == len(v) {
				return nil, nil, false
			}
			lo, hi := v[i], v[i]
			for _, x := range v[i:] {
				if x < lo {
					lo = x
				} else if x > hi {
					hi = x
				}
			}
			if lo == 0 {
				lo = T(math.Copysign(0, -1))
			}
			if hi == 0 {
				hi = 0
			}
			return ndarray.LittleEndianBytes([]T{lo}), ndarray.LittleEndianBytes([]T{hi}), true
		},
		less: func(a, b []byte) bool {
			x, _ := ndarray.ViewBytes[T](a)
			y, _ := ndarray.ViewBytes[T](b)
			return x[0] < y[0]
		},
	}
}

// float16Stats are floatStats for IEEE half-precision values, compared as float64.
func float16Stats() statsOps {
	value := func(b []byte) float64 { return ndarray.HalfToFloat64(float16.FromLEBytes(b)) }
	return statsOps{
		minMax: func(values []byte, _ int64) ([]byte, []byte, bool) {
			lo, hi, found := -1, -1, false
			for i := 0; i+2 <= len(values); i += 2 {
				x := value(values[i:])
				if x != x {
					continue // NaN
				}
				if !found {
					lo, hi, found = i, i, true
				} else if x < value(values[lo:]) {
					lo = i
				} else if x > value(values[hi:]) {
					hi = i
				}
			}
			if !found {
				return nil, nil, false
			}
			min, max := append([]byte(nil), values[lo:lo+2]...), append([]byte(nil), values[hi:hi+2]...)
			if value(min) == 0 {
				min = []byte{0, 0x80} // -0
			}
			if value(max) == 0 {
				max = []byte{0, 0} // +0
			}
			return min, max, true
		},
		less: func(a, b []byte) bool { return value(a) < value(b) },
	}
}

func intStats[T int32 | int64 | uint32 | uint64]() statsOps {
	return statsOps{
		minMax: func(values []byte, _ int64) ([]byte, []byte, bool) {
			v, _ := ndarray.ViewBytes[T](values)
			if len(v) == 0 {
				return nil, nil, false
			}
			lo, hi := v[0], v[0]
			for _, x := range v {
				lo, hi = min(lo, x), max(hi, x)
			}
			return ndarray.LittleEndianBytes([]T{lo}), ndarray.LittleEndianBytes([]T{hi}), true
		},
		less: func(a, b []byte) bool {
			x, _ := ndarray.ViewBytes[T](a)
			y, _ := ndarray.ViewBytes[T](b)
			return x[0] < y[0]
		},
	}
}

// binaryStats are the statistics of fixed-length byte arrays of width bytes: ordered as
// unsigned bytes, lexicographically (the order Parquet defines for them).
func binaryStats(width int) statsOps {
	return statsOps{
		minMax: func(values []byte, n int64) ([]byte, []byte, bool) {
			if n == 0 || width == 0 {
				return nil, nil, false
			}
			lo, hi := values[:width], values[:width]
			for i := width; i+width <= len(values); i += width {
				v := values[i : i+width]
				if bytes.Compare(v, lo) < 0 {
					lo = v
				}
				if bytes.Compare(v, hi) > 0 {
					hi = v
				}
			}
			return bytes.Clone(lo), bytes.Clone(hi), true
		},
		less: func(a, b []byte) bool { return bytes.Compare(a, b) < 0 },
	}
}

// chunkStats accumulates a column chunk's statistics.
type chunkStats struct {
	lo, hi []byte
	nulls  int64
}

func (s *chunkStats) merge(ops statsOps, lo, hi []byte, nulls int64) {
	s.nulls += nulls
	if lo == nil {
		return
	}
	if s.lo == nil || ops.less(lo, s.lo) {
		s.lo = lo
	}
	if s.hi == nil || ops.less(s.hi, hi) {
		s.hi = hi
	}
}

// directWriter writes a Parquet file of writeColumns.
type directWriter struct {
	out      *bufio.Writer
	pos      int64
	schema   *arrow.Schema
	cols     []writeColumn
	codec    Compression
	encoding Encoding
	mem      memory.Allocator
	// pageBytes is what a page holds at most (WriterOptions.PageBytes: whole rows, at least one).
	pageBytes int64

	pending     []arrow.Record // the open row group's rows, retained
	pendingRows int64
	groups      []rowGroupMeta
	err         error // the first write error: the file is broken after it
}

type rowGroupMeta struct {
	rows, bytes, compressed, offset int64
	chunks                          []chunkMeta
}

type chunkMeta struct {
	values, uncompressed, compressed, offset int64
	stats                                    chunkStats
	encoding                                 Encoding

	// pages describe the chunk's pages while it is written; columnIndex and offsetIndex are
	// then its page index (ColumnIndex and OffsetIndex, compact Thrift; columnIndex nil when
	// a page has values but no minimum and maximum: NaNs only), written before the footer at
	// columnIndexAt and offsetIndexAt.
	pages                        []pageEntry
	columnIndex, offsetIndex     []byte
	columnIndexAt, offsetIndexAt int64
}

func newDirectWriter(w io.Writer, schema *arrow.Schema, cols []writeColumn, opts WriterOptions) (*directWriter, error) {
	d := &directWriter{out: bufio.NewWriterSize(w, 64<<10), schema: schema, cols: cols,
		codec: opts.Compression, encoding: opts.Encoding, mem: opts.Allocator, pageBytes: opts.PageBytes}
	if d.pageBytes <= 0 {
		d.pageBytes = DefaultPageBytes
	}
	if _, err := d.compressor(); err != nil {
		return nil, err
	}
	d.write([]byte("PAR1"))
	return d, d.err
}

func (d *directWriter) write(b []byte) {
	if d.err != nil {
		return
	}
	n, err := d.out.Write(b)
	d.pos += int64(n)
	if err != nil {
		d.err = fmt.Errorf("parquet: %w", err)
	}
}

// check returns an error when rec holds what the writer does not write.
func (d *directWriter) check(rec arrow.Record) error {
	for i := range d.cols {
		if err := d.cols[i].checkNoNullLists(rec, i); err != nil {
			return err
		}
	}
	return nil
}

// add appends rec's rows to the open row group (retained until it is written).
func (d *directWriter) add(rec arrow.Record) {
	rec.Retain()
	d.pending = append(d.pending, rec)
	d.pendingRows += rec.NumRows()
}

// flush writes the open row group, if it has rows.
func (d *directWriter) flush() error {
	parts := d.pending
	d.pending, d.pendingRows = nil, 0
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if len(parts) == 0 || d.err != nil {
		return d.err
	}
	return d.writeRowGroup(parts)
}

// writeRowGroup writes the rows of parts as one row group, column chunk by column chunk.
func (d *directWriter) writeRowGroup(parts []arrow.Record) error {
	g := rowGroupMeta{offset: d.pos}
	for _, p := range parts {
		g.rows += p.NumRows()
	}
	for i := range d.cols {
		c, err := d.writeChunk(i, parts)
		if err != nil {
			if d.err == nil {
				d.err = err
			}
			return d.err
		}
		g.bytes += c.uncompressed
		g.compressed += c.compressed
		g.chunks = append(g.chunks, c)
	}
	d.groups = append(d.groups, g)
	return d.err
}

// pageSpec is rows [lo, hi) of a part.
type pageSpec struct {
	part   arrow.Record
	lo, hi int64
}

// builtPage is a page ready to write: its header and body pieces.
type builtPage struct {
	done         chan struct{}
	header       []byte
	body         [][]byte
	values       int64 // levels, nulls included
	firstRow     int64 // the row group's row the page begins with
	uncompressed int64
	compressed   int64
	lo, hi       []byte
	nulls        int64
	scratch      *pageScratch
	err          error
}

// pageScratch is a worker's buffers for one page, reused from page to page.
type pageScratch struct {
	rep, def runEncoder
	levels   []byte
	gather   []byte
	page     []byte
	out      []byte
}

var scratchPool = sync.Pool{New: func() any { return new(pageScratch) }}

// writeChunk writes column i of parts as one column chunk.
func (d *directWriter) writeChunk(i int, parts []arrow.Record) (chunkMeta, error) {
	c := &d.cols[i]
	m := chunkMeta{offset: d.pos, encoding: d.encoding}
	if m.encoding == ByteStreamSplit && (c.plan.bitPacked || c.ragged() || c.hasNulls(i, parts)) {
		// ndarrow's reader, like arrow-go's, reads BYTE_STREAM_SPLIT only in columns without
		// nulls: a chunk with nulls is written PLAIN, which every reader reads.
		m.encoding = Plain
	}
	workers := runtime.GOMAXPROCS(0)
	window := 2*workers + 2
	sem := make(chan struct{}, workers)
	var queue []*builtPage
	var err error
	// writeFront writes the oldest page when it is built; after an error it only waits for it.
	writeFront := func() error {
		p := queue[0]
		queue = queue[1:]
		<-p.done
		defer scratchPool.Put(p.scratch)
		if err != nil || p.err != nil {
			return p.err
		}
		m.pages = append(m.pages, pageEntry{offset: d.pos, size: int64(len(p.header)) + p.compressed,
			firstRow: p.firstRow, lo: p.lo, hi: p.hi, nulls: p.nulls, nullPage: p.values == p.nulls})
		d.write(p.header)
		for _, b := range p.body {
			d.write(b)
		}
		m.values += p.values
		m.uncompressed += int64(len(p.header)) + p.uncompressed
		m.compressed += int64(len(p.header)) + p.compressed
		m.stats.merge(c.ops, p.lo, p.hi, p.nulls)
		return d.err
	}
	base := int64(0) // the rows of the parts before
	for _, part := range parts {
		bounds := c.pageBounds(part, i, d.pageBytes)
		for k := 0; k+1 < len(bounds) && err == nil; k++ {
			p := &builtPage{done: make(chan struct{}), scratch: scratchPool.Get().(*pageScratch), firstRow: base + bounds[k]}
			spec := pageSpec{part: part, lo: bounds[k], hi: bounds[k+1]}
			sem <- struct{}{}
			go func() {
				defer func() {
					if r := recover(); r != nil {
						p.err = fmt.Errorf("parquet: writing column %q: %v", c.name, r)
					}
					<-sem
					close(p.done)
				}()
				// The values may be a mapped file's (convert of a .npy or an Arrow file): a
				// fault on a page of a file that shrank is an error, not a crash.
				if err := mmap.Guard(func() error { d.buildPage(c, i, spec, m.encoding, p); return p.err }); err != nil {
					p.err = fmt.Errorf("parquet: writing column %q: %w", c.name, err)
				}
			}()
			queue = append(queue, p)
			for err == nil && len(queue) > 0 && (len(queue) >= window || finished(queue[0])) {
				err = writeFront()
			}
		}
		base += part.NumRows()
	}
	for len(queue) > 0 {
		if e := writeFront(); err == nil {
			err = e
		}
	}
	if err == nil {
		m.columnIndex, m.offsetIndex = c.pageIndex(m.pages)
	}
	m.pages = nil
	return m, err
}

// pageBounds returns where the pages of column i of part begin, and its row count: whole
// rows (a page never begins inside a row, as the page index asks), about pageBytes of values
// a page (at least a row).
func (c *writeColumn) pageBounds(part arrow.Record, i int, pageBytes int64) []int64 {
	rows := part.NumRows()
	bounds := []int64{0}
	if !c.ragged() {
		// A row's values and, roughly, its repetition levels (two bytes a run: a page
		// of 1 KiB rows holds 63 of them in 64 KiB); the header and the runs of
		// definition levels take less than pageOverhead.
		row := c.plan.cell * c.plan.width
		if c.depth > 0 {
			row += 2 * int64(len(c.repRow))
		}
		perPage := max(1, (pageBytes-pageOverhead)/row)
		for lo := perPage; lo < rows; lo += perPage {
			bounds = append(bounds, lo)
		}
		return append(bounds, rows)
	}
	if c.nested != nil {
		datas := c.levels(part, i)
		perPage := max(1, pageBytes/c.plan.width)
		first := int64(-1)
		for r := int64(0); r < rows; r++ {
			start, count, _ := c.nestedSpan(datas, 0, r+1, false)
			if first < 0 {
				first = start
			}
			if start+count-first >= perPage && r+1 < rows {
				bounds = append(bounds, r+1)
				first = start + count
			}
		}
		return append(bounds, rows)
	}
	top := part.Column(i).Data()
	perPage := max(1, pageBytes/c.plan.width)
	first, _ := c.valueRange(top, 0, 0)
	for r := int64(0); r < rows; r++ {
		if _, end := c.valueRange(top, 0, r+1); end-first >= perPage && r+1 < rows {
			bounds = append(bounds, r+1)
			first = end
		}
	}
	return append(bounds, rows)
}

// valueRange returns the child values rows [lo, hi) of variable list data top cover.
func (c *writeColumn) valueRange(top arrow.ArrayData, lo, hi int64) (start, end int64) {
	at := int64(top.Offset())
	if c.wide {
		o := arrow.Int64Traits.CastFromBytes(top.Buffers()[1].Bytes())
		return o[at+lo], o[at+hi]
	}
	o := arrow.Int32Traits.CastFromBytes(top.Buffers()[1].Bytes())
	return int64(o[at+lo]), int64(o[at+hi])
}

func finished(p *builtPage) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// buildPage encodes rows spec of column c (the record's column i) as a data page (v1) into p.
func (d *directWriter) buildPage(c *writeColumn, i int, spec pageSpec, encoding Encoding, p *builtPage) {
	s := p.scratch
	s.rep.reset(c.maxRep)
	s.def.reset(c.maxDef)
	rows := spec.hi - spec.lo
	datas := c.levels(spec.part, i)
	top := datas[0]
	start, count, nulls := c.leafRange(datas, spec.lo, rows)
	width := c.plan.width
	leaf := datas[len(datas)-1].Buffers()[1].Bytes()
	var values []byte
	nvals := count // values (not nulls, not empty lists)
	switch {
	case c.nested != nil:
		s.gather = s.gather[:0]
		e := levelEmitter{c: c, datas: datas, leaf: leaf, s: s}
		for r := range rows {
			e.emitNested(0, int64(top.Offset())+spec.lo+r, 0, 0)
		}
		p.values, p.nulls = e.levels, e.nulls
		values, nvals = s.gather, e.levels-e.nulls
	case c.variable:
		values, nvals = c.variableLevels(datas, spec.lo, rows, nulls, s, p)
	case !nulls:
		for range rows {
			for _, r := range c.repRow {
				s.rep.add(r.v, r.count)
			}
		}
		p.values = count
		s.def.add(c.maxDef, count)
		if c.plan.bitPacked { // PLAIN bools are the bits from the page's first
			s.gather = grow(s.gather, int((count+7)/8))
			clear(s.gather)
			bitutil.CopyBitmap(leaf, int(start), int(count), s.gather, 0)
			values = s.gather
		} else {
			values = leaf[start*width : (start+count)*width]
		}
	default:
		s.gather = s.gather[:0]
		e := levelEmitter{c: c, datas: datas, leaf: leaf, s: s}
		for r := range rows {
			e.emit(0, int64(top.Offset())+spec.lo+r, 0, 0)
		}
		p.values, p.nulls = e.levels, e.nulls
		values, nvals = s.gather, e.levels-e.nulls
	}
	s.rep.flush()
	s.def.flush()
	s.levels = s.levels[:0]
	if c.maxRep > 0 {
		s.levels = binary.LittleEndian.AppendUint32(s.levels, uint32(len(s.rep.b)))
		s.levels = append(s.levels, s.rep.b...)
	}
	if c.maxDef > 0 {
		s.levels = binary.LittleEndian.AppendUint32(s.levels, uint32(len(s.def.b)))
		s.levels = append(s.levels, s.def.b...)
	}
	p.lo, p.hi, _ = c.ops.minMax(values, nvals)
	p.uncompressed = int64(len(s.levels) + len(values))

	if d.codec == Uncompressed {
		if encoding == ByteStreamSplit {
			s.page = grow(s.page, len(values))
			split(s.page, values, int(width))
			values = s.page
		}
		p.body = [][]byte{s.levels, values}
		p.compressed = p.uncompressed
	} else {
		s.page = grow(s.page, int(p.uncompressed))
		copy(s.page, s.levels)
		if encoding == ByteStreamSplit {
			split(s.page[len(s.levels):], values, int(width))
		} else {
			memcopy.Copy(s.page[len(s.levels):], values)
		}
		compress, _ := d.compressor()
		s.out, p.err = compress(s.out[:0], s.page)
		if p.err != nil {
			return
		}
		p.body = [][]byte{s.out}
		p.compressed = int64(len(s.out))
	}
	var h compactWriter
	h.begin()
	h.i32(1, pageData)
	h.i32(2, int32(p.uncompressed))
	h.i32(3, int32(p.compressed))
	h.structField(5)
	h.i32(1, int32(p.values))
	h.i32(2, encoding.thriftCode())
	h.i32(3, 3) // RLE levels
	h.i32(4, 3)
	h.end()
	h.end()
	p.header = h.b
}

// variableLevels writes the levels of rows [lo, lo+rows) of a variable list column (datas: the
// lists, their values) into s and returns the page's values (a view of the column's, or
// gathered into s when some are null or bools) and their number. The levels of a row of k
// values, none null: repetition 0 then k-1 ones, definition k times the maximum; an empty
// row is one level (definition: the list present, empty), a null row one level of 0.
func (c *writeColumn) variableLevels(datas []arrow.ArrayData, lo, rows int64, nulls bool, s *pageScratch, p *builtPage) ([]byte, int64) {
	top, child := datas[0], datas[1]
	width := c.plan.width
	leaf := child.Buffers()[1].Bytes()
	emptyDef := 0
	if c.nullable[0] {
		emptyDef = 1
	}
	first, last := c.valueRange(top, lo, lo+rows)
	if !nulls {
		for r := lo; r < lo+rows; r++ {
			a, b := c.valueRange(top, r, r+1)
			if k := b - a; k == 0 {
				s.rep.add(0, 1)
				s.def.add(emptyDef, 1)
				p.values++
				p.nulls++
			} else {
				s.rep.add(0, 1)
				s.rep.add(1, k-1)
				s.def.add(c.maxDef, k)
				p.values += k
			}
		}
		start, count := int64(child.Offset())+first, last-first
		if c.plan.bitPacked {
			s.gather = grow(s.gather, int((count+7)/8))
			clear(s.gather)
			bitutil.CopyBitmap(leaf, int(start), int(count), s.gather, 0)
			return s.gather, count
		}
		return leaf[start*width : (start+count)*width], count
	}
	s.gather = s.gather[:0]
	topValid, childValid := top.Buffers()[0], child.Buffers()[0]
	n := int64(0)
	for r := lo; r < lo+rows; r++ {
		if topValid != nil && top.NullN() != 0 && !bitutil.BitIsSet(topValid.Bytes(), top.Offset()+int(r)) {
			s.rep.add(0, 1)
			s.def.add(0, 1)
			p.values++
			p.nulls++
			continue
		}
		a, b := c.valueRange(top, r, r+1)
		if a == b {
			s.rep.add(0, 1)
			s.def.add(emptyDef, 1)
			p.values++
			p.nulls++
			continue
		}
		for j := a; j < b; j++ {
			rep := 1
			if j == a {
				rep = 0
			}
			s.rep.add(rep, 1)
			p.values++
			at := int64(child.Offset()) + j
			if c.nullable[1] && childValid != nil && child.NullN() != 0 && !bitutil.BitIsSet(childValid.Bytes(), int(at)) {
				s.def.add(c.maxDef-1, 1)
				p.nulls++
				continue
			}
			s.def.add(c.maxDef, 1)
			if c.plan.bitPacked {
				if n%8 == 0 {
					s.gather = append(s.gather, 0)
				}
				if bitutil.BitIsSet(leaf, int(at)) {
					bitutil.SetBit(s.gather, int(n))
				}
			} else {
				s.gather = append(s.gather, leaf[at*width:(at+1)*width]...)
			}
			n++
		}
	}
	return s.gather, n
}

// leafRange returns the physical range of leaf values rows [lo, lo+rows) of the column
// (datas: its levels, outer to inner) cover, and whether any level of them is null.
func (c *writeColumn) leafRange(datas []arrow.ArrayData, lo, rows int64) (start, count int64, nulls bool) {
	if c.nested != nil {
		return c.nestedSpan(datas, lo, rows, true)
	}
	start, count = int64(datas[0].Offset())+lo, rows
	for k, data := range datas {
		switch {
		case k > 0 && c.variable:
			first, last := c.valueRange(datas[0], lo, lo+rows)
			start, count = int64(data.Offset())+first, last-first
		case k > 0:
			start, count = int64(data.Offset())+start*c.plan.sizes[k-1], count*c.plan.sizes[k-1]
		}
		if v := data.Buffers()[0]; v != nil && data.NullN() != 0 &&
			int64(bitutil.CountSetBits(v.Bytes(), int(start), int(count))) != count {
			nulls = true
		}
	}
	return start, count, nulls
}

// levels returns the arrays of column i of rec, outer to inner.
func (c *writeColumn) levels(rec arrow.Record, i int) []arrow.ArrayData {
	datas := []arrow.ArrayData{rec.Column(i).Data()}
	for range c.depth {
		datas = append(datas, datas[len(datas)-1].Children()[0])
	}
	return datas
}

// checkNoNullLists returns an error naming the first row of column i of rec with a null list
// at any level: a null fixed-size list is written as an empty list, which neither Arrow C++
// nor arrow-go reads back (pqarrow refuses to write one).
func (c *writeColumn) checkNoNullLists(rec arrow.Record, i int) error {
	if c.variable {
		return nil // a null list row is a level of 0, which every reader reads
	}
	if c.nested != nil {
		return c.checkNoNullFixedLists(rec, i)
	}
	datas := c.levels(rec, i)
	start, count, per := int64(datas[0].Offset()), rec.NumRows(), int64(1)
	for k, data := range datas[:len(c.plan.lists)] {
		if k > 0 {
			start, count, per = int64(data.Offset())+start*c.plan.sizes[k-1], count*c.plan.sizes[k-1], per*c.plan.sizes[k-1]
		}
		v := data.Buffers()[0]
		if v == nil || data.NullN() == 0 || int64(bitutil.CountSetBits(v.Bytes(), int(start), int(count))) == count {
			continue
		}
		for j := range count {
			if !bitutil.BitIsSet(v.Bytes(), int(start+j)) {
				return fmt.Errorf("parquet: column %q, row %d: a null fixed-size list, which Parquet readers (Arrow C++, pyarrow, arrow-go) do not read back: %w",
					c.name, j/per, ErrUnsupported)
			}
		}
	}
	return nil
}

// hasNulls reports whether column i of parts has a null at any level.
func (c *writeColumn) hasNulls(i int, parts []arrow.Record) bool {
	for _, p := range parts {
		if _, _, nulls := c.leafRange(c.levels(p, i), 0, p.NumRows()); nulls {
			return true
		}
	}
	return false
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// levelEmitter writes the levels (and gathers the values) of rows with nulls, value by value.
type levelEmitter struct {
	c      *writeColumn
	datas  []arrow.ArrayData
	leaf   []byte
	s      *pageScratch
	levels int64
	nulls  int64
	bits   int64 // bools gathered
}

// emit writes element idx (physical) of level k, its first level being rep, with def levels
// above it.
func (e *levelEmitter) emit(k int, idx int64, rep, def int) {
	data := e.datas[k]
	if e.c.nullable[k] {
		if v := data.Buffers()[0]; v != nil && !bitutil.BitIsSet(v.Bytes(), int(idx)) {
			e.s.rep.add(rep, 1)
			e.s.def.add(def, 1)
			e.levels++
			e.nulls++
			return
		}
		def++
	}
	if k == len(e.c.plan.lists) {
		e.s.rep.add(rep, 1)
		e.s.def.add(def, 1)
		e.levels++
		if e.c.plan.bitPacked {
			if e.bits%8 == 0 {
				e.s.gather = append(e.s.gather, 0)
			}
			if bitutil.BitIsSet(e.leaf, int(idx)) {
				bitutil.SetBit(e.s.gather, int(e.bits))
			}
			e.bits++
			return
		}
		w := e.c.plan.width
		e.s.gather = append(e.s.gather, e.leaf[idx*w:(idx+1)*w]...)
		return
	}
	n := e.c.plan.sizes[k]
	child := int64(e.datas[k+1].Offset()) + idx*n
	for j := range n {
		r := rep
		if j > 0 {
			r = k + 1
		}
		e.emit(k+1, child+j, r, def+1)
	}
}

// emitNested writes element idx (physical) of level k of a nested column (writeColumn.nested),
// its first level being rep, with def levels above it: a null is one level, an empty list one
// level, a list each of its elements in turn — the innermost list's values in one go when none
// is null.
func (e *levelEmitter) emitNested(k int, idx int64, rep, def int) {
	c := e.c
	data := e.datas[k]
	if c.nullable[k] {
		if v := data.Buffers()[0]; v != nil && data.NullN() != 0 && !bitutil.BitIsSet(v.Bytes(), int(idx)) {
			e.s.rep.add(rep, 1)
			e.s.def.add(def, 1)
			e.levels++
			e.nulls++
			return
		}
		def++
	}
	if k == c.depth {
		e.s.rep.add(rep, 1)
		e.s.def.add(def, 1)
		e.levels++
		e.gather(idx, 1)
		return
	}
	a, b := c.children(e.datas, k, idx)
	if a == b { // empty
		e.s.rep.add(rep, 1)
		e.s.def.add(def, 1)
		e.levels++
		e.nulls++
		return
	}
	if k == c.depth-1 {
		leaf := e.datas[k+1]
		if v := leaf.Buffers()[0]; !c.nullable[k+1] || v == nil || leaf.NullN() == 0 ||
			int64(bitutil.CountSetBits(v.Bytes(), int(a), int(b-a))) == b-a {
			full := def + 1
			if c.nullable[k+1] {
				full++
			}
			e.s.rep.add(rep, 1)
			e.s.rep.add(k+1, b-a-1)
			e.s.def.add(full, b-a)
			e.levels += b - a
			e.gather(a, b-a)
			return
		}
	}
	for j := a; j < b; j++ {
		r := rep
		if j > a {
			r = k + 1
		}
		e.emitNested(k+1, j, r, def+1)
	}
}

// gather appends n leaf values from physical index idx to the page's values.
func (e *levelEmitter) gather(idx, n int64) {
	if e.c.plan.bitPacked {
		if size := int((e.bits + n + 7) / 8); size > len(e.s.gather) {
			e.s.gather = append(e.s.gather, make([]byte, size-len(e.s.gather))...)
		}
		bitutil.CopyBitmap(e.leaf, int(idx), int(n), e.s.gather, int(e.bits))
		e.bits += n
		return
	}
	w := e.c.plan.width
	e.s.gather = append(e.s.gather, e.leaf[idx*w:(idx+n)*w]...)
}

// children returns the physical range, in datas[k+1], of the elements of list idx (physical)
// of level k of a nested column.
func (c *writeColumn) children(datas []arrow.ArrayData, k int, idx int64) (a, b int64) {
	child := int64(datas[k+1].Offset())
	lv := c.nested[k]
	if lv.fixed > 0 {
		return child + idx*lv.fixed, child + (idx+1)*lv.fixed
	}
	if lv.wide {
		o := arrow.Int64Traits.CastFromBytes(datas[k].Buffers()[1].Bytes())
		return child + o[idx], child + o[idx+1]
	}
	o := arrow.Int32Traits.CastFromBytes(datas[k].Buffers()[1].Bytes())
	return child + int64(o[idx]), child + int64(o[idx+1])
}

// nestedSpan returns the physical range of leaf values rows [lo, lo+rows) of a nested column
// cover and, with withNulls (a count of bits over the range), whether any level of them is
// null.
func (c *writeColumn) nestedSpan(datas []arrow.ArrayData, lo, rows int64, withNulls bool) (start, count int64, nulls bool) {
	start, count = int64(datas[0].Offset())+lo, rows
	for k, data := range datas {
		if v := data.Buffers()[0]; withNulls && v != nil && data.NullN() != 0 && count > 0 &&
			int64(bitutil.CountSetBits(v.Bytes(), int(start), int(count))) != count {
			nulls = true
		}
		if k == c.depth {
			break
		}
		if count == 0 {
			start = int64(datas[k+1].Offset())
			continue
		}
		a, _ := c.children(datas, k, start)
		_, b := c.children(datas, k, start+count-1)
		start, count = a, b-a
	}
	return start, count, nulls
}

// checkNoNullFixedLists returns an error naming the first row of nested column i of rec with
// a null fixed-size list (see checkNoNullLists).
func (c *writeColumn) checkNoNullFixedLists(rec arrow.Record, i int) error {
	datas := c.levels(rec, i)
	hasNull := func(k int, start, count int64) bool {
		v := datas[k].Buffers()[0]
		return c.nested[k].fixed > 0 && v != nil && datas[k].NullN() != 0 && count > 0 &&
			int64(bitutil.CountSetBits(v.Bytes(), int(start), int(count))) != count
	}
	// Row by row, only when the whole column has one.
	span := func(lo, rows int64) bool {
		start, count := int64(datas[0].Offset())+lo, rows
		for k := range c.depth {
			if hasNull(k, start, count) {
				return true
			}
			if count == 0 {
				return false
			}
			a, _ := c.children(datas, k, start)
			_, b := c.children(datas, k, start+count-1)
			start, count = a, b-a
		}
		return false
	}
	if !span(0, rec.NumRows()) {
		return nil
	}
	for r := range rec.NumRows() {
		if span(r, 1) {
			return fmt.Errorf("parquet: column %q, row %d: a null fixed-size list, which Parquet readers (Arrow C++, pyarrow, arrow-go) do not read back: %w",
				c.name, r, ErrUnsupported)
		}
	}
	return nil
}

// split writes src's values of width bytes as BYTE_STREAM_SPLIT: byte k of every value, then
// byte k+1.
func split(dst, src []byte, width int) {
	n := len(src) / width
	switch width {
	case 4:
		v, ok := ndarray.ViewBytes[uint32](src)
		if ok {
			d0, d1, d2, d3 := dst[:n], dst[n:2*n], dst[2*n:3*n], dst[3*n:4*n]
			for i, x := range v {
				d0[i], d1[i], d2[i], d3[i] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
			}
			return
		}
	case 8:
		v, ok := ndarray.ViewBytes[uint64](src)
		if ok {
			for i, x := range v {
				for b := range 8 {
					dst[b*n+i] = byte(x >> (8 * b))
				}
			}
			return
		}
	}
	for i := range n {
		for b := range width {
			dst[b*n+i] = src[i*width+b]
		}
	}
}

var (
	zstdEncoderOnce sync.Once
	zstdEncoder     *zstd.Encoder
	zstdEncoderErr  error
)

// compressor returns the writer's page compressor (safe for concurrent use).
func (d *directWriter) compressor() (func(dst, src []byte) ([]byte, error), error) {
	switch d.codec {
	case Uncompressed:
		return func(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }, nil
	case Snappy:
		return func(dst, src []byte) ([]byte, error) {
			return snappy.Encode(grow(dst, snappy.MaxEncodedLen(len(src))), src), nil
		}, nil
	case Zstd:
		zstdEncoderOnce.Do(func() {
			// Level 1, Arrow C++'s default for Parquet.
			zstdEncoder, zstdEncoderErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
				zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithZeroFrames(true))
		})
		if zstdEncoderErr != nil {
			return nil, fmt.Errorf("parquet: %w", zstdEncoderErr)
		}
		return func(dst, src []byte) ([]byte, error) { return zstdEncoder.EncodeAll(src, dst), nil }, nil
	case Gzip:
		return func(dst, src []byte) ([]byte, error) {
			buf := bytes.NewBuffer(dst)
			zw := gzip.NewWriter(buf)
			if _, err := zw.Write(src); err != nil {
				return nil, err
			}
			if err := zw.Close(); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		}, nil
	}
	return nil, fmt.Errorf("parquet: %v: %w", d.codec, ErrUnsupported)
}

// codecCode is the writer's codec's number in parquet.thrift.
func (d *directWriter) codecCode() int32 {
	switch d.codec {
	case Snappy:
		return 1
	case Gzip:
		return 2
	case Zstd:
		return 6
	}
	return 0
}

// close writes the open row group, the page index and the footer, and flushes.
func (d *directWriter) close() error {
	if err := d.flush(); err != nil {
		return err
	}
	d.writePageIndex()
	footer := d.footer()
	d.write(footer)
	d.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	d.write([]byte("PAR1"))
	if d.err != nil {
		return d.err
	}
	if err := d.out.Flush(); err != nil {
		d.err = fmt.Errorf("parquet: %w", err)
	}
	return d.err
}

// Parquet's physical type, repetition and converted type numbers.
const (
	physBoolean = 0
	physInt32   = 1
	physInt64   = 2
	physFloat   = 4
	physDouble  = 5

	physFixedLenByteArray = 7

	repRequired = 0
	repOptional = 1
	repRepeated = 2

	convertedList   = 3
	convertedUint32 = 13
	convertedUint64 = 14
	convertedInt32  = 17
	convertedInt64  = 18
)

// footer returns the FileMetaData.
func (d *directWriter) footer() []byte {
	var w compactWriter
	w.begin()
	w.i32(1, 2) // version
	elements := 1
	for _, c := range d.cols {
		elements += 2*c.depth + 1
	}
	w.list(2, elements, thriftStruct)
	w.begin()
	w.i32(3, repRequired) // as Arrow C++ writes the root
	w.str(4, "schema")
	w.i32(5, int32(len(d.cols)))
	w.end()
	for _, c := range d.cols {
		c.schemaElements(&w)
	}
	var rows int64
	for _, g := range d.groups {
		rows += g.rows
	}
	w.i64(3, rows)
	w.list(4, len(d.groups), thriftStruct)
	for ordinal, g := range d.groups {
		w.begin()
		w.list(1, len(g.chunks), thriftStruct)
		for i, m := range g.chunks {
			d.cols[i].chunk(&w, m, d)
		}
		w.i64(2, g.bytes)
		w.i64(3, g.rows)
		w.i64(5, g.offset)
		w.i64(6, g.compressed)
		if ordinal <= math.MaxInt16 {
			w.field(7, thriftI16)
			w.zigzag(int64(ordinal))
		}
		w.end()
	}
	kv := d.schema.Metadata()
	w.list(5, kv.Len()+1, thriftStruct)
	for i, k := range kv.Keys() {
		w.begin()
		w.str(1, k)
		w.str(2, kv.Values()[i])
		w.end()
	}
	w.begin()
	w.str(1, arrowSchemaKey)
	w.str(2, base64.StdEncoding.EncodeToString(flight.SerializeSchema(d.schema, d.mem)))
	w.end()
	w.str(6, "ndarrow")
	w.list(7, len(d.cols), thriftStruct)
	for range d.cols {
		w.begin()
		w.structField(1) // TYPE_ORDER
		w.end()
		w.end()
	}
	w.end()
	return w.b
}

// schemaElements writes c's SchemaElements: what pqarrow makes of its Arrow type.
func (c *writeColumn) schemaElements(w *compactWriter) {
	repetition := func(k int) int32 {
		if c.nullable[k] {
			return repOptional
		}
		return repRequired
	}
	name := c.name
	for k := range c.depth {
		w.begin()
		w.i32(3, repetition(k))
		w.str(4, name)
		w.i32(5, 1)
		w.i32(6, convertedList)
		w.structField(10)
		w.structField(3) // LIST
		w.end()
		w.end()
		w.end()
		w.begin()
		w.i32(3, repRepeated)
		w.str(4, "list")
		w.i32(5, 1)
		w.end()
		name = "element"
	}
	w.begin()
	w.i32(1, c.physical())
	if c.physical() == physFixedLenByteArray {
		w.i32(2, int32(c.plan.width))
	}
	w.i32(3, repetition(c.depth))
	w.str(4, name)
	if c.plan.leaf.ID() == arrow.FLOAT16 {
		w.structField(10)
		w.structField(15) // FLOAT16
		w.end()
		w.end()
	}
	if c.plan.phys == pq.Types.Int32 || c.plan.phys == pq.Types.Int64 {
		converted := map[int64]int32{4: convertedInt32, 8: convertedInt64}[c.plan.width]
		if c.unsigned {
			converted = map[int64]int32{4: convertedUint32, 8: convertedUint64}[c.plan.width]
		}
		w.i32(6, converted)
		w.structField(10)
		w.structField(10) // INTEGER
		w.field(1, thriftByte)
		w.b = append(w.b, byte(8*c.plan.width))
		w.boolean(2, !c.unsigned)
		w.end()
		w.end()
	}
	w.end()
}

func (c *writeColumn) physical() int32 {
	switch c.plan.leaf.ID() {
	case arrow.BOOL:
		return physBoolean
	case arrow.FLOAT16, arrow.FIXED_SIZE_BINARY:
		return physFixedLenByteArray
	case arrow.FLOAT32:
		return physFloat
	case arrow.FLOAT64:
		return physDouble
	case arrow.INT32, arrow.UINT32:
		return physInt32
	}
	return physInt64
}

// path is the column's path in the Parquet schema.
func (c *writeColumn) path() []string {
	p := []string{c.name}
	for range c.depth {
		p = append(p, "list", "element")
	}
	return p
}

// chunk writes the ColumnChunk of m.
func (c *writeColumn) chunk(w *compactWriter, m chunkMeta, d *directWriter) {
	w.begin()
	w.i64(2, m.offset)
	w.structField(3)
	w.i32(1, c.physical())
	encodings := []int32{m.encoding.thriftCode(), 3}
	w.listI32(2, encodings)
	w.listStrings(3, c.path())
	w.i32(4, d.codecCode())
	w.i64(5, m.values)
	w.i64(6, m.uncompressed)
	w.i64(7, m.compressed)
	w.i64(9, m.offset)
	w.structField(12)
	w.i64(3, m.stats.nulls)
	if m.stats.lo != nil {
		w.binary(5, m.stats.hi)
		w.binary(6, m.stats.lo)
	}
	w.end()
	w.end()
	if m.offsetIndex != nil {
		w.i64(4, m.offsetIndexAt)
		w.i32(5, int32(len(m.offsetIndex)))
	}
	if m.columnIndex != nil {
		w.i64(6, m.columnIndexAt)
		w.i32(7, int32(len(m.columnIndex)))
	}
	w.end()
}
