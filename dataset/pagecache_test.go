package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/scratch"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
)

func newPageCache(t *testing.T, size int64) *PageCache {
	c, err := NewPageCache(t.TempDir(), size)
	if runtime.GOOS != "linux" {
		require.Error(t, err)
		t.Skip("page caches are made on Linux only")
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// TestKeepChunk: a column kept is a copy in the scratch file equal to it — strings with
// nulls, a dictionary, lists of floats, a struct, a slice — given back by Chunk, and the one
// kept first when two keep the same chunk; a full cache gives the column back as it is.
func TestKeepChunk(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	build := func(dt arrow.DataType, json string) arrow.Array {
		arr, _, err := array.FromJSON(mem, dt, strings.NewReader(json))
		require.NoError(t, err)
		return arr
	}
	indices, values := build(arrow.PrimitiveTypes.Int32, `[0, 1, null, 1, 0]`), build(arrow.BinaryTypes.String, `["cat", "dog"]`)
	dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, indices, values)
	indices.Release()
	values.Release()
	structs := build(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}),
		`[{"a": 1, "b": "x"}, null, {"a": null, "b": "zz"}]`)
	lists := build(arrow.ListOf(arrow.PrimitiveTypes.Float32), `[[1, 2], [], null, [3.5]]`)
	columns := []arrow.Array{
		build(arrow.BinaryTypes.String, `["a", null, "bcd", ""]`),
		dict, structs, lists,
		array.NewSlice(lists, 1, 4),
	}
	c := newPageCache(t, 1<<20)
	pages := c.of(&File{})
	for i, arr := range columns {
		kept := pages.KeepChunk(int64(i), arr)
		assert.True(t, array.Equal(arr, kept), "column %d: %s vs %s", i, arr, kept)
		again := pages.KeepChunk(int64(i), arr)
		assert.Same(t, kept.Data(), again.Data(), "column %d kept once", i)
		got, ok := pages.Chunk(int64(i))
		require.True(t, ok)
		assert.True(t, array.Equal(arr, got), "column %d", i)
		got.Release()
		again.Release()
		kept.Release()
	}
	_, ok := pages.Chunk(99)
	assert.False(t, ok)
	assert.Equal(t, int64(len(columns)), c.Stats().Pages)

	small := newPageCache(t, 8)
	full := small.of(&File{}).KeepChunk(0, columns[0])
	assert.Same(t, columns[0], full, "nothing kept: the column itself")
	full.Release()
	assert.Zero(t, small.Stats().Pages)
	for _, arr := range columns {
		arr.Release()
	}
}

// TestPagesDecodedOnce: reads at once that find a page missing decode it once — the others
// wait for its Keep — and a claim ended with nothing kept lets the next read decode it.
func TestPagesDecodedOnce(t *testing.T) {
	c := newPageCache(t, 1<<20)
	pages := c.of(&File{})
	var mu sync.Mutex
	decoded := 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, ok := pages.Values(7)
			if !ok {
				mu.Lock()
				decoded++
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // decoding
				v = pages.Keep(7, []byte("seven"))
			}
			assert.Equal(t, "seven", string(v))
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, decoded)

	_, ok := pages.Values(8)
	require.False(t, ok) // claimed
	released := make(chan bool)
	go func() {
		_, ok := pages.Values(8) // waits for the claim, then claims itself
		released <- ok
	}()
	time.Sleep(10 * time.Millisecond)
	assert.Nil(t, pages.Keep(8, nil), "nothing kept")
	assert.False(t, <-released, "a miss again: its reader decodes it")
	assert.Equal(t, "eight", string(pages.Keep(8, []byte("eight"))))
}

// writeVersion writes version v of a ZSTD Parquet table of rows rows at path — x, float32
// [rows, 8] (pages the direct path decompresses), and s, strings (chunks decoded whole) —
// by a rename, as a file rewritten is, in row groups of about 1000 rows and 4 KiB pages.
func writeVersion(t testing.TB, path string, v, rows int) {
	xs := make([]float32, rows*8)
	for i := range xs {
		xs[i] = float32(v*1_000_000 + i)
	}
	ss := make([]string, rows)
	for i := range ss {
		ss[i] = fmt.Sprintf("v%d-%d", v, i)
	}
	x, err := ndarray.FromSlice(xs, int64(rows), 8)
	require.NoError(t, err)
	s, err := ndarray.FromSlice(ss, int64(rows))
	require.NoError(t, err)
	rec, err := Batch(memory.DefaultAllocator, []Tensor{{Name: "x", Column: "x", Dense: x}, {Name: "s", Column: "s", Dense: s}})
	require.NoError(t, err)
	defer rec.Release()
	tmp := path + ".new"
	f, err := os.Create(tmp)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{Compression: parquet.Zstd, PageBytes: 4096, RowGroupBytes: 1000 * 48})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	require.NoError(t, os.Rename(tmp, path))
}

// readVersion reads rows of every row group of the table at path (scanned as d) through c,
// twice, and checks they are version v's; it asserts (a goroutine may call it) and reports
// whether all was as it should be.
func readVersion(t testing.TB, d *Dir, v int) bool {
	first := int64(0)
	for i, n := range d.Sources[0].ChunkRows() {
		rows := []int64{0, n / 3, n / 2, n - 1}
		for range 2 {
			ts, err := ReadRowsOf(context.Background(), d.Sources, i, rows)
			if !assert.NoError(t, err) {
				return false
			}
			for _, tn := range ts {
				switch tn.Column {
				case "x":
					x, err := DenseOf[float32](tn)
					if !assert.NoError(t, err) {
						return false
					}
					for k, r := range rows {
						if !assert.Equal(t, float32(v*1_000_000+int(first+r)*8+3), x.Get(int64(k), 3), "version %d, row %d", v, first+r) {
							return false
						}
					}
				case "s":
					s, err := DenseOf[string](tn)
					if !assert.NoError(t, err) {
						return false
					}
					for k, r := range rows {
						if !assert.Equal(t, fmt.Sprintf("v%d-%d", v, first+r), s.Get(int64(k)), "version %d", v) {
							return false
						}
					}
				}
			}
		}
		first += n
	}
	return true
}

// scanCached scans the table at path and has its reads use c.
func scanCached(t testing.TB, path string, c *PageCache) *Dir {
	d, err := ScanDir(path, limits.Limits{})
	require.NoError(t, err)
	require.Len(t, d.Sources, 2)
	for _, src := range d.Sources {
		src.UsePageCache(c)
	}
	return d
}

// TestPagesOfAReleasedFileDropped: once a File is released its pages and columns are dropped
// and their room given back — Stats().Bytes and Pages to zero, the scratch file's blocks on
// disk to zero — and the next versions of the file, each as large, are kept whole in a cache
// that holds one and a half of them: the room is reused.
func TestPagesOfAReleasedFileDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	const rows = 6000
	writeVersion(t, path, 0, rows)
	measure := newPageCache(t, 256<<20)
	d := scanCached(t, path, measure)
	readVersion(t, d, 0)
	one := measure.Stats()
	require.Positive(t, one.Pages)
	require.Greater(t, one.Hits, int64(0), "the second reads hit")
	require.GreaterOrEqual(t, one.DiskBytes, one.Bytes, "written to the scratch file")
	d.Release()
	after := measure.Stats()
	assert.Zero(t, after.Bytes, "the released file's pages dropped")
	assert.Zero(t, after.Pages)
	assert.Zero(t, after.DiskBytes, "their blocks given back")

	c := newPageCache(t, one.Bytes+one.Bytes/2)
	for v := 1; v <= 4; v++ {
		writeVersion(t, path, v, rows)
		d := scanCached(t, path, c)
		readVersion(t, d, v)
		st := c.Stats()
		assert.Equal(t, one.Pages, st.Pages, "version %d kept whole", v)
		assert.Equal(t, one.Bytes, st.Bytes, "version %d", v)
		d.Release()
		st = c.Stats()
		assert.Zero(t, st.Bytes, "version %d dropped", v)
		assert.Zero(t, st.Pages, "version %d dropped", v)
		assert.Zero(t, st.DiskBytes, "version %d: no block left", v)
	}
}

// TestFullCacheKeepsAgainOnceRoomIsFreed: a cache too small for a file's pages fills and keeps
// no more; once that file is released, the next file's pages are kept again.
func TestFullCacheKeepsAgainOnceRoomIsFreed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeVersion(t, path, 0, 6000)
	c := newPageCache(t, 64<<10)
	d := scanCached(t, path, c)
	readVersion(t, d, 0)
	full := c.Stats()
	require.Positive(t, full.Pages)
	require.True(t, c.full(), "64 KiB hold few of its pages")
	d.Release()
	assert.False(t, c.full(), "room given back")
	writeVersion(t, path, 1, 6000)
	d = scanCached(t, path, c)
	defer d.Release()
	readVersion(t, d, 1)
	assert.Positive(t, c.Stats().Pages, "kept again")
}

// TestConcurrentReadsDuringReleases: files opened, read by several goroutines at once and
// released while other files of the same cache are being read — the same path opened twice at
// once among them — always read their own values (no room given back while a read uses it,
// none reused under a reader), under -race; once all are released the cache holds nothing.
func TestConcurrentReadsDuringReleases(t *testing.T) {
	dir := t.TempDir()
	paths := make([]string, 3)
	for k := range paths {
		paths[k] = filepath.Join(dir, fmt.Sprintf("t%d.parquet", k))
		writeVersion(t, paths[k], k, 3000)
	}
	c := newPageCache(t, 300<<10) // less than the files open at once: room runs out and comes back
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				k := (g + i) % len(paths)
				d := scanCached(t, paths[k], c)
				var readers sync.WaitGroup
				for range 3 {
					readers.Add(1)
					go func() {
						defer readers.Done()
						readVersion(t, d, k)
					}()
				}
				readers.Wait()
				d.Release()
			}
		}()
	}
	wg.Wait()
	st := c.Stats()
	assert.Zero(t, st.Bytes)
	assert.Zero(t, st.Pages)
	assert.Zero(t, st.DiskBytes)
	assert.Positive(t, st.Hits)
}

// TestKeptColumnOutlivesItsFile: a column kept of a file stays readable past the file's
// release while a reader retains it — the cache's Chunk, or a dictionary that array.Concatenate
// (the gather of a take) shares with it — and past the cache's Close; its room goes back with
// the last release, and nothing of the caller's allocator is left.
func TestKeptColumnOutlivesItsFile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "x.npy")
	var npyBytes bytes.Buffer
	_, err := npy.Write(&npyBytes, ndarray.Full(float32(1), 4, 2))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, npyBytes.Bytes(), 0o644))
	f, err := Open(path, limits.Limits{})
	require.NoError(t, err)

	indices, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(`[0, 1, 1, 0]`))
	require.NoError(t, err)
	values, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["cat", "dog"]`))
	require.NoError(t, err)
	dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, indices, values)
	indices.Release()
	values.Release()

	c, err := NewPageCache(t.TempDir(), 1<<20)
	if runtime.GOOS != "linux" {
		require.Error(t, err)
		t.Skip("page caches are made on Linux only")
	}
	require.NoError(t, err)
	pages := c.of(f)
	kept := pages.KeepChunk(0, dict)
	dict.Release()
	slice := array.NewSlice(kept, 1, 3)
	gathered, err := array.Concatenate([]arrow.Array{slice}, mem)
	slice.Release()
	require.NoError(t, err)
	require.Same(t, kept.Data().Dictionary(), gathered.Data().Dictionary(), "the dictionary shared, not copied")
	v := pages.Keep(7, []byte("page seven"))
	assert.Equal(t, "page seven", string(v))
	require.Equal(t, int64(2), c.Stats().Pages)

	f.Release()
	assert.Zero(t, c.Stats().Pages, "dropped with the file")
	assert.Positive(t, c.Stats().Bytes, "the columns retained keep their room")
	require.NoError(t, c.Close())
	words := func(arr arrow.Array) []string {
		d := arr.(*array.Dictionary)
		var out []string
		for i := range d.Len() {
			out = append(out, d.Dictionary().(*array.String).Value(d.GetValueIndex(i)))
		}
		return out
	}
	assert.Equal(t, []string{"cat", "dog", "dog", "cat"}, words(kept), "readable after the file's release and the cache's Close")
	kept.Release()
	assert.Equal(t, []string{"dog", "dog"}, words(gathered), "the dictionary shared, still readable")
	assert.Positive(t, c.Stats().Bytes)
	gathered.Release()
	assert.Zero(t, c.Stats().Bytes, "all room given back")
	assert.Zero(t, c.Stats().DiskBytes, "and the scratch file closed")
}

// TestDefaultPageCacheSize: the default is 16 GiB, or half the free space if less, or under an
// address-space limit a quarter of what it leaves if less still (said: ErrSmallPageCache);
// less than 64 MiB so is no cache, the error saying why (ErrNoPageCache).
func TestDefaultPageCacheSize(t *testing.T) {
	const gib = int64(1) << 30
	for _, tc := range []struct {
		name               string
		free, left, limit  int64
		limited            bool
		size               int64
		reduced, none, say string
	}{
		{name: "room", free: 100 * gib, size: 16 * gib},
		{name: "half the free space", free: 10 * gib, size: 5 * gib},
		{name: "a limit leaving more than four times", free: 100 * gib, left: 80 * gib, limit: 90 * gib, limited: true, size: 16 * gib},
		{name: "a quarter of what the limit leaves", free: 100 * gib, left: 6 * gib, limit: 8 * gib, limited: true, size: 1536 << 20,
			reduced: "page cache smaller than the 16 GiB default: 1.5 GiB, a quarter of the 6 GiB the address-space limit (ulimit -v, 8 GiB) leaves"},
		{name: "free space and a limit", free: 2 * gib, left: 6 * gib, limit: 8 * gib, limited: true, size: gib},
		{name: "no free space", free: 100 << 20, none: "no page cache: /scratch has 100 MiB free, less than twice the 64 MiB of the least page cache"},
		{name: "a limit leaving too little", free: 100 * gib, left: 200 << 20, limit: 2 * gib, limited: true,
			none: "no page cache: the address-space limit (ulimit -v, 2 GiB) leaves 200 MiB, less than four times the 64 MiB of the least page cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size, reduced, err := defaultPageCacheSize("/scratch", tc.free, tc.left, tc.limit, tc.limited)
			if tc.none != "" {
				require.ErrorIs(t, err, ErrNoPageCache)
				assert.EqualError(t, err, tc.none)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.size, size)
			if tc.reduced == "" {
				assert.NoError(t, reduced)
				return
			}
			require.ErrorIs(t, reduced, ErrSmallPageCache)
			assert.EqualError(t, reduced, tc.reduced)
		})
	}
}

// TestNewDefaultPageCache: here, without a limit, the default cache is made, no smaller than
// the rule says and unreduced; in a directory that cannot be written there is none, and the
// error says why.
func TestNewDefaultPageCache(t *testing.T) {
	dir := t.TempDir()
	c, err := NewDefaultPageCache(dir)
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, ErrNoPageCache)
		t.Skip("page caches are made on Linux only")
	}
	left, limit, limited := scratch.AddressSpaceLeft()
	want, reduced, wantErr := defaultPageCacheSize(dir, FreeSpace(dir), left, limit, limited)
	if wantErr != nil {
		require.ErrorIs(t, err, ErrNoPageCache)
		assert.Equal(t, wantErr.Error(), err.Error())
		return
	}
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, want, c.Stats().Cap)
	assert.Equal(t, reduced, c.Reduced())

	_, err = NewDefaultPageCache(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, ErrNoPageCache)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
