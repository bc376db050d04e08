package ndbeam

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// WriteOptions say how Write writes.
type WriteOptions struct {
	// Format is the parts' format: dataset.FormatParquet (the default), FormatArrow,
	// FormatArrows or FormatTFRecord (tf.train.Examples, a record per row).
	Format dataset.Format
	// Prefix begins each part's name: "part" by default (part-00000-of-00004.parquet).
	Prefix string
	// PartRows, when more than 0, ends a part once it holds that many rows or more (a part
	// holds whole batches), as Spark's maxRecordsPerFile does; otherwise a bundle's batches
	// make one part.
	PartRows int64
	// ParquetCompression is the Parquet parts' codec (default ZSTD); TFRecordCompression
	// compresses TFRecord parts (GZIP adds .gz to their names).
	ParquetCompression  parquet.Compression
	TFRecordCompression tfrecord.Compression
}

// ErrExists is returned when the directory Write writes to holds parts already.
var ErrExists = errors.New("ndbeam: the output holds parts already")

// tempDir is the folder of a Write's temporary files in its output directory: ndarrow's
// directories, and Spark's and Hadoop's, leave "_" names out.
const tempDir = "_temporary"

// Part is a part file a bundle of Write wrote, before the finalize step names it: where it is,
// and the Source and First of the first batch it holds (which order the parts).
type Part struct {
	Temp   string
	Source string
	First  int64
}

func init() {
	beam.RegisterType(reflect.TypeOf((*Part)(nil)).Elem())
	register.DoFn3x1[context.Context, Batch, func(Part), error](&writeFn{})
	register.DoFn4x1[context.Context, int, func(*Part) bool, func(string), error](&finalizeFn{})
	register.Emitter1[Part]()
	register.Emitter1[string]()
	register.Iter1[Part]()
}

// Write writes the batches as part files in dir — a local directory (made if missing) or a
// prefix of objects (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX) — by Beam's file-sink protocol:
// each bundle writes one file of its batches (or several of PartRows rows) under
// dir/_temporary/JOB/ (a unique name each attempt; an object appears only once its upload is
// complete) and passes on its name only once the file is whole; one finalize step then
// renames the files of the bundles that committed to PREFIX-NNNNN-of-NNNNN.EXT (an object:
// copied within the store, then deleted), in the order of their first batches' Source and
// First, and removes dir/_temporary/JOB — with the files of bundles that failed or were
// retried. A retried bundle thus leaves no duplicate, a failed pipeline no part (only its
// temporary files, under a name ndarrow's directories leave out), and a finished one its
// parts and nothing else. The batches of one part have the first one's columns (Conform:
// text where the first has bytes is taken as bytes). What a part's format does not keep (a
// tf.train.Example's dtypes and shapes: dataset.WriteOptions.Warn) is logged as a warning by
// the worker writing it. dir must hold no part of this prefix and format when the finalize
// step runs (ErrExists). Write returns the parts' paths.
func Write(s beam.Scope, dir string, batches beam.PCollection, o WriteOptions) beam.PCollection {
	s = s.Scope("ndbeam.Write")
	if o.Format == "" {
		o.Format = dataset.FormatParquet
	}
	if o.Prefix == "" {
		o.Prefix = "part"
	}
	job := make([]byte, 8)
	_, _ = rand.Read(job)
	w := &writeFn{Dir: dir, Job: hex.EncodeToString(job), Format: string(o.Format), PartRows: o.PartRows,
		ParquetCompression: int(o.ParquetCompression), TFRecordCompression: int(o.TFRecordCompression)}
	parts := beam.ParDo(s, w, batches)
	return beam.ParDo(s, &finalizeFn{Dir: dir, Job: w.Job, Prefix: o.Prefix, Ext: w.ext()}, beam.GroupByKey(s, beam.AddFixedKey(s, parts)))
}

// writeFn writes a bundle's batches to a temporary part file.
type writeFn struct {
	Dir, Job, Format                        string
	PartRows                                int64
	ParquetCompression, TFRecordCompression int

	file  sinkFile
	w     *dataset.TableWriter
	first Part
}

// ext is the parts' extension.
func (fn *writeFn) ext() string {
	if fn.Format == string(dataset.FormatTFRecord) && tfrecord.Compression(fn.TFRecordCompression) == tfrecord.GZIP {
		return "tfrecord.gz"
	}
	return fn.Format
}

// temp returns the folder (prefix) of the job's temporary files.
func temp(sk sink, job string) string { return sk.join(tempDir, job) }

func (fn *writeFn) StartBundle(context.Context, func(Part)) error {
	fn.file, fn.w = nil, nil
	return nil
}

func (fn *writeFn) ProcessElement(ctx context.Context, b Batch, emit func(Part)) error {
	if fn.w == nil {
		sk := sinkOf(fn.Dir)
		name := make([]byte, 12)
		_, _ = rand.Read(name)
		f, err := sk.create(ctx, temp(sk, fn.Job)+sep(fn.Dir)+hex.EncodeToString(name)+"."+fn.ext())
		if err != nil {
			return describe(err)
		}
		part := f.Name()
		w, err := dataset.NewTableWriter(f, dataset.Format(fn.Format), dataset.WriteOptions{
			ParquetCompression: parquet.Compression(fn.ParquetCompression), TFRecordCompression: tfrecord.Compression(fn.TFRecordCompression),
			Warn: func(s string) { log.Warnf(ctx, "ndbeam: writing %s: %s", part, s) }, // what a format loses, in the worker's log
		})
		if err != nil {
			f.Abort()
			return describe(err)
		}
		fn.file, fn.w, fn.first = f, w, Part{Temp: f.Name(), Source: b.Source, First: b.First}
	}
	if err := fn.w.WriteRecord(b.Record); err != nil {
		return fmt.Errorf("ndbeam: writing %s: the batch of %s from row %d: %w", fn.file.Name(), b.Source, b.First, err)
	}
	if fn.PartRows > 0 && fn.w.Rows() >= fn.PartRows {
		return fn.finish(emit)
	}
	return nil
}

// sep is the separator of names under dir.
func sep(dir string) string {
	if dataset.IsURI(dir) {
		return "/"
	}
	return string(filepath.Separator)
}

// Teardown gives up a file a failed bundle left (an upload is aborted; a local file stays in
// the temporary folder, which the finalize step removes).
func (fn *writeFn) Teardown() {
	if fn.file != nil {
		fn.file.Abort()
		fn.file, fn.w = nil, nil
	}
}

// FinishBundle ends the bundle's file and passes its name on.
func (fn *writeFn) FinishBundle(_ context.Context, emit func(Part)) error { return fn.finish(emit) }

// finish ends the file being written, if any, and passes its name on.
func (fn *writeFn) finish(emit func(Part)) error {
	if fn.w == nil {
		return nil
	}
	f, w := fn.file, fn.w
	fn.file, fn.w = nil, nil
	err := w.Close()
	if err == nil {
		err = f.Close()
	} else {
		f.Abort()
	}
	if err != nil {
		return fmt.Errorf("ndbeam: writing %s: %w", f.Name(), err)
	}
	emit(fn.first)
	return nil
}

// finalizeFn names the parts of the bundles that committed, and removes the temporary files.
type finalizeFn struct {
	Dir, Job, Prefix, Ext string
}

// name returns the name of part i of n.
func (fn *finalizeFn) name(i, n int) string {
	return sinkOf(fn.Dir).join(fmt.Sprintf("%s-%05d-of-%05d.%s", fn.Prefix, i, n, fn.Ext))
}

func (fn *finalizeFn) ProcessElement(ctx context.Context, _ int, parts func(*Part) bool, emit func(string)) error {
	sk := sinkOf(fn.Dir)
	var all []Part
	var p Part
	for parts(&p) {
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b Part) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), cmp.Compare(a.First, b.First), strings.Compare(a.Temp, b.Temp))
	})
	// The parts of an earlier run would mix with these: none may be there. A finalize step
	// retried after some renames finds its own, named as it names them — but a part of one's
	// own name is one's own only if its temporary file is gone (renamed to it): else it is an
	// earlier run's that happened to make as many parts.
	mine := map[string]string{} // a part's name → its temporary file
	for i, p := range all {
		mine[fn.name(i, len(all))] = p.Temp
	}
	existing, err := sk.parts(ctx, fn.Prefix+"-*-of-*."+fn.Ext)
	if err != nil {
		return describe(err)
	}
	for _, e := range existing {
		temp, ok := mine[e]
		if ok {
			there, err := sk.exists(ctx, temp)
			if err != nil {
				return describe(err)
			}
			ok = !there
		}
		if !ok {
			return fmt.Errorf("%s: %w (an earlier run's?): write elsewhere or remove them", e, ErrExists)
		}
	}
	for i, p := range all {
		to := fn.name(i, len(all))
		if err := sk.rename(ctx, p.Temp, to); err != nil {
			return describe(err)
		}
		emit(to)
	}
	return describe(sk.removeAll(ctx, temp(sk, fn.Job)))
}
