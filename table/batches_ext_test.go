package table_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/table"
)

// collect returns every batch of o, its labels checked to be its rows.
func collect(t *testing.T, tab *table.Table, o table.BatchOptions) []table.Batch {
	var out []table.Batch
	for b, err := range tab.Batches(t.Context(), o) {
		require.NoError(t, err)
		label, err := b.Values.Column("label")
		require.NoError(t, err)
		labels, err := dataset.DenseOf[int64](label)
		require.NoError(t, err)
		require.Equal(t, b.Rows, labels.Ravel(), "batch %d's values are its rows'", b.Index)
		require.Equal(t, b.Index+1, b.Cursor.Next)
		out = append(out, b)
	}
	return out
}

func rowsOf(bs []table.Batch) []int64 {
	var out []int64
	for _, b := range bs {
		out = append(out, b.Rows...)
	}
	return out
}

// TestBatchesCoverEveryRowOnce: shuffled or not, the shards of an epoch together give every
// row once, with its values; their sizes differ by at most a row; the order is the same for
// the same options and another for another epoch; unshuffled, it is the table's.
func TestBatchesCoverEveryRowOnce(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	for _, name := range []string{"zstd.parquet", "batches.arrow"} {
		tab, err := table.Open(paths[name], table.Options{})
		require.NoError(t, err)
		defer tab.Release()
		for _, shuffle := range []bool{false, true} {
			var all []int64
			var sizes []int
			for k := range 3 {
				o := table.BatchOptions{Size: 64, Shuffle: shuffle, Seed: 7, Shard: k, Shards: 3, Columns: []string{"label", "emb"}}
				bs := collect(t, tab, o)
				rows := rowsOf(bs)
				sizes = append(sizes, len(rows))
				all = append(all, rows...)
				n, err := tab.NumBatches(o)
				require.NoError(t, err)
				assert.Equal(t, int64(len(bs)), n)
				for i, b := range bs[:len(bs)-1] {
					assert.Len(t, b.Rows, 64, "batch %d", i)
				}
				assert.Equal(t, rows, rowsOf(collect(t, tab, o)), "the same options, the same batches")
				if shuffle {
					o.Epoch = 1
					assert.NotEqual(t, rows, rowsOf(collect(t, tab, o)), "epoch 1 another order")
				}
			}
			assert.Equal(t, []int{334, 333, 333}, sizes)
			sorted := slices.Clone(all)
			slices.Sort(sorted)
			for i, r := range sorted {
				require.Equal(t, int64(i), r, "%s shuffle %v: every row once", name, shuffle)
			}
			assert.Equal(t, !shuffle, slices.Equal(sorted, all), "%s: in table order unless shuffled", name)
		}
	}
}

// TestBatchesDropLast: with DropLast every shard gives the same number of full batches.
func TestBatchesDropLast(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	for k := range 3 {
		bs := collect(t, tab, table.BatchOptions{Size: 64, Shuffle: true, Seed: 1, Shard: k, Shards: 3, DropLast: true})
		require.Len(t, bs, 5, "shard %d: (1000/3)/64 batches", k)
		for _, b := range bs {
			assert.Len(t, b.Rows, 64)
		}
	}
}

// TestBatchesResume: resuming after a batch's cursor (through its text) gives exactly the
// batches that followed it; a cursor of other options, or of a table since changed, is
// refused, the latter as ErrTableChanged.
func TestBatchesResume(t *testing.T) {
	dir := t.TempDir()
	paths := writeFiles(t, dir)
	path := paths["plain.parquet"]
	tab, err := table.Open(path, table.Options{})
	require.NoError(t, err)
	o := table.BatchOptions{Size: 100, Shuffle: true, Seed: 9, Epoch: 2, Shard: 1, Shards: 2}
	whole := collect(t, tab, o)
	require.Len(t, whole, 5)
	text, err := whole[1].Cursor.MarshalText()
	require.NoError(t, err)
	c, err := table.ParseCursor(string(text))
	require.NoError(t, err)
	o.After = &c
	rest := collect(t, tab, o)
	require.Len(t, rest, 3)
	for i, b := range rest {
		assert.Equal(t, whole[i+2].Rows, b.Rows)
		assert.Equal(t, whole[i+2].Cursor, b.Cursor)
	}
	last := whole[4].Cursor
	o.After = &last
	assert.Empty(t, collect(t, tab, o), "after the last batch: none")

	other := o
	other.After, other.Seed = &c, 10
	for _, err := range tab.Batches(t.Context(), other) {
		require.ErrorIs(t, err, table.ErrCursor)
	}
	tab.Release()

	// The file replaced: the same path, other rows.
	zstd, err := os.ReadFile(paths["zstd.parquet"])
	require.NoError(t, err)
	replaceWithin(t, path, zstd)
	again, err := table.Open(path, table.Options{})
	require.NoError(t, err)
	defer again.Release()
	o.After = &c
	for _, err := range again.Batches(t.Context(), o) {
		require.ErrorIs(t, err, table.ErrTableChanged)
		require.ErrorIs(t, err, dataset.ErrFileChanged)
		assert.Contains(t, err.Error(), filepath.Base(path[:len(path)-len(".parquet")]))
		assert.Contains(t, err.Error(), path+": its path names another file now (another device or inode: replaced)", "the file named, and what differs")
	}
}

// TestBatchesStopEarly: a loop that stops leaves no reader behind: the batch read ahead is
// abandoned before the iteration returns, so the table can be released at once.
func TestBatchesStopEarly(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["zstd.parquet"], table.Options{})
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	var reserved atomic.Int64
	o := table.BatchOptions{Size: 10, Shuffle: true, Reserve: func(context.Context, int64) error {
		reserved.Add(1)
		return nil
	}}
	for b, err := range tab.Batches(t.Context(), o) {
		require.NoError(t, err)
		require.Len(t, b.Rows, 10)
		break
	}
	// Batches has returned: its reader has ended, so nothing more is reserved or read.
	// The table is released at once; a read after it would fail the race detector or panic.
	asked := reserved.Load()
	tab.Release()
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, asked, reserved.Load(), "no batch read after Batches returned")
	// A goroutine that has signalled its end may still be on its way out: it leaves soon.
	// (Polled by hand: assert.Eventually runs its condition on a goroutine of its own.)
	left := runtime.NumGoroutine()
	for end := time.Now().Add(5 * time.Second); left > before && time.Now().Before(end); left = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, left, before, "no reader left")
}

// TestBatchesReserve: Reserve is asked for each batch's rows before it is read, in order, at
// most as many batches ahead of the one used as Readahead holds (at least one); its error
// ends the iteration; breaking off returns once the reading goroutine has ended (no Reserve
// after Batches returns).
func TestBatchesReserve(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	per, _, err := tab.TakeBytes(100, nil) // the columns whose bytes are known: what Readahead counts
	require.NoError(t, err)
	require.Positive(t, per)
	for _, ahead := range []int{1, 3} {
		var mu sync.Mutex
		var asked []int64
		used, most := 0, 0
		o := table.BatchOptions{Size: 100, Readahead: int64(ahead) * per, Reserve: func(_ context.Context, rows int64) error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, rows)
			most = max(most, len(asked)-used)
			return nil
		}}
		if ahead == 1 {
			o.Readahead = 1 // less than a batch: one
		}
		n, err := tab.NumBatches(o)
		require.NoError(t, err)
		require.Greater(t, n, int64(2*ahead+2))
		var sizes []int64
		for b, err := range tab.Batches(t.Context(), o) {
			require.NoError(t, err)
			sizes = append(sizes, int64(len(b.Rows)))
			if b.Index == 0 { // the reader runs ahead while the first batch is held
				time.Sleep(50 * time.Millisecond)
			}
			mu.Lock()
			used++
			mu.Unlock()
		}
		require.Len(t, sizes, int(n))
		assert.Equal(t, sizes, asked)
		// Batches read ahead of the one used, and the one being read.
		assert.LessOrEqual(t, most, ahead+1, "Readahead %d batches", ahead)
		assert.Equal(t, ahead+1, most, "Readahead %d batches: read while the first was held", ahead)

		asked = nil
		for range tab.Batches(t.Context(), o) {
			break
		}
		got := len(asked)
		assert.LessOrEqual(t, got, ahead+2)
		time.Sleep(10 * time.Millisecond)
		assert.Equal(t, got, len(asked), "no Reserve once Batches has returned")
	}
	o := table.BatchOptions{Size: 100}

	stop := errors.New("no memory")
	o.Reserve = func(context.Context, int64) error { return stop }
	for _, err := range tab.Batches(t.Context(), o) {
		require.ErrorIs(t, err, stop)
	}
}

// TestBatchesRemaining: Remaining counts the batches and rows Batches gives, after a cursor
// or not, with DropLast or not, and a batch size past the rows gives one batch of them all.
func TestBatchesRemaining(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	for _, o := range []table.BatchOptions{
		{Size: 64}, {Size: 64, Shard: 1, Shards: 3}, {Size: 64, Shard: 2, Shards: 3, DropLast: true},
		{Size: 1 << 62, Shuffle: true, Seed: 1}, {Size: 1<<63 - 1},
	} {
		bs := collect(t, tab, o)
		n, rows, err := tab.Remaining(o)
		require.NoError(t, err)
		assert.Equal(t, int64(len(bs)), n, "%+v", o)
		assert.Equal(t, int64(len(rowsOf(bs))), rows, "%+v", o)
		if len(bs) > 1 {
			o.After = &bs[0].Cursor
			n, rows, err = tab.Remaining(o)
			require.NoError(t, err)
			assert.Equal(t, int64(len(bs)-1), n)
			assert.Equal(t, int64(len(rowsOf(bs[1:]))), rows)
		}
	}
}

// TestBatchesWithAPageCache: a table whose compressed Parquet pages are kept in a page cache
// gives the batches it gives without one, every column's values the same, decompressing each
// page once: the cache's hits are the pages read again. A cache too small for a page keeps
// none and changes nothing.
func TestBatchesWithAPageCache(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	o := table.BatchOptions{Size: 7, Shuffle: true, Seed: 5}
	plain, err := table.Open(paths["zstd.parquet"], table.Options{NoPageCache: true})
	require.NoError(t, err)
	defer plain.Release()
	want := collect(t, plain, o)
	for _, size := range []int64{64 << 20, 100} {
		cache, err := dataset.NewPageCache(t.TempDir(), size)
		if runtime.GOOS != "linux" {
			require.Error(t, err)
			t.Skip("page caches are made on Linux only")
		}
		require.NoError(t, err)
		cached, err := table.Open(paths["zstd.parquet"], table.Options{PageCache: cache})
		require.NoError(t, err)
		got := collect(t, cached, o)
		require.Len(t, got, len(want))
		mem := memory.NewGoAllocator()
		for i := range want {
			w, err := dataset.Batch(mem, want[i].Values.Columns)
			require.NoError(t, err)
			g, err := dataset.Batch(mem, got[i].Values.Columns)
			require.NoError(t, err)
			assert.True(t, array.RecordEqual(w, g), "batch %d", i)
			w.Release()
			g.Release()
		}
		st := cache.Stats()
		if size > 100 {
			assert.Positive(t, st.Pages, "pages kept")
			assert.Greater(t, st.Hits, st.Pages, "pages read again from the cache")
			assert.LessOrEqual(t, st.Bytes, st.Cap)
		} else {
			assert.Zero(t, st.Pages, "no page fits")
		}
		cached.Release()
		require.NoError(t, cache.Close())
	}
}

// TestOpenKeepsPagesByDefault: table.Open of compressed Parquet makes a page cache of its own,
// as dataset.NewDefaultPageCache makes it, which a shuffled epoch reads pages again from and
// Release closes; Options turn it off, size it, or share one — left open, the table's pages
// dropped — and a table of no Parquet file gets none.
func TestOpenKeepsPagesByDefault(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	o := table.BatchOptions{Size: 7, Shuffle: true, Seed: 5}
	plain, err := table.Open(paths["zstd.parquet"], table.Options{NoPageCache: true})
	require.NoError(t, err)
	defer plain.Release()
	assert.Nil(t, plain.PageCache(), "turned off")
	assert.NoError(t, plain.PageCacheErr)
	want := collect(t, plain, o)

	tab, err := table.Open(paths["zstd.parquet"], table.Options{})
	require.NoError(t, err)
	if runtime.GOOS != "linux" {
		assert.ErrorIs(t, tab.PageCacheErr, dataset.ErrNoPageCache, "no page cache, said")
		tab.Release()
		t.Skip("page caches are made on Linux only")
	}
	c := tab.PageCache()
	require.NotNil(t, c, "made by default: %v", tab.PageCacheErr)
	if tab.PageCacheErr != nil { // under an address-space limit, which the rule says
		assert.ErrorIs(t, tab.PageCacheErr, dataset.ErrSmallPageCache)
	}
	def, err := dataset.NewDefaultPageCache("")
	require.NoError(t, err)
	assert.Equal(t, def.Stats().Cap, c.Stats().Cap, "sized as NewDefaultPageCache sizes")
	require.NoError(t, def.Close())
	got := collect(t, tab, o)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Rows, got[i].Rows, "batch %d", i)
	}
	st := c.Stats()
	assert.Positive(t, st.Pages)
	assert.Greater(t, st.Hits, st.Pages, "pages read again from the cache")
	tab.Release()
	assert.Zero(t, c.Stats().Bytes, "closed with the table: its pages dropped")
	assert.Zero(t, c.Stats().DiskBytes, "and its scratch file given back")
	assert.Nil(t, tab.PageCache())

	sized, err := table.Open(paths["zstd.parquet"], table.Options{PageCacheSize: 3 << 20})
	require.NoError(t, err)
	assert.Equal(t, int64(3<<20), sized.PageCache().Stats().Cap)
	sized.Release()
	_, err = table.Open(paths["zstd.parquet"], table.Options{PageCacheSize: -1})
	require.Error(t, err, "a size that cannot be had fails Open")

	shared, err := dataset.NewPageCache(t.TempDir(), 64<<20)
	require.NoError(t, err)
	defer shared.Close()
	a, err := table.Open(paths["zstd.parquet"], table.Options{PageCache: shared})
	require.NoError(t, err)
	assert.Same(t, shared, a.PageCache())
	collect(t, a, o)
	require.Positive(t, shared.Stats().Bytes)
	a.Release()
	assert.Zero(t, shared.Stats().Bytes, "the released table's pages dropped")
	b, err := table.Open(paths["zstd.parquet"], table.Options{PageCache: shared})
	require.NoError(t, err)
	collect(t, b, o)
	assert.Positive(t, shared.Stats().Pages, "still open: the caller's")
	b.Release()

	arrow, err := table.Open(paths["batches.arrow"], table.Options{})
	require.NoError(t, err)
	defer arrow.Release()
	assert.Nil(t, arrow.PageCache(), "no Parquet file: no page cache")
	assert.NoError(t, arrow.PageCacheErr)
}

// TestOpenUnderAnAddressSpaceLimit: under ulimit -v (RLIMIT_AS), the page cache table.Open
// makes takes a quarter of the address space the limit leaves and PageCacheErr says so; where
// that is too little there is none, and PageCacheErr says why; the batches are the same. In
// child processes: the limit is the process's. Not under the race detector, whose shadow
// memory needs the address space a limit takes away.
func TestOpenUnderAnAddressSpaceLimit(t *testing.T) {
	if runtime.GOOS != "linux" || childtest.RaceEnabled {
		t.Skip("needs an address-space limit: Linux, without the race detector")
	}
	childtest.Run(t, "TestOpenUnderAnAddressSpaceLimitSmallerChild", 2<<30)
	childtest.Run(t, "TestOpenUnderAnAddressSpaceLimitNoneChild", 200<<20)
}

func TestOpenUnderAnAddressSpaceLimitSmallerChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestOpenUnderAnAddressSpaceLimit")
	}
	tab := openUnderLimit(t)
	defer tab.Release()
	require.ErrorIs(t, tab.PageCacheErr, dataset.ErrSmallPageCache)
	assert.Contains(t, tab.PageCacheErr.Error(), "ulimit -v")
	require.NotNil(t, tab.PageCache())
	assert.Less(t, tab.PageCache().Stats().Cap, int64(1<<30), "a quarter of less than 2 GiB")
	assert.Positive(t, tab.PageCache().Stats().Pages, "pages kept")
	t.Logf("child: %v", tab.PageCacheErr)
}

func TestOpenUnderAnAddressSpaceLimitNoneChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestOpenUnderAnAddressSpaceLimit")
	}
	tab := openUnderLimit(t)
	defer tab.Release()
	require.ErrorIs(t, tab.PageCacheErr, dataset.ErrNoPageCache)
	assert.Contains(t, tab.PageCacheErr.Error(), "the address-space limit (ulimit -v")
	assert.Nil(t, tab.PageCache())
	t.Logf("child: %v", tab.PageCacheErr)
}

// openUnderLimit opens a ZSTD Parquet table with Open's defaults and checks its shuffled
// batches are those of the table without a page cache.
func openUnderLimit(t *testing.T) *table.Table {
	paths := writeFiles(t, t.TempDir())
	o := table.BatchOptions{Size: 7, Shuffle: true, Seed: 5}
	plain, err := table.Open(paths["zstd.parquet"], table.Options{NoPageCache: true})
	require.NoError(t, err)
	defer plain.Release()
	want := collect(t, plain, o)
	tab, err := table.Open(paths["zstd.parquet"], table.Options{})
	require.NoError(t, err)
	got := collect(t, tab, o)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Rows, got[i].Rows, "batch %d", i)
	}
	return tab
}

// TestShardBounds: the shards Batches takes are those a cursor's text holds, checked in one
// place: a shard outside them is refused by ParseShard, NumBatches and Batches alike, naming
// the bound; the last shard count inside gives cursors that ParseCursor reads back.
func TestShardBounds(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	for _, tc := range []struct {
		text          string
		shard, shards int
		ok            bool
	}{
		{"0/1", 0, 1, true},
		{"3/4", 3, 4, true},
		{"0/2147483648", 0, table.MaxShards, true},
		{"2147483647/2147483648", table.MaxShards - 1, table.MaxShards, true},
		{"0/2147483649", 0, table.MaxShards + 1, false},
		{"4/4", 4, 4, false},
		{"-1/4", -1, 4, false},
		{"0/0", 0, 0, false},
	} {
		t.Run(tc.text, func(t *testing.T) {
			k, n, err := table.ParseShard(tc.text)
			o := table.BatchOptions{Size: 1, Shard: tc.shard, Shards: tc.shards}
			_, numErr := tab.NumBatches(o)
			if !tc.ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "shards from 1 to 2147483648")
				if tc.shards > 0 { // Shards 0 is 1 in BatchOptions; "0/0" is no K/N
					require.Error(t, numErr)
					assert.Equal(t, err.Error(), numErr.Error(), "one check, one message")
					for _, err := range tab.Batches(t.Context(), o) {
						require.Equal(t, numErr, err)
					}
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []int{tc.shard, tc.shards}, []int{k, n})
			require.NoError(t, numErr)
			for b, err := range tab.Batches(t.Context(), o) {
				require.NoError(t, err)
				back, err := table.ParseCursor(b.Cursor.String())
				require.NoError(t, err, "a cursor Batches writes reads back")
				assert.Equal(t, b.Cursor, back)
			}
		})
	}
	for _, bad := range []string{"", "1", "a/b", "1/2/3", "0/99999999999999999999"} {
		_, _, err := table.ParseShard(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "is not K/N: shard K (from 0) of N", bad)
	}
}

// TestFinishedEpoch: the cursor of an epoch's last batch resumes to nothing — no batch, no
// error, Remaining none — so a loop that resumes from its last checkpoint goes on with the
// next epoch.
func TestFinishedEpoch(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	o := table.BatchOptions{Size: 300, Shuffle: true, Seed: 4, Epoch: 1, Shard: 0, Shards: 2, DropLast: true}
	bs := collect(t, tab, o)
	require.Len(t, bs, 1, "(1000/2)/300 batches")
	o.After = &bs[0].Cursor
	n := 0
	for _, err := range tab.Batches(t.Context(), o) {
		require.NoError(t, err)
		n++
	}
	assert.Zero(t, n, "no batch after the last")
	batches, rows, err := tab.Remaining(o)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 0}, [2]int64{batches, rows})
}

// TestCursorOfOtherOptions: a cursor used with options other than its own is refused with
// ErrCursor, naming each option that differs and what to do.
func TestCursorOfOtherOptions(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	made := table.BatchOptions{Size: 100, Shuffle: true, Seed: 9, Epoch: 2, Shard: 0, Shards: 2}
	b, err := firstBatch(tab.Batches(t.Context(), made))
	require.NoError(t, err)
	for _, tc := range []struct {
		change func(o *table.BatchOptions)
		want   string
	}{
		{func(o *table.BatchOptions) { o.Shard = 1 }, "the cursor's shard 0 of 2, not 1 of 2"},
		{func(o *table.BatchOptions) { o.Epoch = 3 }, "the cursor's epoch 2, not 3"},
		{func(o *table.BatchOptions) { o.Seed, o.Size = 8, 50 }, "the cursor's seed 9, not 8; batch size 100, not 50"},
		{func(o *table.BatchOptions) { o.Shuffle, o.Seed = false, 0 }, "the cursor's shuffle true, not false; seed 9, not 0"},
		{func(o *table.BatchOptions) { o.DropLast = true }, "the cursor's drop last false, not true"},
	} {
		o := made
		tc.change(&o)
		o.After = &b.Cursor
		_, err := firstBatch(tab.Batches(t.Context(), o))
		require.ErrorIs(t, err, table.ErrCursor)
		assert.Contains(t, err.Error(), "is for other options than these: "+tc.want+" (resume with the options it was made with)")
	}
}

// firstBatch returns the first batch of seq, or its error.
func firstBatch(seq func(func(table.Batch, error) bool)) (table.Batch, error) {
	for b, err := range seq {
		return b, err
	}
	return table.Batch{}, errors.New("no batch")
}
