// Package fileidtest changes files as tools do, for tests of what tells one version of a
// file from another (internal/fileid).
package fileidtest

import (
	"os"
	"testing"
	"time"

	"github.com/ndarrow/ndarrow/internal/fileid"
)

// RewriteKeepingTimes writes b over the file at path in place, from its first byte, and sets
// its access and modification times back to what they were — what `rsync --inplace -t`
// leaves of a file whose new version has its size: only the change time (ctime) tells the new
// bytes from the old. It sets the times again until the change time differs from the one the
// file had before (a file system whose clock ticks stamps a change within a tick of the last
// one with the same time), so the change is always there to be seen. b must be as long as
// the file, or the size tells too.
func RewriteKeepingTimes(t testing.TB, path string, b []byte) {
	t.Helper()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if before.Size() != int64(len(b)) {
		t.Fatalf("%s: %d bytes to write over a file of %d: the size would tell", path, len(b), before.Size())
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	SetTimesBack(t, path, before)
}

// SetTimesBack sets the access and modification times of the file at path to those of was,
// a stat of it before it changed, until its change time differs from was's (see Stamped).
func SetTimesBack(t testing.TB, path string, was os.FileInfo) {
	t.Helper()
	stampedSince(t, path, was, func() error {
		return os.Chtimes(path, was.ModTime(), was.ModTime()) // the access time is no part of an identity
	})
	if now, err := os.Stat(path); err != nil || !now.ModTime().Equal(was.ModTime()) {
		t.Fatalf("%s: its modification time not set back to %v: %v", path, was.ModTime(), err)
	}
}

// Stamped runs change, a change of the file at path's metadata that may be repeated (a chmod,
// os.Chtimes), as many times as it takes for the file's change time to differ from the one it
// had before: a file system whose clock ticks (Linux before 6.13) stamps a change within a
// tick of the last one with the same time, which no stat can tell from no change.
func Stamped(t testing.TB, path string, change func() error) {
	t.Helper()
	was, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	stampedSince(t, path, was, change)
}

// stampedSince runs change until the change time of the file at path differs from was's.
func stampedSince(t testing.TB, path string, was os.FileInfo, change func() error) {
	t.Helper()
	for {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		now, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if c := fileid.ChangeTimeOf(now); c.IsZero() || !c.Equal(fileid.ChangeTimeOf(was)) {
			return // the change is stamped, or the platform keeps no change time
		}
		time.Sleep(time.Millisecond) // the file system's clock has not ticked since was
	}
}
