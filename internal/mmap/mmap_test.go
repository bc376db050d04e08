package mmap

import (
	"os"
	"path/filepath"
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

	_, err = Open(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
