package mmap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
