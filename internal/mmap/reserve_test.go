//go:build unix

package mmap

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReserve: a reservation faults everywhere until committed; committed bytes hold what was
// written into them; a read of anything else is a FaultError naming the reservation and the
// byte, wrapping ErrNotFetched, and Decommit makes pages fault again.
func TestReserve(t *testing.T) {
	pg := int64(os.Getpagesize())
	size := 10*pg + 123
	m, err := Reserve("s3://b/k", size)
	require.NoError(t, err)
	defer m.Release()
	require.Len(t, m.Bytes(), int(size))

	read := func(off int64) (byte, error) {
		var v byte
		err := Guard(func() error { v = m.Bytes()[off]; return nil })
		return v, err
	}
	_, err = read(5 * pg)
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	assert.True(t, fe.NotFetched)
	assert.Equal(t, 5*pg, fe.Offset)
	assert.ErrorIs(t, err, ErrNotFetched)
	assert.False(t, errors.Is(err, ErrChanged))
	assert.Contains(t, err.Error(), "s3://b/k: read a byte range that was not fetched")

	b, err := m.Commit(2*pg+10, 3*pg)
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(i)
	}
	for _, off := range []int64{2*pg + 10, 4 * pg, 5*pg + 9} {
		v, err := read(off)
		require.NoError(t, err)
		assert.Equal(t, byte(off-2*pg-10), v)
	}
	v, err := read(2 * pg) // the same page as committed bytes: readable, zero
	require.NoError(t, err)
	assert.Zero(t, v)
	_, err = read(7 * pg)
	assert.ErrorIs(t, err, ErrNotFetched)

	last, err := m.Commit(size-3, 3) // the partial last page
	require.NoError(t, err)
	copy(last, "end")
	assert.Equal(t, "end", string(m.Bytes()[size-3:]))

	// Decommit gives back only whole pages inside the range.
	require.NoError(t, m.Decommit(2*pg+10, 3*pg))
	_, err = read(3 * pg)
	assert.ErrorIs(t, err, ErrNotFetched)
	v, err = read(2*pg + 10) // its page holds bytes outside the range
	require.NoError(t, err)
	assert.Equal(t, byte(0), v)
	require.NoError(t, m.Decommit(10*pg, 123)) // the last page, partial, ends the mapping
	_, err = read(size - 1)
	assert.ErrorIs(t, err, ErrNotFetched)

	_, err = m.Commit(size-2, 3)
	assert.Error(t, err)
	_, err = Reserve("x", MaxReserve+1)
	assert.Error(t, err)
	empty, err := Reserve("e", 0)
	require.NoError(t, err)
	assert.Empty(t, empty.Bytes())
	empty.Release()
}

// TestRegion: a Region grows keeping what it holds, its new bytes zero, and is empty after
// Free.
func TestRegion(t *testing.T) {
	var r Region
	require.Empty(t, r.Bytes())
	b, err := r.Grow(10)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), 10)
	for i := range 10 {
		b[i] = byte(i + 1)
	}
	b, err = r.Grow(64 << 20)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), 64<<20)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, b[:10])
	require.Zero(t, b[64<<20-1])
	b[64<<20-1] = 7
	same, err := r.Grow(100)
	require.NoError(t, err)
	require.Equal(t, len(b), len(same), "no smaller")
	r.Shrink(20)
	require.GreaterOrEqual(t, len(r.Bytes()), 20)
	require.Less(t, len(r.Bytes()), 64<<20)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, r.Bytes()[:10], "kept in place")
	r.Free()
	require.Empty(t, r.Bytes())
}
