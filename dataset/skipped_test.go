package dataset_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
)

// truncate cuts the file at path to half its size: a Parquet file without its footer.
func truncate(t *testing.T, path string) {
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, info.Size()/2))
}

// skips returns the Skipped of d as SkippedFiles, each path under d.Path.
func skips(t *testing.T, d *dataset.Dir) []dataset.SkippedFile {
	var out []dataset.SkippedFile
	for _, err := range d.Skipped {
		var sf *dataset.SkippedFile
		require.ErrorAs(t, err, &sf)
		require.ErrorIs(t, err, dataset.ErrUnreadable)
		rel, err := filepath.Rel(d.Path, sf.Path)
		require.NoError(t, err)
		out = append(out, dataset.SkippedFile{Path: filepath.ToSlash(rel), Table: sf.Table})
	}
	return out
}

// sourceRows returns the names of d's Sources and each one's rows.
func sourceRows(d *dataset.Dir) map[string]int64 {
	out := map[string]int64{}
	for _, src := range d.Sources {
		out[src.Name] = src.Rows()
	}
	return out
}

// TestSkippedFilesNameTheirTable: every file ScanDir leaves out is a SkippedFile naming the
// table its tensors would have been part of — a subdirectory's, the directory's table of
// parts, the file's own — and the Sources hold the rows of the parts read only; a part one of
// whose columns does not join is left out whole.
func TestSkippedFilesNameTheirTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func(t *testing.T, dir string)
		skipped []dataset.SkippedFile
		sources map[string]int64
		why     error // what the first skip wraps, besides ErrUnreadable
	}{{
		name: "a truncated part of the directory's table",
		build: func(t *testing.T, dir string) {
			for i := range 4 {
				writeTable(t, filepath.Join(dir, "part-"+string(rune('0'+i))+".parquet"), float32(100*i), 10)
			}
			truncate(t, filepath.Join(dir, "part-2.parquet"))
		},
		skipped: []dataset.SkippedFile{{Path: "part-2.parquet", Table: "train"}},
		sources: map[string]int64{"train.emb": 30, "train.ids": 30},
	}, {
		name: "a truncated part of a subdirectory's table, in a Hive folder",
		build: func(t *testing.T, dir string) {
			writeTable(t, filepath.Join(dir, "events", "day=1", "part-0.parquet"), 0, 5)
			writeTable(t, filepath.Join(dir, "events", "day=2", "part-0.parquet"), 10, 7)
			truncate(t, filepath.Join(dir, "events", "day=2", "part-0.parquet"))
			writeTable(t, filepath.Join(dir, "loose.parquet"), 0, 3)
		},
		skipped: []dataset.SkippedFile{{Path: "events/day=2/part-0.parquet", Table: "events"}},
		sources: map[string]int64{"events.emb": 5, "events.ids": 5, "loose.emb": 3, "loose.ids": 3},
	}, {
		name: "a truncated file of its own, beside the parts",
		build: func(t *testing.T, dir string) {
			writeTable(t, filepath.Join(dir, "part-0.parquet"), 0, 4)
			writeTable(t, filepath.Join(dir, "labels.parquet"), 0, 4)
			truncate(t, filepath.Join(dir, "labels.parquet"))
		},
		skipped: []dataset.SkippedFile{{Path: "labels.parquet", Table: "labels"}},
		sources: map[string]int64{"train.emb": 4, "train.ids": 4},
	}, {
		name: "an empty part: named by its extension a Parquet file, so unreadable, not ignored",
		build: func(t *testing.T, dir string) {
			writeTable(t, filepath.Join(dir, "part-0.parquet"), 0, 4)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "part-1.parquet"), nil, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644))
		},
		skipped: []dataset.SkippedFile{{Path: "part-1.parquet", Table: "train"}},
		sources: map[string]int64{"train.emb": 4, "train.ids": 4},
		why:     dataset.ErrEmpty,
	}, {
		name: "a part whose one column does not join: left out whole",
		build: func(t *testing.T, dir string) {
			writeTable(t, filepath.Join(dir, "part-0.parquet"), 0, 4)
			emb := ndarray.Must(ndarray.Must(ndarray.Arange[float64](0, 8, 1)).Reshape(2, 4)) // float64, not float32
			ids, err := ragged.FromRowSplits([]int64{1, 2}, []int64{0, 1, 2})
			require.NoError(t, err)
			parquettest.WriteTensors(t, filepath.Join(dir, "part-1.parquet"), parquet.WriterOptions{},
				dataset.Tensor{Name: "emb", Kind: dataset.KindFixedShape, Dense: emb}, dataset.Tensor{Name: "ids", Kind: dataset.KindRagged, Ragged: ids})
		},
		skipped: []dataset.SkippedFile{{Path: "part-1.parquet", Table: "train"}},
		sources: map[string]int64{"train.emb": 4, "train.ids": 4},
		why:     ndarray.ErrDType,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train")
			tc.build(t, dir)
			d, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			assert.Equal(t, tc.skipped, skips(t, d))
			assert.Equal(t, tc.sources, sourceRows(d))
			if tc.why != nil {
				assert.ErrorIs(t, d.Skipped[0], tc.why)
			}
			for _, s := range tc.skipped {
				got := d.SkippedOf(s.Table)
				require.Len(t, got, 1)
				assert.Equal(t, filepath.Join(dir, filepath.FromSlash(s.Path)), got[0].Path)
				assert.ErrorContains(t, got[0], got[0].Path, "the error names the file")
			}
			assert.Empty(t, d.SkippedOf("no such table"))
		})
	}
}

// TestDirectoryOfPartsIsNamedAfterItWhateverTheCount: the directory's own part files are one
// table named after the directory however many there are — one, two, three — and whatever
// other files are beside them, which keep their own names; "." is named after the directory
// it is.
func TestDirectoryOfPartsIsNamedAfterItWhateverTheCount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  map[string]int64
	}{
		{"one part", []string{"part-0.parquet"}, map[string]int64{"train.emb": 3, "train.ids": 3}},
		{"two parts", []string{"part-0.parquet", "part-1.parquet"}, map[string]int64{"train.emb": 6, "train.ids": 6}},
		{"three parts", []string{"part-0.parquet", "part-1.parquet", "part-2.parquet"}, map[string]int64{"train.emb": 9, "train.ids": 9}},
		{"a shard", []string{"train-00000-of-00001.parquet"}, map[string]int64{"train.emb": 3, "train.ids": 3}},
		{"a part beside a file of its own", []string{"data_0.parquet", "extra.parquet"},
			map[string]int64{"train.emb": 3, "train.ids": 3, "extra.emb": 3, "extra.ids": 3}},
		{"no part", []string{"a.parquet"}, map[string]int64{"a.emb": 3, "a.ids": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train")
			for _, f := range tc.files {
				writeTable(t, filepath.Join(dir, f), 0, 3)
			}
			d, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			assert.Empty(t, d.Skipped)
			assert.Equal(t, tc.want, sourceRows(d))
		})
	}

	t.Run("the current directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "train")
		writeTable(t, filepath.Join(dir, "part-0.parquet"), 0, 3)
		writeTable(t, filepath.Join(dir, "day=1", "part-0.parquet"), 0, 2)
		t.Chdir(dir)
		d, err := dataset.ScanDir(".", limits.Limits{})
		require.NoError(t, err)
		defer d.Release()
		assert.Equal(t, map[string]int64{"train.emb": 5, "train.ids": 5}, sourceRows(d), "its parts and its Hive folders' are one table")
	})
}

// TestSameBaseNamesAreNeverJoined: two files of one folder whose names differ only in their
// extension are both left out, each naming the other, in the directory's own files and in a
// subdirectory's table alike; files of one name in two folders are parts, as ever.
func TestSameBaseNamesAreNeverJoined(t *testing.T) {
	vector := func(n int64) []dataset.Tensor {
		return []dataset.Tensor{{Name: "x", Dense: ndarray.Must(ndarray.Arange[int64](0, n, 1))}}
	}
	for _, tc := range []struct {
		name    string
		files   map[string][]dataset.Tensor
		skipped []dataset.SkippedFile
		sources map[string]int64
	}{{
		name:    "t.parquet and t.arrow",
		files:   map[string][]dataset.Tensor{"t.parquet": vector(1000), "t.arrow": vector(1000), "u.npy": vector(2)},
		skipped: []dataset.SkippedFile{{Path: "t.arrow", Table: "t"}, {Path: "t.parquet", Table: "t"}},
		sources: map[string]int64{"u": 2},
	}, {
		name:    "x.tfrecord and x.tfrecord.gz",
		files:   map[string][]dataset.Tensor{"x.tfrecord": vector(3), "x.tfrecord.gz": vector(3)},
		skipped: []dataset.SkippedFile{{Path: "x.tfrecord", Table: "x"}, {Path: "x.tfrecord.gz", Table: "x"}},
		sources: map[string]int64{},
	}, {
		name:    "x.npy and x.npz",
		files:   map[string][]dataset.Tensor{"x.npy": vector(3), "x.npz": vector(3)},
		skipped: []dataset.SkippedFile{{Path: "x.npy", Table: "x"}, {Path: "x.npz", Table: "x"}},
		sources: map[string]int64{},
	}, {
		name: "parts of a subdirectory's table",
		files: map[string][]dataset.Tensor{"sub/x.parquet": vector(5), "sub/x.arrow": vector(5), "sub/y.parquet": vector(4),
			"sub/day=1/y.parquet": vector(3)},
		skipped: []dataset.SkippedFile{{Path: "sub/x.arrow", Table: "sub"}, {Path: "sub/x.parquet", Table: "sub"}},
		sources: map[string]int64{"sub.x": 7},
	}, {
		name:    "parts of the directory's table",
		files:   map[string][]dataset.Tensor{"part-0.parquet": vector(5), "part-0.arrow": vector(5), "part-1.parquet": vector(4)},
		skipped: []dataset.SkippedFile{{Path: "part-0.arrow", Table: "train"}, {Path: "part-0.parquet", Table: "train"}},
		sources: map[string]int64{"train.x": 4},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train")
			for name, ts := range tc.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
				require.NoError(t, dataset.Save(filepath.Join(dir, name), ts, dataset.WriteOptions{}))
			}
			d, err := dataset.ScanDir(dir, limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			assert.Equal(t, tc.skipped, skips(t, d))
			assert.Equal(t, tc.sources, sourceRows(d))
			for i, err := range d.Skipped {
				assert.ErrorIs(t, err, dataset.ErrSameBaseName)
				other := filepath.Base(tc.skipped[1-i%2].Path)
				assert.ErrorContains(t, err, other, "names the other file")
			}
		})
	}
}

// TestDirTableFailsOnAnUnreadablePart: Dir.Table of a table a part of which was left out fails
// naming the part; the other tables are whole.
func TestDirTableFailsOnAnUnreadablePart(t *testing.T) {
	dir := t.TempDir()
	writeTable(t, filepath.Join(dir, "a", "part-0.parquet"), 0, 3)
	writeTable(t, filepath.Join(dir, "a", "part-1.parquet"), 0, 3)
	truncate(t, filepath.Join(dir, "a", "part-1.parquet"))
	writeTable(t, filepath.Join(dir, "b", "part-0.parquet"), 0, 3)
	d, err := dataset.OpenDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	_, err = d.Table("a")
	require.ErrorIs(t, err, dataset.ErrUnreadable)
	assert.EqualError(t, err, "table a: unreadable part "+d.Skipped[0].Error())
	var sf *dataset.SkippedFile
	require.True(t, errors.As(err, &sf))
	assert.Equal(t, filepath.Join(dir, "a", "part-1.parquet"), sf.Path)
	b, err := d.Table("b")
	require.NoError(t, err)
	assert.Equal(t, int64(3), b.Rows)
	assert.True(t, slices.Contains(names(d), "a.emb"), "the tensors of the parts read are there")
}
