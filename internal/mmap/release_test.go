package mmap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAtRelease: what AtRelease registers runs once, at the last Release, while the bytes are
// still mapped — not at an earlier one, not when cancelled — and at once on a mapping
// released already.
func TestAtRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("hello"), 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	var ran []string
	m.AtRelease(func() { ran = append(ran, "first: "+string(m.Bytes())) })
	cancel := m.AtRelease(func() { ran = append(ran, "cancelled") })
	m.AtRelease(func() { ran = append(ran, "second") })
	cancel()
	cancel()
	m.Retain()
	m.Release()
	assert.Empty(t, ran, "a reference is left")
	m.Release()
	assert.ElementsMatch(t, []string{"first: hello", "second"}, ran)
	m.AtRelease(func() { ran = append(ran, "late") })
	assert.Equal(t, "late", ran[len(ran)-1], "released already: at once")
	assert.Len(t, ran, 3)
}
