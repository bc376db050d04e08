package bounded

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opaque hides a reader's Len, as a network connection would.
type opaque struct{ r io.Reader }

func (o opaque) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestReadFull(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 50_000) // 500 kB
	for name, r := range map[string]func() io.Reader{
		"bytes.Reader": func() io.Reader { return bytes.NewReader(data) },
		"opaque":       func() io.Reader { return opaque{bytes.NewReader(data)} },
	} {
		got, err := ReadFull(r(), int64(len(data)))
		require.NoError(t, err, name)
		assert.Equal(t, data, got, name)
		got, err = ReadFull(r(), 10)
		require.NoError(t, err)
		assert.Equal(t, data[:10], got)
		got, err = ReadFull(r(), int64(len(data))+1)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, name)
		assert.Equal(t, data, got, name)
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, _ = f.Seek(100, io.SeekStart)
	assert.Equal(t, int64(len(data)-100), remaining(f))
	got, err := ReadFull(f, int64(len(data)-100))
	require.NoError(t, err)
	assert.Equal(t, data[100:], got)
}

func TestHugeClaimAllocatesLittle(t *testing.T) {
	for name, r := range map[string]io.Reader{
		"bytes.Reader": bytes.NewReader([]byte("tiny")),
		"opaque":       opaque{bytes.NewReader([]byte("tiny"))},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := ReadFull(r, 1<<40)
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, name)
		assert.Equal(t, "tiny", string(got))
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%s: a 4-byte input claiming 1 TiB", name)
	}
}
