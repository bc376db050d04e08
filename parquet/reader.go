package parquet

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/internal/saturate"
	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
)

// ErrInvalid is wrapped by every error about a malformed Parquet file; it matches
// arrow.ErrInvalid too.
var ErrInvalid = sentinel.New("invalid Parquet file", arrow.ErrInvalid)

// ReaderOptions configure a Reader; the zero value reads every column within the default
// limits.
type ReaderOptions struct {
	// Allocator allocates the decoded columns; nil means memory.DefaultAllocator.
	Allocator memory.Allocator
	// Limits bound the footer (MaxMetadataSize), the values of one column chunk (MaxElements)
	// and the bytes decoding one row group may allocate (MaxCopySize, counting the column
	// chunks read, decompression buffers, values and levels).
	Limits limits.Limits
	// Columns selects top-level columns by name, in the order given; nil reads every column
	// the reader can read (see Reader.Skipped).
	Columns []string
	// Parallelism is how many row groups ReadRowGroups decodes at once: 0 means GOMAXPROCS,
	// 1 one at a time on the caller's goroutine.
	Parallelism int
}

// Reader reads the record batches of a Parquet file held in memory, one row group at a
// time, through arrow-go's pqarrow — but only after checking the footer and, before each row
// group, every page header it will decode against the file and the limits, and only on the
// caller's goroutine: a panic in arrow-go's decoders becomes an error wrapping ErrInvalid.
//
// The Arrow schema a writer stored under ARROW:schema (Arrow C++, pyarrow, arrow-go and this
// package's Writer store it) is decoded by ipc's verified decoder and applied: extension types
// such as arrow.fixed_shape_tensor, fixed-size lists, large lists and field metadata come
// back. Without it the columns have the types Parquet's schema gives (a LIST is a list).
//
// Values are decoded into memory from the Allocator: Parquet's encodings leave nothing to
// view in place. A Reader is not safe for concurrent use.
type Reader struct {
	mapping  *mmap.Mapping // the file Open mapped, nil for bytes
	b        []byte
	md       *metadata.FileMetaData
	fr       *pqarrow.FileReader
	lim      limits.Limits
	mem      memory.Allocator
	schema   *arrow.Schema
	cols     []column
	skipped  []SkippedColumn
	general  bool // every column through pqarrow, none through the direct path (tests)
	parallel int  // ReaderOptions.Parallelism, resolved
	// structs are the manifest fields whose children plan appended to the manifest (readable),
	// in order: a reader of the same file made since (ReadRowGroups') appends them too.
	structs []int

	directReads int // the columns the direct path read (tests)
	// offsetIndexes are the offset indexes decoded, by row group and leaf column: a reader
	// used for many takes decodes each once.
	offsetIndexes map[[2]int][]pageLoc
	// plainValues are, by a page's offset, where in the page the values of a PLAIN
	// uncompressed tensor page TakeRows checked begin: a reader used for many takes checks
	// each page's header and levels once.
	plainValues map[int64]int64
	// pages keeps the values of the pages TakeRows decompressed or unsplit (SetPageCache).
	pages PageCache
	// arenas are, by leaf column, the buffers of whole columns ReadAll has the direct path
	// decode each row group's values into.
	arenas map[int]*arena
	// expansion is what the values of byte-array columns may still take in the row group
	// being read — what MaxCopySize leaves beside its chunks' checked costs (readRowGroup,
	// takeDecoded) — as each column's is decoded: a page of dictionary indices or of
	// DELTA_BYTE_ARRAY prefixes can make a few bytes into many.
	expansion int64
	// fromFile are, by row group and column, the pages WriteArrowStream writes from the file,
	// once WritesFromFile found every chunk such.
	fromFile [][]plainColumn
}

// PageCache keeps what TakeRows decoded of one file, for the takes after — by any Reader of
// the same file given the same cache — to use again instead of decoding it again: the values
// of the pages it had to decompress or unsplit (BYTE_STREAM_SPLIT), by the page's offset in
// the file, and the columns whose chunks it decoded whole (strings, dictionaries, lists), by
// the offset of the column's first chunk. Implementations are safe for concurrent use.
//
// A take that finds a page (or chunk) missing decodes it and then calls Keep (KeepChunk),
// always — with nil when it did not decode it after all — so that a cache may have other
// takes wait for it meanwhile rather than decode the page too.
type PageCache interface {
	// Values returns the values kept for the page at offset, if any.
	Values(offset int64) ([]byte, bool)
	// Keep keeps a copy of values, those of the page at offset, and returns the copy, or
	// values themselves when it keeps nothing; nil keeps nothing.
	Keep(offset int64, values []byte) []byte
	// Chunk returns the column kept for the chunk at offset, if any, retained: release it.
	Chunk(offset int64) (arrow.Array, bool)
	// KeepChunk keeps a copy of arr, the column decoded of the chunk at offset, and returns
	// the copy, or arr itself when it keeps nothing, retained: release it (and arr, which
	// stays the caller's); nil keeps nothing and returns nil.
	KeepChunk(offset int64, arr arrow.Array) arrow.Array
}

// SetPageCache has the reader's takes keep the pages they decompress in c, and look there
// first; nil keeps none. The cache must hold the pages of this reader's file only.
func (r *Reader) SetPageCache(c PageCache) { r.pages = c }

// column is a top-level column the reader reads.
type column struct {
	field  arrow.Field // with the stored type, when it fits what Parquet holds
	pqType arrow.DataType
	// dict is the dictionary type the stored schema gives a column the reader decodes as its
	// values (pqarrow decodes dictionary pages into them): DictionaryType.
	dict   *arrow.DictionaryType
	index  int   // in the pqarrow manifest
	leaves []int // Parquet leaf columns
	parts  []int // for a struct of lists (arrow.variable_shape_tensor): each child's manifest index
}

// IsParquet reports whether b starts and ends with Parquet's magic bytes.
func IsParquet(b []byte) bool {
	return len(b) >= 12 && string(b[:4]) == magic && string(b[len(b)-4:]) == magic
}

// NewReader checks the footer of the Parquet file b and returns a reader of its columns. b
// must not change while the reader or anything it returned is in use.
func NewReader(b []byte, opts ReaderOptions) (r *Reader, err error) {
	defer recoverInvalid("footer", &err)
	lim := opts.Limits.WithDefaults()
	footer, err := footerOf(b, lim)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewFileMetaData(footer, nil)
	if err != nil {
		return nil, fmt.Errorf("parquet: footer: %v: %w", err, ErrInvalid)
	}
	if err := checkRowGroups(md, lim); err != nil {
		return nil, err
	}
	stored, err := storedSchema(md, lim)
	if err != nil {
		return nil, err
	}
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	fr, err := arrowFileReader(b, md, mem)
	if err != nil {
		return nil, err
	}
	parallel := opts.Parallelism
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	r = &Reader{b: b, md: md, fr: fr, lim: lim, mem: mem, parallel: parallel, expansion: lim.MaxCopySize}
	if err := r.plan(stored, opts.Columns); err != nil {
		return nil, err
	}
	return r, nil
}

// arrowFileReader returns pqarrow's reader of file b, whose footer md has been checked.
func arrowFileReader(b []byte, md *metadata.FileMetaData, mem memory.Allocator) (*pqarrow.FileReader, error) {
	// Column chunks are read page by page from b: without a buffered stream arrow-go copies a
	// whole chunk into memory, twice, before decoding its first page.
	props := pq.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = streamBuffer
	pf, err := file.NewParquetReader(bytes.NewReader(b), file.WithMetadata(md), file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("parquet: %v: %w", err, ErrInvalid)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return nil, fmt.Errorf("parquet: schema: %v: %w", err, ErrInvalid)
	}
	return fr, nil
}

// streamBuffer is what a column chunk is read through: a page larger is read whole.
const streamBuffer = 1 << 20

// checkRowGroups checks what the footer says of each row group against the schema and lim.
func checkRowGroups(md *metadata.FileMetaData, lim limits.Limits) error {
	leaves := md.Schema.NumColumns()
	for i, rg := range md.FileMetaData.RowGroups {
		if rg == nil {
			return fmt.Errorf("parquet: row group %d missing: %w", i, ErrInvalid)
		}
		if rg.NumRows < 0 {
			return fmt.Errorf("parquet: row group %d of %d rows: %w", i, rg.NumRows, ErrInvalid)
		}
		if rg.NumRows > lim.MaxElements {
			return fmt.Errorf("parquet: row group %d of %d rows, more than MaxElements %d: %w", i, rg.NumRows, lim.MaxElements, limits.ErrExceeded)
		}
		if len(rg.Columns) != leaves {
			return fmt.Errorf("parquet: row group %d has %d column chunks for %d columns: %w", i, len(rg.Columns), leaves, ErrInvalid)
		}
		for j, cc := range rg.Columns {
			if cc == nil {
				return fmt.Errorf("parquet: row group %d column %d missing: %w", i, j, ErrInvalid)
			}
		}
	}
	return nil
}

// arrowSchemaKey is the footer key under which Arrow writers store the Arrow schema.
const arrowSchemaKey = "ARROW:schema"

// storedSchema decodes the Arrow schema stored under ARROW:schema, or returns nil when there
// is none. arrow-go's reader is handed the footer without it: its own use of it builds no
// extension type with nested storage and decodes the IPC message unverified.
func storedSchema(md *metadata.FileMetaData, lim limits.Limits) (*arrow.Schema, error) {
	kv := md.FileMetaData.KeyValueMetadata
	var encoded *string
	rest := kv[:0:0]
	for _, e := range kv {
		if e != nil && e.Key == arrowSchemaKey {
			encoded = e.Value
			continue
		}
		rest = append(rest, e)
	}
	md.FileMetaData.KeyValueMetadata = rest
	if encoded == nil {
		return nil, nil
	}
	msg, err := base64.StdEncoding.DecodeString(*encoded)
	if err != nil {
		// Arrow C++ before 1.0 stored it without padding.
		if msg, err = base64.RawStdEncoding.DecodeString(*encoded); err != nil {
			return nil, fmt.Errorf("parquet: %s: %v: %w", arrowSchemaKey, err, ErrInvalid)
		}
	}
	schema, err := ipc.ReadSchema(msg, ipc.BatchOptions{Limits: lim, SkipUnsupported: true})
	switch {
	case errors.Is(err, limits.ErrExceeded):
		return nil, fmt.Errorf("parquet: %s: %w", arrowSchemaKey, err)
	case err != nil:
		return nil, fmt.Errorf("parquet: %s: %w: %w", arrowSchemaKey, err, ErrInvalid)
	}
	return schema, nil
}

// plan chooses the columns to read and the type each is read as.
func (r *Reader) plan(stored *arrow.Schema, names []string) error {
	man := r.fr.Manifest
	if stored != nil && len(stored.Fields()) != len(man.Fields) {
		stored = nil // written for another schema: ignored, as Arrow C++ does
	}
	var all []column
	byName := map[string]int{}
	for i := range man.Fields {
		sf := &man.Fields[i]
		legacyLists(sf, r.md.Schema)
		col := column{field: *sf.Field, pqType: sf.Field.Type, index: i, leaves: leavesOf(sf)}
		if stored != nil {
			want := stored.Field(i)
			d, isDict := want.Type.(*arrow.DictionaryType)
			switch {
			case want.Name != sf.Field.Name:
			case fits(sf.Field.Type, want.Type):
				col.field = want
			case isDict && fits(sf.Field.Type, d.ValueType):
				col.dict = d // read as its values, as Parquet holds them
			}
		}
		if err := r.readable(&col, sf); err != nil {
			r.skipped = append(r.skipped, SkippedColumn{Name: sf.Field.Name, Type: sf.Field.Type.String(), Err: err})
			col.index = -1
		}
		all = append(all, col)
		if _, dup := byName[sf.Field.Name]; !dup {
			byName[sf.Field.Name] = len(all) - 1
		}
	}
	if names == nil {
		for _, c := range all {
			if c.index >= 0 {
				r.cols = append(r.cols, c)
			}
		}
	} else {
		for _, n := range names {
			i, ok := byName[n]
			if !ok {
				return fmt.Errorf("parquet: no column %q: %w", n, ErrNoColumn)
			}
			if all[i].index < 0 {
				return fmt.Errorf("parquet: column %s: %w", n, ErrUnsupported)
			}
			r.cols = append(r.cols, all[i])
		}
	}
	fields := make([]arrow.Field, len(r.cols))
	for i, c := range r.cols {
		fields[i] = c.field
	}
	var md *arrow.Metadata
	switch {
	case stored != nil && stored.Metadata().Len() > 0:
		m := stored.Metadata()
		md = &m
	case stored == nil && man.SchemaMeta != nil && man.SchemaMeta.Len() > 0:
		md = man.SchemaMeta
	}
	r.schema = arrow.NewSchema(fields, md)
	return nil
}

// ErrNoColumn is wrapped by the error NewReader returns for a column name the file lacks.
var ErrNoColumn = errors.New("no such column")

// readable returns why column c cannot be read, or nil. arrow-go reads the children of a
// struct (and a map's entries) on goroutines of its own, where a panic cannot be recovered:
// structs are read only one level deep, as arrow.variable_shape_tensor's storage is, each
// child on its own.
func (r *Reader) readable(c *column, sf *pqarrow.SchemaField) error {
	if !hasStruct(sf.Field.Type) {
		return nil
	}
	st, ok := sf.Field.Type.(*arrow.StructType)
	if !ok || len(sf.Children) == 0 {
		return fmt.Errorf("%s holds a struct or map inside: %w", sf.Field.Type, ErrUnsupported)
	}
	for i := range sf.Children {
		if hasStruct(st.Field(i).Type) {
			return fmt.Errorf("%s holds a struct or map inside: %w", sf.Field.Type, ErrUnsupported)
		}
	}
	for range sf.Children {
		c.parts = append(c.parts, len(r.fr.Manifest.Fields)+len(c.parts))
	}
	r.structs = append(r.structs, c.index)
	appendChildren(r.fr, c.index)
	return nil
}

// appendChildren appends the children of manifest field i to fr's manifest, as top-level
// fields each read on its own.
func appendChildren(fr *pqarrow.FileReader, i int) {
	man := fr.Manifest
	man.Fields = append(man.Fields, man.Fields[i].Children...)
}

// hasStruct reports whether t is or holds a struct or map.
func hasStruct(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.StructType, *arrow.MapType:
		return true
	case arrow.ListLikeType:
		return hasStruct(t.Elem())
	case arrow.ExtensionType:
		return hasStruct(t.StorageType())
	}
	return false
}

// leavesOf returns the Parquet leaf columns of sf (pqarrow gives a list's group the column
// index of its leaf, so a node with children is never taken for a leaf).
func leavesOf(sf *pqarrow.SchemaField) []int {
	if len(sf.Children) == 0 {
		return []int{sf.ColIndex}
	}
	var out []int
	for i := range sf.Children {
		out = append(out, leavesOf(&sf.Children[i])...)
	}
	return out
}

// Schema returns the schema of the columns the reader reads, with the stored Arrow types.
func (r *Reader) Schema() *arrow.Schema { return r.schema }

// DictionaryType returns the dictionary type the Arrow schema a writer stored (ARROW:schema)
// gives the column named name — as pyarrow and Arrow C++ store a dictionary-encoded column —
// which the reader decodes as its values (strings, not indices), or nil when the stored schema
// gives it none. A caller that wants the column's type back encodes the values again.
func (r *Reader) DictionaryType(name string) arrow.DataType {
	for _, c := range r.cols {
		if c.field.Name == name && c.dict != nil {
			return c.dict
		}
	}
	return nil
}

// SkippedColumn is a column NewReader left out because it cannot read it safely: its name,
// its type as pqarrow reads it, and why.
type SkippedColumn struct {
	Name string
	Type string
	Err  error
}

// Skipped returns the columns NewReader left out (when no Columns were asked for) because the
// reader cannot read them safely: structs inside lists, maps.
func (r *Reader) Skipped() []SkippedColumn { return r.skipped }

// NumRowGroups returns the number of row groups of the file.
func (r *Reader) NumRowGroups() int { return len(r.md.FileMetaData.RowGroups) }

// NumRows returns the number of rows of the file, as its footer says.
func (r *Reader) NumRows() int64 {
	var n int64
	for _, rg := range r.md.FileMetaData.RowGroups {
		n += rg.NumRows
	}
	return n
}

// RowGroupRows returns the number of rows of row group i, as the footer says.
func (r *Reader) RowGroupRows(i int) int64 { return r.md.FileMetaData.RowGroups[i].NumRows }

// RowGroupBytes returns the uncompressed size of row group i's column chunks as the footer says
// (checked not to be negative), those of every column.
func (r *Reader) RowGroupBytes(i int) int64 {
	return max(r.md.FileMetaData.RowGroups[i].TotalByteSize, 0)
}

// ColumnBytes returns the uncompressed size of the column chunks of the column named name in
// row group i, as the footer says (its leaves' summed, each checked not to be negative), or -1
// when the reader reads no column of that name.
func (r *Reader) ColumnBytes(i int, name string) int64 {
	for _, c := range r.cols {
		if c.field.Name != name {
			continue
		}
		total := int64(0)
		for _, leaf := range c.leaves {
			if cc := r.md.FileMetaData.RowGroups[i].Columns[leaf]; cc.MetaData != nil && cc.MetaData.TotalUncompressedSize > 0 {
				total = saturate.Add(total, cc.MetaData.TotalUncompressedSize)
			}
		}
		return total
	}
	return -1
}

// ColumnCompressed reports whether a column chunk of the column named name in row group i is
// stored compressed (a codec other than UNCOMPRESSED), so that reading any of its rows
// decompresses whole pages; false when the reader reads no column of that name.
func (r *Reader) ColumnCompressed(i int, name string) bool {
	for _, c := range r.cols {
		if c.field.Name != name {
			continue
		}
		for _, leaf := range c.leaves {
			if cc := r.md.FileMetaData.RowGroups[i].Columns[leaf]; cc.MetaData != nil && cc.MetaData.Codec != 0 {
				return true
			}
		}
	}
	return false
}

// ByteRange is bytes [Offset, Offset+Length) of a file.
type ByteRange struct{ Offset, Length int64 }

// ChunkRanges returns the byte ranges of the column chunks ReadRowGroup(i) reads — those of
// the columns the reader reads, as the footer states them (clipped to the file; reading checks
// them) — for a caller that brings only those bytes into memory, such as a reader of object
// storage.
func (r *Reader) ChunkRanges(i int) []ByteRange {
	var out []ByteRange
	for _, c := range r.cols {
		for _, leaf := range c.leaves {
			if br, ok := r.chunkRange(i, leaf); ok {
				out = append(out, br)
			}
		}
	}
	return out
}

// chunkRange returns the bytes ReadRowGroup(i) reads of leaf column leaf (see ChunkRanges),
// false when the footer states none inside the file.
func (r *Reader) chunkRange(i, leaf int) (ByteRange, bool) {
	size := int64(len(r.b))
	cc := r.md.FileMetaData.RowGroups[i].Columns[leaf]
	if cc.MetaData == nil {
		return ByteRange{}, false
	}
	m := cc.MetaData
	start := m.DataPageOffset
	if m.DictionaryPageOffset != nil && *m.DictionaryPageOffset > 0 && start > *m.DictionaryPageOffset {
		start = *m.DictionaryPageOffset
	}
	length := m.TotalCompressedSize
	if start < 0 || length < 0 || start > size {
		return ByteRange{}, false
	}
	length = min(length, size-start)
	if r.md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		length += min(100, size-start-length) // what arrow-go reads past it (PARQUET-816)
	}
	return ByteRange{start, length}, true
}

// Metadata returns the file's key-value metadata, ARROW:schema left out.
func (r *Reader) Metadata() map[string]string {
	out := map[string]string{}
	for _, e := range r.md.FileMetaData.KeyValueMetadata {
		if e != nil && e.Value != nil {
			out[e.Key] = *e.Value
		}
	}
	return out
}

// Open maps the Parquet file at path into memory and returns a reader of it, as NewReader
// reads bytes; Close unmaps it. The footer and each row group are read from the mapping under
// a guard: a file that shrinks while it is read is an error naming it (wrapping
// dataset.ErrFileChanged), not a fault that ends the process. What ReadRowGroup returns is
// decoded into the Allocator's memory and outlives Close.
func Open(path string, opts ReaderOptions) (*Reader, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	var r *Reader
	err = mmap.Guard(func() error {
		var err error
		r, err = NewReader(m.Bytes(), opts)
		return err
	})
	if err != nil {
		m.Release()
		var fault *mmap.FaultError
		if errors.As(err, &fault) {
			return nil, fmt.Errorf("parquet: %w", err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.mapping = m
	return r, nil
}

// CheckUnchanged returns an error wrapping mmap.ErrChanged (dataset.ErrFileChanged), a
// *mmap.ChangedError naming the file and what differs, when the file Open mapped is no longer
// as it was mapped (mmap.Mapping.Changes: its size, modification time or change time, the file
// itself whatever its path names now); nil when it is, and for a reader of bytes. A reader
// that wrote what it read of the file calls it once done: what it wrote then came from one
// version of the file.
func (r *Reader) CheckUnchanged() error {
	if r.mapping == nil {
		return nil
	}
	return r.mapping.CheckUnchanged()
}

// Close unmaps the file Open mapped (a no-op for a reader of bytes). The reader must not be
// used afterwards.
func (r *Reader) Close() error {
	if r.mapping != nil {
		r.mapping.Release()
		r.mapping = nil
	}
	return nil
}

// ReadRowGroup decodes row group i into a record batch of the reader's schema, after checking
// every page header of its column chunks. The record's memory is the Allocator's: Release it.
func (r *Reader) ReadRowGroup(i int) (rec arrow.Record, err error) {
	if r.mapping != nil { // a mapped file may shrink under the read
		err = mmap.Guard(func() error {
			var err error
			rec, err = r.readRowGroup(i)
			return err
		})
		var fault *mmap.FaultError
		if errors.As(err, &fault) {
			return nil, fmt.Errorf("parquet: row group %d: %w", i, err)
		}
		return rec, err
	}
	return r.readRowGroup(i)
}

// readRowGroup is ReadRowGroup.
func (r *Reader) readRowGroup(i int) (rec arrow.Record, err error) {
	defer recoverInvalid(fmt.Sprintf("row group %d", i), &err)
	if i < 0 || i >= r.NumRowGroups() {
		return nil, fmt.Errorf("parquet: row group %d of %d", i, r.NumRowGroups())
	}
	rows := r.RowGroupRows(i)
	budget := r.lim.MaxCopySize
	only := make([]string, len(r.cols)) // columns of pages the direct path alone reads: their encoding
	for k, c := range r.cols {
		for _, leaf := range c.leaves {
			cost, err := checkColumnChunk(r.b, r.md, i, leaf, budget, r.lim)
			if e := cost.directOnly(); e != "" {
				only[k] = e
			}
			if err != nil {
				return nil, fmt.Errorf("parquet: row group %d, column %s (%s): %w", i, c.field.Name, r.md.Schema.Column(leaf).Path(), err)
			}
			if cost.levels < rows {
				return nil, fmt.Errorf("parquet: row group %d of %d rows, column %s has %d values: %w", i, rows, r.md.Schema.Column(leaf).Path(), cost.levels, ErrInvalid)
			}
			budget -= cost.bytes
		}
	}
	r.expansion = max(budget, 0)
	cols := make([]arrow.Array, 0, len(r.cols))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for k, c := range r.cols {
		arr, err := r.readColumn(c, i, rows, only[k])
		if err != nil {
			return nil, fmt.Errorf("parquet: row group %d, column %s: %w", i, c.field.Name, err)
		}
		cols = append(cols, arr)
	}
	return array.NewRecord(r.schema, cols, rows), nil
}

// readColumn decodes column c of row group rg and gives it its stored type.
// A column with BYTE_STREAM_SPLIT or DELTA_BYTE_ARRAY pages (only names the encoding) is the
// direct path's alone: arrow-go v17 decodes none of the first's values, and sizes its buffers
// for the second's from the page before checking it.
func (r *Reader) readColumn(c column, rg int, rows int64, only string) (out arrow.Array, err error) {
	if !r.general || only != "" {
		arr, err := r.readDirect(c, rg, rows)
		if !errors.Is(err, errNotDirect) {
			r.directReads++
			return arr, err
		}
	}
	switch only {
	case "BYTE_STREAM_SPLIT":
		return nil, fmt.Errorf("values in the BYTE_STREAM_SPLIT encoding, read only in columns of numbers, fixed-size binaries and decimals (flat, in fixed-size lists or, numbers, in a list): %w", ErrUnsupported)
	case "DELTA_BYTE_ARRAY":
		return nil, fmt.Errorf("values in the DELTA_BYTE_ARRAY encoding, read only in flat string and binary columns: %w", ErrUnsupported)
	}
	if c.parts != nil {
		return r.readStruct(c, rg, rows)
	}
	arr, err := r.decode(c.index, c.leaves, rg, rows)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return restore(r.mem, arr, c.field.Type)
}

// readStruct decodes a struct column child by child and assembles it. A null struct reads as
// a struct of null children.
func (r *Reader) readStruct(c column, rg int, rows int64) (arrow.Array, error) {
	st := c.pqType.(*arrow.StructType)
	want, _ := c.field.Type.(*arrow.StructType)
	ext, isExt := c.field.Type.(arrow.ExtensionType)
	if isExt {
		want, _ = ext.StorageType().(*arrow.StructType)
	}
	children := make([]arrow.ArrayData, 0, len(c.parts))
	defer func() {
		for _, d := range children {
			d.Release()
		}
	}()
	sf := &r.fr.Manifest.Fields[c.index]
	for k, idx := range c.parts {
		arr, err := r.decode(idx, leavesOf(&sf.Children[k]), rg, rows)
		if err != nil {
			return nil, err
		}
		var typ arrow.DataType = st.Field(k).Type
		if want != nil {
			typ = want.Field(k).Type
		}
		restored, err := restore(r.mem, arr, typ)
		arr.Release()
		if err != nil {
			return nil, err
		}
		children = append(children, restored.Data())
		restored.Data().Retain()
		restored.Release()
	}
	fields := make([]arrow.Field, len(children))
	for k, d := range children {
		fields[k] = st.Field(k)
		fields[k].Type = d.DataType()
		if want != nil {
			fields[k] = want.Field(k)
		}
	}
	d := array.NewData(arrow.StructOf(fields...), int(rows), []*memory.Buffer{nil}, children, 0, 0)
	defer d.Release()
	s := array.MakeFromData(d)
	if !isExt {
		return s, nil
	}
	defer s.Release()
	return array.NewExtensionArrayWithStorage(ext, s), nil
}

// decode has pqarrow decode manifest field idx (whose leaves are given) of row group rg, on
// this goroutine; a panic becomes an error wrapping ErrInvalid.
func (r *Reader) decode(idx int, leaves []int, rg int, rows int64) (arr arrow.Array, err error) {
	defer recoverInvalid("decoding", &err)
	include := make(map[int]bool, len(leaves))
	for _, l := range leaves {
		include[l] = true
	}
	cr, err := r.fr.GetFieldReader(context.Background(), idx, include, []int{rg})
	if err != nil {
		return nil, invalid(err)
	}
	if cr == nil {
		return nil, fmt.Errorf("no leaf columns: %w", ErrInvalid)
	}
	defer cr.Release()
	chunked, err := cr.NextBatch(rows)
	if err != nil {
		return nil, invalid(err)
	}
	defer chunked.Release()
	if int64(chunked.Len()) != rows {
		return nil, fmt.Errorf("%d rows decoded of %d: %w", chunked.Len(), rows, ErrInvalid)
	}
	for _, c := range chunked.Chunks() { // before anything reads them
		if err := checkArray(c.Data()); err != nil {
			return nil, err
		}
	}
	switch chunks := chunked.Chunks(); len(chunks) {
	case 0:
		return array.MakeArrayOfNull(r.mem, chunked.DataType(), 0), nil
	case 1:
		chunks[0].Retain()
		return chunks[0], nil
	default:
		return array.Concatenate(chunks, r.mem)
	}
}

// invalid wraps an error of arrow-go's decoders in ErrInvalid, unless it carries one of the
// package's sentinels already.
func invalid(err error) error {
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported) {
		return err
	}
	return fmt.Errorf("%v: %w", err, ErrInvalid)
}

// recoverInvalid turns a panic into *err wrapping ErrInvalid. The checks before decoding
// are the validation; this is the net under arrow-go's decoders, which report corrupt pages
// by panicking.
func recoverInvalid(what string, err *error) {
	if p := recover(); p != nil {
		if mmap.IsFault(p) {
			panic(p) // the file under a mapping shrank: the caller's Guard names it
		}
		if e, ok := p.(error); ok && (errors.Is(e, ErrInvalid) || errors.Is(e, ErrUnsupported)) {
			*err = fmt.Errorf("parquet: %s: %w", what, e)
			return
		}
		*err = fmt.Errorf("parquet: %s: %v: %w", what, p, ErrInvalid)
	}
}
