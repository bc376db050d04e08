package fileid_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
)

// TestCompare: two stats of a path differ in what the change did — the change time alone
// for a rewrite that kept the size and the modification time (rsync --inplace -t) and for a
// chmod; the modification and change times for a write of the same size; all three for an
// append; another inode for a file renamed over it; nothing for a stat of the same file again
// or through another link.
func TestCompare(t *testing.T) {
	const size = 4096
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		want   fileid.Change
	}{
		{"nothing", func(*testing.T, string) {}, 0},
		{"rewritten keeping its size and times", func(t *testing.T, path string) {
			fileidtest.RewriteKeepingTimes(t, path, bytes.Repeat([]byte{2}, size))
		}, fileid.ChangeTime},
		{"made read-only", func(t *testing.T, path string) {
			fileidtest.Stamped(t, path, func() error { return os.Chmod(path, 0o444) })
		}, fileid.ChangeTime},
		{"overwritten", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{2}, size), 0o644))
		}, fileid.ModTime | fileid.ChangeTime},
		{"appended to", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{2})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, fileid.Size | fileid.ModTime | fileid.ChangeTime},
		{"renamed over", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path+".new", bytes.Repeat([]byte{1}, size), 0o644))
			require.NoError(t, os.Rename(path+".new", path))
		}, fileid.Inode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{1}, size), 0o644))
			old := time.Now().Add(-time.Hour) // a write after this has another time, whatever the clock's tick
			require.NoError(t, os.Chtimes(path, old, old))
			was, err := os.Stat(path)
			require.NoError(t, err)
			assert.False(t, fileid.ChangeTimeOf(was).IsZero(), "this platform keeps change times")
			tc.change(t, path)
			now, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, fileid.Compare(was, now))
		})
	}
	assert.Equal(t, fileid.Gone, fileid.Compare(nil, nil))
}

// TestLinksOf: a file's links count its names, and drop to 0 once it is removed while open.
func TestLinksOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte{1}, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	stat := func() os.FileInfo {
		st, err := f.Stat()
		require.NoError(t, err)
		return st
	}
	assert.Equal(t, uint64(1), fileid.LinksOf(stat()))
	require.NoError(t, os.Link(path, path+".link"))
	assert.Equal(t, uint64(2), fileid.LinksOf(stat()))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Remove(path+".link"))
	assert.Equal(t, uint64(0), fileid.LinksOf(stat()))
}

// TestChangeSays: a Change reads as a clause naming the attributes that differ, and why they
// may have.
func TestChangeSays(t *testing.T) {
	for c, want := range map[fileid.Change]string{
		0:                                  "nothing changed",
		fileid.Gone:                        "its path names no file now (removed, or renamed away)",
		fileid.Inode | fileid.Size:         "its path names another file now (another device or inode: replaced)",
		fileid.ChangeTime:                  "its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)",
		fileid.ModTime | fileid.ChangeTime: "its modification time and change time differ (written to, or touched)",
		fileid.Size | fileid.ChangeTime:    "its size and change time differ (written to: truncated, rewritten or appended to)",
		fileid.Size | fileid.ModTime | fileid.ChangeTime: "its size, modification time and change time differ (written to: truncated, rewritten or appended to)",
	} {
		assert.Equal(t, want, c.String())
	}
}
