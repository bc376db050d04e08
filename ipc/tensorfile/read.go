package tensorfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ipc/npy"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// ErrNotTensors is returned for input that is none of the formats the package reads.
var ErrNotTensors = errors.New("tensorfile: not a tensor file: no .npy magic, Arrow IPC file magic or tensor message at the start")

// Format names the kinds of input, as Detect tells them.
type Format string

// The formats Detect tells apart.
const (
	FormatTensor  Format = "tensor"  // encapsulated Tensor messages
	FormatSparse  Format = "sparse"  // encapsulated SparseTensor messages
	FormatNpy     Format = "npy"     // NumPy .npy
	FormatArrow   Format = "arrow"   // Arrow IPC file
	FormatArrows  Format = "arrows"  // Arrow IPC stream of record batches
	FormatUnknown Format = "unknown" // anything else
)

// Detect tells the format of b from its first bytes.
func Detect(b []byte) Format {
	switch {
	case bytes.HasPrefix(b, []byte("\x93NUMPY")):
		return FormatNpy
	case bytes.HasPrefix(b, []byte("ARROW1")):
		return FormatArrow
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
// until the last reference is released.
type File struct {
	Path    string
	Tensors []Tensor
	mapping *mmap.Mapping
}

// Open maps the file at path into memory and reads its tensors, named after the file (see
// the package documentation). The File holds one reference to the mapping; Release it when
// the tensors are no longer used.
func Open(path string) (*File, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, err
	}
	tensors, err := Read(m.Bytes(), BaseName(path))
	if err != nil {
		m.Release()
		return nil, fmt.Errorf("%s: %w", path, err)
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
// extension.
func BaseName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// Read reads every tensor in b, naming them after base (see the package documentation).
// Dense tensors view b, which must outlive them and stay unchanged.
func Read(b []byte, base string) ([]Tensor, error) {
	switch Detect(b) {
	case FormatTensor, FormatSparse:
		return readMessages(b, base)
	case FormatNpy:
		return readNpy(b, base)
	case FormatArrow, FormatArrows:
		return readBatches(b, base)
	}
	return nil, ErrNotTensors
}

// readMessages reads a stream of Tensor and SparseTensor messages.
func readMessages(b []byte, base string) ([]Tensor, error) {
	rd := ipc.NewBytesReader(b, ipc.Limits{})
	var out []Tensor
	for {
		t, err := rd.NextAny()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case *ipc.Tensor:
			d, err := t.Dense()
			if err != nil {
				return nil, err
			}
			out = append(out, Tensor{Kind: KindDense, DimNames: t.DimNames(), Dense: d})
		case *ipc.SparseTensor:
			out = append(out, sparseTensor("", t.Array(), t.DimNames()))
		}
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

func readNpy(b []byte, base string) ([]Tensor, error) {
	a, err := npy.ReadBytes(b, npy.Limits{})
	if err != nil {
		return nil, err
	}
	d, err := a.Dense()
	if err != nil {
		return nil, err
	}
	return []Tensor{{Name: base, Kind: KindDense, Dense: d}}, nil
}

// readBatches reads the tensor columns of a record-batch file or stream, each column one
// tensor over all its batches: fixed_shape_tensor columns as dense tensors of shape
// [rows, cell...], list, large_list, fixed_size_list and variable_shape_tensor columns as
// ragged arrays. Fixed-shape columns are read without copying; batches whose layout only
// arrow-go's reader handles (compressed ones, say), and ragged columns, are read through it.
func readBatches(b []byte, base string) ([]Tensor, error) {
	chunks := map[string][]*arrowtensor.FixedShapeTensorArray{}
	schema, err := ipc.ReadSchema(b)
	if err != nil {
		return nil, err
	}
	if arrowtensor.IsSparseSchema(schema) {
		return readSparseBatches(b, base)
	}
	var records []arrow.Record
	cols, err := ipc.ReadTensorColumns(b)
	switch {
	case err == nil:
		for _, c := range cols {
			chunks[c.Name] = c.Chunks
		}
	case errors.Is(err, ipc.ErrUnsupported):
		if records, err = readRecords(b); err != nil {
			return nil, err
		}
		for c, field := range schema.Fields() {
			for _, rec := range records {
				if col, ok := rec.Column(c).(*arrowtensor.FixedShapeTensorArray); ok {
					chunks[field.Name] = append(chunks[field.Name], col)
				}
			}
		}
	default:
		return nil, err
	}
	var out []Tensor
	for c, field := range schema.Fields() {
		var t Tensor
		var err error
		switch typ := field.Type.(type) {
		case *arrowtensor.FixedShapeTensorType:
			t, err = columnTensor(chunks[field.Name], typ)
		case *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType, *arrowtensor.VariableShapeTensorType:
			if records == nil {
				if records, err = readRecords(b); err != nil {
					return nil, err
				}
			}
			t, err = raggedColumn(records, c)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", field.Name, err)
		}
		t.Name, t.Column = base+"."+field.Name, field.Name
		out = append(out, t)
	}
	return out, nil
}

// readRecords reads every record batch with arrow-go's readers. Its Go allocator leaves freed
// memory to the garbage collector, so views taken of the records stay valid without them
// being retained; they are not released.
func readRecords(b []byte) ([]arrow.Record, error) {
	_, records, err := ipc.ReadRecordBatches(b, memory.NewGoAllocator())
	return records, err
}

// raggedColumn reads column c of every record as one ragged array, checking every offset.
func raggedColumn(records []arrow.Record, c int) (Tensor, error) {
	var parts []ragged.Any
	for _, rec := range records {
		var a ragged.Any
		var err error
		if v, ok := rec.Column(c).(*arrowtensor.VariableShapeTensorArray); ok {
			a, err = variableShapeRagged(v)
		} else {
			a, err = arrowtensor.RaggedFromListAny(rec.Column(c))
		}
		if err == nil {
			err = a.Validate()
		}
		if err != nil {
			return Tensor{}, err
		}
		parts = append(parts, a)
	}
	if len(parts) == 0 {
		return Tensor{}, errors.New("no record batches")
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

// readSparseBatches reads a sparse tensor carried as record batches (arrowtensor.COORecord),
// one or more.
func readSparseBatches(b []byte, base string) ([]Tensor, error) {
	records, err := readRecords(b)
	if err != nil {
		return nil, err
	}
	var parts []sparse.Array
	var names []string
	for _, rec := range records {
		a, n, err := arrowtensor.SparseFromRecord(rec)
		if err != nil {
			return nil, err
		}
		parts, names = append(parts, a), n
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("a sparse tensor stream without record batches")
	}
	ops, err := opsOf(parts[0].DType())
	if err != nil {
		return nil, err
	}
	a, err := ops.concatCOO(parts)
	if err != nil {
		return nil, err
	}
	return []Tensor{sparseTensor(base, a, names)}, nil
}

// columnTensor gathers the chunks of a fixed_shape_tensor column into one tensor.
func columnTensor(chunks []*arrowtensor.FixedShapeTensorArray, typ *arrowtensor.FixedShapeTensorType) (Tensor, error) {
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
// [rows, cell...] array: a view when there is one chunk, a row-major copy of the rows in
// order otherwise.
func ColumnDense(chunks []*arrowtensor.FixedShapeTensorArray, typ *arrowtensor.FixedShapeTensorType) (ndarray.Array, error) {
	dtype, err := arrowtensor.DTypeFromArrow(typ.ValueType())
	if err != nil {
		return nil, err
	}
	ops, err := opsOf(dtype)
	if err != nil {
		return nil, err
	}
	return ops.column(chunks)
}
