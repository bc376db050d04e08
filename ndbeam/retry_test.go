package ndbeam

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestRetriedBundleLeavesTheSameOutput plays Write's steps as a runner does when a bundle
// fails and is retried: the first attempt writes part of its batches and fails (its file is
// left, unfinished and never named), the retry writes them all and commits, another bundle
// commits too; the finalize step — run twice, as a retried finalize would — leaves exactly
// the committed parts, named in order, and nothing else. A second job writing to the same
// directory is refused.
func TestRetriedBundleLeavesTheSameOutput(t *testing.T) {
	dir := t.TempDir()
	batch := func(first int64) Batch {
		label := ndarray.FromFunc(func(i []int64) int64 { return first + i[0] }, 10)
		rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "label", Column: "label", Dense: label}})
		require.NoError(t, err)
		return Batch{Record: rec, Source: "in.parquet", First: first}
	}
	ctx := context.Background()
	newFn := func() *writeFn { return &writeFn{Dir: dir, Job: "job1", Format: string(dataset.FormatParquet)} }
	var committed []Part
	commit := func(p Part) { committed = append(committed, p) }

	failed := newFn() // attempt 1 of bundle A: one batch written, then a failure
	require.NoError(t, failed.StartBundle(ctx, commit))
	require.NoError(t, failed.ProcessElement(ctx, batch(0), commit))
	failed.Teardown() // the runner gives up on the instance
	require.Empty(t, committed)

	for _, firsts := range [][]int64{{0, 10}, {20, 30}} { // bundle A retried, bundle B
		fn := newFn()
		require.NoError(t, fn.StartBundle(ctx, commit))
		for _, f := range firsts {
			require.NoError(t, fn.ProcessElement(ctx, batch(f), commit))
		}
		require.NoError(t, fn.FinishBundle(ctx, commit))
	}
	require.Len(t, committed, 2)
	temps, err := filepath.Glob(filepath.Join(dir, tempDir, "job1", "*"))
	require.NoError(t, err)
	assert.Len(t, temps, 3, "the failed attempt's file is there until the finalize step")

	fin := &finalizeFn{Dir: dir, Job: "job1", Prefix: "part", Ext: "parquet"}
	for attempt := range 2 {
		var named []string
		i := 0
		parts := func(p *Part) bool {
			if i == len(committed) {
				return false
			}
			*p = committed[i]
			i++
			return true
		}
		require.NoError(t, fin.ProcessElement(ctx, 0, parts, func(s string) { named = append(named, s) }), "attempt %d", attempt)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Equal(t, []string{"part-00000-of-00002.parquet", "part-00001-of-00002.parquet"}, names, "only the committed parts, attempt %d", attempt)
	}
	tab, err := dataset.Open(filepath.Join(dir, "part-00000-of-00002.parquet"), limits.Limits{})
	require.NoError(t, err)
	col, err := dataset.DenseOf[int64](tab.Tensors[0])
	require.NoError(t, err)
	assert.Equal(t, int64(0), col.Ravel()[0], "part 0 holds the rows from 0")
	assert.Len(t, col.Ravel(), 20, "the retried bundle's rows once")
	tab.Release()

	other := &finalizeFn{Dir: dir, Job: "job2", Prefix: "part", Ext: "parquet"}
	err = other.ProcessElement(ctx, 0, func(p *Part) bool { return false }, func(string) {})
	require.True(t, errors.Is(err, ErrExists), "%v", err)

	// A later run that made as many parts names them as the parts there are named, but its
	// temporary files are still there: those parts are not its own, and it is refused.
	var later []Part
	commitLater := func(p Part) { later = append(later, p) }
	for _, first := range []int64{100, 200} {
		fn := &writeFn{Dir: dir, Job: "job3", Format: string(dataset.FormatParquet)}
		require.NoError(t, fn.StartBundle(ctx, commitLater))
		require.NoError(t, fn.ProcessElement(ctx, batch(first), commitLater))
		require.NoError(t, fn.FinishBundle(ctx, commitLater))
	}
	require.Len(t, later, 2)
	k := 0
	third := &finalizeFn{Dir: dir, Job: "job3", Prefix: "part", Ext: "parquet"}
	err = third.ProcessElement(ctx, 0, func(p *Part) bool {
		if k == len(later) {
			return false
		}
		*p = later[k]
		k++
		return true
	}, func(string) {})
	require.True(t, errors.Is(err, ErrExists), "%v", err)
	tab, err = dataset.Open(filepath.Join(dir, "part-00000-of-00002.parquet"), limits.Limits{})
	require.NoError(t, err)
	col, err = dataset.DenseOf[int64](tab.Tensors[0])
	require.NoError(t, err)
	assert.Equal(t, int64(0), col.Ravel()[0], "the earlier run's part, as it was")
	tab.Release()
}
