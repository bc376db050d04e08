package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ipc/npy"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// outputFormats are the formats convert writes.
var outputFormats = map[string]string{
	"tensor": "Arrow Tensor messages, one per tensor (pyarrow.ipc.read_tensor)",
	"npy":    "NumPy .npy (one tensor)",
	"arrow":  "Arrow IPC file: one arrow.fixed_shape_tensor (dense) or list (ragged) column per tensor, or a sparse COO record batch",
	"arrows": "Arrow IPC stream: one arrow.fixed_shape_tensor (dense) or list (ragged) column per tensor, or a sparse COO record batch",
	"coo":    "Arrow SparseTensor messages, COO (pyarrow.ipc.read_tensor)",
	"csr":    "Arrow SparseTensor messages, CSR (matrices)",
	"csc":    "Arrow SparseTensor messages, CSC (matrices)",
	"csf":    "Arrow SparseTensor messages, CSF",
}

func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "output format: tensor, npy, arrow, arrows, coo, csr, csc or csf")
	maxDense := maxDenseFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ndarrow convert --to FORMAT [--max-dense N] IN OUT")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 2 || *to == "" {
		fs.Usage()
		return exitUsage
	}
	in, out := fs.Arg(0), fs.Arg(1)
	if err := convert(ctx, *to, in, out, *maxDense); err != nil {
		fmt.Fprintf(stderr, "ndarrow convert: %v\n", err)
		return exitFail
	}
	return exitOK
}

// convert writes the tensors of in to out in format to, expanding sparse tensors into a dense
// format within maxDense elements; ctx interrupts the writing.
func convert(ctx context.Context, to, in, out string, maxDense int64) error {
	if err := checkFormat(to); err != nil {
		return err
	}
	f, err := load(in)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	defer f.Release()
	if len(f.Tensors) == 0 {
		return fmt.Errorf("%s: no tensors", in)
	}
	return writeAtomically(ctx, out, func(w io.Writer) error { return write(to, w, f.Tensors, maxDense) })
}

// checkFormat returns an error unless to is an output format.
func checkFormat(to string) error {
	if _, ok := outputFormats[to]; !ok {
		return fmt.Errorf("--to %q: unknown format (tensor, npy, arrow, arrows, coo, csr, csc, csf)", to)
	}
	return nil
}

// writeAtomically writes a temporary file beside path and renames it to path only when
// write succeeded, so a failure or an interruption (ctx, or a signal that ends the process)
// leaves nothing behind.
func writeAtomically(ctx context.Context, path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	temporaries.add(tmp.Name())
	defer temporaries.remove(tmp.Name())
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(&seekWriter{interruptible(ctx, tmp), tmp}); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// seekWriter is an interruptible writer that still seeks, as an Arrow IPC file writer needs.
type seekWriter struct {
	io.Writer
	io.Seeker
}

// write writes tensors in format to; a sparse tensor written in a dense format is expanded
// within maxDense elements.
func write(to string, w io.Writer, tensors []tensor, maxDense int64) error {
	switch to {
	case "npy":
		if len(tensors) != 1 {
			return fmt.Errorf("the input holds %d tensors; a .npy file holds one", len(tensors))
		}
	case "arrow", "arrows":
		if tensors[0].Sparse != nil {
			if len(tensors) != 1 {
				return fmt.Errorf("the input holds %d tensors; a sparse record batch file holds one", len(tensors))
			}
			return writeSparseBatch(to, w, tensors[0])
		}
		return writeBatch(to, w, tensors, maxDense)
	case "coo", "csr", "csc", "csf":
		f, _ := sparse.ParseFormat(to)
		for _, t := range tensors {
			if err := writeSparse(f, w, t); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
		return nil
	}
	for _, t := range tensors {
		if err := writeOne(to, w, t, maxDense); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

// writeSparse writes one tensor as a SparseTensor message of format f.
func writeSparse(f sparse.Format, w io.Writer, t tensor) error {
	if t.Ragged != nil {
		return errRagged
	}
	ops, err := opsOf(t.DType())
	if err != nil {
		return err
	}
	if (f == sparse.FormatCSR || f == sparse.FormatCSC) && t.Shape().Rank() != 2 {
		return fmt.Errorf("%v needs a rank-2 tensor, not shape %v", f, t.Shape())
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
	return ops.writeSparse(w, a, dimNamesFor(t))
}

// dimNamesFor returns the tensor's dimension names when there is one per dimension.
func dimNamesFor(t tensor) []string {
	if len(t.DimNames) != t.Shape().Rank() {
		return nil
	}
	return t.DimNames
}

// writeSparseBatch writes a sparse tensor as a COO record batch (arrowtensor.COORecord) in an
// IPC file or stream.
func writeSparseBatch(to string, w io.Writer, t tensor) error {
	recs, err := t.Records(memory.DefaultAllocator, "", 0)
	if err != nil {
		return err
	}
	defer recs[0].Release()
	return writeRecord(to, w, recs[0])
}

// writeOne writes one tensor as a Tensor message or a .npy file.
func writeOne(to string, w io.Writer, t tensor, maxDense int64) error {
	if t.Ragged != nil {
		return errRagged
	}
	var err error
	if t.Dense, err = t.DenseArray(maxDense); err != nil {
		return err
	}
	if b, ok := t.Dense.(*ndarray.Dense[bool]); ok {
		if to == "npy" {
			_, err := npy.Write(w, b)
			return err
		}
		return fmt.Errorf("bool tensors cannot be Arrow tensors: %w", ipc.ErrUnsupported)
	}
	ops, err := opsOf(t.Dense.DType())
	if err != nil {
		return err
	}
	if to == "npy" {
		return ops.writeNpy(w, t.Dense)
	}
	names := t.DimNames
	if names != nil && len(names) != t.Dense.Rank() {
		names = nil
	}
	return ops.writeTensor(w, t.Dense, names)
}

// writeBatch writes the tensors as fixed_shape_tensor columns of one record batch: each
// tensor's first dimension is the rows, so all must have the same.
func writeBatch(to string, w io.Writer, tensors []tensor, maxDense int64) error {
	var fields []arrow.Field
	var cols []arrow.Array
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	rows := int64(-1)
	for i, t := range tensors {
		if t.Sparse != nil {
			var err error
			if t.Dense, err = t.DenseArray(maxDense); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
			t.Sparse = nil
		}
		shape := t.Shape()
		if shape.Rank() == 0 {
			return fmt.Errorf("%s is a scalar: a tensor column needs a first dimension of rows", t.Name)
		}
		if rows >= 0 && shape[0] != rows {
			return fmt.Errorf("%s has %d rows, %s %d: columns of one batch need the same", t.Name, shape[0], tensors[0].Name, rows)
		}
		rows = shape[0]
		col, err := columnOf(t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		cols = append(cols, col)
		name := t.Column
		if name == "" {
			name = "tensor"
			if len(tensors) > 1 {
				name = fmt.Sprintf("tensor_%d", i)
			}
		}
		fields = append(fields, arrow.Field{Name: name, Type: col.DataType(), Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, rows)
	defer rec.Release()
	return writeRecord(to, w, rec)
}

// writeRecord writes one record batch as an IPC file ("arrow") or stream ("arrows").
func writeRecord(to string, w io.Writer, rec arrow.Record) error {
	schema := rec.Schema()
	if to == "arrow" {
		ws, ok := w.(interface {
			io.Writer
			io.Seeker
		})
		if !ok {
			return errors.New("an Arrow IPC file needs a seekable output")
		}
		fw, err := arrowipc.NewFileWriter(ws, arrowipc.WithSchema(schema))
		if err != nil {
			return err
		}
		if err := fw.Write(rec); err != nil {
			return err
		}
		return fw.Close()
	}
	sw := arrowipc.NewWriter(w, arrowipc.WithSchema(schema))
	if err := sw.Write(rec); err != nil {
		return err
	}
	return sw.Close()
}

// columnOf makes a fixed_shape_tensor column of a [rows, cell...] tensor, the first dimension
// name, the rows', dropped; or a list column of a ragged tensor (list for int32 row splits,
// large_list for int64 ones, as it was read).
func columnOf(t tensor) (arrow.Array, error) {
	if t.Ragged != nil {
		list := arrow.LARGE_LIST
		if t.Ragged.SplitDType() == ndarray.Int32 {
			list = arrow.LIST
		}
		return arrowtensor.ListFromRaggedAny(memory.DefaultAllocator, t.Ragged, list)
	}
	var names []string
	if len(t.DimNames) > 1 && strings.Join(t.DimNames[1:], "") != "" {
		names = t.DimNames[1:]
	}
	ops, err := opsOf(t.Dense.DType())
	if err != nil {
		return nil, err
	}
	return ops.tensorArray(t.Dense, names)
}
