package ndbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/table"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// File is a file (or object) of a table Read reads: the element its splittable DoFn splits.
type File struct {
	Path string
	Size int64
}

// ReadOptions say what Read gives.
type ReadOptions struct {
	// Table names the table of a file holding several (an .npz archive's members); "" for a
	// file's only one.
	Table string
	// Columns are the columns each batch holds, in this order; every column when empty.
	Columns []string
	// BatchRows is the most rows (TFRecord records) a batch holds: 0 is DefaultBatchRows.
	// A batch never holds rows of two fragments.
	BatchRows int64
	// SplitBytes is about the bytes of the restrictions a file is first split into, along its
	// fragments (a larger fragment in pieces of about as many bytes of rows): 0 is
	// DefaultSplitBytes. Runners split further as they go.
	SplitBytes int64
}

// DefaultBatchRows is the rows a batch holds at most when ReadOptions.BatchRows is 0.
const DefaultBatchRows = 1 << 16

// DefaultSplitBytes is the size of the restrictions a file is first split into when
// ReadOptions.SplitBytes is 0.
const DefaultSplitBytes = 64 << 20

func init() {
	beam.RegisterType(reflect.TypeOf((*File)(nil)).Elem())
	register.DoFn3x1[context.Context, string, func(File), error](&listFn{})
	register.DoFn4x1[context.Context, *sdf.LockRTracker, File, func(Batch), error](&readFn{})
	register.Emitter1[File]()
	register.Emitter1[Batch]()
}

// Read reads the table at path — a file, a directory of parts or a prefix of objects
// (s3://, gs://, https:// for one object), every file under it that ndarrow reads (names
// starting with "." or "_" left out, as ndarrow's directories leave them out): Parquet, Arrow
// IPC files and streams, .npy and .npz, TFRecord files of tf.train.Example — as a
// PCollection of Batch. Each file is an element of a splittable DoFn whose restriction is its
// rows (of a TFRecord file, its bytes; a compressed one is read whole by one worker), first
// split along its fragments — Parquet row groups, Arrow IPC record batches, runs of .npy
// rows, byte ranges of TFRecord whose records are found by their CRCs (tfrecord.Sync) —
// which a runner splits further as it goes; a worker reads only the fragments of its
// restriction, BatchRows rows at a time. The files are listed when the pipeline runs, on a
// worker. A file ndarrow cannot read fails the pipeline with an error naming it.
func Read(s beam.Scope, path string, o ReadOptions) beam.PCollection {
	s = s.Scope("ndbeam.Read")
	files := beam.ParDo(s, &listFn{}, beam.Create(s, path))
	files = beam.Reshuffle(s, files) // the files shared out before they are split
	return beam.ParDo(s, &readFn{Table: o.Table, Columns: o.Columns, BatchRows: o.BatchRows, SplitBytes: o.SplitBytes}, files)
}

// listFn lists the files of a table's path.
type listFn struct{}

func (fn *listFn) ProcessElement(ctx context.Context, path string, emit func(File)) error {
	files, skipped, err := dataset.List(ctx, path)
	if err != nil {
		return fmt.Errorf("ndbeam: %s: %w", path, err)
	}
	if len(skipped) > 0 {
		return fmt.Errorf("ndbeam: %s: %w", path, skipped[0])
	}
	for _, f := range files {
		emit(File{f.Path, f.Size})
	}
	return nil
}

// restrictions counts the restrictions read (the pipeline's metric ndbeam/restrictions).
var restrictions = beam.NewCounter("ndbeam", "restrictions")

// readFn is the splittable DoFn reading a file's rows.
type readFn struct {
	Table      string
	Columns    []string
	BatchRows  int64
	SplitBytes int64

	mu     sync.Mutex
	tables map[string]*table.Table // opened by this instance, kept for its next calls
	order  []string                // their paths, oldest first
}

// keptTables is the most tables a readFn keeps open.
const keptTables = 8

// isRecords reports whether the file is TFRecord (by its name, as ndarrow goes by it), and
// whether it is compressed.
func isRecords(path string) (records, compressed bool) {
	return dataset.IsTFRecordName(path), tfrecord.CompressionOf(path) != tfrecord.None
}

// open returns the table of the file at path, opened once per instance.
func (fn *readFn) open(path string) (*table.Table, error) {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	if t, ok := fn.tables[path]; ok {
		return t, nil
	}
	t, err := table.Open(path, table.Options{Table: fn.Table})
	if err != nil {
		return nil, fmt.Errorf("ndbeam: %w", err)
	}
	if fn.tables == nil {
		fn.tables = map[string]*table.Table{}
	}
	if len(fn.order) == keptTables {
		fn.tables[fn.order[0]].Release()
		delete(fn.tables, fn.order[0])
		fn.order = fn.order[1:]
	}
	fn.tables[path] = t
	fn.order = append(fn.order, path)
	return t, nil
}

// Teardown releases the tables the instance opened.
func (fn *readFn) Teardown() {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	for _, t := range fn.tables {
		t.Release()
	}
	fn.tables, fn.order = nil, nil
}

func (fn *readFn) batchRows() int64 {
	if fn.BatchRows > 0 {
		return fn.BatchRows
	}
	return DefaultBatchRows
}

func (fn *readFn) splitBytes() int64 {
	if fn.SplitBytes > 0 {
		return fn.SplitBytes
	}
	return DefaultSplitBytes
}

// CreateInitialRestriction is the file's rows — a TFRecord file's bytes, or for a
// compressed one the one position [0, 1) that stands for them all.
func (fn *readFn) CreateInitialRestriction(f File) (offsetrange.Restriction, error) {
	switch records, compressed := isRecords(f.Path); {
	case compressed:
		return offsetrange.Restriction{Start: 0, End: 1}, nil
	case records:
		return offsetrange.Restriction{Start: 0, End: f.Size}, nil
	}
	t, err := fn.open(f.Path)
	if err != nil {
		return offsetrange.Restriction{}, err
	}
	return offsetrange.Restriction{Start: 0, End: t.NumRows()}, nil
}

// SplitRestriction splits a file's rows along its fragments, fragments larger than
// SplitBytes in pieces of about as many bytes; a TFRecord file's bytes in ranges of
// SplitBytes.
func (fn *readFn) SplitRestriction(f File, rest offsetrange.Restriction) ([]offsetrange.Restriction, error) {
	switch records, compressed := isRecords(f.Path); {
	case compressed:
		return []offsetrange.Restriction{rest}, nil
	case records:
		return rest.SizedSplits(fn.splitBytes()), nil
	}
	t, err := fn.open(f.Path)
	if err != nil {
		return nil, err
	}
	per := max(fn.splitBytes()/max(fn.rowBytes(t), 1), 1) // rows a piece
	var out []offsetrange.Restriction
	for i := range t.NumFragments() {
		start, end := t.Fragment(i)
		start, end = max(start, rest.Start), min(end, rest.End)
		for a := start; a < end; a += per {
			out = append(out, offsetrange.Restriction{Start: a, End: min(a+per, end)})
		}
	}
	return out, nil
}

// rowBytes is about the bytes of one row of the columns read of t.
func (fn *readFn) rowBytes(t *table.Table) int64 {
	n, _, err := t.TakeBytes(1024, fn.Columns)
	if err != nil || n <= 0 {
		return 1
	}
	return max(n/1024, 1)
}

// RestrictionSize is about the bytes a restriction reads.
func (fn *readFn) RestrictionSize(f File, rest offsetrange.Restriction) (float64, error) {
	switch records, compressed := isRecords(f.Path); {
	case compressed:
		return float64(f.Size), nil
	case records:
		return rest.Size(), nil
	}
	t, err := fn.open(f.Path)
	if err != nil {
		return 0, err
	}
	return rest.Size() * float64(fn.rowBytes(t)), nil
}

// CreateTracker tracks a restriction's positions, claimed one row (or record) at a time.
func (fn *readFn) CreateTracker(rest offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(rest))
}

// ProcessElement reads the rows of the restriction rt tracks, a batch at a time: every row
// of a batch claimed before it is read, so that a split meanwhile leaves no row to both
// halves; it ends at the first claim refused.
func (fn *readFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, f File, emit func(Batch)) error {
	restrictions.Inc(ctx, 1)
	if records, compressed := isRecords(f.Path); records {
		return fn.readRecords(ctx, rt, f, compressed, emit)
	}
	t, err := fn.open(f.Path)
	if err != nil {
		return err
	}
	mem := memory.NewGoAllocator()
	pos := rt.GetRestriction().(offsetrange.Restriction).Start
	for {
		if pos >= t.NumRows() {
			rt.TryClaim(pos) // past the end: refused, the restriction done
			return nil
		}
		frag, _ := t.Locate(pos)
		_, fragEnd := t.Fragment(frag)
		limit := min(fragEnd, pos+fn.batchRows())
		rows := make([]int64, 0, limit-pos)
		for r := pos; r < limit && rt.TryClaim(r); r++ {
			rows = append(rows, r)
		}
		if len(rows) > 0 {
			tab, err := t.Take(ctx, rows, fn.Columns)
			if err != nil {
				return fmt.Errorf("ndbeam: %s: rows %d to %d: %w", f.Path, pos, pos+int64(len(rows)), err)
			}
			rec, err := dataset.Batch(mem, tab.Columns)
			if err != nil {
				return fmt.Errorf("ndbeam: %s: rows %d to %d: %w", f.Path, pos, pos+int64(len(rows)), err)
			}
			emit(Batch{Record: rec, Source: f.Path, First: pos})
		}
		if int64(len(rows)) < limit-pos { // a claim refused: the rest is another's
			return nil
		}
		pos = limit
	}
}

// readRecords reads the Examples of a TFRecord file: of an uncompressed one, the records
// starting in the restriction's bytes, the first found by tfrecord.Sync; of a compressed one,
// every record, once the one position is claimed.
func (fn *readFn) readRecords(ctx context.Context, rt *sdf.LockRTracker, f File, compressed bool, emit func(Batch)) error {
	src, err := dataset.OpenBytes(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("ndbeam: %w", err)
	}
	defer src.Close()
	lim := limits.Default()
	var recs [][]byte
	first := int64(0)
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		defer func() { recs = nil }()
		if typ := tfrecord.ClassifyFile(recs); typ != tfrecord.TypeExample && typ != tfrecord.TypeSequenceExample {
			return fmt.Errorf("ndbeam: %s: records of %v, not tf.train.Example: not a table: %w", f.Path, typ, dataset.ErrNotTensors)
		}
		tensors, err := dataset.TFRecordTensors(recs, dataset.BaseName(f.Path), lim)
		if err != nil {
			return fmt.Errorf("ndbeam: %s: the records from byte %d: %w", f.Path, first, err)
		}
		if tensors, err = pick(tensors, fn.Columns, f.Path); err != nil {
			return err
		}
		rec, err := dataset.Batch(memory.NewGoAllocator(), tensors)
		if err != nil {
			return fmt.Errorf("ndbeam: %s: the records from byte %d: %w", f.Path, first, err)
		}
		emit(Batch{Record: rec, Source: f.Path, First: first})
		return nil
	}
	if compressed {
		if !rt.TryClaim(int64(0)) {
			return nil
		}
		c := tfrecord.CompressionOf(f.Path)
		r, err := tfrecord.NewReader(io.NewSectionReader(src, 0, src.Size), tfrecord.Options{Compression: c, MaxDecompressedSize: lim.MaxCopySize})
		if err != nil {
			return fmt.Errorf("ndbeam: %s: %w", f.Path, err)
		}
		defer r.Close()
		for {
			data, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("ndbeam: %s: %w", f.Path, err)
			}
			recs = append(recs, append([]byte(nil), data...))
			if int64(len(recs)) == fn.batchRows() {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		rt.TryClaim(int64(1)) // refused: done
		return flush()
	}
	pos, err := tfrecord.Sync(src, rt.GetRestriction().(offsetrange.Restriction).Start, src.Size, 0)
	if err != nil {
		return fmt.Errorf("ndbeam: %s: %w", f.Path, err)
	}
	first = pos
	for rt.TryClaim(pos) {
		data, next, err := tfrecord.ReadAt(src, pos, src.Size, 0)
		if err != nil {
			return fmt.Errorf("ndbeam: %s: %w", f.Path, err)
		}
		recs = append(recs, data)
		pos = next
		if int64(len(recs)) == fn.batchRows() {
			if err := flush(); err != nil {
				return err
			}
			first = pos
		}
	}
	return flush()
}

// pick returns the tensors of the columns named, in that order (every one for none).
func pick(tensors []dataset.Tensor, columns []string, path string) ([]dataset.Tensor, error) {
	if len(columns) == 0 {
		return tensors, nil
	}
	out := make([]dataset.Tensor, len(columns))
	for i, c := range columns {
		k := -1
		for j, t := range tensors {
			if t.Column == c {
				k = j
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("ndbeam: %s: no column %s: %w", path, c, table.ErrNoColumn)
		}
		out[i] = tensors[k]
	}
	return out, nil
}
