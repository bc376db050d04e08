package dataset_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// writeNpy writes a float32 .npy file of rows×256 values, all v, at path (through a rename,
// as a careful writer replaces a file).
func writeNpy(t *testing.T, path string, rows int64, v float32) {
	var buf bytes.Buffer
	_, err := npy.Write(&buf, ndarray.Full(v, rows, 256))
	require.NoError(t, err)
	tmp := path + ".tmp~"
	require.NoError(t, os.WriteFile(tmp, buf.Bytes(), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

func sourceNames(d *dataset.Dir) []string {
	var out []string
	for _, s := range d.Sources {
		out = append(out, s.Name)
	}
	return out
}

func source(t *testing.T, d *dataset.Dir, name string) *dataset.Source {
	for _, s := range d.Sources {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no source %q in %v", name, sourceNames(d))
	return nil
}

// TestRescanFollowsTheDirectory: Rescan reads only what changed — an unchanged file's Sources
// are the same (SameAs), its mapping shared — and sees files added, replaced, rewritten in
// place, truncated and removed; each Dir keeps its own mappings alive.
func TestRescanFollowsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	writeNpy(t, filepath.Join(dir, "a.npy"), 4, 1)
	writeNpy(t, filepath.Join(dir, "b.npy"), 4, 2)
	writeTable(t, filepath.Join(dir, "t", "part-0.parquet"), 0, 3)
	d0, err := dataset.ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "t.emb", "t.ids"}, sourceNames(d0))

	d1, err := d0.Rescan()
	require.NoError(t, err)
	for i := range d0.Sources {
		assert.True(t, d0.Sources[i].SameAs(d1.Sources[i]), "%s unchanged", d0.Sources[i].Name)
	}

	// Added, replaced, another part, removed.
	writeNpy(t, filepath.Join(dir, "c.npy"), 2, 3)
	writeNpy(t, filepath.Join(dir, "b.npy"), 8, 4)
	writeTable(t, filepath.Join(dir, "t", "part-1.parquet"), 10, 2)
	require.NoError(t, os.Remove(filepath.Join(dir, "a.npy")))
	d2, err := d1.Rescan()
	require.NoError(t, err)
	assert.Empty(t, d2.Skipped)
	assert.Equal(t, []string{"b", "c", "t.emb", "t.ids"}, sourceNames(d2))
	assert.Equal(t, ndarray.Shape{8, 256}, source(t, d2, "b").Shape())
	assert.Equal(t, ndarray.Shape{5, 4}, source(t, d2, "t.emb").Shape())
	assert.False(t, source(t, d1, "b").SameAs(source(t, d2, "b")))
	assert.False(t, source(t, d1, "t.emb").SameAs(source(t, d2, "t.emb")), "a part joined")

	// d1 still reads the versions it had, although b was replaced and a removed.
	old, err := source(t, d1, "b").Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, float32(2), old.Dense.(*ndarray.Dense[float32]).Get(3, 255))
	gone, err := source(t, d1, "a").Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, float32(1), gone.Dense.(*ndarray.Dense[float32]).Get(0, 0))
	d0.Release()
	d1.Release()

	// Truncated in place: left out with an error naming it until it is whole again.
	c := filepath.Join(dir, "c.npy")
	require.NoError(t, os.Truncate(c, 100))
	d3, err := d2.Rescan()
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "t.emb", "t.ids"}, sourceNames(d3))
	require.Len(t, d3.Skipped, 1)
	var fe *dataset.FileError
	require.ErrorAs(t, d3.Skipped[0], &fe)
	assert.Equal(t, c, fe.Path)
	d2.Release()

	writeNpy(t, c, 2, 5)
	d4, err := d3.Rescan()
	require.NoError(t, err)
	assert.Empty(t, d4.Skipped)
	got, err := source(t, d4, "c").Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, float32(5), got.Dense.(*ndarray.Dense[float32]).Get(1, 1))
	d3.Release()
	d4.Release()
}

// TestFileChangedWhileRead: a file that shrinks under its mapping is an error naming it
// wrapping ErrFileChanged, wherever it is read — a view read in Guard, a Parquet row group
// decoded from the mapping — and CheckUnchanged tells a file modified in place from one
// replaced.
func TestFileChangedWhileRead(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npy")
	writeNpy(t, a, 1024, 1) // 1 MiB of values
	p := filepath.Join(dir, "t", "part-0.parquet")
	writeTable(t, p, 0, 100000)
	d, err := dataset.ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	resident, parquet := source(t, d, "a"), source(t, d, "t.emb")
	require.NoError(t, resident.CheckUnchanged())

	require.NoError(t, os.Truncate(a, 4096))
	require.NoError(t, os.Truncate(p, 4096))
	view, err := resident.Read(t.Context()) // the view itself: nothing read yet
	require.NoError(t, err)
	err = dataset.Guard(func() error {
		sum := float32(0)
		for _, v := range view.Dense.(*ndarray.Dense[float32]).Ravel() {
			sum += v
		}
		return fmt.Errorf("not reached: %v", sum)
	})
	var fe *dataset.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, a, fe.Path)
	assert.ErrorIs(t, err, dataset.ErrFileChanged)
	assert.Contains(t, err.Error(), a+": file changed while being read")

	_, err = parquet.Read(t.Context())
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, p, fe.Path)
	assert.ErrorIs(t, err, dataset.ErrFileChanged)

	// Modified in place: CheckUnchanged says so; replaced by a rename: it does not.
	assert.ErrorIs(t, resident.CheckUnchanged(), dataset.ErrFileChanged)
	b := filepath.Join(dir, "b.npy")
	writeNpy(t, b, 4, 1)
	d2, err := d.Rescan()
	require.NoError(t, err)
	defer d2.Release()
	bs := source(t, d2, "b")
	time.Sleep(10 * time.Millisecond) // a later modification time
	writeNpy(t, b, 4, 2)
	assert.NoError(t, bs.CheckUnchanged(), "renamed over: the mapping keeps the old file")
	require.NoError(t, os.Remove(b))
	assert.NoError(t, bs.CheckUnchanged(), "removed: the same")
}

// TestTensorByNameAndType: a file's tensor by name, and its values typed, or errors that say
// what is there instead.
func TestTensorByNameAndType(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	writeNpy(t, path, 2, 3)
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	x, err := f.Tensor("x")
	require.NoError(t, err)
	d, err := dataset.DenseOf[float32](x)
	require.NoError(t, err)
	assert.Equal(t, float32(3), d.Get(1, 255))
	_, err = dataset.DenseOf[float64](x)
	assert.ErrorIs(t, err, ndarray.ErrDType)
	assert.EqualError(t, err, "dataset: x holds float32, not float64: unsupported dtype")
	_, err = f.Tensor("y")
	assert.ErrorIs(t, err, dataset.ErrNoTensor)
	assert.Contains(t, err.Error(), `holds no tensor "y" (it holds x)`)
	_, err = dataset.DenseOf[float32](dataset.Tensor{Name: "r", Kind: dataset.KindRagged})
	assert.ErrorIs(t, err, ndarray.ErrShape)
}
