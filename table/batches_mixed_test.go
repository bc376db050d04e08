package table_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// The mixed table: four parts of the same columns, label (int64, one a row: the row's index in
// the table) and emb (float32 [4], 4·label+j), one part per writer and format, in path order:
//
//	part-0.parquet   rows   0–299, Arrow C++ 17 (testdata/cpp17-mixed-zstd.parquet, ZSTD, 3 row groups)
//	part-1.parquet   rows 300–549, ndarrow's writer, ZSTD, row groups of ~64 rows
//	part-2.arrow     rows 550–749, Arrow IPC file, 4 record batches
//	part-3.tfrecord  rows 750–899, dataset.Save: one tf.train.Example per row
//
// label is a plain column [rows] in every part: a TFRecord int64 feature of one value per
// Example reads as [rows] too, which joins the other parts' (a [rows, 1] would not).
const mixedRows = 900

// mixedTensors returns label and emb of rows [lo, hi).
func mixedTensors(t testing.TB, lo, hi int64) []dataset.Tensor {
	label := make([]int64, hi-lo)
	emb := make([]float32, 4*(hi-lo))
	for i := range label {
		label[i] = lo + int64(i)
		for j := range 4 {
			emb[4*i+j] = float32(4*(lo+int64(i)) + int64(j))
		}
	}
	l, err := ndarray.FromSlice(label, hi-lo)
	require.NoError(t, err)
	e, err := ndarray.FromSlice(emb, hi-lo, 4)
	require.NoError(t, err)
	return []dataset.Tensor{{Name: "label", Column: "label", Dense: l}, {Name: "emb", Column: "emb", Dense: e}}
}

// writeMixed writes the mixed table's parts into dir (created) and returns their paths.
func writeMixed(t *testing.T, dir string) []string {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	paths := []string{
		filepath.Join(dir, "part-0.parquet"), filepath.Join(dir, "part-1.parquet"),
		filepath.Join(dir, "part-2.arrow"), filepath.Join(dir, "part-3.tfrecord"),
	}
	copyFile(t, "testdata/cpp17-mixed-zstd.parquet", paths[0])

	rec, err := dataset.Batch(memory.DefaultAllocator, mixedTensors(t, 300, 550))
	require.NoError(t, err)
	defer rec.Release()
	f, err := os.Create(paths[1])
	require.NoError(t, err)
	pw, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{Compression: parquet.Zstd, RowGroupBytes: 64 * 24})
	require.NoError(t, err)
	require.NoError(t, pw.Write(rec))
	require.NoError(t, pw.Close())
	require.NoError(t, f.Close())

	rec2, err := dataset.Batch(memory.DefaultAllocator, mixedTensors(t, 550, 750))
	require.NoError(t, err)
	defer rec2.Release()
	f, err = os.Create(paths[2])
	require.NoError(t, err)
	fw, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(rec2.Schema()))
	require.NoError(t, err)
	for lo := int64(0); lo < 200; lo += 50 {
		s := rec2.NewSlice(lo, lo+50)
		require.NoError(t, fw.Write(s))
		s.Release()
	}
	require.NoError(t, fw.Close())
	require.NoError(t, f.Close())

	require.NoError(t, dataset.Save(paths[3], mixedTensors(t, 750, mixedRows), dataset.WriteOptions{}))
	return paths
}

// collectMixed returns the batches of o, every one's labels its rows and its emb theirs, the
// labels checked too.
func collectMixed(t *testing.T, tab *table.Table, o table.BatchOptions) []table.Batch {
	bs := collect(t, tab, o)
	for _, b := range bs {
		emb, err := b.Values.Column("emb")
		require.NoError(t, err)
		d, err := dataset.DenseOf[float32](emb)
		require.NoError(t, err)
		require.Equal(t, ndarray.Shape{int64(len(b.Rows)), 4}, d.Shape())
		want := make([]float32, 0, 4*len(b.Rows))
		for _, r := range b.Rows {
			for j := range 4 {
				want = append(want, float32(4*r+int64(j)))
			}
		}
		require.Equal(t, want, d.Ravel(), "batch %d's emb values are its rows'", b.Index)
		label, err := b.Values.Column("label")
		require.NoError(t, err)
		l, err := dataset.DenseOf[int64](label)
		require.NoError(t, err)
		require.Equal(t, ndarray.Shape{int64(len(b.Rows))}, l.Shape(), "batch %d's label [rows], from every part", b.Index)
		require.Equal(t, b.Rows, l.Ravel(), "batch %d's labels are its rows", b.Index)
	}
	return bs
}

// checkMixedBatches runs the checks on the mixed table open opens: 3 shards, shuffled,
// 2 epochs, every row once per epoch with its values; the same batches again (in another
// Table); another order in epoch 1; shards disjoint and covering; a resume after each shard's
// second batch (its cursor through its text) equal to the rest of the run; then, after
// change rewrote a part, the cursor refused with ErrTableChanged naming the part and saying
// what differs.
func checkMixedBatches(t *testing.T, open func() *table.Table, change func(), changedPath, says string) {
	tab := open()
	require.Equal(t, int64(mixedRows), tab.NumRows())
	require.Equal(t, []string{"label", "emb"}, tab.Columns())
	require.GreaterOrEqual(t, tab.NumFragments(), 4+2+3) // row groups, record batches, the TFRecord file
	again := open()
	defer again.Release()

	const shards, size = 3, 32
	var epochs [2][]int64
	var cursors []table.Cursor
	for epoch := range int64(2) {
		seen := make([]int, mixedRows)
		for k := range shards {
			o := table.BatchOptions{Size: size, Shuffle: true, Seed: 37, Epoch: epoch, Shard: k, Shards: shards}
			bs := collectMixed(t, tab, o)
			rows := rowsOf(bs)
			assert.Len(t, rows, mixedRows/shards, "epoch %d shard %d", epoch, k)
			for _, r := range rows {
				seen[r]++
			}
			assert.Equal(t, rows, rowsOf(collect(t, again, o)), "epoch %d shard %d: the same batches again", epoch, k)
			epochs[epoch] = append(epochs[epoch], rows...)

			// Resume after batch 1, through the cursor's text.
			text, err := bs[1].Cursor.MarshalText()
			require.NoError(t, err)
			c, err := table.ParseCursor(string(text))
			require.NoError(t, err)
			o.After = &c
			rest := collectMixed(t, again, o)
			require.Len(t, rest, len(bs)-2)
			for i, b := range rest {
				assert.Equal(t, bs[i+2].Index, b.Index)
				assert.Equal(t, bs[i+2].Rows, b.Rows)
				assert.Equal(t, bs[i+2].Cursor, b.Cursor)
			}
			cursors = append(cursors, c)
		}
		for r, n := range seen {
			require.Equal(t, 1, n, "epoch %d: row %d given %d times by the shards together", epoch, r, n)
		}
		assert.False(t, slices.IsSorted(epochs[epoch]), "epoch %d shuffled", epoch)
	}
	assert.NotEqual(t, epochs[0], epochs[1], "epoch 1 another order than epoch 0")
	tab.Release()

	change()
	changed := open()
	defer changed.Release()
	require.Equal(t, int64(mixedRows), changed.NumRows(), "the same rows, rewritten")
	for _, c := range cursors {
		o := table.BatchOptions{Size: size, Shuffle: true, Seed: 37, Epoch: c.Epoch, Shard: c.Shard, Shards: shards, After: &c}
		n := 0
		for _, err := range changed.Batches(t.Context(), o) {
			require.ErrorIs(t, err, table.ErrTableChanged)
			require.ErrorIs(t, err, dataset.ErrFileChanged)
			assert.Contains(t, err.Error(), changedPath+": "+says, "the part named, and what differs")
			n++
		}
		require.Equal(t, 1, n, "one error, no batch")
	}
}

// TestBatchesMixedParts: the checks on a directory table whose parts are Parquet of
// Arrow C++ 17 and of ndarrow, an Arrow IPC file and a TFRecord file, the table a
// subdirectory of the directory opened; the change rewrites the Arrow part with the same rows
// (a new file renamed over it).
func TestBatchesMixedParts(t *testing.T) {
	root := t.TempDir()
	paths := writeMixed(t, filepath.Join(root, "mixed"))
	open := func() *table.Table {
		tab, err := table.Open(root, table.Options{Table: "mixed"})
		require.NoError(t, err)
		require.Equal(t, "mixed", tab.Name)
		return tab
	}
	checkMixedBatches(t, open, func() {
		b, err := os.ReadFile(paths[2])
		require.NoError(t, err)
		replaceWithin(t, paths[2], b) // the same rows, a new file
	}, paths[2], "its path names another file now (another device or inode: replaced)")
}

// TestBatchesMixedPartsFromObjects: the same checks on the same parts as objects of the real
// S3 test server; the change puts the ndarrow Parquet part again, written with other row
// groups (the same rows, another ETag).
func TestBatchesMixedPartsFromObjects(t *testing.T) {
	srv := storetest.StartS3(t, "train")
	local := t.TempDir()
	paths := writeMixed(t, filepath.Join(local, "mixed"))
	for _, p := range paths {
		srv.PutFile(t, "train", "data/mixed/"+filepath.Base(p), p)
	}
	open := func() *table.Table {
		tab, err := table.Open("s3://train/data/", table.Options{Table: "mixed"})
		require.NoError(t, err)
		return tab
	}
	checkMixedBatches(t, open, func() {
		rec, err := dataset.Batch(memory.DefaultAllocator, mixedTensors(t, 300, 550))
		require.NoError(t, err)
		defer rec.Release()
		other := filepath.Join(local, "other.parquet")
		f, err := os.Create(other)
		require.NoError(t, err)
		pw, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{Compression: parquet.Uncompressed})
		require.NoError(t, err)
		require.NoError(t, pw.Write(rec))
		require.NoError(t, pw.Close())
		require.NoError(t, f.Close())
		srv.PutFile(t, "train", "data/mixed/part-1.parquet", other)
	}, "s3://train/data/mixed/part-1.parquet", "another version of the object (its ETag or generation differs)")
}
