package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrite: the file appears whole, with the umask's mode; a failed write leaves the old
// file and no temporary; errors name the path once.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	err := Write(path, func(f *os.File) error {
		_, _ = f.WriteString("half")
		return errors.New("boom")
	})
	assert.EqualError(t, err, path+": boom")
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(b))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left")

	require.NoError(t, Write(path, func(f *os.File) error {
		_, err := f.WriteString("new")
		return err
	}))
	b, _ = os.ReadFile(path)
	assert.Equal(t, "new", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.NotEqual(t, os.FileMode(0o600), st.Mode().Perm(), "os.Create's mode, not the temporary's 0600")

	missing := filepath.Join(dir, "no", "such", "dir", "x")
	err = Write(missing, func(*os.File) error { return nil })
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, missing+": no such file or directory", err.Error())
}
