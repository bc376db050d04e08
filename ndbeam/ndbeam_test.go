package ndbeam_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ndbeam"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
	"github.com/ndarrow/ndarrow/tfrecord"
)

func TestMain(m *testing.M) {
	// Prism's loopback worker leaves a file in TMPDIR each run: a folder of the tests' own.
	tmp, err := os.MkdirTemp("", "ndbeam-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("TMPDIR", tmp)
	beam.Init()
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// run runs the pipeline on Prism, in this process.
func run(t *testing.T, p *beam.Pipeline) error {
	t.Helper()
	_, err := runCounting(t, p)
	return err
}

// runCounting runs the pipeline on Prism and returns how many restrictions Read read (its
// counter ndbeam/restrictions).
func runCounting(t *testing.T, p *beam.Pipeline) (int64, error) {
	t.Helper()
	res, err := prism.Execute(context.Background(), p)
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "ndbeam" && c.Key.Name == "restrictions" {
			n += c.Result()
		}
	}
	return n, nil
}

// labelled is rows rows of label (int64, first, first+1, …) and emb (float32 [rows, 4]: the
// row of label i is 4i, 4i+1, 4i+2, 4i+3): the table every input holds, as the Arrow C++ 17
// file of testdata does.
func labelled(first, rows int64) []dataset.Tensor {
	label := ndarray.FromFunc(func(i []int64) int64 { return first + i[0] }, rows)
	emb := ndarray.FromFunc(func(i []int64) float32 { return float32(4*(first+i[0]) + i[1]) }, rows, 4)
	return []dataset.Tensor{{Name: "t.label", Column: "label", Dense: label}, {Name: "t.emb", Column: "emb", Dense: emb}}
}

// inputs writes the tables the tests read into dir, each in a folder of its own, and returns
// those folders by kind, with their rows. Each has several fragments: row groups, record
// batches, a TFRecord file larger than the split size.
func inputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(kind, name string, write func(path string)) {
		folder := filepath.Join(dir, kind)
		require.NoError(t, os.MkdirAll(folder, 0o755))
		write(filepath.Join(folder, name))
		out[kind] = folder
	}
	add("arrow-cpp-17-parquet", "cpp17-mixed-zstd.parquet", func(path string) { // 300 rows, 3 row groups
		b, err := os.ReadFile("testdata/cpp17-mixed-zstd.parquet")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	})
	add("parquet", "part-0.parquet", func(path string) { // 1000 rows, row groups of about 64 rows
		rec, err := dataset.Batch(memory.DefaultAllocator, labelled(0, 1000))
		require.NoError(t, err)
		defer rec.Release()
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{RowGroupBytes: 64 * 40})
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
	})
	add("arrow", "t.arrow", func(path string) { // 700 rows, 7 record batches
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := dataset.NewTableWriter(f, dataset.FormatArrow, dataset.WriteOptions{})
		require.NoError(t, err)
		for k := range int64(7) {
			require.NoError(t, w.Write(labelled(k*100, 100)))
		}
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
	})
	add("npy", "emb.npy", func(path string) { // 500 rows of one column
		require.NoError(t, dataset.Save(path, labelled(0, 500)[1:], dataset.WriteOptions{}))
	})
	for _, name := range []string{"t.tfrecord", "t.tfrecord.gz"} {
		add(strings.ReplaceAll(name, ".", "-"), name, func(path string) { // 2000 Examples, 70-odd KiB
			require.NoError(t, dataset.Save(path, labelled(0, 2000), dataset.WriteOptions{}))
		})
	}
	return out
}

// rowsOf reads back the table of the parts in dir and returns its labels (from emb), every
// row's emb checked against its label; with labelled, the table must have its label column,
// each row's label its emb's (without, the input had none: a .npy file of emb).
func rowsOf(t *testing.T, dir string, labelled bool) []int64 {
	t.Helper()
	tab, err := table.Open(dir, table.Options{})
	require.NoError(t, err, "reading back %s", dir)
	defer tab.Release()
	all := make([]int64, tab.NumRows())
	for i := range all {
		all[i] = int64(i)
	}
	got, err := tab.Take(context.Background(), all, nil)
	require.NoError(t, err)
	emb, err := got.Column("emb")
	require.NoError(t, err)
	e, err := dataset.DenseOf[float32](emb)
	require.NoError(t, err)
	vals := e.Ravel()
	labels := make([]int64, len(all))
	for i := range labels {
		labels[i] = int64(vals[4*i]) / 4
		for j := range 4 {
			require.Equal(t, float32(4*labels[i]+int64(j)), vals[4*i+j], "row %d element %d", i, j)
		}
	}
	if labelled {
		l, err := got.Column("label")
		require.NoError(t, err, "the label column")
		d, err := dataset.DenseOf[int64](l)
		require.NoError(t, err)
		require.Equal(t, labels, d.Ravel(), "each row's label its emb's")
	}
	return labels
}

// requireLabelShape checks that the label column of the parts in dir, written as format, has
// the shape of the input kind's: [rows] as ndarrow's inputs have it (a TFRecord feature of one
// value an Example too: a plain column in Parquet, not a list), [rows, 1] as Arrow C++'s
// Parquet has it — but in TFRecord parts, whose Examples record no shape: [rows].
func requireLabelShape(t *testing.T, dir, kind string, format dataset.Format, rows int64) {
	t.Helper()
	tab, err := table.Open(dir, table.Options{})
	require.NoError(t, err, "reading back %s", dir)
	defer tab.Release()
	if !slices.Contains(tab.Columns(), "label") {
		require.Equal(t, "npy", kind, "a label column")
		return
	}
	want := ndarray.Shape{rows}
	if kind == "arrow-cpp-17-parquet" && format != dataset.FormatTFRecord {
		want = ndarray.Shape{rows, 1}
	}
	got, err := tab.Take(context.Background(), []int64{0, rows - 1}, []string{"label"})
	require.NoError(t, err)
	label, err := got.Column("label")
	require.NoError(t, err)
	require.Equal(t, want[1:], label.Shape()[1:], "%s: the label's cells", kind)
	require.Equal(t, rows, tab.NumRows(), kind)
}

// requireEveryRowOnce checks that labels are 0 … n-1, each once.
func requireEveryRowOnce(t *testing.T, labels []int64, n int64) {
	t.Helper()
	sorted := slices.Clone(labels)
	slices.Sort(sorted)
	require.Len(t, sorted, int(n))
	for i, l := range sorted {
		require.Equal(t, int64(i), l, "every row once")
	}
}

// requireOnlyParts checks that dir holds the parts of format and nothing else, and returns
// how many.
func requireOnlyParts(t *testing.T, dir, ext string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.True(t, strings.HasPrefix(e.Name(), "part-") && strings.Contains(e.Name(), "-of-") && strings.HasSuffix(e.Name(), "."+ext),
			"%s: only parts, yet %s", dir, e.Name())
	}
	return len(entries)
}

// TestReadWrite: a table of each input kind — Parquet of Arrow C++ 17 and of ndarrow, an Arrow
// IPC file, a .npy file, TFRecord files of Examples, plain and GZIP — read and written as
// Parquet, TFRecord and Arrow parts by a pipeline on Prism, split into restrictions of a few
// KiB: every row once with its values, the output only parts, more than one of them where the
// input has several fragments.
func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	in := inputs(t, dir)
	rows := map[string]int64{"arrow-cpp-17-parquet": 300, "parquet": 1000, "arrow": 700, "npy": 500, "t-tfrecord": 2000, "t-tfrecord-gz": 2000}
	formats := []dataset.Format{dataset.FormatParquet, dataset.FormatTFRecord, dataset.FormatArrow}
	k := 0
	for _, kind := range slices.Sorted(func(yield func(string) bool) {
		for kind := range in {
			if !yield(kind) {
				return
			}
		}
	}) {
		format := formats[k%len(formats)]
		k++
		t.Run(kind+" to "+string(format), func(t *testing.T) {
			out := filepath.Join(dir, "out", kind)
			p, s := beam.NewPipelineWithRoot()
			batches := ndbeam.Read(s, in[kind], ndbeam.ReadOptions{BatchRows: 96, SplitBytes: 4 << 10})
			ndbeam.Write(s, out, batches, ndbeam.WriteOptions{Format: format, PartRows: 256})
			restrictions, err := runCounting(t, p)
			require.NoError(t, err)
			parts := requireOnlyParts(t, out, string(format))
			requireEveryRowOnce(t, rowsOf(t, out, kind != "npy"), rows[kind])
			requireLabelShape(t, out, kind, format, rows[kind])
			assert.Greater(t, parts, 1, "parts of 256 rows or so")
			if kind != "t-tfrecord-gz" { // a compressed file is one worker's
				assert.Greater(t, restrictions, int64(1), "the work split into restrictions")
			}
		})
	}
}

// TestReadFromObjects: the same on the real S3 test server's objects — Arrow C++ 17's Parquet,
// an Arrow IPC file, a .npy file and a TFRecord file split by bytes — and Write to a prefix of
// objects: its parts and nothing else, read back from there; a second job into the same
// prefix refused, the parts as they were.
func TestReadFromObjects(t *testing.T) {
	srv := storetest.StartS3(t, "train")
	dir := t.TempDir()
	in := inputs(t, dir)
	for _, kind := range []string{"arrow-cpp-17-parquet", "arrow", "npy", "t-tfrecord"} {
		entries, err := os.ReadDir(in[kind])
		require.NoError(t, err)
		for _, e := range entries {
			srv.PutFile(t, "train", "data/"+kind+"/"+e.Name(), filepath.Join(in[kind], e.Name()))
		}
	}
	for kind, n := range map[string]int64{"arrow-cpp-17-parquet": 300, "arrow": 700, "npy": 500, "t-tfrecord": 2000} {
		out := filepath.Join(dir, "out", kind)
		p, s := beam.NewPipelineWithRoot()
		batches := ndbeam.Read(s, "s3://train/data/"+kind+"/", ndbeam.ReadOptions{BatchRows: 128, SplitBytes: 4 << 10})
		ndbeam.Write(s, out, batches, ndbeam.WriteOptions{Format: dataset.FormatParquet, PartRows: 200})
		restrictions, err := runCounting(t, p)
		require.NoError(t, err, kind)
		assert.Greater(t, restrictions, int64(1), kind)
		assert.Greater(t, requireOnlyParts(t, out, "parquet"), 1, kind)
		requireEveryRowOnce(t, rowsOf(t, out, kind != "npy"), n)
		requireLabelShape(t, out, kind, dataset.FormatParquet, n)
	}

	// Written to a prefix of objects: parts and nothing else, read back from there.
	p, s := beam.NewPipelineWithRoot()
	batches := ndbeam.Read(s, "s3://train/data/t-tfrecord/", ndbeam.ReadOptions{BatchRows: 128, SplitBytes: 8 << 10})
	ndbeam.Write(s, "s3://train/out/", batches, ndbeam.WriteOptions{Format: dataset.FormatArrow, PartRows: 500})
	require.NoError(t, run(t, p))
	objs, err := objstore.List(t.Context(), "s3://train/out/")
	require.NoError(t, err)
	require.Greater(t, len(objs), 1)
	for _, o := range objs {
		name := strings.TrimPrefix(o.URI.String(), "s3://train/out/")
		require.True(t, strings.HasPrefix(name, "part-") && strings.HasSuffix(name, "-of-0000"+strconv.Itoa(len(objs))+".arrow"), "only parts: %s", name)
	}
	requireEveryRowOnce(t, rowsOf(t, "s3://train/out/", true), 2000)

	// Again into the same prefix: refused, the parts there as they were.
	p, s = beam.NewPipelineWithRoot()
	ndbeam.Write(s, "s3://train/out/", ndbeam.Read(s, "s3://train/data/t-tfrecord/", ndbeam.ReadOptions{}), ndbeam.WriteOptions{Format: dataset.FormatArrow})
	err = run(t, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the output holds parts already")
	again, err := objstore.List(t.Context(), "s3://train/out/")
	require.NoError(t, err)
	parts := 0
	for _, o := range again {
		name := strings.TrimPrefix(o.URI.String(), "s3://train/out/")
		if strings.HasPrefix(name, "part-") {
			parts++
			continue
		}
		assert.True(t, strings.HasPrefix(name, "_temporary/"), "the refused job's temporary files only: %s", name)
	}
	assert.Equal(t, len(objs), parts, "the parts as they were")
}

// TestFailingPipelineLeavesNoPart: a pipeline that fails after its batches were written leaves
// no part in the output (its temporary files under _temporary only); one that reads nothing
// ndarrow can read fails naming the file.
func TestFailingPipelineLeavesNoPart(t *testing.T) {
	dir := t.TempDir()
	in := inputs(t, dir)
	out := filepath.Join(dir, "out")
	p, s := beam.NewPipelineWithRoot()
	batches := ndbeam.Read(s, in["parquet"], ndbeam.ReadOptions{BatchRows: 96, SplitBytes: 4 << 10})
	beam.ParDo0(s, failOnRow500, batches)
	ndbeam.Write(s, out, batches, ndbeam.WriteOptions{})
	err := run(t, p)
	require.Error(t, err)
	parts, _ := filepath.Glob(filepath.Join(out, "part-*"))
	assert.Empty(t, parts, "no part")

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "x.parquet"), []byte("PAR1 not really PAR1"), 0o644))
	p, s = beam.NewPipelineWithRoot()
	ndbeam.Write(s, filepath.Join(dir, "out2"), ndbeam.Read(s, bad, ndbeam.ReadOptions{}), ndbeam.WriteOptions{})
	err = run(t, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.parquet")
}

// failOnRow500 fails the bundle holding row 500.
func failOnRow500(b ndbeam.Batch) error {
	if b.First <= 500 && 500 < b.First+b.Record.NumRows() {
		return errRow500
	}
	return nil
}

var errRow500 = errorString("row 500 fails")

type errorString string

func (e errorString) Error() string { return string(e) }

func init() {
	beam.RegisterFunction(failOnRow500)
}

// TestSample: a sample of n rows is n distinct rows of the table, every column with its
// values, the same for the same seed and another for another.
func TestSample(t *testing.T) {
	dir := t.TempDir()
	in := inputs(t, dir)
	runs := 0
	sample := func(seed uint64) []int64 { // each run into an output of its own
		runs++
		out := filepath.Join(dir, "sample", fmt.Sprintf("run%d-seed%d", runs, seed))
		p, s := beam.NewPipelineWithRoot()
		ndbeam.Write(s, out, ndbeam.Sample(s, in["parquet"], 250, seed, ndbeam.ReadOptions{BatchRows: 100}), ndbeam.WriteOptions{})
		require.NoError(t, run(t, p))
		return rowsOf(t, out, true) // every column with its values: label and emb
	}
	a, b, c := sample(1), sample(1), sample(2)
	require.Len(t, a, 250)
	slices.Sort(a)
	assert.Len(t, slices.Compact(slices.Clone(a)), 250, "distinct rows")
	slices.Sort(b)
	slices.Sort(c)
	assert.Equal(t, a, b, "the same seed: the same rows")
	assert.NotEqual(t, a, c, "another seed: other rows")
}

// TestBatchCoder: a batch's encoding is an Arrow IPC stream that decodes, through ndarrow's
// verified decoder, to the batch; what is not one is an error.
func TestBatchCoder(t *testing.T) {
	rec, err := dataset.Batch(memory.DefaultAllocator, labelled(10, 5))
	require.NoError(t, err)
	b := ndbeam.Batch{Record: rec, Source: "s3://b/k.parquet", First: 10}
	enc, err := ndbeam.EncodeBatch(b)
	require.NoError(t, err)
	got, err := ndbeam.DecodeBatch(enc)
	require.NoError(t, err)
	requireSameBatch(t, b, got)
	for _, bad := range [][]byte{nil, []byte("ndb1"), enc[:len(enc)/2], append([]byte("ndb0"), enc[4:]...)} {
		_, err := ndbeam.DecodeBatch(bad)
		require.Error(t, err)
	}
}

// requireSameBatch checks that got is want: its source, first row and record.
func requireSameBatch(t *testing.T, want, got ndbeam.Batch) {
	t.Helper()
	require.Equal(t, want.Source, got.Source)
	require.Equal(t, want.First, got.First)
	require.True(t, arrowRecordsEqual(want.Record, got.Record))
}

func arrowRecordsEqual(a, b arrow.Record) bool {
	return a.Schema().Equal(b.Schema()) && a.NumRows() == b.NumRows() && recordString(a) == recordString(b)
}

func recordString(r arrow.Record) string {
	var sb strings.Builder
	for i := range int(r.NumCols()) {
		sb.WriteString(r.Column(i).String())
	}
	return sb.String()
}

var _ = tfrecord.None

// FuzzDecodeBatch: any bytes decode to a batch or an error — never a panic — and a batch that
// decodes encodes and decodes again to itself.
func FuzzDecodeBatch(f *testing.F) {
	rec, err := dataset.Batch(memory.DefaultAllocator, labelled(3, 4))
	require.NoError(f, err)
	enc, err := ndbeam.EncodeBatch(ndbeam.Batch{Record: rec, Source: "x.parquet", First: 3})
	require.NoError(f, err)
	f.Add(enc)
	f.Add([]byte("ndb1\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ndbeam.DecodeBatch(b)
		if err != nil {
			return
		}
		again, err := ndbeam.EncodeBatch(got)
		require.NoError(t, err)
		back, err := ndbeam.DecodeBatch(again)
		require.NoError(t, err)
		requireSameBatch(t, got, back)
	})
}
