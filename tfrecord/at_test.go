package tfrecord_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/tfrecord"
)

// framed returns an uncompressed TFRecord file of the records and where each starts.
func framed(t *testing.T, records [][]byte) ([]byte, []int64) {
	var buf bytes.Buffer
	w, err := tfrecord.NewWriter(&buf, tfrecord.None)
	require.NoError(t, err)
	var starts []int64
	for _, r := range records {
		starts = append(starts, int64(buf.Len()))
		require.NoError(t, w.WriteRecord(r))
	}
	require.NoError(t, w.Close())
	return buf.Bytes(), starts
}

// TestReadAtAndSync: reading by offset gives every record and where the next starts; Sync
// from any byte finds the first record starting there or after (the file's size past the
// last) — with records of random bytes, empty ones, and a record holding the framing of
// other records, whose inside Sync does not take for the file's.
func TestReadAtAndSync(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inner, _ := framed(t, [][]byte{[]byte("a"), []byte("b")}) // two records' framing, as data
	var records [][]byte
	for i := range 60 {
		r := make([]byte, rng.IntN(300))
		for k := range r {
			r[k] = byte(rng.Uint32())
		}
		if i == 7 {
			r = nil
		}
		if i == 20 {
			r = inner
		}
		records = append(records, r)
	}
	b, starts := framed(t, records)
	size := int64(len(b))
	at := bytes.NewReader(b)
	off := int64(0)
	for i, want := range records {
		got, next, err := tfrecord.ReadAt(at, off, size, 0)
		require.NoError(t, err, "record %d", i)
		assert.Equal(t, len(want), len(got))
		assert.True(t, bytes.Equal(want, got), "record %d", i)
		off = next
	}
	assert.Equal(t, size, off)
	k := 0
	for from := int64(0); from <= size; from++ {
		for k < len(starts) && starts[k] < from {
			k++
		}
		want := size
		if k < len(starts) {
			want = starts[k]
		}
		got, err := tfrecord.Sync(at, from, size, 0)
		require.NoError(t, err)
		require.Equal(t, want, got, "from byte %d", from)
	}
}

// TestReadAtRefuses: a record cut short, too long, or whose CRCs do not verify is ErrInvalid
// (ErrChecksum for the CRCs), never a panic.
func TestReadAtRefuses(t *testing.T) {
	b, _ := framed(t, [][]byte{[]byte("hello"), []byte("world")})
	size := int64(len(b))
	for name, c := range map[string]struct {
		b        []byte
		off, max int64
		checksum bool
	}{
		"cut short":        {b[:len(b)-3], 21, 0, false},
		"too long":         {b, 0, 4, false},
		"length's CRC":     {flip(b, 9), 0, 0, true},
		"data's CRC":       {flip(b, 13), 0, 0, true},
		"inside":           {b, 3, 0, true},
		"past the end":     {b, size, 0, false},
		"before the start": {b, -1, 0, false},
	} {
		_, _, err := tfrecord.ReadAt(bytes.NewReader(c.b), c.off, int64(len(c.b)), c.max)
		require.ErrorIs(t, err, tfrecord.ErrInvalid, name)
		if c.checksum {
			require.ErrorIs(t, err, tfrecord.ErrChecksum, name)
		}
	}
}

func flip(b []byte, at int) []byte {
	c := bytes.Clone(b)
	c[at] ^= 1
	return c
}

// FuzzSync: on any bytes, Sync from any byte past 0 returns a record start that ReadAt reads
// (or the size), and ReadAt anywhere returns a record or an error wrapping ErrInvalid — never a panic.
func FuzzSync(f *testing.F) {
	b, _ := framed(&testing.T{}, [][]byte{[]byte("hello"), nil, []byte("world, a longer record")})
	f.Add(b, uint16(3))
	f.Add(b[5:], uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, from uint16) {
		r, size := bytes.NewReader(b), int64(len(b))
		at, err := tfrecord.Sync(r, int64(from), size, 1<<16)
		require.NoError(t, err)
		require.LessOrEqual(t, at, size)
		if at > 0 && at < size { // (a file's first record starts at 0, whatever its bytes)
			_, next, err := tfrecord.ReadAt(r, at, size, 1<<16)
			require.NoError(t, err, "Sync found a start at %d", at)
			require.LessOrEqual(t, next, size)
		}
		if _, _, err := tfrecord.ReadAt(r, int64(from), size, 1<<16); err != nil {
			require.ErrorIs(t, err, tfrecord.ErrInvalid)
		}
	})
}
