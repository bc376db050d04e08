package dataset

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// Kind says how a tensor was stored.
type Kind string

// The kinds of tensors; a sparse tensor's kind is "sparse_" followed by its format.
const (
	KindDense      Kind = "dense"              // a Tensor message, a .npy file or an .npz member
	KindFixedShape Kind = "fixed_shape_tensor" // an arrow.fixed_shape_tensor column
	KindRagged     Kind = "ragged"             // a list, large_list, fixed_size_list or variable_shape_tensor column
)

// SparseKind returns the kind of a sparse tensor of format f.
func SparseKind(f sparse.Format) Kind { return Kind("sparse_" + f.String()) }

// Tensor is one named tensor. Exactly one of Dense, Sparse and Ragged is set.
type Tensor struct {
	Name     string   // the file's base name, with .N or .COLUMN when it holds several
	Kind     Kind     // how it was stored; empty: what the field set implies (ImpliedKind)
	Column   string   // the record-batch column or .npz member it came from, if any
	DimNames []string // dimension names, nil when the format carried none
	Dense    ndarray.Array
	Sparse   sparse.Array
	Ragged   ragged.Any
	// Valid says which rows of a plain column (a dense tensor of shape [rows]: numbers, bools,
	// strings) hold a value: nil when every row does; else one flag per row, false for a null
	// row, whose value is unspecified (zero where ndarrow copied or wrote it). Formats that hold
	// no nulls (.npy, Tensor messages, TFRecord) refuse a tensor with null rows, naming its
	// null count; Filled gives it a value instead.
	Valid []bool
	// Bytes says that a string tensor holds bytes rather than text: it was read from a column
	// of binary, large_binary or fixed_size_binary values (plain, dictionary-encoded or in
	// lists), and is written back as binary whatever its values. A string tensor without it is
	// written as utf8 when every value is valid UTF-8, else as binary.
	Bytes bool
	// Dictionary, on a plain column of strings (a dense tensor [rows]) read from a
	// dictionary-encoded Arrow column — an Arrow file's or stream's, or a Parquet file's whose
	// stored Arrow schema says so — keeps that encoding: Batch writes the column back as a
	// dictionary of its type (Flight streams it with its dictionary batches). nil for a column
	// of plain strings, and written as one.
	Dictionary *Dictionary
}

// NullCount returns the number of null rows (Valid).
func (t Tensor) NullCount() int64 {
	n := int64(0)
	for _, v := range t.Valid {
		if !v {
			n++
		}
	}
	return n
}

// ImpliedKind returns t.Kind, or when it is empty the kind of the field set: dense, the sparse
// array's format, or ragged.
func (t Tensor) ImpliedKind() Kind {
	switch {
	case t.Kind != "":
		return t.Kind
	case t.Sparse != nil:
		return SparseKind(t.Sparse.Format())
	case t.Ragged != nil:
		return KindRagged
	}
	return KindDense
}

// Shape returns the tensor's shape; ragged dimensions are -1.
func (t Tensor) Shape() ndarray.Shape {
	switch {
	case t.Sparse != nil:
		return t.Sparse.Shape()
	case t.Ragged != nil:
		return t.Ragged.Shape()
	}
	return t.Dense.Shape()
}

// DType returns the element type.
func (t Tensor) DType() ndarray.DType {
	switch {
	case t.Sparse != nil:
		return t.Sparse.DType()
	case t.Ragged != nil:
		return t.Ragged.DType()
	}
	return t.Dense.DType()
}

// NNZ returns the number of stored values: every element of a dense tensor, the stored
// entries of a sparse one, the flat values of a ragged one.
func (t Tensor) NNZ() int64 {
	switch {
	case t.Sparse != nil:
		return t.Sparse.NNZ()
	case t.Ragged != nil:
		return t.Ragged.NumValues() * t.Ragged.InnerShape().Size()
	}
	return t.Dense.Size()
}

// Rows returns the tensor's first dimension, the rows a record batch holds it in: for a
// sparse tensor, which travels as one row per stored entry, NNZ. A scalar has one row.
func (t Tensor) Rows() int64 {
	switch {
	case t.Sparse != nil:
		return t.Sparse.NNZ()
	case t.Ragged != nil:
		return t.Ragged.NumRows()
	}
	if t.Dense.Rank() == 0 {
		return 1
	}
	return t.Dense.Shape()[0]
}

// WriteValues writes the elements in dense row-major order, little-endian (for a ragged
// tensor, its flat values), as inspect's sha256 hashes them. A sparse tensor is expanded as
// it is written, zeros included: one whose dense form holds more than maxDense elements
// (maxDense ≤ 0: the default limit) fails with sparse.ErrTooLarge before anything is written.
func (t Tensor) WriteValues(w io.Writer, maxDense int64) (int64, error) {
	switch {
	case t.Sparse != nil:
		if err := sparse.CheckDense(t.Sparse.Shape(), maxDense); err != nil {
			return 0, err
		}
		return t.Sparse.WriteTo(w)
	case t.Ragged != nil:
		return t.Ragged.WriteTo(w)
	}
	return t.Dense.WriteTo(w)
}

// DenseArray returns the tensor as a dense array: itself when it is dense, a new row-major
// array of its elements when it is sparse (failing with sparse.ErrTooLarge above maxDense
// elements; maxDense ≤ 0: the default limit). A ragged tensor has no dense form: ErrRagged.
func (t Tensor) DenseArray(maxDense int64) (ndarray.Array, error) {
	switch {
	case t.Sparse != nil:
		return t.Sparse.DenseArray(maxDense)
	case t.Ragged != nil:
		return nil, ErrRagged
	}
	return t.Dense, nil
}

// ErrRagged is returned for a ragged tensor where a dense one is needed. It wraps
// ndarray.ErrShape.
var ErrRagged = sentinel.New("dataset: a ragged tensor has no dense form", ndarray.ErrShape)

// String returns a one-line description: name, kind, dtype and shape.
func (t Tensor) String() string {
	return fmt.Sprintf("%s: %s %v %v", t.Name, t.ImpliedKind(), t.DType(), t.Shape())
}

// Concat returns parts, pieces of one tensor split along its first axis (as Flight endpoints
// on several servers hold it), as one tensor named after the first: the only part itself, or
// a copy of all the rows in order. Dense parts need the same dtype and cell shape, ragged ones
// the same dtype, ragged rank and inner shape. Sparse tensors are not split; more than one
// sparse part fails with ndarray.ErrShape.
func Concat(parts []Tensor) (Tensor, error) {
	switch len(parts) {
	case 0:
		return Tensor{}, fmt.Errorf("dataset: concat of no parts: %w", ndarray.ErrShape)
	case 1:
		return parts[0], nil
	}
	out := parts[0]
	switch {
	case out.Sparse != nil:
		return Tensor{}, fmt.Errorf("dataset: %s: a sparse tensor in %d parts: %w", out.Name, len(parts), ndarray.ErrShape)
	case out.Ragged != nil:
		rs := make([]ragged.Any, len(parts))
		for i, p := range parts {
			if p.Ragged == nil {
				return Tensor{}, fmt.Errorf("dataset: %s: part %d is %s, not ragged: %w", out.Name, i, p.Kind, ndarray.ErrShape)
			}
			rs[i] = p.Ragged
		}
		a, err := ragged.ConcatAny(rs...)
		if err != nil {
			return Tensor{}, fmt.Errorf("dataset: %s: %w", out.Name, err)
		}
		out.Ragged = a
		return out, nil
	}
	ds := make([]ndarray.Array, len(parts))
	nulls := false
	for i, p := range parts {
		if p.Dense == nil || p.Dense.DType() != out.Dense.DType() {
			return Tensor{}, fmt.Errorf("dataset: %s: part %d is %s %v, not dense %v: %w", out.Name, i, p.Kind, p.DType(), out.DType(), ndarray.ErrDType)
		}
		ds[i] = p.Dense
		nulls = nulls || p.Valid != nil
	}
	ops, err := opsOf(out.DType())
	if err != nil {
		return Tensor{}, err
	}
	if out.Dense, err = ops.concatDense(ds); err != nil {
		return Tensor{}, fmt.Errorf("dataset: %s: %w", out.Name, err)
	}
	out.Valid = nil
	if nulls {
		out.Valid = make([]bool, 0, out.Rows())
		for _, p := range parts {
			out.Valid = appendValid(out.Valid, p.Valid, p.Rows())
		}
	}
	return out, nil
}

// appendValid appends the validity of rows rows to dst: valid, or true for each when valid is
// nil (no null row).
func appendValid(dst, valid []bool, rows int64) []bool {
	if valid != nil {
		return append(dst, valid...)
	}
	for range rows {
		dst = append(dst, true)
	}
	return dst
}

// ErrNoTensor is returned for a name no tensor of a file or directory has.
var ErrNoTensor = errors.New("dataset: no such tensor")

// DenseOf returns t's values as the typed array they are — a view, not a copy — or an error
// that says what t is instead: a sparse or ragged tensor (wrapping ndarray.ErrShape; see
// Tensor.DenseArray for a sparse tensor's dense form) or another element type (wrapping
// ndarray.ErrDType; see ndarray.AsType).
func DenseOf[T ndarray.Element](t Tensor) (*ndarray.Dense[T], error) {
	if t.Dense == nil {
		return nil, fmt.Errorf("dataset: %s is %s, not dense: %w", t.Name, t.ImpliedKind(), ndarray.ErrShape)
	}
	d, ok := t.Dense.(*ndarray.Dense[T])
	if !ok {
		return nil, fmt.Errorf("dataset: %s holds %v, not %v: %w", t.Name, t.DType(), ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	return d, nil
}

// Tensor returns the tensor of f named name (as Open names them), or an error wrapping
// ErrNoTensor that lists the names f has. The tensor views f's mapping.
func (f *File) Tensor(name string) (Tensor, error) { return tensorNamed(f.Path, f.Tensors, name) }

// Tensor returns the tensor of an OpenDir directory named name, or an error wrapping
// ErrNoTensor that lists the names it has.
func (d *Dir) Tensor(name string) (Tensor, error) { return tensorNamed(d.Path, d.Tensors, name) }

func tensorNamed(path string, tensors []Tensor, name string) (Tensor, error) {
	names := make([]string, len(tensors))
	for i, t := range tensors {
		if t.Name == name {
			return t, nil
		}
		names[i] = t.Name
	}
	return Tensor{}, fmt.Errorf("%w: %s holds no tensor %q (it holds %s)", ErrNoTensor, path, name, strings.Join(names, ", "))
}
