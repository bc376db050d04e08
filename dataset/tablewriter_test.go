package dataset_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// labelled returns rows rows of emb (float32 [rows, 3]: row r is r, r+1, r+2), label (int64
// r) and name (utf8), the first row first.
func labelled(t *testing.T, first, rows int64) []dataset.Tensor {
	emb := ndarray.FromFunc(func(i []int64) float32 { return float32(first + i[0] + i[1]) }, rows, 3)
	label := ndarray.FromFunc(func(i []int64) int64 { return first + i[0] }, rows)
	name := ndarray.FromFunc(func(i []int64) string { return "row" + string(rune('a'+(first+i[0])%26)) }, rows)
	return []dataset.Tensor{{Name: "t.emb", Column: "emb", Dense: emb}, {Name: "t.label", Column: "label", Dense: label}, {Name: "t.name", Column: "name", Dense: name}}
}

// TestTableWriter: a table written a batch at a time in each format reads back as every
// batch's rows in order, every column; TFRecord refuses null rows naming the column; a
// writer of no batch writes no Parquet or Arrow file but an empty TFRecord one.
func TestTableWriter(t *testing.T) {
	dir := t.TempDir()
	for _, format := range []dataset.Format{dataset.FormatParquet, dataset.FormatArrow, dataset.FormatArrows, dataset.FormatTFRecord} {
		path := filepath.Join(dir, "t."+string(format))
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := dataset.NewTableWriter(f, format, dataset.WriteOptions{})
		require.NoError(t, err)
		for k := range int64(3) {
			require.NoError(t, w.Write(labelled(t, k*10, 10)), "%s batch %d", format, k)
		}
		assert.Equal(t, int64(30), w.Rows())
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
		got, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err, format)
		tab, err := got.Table()
		require.NoError(t, err)
		want := labelled(t, 0, 30)
		for _, w := range want {
			col, err := tab.Column(w.Column)
			require.NoError(t, err, "%s %s", format, w.Column)
			assert.Equal(t, w.Dense.Shape(), col.Dense.Shape(), "%s %s", format, w.Column) // TFRecord's one value an Example too
			assert.Equal(t, ravel(w.Dense), ravel(col.Dense), "%s %s", format, w.Column)
		}
		got.Release()
	}

	// Nulls where TFRecord holds none.
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 0, 3}, []bool{true, false, true})
	col := b.NewArray()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "label", Type: col.DataType(), Nullable: true}}, nil), []arrow.Array{col}, 3)
	w, err := dataset.NewTableWriter(new(discard), dataset.FormatTFRecord, dataset.WriteOptions{})
	require.NoError(t, err)
	err = w.WriteRecord(rec)
	require.ErrorIs(t, err, arrowtensor.ErrNull)
	assert.Contains(t, err.Error(), "label")

	for format, ok := range map[dataset.Format]bool{dataset.FormatParquet: false, dataset.FormatArrows: false, dataset.FormatTFRecord: true} {
		w, err := dataset.NewTableWriter(new(discard), format, dataset.WriteOptions{})
		require.NoError(t, err)
		if ok {
			assert.NoError(t, w.Close(), format)
		} else {
			assert.ErrorIs(t, w.Close(), dataset.ErrFormat, format)
		}
	}
	_, err = dataset.NewTableWriter(new(discard), dataset.FormatNpy, dataset.WriteOptions{})
	require.ErrorIs(t, err, dataset.ErrFormat)
}

// ravel returns the values of a in row-major order.
func ravel(a ndarray.Array) any {
	switch d := a.(type) {
	case *ndarray.Dense[float32]:
		return d.Ravel()
	case *ndarray.Dense[int64]:
		return d.Ravel()
	case *ndarray.Dense[string]:
		return d.Ravel()
	}
	return a
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestListAndOpenBytes: List gives a directory's files as ScanDir walks it ("." and "_" names
// left out, in path order), and a file's path alone; OpenBytes reads a file's bytes at any
// offset, past its end with io.EOF.
func TestListAndOpenBytes(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b/part-1.parquet", "a.npy", "_temporary/x.parquet", ".hidden", "b/_SUCCESS"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("0123456789"), 0o644))
	}
	files, skipped, err := dataset.List(t.Context(), dir)
	require.NoError(t, err)
	assert.Empty(t, skipped)
	require.Equal(t, []dataset.Listed{{Path: filepath.Join(dir, "a.npy"), Size: 10}, {Path: filepath.Join(dir, "b/part-1.parquet"), Size: 10}}, files)
	one, _, err := dataset.List(t.Context(), filepath.Join(dir, "a.npy"))
	require.NoError(t, err)
	require.Equal(t, files[:1], one)

	b, err := dataset.OpenBytes(t.Context(), files[0].Path)
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, int64(10), b.Size)
	p := make([]byte, 4)
	n, err := b.ReadAt(p, 3)
	require.NoError(t, err)
	assert.Equal(t, "3456", string(p[:n]))
	n, err = b.ReadAt(p, 8)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, "89", string(p[:n]))
	_, err = dataset.OpenBytes(t.Context(), dir)
	require.Error(t, err, "a directory")
}
