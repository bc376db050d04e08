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
	return mapped(context.Background(), path, lim, true, func(b []byte) ([]Tensor, error) { return readNamed(path, b, base, lim) })
}

// readNamed reads the tensors of b, the bytes of the file at path, as Open does.
func readNamed(path string, b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	path = withoutQuery(path)
	if IsTFRecordName(path) {
		return ReadTFRecord(b, base, tfrecord.CompressionOf(path), lim)
	}
	return Read(b, base, lim)
}

// scanNamed opens the file at path for a directory dataset, naming its tensors after base:
// a Parquet file's columns as Sources that read each row group on demand, any other file's
// tensors as Open reads them.
func scanNamed(ctx context.Context, path string, info fs.FileInfo, base string, lim limits.Limits, budget *objectShare) (*File, []*Source, Format, error) {
	var sources []*Source
	var file File // the Sources' file, filled in once mapped returns it
	format := FormatTFRecord
	read := func(b []byte, partial bool) ([]Tensor, error) {
		if !IsTFRecordName(path) {
			format = Detect(b)
		}
		var err error
		switch {
		case format == FormatParquet:
			sources, err = scanParquet(&file, b, base, lim)
		case format == FormatArrow && partial: // an object's footer, fetched alone
			sources, err = scanArrowFile(&file, b, base, lim)
		case format == FormatNpy && partial: // an object's header, fetched alone
			sources, err = scanNpy(&file, b, base, lim)
		case format == FormatNpz && partial: // an object's directory and headers
			sources, err = scanNpz(&file, b, base, lim)
		default:
			return readNamed(path, b, base, lim)
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
	for _, t := range f.Tensors {
		sources = append(sources, residentSource(&file, t, lim))
	}
	return &file, sources, format, nil
}

// mapped maps the file at path into memory and reads its tensors with read, under Guard:
// the one place the package opens a file. path may name an object (IsURI): it is fetched
// (see fetched), whole or, unless whole, only a Parquet object's footer. Its errors past
// opening are *FileError.
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
// documentation). Tensors view b, which must outlive them and stay unchanged, except where a
// copy cannot be avoided (compressed or big-endian input); copies are garbage-collected.
func Read(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	switch Detect(b) {
	case FormatTensor, FormatSparse:
		return readMessages(b, base, lim)
	case FormatNpy:
		return readNpy(b, base, lim)
	case FormatNpz:
		return readNpz(b, base, lim)
	case FormatArrow, FormatArrows:
		return readBatches(b, base, lim)
	case FormatParquet:
		return readParquet(b, base, lim)
	case FormatTFRecord:
		return ReadTFRecord(b, base, tfrecord.None, lim)
	}
	return nil, unknownFormat(b)
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
// Column is the member's name.
func readNpz(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	arrays, err := npy.ReadNpz(b, lim)
	if err != nil {
		return nil, err
	}
	out := make([]Tensor, len(arrays))
	for i, a := range arrays {
		d, err := a.Dense()
		if err != nil {
			return nil, fmt.Errorf("npz: member %q: %w", a.Name, err)
		}
		out[i] = Tensor{Name: base + "." + a.Name, Kind: KindDense, Column: a.Name, Dense: d}
	}
	return out, nil
}

// readBatches reads the tensors of a record-batch file or stream through ipc's decoder:
// views of b, and copies from a Go allocator (whose memory the garbage collector reclaims once
// no tensor views it) where a view is impossible. Columns of types the decoder builds no
// arrays for are skipped.
func readBatches(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	schema, records, err := ipc.ReadRecordBatches(b, ipc.BatchOptions{Limits: lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	return FromRecords(schema, records, base)
}

// parquetMagic starts (and ends) a Parquet file.
const parquetMagic = "PAR1"

// readParquet reads the tensors of a Parquet file, every row group, through parquet.Reader
// (GOMAXPROCS row groups at once, in order): decoded into memory from a Go allocator, at most
// lim.MaxCopySize bytes over all row groups.
// Columns the reader cannot read (structs inside lists, maps) are left out, as are columns
// that are not tensors.
func readParquet(b []byte, base string, lim limits.Limits) ([]Tensor, error) {
	lim = lim.WithDefaults()
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: memory.NewGoAllocator(), Limits: lim})
	if err != nil {
		return nil, err
	}
	var records []arrow.Record
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	var total int64
	err = r.ReadRowGroups(context.Background(), 0, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		records = append(records, rec)
		n, err := RecordBytes(rec)
		if err != nil {
			return err
		}
		if total += n; total > lim.MaxCopySize {
			return fmt.Errorf("parquet: %d bytes decoded by row group %d, more than MaxCopySize %d: %w", total, i, lim.MaxCopySize, limits.ErrExceeded)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return FromRecords(r.Schema(), records, base)
}

// FromRecords returns the tensors the columns of records hold (record batches of schema,
// as a file, a stream or a Flight stream brings them), named base.COLUMN: each
// arrow.fixed_shape_tensor column a dense tensor of shape [rows, cell...] (and so each plain
// fixed_size_list column of numbers or bools: shape [rows, n], an embedding), each list,
// large_list, fixed_size_list or arrow.variable_shape_tensor column of numbers, bools or
// strings a ragged one (see arrowtensor.IsRaggedType), and a sparse COO record batch (see
// arrowtensor.COORecord) one sparse tensor named base. Other columns are not tensors and are
// left out. With no records, every tensor has zero rows (a sparse one, no stored values).
//
// The tensors view the records' buffers where they can (a dense column of one batch, the
// values and offsets of a large_list); columns of several batches are copied into one
// tensor. Views do not retain the records: the caller keeps their memory alive. A null row or
// element of a fixed_shape_tensor column is an error wrapping arrowtensor.ErrNull that names
// the column and the row.
func FromRecords(schema *arrow.Schema, records []arrow.Record, base string) ([]Tensor, error) {
	if arrowtensor.IsSparseSchema(schema) {
		return sparseFromRecords(schema, records, base)
	}
	var out []Tensor
	for c, field := range schema.Fields() {
		var cols []arrow.Array
		for _, rec := range records {
			cols = append(cols, rec.Column(c))
		}
		t, ok, err := columnTensor(field, cols)
		if err == nil && ok {
			err = t.readFieldMetadata(field.Metadata)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", field.Name, err)
		}
		if ok {
			t.Name, t.Column = base+"."+field.Name, field.Name
			out = append(out, t)
		}
	}
	return out, nil
}

// ErrMetadata reports ndarrow field metadata (KindKey, DimNamesKey) that does not fit its
// column. It wraps arrow.ErrInvalid.
var ErrMetadata = sentinel.New("dataset: invalid tensor metadata", arrow.ErrInvalid)

// readFieldMetadata applies what Batch wrote into a column's field metadata: the kind of a
// dense tensor and the names of every dimension.
func (t *Tensor) readFieldMetadata(md arrow.Metadata) error {
	if err := t.readKind(md, KindFixedShape, KindDense, "column"); err != nil {
		return err
	}
	if text, ok := md.GetValue(CellShapeKey); ok {
		if err := t.reshapeCells(text); err != nil {
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

// reshapeCells gives a bool tensor read from a plain fixed_size_list column, [rows, n], the
// cell shape CellShapeKey holds (JSON).
func (t *Tensor) reshapeCells(text string) error {
	var cell []int64
	d, ok := t.Dense.(*ndarray.Dense[bool])
	if json.Unmarshal([]byte(text), &cell) != nil || !ok || d.Rank() != 2 {
		return fmt.Errorf("%s %q on a %v column: %w", CellShapeKey, text, t.Shape(), ErrMetadata)
	}
	shape := append(ndarray.Shape{d.Dim(0)}, cell...)
	if err := shape.Validate(); err != nil || shape[1:].Size() != d.Dim(1) {
		return fmt.Errorf("%s %q for cells of %d values: %w", CellShapeKey, text, d.Dim(1), ErrMetadata)
	}
	r, err := d.Reshape(shape...)
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

// columnTensor returns the tensor of one column, given as one array per record batch, and
// whether the column is a tensor at all.
func columnTensor(field arrow.Field, cols []arrow.Array) (Tensor, bool, error) {
	if fsl, ok := field.Type.(*arrow.FixedSizeListType); ok {
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
	if !isFixed && !isVarShape && !arrowtensor.IsRaggedType(field.Type) {
		return Tensor{}, false, nil
	}
	if len(cols) == 0 { // no batches: one of no rows
		empty := array.MakeArrayOfNull(memory.DefaultAllocator, field.Type, 0)
		defer empty.Release()
		cols = []arrow.Array{empty}
	}
	if isFixed {
		chunks := make([]*arrowtensor.FixedShapeTensorArray, len(cols))
		rows := 0
		for i, c := range cols {
			chunks[i] = c.(*arrowtensor.FixedShapeTensorArray)
			if r := arrowtensor.NullRow(chunks[i]); r >= 0 {
				return Tensor{}, true, fmt.Errorf("row %d is null or holds a null element: %w", rows+r, arrowtensor.ErrNull)
			}
			rows += c.Len()
		}
		t, err := fixedShapeTensor(chunks, typ)
		return t, true, err
	}
	t, err := raggedColumn(cols)
	return t, true, err
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
