package dataset

import (
	"fmt"
	"io"

	"github.com/ndarrow/ndarrow/limits"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// WriteTensorMessage writes a dense tensor as one Arrow Tensor message (what
// pyarrow.ipc.read_tensor reads), with its dimension names and, in the message's
// custom_metadata, its kind and column (MessageMetadata). Bool and string tensors have no
// Arrow Tensor: ndarray.ErrDType; a ragged or sparse one: ErrRagged or ndarray.ErrDType.
func (t Tensor) WriteTensorMessage(w io.Writer) error {
	if t.Dense == nil {
		return fmt.Errorf("dataset: %s is %s, not dense: %w", t.Name, t.ImpliedKind(), ndarray.ErrDType)
	}
	ops, err := opsOf(t.Dense.DType())
	if err != nil {
		return err
	}
	return ops.writeTensor(w, t.Dense, t.dimNamesForRank(), t.MessageMetadata())
}

// WriteSparseMessage writes the tensor as one Arrow SparseTensor message in format f: a sparse
// tensor converted to f, a dense one's non-zero elements. CSR and CSC need a matrix. The
// message carries the dimension names and, in custom_metadata, the column. A shape of more
// elements than a reader of the message takes (the default limits.Limits.MaxElements, each
// dimension too) is refused with a *limits.ExceededError, nothing written: it could not be read
// back (.npz, .arrow, .arrows and .parquet keep it sparse).
func (t Tensor) WriteSparseMessage(w io.Writer, f sparse.Format) error {
	if t.Ragged != nil {
		return fmt.Errorf("dataset: %s: %w", t.Name, ErrRagged)
	}
	ops, err := opsOf(t.DType())
	if err != nil {
		return err
	}
	if (f == sparse.FormatCSR || f == sparse.FormatCSC) && t.Shape().Rank() != 2 {
		return fmt.Errorf("%v needs a rank-2 tensor, not shape %v", f, t.Shape())
	}
	if err := readableAsSparseMessage(t.Shape()); err != nil {
		return err
	}
	var a sparse.Array
	if t.Sparse != nil {
		a, err = t.Sparse.Convert(f)
	} else {
		a, err = ops.toSparse(t.Dense, f)
	}
	if err != nil {
		return err
	}
	t.Kind = SparseKind(f)
	return ops.writeSparse(w, a, t.dimNamesForRank(), t.MessageMetadata())
}

// readableAsSparseMessage returns a *limits.ExceededError (limits.ErrExceeded) when a
// SparseTensor message of the shape is more than a reader takes — its elements, or one of
// its dimensions, above the default limits.Limits.MaxElements, which bounds a sparse tensor's
// shape as a dense one's — so that nothing is written that ndarrow cannot read back; else nil.
func readableAsSparseMessage(shape ndarray.Shape) error {
	most := limits.Default().MaxElements
	n := shape.Size()
	big := shape.Validate() != nil || n > most
	for _, d := range shape {
		big = big || d > most
	}
	if !big {
		return nil
	}
	return &limits.ExceededError{Field: "MaxElements", Needs: n, Limit: most, Msg: fmt.Sprintf(
		"a SparseTensor message (.coo, .csr, .csc, .csf or .tensor) of shape %v is more than a reader of one takes: a shape of at most %d elements, each dimension too (limits.Limits.MaxElements), so ndarrow could not read it back: write .npz, .arrow, .arrows or .parquet, which keep it sparse",
		shape, most)}
}
