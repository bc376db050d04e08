package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// Errors for input that is none of the formats the package reads.
var (
	// ErrNotTensors is returned for input that is none of the formats the package reads.
	ErrNotTensors = errors.New("not a tensor file: neither NumPy .npy or .npz, Arrow IPC, Parquet nor TFRecord")
	// ErrEmpty is returned for empty input. It wraps ErrNotTensors.
	ErrEmpty = sentinel.New("the file is empty", ErrNotTensors)
)

// Format names the kinds of input, as Detect tells them.
type Format string

// The formats Detect tells apart.
const (
	FormatTensor  Format = "tensor"  // encapsulated Tensor messages
	FormatSparse  Format = "sparse"  // encapsulated SparseTensor messages
	FormatNpy     Format = "npy"     // NumPy .npy
	FormatNpz     Format = "npz"     // NumPy .npz: a ZIP archive of .npy files
	FormatArrow   Format = "arrow"   // Arrow IPC file
	FormatArrows  Format = "arrows"  // Arrow IPC stream of record batches
	FormatParquet Format = "parquet" // Parquet file
	FormatUnknown Format = "unknown" // anything else
)

// Detect tells the format of b from its first bytes.
func Detect(b []byte) Format {
	switch {
	case bytes.HasPrefix(b, []byte(npyMagic)):
		return FormatNpy
	case bytes.HasPrefix(b, []byte(zipMagic)), bytes.HasPrefix(b, []byte(emptyZipMagic)):
		return FormatNpz
	case bytes.HasPrefix(b, []byte(ipcMagic)):
		return FormatArrow
	case bytes.HasPrefix(b, []byte(parquetMagic)):
		return FormatParquet
	}
	if tfrecord.Probe(b) {
		return FormatTFRecord
	}
	// An encapsulated message: the header type of the first one tells tensors from batches.
	start := 4
	if len(b) >= 4 && bytes.Equal(b[:4], []byte{0xff, 0xff, 0xff, 0xff}) {
		start = 8
	}
	if len(b) < start {
		return FormatUnknown
	}
	n := int(int32(uint32(b[start-4]) | uint32(b[start-3])<<8 | uint32(b[start-2])<<16 | uint32(b[start-1])<<24))
	if n <= 0 || n > len(b)-start {
		return FormatUnknown
	}
	meta := b[start : start+n]
	if arrowfb.VerifyMessage(meta) != nil {
		return FormatUnknown
	}
	switch arrowfb.GetRootAsMessage(meta, 0).HeaderType() {
	case arrowfb.MessageHeaderTensor:
		return FormatTensor
	case arrowfb.MessageHeaderSparseTensor:
		return FormatSparse
	case arrowfb.MessageHeaderSchema:
		return FormatArrows
	}
	return FormatUnknown
}

// File is the tensors of one memory-mapped file. The tensors view the mapping, which stays
// until the last reference is released, and are read inside Guard (the file may shrink).
type File struct {
	Path    string
	Tensors []Tensor
	LeftOut []LeftOut // the columns of its table that have no tensor form, named
	mapping *mmap.Mapping
	remote  *objstore.Buffer // an object's: what was fetched of it, nil for a file
	decoded int64            // a streamed object's: the bytes its tensors were decoded from
}

// Open maps the file at path into memory and reads its tensors within lim (zero fields take
// their defaults), named after the file (see the package documentation). Nothing of the file
// is read into the heap but what cannot be viewed (see ipc.BatchReader), or what a TFRecord
// file decodes to: a name IsTFRecordName accepts is read as one (.gz: GZIP), as is any file
// whose first record's CRCs verify. The File holds one reference to the mapping; Release it
// when the tensors are no longer used. path may name an object (IsURI), fetched whole (within
// lim.MaxCopySize) into a mapping of its own, read as a file is, every request of the version
// first seen.
func Open(path string, lim limits.Limits) (*File, error) {
	return openNamed(path, BaseName(path), lim)
}

// openNamed opens the file at path as Open does, naming its tensors after base.
func openNamed(path, base string, lim limits.Limits) (*File, error) {
	if IsURI(path) && IsTFRecordName(path) {
		return streamedTFRecord(context.Background(), path, nil, base, tfrecord.CompressionOf(withoutQuery(path)), lim, nil)
	}
	var left []LeftOut
	f, err := mapped(context.Background(), path, lim, true, func(b []byte) ([]Tensor, error) {
		ts, l, err := readNamed(path, b, base, lim)
		left = l
		return ts, err
	})
	if err != nil {
		return nil, err
	}
	f.LeftOut = left
	return f, nil
}

// readNamed reads the tensors of b, the bytes of the file at path, as Open does, and names
// the columns it leaves out.
func readNamed(path string, b []byte, base string, lim limits.Limits) ([]Tensor, []LeftOut, error) {
	path = withoutQuery(path)
	if IsTFRecordName(path) {
		ts, err := ReadTFRecord(b, base, tfrecord.CompressionOf(path), lim)
		return ts, nil, err
	}
	return Read(b, base, lim)
}

// scanNamed opens the file at path for a directory dataset, naming its tensors after base:
// a Parquet file's columns as Sources that read each row group on demand, any other file's
// tensors as Open reads them.
func scanNamed(ctx context.Context, path string, info fs.FileInfo, base string, lim limits.Limits, budget *objectShare) (*File, []*Source, Format, error) {
	var sources []*Source
	var file File // the Sources' file, filled in once mapped returns it
	var left []LeftOut
	format := FormatTFRecord
	read := func(b []byte, partial bool) ([]Tensor, error) {
		if !IsTFRecordName(path) {
			format = Detect(b)
		}
		var err error
		switch {
		case format == FormatParquet:
			sources, left, err = scanParquet(&file, b, base, lim)
		case format == FormatArrow && (partial || manyBatches(b, lim)): // an object's footer, fetched alone; a file's batches, each read as a chunk
			sources, left, err = scanArrowFile(&file, b, base, lim)
		case format == FormatNpy && partial: // an object's header, fetched alone
			sources, err = scanNpy(&file, b, base, lim)
		case format == FormatNpz && partial: // an object's directory and headers
			sources, err = scanNpz(&file, b, base, lim)
		default:
			var ts []Tensor
			ts, left, err = readNamed(path, b, base, lim)
			return ts, err
		}
		return nil, err
	}
	var f *File
	var err error
	listed, remote := info.(objectInfo)
	switch {
	case remote && IsTFRecordName(path): // streamed, records decoded as they arrive
		f, err = streamedTFRecord(ctx, path, listed.obj, base, tfrecord.CompressionOf(withoutQuery(path)), lim, budget)
	case remote:
		f, err = fetched(ctx, listed.obj, lim, IsTFRecordName(path), budget, read) // the version listed
	default:
		f, err = mapped(ctx, path, lim, IsTFRecordName(path), func(b []byte) ([]Tensor, error) { return read(b, false) })
	}
	if err != nil {
		return nil, nil, "", err
	}
	file = *f
	file.LeftOut = left
	for _, t := range f.Tensors {
		sources = append(sources, residentSource(&file, t, lim))
	}
	switch format {
	case FormatParquet, FormatArrow, FormatArrows, FormatTFRecord: // a table: its columns named base.COLUMN
		for _, src := range sources {
			if src.Column != "" && src.Name == base+"."+src.Column {
				src.Table = base
			}
		}
	}
	return &file, sources, format, nil
}

// manyBatches reports whether b is an Arrow IPC file of record batches of tensor columns (not
// a sparse tensor's) in more than one batch: each batch is a chunk of its Sources, read as a
// view of the mapping when it is read, rather than all joined into one copy when the file
// is opened.
func manyBatches(b []byte, lim limits.Limits) bool {
	r, err := ipc.NewBatchReader(b, ipc.BatchOptions{Limits: lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
	if err != nil {
		return false // read as it is, failing there
	}
	defer r.Release()
	return len(r.Blocks()) > 1 && !arrowtensor.IsSparseSchema(r.Schema())
}

// mapped maps the file at path into memory and reads its tensors with read, under Guard:
// the one place the package opens a file. path may name an object (IsURI): it is fetched
// (see fetched), whole or, unless whole, only a Parquet object's footer. Its errors past
// opening are *FileError; a read that fails on a file modified since it was mapped fails with
// that change (ErrFileChanged, what differs), not with what the decoder made of the new bytes.
func mapped(ctx context.Context, path string, lim limits.Limits, whole bool, read func(b []byte) ([]Tensor, error)) (*File, error) {
	if IsURI(path) {
		obj, err := objstore.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		return fetched(ctx, obj, lim, whole, nil, func(b []byte, _ bool) ([]Tensor, error) { return read(b) })
	}
	m, err := mmap.Open(path)
	if err != nil {
		return nil, err
	}
	var tensors []Tensor
	err = Guard(func() error {
		var err error
		tensors, err = read(m.Bytes())
		return err
	})
	if err != nil {
		err = (&File{Path: path, mapping: m}).changedFirst("", err) // rewritten under the read: told so, not as corrupt
		m.Release()
		var fe *FileError
		if errors.As(err, &fe) && fe.Path == path {
			return nil, err // the file changed while it was read: named already
		}
		return nil, &FileError{Path: path, Err: err}
	}
	return &File{Path: path, Tensors: tensors, mapping: m}, nil
}

// Retain adds a reference to the file's mapping, for a user of its tensors that may outlive
// the File's owner.
func (f *File) Retain() { f.mapping.Retain() }

// Release drops a reference and unmaps the file at the last one, after which its tensors
// must not be used.
func (f *File) Release() { f.mapping.Release() }

// BaseName returns the name of the tensors of the file at path: its base name without
// extension (and without a .gz before it: x.tfrecord.gz is x).
func BaseName(path string) string {
	path = withoutQuery(path)
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// Read reads every tensor in b within lim, naming them after base (see the package
// documentation), and names the columns of a table that have no tensor form (see
// FromRecords). Tensors view b, which must outlive them and stay unchanged, except where a
// copy cannot be avoided (compressed or big-endian input); copies are garbage-collected.
func Read(b []byte, base string, lim limits.Limits) ([]Tensor, []LeftOut, error) {
	var ts []Tensor
	var err error
	switch Detect(b) {
	case FormatTensor, FormatSparse:
		ts, err = readMessages(b, base, lim)
	case FormatNpy:
		ts, err = readNpy(b, base, lim)
	case FormatNpz:
		ts, err = readNpz(b, base, lim)
	case FormatArrow, FormatArrows:
		return readBatches(b, base, lim)
	case FormatParquet:
		return readParquet(b, base, lim)
	case FormatTFRecord:
		ts, err = ReadTFRecord(b, base, tfrecord.None, lim)
	default:
		err = unknownFormat(b)
	}
	if err != nil {
		return nil, nil, err
	}
	return ts, nil, nil
}

// unknownFormat says why b is none of the formats: it is empty (ErrEmpty), it ends inside
// the start of one (io.ErrUnexpectedEOF), or it is something else (ErrNotTensors).
func unknownFormat(b []byte) error {
	const marker = "\xff\xff\xff\xff"
	switch {
	case len(b) == 0:
		return ErrEmpty
	case strings.HasPrefix(npyMagic, string(b)), strings.HasPrefix(ipcMagic, string(b)), strings.HasPrefix(zipMagic, string(b)):
		return fmt.Errorf("the file ends inside its magic: %w", io.ErrUnexpectedEOF)
	case strings.HasPrefix(marker, string(b[:min(len(b), 4)])) && len(b) < 8:
		return fmt.Errorf("the file ends inside its first message's prefix: %w", io.ErrUnexpectedEOF)
	case strings.HasPrefix(string(b), marker):
		if n := int64(int32(binary.LittleEndian.Uint32(b[4:]))); n > 0 && n > int64(len(b)-8) {
			return fmt.Errorf("the file ends inside its first message's metadata (%d bytes of %d): %w", len(b)-8, n, io.ErrUnexpectedEOF)
		}
	}
	return ErrNotTensors
}

// The magic strings Detect looks for.
const (
	npyMagic      = "\x93NUMPY"
	ipcMagic      = "ARROW1"
	zipMagic      = "PK\x03\x04" // a ZIP archive's first local file header
	emptyZipMagic = "PK\x05\x06" // the end record of an archive of no files
)

// readMessages reads a stream of Tensor and SparseTensor messages.
func readMessages(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	rd := ipc.NewBytesReader(b, lim)
	var out []Tensor
	for {
		t, err := rd.NextAny()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		var next Tensor
		switch t := t.(type) {
		case *ipc.Tensor:
			d, err := t.Dense()
			if err != nil {
				return nil, err
			}
			next = Tensor{Kind: KindDense, DimNames: t.DimNames(), Dense: d}
		case *ipc.SparseTensor:
			next = sparseTensor("", t.Array(), t.DimNames())
		}
		if err := next.readMessageMetadata(t.Metadata()); err != nil {
			return nil, fmt.Errorf("tensor %d: %w", len(out), err)
		}
		out = append(out, next)
	}
	for i := range out {
		out[i].Name = base
		if len(out) > 1 {
			out[i].Name = base + "." + strconv.Itoa(i)
		}
	}
	return out, nil
}

// sparseTensor returns a tensor for a sparse array.
func sparseTensor(name string, a sparse.Array, dimNames []string) Tensor {
	return Tensor{Name: name, Kind: SparseKind(a.Format()), DimNames: dimNames, Sparse: a}
}

func readNpy(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	a, err := npy.ReadBytes(b, lim)
	if err != nil {
		return nil, err
	}
	d, err := a.Dense()
	if err != nil {
		return nil, err
	}
	return []Tensor{{Name: base, Kind: KindDense, Dense: d}}, nil
}

// readNpz reads the arrays of an .npz archive, each a dense tensor named base.MEMBER whose
// Column is the member's name — but for an archive scipy.sparse.save_npz wrote (scipy.go),
// whose matrix is the sparse tensor named base, beside any member SciPy's layout has not.
func readNpz(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	arrays, err := npy.ReadNpz(b, lim)
	if err != nil {
		return nil, err
	}
	var out []Tensor
	if format := scipyFormat(arrays); format != "" {
		t, rest, err := readSciPy(arrays, format, base)
		if err != nil {
			return nil, err
		}
		out, arrays = append(out, t), rest
	}
	for _, a := range arrays {
		d, err := a.Dense()
		if err != nil {
			return nil, fmt.Errorf("npz: member %q: %w", a.Name, err)
		}
		out = append(out, Tensor{Name: base + "." + a.Name, Kind: KindDense, Column: a.Name, Dense: d, Bytes: a.IsBytes()})
	}
	return out, nil
}

// readBatches reads the tensors of a record-batch file or stream through ipc's decoder:
// views of b, and copies from a Go allocator (whose memory the garbage collector reclaims once
// no tensor views it) where a view is impossible. Columns of types the decoder builds no
// arrays for are skipped.
func readBatches(b []byte, base string, lim limits.Limits) ([]Tensor, []LeftOut, error) {
	r, err := ipc.NewBatchReader(b, ipc.BatchOptions{Limits: lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	var records []arrow.Record
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		records = append(records, rec)
	}
	tensors, left, err := FromRecords(r.Schema(), records, base)
	if err != nil {
		return nil, nil, err
	}
	return tensors, append(skippedColumns(r.Skipped(), base), left...), nil
}

// skippedColumns names the columns ipc's decoder built no arrays for as left out.
func skippedColumns(skipped []ipc.SkippedColumn, base string) []LeftOut {
	out := make([]LeftOut, len(skipped))
	for i, c := range skipped {
		out[i] = LeftOut{Name: base + "." + c.Name, Column: c.Name, Type: c.Type, Why: "ndarrow reads no arrays of this type"}
	}
	return out
}

// parquetMagic starts (and ends) a Parquet file.
const parquetMagic = "PAR1"

// readParquet reads the tensors of a Parquet file, every row group, through parquet.Reader
// (GOMAXPROCS row groups at once, in order): decoded into memory from a Go allocator, at most
// lim.MaxCopySize bytes over all row groups.
// Columns the reader cannot read (structs inside lists, maps) are left out, as are columns
// that are not tensors.
func readParquet(b []byte, base string, lim limits.Limits) ([]Tensor, []LeftOut, error) {
	lim = lim.WithDefaults()
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: memory.NewGoAllocator(), Limits: lim})
	if err != nil {
		return nil, nil, err
	}
	// One record of every row group: a tensor column is decoded into one buffer, which the
	// tensor views (the Go allocator's: it lives as long as the tensor).
	rec, err := r.ReadAll(context.Background())
	if err != nil {
		return nil, nil, err
	}
	defer rec.Release()
	records := []arrow.Record{rec}
	tensors, left, err := parquetTensors(r, records, base)
	if err != nil {
		return nil, nil, err
	}
	return tensors, append(left, parquetSkipped(r, base)...), nil
}

// parquetSkipped names the columns a Parquet reader cannot read safely as left out.
func parquetSkipped(r *parquet.Reader, base string) []LeftOut {
	var out []LeftOut
	for _, c := range r.Skipped() {
		out = append(out, LeftOut{Name: base + "." + c.Name, Column: c.Name, Type: c.Type, Why: c.Err.Error()})
	}
	return out
}

// FromRecords returns the tensors the columns of records hold (record batches of schema,
// as a file, a stream or a Flight stream brings them), named base.COLUMN, and the columns that
// have none, named (LeftOut): each arrow.fixed_shape_tensor column a dense tensor of shape
// [rows, cell...] (and so each plain fixed_size_list column of numbers or bools: shape
// [rows, n], an embedding; of strings or bytes: a string tensor [rows, n]), each list,
// large_list, fixed_size_list or arrow.variable_shape_tensor column of numbers, bools or
// strings a ragged one (see arrowtensor.IsRaggedType), each plain column — numbers, bools,
// strings or bytes, plain or dictionary-encoded (arrowtensor.IsPlainType) — a tensor of shape
// [rows] whose null rows Valid says (a string tensor of a column of bytes says Bytes, so that
// it is written back as bytes), and a sparse COO record batch (see arrowtensor.COORecord)
// one sparse tensor named base. Other columns (structs, maps, unions, timestamps…) have no
// tensor form. With no records, every tensor has zero rows (a sparse one, no stored values).
//
// The tensors view the records' buffers where they can (a dense column of one batch, a plain
// column of numbers, the values and offsets of a large_list); columns of several batches, and
// bools and strings, are copied. Views do not retain the records: the caller keeps their
// memory alive. A null row or element of a fixed_shape_tensor column is an error wrapping
// arrowtensor.ErrNull that names the column and the row.
func FromRecords(schema *arrow.Schema, records []arrow.Record, base string) ([]Tensor, []LeftOut, error) {
	if arrowtensor.IsSparseSchema(schema) {
		ts, err := sparseFromRecords(schema, records, base)
		return ts, nil, err
	}
	var out []Tensor
	var left []LeftOut
	for c, field := range schema.Fields() {
		var cols []arrow.Array
		for _, rec := range records {
			cols = append(cols, rec.Column(c))
		}
		t, why, err := columnTensor(field, cols)
		if err == nil && why == "" {
			err = t.readFieldMetadata(field.Metadata)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("column %s: %w", field.Name, err)
		}
		if why != "" {
			left = append(left, LeftOut{Name: base + "." + field.Name, Column: field.Name, Type: field.Type.String(), Why: why})
			continue
		}
		t.Name, t.Column = base+"."+field.Name, field.Name
		t.Bytes = t.DType() == ndarray.String && holdsBytes(field.Type)
		out = append(out, t)
	}
	return out, left, nil
}

// holdsBytes reports whether a column of type dt holds bytes rather than text: binary,
// large_binary or fixed_size_binary values, dictionary-encoded or in lists.
func holdsBytes(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return holdsBytes(t.ValueType)
	case arrow.ListLikeType:
		return holdsBytes(t.Elem())
	}
	switch dt.ID() {
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return true
	}
	return false
}

// LeftOut is a column of a table that has no tensor form — a struct, a map, a union, a
// timestamp — named so that nothing is dropped in silence: what inspect lists, and convert,
// serve and the API report, beside the tensors.
type LeftOut struct {
	Name   string // TABLE.COLUMN, as a tensor of it would be named
	Column string // the column's name
	Type   string // its Arrow type, as Arrow writes it: "struct<a: int32>"
	Why    string // why it has no tensor form
}

// String says what was left out and why: "t.s: struct<a: int32> left out: …".
func (l LeftOut) String() string { return fmt.Sprintf("%s: %s left out: %s", l.Name, l.Type, l.Why) }

// whyNoTensor says why a column of type dt has no tensor form.
func whyNoTensor(dt arrow.DataType) string {
	switch dt.ID() {
	case arrow.STRUCT:
		return "a struct has no tensor form (read its fields as columns of their own)"
	case arrow.MAP:
		return "a map has no tensor form"
	case arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return "a union has no tensor form"
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.DURATION, arrow.INTERVAL_MONTHS,
		arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO:
		return "times and dates are not mapped to tensors (cast them to int64 to read them as numbers)"
	case arrow.DECIMAL128, arrow.DECIMAL256:
		return "decimals are not mapped to tensors (cast them to float64 or a string)"
	case arrow.NULL:
		return "a column of nulls holds no values"
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return "its list values are not numbers, bools or strings"
	}
	return "no tensor form"
}

// ErrMetadata reports ndarrow field metadata (KindKey, DimNamesKey) that does not fit its
// column. It wraps arrow.ErrInvalid.
var ErrMetadata = sentinel.New("dataset: invalid tensor metadata", arrow.ErrInvalid)

// readFieldMetadata applies what Batch wrote into a column's field metadata: the kind of a
// dense tensor and the names of every dimension.
func (t *Tensor) readFieldMetadata(md arrow.Metadata) error {
	cells, reshape := md.GetValue(CellShapeKey)
	if reshape && t.Ragged != nil {
		if err := t.fromEmptyRows(cells); err != nil {
			return err
		}
		reshape = false
	}
	if err := t.readKind(md, KindFixedShape, KindDense, "column"); err != nil {
		return err
	}
	if reshape {
		if err := t.reshapeCells(cells); err != nil {
			return err
		}
	}
	if text, ok := md.GetValue(DimNamesKey); ok {
		var names []string
		if err := json.Unmarshal([]byte(text), &names); err != nil || len(names) != t.Shape().Rank() {
			return fmt.Errorf("%s %q for a tensor of rank %d: %w", DimNamesKey, text, t.Shape().Rank(), ErrMetadata)
		}
		t.DimNames = names
	}
	return nil
}

// fromEmptyRows makes a list column of empty rows (how Batch writes a tensor whose cells hold
// no value) the dense tensor [rows, cell...] it was, cell the shape CellShapeKey holds (JSON).
func (t *Tensor) fromEmptyRows(text string) error {
	var cell ndarray.Shape
	if json.Unmarshal([]byte(text), &cell) != nil || t.Ragged.RaggedRank() != 1 || t.Ragged.InnerShape().Rank() != 0 {
		return fmt.Errorf("%s %q on a %v column: %w", CellShapeKey, text, t.Shape(), ErrMetadata)
	}
	shape := append(ndarray.Shape{t.Ragged.NumRows()}, cell...)
	if err := shape.Validate(); err != nil || len(cell) == 0 || cell.Size() != 0 || t.Ragged.NumValues() != 0 {
		return fmt.Errorf("%s %q for a column of %d values: %w", CellShapeKey, text, t.Ragged.NumValues(), ErrMetadata)
	}
	// No element to convert: the empty array of the column's dtype.
	d, err := ndarray.ConvertTo(ndarray.New[bool](shape...), t.Ragged.DType())
	if err != nil {
		return err
	}
	t.Dense, t.Ragged, t.Kind = d, nil, KindFixedShape
	return nil
}

// reshapeCells gives a bool or string tensor read from a plain fixed_size_list column,
// [rows, n], the cell shape CellShapeKey holds (JSON).
func (t *Tensor) reshapeCells(text string) error {
	var cell []int64
	dt := t.DType()
	if json.Unmarshal([]byte(text), &cell) != nil || t.Dense == nil || t.Dense.Rank() != 2 || (dt != ndarray.Bool && dt != ndarray.String) {
		return fmt.Errorf("%s %q on a %v column: %w", CellShapeKey, text, t.Shape(), ErrMetadata)
	}
	rows, n := t.Dense.Shape()[0], t.Dense.Shape()[1]
	shape := append(ndarray.Shape{rows}, cell...)
	if err := shape.Validate(); err != nil || shape[1:].Size() != n {
		return fmt.Errorf("%s %q for cells of %d values: %w", CellShapeKey, text, n, ErrMetadata)
	}
	var r ndarray.Array
	var err error
	switch d := t.Dense.(type) {
	case *ndarray.Dense[bool]:
		r, err = d.Reshape(shape...)
	case *ndarray.Dense[string]:
		r, err = d.Reshape(shape...)
	}
	if err != nil {
		return fmt.Errorf("%s %q: %w", CellShapeKey, text, err)
	}
	t.Dense = r
	return nil
}

// readMessageMetadata applies what MessageMetadata wrote into a Tensor or SparseTensor
// message: the column the tensor came from and its kind.
func (t *Tensor) readMessageMetadata(md arrow.Metadata) error {
	if err := t.readKind(md, KindDense, KindFixedShape, "message"); err != nil {
		return err
	}
	if column, ok := md.GetValue(ColumnKey); ok {
		t.Column = column
	}
	return nil
}

// readKind applies KindKey, which may only turn a tensor of kind from, read from a column or
// a message (where), into kind to.
func (t *Tensor) readKind(md arrow.Metadata, from, to Kind, where string) error {
	kind, ok := md.GetValue(KindKey)
	switch {
	case !ok:
		return nil
	case kind != string(to) || t.Kind != from:
		return fmt.Errorf("%s %q on a %s %s: %w", KindKey, kind, t.Kind, where, ErrMetadata)
	}
	t.Kind = to
	return nil
}

// columnTensor returns the tensor a column holds, one array per batch, or why it holds none.
func columnTensor(field arrow.Field, cols []arrow.Array) (Tensor, string, error) {
	if fsl, ok := field.Type.(*arrow.FixedSizeListType); ok {
		if dt, err := arrowtensor.PlainDType(fsl.Elem()); err == nil && dt == ndarray.String {
			t, err := stringCells(fsl, cols)
			return t, "", err
		}
		if typ, err := arrowtensor.NewFixedShapeTensorType(fsl.Elem(), []int64{int64(fsl.Len())}, nil, nil); err == nil {
			// a plain fixed-size list of numbers is a tensor of one dimension per row: viewed
			// as an arrow.fixed_shape_tensor column of that shape
			views := make([]arrow.Array, len(cols))
			for i, c := range cols {
				d := c.Data() // its child's field name and nullability may differ from the storage type's
				sd := array.NewData(typ.StorageType(), d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
				storage := array.MakeFromData(sd)
				sd.Release()
				views[i] = array.NewExtensionArrayWithStorage(typ, storage)
				storage.Release()
				defer views[i].Release()
			}
			field.Type, cols = typ, views
		}
	}
	_, isVarShape := field.Type.(*arrowtensor.VariableShapeTensorType)
	typ, isFixed := field.Type.(*arrowtensor.FixedShapeTensorType)
	plain := arrowtensor.IsPlainType(field.Type)
	if !isFixed && !isVarShape && !plain && !arrowtensor.IsRaggedType(field.Type) {
		return Tensor{}, whyNoTensor(field.Type), nil
	}
	if len(cols) == 0 { // no batches: one of no rows
		empty := array.MakeArrayOfNull(memory.DefaultAllocator, field.Type, 0)
		defer empty.Release()
		cols = []arrow.Array{empty}
	}
	switch {
	case plain:
		t, err := plainColumn(cols)
		if d, ok := isDictionaryOfStrings(field.Type); ok && err == nil {
			t.Dictionary, err = dictionaryOf(d, cols)
		}
		return t, "", err
	case isFixed:
		chunks := make([]*arrowtensor.FixedShapeTensorArray, len(cols))
		rows := 0
		for i, c := range cols {
			chunks[i] = c.(*arrowtensor.FixedShapeTensorArray)
			if r := arrowtensor.NullRow(chunks[i]); r >= 0 {
				return Tensor{}, "", fmt.Errorf("row %d is null or holds a null element: %w", rows+r, arrowtensor.ErrNull)
			}
			rows += c.Len()
		}
		t, err := fixedShapeTensor(chunks, typ)
		return t, "", err
	}
	t, err := raggedColumn(cols)
	return t, "", err
}

// plainColumn reads a plain column (arrowtensor.IsPlainType), one array per batch, as a tensor
// of shape [rows] and its rows' validity.
func plainColumn(cols []arrow.Array) (Tensor, error) {
	parts := make([]Tensor, len(cols))
	for i, c := range cols {
		a, valid, err := arrowtensor.ColumnValues(c)
		if err != nil {
			return Tensor{}, err
		}
		parts[i] = Tensor{Dense: a, Valid: valid}
	}
	t, err := Concat(parts)
	if err != nil {
		return Tensor{}, err
	}
	t.Kind = KindDense
	return t, nil
}

// stringCells reads a fixed_size_list column of strings or bytes as a string tensor of shape
// [rows, n]. A null row or value is an error wrapping arrowtensor.ErrNull, as in a tensor
// column.
func stringCells(fsl *arrow.FixedSizeListType, cols []arrow.Array) (Tensor, error) {
	n := int64(fsl.Len())
	var parts []Tensor
	rows := int64(0)
	for _, c := range cols {
		l := c.(*array.FixedSizeList)
		if l.NullN() > 0 {
			for r := range l.Len() {
				if l.IsNull(r) {
					return Tensor{}, fmt.Errorf("row %d is null: %w", rows+int64(r), arrowtensor.ErrNull)
				}
			}
		}
		o := int64(l.Data().Offset())
		values := array.NewSlice(l.ListValues(), o*n, (o+int64(l.Len()))*n)
		a, valid, err := arrowtensor.ColumnValues(values)
		values.Release()
		if err != nil {
			return Tensor{}, err
		}
		if valid != nil {
			for i, v := range valid {
				if !v {
					return Tensor{}, fmt.Errorf("row %d holds a null value: %w", rows+int64(i)/max(n, 1), arrowtensor.ErrNull)
				}
			}
		}
		d, err := a.(*ndarray.Dense[string]).Reshape(int64(l.Len()), n)
		if err != nil {
			return Tensor{}, err
		}
		parts = append(parts, Tensor{Dense: d})
		rows += int64(l.Len())
	}
	if len(parts) == 0 {
		return Tensor{Kind: KindFixedShape, Dense: ndarray.New[string](0, n)}, nil
	}
	t, err := Concat(parts)
	t.Kind = KindFixedShape
	return t, err
}

// raggedColumn reads a column, one array per batch, as one ragged array, checking every
// offset as TensorFlow would.
func raggedColumn(cols []arrow.Array) (Tensor, error) {
	var parts []ragged.Any
	for _, col := range cols {
		var a ragged.Any
		var err error
		if v, ok := col.(*arrowtensor.VariableShapeTensorArray); ok {
			a, err = variableShapeRagged(v)
		} else {
			a, err = arrowtensor.RaggedFromListAny(col)
		}
		if err == nil {
			err = a.Validate()
		}
		if err != nil {
			return Tensor{}, err
		}
		parts = append(parts, a)
	}
	a := parts[0]
	if len(parts) > 1 {
		var err error
		if a, err = ragged.ConcatAny(parts...); err != nil {
			return Tensor{}, err
		}
	}
	return Tensor{Kind: KindRagged, Ragged: a}, nil
}

// variableShapeRagged reads an arrow.variable_shape_tensor array as a ragged array.
func variableShapeRagged(v *arrowtensor.VariableShapeTensorArray) (ragged.Any, error) {
	dtype, err := arrowtensor.DTypeFromArrow(v.ExtensionType().(*arrowtensor.VariableShapeTensorType).ValueType())
	if err != nil {
		return nil, err
	}
	ops, err := opsOf(dtype)
	if err != nil {
		return nil, err
	}
	return ops.variableShape(v)
}

// sparseFromRecords reads a sparse tensor carried as record batches (arrowtensor.COORecord),
// one or more, or none (no stored values).
func sparseFromRecords(schema *arrow.Schema, records []arrow.Record, base string) ([]Tensor, error) {
	if len(records) == 0 {
		cols := make([]arrow.Array, schema.NumFields())
		for i, f := range schema.Fields() {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			defer cols[i].Release()
		}
		empty := array.NewRecord(schema, cols, 0)
		defer empty.Release()
		records = []arrow.Record{empty}
	}
	a, names, err := arrowtensor.SparseFromRecords(records)
	if err != nil {
		return nil, err
	}
	return []Tensor{sparseTensor(base, a, names)}, nil
}

// fixedShapeTensor gathers the chunks of a fixed_shape_tensor column into one tensor.
func fixedShapeTensor(chunks []*arrowtensor.FixedShapeTensorArray, typ *arrowtensor.FixedShapeTensorType) (Tensor, error) {
	d, err := ColumnDense(chunks, typ)
	if err != nil {
		return Tensor{}, err
	}
	var names []string
	if typ.DimNames() != nil {
		names = append([]string{""}, typ.LogicalDimNames()...)
	}
	return Tensor{Kind: KindFixedShape, DimNames: names, Dense: d}, nil
}

// ColumnDense returns the chunks of a fixed_shape_tensor column of type typ as one
// [rows, cell...] array: a view when there is one chunk of numbers, a row-major copy of the rows in
// order otherwise. A null row or element is an error wrapping arrowtensor.ErrNull.
func ColumnDense(chunks []*arrowtensor.FixedShapeTensorArray, typ *arrowtensor.FixedShapeTensorType) (ndarray.Array, error) {
	dtype := ndarray.Bool
	if typ.ValueType().ID() != arrow.BOOL {
		var err error
		if dtype, err = arrowtensor.DTypeFromArrow(typ.ValueType()); err != nil {
			return nil, err
		}
	}
	ops, err := opsOf(dtype)
	if err != nil {
		return nil, err
	}
	return ops.column(chunks)
}
