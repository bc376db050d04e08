package scratch_test

import (
	"bytes"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/scratch"
)

func newFile(t *testing.T, dir string, size int64) *scratch.File {
	f, err := scratch.New(dir, size)
	if runtime.GOOS != "linux" {
		require.Error(t, err)
		t.Skip("scratch files are made on Linux only")
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.Close()) })
	return f
}

// TestAppend: what is appended is kept, each view its own bytes, the file leaves no name in
// its directory, and an append past its size is ErrFull, leaving the rest as it was.
func TestAppend(t *testing.T) {
	dir := t.TempDir()
	f := newFile(t, dir, 32<<20)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no name left in the directory")

	var views [][]byte
	var want [][]byte
	for i := range 12 { // across the allocation steps
		b := bytes.Repeat([]byte{byte(i + 1)}, (i+1)*300_000)
		v, err := f.Append(b)
		require.NoError(t, err)
		views, want = append(views, v), append(want, b)
		b[0] = 0xFF // the view is a copy
	}
	for i, v := range views {
		require.Equal(t, len(want[i]), len(v))
		assert.Equal(t, byte(i+1), v[0], "view %d", i)
		assert.True(t, bytes.Equal(want[i][1:], v[1:]), "view %d", i)
	}
	used := f.Size()
	assert.Equal(t, int64(300_000*78), used)
	_, err = f.Append(make([]byte, f.Cap()-used+1))
	require.ErrorIs(t, err, scratch.ErrFull)
	assert.Equal(t, used, f.Size())
	v, err := f.Append(make([]byte, f.Cap()-used)) // exactly what is left
	require.NoError(t, err)
	assert.Len(t, v, int(f.Cap()-used))
	_, err = f.Append([]byte{1})
	require.ErrorIs(t, err, scratch.ErrFull)
}

// TestConcurrentAppends: appends from many goroutines each get bytes of their own.
func TestConcurrentAppends(t *testing.T) {
	f := newFile(t, "", 64<<20)
	var wg sync.WaitGroup
	views := make([][]byte, 64)
	for g := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := f.Append(bytes.Repeat([]byte{byte(g)}, 100_000+g))
			assert.NoError(t, err)
			views[g] = v
		}()
	}
	wg.Wait()
	for g, v := range views {
		require.Len(t, v, 100_000+g)
		assert.Equal(t, bytes.Repeat([]byte{byte(g)}, len(v)), v)
	}
}

// TestNewRefuses: no size, or a directory that is not there, is an error.
func TestNewRefuses(t *testing.T) {
	_, err := scratch.New("", 0)
	require.ErrorIs(t, err, scratch.ErrFull)
	_, err = scratch.New(t.TempDir()+"/missing", 1<<20)
	require.Error(t, err)
	f := newFile(t, "", 1<<20)
	require.NoError(t, f.Close())
	_, err = f.Append([]byte{1})
	require.ErrorIs(t, err, scratch.ErrFull, "after Close")
	assert.Positive(t, scratch.FreeSpace(os.TempDir()))
}
