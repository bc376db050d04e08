package dataset_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
)

// writeTable writes a Parquet file at path of rows rows: an embedding column emb (float32
// [rows, 4], values from first on) and a ragged column ids.
func writeTable(t *testing.T, path string, first float32, rows int64) {
	writeRowGroups(t, path, first, rows, parquet.WriterOptions{})
}

// writeRowGroups writes the file writeTable writes with opts.
func writeRowGroups(t *testing.T, path string, first float32, rows int64, opts parquet.WriterOptions) {
	emb := ndarray.Must(ndarray.Must(ndarray.Arange(first, first+float32(rows*4), 1)).Reshape(rows, 4))
	splits := make([]int64, rows+1)
	var vals []int64
	for i := range rows {
		vals = append(vals, int64(first)+i)
		splits[i+1] = int64(len(vals))
	}
	ids, err := ragged.FromRowSplits(vals, splits)
	require.NoError(t, err)
	parquettest.WriteTensors(t, path, opts,
		dataset.Tensor{Name: "emb", Kind: dataset.KindFixedShape, Dense: emb},
		dataset.Tensor{Name: "ids", Kind: dataset.KindRagged, Ragged: ids})
}

func names(d *dataset.Dir) []string {
	var out []string
	for _, t := range d.Tensors {
		out = append(out, t.Name)
	}
	return out
}

// TestOpenDirJoinsTheParts: the Parquet files of a table (a subdirectory, Hive-style
// partitions inside it) are one tensor per column, rows in path order; a directory that is
// itself partitioned is one table named after it; Spark's _SUCCESS and hidden files are left
// alone.
func TestOpenDirJoinsTheParts(t *testing.T) {
	dir := t.TempDir()
	writeTable(t, filepath.Join(dir, "events", "day=2", "part-0.parquet"), 100, 2)
	writeTable(t, filepath.Join(dir, "events", "day=1", "part-1.parquet"), 10, 3)
	writeTable(t, filepath.Join(dir, "events", "day=1", "part-0.parquet"), 0, 1)
	writeTable(t, filepath.Join(dir, "loose.parquet"), 7, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events", "_SUCCESS"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "events", ".staging"), 0o755))
	writeTable(t, filepath.Join(dir, "events", ".staging", "part-9.parquet"), 99, 9)

	d, err := dataset.OpenDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	assert.Empty(t, d.Skipped)
	assert.Equal(t, []string{"events.emb", "events.ids", "loose.emb", "loose.ids"}, names(d))
	emb := d.Tensors[0]
	assert.Equal(t, ndarray.Shape{6, 4}, emb.Shape(), "1 + 3 + 2 rows")
	got := emb.Dense.(*ndarray.Dense[float32]).Ravel()
	assert.Equal(t, []float32{0, 1, 2, 3, 10, 11}, got[:6], "day=1/part-0 first, then day=1/part-1")
	assert.Equal(t, float32(100), got[16], "day=2 last")
	ids := d.Tensors[1].Ragged.(*ragged.Array[int64])
	assert.Equal(t, []int64{0, 10, 11, 12, 100, 101}, ids.FlatValues())

	// The partitioned directory itself: one table named after it.
	d2, err := dataset.OpenDir(filepath.Join(dir, "events"), limits.Limits{})
	require.NoError(t, err)
	defer d2.Release()
	assert.Equal(t, []string{"events.emb", "events.ids"}, names(d2))
	assert.Equal(t, int64(6), d2.Tensors[0].Rows())
}

// TestOpenDirBoundsTheJoin: a join that would copy more than MaxCopySize leaves the tensor
// out, naming the file that took it past; ScanDir, which copies nothing, keeps it.
func TestOpenDirBoundsTheJoin(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../npy/testdata/numpy/u8_image.npy") // 192 bytes of values, viewed
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "t"), 0o755))
	for _, name := range []string{"a.npy", "b.npy", "c.npy"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "t", name), b, 0o644))
	}
	d, err := dataset.OpenDir(dir, limits.Limits{MaxCopySize: 400})
	require.NoError(t, err)
	defer d.Release()
	require.Len(t, d.Skipped, 1)
	assert.ErrorIs(t, d.Skipped[0], limits.ErrExceeded)
	assert.ErrorContains(t, d.Skipped[0], "c.npy")
	assert.Empty(t, d.Tensors)
	assert.Empty(t, d.Sources)

	s, err := dataset.ScanDir(dir, limits.Limits{MaxCopySize: 400})
	require.NoError(t, err)
	defer s.Release()
	assert.Empty(t, s.Skipped)
	require.Len(t, s.Sources, 1)
	assert.Equal(t, ndarray.Shape{24, 8, 3}, s.Sources[0].Shape(), "a, b and c")
	assert.Equal(t, 3, s.Sources[0].NumChunks())
	assert.Equal(t, int64(576), s.Sources[0].Bytes())
}

// TestParquetColumnsAreTensors: every tensor column kind through a Parquet file.
func TestParquetColumnsAreTensors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeTable(t, path, 0, 3)
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	require.Len(t, f.Tensors, 2)
	assert.Equal(t, dataset.KindFixedShape, f.Tensors[0].Kind)
	assert.Equal(t, "emb", f.Tensors[0].Column)
	assert.Equal(t, dataset.KindRagged, f.Tensors[1].Kind)
	assert.Equal(t, ndarray.Float32, f.Tensors[0].DType())
}

// TestScanDirReadsRowGroupsOnDemand: ScanDir reads no values; a Parquet column is a Source of
// one chunk per row group, each decoded as it is read, so a table larger than MaxCopySize
// (which OpenDir refuses to copy whole) is read chunk by chunk with the same values.
func TestScanDirReadsRowGroupsOnDemand(t *testing.T) {
	dir := t.TempDir()
	const rows = 4000 // emb: 64 000 bytes, ids: 32 000 values
	writeRowGroups(t, filepath.Join(dir, "big.parquet"), 0, rows, parquet.WriterOptions{RowGroupBytes: 4 << 10})
	lim := limits.Limits{MaxCopySize: 32 << 10}

	d, err := dataset.OpenDir(dir, lim)
	require.NoError(t, err)
	defer d.Release()
	assert.Empty(t, d.Tensors)
	require.Len(t, d.Skipped, 2)
	assert.ErrorIs(t, d.Skipped[0], limits.ErrExceeded)
	assert.ErrorContains(t, d.Skipped[0], "big.parquet")

	s, err := dataset.ScanDir(dir, lim)
	require.NoError(t, err)
	defer s.Release()
	assert.Empty(t, s.Skipped)
	require.Len(t, s.Sources, 2)
	emb, ids := s.Sources[0], s.Sources[1]
	assert.Equal(t, "big.emb", emb.Name)
	assert.Equal(t, dataset.KindFixedShape, emb.Kind)
	assert.Equal(t, ndarray.Float32, emb.DType())
	assert.Equal(t, ndarray.Shape{rows, 4}, emb.Shape())
	assert.Equal(t, int64(rows*4*4), emb.Bytes())
	assert.Equal(t, ndarray.Shape{rows, -1}, ids.Shape())
	assert.Equal(t, int64(-1), ids.Bytes(), "a ragged Parquet column's size is known once read")
	assert.Greater(t, emb.NumChunks(), 10)
	_, resident := emb.Resident()
	assert.False(t, resident)

	var got []float32
	chunks := 0
	for c, err := range emb.Chunks(t.Context()) {
		require.NoError(t, err)
		assert.Equal(t, "big.emb", c.Name)
		assert.Equal(t, int64(4), c.Shape()[1])
		got = append(got, c.Dense.(*ndarray.Dense[float32]).Ravel()...)
		chunks++
	}
	assert.Equal(t, emb.NumChunks(), chunks)
	require.Len(t, got, rows*4)
	for i, v := range got {
		require.Equal(t, float32(i), v, "value %d", i)
	}
	var vals []int64
	for c, err := range ids.Chunks(t.Context()) {
		require.NoError(t, err)
		vals = append(vals, c.Ragged.(*ragged.Array[int64]).FlatValues()...)
	}
	require.Len(t, vals, rows)
	assert.Equal(t, int64(rows-1), vals[rows-1])

	_, err = emb.Read(t.Context())
	assert.ErrorIs(t, err, limits.ErrExceeded, "whole, it is more than MaxCopySize")
}

// TestSourceChunkErrors: a row group that cannot be a tensor (a null in an embedding) fails the
// chunk that holds it, naming the file, after the chunks before it were yielded.
func TestSourceChunkErrors(t *testing.T) {
	const rows = 64
	dir := t.TempDir()
	path := filepath.Join(dir, "nulls.parquet")
	parquettest.WriteNullElement(t, path, rows)

	d, err := dataset.ScanDir(dir, limits.Limits{})
	require.NoError(t, err, "no value is read to scan")
	defer d.Release()
	require.Len(t, d.Sources, 1)
	good := int64(0)
	var failed error
	for c, err := range d.Sources[0].Chunks(t.Context()) {
		if err != nil {
			failed = err
			break
		}
		good += c.Rows()
	}
	assert.ErrorIs(t, failed, arrowtensor.ErrNull)
	assert.ErrorContains(t, failed, path)
	assert.Greater(t, good, int64(0), "the row groups before it")
	assert.Less(t, good, int64(rows-3))
}

// TestLegacyListsAreRagged: Parquet's legacy list layouts (two-level lists, bare repeated
// fields) are ragged tensors like the three-level ones.
func TestLegacyListsAreRagged(t *testing.T) {
	for _, c := range []struct {
		file   string
		column string
		shape  ndarray.Shape
		values []int32
	}{
		{"old_list_structure.parquet", "a", ndarray.Shape{1, -1, -1}, []int32{1, 2, 3, 4}},
		{"repeated_primitive_no_list.parquet", "Int32_list", ndarray.Shape{4, -1}, nil},
	} {
		f, err := dataset.Open(filepath.Join("../parquet/testdata/parquet-testing/data", c.file), limits.Limits{})
		require.NoError(t, err, c.file)
		var found bool
		for _, x := range f.Tensors {
			if x.Column != c.column {
				continue
			}
			found = true
			assert.Equal(t, dataset.KindRagged, x.Kind, c.file)
			assert.Equal(t, c.shape, x.Shape(), c.file)
			if c.values != nil {
				assert.Equal(t, c.values, x.Ragged.(*ragged.Array[int32]).FlatValues(), c.file)
			}
		}
		assert.True(t, found, "%s: column %s", c.file, c.column)
		f.Release()
	}
}

// TestADirectoryOfPartsIsOneTable: a directory whose own files are the parts of one table
// (Parquet and Arrow files named part-…, data_…, with the same columns), as pyarrow.dataset,
// Spark and DuckDB write them, is that table, named after the directory; files of other names
// or other columns keep their own names.
func TestADirectoryOfPartsIsOneTable(t *testing.T) {
	train := filepath.Join(t.TempDir(), "train")
	writeTable(t, filepath.Join(train, "part-0.parquet"), 0, 50)
	writeTable(t, filepath.Join(train, "part-1.parquet"), 1000, 30)
	require.NoError(t, os.WriteFile(filepath.Join(train, "_SUCCESS"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(train, "_metadata"), []byte("PAR1"), 0o644))
	// an Arrow part, converted from a Parquet one
	tmp := filepath.Join(t.TempDir(), "p.parquet")
	writeTable(t, tmp, 5000, 20)
	f, err := dataset.Open(tmp, limits.Limits{})
	require.NoError(t, err)
	ts := make([]dataset.Tensor, len(f.Tensors))
	for i, x := range f.Tensors {
		x.Name = x.Column
		ts[i] = x
	}
	require.NoError(t, dataset.Save(filepath.Join(train, "part-2.arrow"), ts, dataset.WriteOptions{}))
	f.Release()

	d, err := dataset.OpenDir(train, limits.Limits{})
	require.NoError(t, err)
	assert.Empty(t, d.Skipped)
	assert.Equal(t, []string{"train.emb", "train.ids"}, names(d))
	emb, err := d.Tensor("train.emb")
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{100, 4}, emb.Shape(), "50 + 30 + 20 rows")
	vals := emb.Dense.(*ndarray.Dense[float32])
	assert.Equal(t, float32(1000), vals.Get(50, 0), "part-1 after part-0")
	assert.Equal(t, float32(5000), vals.Get(80, 0), "part-2 last")
	d.Release()

	// Served from the parent, the folder is a table of the same name.
	parent, err := dataset.OpenDir(filepath.Dir(train), limits.Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"train.emb", "train.ids"}, names(parent))
	parent.Release()

	// Files that are not parts keep their names.
	other := t.TempDir()
	writeTable(t, filepath.Join(other, "train.parquet"), 0, 5)
	writeTable(t, filepath.Join(other, "test.parquet"), 0, 3)
	d, err = dataset.OpenDir(other, limits.Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"test.emb", "test.ids", "train.emb", "train.ids"}, names(d))
	d.Release()
}
