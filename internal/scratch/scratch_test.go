package scratch_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
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

// TestFreeGivesRoomBack: a view given back is room again — Size down, the file's blocks under
// it given back to the disk, the next append of no more bytes placed in it — the views around
// it untouched; giving back twice, or bytes that are no view, is ErrNotHeld.
func TestFreeGivesRoomBack(t *testing.T) {
	f := newFile(t, t.TempDir(), 64<<20)
	const n = 1 << 20
	views := make([][]byte, 8)
	for i := range views {
		v, err := f.Append(bytes.Repeat([]byte{byte(i + 1)}, n))
		require.NoError(t, err)
		views[i] = v
	}
	require.Equal(t, int64(8*n), f.Size())
	disk := f.DiskBytes()
	require.GreaterOrEqual(t, disk, int64(8*n), "written: on disk")

	require.NoError(t, f.Free(views[2]))
	require.NoError(t, f.Free(views[3]))
	assert.Equal(t, int64(6*n), f.Size())
	assert.LessOrEqual(t, f.DiskBytes(), disk-2*n, "two MiB of blocks given back")
	require.ErrorIs(t, f.Free(views[2]), scratch.ErrNotHeld, "twice")
	require.ErrorIs(t, f.Free(views[4][1:]), scratch.ErrNotHeld, "a slice of a view")
	require.ErrorIs(t, f.Free(make([]byte, 10)), scratch.ErrNotHeld, "Go memory")
	assert.Equal(t, int64(6*n), f.Size())

	again, err := f.Append(bytes.Repeat([]byte{0xAA}, 2*n)) // the two pieces, joined
	require.NoError(t, err)
	assert.Same(t, &views[2][0], &again[0], "the room given back, reused")
	assert.Equal(t, bytes.Repeat([]byte{0xAA}, 2*n), again)
	for i, v := range views {
		if i != 2 && i != 3 {
			assert.Equal(t, bytes.Repeat([]byte{byte(i + 1)}, n), v, "view %d", i)
		}
	}

	for i, v := range views {
		if i != 2 && i != 3 {
			require.NoError(t, f.Free(v))
		}
	}
	require.NoError(t, f.Free(again))
	assert.Zero(t, f.Size())
	assert.Zero(t, f.DiskBytes(), "every block given back")
	empty, err := f.Append(nil)
	require.NoError(t, err)
	assert.Empty(t, empty)
	require.NoError(t, f.Free(empty), "an empty view holds no room")
}

// TestFullUntilRoomIsFreed: a file whose room is all held refuses an append with ErrFull until
// a view is given back; an append larger than any free piece is ErrFull, though the room free
// in all would hold it.
func TestFullUntilRoomIsFreed(t *testing.T) {
	f := newFile(t, "", 4<<20)
	var views [][]byte
	for range 4 {
		v, err := f.Append(make([]byte, 1<<20))
		require.NoError(t, err)
		views = append(views, v)
	}
	_, err := f.Append([]byte{1})
	require.ErrorIs(t, err, scratch.ErrFull)
	require.NoError(t, f.Free(views[0]))
	require.NoError(t, f.Free(views[2]))
	_, err = f.Append(make([]byte, 1<<20+1))
	require.ErrorIs(t, err, scratch.ErrFull, "two free MiB, not in one piece")
	v, err := f.Append(bytes.Repeat([]byte{7}, 1<<20))
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{7}, 1<<20), v)
	assert.Equal(t, int64(3<<20), f.Size())
}

// TestCloseKeepsHeldViews: a File closed while a view is held keeps that view readable and
// takes no more appends; the last Free unmaps it.
func TestCloseKeepsHeldViews(t *testing.T) {
	f, err := scratch.New("", 1<<20)
	if runtime.GOOS != "linux" {
		require.Error(t, err)
		t.Skip("scratch files are made on Linux only")
	}
	require.NoError(t, err)
	v, err := f.Append([]byte("still here"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, "still here", string(v), "readable after Close")
	_, err = f.Append([]byte{1})
	require.ErrorIs(t, err, scratch.ErrFull, "no append after Close")
	assert.Positive(t, f.DiskBytes())
	require.NoError(t, f.Free(v))
	assert.Zero(t, f.DiskBytes(), "unmapped and closed at the last Free")
	require.ErrorIs(t, f.Free(v), scratch.ErrNotHeld)
	require.NoError(t, f.Close(), "twice")
}

// TestConcurrentAppendsAndFrees: goroutines appending views of their own bytes and giving them
// back in any order never see their bytes changed by another's — no room is held twice — and
// once all is given back the file holds nothing, on disk either.
func TestConcurrentAppendsAndFrees(t *testing.T) {
	f := newFile(t, t.TempDir(), 16<<20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 45))
			var held [][]byte
			for i := range 400 {
				if len(held) > 0 && (r.IntN(3) == 0 || len(held) > 12) {
					k := r.IntN(len(held))
					v := held[k]
					if !assert.Equal(t, bytes.Repeat(v[:1], len(v)), v, "goroutine %d: a view changed under it", g) {
						return
					}
					assert.NoError(t, f.Free(v))
					held = append(held[:k], held[k+1:]...)
					continue
				}
				b := bytes.Repeat([]byte{byte(g*31 + i)}, 1+r.IntN(100_000))
				v, err := f.Append(b)
				if errors.Is(err, scratch.ErrFull) {
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				held = append(held, v)
			}
			for _, v := range held {
				assert.Equal(t, bytes.Repeat(v[:1], len(v)), v, "goroutine %d", g)
				assert.NoError(t, f.Free(v))
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, f.Size())
	assert.Zero(t, f.DiskBytes())
}
