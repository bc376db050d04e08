package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ipc/npy"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// tensor is one tensor found in an input file: dense (values), sparse (sparse) or ragged
// (ragged).
type tensor struct {
	name     string // the file's base name, with .N or .COLUMN when it holds several
	kind     string // "dense", "fixed_shape_tensor", "ragged" or "sparse_" + the sparse format
	column   string // for record-batch columns
	dimNames []string
	values   ndarray.Array
	sparse   sparse.Array
	ragged   ragged.Any
}

// shape returns the tensor's (dense) shape; ragged dimensions are -1.
func (t tensor) shape() ndarray.Shape {
	switch {
	case t.sparse != nil:
		return t.sparse.Shape()
	case t.ragged != nil:
		return t.ragged.Shape()
	}
	return t.values.Shape()
}

// dtype returns the element type.
func (t tensor) dtype() ndarray.DType {
	switch {
	case t.sparse != nil:
		return t.sparse.DType()
	case t.ragged != nil:
		return t.ragged.DType()
	}
	return t.values.DType()
}

// nnz returns the number of stored values: every element of a dense tensor, the flat values of
// a ragged one.
func (t tensor) nnz() int64 {
	switch {
	case t.sparse != nil:
		return t.sparse.NNZ()
	case t.ragged != nil:
		return t.ragged.NumValues() * t.ragged.InnerShape().Size()
	}
	return t.values.Size()
}

// errRagged is what the dense output formats say about a ragged tensor.
var errRagged = errors.New("a ragged array has no dense form: convert it --to arrow or arrows")

// writeValues writes the elements in dense row-major order, little-endian (for a ragged
// tensor, its flat values).
func (t tensor) writeValues(w io.Writer) (int64, error) {
	switch {
	case t.sparse != nil:
		return t.sparse.WriteTo(w)
	case t.ragged != nil:
		return t.ragged.WriteTo(w)
	}
	return t.values.WriteTo(w)
}

// sparseTensor returns a tensor for a sparse array.
func sparseTensor(name string, a sparse.Array, dimNames []string) tensor {
	return tensor{name: name, kind: "sparse_" + a.Format().String(), dimNames: dimNames, sparse: a}
}

// format names the kinds of input files, detected from their first bytes.
type format string

const (
	formatTensor  format = "tensor"  // encapsulated Tensor messages
	formatSparse  format = "sparse"  // encapsulated SparseTensor messages
	formatNpy     format = "npy"     // NumPy .npy
	formatArrow   format = "arrow"   // Arrow IPC file
	formatArrows  format = "arrows"  // Arrow IPC stream of record batches
	formatUnknown format = "unknown" // anything else
)

// detect tells the format of a file from its first bytes.
func detect(b []byte) format {
	switch {
	case bytes.HasPrefix(b, []byte("\x93NUMPY")):
		return formatNpy
	case bytes.HasPrefix(b, []byte("ARROW1")):
		return formatArrow
	}
	// An encapsulated message: the header type of the first one tells tensors from batches.
	start := 4
	if len(b) >= 4 && bytes.Equal(b[:4], []byte{0xff, 0xff, 0xff, 0xff}) {
		start = 8
	}
	if len(b) < start {
		return formatUnknown
	}
	n := int(int32(uint32(b[start-4]) | uint32(b[start-3])<<8 | uint32(b[start-2])<<16 | uint32(b[start-1])<<24))
	if n <= 0 || n > len(b)-start {
		return formatUnknown
	}
	meta := b[start : start+n]
	if arrowfb.VerifyMessage(meta) != nil {
		return formatUnknown
	}
	switch arrowfb.GetRootAsMessage(meta, 0).HeaderType() {
	case arrowfb.MessageHeaderTensor:
		return formatTensor
	case arrowfb.MessageHeaderSparseTensor:
		return formatSparse
	case arrowfb.MessageHeaderSchema:
		return formatArrows
	}
	return formatUnknown
}

// load reads every tensor of the file at path. The tensors view the file's bytes, which the
// returned arrays keep alive; a file of several tensors names them NAME.0, NAME.1, …
func load(path string) ([]tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	switch f := detect(b); f {
	case formatTensor, formatSparse:
		return loadTensors(b, base)
	case formatNpy:
		return loadNpy(b, base)
	case formatArrow, formatArrows:
		return loadBatches(b, base)
	default:
		return nil, fmt.Errorf("not a tensor file: no .npy magic, Arrow IPC file magic or tensor message at the start")
	}
}

// loadTensors reads a stream of Tensor and SparseTensor messages.
func loadTensors(b []byte, base string) ([]tensor, error) {
	rd := ipc.NewBytesReader(b, ipc.Limits{})
	var out []tensor
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
			out = append(out, tensor{kind: "dense", dimNames: t.DimNames(), values: d})
		case *ipc.SparseTensor:
			out = append(out, sparseTensor("", t.Array(), t.DimNames()))
		}
	}
	for i := range out {
		out[i].name = base
		if len(out) > 1 {
			out[i].name = base + "." + strconv.Itoa(i)
		}
	}
	return out, nil
}

func loadNpy(b []byte, base string) ([]tensor, error) {
	a, err := npy.ReadBytes(b, npy.Limits{})
	if err != nil {
		return nil, err
	}
	d, err := a.Dense()
	if err != nil {
		return nil, err
	}
	return []tensor{{name: base, kind: "dense", values: d}}, nil
}

// loadBatches reads the tensor columns of a record-batch file or stream, each column one
// tensor over all its batches: fixed_shape_tensor columns as dense tensors of shape
// [rows, cell...], list, large_list, fixed_size_list and variable_shape_tensor columns as
// ragged arrays. Fixed-shape columns are read without copying; batches whose layout only
// arrow-go's reader handles (compressed ones, say), and ragged columns, are read through it.
func loadBatches(b []byte, base string) ([]tensor, error) {
	chunks := map[string][]*arrowtensor.FixedShapeTensorArray{}
	schema, err := ipc.ReadSchema(b)
	if err != nil {
		return nil, err
	}
	if arrowtensor.IsSparseSchema(schema) {
		return loadSparseBatches(b, base)
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
	var out []tensor
	for c, field := range schema.Fields() {
		var t tensor
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
		t.name, t.column = base+"."+field.Name, field.Name
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
func raggedColumn(records []arrow.Record, c int) (tensor, error) {
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
			return tensor{}, err
		}
		parts = append(parts, a)
	}
	if len(parts) == 0 {
		return tensor{}, errors.New("no record batches")
	}
	a := parts[0]
	if len(parts) > 1 {
		var err error
		if a, err = ragged.ConcatAny(parts...); err != nil {
			return tensor{}, err
		}
	}
	return tensor{kind: "ragged", ragged: a}, nil
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

// loadSparseBatches reads a sparse tensor carried as record batches (arrowtensor.COORecord),
// one or more.
func loadSparseBatches(b []byte, base string) ([]tensor, error) {
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
	return []tensor{sparseTensor(base, a, names)}, nil
}

// concatCOO returns the entries of COO parts of one shape as one COO: the only part itself, or
// a copy of all in order.
func concatCOO[T ndarray.Numeric](parts []sparse.Array) (sparse.Array, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	shape := parts[0].Shape()
	var coords []int64
	var values []T
	for _, p := range parts {
		c := p.(*sparse.COO[T])
		if !c.Shape().Equal(shape) {
			return nil, fmt.Errorf("record batches of sparse shapes %v and %v", shape, c.Shape())
		}
		coords = append(coords, c.Indices().AsInt64()...)
		values = append(values, c.Data()...)
	}
	return sparse.MakeCOO(shape, sparse.Int64Indices(coords), values)
}

// columnTensor gathers the chunks of a fixed_shape_tensor column into one tensor.
func columnTensor(chunks []*arrowtensor.FixedShapeTensorArray, typ *arrowtensor.FixedShapeTensorType) (tensor, error) {
	dtype, err := arrowtensor.DTypeFromArrow(typ.ValueType())
	if err != nil {
		return tensor{}, err
	}
	ops, err := opsOf(dtype)
	if err != nil {
		return tensor{}, err
	}
	d, err := ops.column(chunks)
	if err != nil {
		return tensor{}, err
	}
	var names []string
	if typ.DimNames() != nil {
		names = append([]string{""}, typ.LogicalDimNames()...)
	}
	return tensor{kind: "fixed_shape_tensor", dimNames: names, values: d}, nil
}

// columnDense returns the chunks of a column as one [rows, cell...] array: a view when there
// is one chunk, a copy of the rows in order otherwise.
func columnDense[T ndarray.Numeric](chunks []*arrowtensor.FixedShapeTensorArray) (*ndarray.Dense[T], error) {
	var parts []*ndarray.Dense[T]
	rows := int64(0)
	for _, col := range chunks {
		d, err := arrowtensor.ToDense[T](col)
		if err != nil {
			return nil, err
		}
		parts = append(parts, d)
		rows += d.Dim(0)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("no record batches")
	}
	shape := parts[0].Shape()
	shape[0] = rows
	out := ndarray.New[T](shape...)
	at := int64(0)
	for _, p := range parts {
		dst, err := out.Slice(ndarray.Range(at, at+p.Dim(0)))
		if err != nil {
			return nil, err
		}
		if err := ndarray.Copy(dst, p); err != nil {
			return nil, err
		}
		at += p.Dim(0)
	}
	return out, nil
}
