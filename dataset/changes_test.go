package dataset_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
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

	// Modified in place: CheckUnchanged says so (TestCheckUnchangedFollowsTheFile has the rest).
	assert.ErrorIs(t, resident.CheckUnchanged(), dataset.ErrFileChanged)
}

// npyOf is a float32 .npy file of rows×256 values, all v.
func npyOf(t *testing.T, rows int64, v float32) []byte {
	var buf bytes.Buffer
	_, err := npy.Write(&buf, ndarray.Full(v, rows, 256))
	require.NoError(t, err)
	return buf.Bytes()
}

// TestCheckUnchangedFollowsTheFile: CheckUnchanged looks at the file a Source mapped, not at
// what its path names when it is called: a file rewritten in place is changed whether it is
// then replaced by a rename, removed or left alone, and so is one rewritten keeping its size
// and modification time (rsync --inplace -t), or made read-only; the error names the file and
// what differs. One replaced or removed without an in-place write is unchanged, although
// losing its name stamped its change time, and its Source reads the old values whole.
func TestCheckUnchangedFollowsTheFile(t *testing.T) {
	const written = "its modification time and change time differ (written to, or touched)"
	const writtenUnlinked = "its modification time differs (written to, or touched)" // its change time stamped by the unlink too
	const stamped = "its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)"
	for _, tc := range []struct {
		name    string
		inPlace string // "rewritten", "rewritten keeping its size and times", "made read-only" or ""
		then    string // "renamed over", "removed" or ""
		says    string // what the error says differs; "" for no error
	}{
		{"rewritten in place, then replaced by a rename", "rewritten", "renamed over", writtenUnlinked},
		{"rewritten in place, then removed", "rewritten", "removed", writtenUnlinked},
		{"rewritten in place and left alone", "rewritten", "", written},
		{"rewritten keeping its size and times", "rewritten keeping its size and times", "", stamped},
		{"made read-only", "made read-only", "", stamped},
		{"replaced by a rename", "", "renamed over", ""},
		{"removed", "", "removed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := filepath.Join(dir, "a.npy")
			writeNpy(t, a, 64, 1)
			old := time.Now().Add(-time.Hour) // a write after this has another time, whatever the clock's tick
			require.NoError(t, os.Chtimes(a, old, old))
			d, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			src := source(t, d, "a")
			require.NoError(t, src.CheckUnchanged())

			switch tc.inPlace {
			case "rewritten":
				require.NoError(t, os.WriteFile(a, npyOf(t, 64, 2), 0o644)) // the same size
			case "rewritten keeping its size and times":
				fileidtest.RewriteKeepingTimes(t, a, npyOf(t, 64, 2))
			case "made read-only":
				fileidtest.Stamped(t, a, func() error { return os.Chmod(a, 0o444) })
			}
			switch tc.then {
			case "renamed over":
				writeNpy(t, a, 8, 3)
			case "removed":
				require.NoError(t, os.Remove(a))
			}

			err = src.CheckUnchanged()
			if tc.says == "" {
				require.NoError(t, err)
				got, err := src.Read(context.Background())
				require.NoError(t, err)
				requireAll(t, got, 64, 1)
				return
			}
			require.ErrorIs(t, err, dataset.ErrFileChanged)
			var fe *dataset.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, a, fe.Path)
			assert.Equal(t, a+": a: file changed while being read: "+tc.says, err.Error(), "the file named once, and what differs")
		})
	}
}

// TestRescanSeesAChangeOfTheChangeTime: a file rewritten keeping its size and modification
// time (rsync --inplace -t) is a new version — another File.Version, a Source of its own, its
// new values read — and so is one only made read-only (what became of its bytes cannot be
// told); the file opened alone (Open) says so at CheckUnchanged, as a Parquet stream of it
// does.
func TestRescanSeesAChangeOfTheChangeTime(t *testing.T) {
	for _, change := range []string{"rewritten keeping its size and times", "made read-only"} {
		t.Run(change, func(t *testing.T) {
			dir := t.TempDir()
			a := filepath.Join(dir, "a.npy")
			writeNpy(t, a, 64, 1)
			p := filepath.Join(dir, "t.parquet")
			ts := []dataset.Tensor{{Name: "x", Column: "x", Dense: ndarray.Full[int64](1, 4096)}}
			require.NoError(t, dataset.Save(p, ts, dataset.WriteOptions{ParquetCompression: parquet.Uncompressed}))
			d0, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d0.Release()
			f, err := dataset.Open(a, limits.Limits{})
			require.NoError(t, err)
			defer f.Release()
			stream := dataset.OpenParquetStream(p, limits.Limits{})
			require.NotNil(t, stream)
			defer stream.Close()
			versions, _ := source(t, d0, "a").Versions()
			require.NoError(t, f.CheckUnchanged())
			require.NoError(t, stream.CheckUnchanged())

			ts[0].Dense = ndarray.Full[int64](2, 4096)
			var pb bytes.Buffer
			require.NoError(t, dataset.Write(&pb, dataset.FormatParquet, ts, dataset.WriteOptions{ParquetCompression: parquet.Uncompressed}))
			switch change {
			case "made read-only":
				for _, path := range []string{a, p} {
					fileidtest.Stamped(t, path, func() error { return os.Chmod(path, 0o444) })
				}
			default:
				fileidtest.RewriteKeepingTimes(t, a, npyOf(t, 64, 2))
				fileidtest.RewriteKeepingTimes(t, p, pb.Bytes())
			}

			d1, err := d0.Rescan()
			require.NoError(t, err)
			defer d1.Release()
			src := source(t, d1, "a")
			assert.False(t, source(t, d0, "a").SameAs(src), "opened again")
			again, _ := src.Versions()
			assert.NotEqual(t, versions, again)
			got, err := src.Read(t.Context())
			require.NoError(t, err)
			want := float32(2)
			if change == "made read-only" {
				want = 1
			}
			requireAll(t, got, 64, want)

			for _, err := range []error{f.CheckUnchanged(), stream.CheckUnchanged()} {
				require.ErrorIs(t, err, dataset.ErrFileChanged)
				var fe *dataset.FileError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, fe.Path+": file changed while being read: its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)", err.Error())
			}
		})
	}
}

// TestIdentityNamesEachAttribute: a file's Identity is its path, device and inode, size,
// modification and change times as a stat says them, and its Version spells them out.
func TestIdentityNamesEachAttribute(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.npy")
	writeNpy(t, a, 4, 1)
	f, err := dataset.Open(a, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	st, err := os.Stat(a)
	require.NoError(t, err)
	id := f.Identity()
	dev, ino := fileid.DevIno(st)
	assert.Equal(t, dataset.Identity{Path: a, Device: dev, Inode: ino, Size: st.Size(), Modified: st.ModTime(), Changed: fileid.ChangeTimeOf(st)}, id)
	assert.Equal(t, fmt.Sprintf("%s\x00%d\x00%d\x00%d\x00%d\x00%d", a, dev, ino, st.Size(), st.ModTime().UnixNano(), fileid.ChangeTimeOf(st).UnixNano()), f.Version())
}

// requireAll requires t to be rows×256 float32 values, every one v.
func requireAll(t *testing.T, x dataset.Tensor, rows int64, v float32) {
	t.Helper()
	require.Equal(t, ndarray.Shape{rows, 256}, x.Shape())
	var got []float32
	require.NoError(t, dataset.Guard(func() error {
		got = append(got, x.Dense.(*ndarray.Dense[float32]).Ravel()...)
		return nil
	}))
	for i, e := range got {
		if e != v {
			t.Fatalf("value %d is %v, not %v", i, e, v)
		}
	}
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

// coarseTimestamps reports whether a write right after a stat of a file can keep its
// modification time (a file system whose timestamps tick: Linux before 6.13's multigrain
// timestamps), where no stat can tell such a write.
func coarseTimestamps(t *testing.T) bool {
	path := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.WriteFile(path, make([]byte, 8), 0o644))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	for i := range 20 {
		before, err := f.Stat()
		require.NoError(t, err)
		_, err = f.WriteAt([]byte{byte(i)}, 0)
		require.NoError(t, err)
		after, err := f.Stat()
		require.NoError(t, err)
		if after.ModTime().Equal(before.ModTime()) {
			return true
		}
	}
	return false
}

// TestRescanComparesTheFile: Rescan keeps a file's Sources only when the path names the file
// it read, unchanged: one renamed over by a file of the same size and modification time is
// read again, and so is one rewritten in place with its size kept right after it was read
// (where the file system's timestamps can tell, see mmap.Mapping.Unchanged).
func TestRescanComparesTheFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		reread bool
	}{
		{"left alone", func(*testing.T, string) {}, false},
		{"renamed over by a file of the same size and modification time", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			tmp := path + ".tmp~"
			require.NoError(t, os.WriteFile(tmp, npyOf(t, 64, 2), 0o644))
			require.NoError(t, os.Chtimes(tmp, st.ModTime(), st.ModTime()))
			require.NoError(t, os.Rename(tmp, path))
		}, true},
		{"rewritten in place with its size kept, within the tick", func(t *testing.T, path string) {
			if coarseTimestamps(t) {
				t.Skip("this file system's timestamps are coarse: a write within their tick cannot be told (the documented limit)")
			}
			require.NoError(t, os.WriteFile(path, npyOf(t, 64, 2), 0o644))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := filepath.Join(dir, "a.npy")
			writeNpy(t, a, 64, 1)
			d, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			tc.change(t, a)
			d2, err := d.Rescan()
			require.NoError(t, err)
			defer d2.Release()
			assert.Equal(t, tc.reread, !source(t, d, "a").SameAs(source(t, d2, "a")))
			got, err := source(t, d2, "a").Read(context.Background())
			require.NoError(t, err)
			want := float32(1)
			if tc.reread {
				want = 2
			}
			requireAll(t, got, 64, want)
		})
	}
}
