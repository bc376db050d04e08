package table_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/table"
)

// partRows is the rows of each part writeParts writes.
const partRows = 50

// writeParts writes n Parquet parts into dir (part-I.parquet: see writePart) and returns
// their paths.
func writeParts(t *testing.T, dir string, n int) []string {
	var paths []string
	for i := range n {
		paths = append(paths, writePart(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), i))
	}
	return paths
}

// writePart writes a Parquet file of partRows rows at path — label, 1000·i + the row, and
// emb [rows, 2] — and returns path.
func writePart(t *testing.T, path string, i int) string {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	labels := ndarray.Must(ndarray.Arange(int64(1000*i), int64(1000*i+partRows), 1))
	emb := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 2*partRows, 1)).Reshape(partRows, 2))
	require.NoError(t, dataset.Save(path, []dataset.Tensor{{Name: "label", Column: "label", Dense: labels},
		{Name: "emb", Column: "emb", Kind: dataset.KindFixedShape, Dense: emb}}, dataset.WriteOptions{}))
	return path
}

// cut truncates the file at path to half its size: a Parquet file without its footer.
func cut(t *testing.T, path string) {
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, info.Size()/2))
}

// labelsOf takes every row of tab's label column.
func labelsOf(t *testing.T, tab *table.Table) []int64 {
	rows := make([]int64, tab.NumRows())
	for i := range rows {
		rows[i] = int64(i)
	}
	got, err := tab.Take(t.Context(), rows, []string{"label"})
	require.NoError(t, err)
	labels, err := dataset.DenseOf[int64](got.Columns[0])
	require.NoError(t, err)
	return labels.Ravel()
}

// wantLabels returns the labels of the parts writeParts writes, those numbered in parts.
func wantLabels(parts ...int) []int64 {
	var out []int64
	for _, i := range parts {
		for r := range partRows {
			out = append(out, int64(1000*i+r))
		}
	}
	return out
}

// TestOpenFailsNamingAnUnreadablePart: a table one of whose parts cannot be read (a Parquet
// file cut short) fails to open, naming the part and why (dataset.ErrUnreadable), a table of
// one part as one of four; with SkipUnreadable it opens without it, its rows those of the
// parts read, and Skipped names the part. FromDir behaves as Open does.
func TestOpenFailsNamingAnUnreadablePart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parts  int
		cut    []int
		rows   []int
		opened string // the table Open opens of the directory, named after it
	}{
		{"one of four", 4, []int{2}, []int{0, 1, 3}, "train"},
		{"two of four", 4, []int{0, 3}, []int{1, 2}, "train"},
		{"the last of two", 2, []int{1}, []int{0}, "train"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train")
			paths := writeParts(t, dir, tc.parts)
			for _, i := range tc.cut {
				cut(t, paths[i])
			}
			_, err := table.Open(dir, table.Options{})
			require.ErrorIs(t, err, dataset.ErrUnreadable)
			assert.ErrorContains(t, err, "table train: unreadable part "+paths[tc.cut[0]]+": ")
			if len(tc.cut) > 1 {
				assert.ErrorContains(t, err, fmt.Sprintf("(and %d more)", len(tc.cut)-1))
			}
			var sf *dataset.SkippedFile
			require.ErrorAs(t, err, &sf)
			assert.Equal(t, paths[tc.cut[0]], sf.Path)
			_, err = table.Open(dir, table.Options{Table: "train"})
			require.ErrorIs(t, err, dataset.ErrUnreadable, "named, the same")

			tab, err := table.Open(dir, table.Options{SkipUnreadable: true})
			require.NoError(t, err)
			defer tab.Release()
			assert.Equal(t, tc.opened, tab.Name)
			assert.Equal(t, int64(len(tc.rows)*partRows), tab.NumRows())
			assert.Equal(t, wantLabels(tc.rows...), labelsOf(t, tab))
			skipped := tab.Skipped()
			require.Len(t, skipped, len(tc.cut))
			for k, i := range tc.cut {
				assert.Equal(t, paths[i], skipped[k].Path)
				assert.Equal(t, "train", skipped[k].Table)
				assert.ErrorContains(t, skipped[k], paths[i]+": ", "the path and why")
			}

			d, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			_, err = table.FromDir(d, table.Options{})
			require.ErrorIs(t, err, dataset.ErrUnreadable)
			fromDir, err := table.FromDir(d, table.Options{SkipUnreadable: true})
			require.NoError(t, err)
			assert.Equal(t, tab.NumRows(), fromDir.NumRows())
			assert.Len(t, fromDir.Skipped(), len(tc.cut))
		})
	}
}

// TestOpenNeverPassesOverAnUnreadableTable: with no table named, the table of a file that
// cannot be read counts among those to choose from — so no other table is opened in its stead
// in silence — and a table no file of which can be read is its first file's error
// (ErrNoTable too), with SkipUnreadable or not.
func TestOpenNeverPassesOverAnUnreadableTable(t *testing.T) {
	dir := t.TempDir()
	writePart(t, filepath.Join(dir, "x.parquet"), 0)
	bad := writePart(t, filepath.Join(dir, "y.parquet"), 1)
	cut(t, bad)

	_, err := table.Open(dir, table.Options{})
	require.ErrorIs(t, err, table.ErrNoTable)
	assert.EqualError(t, err, dir+" holds the tables x, y (with unreadable parts): name one: "+table.ErrNoTable.Error())

	x, err := table.Open(dir, table.Options{Table: "x"})
	require.NoError(t, err, "named, a whole table opens")
	assert.Empty(t, x.Skipped(), "the other table's file is not x's")
	x.Release()

	x, err = table.Open(dir, table.Options{SkipUnreadable: true})
	require.NoError(t, err)
	assert.Equal(t, "x", x.Name)
	require.Len(t, x.Skipped(), 1, "the file passed over is named")
	assert.Equal(t, bad, x.Skipped()[0].Path)
	assert.Equal(t, wantLabels(0), labelsOf(t, x))
	x.Release()

	for _, o := range []table.Options{{Table: "y"}, {Table: "y", SkipUnreadable: true}} {
		_, err = table.Open(dir, o)
		require.ErrorIs(t, err, table.ErrNoTable)
		require.ErrorIs(t, err, dataset.ErrUnreadable)
		assert.Contains(t, err.Error(), bad+": ")
	}
}

// TestOpenRefusesTwoFilesOfOneBaseName: t.parquet and t.arrow are never one table: opening
// t fails naming both; SkipUnreadable leaves both out (and so no table t).
func TestOpenRefusesTwoFilesOfOneBaseName(t *testing.T) {
	dir := t.TempDir()
	labels := ndarray.Must(ndarray.Arange[int64](0, 1000, 1))
	for _, name := range []string{"t.parquet", "t.arrow"} {
		require.NoError(t, dataset.Save(filepath.Join(dir, name), []dataset.Tensor{{Name: "label", Column: "label", Dense: labels}}, dataset.WriteOptions{}))
	}
	_, err := table.Open(dir, table.Options{})
	require.ErrorIs(t, err, dataset.ErrSameBaseName)
	assert.ErrorContains(t, err, filepath.Join(dir, "t.arrow")+": t.parquet beside it")
	_, err = table.Open(dir, table.Options{Table: "t", SkipUnreadable: true})
	require.ErrorIs(t, err, table.ErrNoTable)
	require.ErrorIs(t, err, dataset.ErrSameBaseName)
}
