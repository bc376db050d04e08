package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
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

// outputFormats are the formats convert and get write, in the order help lists them; each is
// also the extension of a file of that format.
var outputFormats = []struct{ name, what string }{
	{"tensor", "Arrow Tensor messages (a sparse tensor: SparseTensor messages), pyarrow.ipc.read_tensor"},
	{"npy", "NumPy .npy (one dense tensor)"},
	{"arrow", "Arrow IPC file: a column per tensor (arrow.fixed_shape_tensor, list) or a sparse COO batch"},
	{"arrows", "Arrow IPC stream: the same as arrow, as a stream"},
	{"coo", "Arrow SparseTensor messages, COO"},
	{"csr", "Arrow SparseTensor messages, CSR (matrices)"},
	{"csc", "Arrow SparseTensor messages, CSC (matrices)"},
	{"csf", "Arrow SparseTensor messages, CSF (rank 2 and more)"},
}

// formatNames returns the output formats' names, as "tensor, npy, …, csf".
func formatNames() string {
	names := make([]string, len(outputFormats))
	for i, f := range outputFormats {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// checkFormat returns an error unless to is an output format.
func checkFormat(to string) error {
	for _, f := range outputFormats {
		if f.name == to {
			return nil
		}
	}
	return fmt.Errorf("--to %q: unknown format (%s)", to, formatNames())
}

// formatOf returns the output format an OUT file's extension asks for.
func formatOf(path string) (string, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if checkFormat(ext) != nil {
		return "", fmt.Errorf("%s: cannot tell the format from the extension; give --to (%s)", path, formatNames())
	}
	return ext, nil
}

// outputFormat returns the format --to gives, or else OUT's extension.
func outputFormat(to, out string) (string, error) {
	if to == "" {
		return formatOf(out)
	}
	return to, checkFormat(to)
}

func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	to := fs.String("to", "", "output format (default: OUT's extension): "+formatNames())
	pick := fs.String("tensor", "", "convert only the tensor of this name (as inspect prints it)")
	maxDense := maxDenseFlag(fs)
	if code, ok := parseArgs(fs, "convert", args, stdout, stderr, 2, 2); !ok {
		return code
	}
	return finishCommand(stderr, "convert", convert(ctx, *to, *pick, fs.Arg(0), fs.Arg(1), *maxDense))
}

// convert writes the tensors of in (or the one named pick) to out in format to (out's
// extension when empty), expanding sparse tensors into a dense format within maxDense
// elements; ctx interrupts the writing.
func convert(ctx context.Context, to, pick, in, out string, maxDense int64) error {
	format, err := outputFormat(to, out)
	if err != nil {
		return err
	}
	f, err := load(in)
	if err != nil {
		return err
	}
	defer f.Release()
	tensors, err := selectTensor(f, pick)
	if err != nil {
		return err
	}
	return writeAtomically(ctx, out, func(w io.Writer) error { return write(format, w, tensors, maxDense) })
}

// writeAtomically writes a temporary file beside path and renames it to path only when
// write succeeded, so a failure or an interruption (ctx, or a signal that ends the process)
// leaves nothing behind. The file gets the permissions os.Create gives (0666 less the umask).
// Errors name path, never the temporary file.
func writeAtomically(ctx context.Context, path string, write func(io.Writer) error) error {
	tmp, err := createTemp(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
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
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	done = true
	return nil
}

// createTemp creates a new hidden file beside path, opened for writing, with mode 0666 less
// the umask (os.CreateTemp would make it 0600, and the rename would keep that).
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", base, rand.Uint32()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
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
