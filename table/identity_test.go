package table_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// versionedPart returns the bytes of a part of 100 rows in format ext — label (first…
// first+99) and emb, 100×4 float32s all v — of one size for any v: a Parquet file
// (uncompressed or ZSTD), an Arrow IPC file of one record batch (read whole when opened) or of
// two (a chunk each).
func versionedPart(t *testing.T, ext string, first int64, v float32) []byte {
	label := ndarray.New[int64](100)
	for i := range int64(100) {
		label.Set(first+i, i)
	}
	ts := []dataset.Tensor{{Name: "label", Column: "label", Dense: label}, {Name: "emb", Column: "emb", Dense: ndarray.Full(v, 100, 4)}}
	path := filepath.Join(t.TempDir(), "part"+filepath.Ext(ext))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	rec, err := dataset.Batch(memory.DefaultAllocator, ts)
	require.NoError(t, err)
	defer rec.Release()
	switch ext {
	case "plain.parquet", "zstd.parquet": // row groups of 50 rows
		c := parquet.Uncompressed
		if ext == "zstd.parquet" {
			c = parquet.Zstd
		}
		w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{Compression: c, RowGroupBytes: 1000})
		require.NoError(t, err)
		for _, half := range []arrow.Record{rec.NewSlice(0, 50), rec.NewSlice(50, 100)} {
			require.NoError(t, w.Write(half))
			half.Release()
		}
		require.NoError(t, w.Close())
	case "one.arrow", "two.arrow":
		w, err := dataset.NewTableWriter(f, dataset.FormatArrow, dataset.WriteOptions{})
		require.NoError(t, err)
		halves := []arrow.Record{rec}
		if ext == "two.arrow" {
			halves = []arrow.Record{rec.NewSlice(0, 50), rec.NewSlice(50, 100)}
			defer halves[0].Release()
			defer halves[1].Release()
		}
		for _, h := range halves {
			require.NoError(t, w.WriteRecord(h))
		}
		require.NoError(t, w.Close())
	default:
		t.Fatalf("no part of %s", ext)
	}
	require.NoError(t, f.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// partFormats are the forms of part versionedPart writes.
var partFormats = []string{"plain.parquet", "zstd.parquet", "one.arrow", "two.arrow"}

// embOf returns the values of the emb column of a take or batch.
func embOf(t *testing.T, tab *dataset.Table) []float32 {
	t.Helper()
	for _, c := range tab.Columns {
		if c.Column == "emb" {
			d, err := dataset.DenseOf[float32](c)
			require.NoError(t, err)
			return d.Ravel()
		}
	}
	t.Fatal("no emb column")
	return nil
}

// rowRange returns the table rows lo, lo+1, …, hi-1.
func rowRange(lo, hi int64) []int64 {
	out := make([]int64, 0, hi-lo)
	for r := lo; r < hi; r++ {
		out = append(out, r)
	}
	return out
}

// TestTakeChecksTheFilesItRead: a table of two parts (Parquet uncompressed and ZSTD, its
// page cache on as Open makes it; Arrow IPC files of one and of two record batches), the
// second of which a take read (its pages cached) and which is then rewritten in place keeping
// its size and modification time (rsync --inplace -t): a take of rows of the first part alone
// reads the version opened (only the files read are checked); a take touching the second
// fails with an error naming it and its change time — never rows of the new version, nor of
// both — and so does every batch of a shuffled epoch that reads it, no batch before holding a
// row of the new version.
func TestTakeChecksTheFilesItRead(t *testing.T) {
	for _, ext := range partFormats {
		t.Run(ext, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			base := "part-%d." + filepath.Ext(ext)[1:]
			parts := []string{filepath.Join(dir, fmt.Sprintf(base, 0)), filepath.Join(dir, fmt.Sprintf(base, 1))}
			require.NoError(t, os.WriteFile(parts[0], versionedPart(t, ext, 0, 1), 0o644))
			require.NoError(t, os.WriteFile(parts[1], versionedPart(t, ext, 100, 1), 0o644))
			tab, err := table.Open(dir, table.Options{})
			require.NoError(t, err)
			defer tab.Release()
			require.Equal(t, int64(200), tab.NumRows())
			got, err := tab.Take(t.Context(), rowRange(100, 200), nil)
			require.NoError(t, err)
			for _, v := range embOf(t, got) {
				require.Equal(t, float32(1), v)
			}

			fileidtest.RewriteKeepingTimes(t, parts[1], versionedPart(t, ext, 100, 7))
			got, err = tab.Take(t.Context(), []int64{0, 99, 42}, nil)
			require.NoError(t, err, "the first part is unchanged")
			assert.Equal(t, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, embOf(t, got))

			for _, rows := range [][]int64{{150}, {0, 199}, rowRange(0, 200)} {
				got, err := tab.Take(t.Context(), rows, nil)
				require.ErrorIs(t, err, dataset.ErrFileChanged, "rows %v", rows)
				assert.Nil(t, got)
				var fe *dataset.FileError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, parts[1], fe.Path)
				assert.Contains(t, err.Error(), parts[1]+": train.")
				assert.Contains(t, err.Error(), "file changed while being read: its change time differs (a write that kept its size and modification time")
			}

			var failed error
			batches := 0
			for b, err := range tab.Batches(t.Context(), table.BatchOptions{Size: 20, Shuffle: true, Seed: 3}) {
				if err != nil {
					failed = err
					break
				}
				for _, v := range embOf(t, b.Values) {
					require.Equal(t, float32(1), v, "batch %d: a row of the new version", b.Index)
				}
				batches++
			}
			require.ErrorIs(t, failed, dataset.ErrFileChanged, "after %d batches", batches)
			assert.Less(t, batches, 10, "a batch that reads the second part fails")
		})
	}
}

// TestTakeOfARewriteNamesTheChange: a part overwritten in place by other bytes of its size
// (zeros: nothing of the layout the table was opened with is there) fails a take of its rows
// with the change, naming the file and what differs — not as a corrupt file ("invalid Parquet
// file", an invalid batch), which it is not: it changed.
func TestTakeOfARewriteNamesTheChange(t *testing.T) {
	for _, ext := range partFormats {
		t.Run(ext, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "train")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			part := filepath.Join(dir, "part-0."+filepath.Ext(ext)[1:])
			b := versionedPart(t, ext, 0, 1)
			require.NoError(t, os.WriteFile(part, b, 0o644))
			tab, err := table.Open(dir, table.Options{})
			require.NoError(t, err)
			defer tab.Release()
			_, err = tab.Take(t.Context(), []int64{3}, nil) // readers and their footers kept
			require.NoError(t, err)

			require.NoError(t, os.WriteFile(part, make([]byte, len(b)), 0o644))
			_, err = tab.Take(t.Context(), []int64{3, 60}, nil)
			require.ErrorIs(t, err, dataset.ErrFileChanged)
			assert.False(t, errors.Is(err, parquet.ErrInvalid) || errors.Is(err, ipc.ErrInvalid), "not a corrupt file: %v", err)
			var fe *dataset.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, part, fe.Path)
			assert.Contains(t, err.Error(), "file changed while being read: its modification time and change time differ")
		})
	}
}
