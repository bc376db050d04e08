package table_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// partBytes is an uncompressed Parquet part of 100 rows: label (first…first+99) and emb,
// every value v — the same size for any v and first.
func partBytes(t *testing.T, first int64, v float32) []byte {
	label := ndarray.New[int64](100)
	for i := range int64(100) {
		label.Set(first+i, i)
	}
	ts := []dataset.Tensor{{Name: "label", Column: "label", Dense: label}, {Name: "emb", Column: "emb", Dense: ndarray.Full(v, 100, 4)}}
	path := filepath.Join(t.TempDir(), "part.parquet")
	require.NoError(t, dataset.Save(path, ts, dataset.WriteOptions{ParquetCompression: parquet.Uncompressed}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// written and touched are the modification times of a part as written and once touched: a
// cursor's fingerprint keeps 5 bits of a hash of the time, which tell these two apart.
var (
	written = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	touched = time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
)

// writeTimedParts writes n parts, part-0.parquet …, into dir, each modified at written, and
// returns their paths.
func writeTimedParts(t *testing.T, dir string, n int) []string {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var paths []string
	for k := range n {
		path := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", k))
		require.NoError(t, os.WriteFile(path, partBytes(t, int64(100*k), 1), 0o644))
		require.NoError(t, os.Chtimes(path, written, written))
		paths = append(paths, path)
	}
	return paths
}

// fingerprinted runs change, a change of the file at path that may be repeated, as many times
// as it takes for the file's change time to have other characters in a cursor's fingerprint
// (table.ChangeTimeChars) than it had: the cursor keeps 10 bits of it, which miss 1 change in
// 1024, and what the test asserts is not left to that chance.
func fingerprinted(t *testing.T, path string, change func() error) {
	was, err := os.Stat(path)
	require.NoError(t, err)
	for {
		fileidtest.Stamped(t, path, change)
		now, err := os.Stat(path)
		require.NoError(t, err)
		if table.ChangeTimeChars(now) != table.ChangeTimeChars(was) {
			return
		}
	}
}

// replaceWithin renames a new file of b over the file at path, made anew until its inode has
// other characters in a cursor's fingerprint (table.InodeChars) than the file's: the low bits
// of an inode, which tell a file from a replacement of it whose number differs by less than
// 1024 — most do, not all.
func replaceWithin(t *testing.T, path string, b []byte) {
	was, err := os.Stat(path)
	require.NoError(t, err)
	var held []string // the numbers tried, held so that the next file gets another
	defer func() {
		for _, p := range held {
			os.Remove(p)
		}
	}()
	for i := 0; ; i++ {
		tmp := fmt.Sprintf("%s.new%d", path, i)
		require.NoError(t, os.WriteFile(tmp, b, 0o644))
		st, err := os.Stat(tmp)
		require.NoError(t, err)
		if table.InodeChars(st) != table.InodeChars(was) {
			require.NoError(t, os.Rename(tmp, path))
			return
		}
		held = append(held, tmp)
	}
}

// cursorAfterFirst returns the cursor after the first batch of a shuffled epoch of the table
// at path.
func cursorAfterFirst(t *testing.T, path string) table.Cursor {
	tab, err := table.Open(path, table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	for b, err := range tab.Batches(t.Context(), table.BatchOptions{Size: 50, Shuffle: true, Seed: 5}) {
		require.NoError(t, err)
		return b.Cursor
	}
	t.Fatal("no batch")
	return table.Cursor{}
}

// resume returns the error of resuming after c on the table at path.
func resume(t *testing.T, path string, c table.Cursor) error {
	tab, err := table.Open(path, table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	o := table.BatchOptions{Size: 50, Shuffle: true, Seed: 5, After: &c}
	_, _, err = tab.Remaining(o)
	require.Error(t, err)
	n := 0
	for b, berr := range tab.Batches(t.Context(), o) {
		require.Nil(t, b.Values, "no batch")
		assert.Equal(t, err.Error(), berr.Error(), "Batches fails as Remaining does")
		n++
	}
	assert.Equal(t, 1, n, "one error")
	return err
}

// TestCursorErrorsNameWhatChanged: a cursor of a table of parts whose part was since touched,
// rewritten keeping its size and modification time (rsync --inplace -t), replaced or deleted
// is ErrTableChanged naming the part and what differs in it — a deleted one by its place
// between the parts still there; a cursor of another table is ErrCursor saying so (not a file
// that changed); so is one whose version or fingerprints were edited.
func TestCursorErrorsNameWhatChanged(t *testing.T) {
	const stamped = "its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)"
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, parts []string) // nil: the cursor is edited instead
		edit   func(c *table.Cursor)
		other  bool   // a cursor of another table, not a changed one
		says   string // in the error, with the parts' directory for DIR
	}{
		{"touched", func(t *testing.T, parts []string) {
			fingerprinted(t, parts[1], func() error { return os.Chtimes(parts[1], touched, touched) })
		}, nil, false, "DIR/part-1.parquet: its modification time and change time differ (written to, or touched)"},
		{"made read-only", func(t *testing.T, parts []string) {
			fingerprinted(t, parts[1], func() error { return os.Chmod(parts[1], 0o444) })
		}, nil, false, "DIR/part-1.parquet: " + stamped},
		{"rewritten keeping its size and times", func(t *testing.T, parts []string) {
			fileidtest.RewriteKeepingTimes(t, parts[2], partBytes(t, 200, 7))
			fingerprinted(t, parts[2], func() error { return os.Chtimes(parts[2], written, written) })
		}, nil, false, "DIR/part-2.parquet: " + stamped},
		{"replaced", func(t *testing.T, parts []string) { replaceWithin(t, parts[2], partBytes(t, 200, 1)) }, nil, false,
			"DIR/part-2.parquet: its path names another file now (another device or inode: replaced)"},
		{"deleted", func(t *testing.T, parts []string) { require.NoError(t, os.Remove(parts[1])) }, nil, false,
			"the file between DIR/part-0.parquet and DIR/part-2.parquet is gone (the 2nd of the 4 files the cursor was made on)"},
		{"another table's", nil, nil, true, "table: invalid cursor: train: the cursor is of another table: none of the 2 files it was made on is one of the table's files (DIR/part-0.parquet, DIR/part-1.parquet, DIR/part-2.parquet, DIR/part-3.parquet): use it with the table it was made on, opened by the path it was made with"},
		{"its version edited", nil, func(c *table.Cursor) { c.Version = "0123456789abcdef" }, true,
			"table: invalid cursor: train: the cursor is not valid for this table: it names the table's files as they are, but its version 0123456789abcdef is not theirs"},
		{"its fingerprints edited", nil, func(c *table.Cursor) { c.Files = "aaaaaaaaa" + c.Files[9:] }, true,
			"table: invalid cursor: train: the cursor is not valid for this table: its version is the table's, but not its files' fingerprints (an edited cursor?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "train")
			parts := writeTimedParts(t, dir, 4)
			c := cursorAfterFirst(t, dir)
			require.Len(t, c.Files, 4*9, "9 characters a file")
			switch {
			case tc.change != nil:
				tc.change(t, parts)
			case tc.edit != nil:
				tc.edit(&c)
			default:
				writeTimedParts(t, filepath.Join(root, "test"), 2)
				c = cursorAfterFirst(t, filepath.Join(root, "test"))
			}
			err := resume(t, dir, c)
			if tc.other {
				require.ErrorIs(t, err, table.ErrCursor)
				assert.NotErrorIs(t, err, table.ErrTableChanged)
				assert.NotErrorIs(t, err, dataset.ErrFileChanged)
				assert.NotContains(t, err.Error(), "changed")
			} else {
				require.ErrorIs(t, err, table.ErrTableChanged)
				require.ErrorIs(t, err, dataset.ErrFileChanged)
				assert.NotContains(t, err.Error(), "while being read", "a change since the cursor, not under a read")
				assert.Contains(t, err.Error(), "train: table: the table changed since the cursor was made: ")
				assert.Contains(t, err.Error(), ": start the epoch again, without the cursor (the cursor's version "+c.Version)
			}
			assert.Contains(t, err.Error(), strings.ReplaceAll(tc.says, "DIR", dir))
		})
	}
}

// TestCheckUnchanged: a table whose part was rewritten in place keeping its size and
// modification time since it was opened (rsync --inplace -t) fails CheckUnchanged, naming the
// part and what differs; one whose part was replaced by a rename does not, and Take reads
// the version it opened, whole.
func TestCheckUnchanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "train")
	parts := writeTimedParts(t, dir, 2)
	tab, err := table.Open(dir, table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	require.NoError(t, tab.CheckUnchanged())

	require.NoError(t, os.WriteFile(parts[0]+".new", partBytes(t, 0, 9), 0o644))
	require.NoError(t, os.Rename(parts[0]+".new", parts[0]))
	require.NoError(t, tab.CheckUnchanged(), "a file replaced stays whole under its mapping")
	got, err := tab.Take(t.Context(), []int64{0, 99}, []string{"emb"})
	require.NoError(t, err)
	emb, err := dataset.DenseOf[float32](got.Columns[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 1, 1, 1, 1, 1, 1, 1}, emb.Ravel(), "the version opened")

	fileidtest.RewriteKeepingTimes(t, parts[1], partBytes(t, 100, 7))
	err = tab.CheckUnchanged()
	require.ErrorIs(t, err, dataset.ErrFileChanged)
	var fe *dataset.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, parts[1], fe.Path)
	assert.Equal(t, parts[1]+": train.label: file changed while being read: its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)", err.Error())
}
