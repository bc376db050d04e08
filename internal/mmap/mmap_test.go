package mmap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
)

func TestMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("hello"), 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(m.Bytes()))
	m.Retain()
	assert.Equal(t, int64(2), m.Refs())
	m.Release()
	assert.Equal(t, "hello", string(m.Bytes()), "still mapped")
	m.Release()
	assert.Nil(t, m.Bytes())
	assert.Panics(t, m.Release)

	empty := filepath.Join(t.TempDir(), "e")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	m, err = Open(empty)
	require.NoError(t, err)
	assert.Empty(t, m.Bytes())
	m.Release()

	missing := filepath.Join(t.TempDir(), "missing")
	_, err = Open(missing)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, missing+": no such file or directory", err.Error(), "the path once")

	dir := t.TempDir()
	_, err = Open(dir)
	assert.ErrorIs(t, err, ErrNotRegular)
	assert.Equal(t, dir+": is a directory", err.Error())
}

// TestGuardTruncated: reading the pages of a mapping past the end of a file that shrank is a
// FaultError naming the file and the byte, not a fatal error; bytes still under the file read.
func TestGuardTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	const size = 1 << 20
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i)
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	defer m.Release()
	assert.Equal(t, int64(size), m.Info().Size())
	assert.Equal(t, path, m.Path())
	require.NoError(t, os.Truncate(path, 1000))

	var sum byte
	err = Guard(func() error {
		sum += m.Bytes()[999]
		return nil
	})
	require.NoError(t, err, "the first page is still the file's")
	assert.Equal(t, byte(999%256), sum)

	copied := make([]byte, size)
	err = Guard(func() error {
		copy(copied, m.Bytes()) // memmove faults in the runtime's assembly
		return errors.New("not reached")
	})
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, ErrChanged)
	assert.Equal(t, path, fe.Path)
	assert.GreaterOrEqual(t, fe.Offset, int64(4096), "a page past the new end")
	assert.Less(t, fe.Offset, int64(size))
	assert.Equal(t, fmt.Sprintf("%s: file changed while being read (its mapped bytes end before byte %d)", path, fe.Offset), err.Error())

	// The goroutine's setting is back: a nested Guard, then an unguarded read of live bytes.
	require.NoError(t, Guard(func() error { return Guard(func() error { return nil }) }))
	assert.Equal(t, byte(5), m.Bytes()[5])

	// Concurrent guards each get their own error.
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			errs <- Guard(func() error {
				var s byte
				for _, v := range m.Bytes()[4096:] {
					s += v
				}
				return fmt.Errorf("not reached: %d", s)
			})
		}()
	}
	for range 8 {
		assert.ErrorIs(t, <-errs, ErrChanged)
	}
}

// TestGuardOtherPanics: a panic that is not a fault in a mapping goes on.
func TestGuardOtherPanics(t *testing.T) {
	assert.PanicsWithValue(t, "boom", func() { _ = Guard(func() error { panic("boom") }) })
	assert.Panics(t, func() {
		_ = Guard(func() error {
			var p *int
			return errors.New(fmt.Sprint(*p)) // a nil dereference is no changed file
		})
	})
	want := errors.New("plain")
	assert.Equal(t, want, Guard(func() error { return want }))
}

// TestGuardRecoveredFaults: a dependency that recovers the fault's panic and returns it
// wrapped in an error (arrow-go's IPC writer) still gives a FaultError.
func TestGuardRecoveredFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 1<<16), 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	defer m.Release()
	require.NoError(t, os.Truncate(path, 0))
	err = Guard(func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("a dependency: %w", p.(error))
			}
		}()
		return fmt.Errorf("not reached: %d", m.Bytes()[100])
	})
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, path, fe.Path)
}

// TestAnonymous: anonymous memory is zeroed and writable, and reads as zeros again once
// discarded (on Linux; elsewhere Discard keeps it as it is).
func TestAnonymous(t *testing.T) {
	b, err := Anonymous(1 << 20)
	require.NoError(t, err)
	require.Len(t, b, 1<<20)
	require.Equal(t, make([]byte, 1<<20), b)
	for i := range b {
		b[i] = byte(i)
	}
	Discard(b[4096:8192])
	Discard(nil)
	require.Equal(t, byte(1), b[1])
	if runtime.GOOS == "linux" {
		require.Equal(t, make([]byte, 4096), b[4096:8192], "discarded pages read as zeros")
	}
	b[5000] = 7
	require.Equal(t, byte(7), b[5000], "still writable")
}

// aged sets the modification time of the file at path an hour back, so that a write after it
// gets another whatever the granularity of the platform's file timestamps.
func aged(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
}

// withDescriptorBudget runs f with the descriptor budget set to n.
func withDescriptorBudget(n int64, f func()) {
	was := maxDescriptors
	maxDescriptors = func() int64 { return n }
	defer func() { maxDescriptors = was }()
	f()
}

// TestUnchangedFollowsTheFile: Unchanged looks at the file mapped, not at its path: a file
// written to in place is changed whether its path is then left alone, renamed over or
// removed; one only renamed over, removed or given another link is unchanged, its old
// contents whole under the mapping. A rewrite that keeps the size and sets the modification
// time back (rsync --inplace -t) is told by the change time, and so is a chmod — unless a link
// was then removed (the file renamed over or removed), which stamps the change time by itself:
// the limit Changes documents. Past the descriptor budget, a mapping can only look at its
// path, and a path that names another file, or none, counts as changed.
func TestUnchangedFollowsTheFile(t *testing.T) {
	const size = 64 << 10
	writes := map[string]func(t *testing.T, path string){
		"overwritten": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(bytes.Repeat([]byte{2}, 100), 5000)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
		"rewritten": func(t *testing.T, path string) { // truncated, then written whole again
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{2}, size), 0o644))
		},
		"appended to": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{2})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
		"rewritten keeping its size and times": func(t *testing.T, path string) { // rsync --inplace -t
			fileidtest.RewriteKeepingTimes(t, path, bytes.Repeat([]byte{2}, size))
		},
		"not written to": func(*testing.T, string) {},
	}
	thens := map[string]func(t *testing.T, path string){
		"left alone": func(*testing.T, string) {},
		"made read-only": func(t *testing.T, path string) {
			fileidtest.Stamped(t, path, func() error { return os.Chmod(path, 0o444) })
		},
		"linked": func(t *testing.T, path string) { require.NoError(t, os.Link(path, path+".link")) },
		"renamed over": func(t *testing.T, path string) {
			other := path + ".new"
			require.NoError(t, os.WriteFile(other, bytes.Repeat([]byte{3}, size), 0o644))
			require.NoError(t, os.Rename(other, path))
		},
		"removed": func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) },
	}
	for _, tc := range []struct {
		write, then string
		budget      int64 // -1: the process's
		want        bool
	}{
		{"overwritten", "left alone", -1, false},
		{"overwritten", "renamed over", -1, false},
		{"overwritten", "removed", -1, false},
		{"rewritten", "left alone", -1, false},
		{"rewritten", "renamed over", -1, false},
		{"rewritten", "removed", -1, false},
		{"appended to", "renamed over", -1, false},
		{"not written to", "left alone", -1, true},
		{"not written to", "renamed over", -1, true},
		{"not written to", "removed", -1, true},
		{"not written to", "linked", -1, true},
		{"not written to", "made read-only", -1, false},
		{"rewritten keeping its size and times", "left alone", -1, false},
		{"rewritten keeping its size and times", "linked", -1, true},  // the limit: a link made stamps the change time
		{"rewritten keeping its size and times", "removed", -1, true}, // and so does the last link removed
		{"rewritten keeping its size and times", "renamed over", -1, true},
		{"overwritten", "left alone", 0, false},
		{"rewritten keeping its size and times", "left alone", 0, false},
		{"not written to", "left alone", 0, true},
		{"not written to", "renamed over", 0, false},
		{"not written to", "removed", 0, false},
	} {
		name := tc.write + ", then " + tc.then
		if tc.budget == 0 {
			name = "past the descriptor budget: " + name
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{1}, size), 0o644))
			aged(t, path)
			held := descriptors.Load()
			var m *Mapping
			open := func() {
				var err error
				m, err = Open(path)
				require.NoError(t, err)
			}
			if tc.budget >= 0 {
				withDescriptorBudget(tc.budget, open)
				assert.Nil(t, m.file, "no descriptor kept past the budget")
			} else {
				open()
				assert.NotNil(t, m.file, "the file kept open")
				assert.Equal(t, held+1, descriptors.Load())
			}
			require.True(t, m.Unchanged())
			writes[tc.write](t, path)
			thens[tc.then](t, path)
			assert.Equal(t, tc.want, m.Unchanged())
			if tc.write == "not written to" {
				assert.Equal(t, bytes.Repeat([]byte{1}, size), m.Bytes(), "the old contents whole")
			}
			m.Release()
			assert.Equal(t, held, descriptors.Load(), "the descriptor closed with the mapping")
		})
	}
}

// TestChangesSaysWhatDiffers: Changes names the attributes that differ — the change time
// alone for a rewrite that kept the size and the modification time, all three for an append;
// past the descriptor budget, another file or none at the path — and CheckUnchanged's error
// names the file once, says what differs and wraps ErrChanged.
func TestChangesSaysWhatDiffers(t *testing.T) {
	const size = 8192
	for _, tc := range []struct {
		name   string
		budget int64 // -1: the process's
		change func(t *testing.T, path string)
		want   fileid.Change
		says   string
	}{
		{"rewritten keeping its size and times", -1, func(t *testing.T, path string) {
			fileidtest.RewriteKeepingTimes(t, path, bytes.Repeat([]byte{2}, size))
		}, fileid.ChangeTime, "its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)"},
		{"appended to", -1, func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{2})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, fileid.Size | fileid.ModTime | fileid.ChangeTime, "its size, modification time and change time differ (written to: truncated, rewritten or appended to)"},
		{"renamed over, past the descriptor budget", 0, func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path+".new", make([]byte, size), 0o644))
			require.NoError(t, os.Rename(path+".new", path))
		}, fileid.Inode, "its path names another file now (another device or inode: replaced)"},
		{"removed, past the descriptor budget", 0, func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
		}, fileid.Gone, "its path names no file now (removed, or renamed away)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{1}, size), 0o644))
			aged(t, path)
			var m *Mapping
			var err error
			if tc.budget >= 0 {
				withDescriptorBudget(tc.budget, func() { m, err = Open(path) })
			} else {
				m, err = Open(path)
			}
			require.NoError(t, err)
			defer m.Release()
			require.NoError(t, m.CheckUnchanged())
			tc.change(t, path)
			assert.Equal(t, tc.want, m.Changes())
			err = m.CheckUnchanged()
			require.ErrorIs(t, err, ErrChanged)
			var ce *ChangedError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, path, ce.Path)
			assert.Equal(t, path+": file changed while being read: "+tc.says, err.Error())
		})
	}
}

// coarseTimestamps reports whether a write right after a stat of a file can keep its
// modification time: file systems whose timestamps come from a clock with a tick (Linux
// before 6.13's multigrain timestamps), where Unchanged cannot see such a write.
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

// TestUnchangedWithinATick: a file overwritten in place with its size kept, right after it
// was written and mapped (within one tick of a coarse clock), is changed — where the platform
// can tell (see Unchanged).
func TestUnchangedWithinATick(t *testing.T) {
	if coarseTimestamps(t) {
		t.Skip("this file system's timestamps are coarse: a write within their tick cannot be told (the documented limit)")
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 8192), 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	defer m.Release()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{1}, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.False(t, m.Unchanged())
}

// TestFaultsFollowTheFile: a file truncated in place and then renamed over is the mapped
// file that shrank, for a fault in its pages and for a system call that met them (EFAULT),
// measured through the mapping's descriptor.
func TestFaultsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	const size = 1 << 20
	require.NoError(t, os.WriteFile(path, make([]byte, size), 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	defer m.Release()
	require.NoError(t, os.Truncate(path, 4096))
	require.NoError(t, os.WriteFile(path+".new", make([]byte, 2*size), 0o644))
	require.NoError(t, os.Rename(path+".new", path))

	out, err := os.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	defer out.Close()
	err = Guard(func() error {
		_, err := out.Write(m.Bytes()) // the kernel meets the missing page: EFAULT
		return err
	})
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, path, fe.Path)
	assert.Equal(t, int64(4096), fe.Offset, "the mapped file's size now, not the path's")

	err = Guard(func() error { return fmt.Errorf("not reached: %d", m.Bytes()[size-1]) })
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(size-4096), fe.Offset&^4095, "the faulting page")
	assert.False(t, m.Unchanged())
}

// TestFaultOnAFileWrittenAgain: a fault on a page of a file truncated and written whole again
// before the fault reaches Guard (a dependency recovered it first) is the file's change: the
// file is no longer as it was mapped.
func TestFaultOnAFileWrittenAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	const size = 1 << 20
	require.NoError(t, os.WriteFile(path, make([]byte, size), 0o644))
	aged(t, path)
	m, err := Open(path)
	require.NoError(t, err)
	defer m.Release()
	require.NoError(t, os.Truncate(path, 4096))
	err = Guard(func() error {
		defer func() {
			if p := recover(); p != nil {
				require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{1}, size), 0o644))
				panic(p)
			}
		}()
		return fmt.Errorf("not reached: %d", m.Bytes()[size-1])
	})
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, path, fe.Path)
}
