package flight

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/table"
)

// writeVersionedZstd writes version v of a ZSTD Parquet table at path through a rename, as a
// file rewritten is: emb, float32 [rows, 16] whose row i holds v*1e6 + i (pages decompressed),
// and label, the row's index.
func writeVersionedZstd(t *testing.T, path string, v, rows int) {
	emb := ndarray.New[float32](int64(rows), 16)
	label := ndarray.New[int64](int64(rows))
	for i := range int64(rows) {
		label.Set(i, i)
		for k := range int64(16) {
			emb.Set(float32(v*1_000_000)+float32(i), i, k)
		}
	}
	tmp := filepath.Join(filepath.Dir(path), ".new-"+filepath.Base(path))
	require.NoError(t, dataset.Save(tmp, []dataset.Tensor{{Name: "emb", Column: "emb", Dense: emb}, {Name: "label", Column: "label", Dense: label}}, dataset.WriteOptions{}))
	require.NoError(t, os.Rename(tmp, path))
}

// TestPageCacheDropsOldVersions: a served directory's files rewritten four times, each version
// read whole by shuffled mini-batches and takes — ZSTD pages and dictionary columns decoded
// whole, both kept in the server's page cache — read as that version only, and once a Rescan
// serves the next version and no stream holds the old one, the old version's pages are
// dropped: the cache's bytes, and its scratch file's blocks on disk, back to zero, never more
// than one version's after the reads.
func TestPageCacheDropsOldVersions(t *testing.T) {
	cache, err := dataset.NewPageCache(t.TempDir(), 256<<20)
	if runtime.GOOS != "linux" {
		require.Error(t, err)
		t.Skip("page caches are made on Linux only")
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cache.Close()) }) // after the server's shutdown
	dir := t.TempDir()
	const rows = 3000
	write := func(v int) {
		writeVersionedZstd(t, filepath.Join(dir, "z.parquet"), v, rows)
		tmp := filepath.Join(t.TempDir(), "t.parquet")
		writeUserParquetFrom(t, tmp, v*rows, rows, 400) // score, name, cat…: row/4 from v*rows
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "t.parquet")))
	}
	write(0)
	s := serve(t, Options{PageCache: cache}, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})

	var one dataset.PageCacheStats
	for v := range 5 {
		if v > 0 {
			write(v)
			_, err := s.store.Rescan()
			require.NoError(t, err)
			require.Eventually(t, func() bool { return cache.Stats().Bytes == 0 }, 10*time.Second, 5*time.Millisecond,
				"version %d's pages dropped once the next is served: %+v", v-1, cache.Stats())
			st := cache.Stats()
			assert.Zero(t, st.Pages, "version %d", v-1)
			assert.Zero(t, st.DiskBytes, "version %d's blocks given back", v-1)
		}
		o := table.BatchOptions{Size: 128, Shuffle: true, Seed: uint64(v)}
		n := 0
		for b, err := range c.Batches(t.Context(), "z", o) {
			require.NoError(t, err)
			emb, err := b.Values.Column("emb")
			require.NoError(t, err)
			e, err := dataset.DenseOf[float32](emb)
			require.NoError(t, err)
			label, err := b.Values.Column("label")
			require.NoError(t, err)
			l, err := dataset.DenseOf[int64](label)
			require.NoError(t, err)
			for k, r := range l.Ravel() {
				require.Equal(t, float32(v*1_000_000)+float32(r), e.Get(int64(k), 15), "version %d, row %d", v, r)
			}
			n += int(b.Values.Rows)
		}
		require.Equal(t, rows, n)
		n = 0
		for b, err := range c.Batches(t.Context(), "t", o) {
			require.NoError(t, err)
			for _, r := range scoreRows(t, b.Values) {
				require.GreaterOrEqual(t, r, int64(v*rows), "version %d", v)
				require.Less(t, r, int64((v+1)*rows), "version %d", v)
			}
			n += int(b.Values.Rows)
		}
		require.Equal(t, rows, n)
		took, err := c.Take(t.Context(), "z", []int64{rows - 1, 7}, nil)
		require.NoError(t, err)
		e, err := dataset.DenseOf[float32](took[0])
		require.NoError(t, err)
		assert.Equal(t, []float32{float32(v*1_000_000) + rows - 1, float32(v*1_000_000) + 7}, []float32{e.Get(0, 0), e.Get(1, 0)})

		st := cache.Stats()
		require.Positive(t, st.Pages, "version %d kept", v)
		require.Greater(t, st.Hits, one.Hits, "version %d read again from the cache", v)
		if v == 0 {
			one = st
			continue
		}
		assert.LessOrEqual(t, st.Bytes, one.Bytes+one.Bytes/8, "version %d: one version's pages, not %d", v, v+1)
		assert.LessOrEqual(t, st.DiskBytes, one.DiskBytes+one.DiskBytes/8, "version %d on disk", v)
		one.Hits = st.Hits
	}
}
