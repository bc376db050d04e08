package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/atomicfile"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// outputFormats are the formats convert and get write, in the order help lists them; each is
// also the extension of a file of that format.
var outputFormats = []struct{ name, what string }{
	{"tensor", "Arrow Tensor messages (a sparse tensor: SparseTensor messages), pyarrow.ipc.read_tensor"},
	{"npy", "NumPy .npy (one dense tensor)"},
	{"npz", "NumPy .npz: a .npy member per tensor, named after its column or name (--compress: deflated); a sparse matrix alone as scipy.sparse.save_npz writes it"},
	{"arrow", "Arrow IPC file: a column per tensor (arrow.fixed_shape_tensor, list) or a sparse tensor's batch"},
	{"arrows", "Arrow IPC stream: the same as arrow, as a stream"},
	{"coo", "Arrow SparseTensor messages, COO"},
	{"csr", "Arrow SparseTensor messages, CSR (matrices)"},
	{"csc", "Arrow SparseTensor messages, CSC (matrices)"},
	{"csf", "Arrow SparseTensor messages, CSF (rank 2 and more)"},
	{"parquet", "Parquet: a column per tensor as in arrow, the Arrow schema stored (ZSTD; --parquet-compression, --parquet-encoding)"},
	{"tfrecord", "TFRecord of tf.train.Example, one per row of the tensors (equal row counts), a feature per tensor; .gz: GZIP"},
	{"tensorproto", "TFRecord of serialized TensorProto (tf.io.parse_tensor), one per dense tensor; .gz: GZIP"},
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
	if _, err := dataset.ParseFormat(to); err != nil {
		return usageErr{fmt.Errorf("--to %q: unknown format (%s)", to, formatNames())}
	}
	return nil
}

// formatOf returns the output format an OUT file's extension asks for (see dataset.FormatOf).
func formatOf(path string) (string, error) {
	f, err := dataset.FormatOf(path)
	if err != nil {
		return "", usageErr{fmt.Errorf("%s: cannot tell the format from the extension; give --to (%s)", path, formatNames())}
	}
	return string(f), nil
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
	pick := fs.String("tensor", "", "convert only the tensor of this name (as inspect prints it, or its column's)")
	var fill *string
	fs.Func("fill", "give the null rows of plain columns this `VALUE`, parsed as each column's dtype (a number, true or false, any string); "+
		"without it arrow, arrows and parquet keep null rows and the other formats refuse them", func(s string) error {
		fill = &s
		return nil
	})
	opts := writeFlags(fs, stderr, "convert")
	input := inputFlags(fs)
	if code, ok := parseArgs(fs, "convert", args, stdout, stderr, 2, 2); !ok {
		return code
	}
	if *to != "" {
		if err := checkFormat(*to); err != nil {
			return usageError(stderr, "convert", err)
		}
	}
	// Under Guard: an input that shrinks while its values are written out is an error naming it.
	return finishCommand(ctx, stderr, "convert", dataset.Guard(func() error {
		o := opts()
		o.fill = fill
		return convert(ctx, *to, *pick, fs.Arg(0), fs.Arg(1), *input, o, stdout, stderr)
	}))
}

// writeFlags adds --max-dense, --dense and --compress to fs and returns the write options they
// give, with warnings printed on stderr by command name.
func writeFlags(fs *flag.FlagSet, stderr io.Writer, name string) func() writeOptions {
	maxDense := maxDenseFlag(fs)
	dense := fs.Bool("dense", false, "write sparse tensors in their dense form (within --max-dense), an .npz archive's too")
	compress := fs.Bool("compress", false, "deflate the members of an .npz archive, as numpy.savez_compressed")
	var pqCodec parquet.Compression
	fs.Func("parquet-compression", "the codec of Parquet output: zstd (default), snappy, gzip or none", func(s string) error {
		c, err := parquet.ParseCompression(s)
		pqCodec = c
		return err
	})
	var pqEncoding parquet.Encoding
	fs.Func("parquet-encoding", "the value encoding of Parquet output: plain (default) or byte_stream_split (columns of floats, 32- and 64-bit integers and fixed-size binaries)", func(s string) error {
		e, err := parquet.ParseEncoding(s)
		pqEncoding = e
		return err
	})
	var pad *float64
	fs.Func("pad", "write ragged tensors of numbers in a dense format padded with this value, as RaggedTensor.to_tensor", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		pad = &v
		return err
	})
	skip := fs.Bool("skip-unsupported", false, "leave out, each named on stderr, the tensors the output format cannot hold")
	return func() writeOptions {
		return writeOptions{maxDense: *maxDense, dense: *dense, compress: *compress, parquetCompression: pqCodec, parquetEncoding: pqEncoding, pad: pad, skip: *skip,
			warn: func(s string) { fmt.Fprintf(stderr, "ndarrow %s: warning: %s\n", name, s) }}
	}
}

// convert writes the tensors of in (or the one named pick) to out in format to (out's
// extension when empty), read as read says and written as opts say, as writeOutput writes
// (out "-" is stdout), their null rows given opts.fill when set; ctx interrupts the writing.
// Once written, each column of in that has no tensor form is named on stderr (none when pick
// names one tensor).
func convert(ctx context.Context, to, pick, in, out string, read readOptions, opts writeOptions, stdout, stderr io.Writer) error {
	if err := checkOutput(out); err != nil {
		return err
	}
	format, err := outputFormat(to, out)
	if err != nil {
		return err
	}
	if format == string(dataset.FormatArrows) && pick == "" && opts.fill == nil && !opts.skip && opts.pad == nil && read == (readOptions{}) {
		if done, err := convertParquetStream(ctx, in, out, stdout, stderr); done {
			return err
		}
	}
	f, err := load(in, read)
	if err != nil {
		return err
	}
	defer f.Release()
	tensors, err := selectTensor(f, pick)
	if err != nil {
		return err
	}
	f.reportSkipped(stderr, "convert")
	if len(tensors) > 1 && format == string(dataset.FormatNpy) && !opts.skip {
		names := make([]string, len(tensors))
		for i, t := range tensors {
			names[i] = t.Name
		}
		return fmt.Errorf("%s holds %d tensors (%s); a .%s file holds one: pick it with --tensor, or write .npz, .arrow or .parquet",
			in, len(tensors), strings.Join(names, ", "), format)
	}
	if tensors, err = filled(tensors, opts.fill); err != nil {
		return err
	}
	total := int64(0)
	for _, t := range tensors {
		total += valueBytes(t)
	}
	err = writeOutput(ctx, out, stdout, func(w io.Writer) error {
		if !opts.skip { // else skipped, each named, by write
			if err := checkNulls(format, tensors); err != nil {
				return err
			}
		}
		w, flush := checkedAsWritten(out, stdout, w, f.check) // to a pipe: each MiB copied, checked, then written
		w, done := withProgress(w, stderr, out, total)        // the output's bytes, against the values' (compression ends early)
		defer done()
		err := write(format, w, tensors, opts.forOutput(out))
		if err == nil {
			err = flush()
		}
		return f.checked(err) // before OUT is renamed into place
	})
	if err == nil && pick == "" {
		for _, l := range f.leftOut {
			fmt.Fprintf(stderr, "ndarrow convert: %s\n", l)
		}
	}
	return err
}

// convertParquetStream writes the Parquet file in to out as an Arrow IPC stream from the
// mapped file (dataset.ParquetStream), when its tensors are its columns as it stores them and
// every value is in a page as it is; done is false, and out untouched, for any other input.
func convertParquetStream(ctx context.Context, in, out string, stdout, stderr io.Writer) (done bool, err error) {
	if in == "-" || dataset.IsURI(in) {
		return false, nil
	}
	if f, err := dataset.FormatOf(in); err != nil || f != dataset.FormatParquet {
		return false, nil
	}
	st, err := os.Stat(in)
	if err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	s := dataset.OpenParquetStream(in, limits.Limits{}) // before out is opened: a FIFO is opened once
	if s == nil {
		return false, nil
	}
	defer s.Close()
	inputLoaded(in)
	return true, writeOutput(ctx, out, stdout, func(w io.Writer) error {
		// To a pipe, FIFO or socket, the pages are copied a MiB at a time and written once
		// the file is found unchanged (checkedAsWritten); to a regular file, from the pages,
		// checked before it is renamed into place; to /dev/null, never read.
		w, flush := checkedAsWritten(out, stdout, w, s.CheckUnchanged)
		w, finish := withProgress(w, stderr, out, st.Size())
		defer finish()
		// An output that reads what it is given has the file's pages mapped in ahead; one
		// that discards it (/dev/null, a character device) never reads them.
		err := s.Write(w, parquet.StreamOptions{Populate: !discards(out, stdout)})
		if err == nil {
			err = flush()
		}
		if cerr := s.CheckUnchanged(); cerr != nil { // the pages written were of one version of the file, or it fails
			return cerr
		}
		return err
	})
}

// filled returns tensors with the null rows of each given value (dataset.Tensor.Filled), or
// tensors themselves when value is nil.
func filled(tensors []tensor, value *string) ([]tensor, error) {
	if value == nil {
		return tensors, nil
	}
	out := make([]tensor, len(tensors))
	for i, t := range tensors {
		f, err := t.Filled(*value)
		if err != nil {
			return nil, fmt.Errorf("--fill %q: %w", *value, err)
		}
		out[i] = f
	}
	return out, nil
}

// checkNulls returns an error naming the first tensor with null rows when format holds none,
// saying how to give them a value.
func checkNulls(format string, tensors []tensor) error {
	if dataset.HoldsNulls(dataset.Format(format)) {
		return nil
	}
	for _, t := range tensors {
		if t.Valid != nil {
			return fmt.Errorf("%s: %d null rows, and %s output holds no nulls: give them a value with --fill VALUE (arrow, arrows and parquet keep them): %w",
				t.Name, t.NullCount(), format, arrowtensor.ErrNull)
		}
	}
	return nil
}

// writeOutput writes the output named path as a Unix tool does: "-" is standard output; an
// existing file that is not a regular file (a device such as /dev/null, a FIFO, a socket:
// writtenInPlace) is opened and written in place, never replaced; an existing directory is an
// error; anything else is written atomically (writeAtomically). Every format streams: an Arrow
// IPC file's writer asks only where it is. Its errors name the output, but for a sourceError
// of write's, returned as what it wraps (what was to be written failed, not the output), and
// an error naming an input file (a *dataset.FileError: the input changed while it was read).
// A write that fails once it wrote to standard output or a FIFO leaves what it wrote there:
// its error, and the exit status, are what tells the reader.
func writeOutput(ctx context.Context, path string, stdout io.Writer, write func(io.Writer) error) error {
	var source error
	err := writeOutputTo(ctx, path, stdout, func(w io.Writer) error {
		err := write(w)
		var se sourceError
		if errors.As(err, &se) {
			source = se.error
		}
		return err
	})
	if source != nil {
		return source
	}
	return err
}

// sourceError is an error of what a write given to writeOutput writes (a batch that could not
// be read, a cursor refused), not of the output: writeOutput returns what it wraps without
// naming the output.
type sourceError struct{ error }

func (e sourceError) Unwrap() error { return e.error }

// writtenInPlace reports whether the output path exists and is neither a regular file nor a
// directory — a device such as /dev/null, a FIFO, a socket — which writeOutput writes in
// place, whatever its name.
func writtenInPlace(path string) bool {
	if path == "-" || dataset.IsURI(path) {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// writeOutputTo is writeOutput, every error naming the output.
func writeOutputTo(ctx context.Context, path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		if err := write(&positionWriter{w: interruptible(ctx, stdout)}); err != nil {
			if namesInput(err) {
				return err
			}
			return fmt.Errorf("standard output: %w", err)
		}
		return nil
	}
	if dataset.IsURI(path) {
		return writeObject(ctx, path, write)
	}
	if err := checkOutput(path); err != nil {
		return err
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
		}
		err = write(&positionWriter{w: interruptible(ctx, f)})
		if cerr := f.Close(); err == nil && cerr != nil {
			err = errors.Unwrap(cerr)
		}
		if err != nil && !namesInput(err) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return err
	}
	return writeAtomically(ctx, path, write)
}

// namesInput reports whether err is about an input file, which it names (a *dataset.FileError),
// not about the output it was met writing.
func namesInput(err error) bool {
	var fe *dataset.FileError
	return errors.As(err, &fe)
}

// checkOutput returns an error when OUT cannot be written: an existing directory.
func checkOutput(path string) error {
	if dataset.IsURI(path) {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	return nil
}

// positionWriter counts what it writes and answers Seek(0, io.SeekCurrent) with it: all the
// seeking an Arrow IPC file writer does, so that it writes to a pipe.
type positionWriter struct {
	w   io.Writer
	pos int64
}

func (p *positionWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

// Seek reports the position; it cannot move it.
func (p *positionWriter) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, errors.New("the output cannot seek")
	}
	return p.pos, nil
}

// writeObject writes the object uri names (s3://, gs://) as a multipart (resumable) upload that
// becomes the object only when complete: a failure or an interruption (ctx, or a signal that
// ends the process) aborts it and leaves nothing. Errors name the object once.
func writeObject(ctx context.Context, uri string, write func(io.Writer) error) error {
	w, err := objstore.Create(ctx, uri)
	if err != nil {
		return err
	}
	temporaries.addUpload(w)
	defer temporaries.removeUpload(w)
	sw := &storeWriter{w: w}
	if err := write(&positionWriter{w: interruptible(ctx, sw)}); err != nil {
		_ = w.Abort()
		if sw.failed || namesInput(err) {
			return err // the store's error names the object; an input's, the input
		}
		return fmt.Errorf("%s: %w", w.URI(), err)
	}
	return w.Close()
}

// storeWriter remembers whether a write to the store failed, whose error names the object.
type storeWriter struct {
	w      *objstore.Writer
	failed bool
}

func (s *storeWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.failed = s.failed || err != nil
	return n, err
}

// writeAtomically writes path through a temporary file renamed at the end (atomicfile.Write),
// so a failure or an interruption (ctx, or a signal that ends the process) leaves nothing
// behind. Errors name path, never the temporary file — but an error of an input file
// (namesInput) names that file alone.
func writeAtomically(ctx context.Context, path string, write func(io.Writer) error) error {
	var ofInput error // an error naming an input file, not to be named after path
	err := atomicfile.Write(path, func(tmp *os.File) error {
		temporaries.add(tmp.Name())
		defer temporaries.remove(tmp.Name())
		err := write(&seekWriter{interruptible(ctx, tmp), tmp})
		if namesInput(err) {
			ofInput = err
		}
		return err
	})
	if ofInput != nil {
		return ofInput
	}
	return err
}

// seekWriter is an interruptible writer that still seeks, as an Arrow IPC file writer needs.
type seekWriter struct {
	io.Writer
	io.Seeker
}

// writeOptions say how write writes: maxDense bounds a sparse tensor's dense form, dense
// expands every sparse tensor (a dense format always does), compress deflates .npz members,
// and warn reports what a format drops.
type writeOptions struct {
	maxDense    int64
	dense       bool
	compress    bool
	compression tfrecord.Compression // of TFRecord output: what OUT's name says
	// parquetCompression is the codec of Parquet output.
	parquetCompression parquet.Compression
	// parquetEncoding is the value encoding of Parquet output.
	parquetEncoding parquet.Encoding
	pad             *float64 // pad ragged tensors into dense formats with this value
	skip            bool     // leave out what the format cannot hold
	fill            *string  // convert: the value of null rows (--fill), nil when not given
	warn            func(string)
}

// forOutput returns the options with what the name of the output file out says: a .gz (or
// .zz, .zlib) name compresses TFRecord output.
func (o writeOptions) forOutput(out string) writeOptions {
	o.compression = tfrecord.CompressionOf(out)
	return o
}

// write writes tensors in format to with dataset.Write, as opts say.
func write(to string, w io.Writer, tensors []tensor, opts writeOptions) error {
	wo := dataset.WriteOptions{
		MaxDenseElements: opts.maxDense, Dense: opts.dense, Compress: opts.compress,
		TFRecordCompression: opts.compression, ParquetCompression: opts.parquetCompression, ParquetEncoding: opts.parquetEncoding, Warn: opts.warn,
		SkipUnsupported: opts.skip,
	}
	if opts.pad != nil {
		wo.PadRagged, wo.Pad = true, *opts.pad
	}
	err := dataset.Write(w, dataset.Format(to), tensors, wo)
	if !errors.Is(err, sparse.ErrTooLarge) { // a ragged tensor padded (--pad)
		return maxDenseError(err, opts.maxDense, "pad it", ", or write .arrow, .arrows or .parquet, which keep it ragged")
	}
	if opts.dense {
		return maxDenseError(err, opts.maxDense, "write it dense", ", or leave out --dense to keep it sparse")
	}
	keeps := ".arrow, .arrows, .parquet or .tensor"
	if e := (*limits.ExceededError)(nil); errors.As(err, &e) && e.Needs > limits.Default().MaxElements {
		keeps = ".arrow, .arrows or .parquet" // a SparseTensor message of it would not be read back
	}
	return maxDenseError(err, opts.maxDense, "write it dense", ", or write "+keeps+", which keep it sparse")
}
