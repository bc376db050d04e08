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

	missing := filepath.Join(t.TempDir(), "missing")
	_, err = Open(missing)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, missing+": no such file or directory", err.Error(), "the path once")

	dir := t.TempDir()
	_, err = Open(dir)
	assert.ErrorIs(t, err, ErrNotRegular)
	assert.Equal(t, dir+": is a directory", err.Error())
}
