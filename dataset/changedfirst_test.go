package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// TestOpenOfAFileRewrittenUnderItNamesTheChange: a file whose read (Open's, a scan's: mapped)
// fails because the file was rewritten in place under it — its mapped bytes another file's
// now, which do not decode — fails with the change, naming the file and what differs, not as
// the corrupt file it is not; a read that fails on a file unchanged fails with what the read
// says, the file named; so does a read whose context ended.
func TestOpenOfAFileRewrittenUnderItNamesTheChange(t *testing.T) {
	var ts []Tensor
	ts = append(ts, Tensor{Name: "label", Column: "label", Dense: ndarray.Full(int64(2), 4096)})
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	require.NoError(t, Save(path, ts, WriteOptions{ParquetCompression: parquet.Zstd}))
	v1, err := os.ReadFile(path)
	require.NoError(t, err)
	zeros := make([]byte, len(v1))
	pagesZeroed := append([]byte(nil), v1...) // its magic and footer, its pages zeros: no longer decodes
	clear(pagesZeroed[4 : len(v1)/2])
	for _, tc := range []struct {
		name    string
		during  func(t *testing.T) // what happens to the file under the read
		fails   error              // what the read itself fails with, nil: it decodes what it finds
		is, not error
		says    string
	}{
		{"rewritten keeping size and times, then decoded", func(t *testing.T) { fileidtest.RewriteKeepingTimes(t, path, pagesZeroed) }, nil,
			ErrFileChanged, parquet.ErrInvalid, "t.parquet: file changed while being read: its change time differs"},
		{"written to, then decoded", func(t *testing.T) { require.NoError(t, os.WriteFile(path, zeros, 0o644)) }, nil,
			ErrFileChanged, ErrNotTensors, "t.parquet: file changed while being read: its modification time and change time differ"},
		{"unchanged, a decode that fails", func(*testing.T) {}, parquet.ErrInvalid,
			parquet.ErrInvalid, ErrFileChanged, "t.parquet: invalid Parquet file"},
		{"written to, the read's context ended", func(t *testing.T) { require.NoError(t, os.WriteFile(path, zeros, 0o644)) }, context.Canceled,
			context.Canceled, ErrFileChanged, "t.parquet: context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, v1, 0o644))
			f, err := mapped(t.Context(), path, limits.Limits{}, true, func(b []byte) ([]Tensor, error) {
				tc.during(t)
				if tc.fails != nil {
					return nil, tc.fails
				}
				ts, _, err := readNamed(path, b, "t", limits.Limits{})
				return ts, err
			})
			require.Error(t, err)
			assert.Nil(t, f)
			require.ErrorIs(t, err, tc.is)
			assert.False(t, errors.Is(err, tc.not), "%v", err)
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, path, fe.Path)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}
