package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/atomicfile"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// The formats Write writes beside those Detect tells (FormatTensor, FormatNpy, FormatNpz,
// FormatArrow, FormatArrows, FormatParquet, FormatTFRecord).
const (
	FormatCOO         Format = "coo"         // SparseTensor messages, COO
	FormatCSR         Format = "csr"         // SparseTensor messages, CSR (matrices)
	FormatCSC         Format = "csc"         // SparseTensor messages, CSC (matrices)
	FormatCSF         Format = "csf"         // SparseTensor messages, CSF (rank 2 and more)
	FormatTensorProto Format = "tensorproto" // TFRecord of serialized TensorProto
)

// OutputFormats returns the formats Write writes, each also the extension of a file of it.
func OutputFormats() []Format {
	return []Format{FormatTensor, FormatNpy, FormatNpz, FormatArrow, FormatArrows, FormatCOO, FormatCSR,
		FormatCSC, FormatCSF, FormatParquet, FormatTFRecord, FormatTensorProto}
}

// HoldsSeveral reports whether a file of format f holds several tensors: FormatNpy,
// FormatTensor and the SparseTensor formats hold one.
func HoldsSeveral(f Format) bool {
	switch f {
	case FormatNpy, FormatTensor, FormatCOO, FormatCSR, FormatCSC, FormatCSF:
		return false
	}
	return true
}

// HoldsNulls reports whether a file of format f holds null rows of a plain column (Tensor.Valid):
// FormatArrow, FormatArrows and FormatParquet do; Write refuses them in any other format.
func HoldsNulls(f Format) bool {
	switch f {
	case FormatArrow, FormatArrows, FormatParquet:
		return true
	}
	return false
}

// ErrFormat is returned for a format Write does not write, or a file name that names none.
var ErrFormat = errors.New("dataset: unknown output format")

// ParseFormat returns the output format named name ("npy", "arrow", …), or an error wrapping
// ErrFormat that lists them.
func ParseFormat(name string) (Format, error) {
	for _, f := range OutputFormats() {
		if string(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q (%s)", ErrFormat, name, formatList())
}

// formatList returns the output formats as "tensor, npy, …".
func formatList() string {
	names := make([]string, 0, 12)
	for _, f := range OutputFormats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// FormatOf returns the output format a file name's extension names (before a .gz, .zz or
// .zlib, which compress TFRecord files); .tfrecords is FormatTFRecord. It fails with
// ErrFormat for a name that names none.
func FormatOf(path string) (Format, error) {
	base := path
	for _, ext := range []string{".gz", ".zz", ".zlib"} {
		base = strings.TrimSuffix(base, ext)
	}
	ext := strings.TrimPrefix(filepath.Ext(base), ".")
	if ext == "tfrecords" {
		ext = "tfrecord"
	}
	f, err := ParseFormat(ext)
	if err != nil {
		return "", fmt.Errorf("%w: %s names none (%s)", ErrFormat, path, formatList())
	}
	return f, nil
}

// ErrRaggedNotDense is returned for a ragged tensor written in a format of dense tensors only.
var ErrRaggedNotDense = errors.New("a ragged array has no dense form: write it as arrow, arrows or parquet")

// WriteOptions say how Write and Save write.
type WriteOptions struct {
	// MaxDenseElements bounds a sparse tensor's dense form (a dense-only format, or Dense);
	// zero takes limits.Default's.
	MaxDenseElements int64
	// Dense writes every sparse tensor in its dense form.
	Dense bool
	// Compress deflates the members of an .npz archive, as numpy.savez_compressed.
	Compress bool
	// TFRecordCompression compresses TFRecord output (Save takes it from a .gz name too).
	TFRecordCompression tfrecord.Compression
	// ParquetCompression is the codec of Parquet output (default ZSTD).
	ParquetCompression parquet.Compression
	// ParquetEncoding is the value encoding of Parquet output (default PLAIN).
	ParquetEncoding parquet.Encoding
	// Warn, when set, is told what a format drops: "x: a .npy file has no place for
	// dimension names: batch,row dropped".
	Warn func(string)
	// PadRagged writes a ragged tensor of numbers in a dense format as its dense form, every
	// row padded at its end with Pad, as TensorFlow's RaggedTensor.to_tensor(default_value)
	// does (within MaxDenseElements).
	PadRagged bool
	Pad       float64
	// MaxCopySize bounds what a TableWriter of an Arrow IPC file holds to unify the
	// dictionaries of its batches (their values, each once, and an index of them): past it, a
	// batch is an error wrapping limits.ErrExceeded. Zero takes limits.Default's.
	MaxCopySize int64
	// Allocator is what a TableWriter allocates its own copies from (an Arrow IPC file's
	// remapped dictionary indices, its batches read back; the unified dictionaries are Go's,
	// which arrow-go's file writer keeps); nil takes Go's.
	Allocator memory.Allocator
	// SkipUnsupported leaves out, each one named to Warn, the tensors the format cannot hold
	// (a ragged tensor in a dense format, a sparse one beside others in a table, a bool or
	// string tensor where Arrow tensors cannot hold it, null rows where HoldsNulls is false),
	// instead of failing.
	SkipUnsupported bool
}

// prepare returns the tensors as format can hold them: sparse tensors in their dense form
// where asked or needed, ragged ones padded where asked, and (SkipUnsupported) what format
// cannot hold left out and told to Warn. Every error names its tensor.
func prepare(format Format, tensors []Tensor, opts *WriteOptions) ([]Tensor, error) {
	if opts.MaxDenseElements <= 0 {
		opts.MaxDenseElements = limits.Default().MaxDenseElements
	}
	asked := opts.Dense
	switch format {
	case FormatNpy, FormatNpz, FormatTensorProto:
		opts.Dense = true
	}
	denseOnly := format != FormatArrow && format != FormatArrows && format != FormatParquet && format != FormatTFRecord
	table := !denseOnly // a record batch's columns, or an Example's features
	var out []Tensor
	for _, t := range tensors {
		var err error
		switch {
		case t.Valid != nil && !HoldsNulls(format):
			err = fmt.Errorf("%d null rows: %s holds no nulls (give them a value: Tensor.Filled, convert --fill VALUE): %w", t.NullCount(), format, arrowtensor.ErrNull)
		case t.Sparse != nil && (opts.Dense || format == FormatNpy):
			var d ndarray.Array
			if d, err = t.DenseArray(opts.MaxDenseElements); err == nil {
				if !asked { // the layout is lost: say so
					opts.warn(fmt.Sprintf("%s: a %s tensor written in its dense form (%d elements, %d stored): %s", t.Name, t.Sparse.Format(), d.Size(), t.Sparse.NNZ(), noSparse(format)))
				}
				t.Dense, t.Sparse, t.Kind = d, nil, KindDense
			}
		case t.Ragged != nil && denseOnly && opts.PadRagged:
			var d ndarray.Array
			if d, err = padded(t.Ragged, opts.Pad, opts.MaxDenseElements); err == nil {
				t.Dense, t.Ragged, t.Kind = d, nil, KindDense
			}
		case t.Ragged != nil && denseOnly:
			err = ErrRaggedNotDense
		case t.Sparse != nil && table && len(tensors) > 1 && opts.SkipUnsupported:
			err = fmt.Errorf("a sparse tensor is a record batch of its own, not one column of %d: %w", len(tensors), ndarray.ErrShape)
		case t.Dense != nil && !table && format != FormatNpy && format != FormatNpz && format != FormatTensorProto:
			switch t.DType() { // Tensor and SparseTensor messages hold numbers
			case ndarray.Bool:
				err = errBoolTensor
			case ndarray.String:
				err = errStringTensor
			}
		}
		if err != nil {
			if opts.SkipUnsupported {
				opts.warn(fmt.Sprintf("%s: skipped: %v", t.Name, err))
				continue
			}
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		out = append(out, t)
	}
	if len(out) == 0 && len(tensors) > 0 {
		return nil, fmt.Errorf("no tensor of %d can be written as %s: %w", len(tensors), format, ErrFormat)
	}
	return out, nil
}

// noSparse says why a dense-only format wrote a sparse tensor dense.
func noSparse(format Format) string {
	switch format {
	case FormatNpz:
		return "an .npz archive holds a sparse matrix alone, as SciPy's save_npz writes it"
	case FormatTensorProto:
		return "a TensorProto is dense"
	}
	return fmt.Sprintf("a .%s file holds dense arrays", format)
}

// padded returns a ragged array of numbers as its dense form padded with pad.
func padded(a ragged.Any, pad float64, maxDense int64) (ndarray.Array, error) {
	ops, err := opsOf(a.DType())
	if err != nil {
		return nil, fmt.Errorf("%v values cannot be padded: %w", a.DType(), ErrRaggedNotDense)
	}
	return ops.padRagged(a, pad, maxDense)
}

// warn reports what a format drops, when someone listens.
func (o WriteOptions) warn(s string) {
	if o.Warn != nil {
		o.Warn(s)
	}
}

// Save writes tensors to the file at path in the format its extension names (FormatOf; a .gz
// name compresses TFRecord output with GZIP), as Write does, through a temporary file beside
// it renamed over path once complete: a failure leaves path as it was and no temporary file.
// The file gets the permissions os.Create gives (0666 less the umask).
func Save(path string, tensors []Tensor, opts WriteOptions) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	if c := tfrecord.CompressionOf(path); c != tfrecord.None {
		opts.TFRecordCompression = c
	}
	return atomicfile.Write(path, func(f *os.File) error { return Write(f, format, tensors, opts) })
}

// Write writes tensors to w in format (see OutputFormats), as opts say. Each format keeps what
// it can hold: FormatTensor writes a dense tensor as a Tensor message and a sparse one as a
// SparseTensor message in its own format (FormatCOO … FormatCSF convert it); FormatArrow,
// FormatArrows and FormatParquet keep every kind, dimension names included, a column per
// tensor; FormatNpy holds one dense tensor and FormatNpz dense tensors, without names (opts.Warn
// is told what is dropped) — or one sparse matrix alone, in SciPy's layout (save_npz; a CSF of
// rank 2 as its COO, other ranks refused), unless opts.Dense; FormatTFRecord writes a
// tf.train.Example per row, FormatTensorProto a serialized TensorProto per dense tensor. A
// dense-only format writes a sparse tensor's dense form, within opts.MaxDenseElements, and
// tells opts.Warn unless opts.Dense asked for it; a ragged tensor has none (ErrRaggedNotDense). Only
// FormatArrow needs w to report its position (an io.Seeker asked for Seek(0, io.SeekCurrent)).
func Write(w io.Writer, format Format, tensors []Tensor, opts WriteOptions) error {
	to := string(format)
	if _, err := ParseFormat(to); err != nil {
		return err
	}
	holdsOne := func() error {
		if format == FormatNpy && len(tensors) != 1 {
			return fmt.Errorf("the input holds %d tensors; a .npy file holds one (write one, or .npz): %w", len(tensors), ndarray.ErrShape)
		}
		return nil
	}
	if err := holdsOne(); err != nil && !opts.SkipUnsupported {
		return err
	}
	if format == FormatNpz && len(tensors) == 1 && tensors[0].Sparse != nil && !opts.Dense {
		return writeSciPy(w, tensors[0], opts) // a sparse matrix as scipy.sparse.save_npz writes it
	}
	tensors, err := prepare(format, tensors, &opts)
	if err != nil {
		return err
	}
	if err := holdsOne(); err != nil {
		return err
	}
	switch to {
	case "npy", "npz":
		for _, t := range tensors {
			if len(t.DimNames) > 0 && strings.Join(t.DimNames, "") != "" {
				opts.warn(fmt.Sprintf("%s: a .%s file has no place for dimension names: %s dropped", t.Name, to, strings.Join(t.DimNames, ",")))
			}
		}
		if to == "npz" {
			return writeNpz(w, tensors, opts.Compress)
		}
		return writeNpy(w, tensors[0])
	case "arrow", "arrows":
		rec, err := Batch(memory.DefaultAllocator, tensors)
		if err != nil {
			return err
		}
		defer rec.Release()
		return writeRecord(to, w, rec)
	case "tfrecord", "tensorproto":
		if to == "tfrecord" { // a TensorProto keeps them; a tf.train.Example has no place
			exampleWarnings(tensors, opts)
		}
		return writeTFRecord(to, w, tensors, opts.TFRecordCompression)
	case "parquet":
		rec, err := Batch(memory.DefaultAllocator, tensors)
		if err != nil {
			return err
		}
		defer rec.Release()
		pw, err := parquet.NewWriter(w, rec.Schema(), parquet.WriterOptions{Compression: opts.ParquetCompression, Encoding: opts.ParquetEncoding})
		if err != nil {
			return err
		}
		if err := pw.Write(rec); err != nil {
			return err
		}
		return pw.Close()
	}
	for _, t := range tensors {
		var err error
		switch {
		case t.Ragged != nil:
			err = ErrRaggedNotDense
		case to == "tensor" && t.Sparse != nil:
			err = t.WriteSparseMessage(w, t.Sparse.Format())
		case to == "tensor":
			err = t.WriteTensorMessage(w)
		default:
			f, _ := sparse.ParseFormat(to)
			err = t.WriteSparseMessage(w, f)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

// dimNamesFor returns the tensor's dimension names when there is one per dimension.
func dimNamesFor(t Tensor) []string {
	if len(t.DimNames) != t.Shape().Rank() {
		return nil
	}
	return t.DimNames
}

// writeNpy writes one dense tensor as a .npy file.
func writeNpy(w io.Writer, t Tensor) error {
	if t.Ragged != nil {
		return ErrRaggedNotDense
	}
	if s, ok := t.Dense.(*ndarray.Dense[string]); ok { // NumPy's bytes or text, as the tensor says
		_, err := npy.WriteStrings(w, s, t.Bytes)
		return err
	}
	_, err := npy.WriteArray(w, t.Dense)
	return err
}

// writeNpz writes dense tensors as an .npz archive, each a member named after its column, or
// else its name.
func writeNpz(w io.Writer, tensors []Tensor, compress bool) error {
	z := npy.NewNpzWriter(w, compress)
	for _, t := range tensors {
		if t.Ragged != nil {
			return fmt.Errorf("%s: %w", t.Name, ErrRaggedNotDense)
		}
		name := t.Column
		if name == "" {
			name = t.Name
		}
		write := func() error { return z.Write(name, t.Dense) }
		if s, ok := t.Dense.(*ndarray.Dense[string]); ok {
			write = func() error { return z.WriteStrings(name, s, t.Bytes) }
		}
		if err := write(); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return z.Close()
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

// exampleWarnings tells opts.Warn what tensors lose as tf.train.Example features: dimension
// names, dtypes an Example does not hold, shapes it does not record, the order of features.
func exampleWarnings(tensors []Tensor, opts WriteOptions) {
	for _, t := range tensors {
		if len(t.DimNames) > 0 && strings.Join(t.DimNames, "") != "" {
			opts.warn(fmt.Sprintf("%s: a tf.train.Example has no place for dimension names: %s dropped", t.Name, strings.Join(t.DimNames, ",")))
		}
		if w := exampleDType(t.DType()); w != "" {
			opts.warn(fmt.Sprintf("%s: %s", t.Name, w))
		}
		if back := exampleShape(t); !slices.Equal(back, t.Shape()) {
			opts.warn(fmt.Sprintf("%s: a tf.train.Example records no shape: %s reads back as %s (a feature spec gives the shape back)", t.Name, rowsShape(t.Shape()), rowsShape(back)))
		}
	}
	if !slices.IsSortedFunc(tensors, func(a, b Tensor) int { return strings.Compare(featureName(a), featureName(b)) }) {
		opts.warn("a tf.train.Example keeps no order of its features: they read back by name, not in the order written")
	}
}

// exampleShape returns the shape the feature a dense or ragged tensor t is written as in
// tf.train.Examples (one per row) reads back as without a feature spec
// (tfrecord.DecodeExamples): [rows] for one value a row — a [rows, 1] too, as a plain
// [rows] — [rows, n] for n values a row however the row was shaped, [rows, -1] for a ragged
// tensor. A sparse tensor, which is written as features of its own, keeps its shape.
func exampleShape(t Tensor) ndarray.Shape {
	shape := t.Shape()
	switch {
	case t.Sparse != nil || shape.Rank() == 0:
		return shape
	case t.Ragged != nil:
		return ndarray.Shape{shape[0], -1}
	case shape[1:].Size() == 1:
		return ndarray.Shape{shape[0]}
	}
	return ndarray.Shape{shape[0], shape[1:].Size()}
}

// rowsShape writes a shape of rows as [rows, d1, …]: what a table's column of any number of
// rows has.
func rowsShape(s ndarray.Shape) string {
	var b strings.Builder
	b.WriteString("[rows")
	for _, d := range s[1:] {
		fmt.Fprintf(&b, ", %d", d)
	}
	b.WriteString("]")
	return b.String()
}

// exampleDType says what becomes of values of d in a tf.train.Example, which holds int64,
// float32 and bytes: "" for those, else how they are written and read back.
func exampleDType(d ndarray.DType) string {
	switch {
	case d == ndarray.Int64 || d == ndarray.Float32 || d == ndarray.String:
		return ""
	case d == ndarray.Float64:
		return "a tf.train.Example holds float32: float64 values rounded to float32 (precision lost)"
	case d == ndarray.Uint64:
		return "a tf.train.Example holds int64: uint64 values written as int64 (one above 2^63-1 is an error), read back as int64"
	case d == ndarray.Float16:
		return "a tf.train.Example holds float32: float16 values read back as float32"
	case d == ndarray.Bool:
		return "a tf.train.Example holds int64: bool values written as 0 and 1, read back as int64"
	}
	return fmt.Sprintf("a tf.train.Example holds int64: %v values read back as int64", d)
}

// featureName is the name of t's feature in a tf.train.Example: its column's, or its own.
func featureName(t Tensor) string {
	if t.Column != "" {
		return t.Column
	}
	return t.Name
}

// writeTFRecord writes tensors as a TFRecord file compressed as c: of Examples, one per row,
// each tensor a feature named after its column (or its name), or of one serialized
// TensorProto per (dense) tensor.
func writeTFRecord(to string, w io.Writer, tensors []Tensor, c tfrecord.Compression) error {
	tw, err := tfrecord.NewWriter(w, c)
	if err != nil {
		return err
	}
	if to == "tfrecord" {
		cols := make([]tfrecord.Column, len(tensors))
		for i, t := range tensors {
			cols[i] = tfrecord.Column{Name: featureName(t), Dense: t.Dense, Ragged: t.Ragged, Sparse: t.Sparse}
		}
		if _, err := tfrecord.WriteExamples(tw, cols); err != nil {
			return err
		}
		return tw.Close()
	}
	for _, t := range tensors {
		if t.Ragged != nil {
			return fmt.Errorf("%s: %w", t.Name, ErrRaggedNotDense)
		}
		b, err := tfrecord.EncodeTensor(t.Dense, dimNamesFor(t))
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		if err := tw.WriteRecord(b); err != nil {
			return err
		}
	}
	return tw.Close()
}
