package flight

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// constantParquet is a ZSTD Parquet table t of rows rows — label, every value v — in row
// groups of 64 KiB and pages of 8 KiB: the same size for v 0x0202020202020202 and
// 0x0303030303030303 (each page a run of one byte).
func constantParquet(t *testing.T, rows, v int64) []byte {
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "label", Column: "label", Dense: ndarray.Full(v, rows)}})
	require.NoError(t, err)
	defer rec.Release()
	var b bytes.Buffer
	w, err := parquet.NewWriter(&b, rec.Schema(), parquet.WriterOptions{Compression: parquet.Zstd, RowGroupBytes: 64 << 10, PageBytes: 8 << 10})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return b.Bytes()
}

// labelsOf returns the values of the one tensor of a take of t.label, or of a batch of it.
func labelsOf(t *testing.T, ts []dataset.Tensor) []int64 {
	t.Helper()
	require.Len(t, ts, 1)
	d, err := dataset.DenseOf[int64](ts[0])
	require.NoError(t, err)
	return d.Ravel()
}

// TestPageCacheServesOneVersionOfARewrite: a served ZSTD Parquet file whose pages a take put
// in the page cache is rewritten in place keeping its size and modification time (rsync
// --inplace -t): a take or batches answered from the entry opened before — old pages from the
// cache, the others from the mapping, now the new version's — fails with DataLoss naming the
// file and its change time rather than send rows of both; once the directory is rescanned the
// file is a new version, whose takes and batches hold the new rows whole, none from the old
// version's cached pages.
func TestPageCacheServesOneVersionOfARewrite(t *testing.T) {
	const rows = 1 << 16 // 512 KiB of labels: 8 row groups, 64 pages
	const v1, v2 = 0x0202020202020202, 0x0303030303030303
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	b1, b2 := constantParquet(t, rows, v1), constantParquet(t, rows, v2)
	require.Len(t, b2, len(b1), "the versions are of one size")
	require.NoError(t, os.WriteFile(path, b1, 0o644))
	cache, err := dataset.NewPageCache(t.TempDir(), 64<<20)
	if err != nil {
		t.Skipf("no page cache here: %v", err)
	}
	defer cache.Close()
	s := serve(t, Options{PageCache: cache}, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := t.Context()

	firstHalf := make([]int64, 0, rows/2) // every page of the first half: cached
	for r := int64(0); r < rows/2; r += 97 {
		firstHalf = append(firstHalf, r)
	}
	got, err := c.Take(ctx, "t.label", firstHalf, nil)
	require.NoError(t, err)
	for _, l := range labelsOf(t, got) {
		require.Equal(t, int64(v1), l)
	}
	require.Positive(t, cache.Stats().Pages, "pages kept")

	fileidtest.RewriteKeepingTimes(t, path, b2)
	every := make([]int64, 0, rows/97+1) // both halves: cached pages of the old version, the rest read from the new
	for r := int64(0); r < rows; r += 97 {
		every = append(every, r)
	}
	const says = "t.parquet: t.label: file changed while being read: its change time differs"
	_, err = c.Take(ctx, "t.label", every, nil)
	require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), says)
	for _, err := range c.Batches(ctx, "t.label", table.BatchOptions{Size: rows / 4, Shuffle: true, Seed: 3}) {
		if err != nil {
			require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), says)
			break
		}
	}

	_, err = s.store.Rescan()
	require.NoError(t, err)
	got, err = c.Take(ctx, "t.label", every, nil)
	require.NoError(t, err, "the new version")
	for i, l := range labelsOf(t, got) {
		require.Equal(t, int64(v2), l, "row %d of the new version", every[i])
	}
	n := 0
	for b, err := range c.Batches(ctx, "t.label", table.BatchOptions{Size: rows / 4, Shuffle: true, Seed: 3}) {
		require.NoError(t, err)
		for _, l := range labelsOf(t, b.Values.Columns) {
			require.Equal(t, int64(v2), l)
		}
		n++
	}
	assert.Equal(t, 4, n, "every batch, of the new version")
}

// TestBatchesSendNoRowOfARewrite: a served ZSTD Parquet file whose first half's pages a take
// put in the page cache is rewritten in place keeping its size and modification time (rsync
// --inplace -t), no rescan following it: a stream of mini-batches of the entry opened before
// sends no batch holding a row of the new version — every row it sends is of the version it
// started with (the cached pages), and it fails with DataLoss naming the file before it sends
// one read from the new bytes, as a take of them does. (A batch sent cannot be taken back: a
// client given batches of both versions has trained on them before the error at the stream's
// end tells it.)
func TestBatchesSendNoRowOfARewrite(t *testing.T) {
	const rows = 1 << 16 // 8 row groups, 64 pages
	const v1, v2 = 0x0202020202020202, 0x0303030303030303
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	b1, b2 := constantParquet(t, rows, v1), constantParquet(t, rows, v2)
	require.Len(t, b2, len(b1), "the versions are of one size")
	require.NoError(t, os.WriteFile(path, b1, 0o644))
	cache, err := dataset.NewPageCache(t.TempDir(), 64<<20)
	if err != nil {
		t.Skipf("no page cache here: %v", err)
	}
	defer cache.Close()
	s := serve(t, Options{PageCache: cache}, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := t.Context()
	firstHalf := make([]int64, 0, rows/2)
	for r := int64(0); r < rows/2; r += 97 {
		firstHalf = append(firstHalf, r)
	}
	_, err = c.Take(ctx, "t.label", firstHalf, nil)
	require.NoError(t, err)

	fileidtest.RewriteKeepingTimes(t, path, b2)
	var failed error
	batches := 0
	for b, err := range c.Batches(ctx, "t.label", table.BatchOptions{Size: rows / 4, Shuffle: true, Seed: 3}) {
		if err != nil {
			failed = err
			break
		}
		counts := map[int64]int{}
		for _, l := range labelsOf(t, b.Values.Columns) {
			counts[l]++
		}
		assert.Equal(t, map[int64]int{v1: rows / 4}, counts, "batch %d: its rows' labels (%#x: the new version's)", b.Index, int64(v2))
		batches++
	}
	require.Equal(t, codes.DataLoss, status.Code(failed), "after %d batches: %v", batches, failed)
	assert.Contains(t, status.Convert(failed).Message(), "t.parquet: t.label: file changed while being read: its change time differs")
}

// TestBatchesChangedTableNamesFilesAsServed: a cursor of a served table one of whose files
// was touched since (a new version, rescanned) is refused with FailedPrecondition naming the
// file as the server names its files to clients — by its path under the served directory, as
// every other error of a served file does (fileStatus) — never by the server's own path.
func TestBatchesChangedTableNamesFilesAsServed(t *testing.T) {
	s, path, c := batchesFixture(t, Options{})
	o := table.BatchOptions{Size: 8}
	b, err := first(c.Batches(t.Context(), "t", o))
	require.NoError(t, err)
	fileidtest.Stamped(t, path, func() error { now := time.Now(); return os.Chtimes(path, now, now) }) // touch
	_, err = s.store.Rescan()
	require.NoError(t, err)
	o.After = &b.Cursor
	_, err = first(c.Batches(t.Context(), "t", o))
	require.ErrorIs(t, err, table.ErrTableChanged)
	msg := status.Convert(err).Message()
	assert.Contains(t, msg, "the table changed since the cursor was made: t.parquet: its modification time and change time differ")
	assert.NotContains(t, msg, filepath.Dir(path), "the server's own path")
}
