package flight

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
)

// writeParquet writes a Parquet file at path of rows rows from first on, row groups of about
// rowGroupBytes: an embedding column emb (float32 [rows, 8]) and a ragged column ids (row i
// holds i%3 values).
func writeParquet(t *testing.T, path string, first, rows int64, rowGroupBytes int64) {
	t.Helper()
	emb := ndarray.Must(ndarray.Must(ndarray.Arange(float32(first*8), float32((first+rows)*8), 1)).Reshape(rows, 8))
	splits := []int64{0}
	var vals []int64
	for i := first; i < first+rows; i++ {
		for range i % 3 {
			vals = append(vals, i)
		}
		splits = append(splits, int64(len(vals)))
	}
	ids, err := ragged.FromRowSplits(vals, splits)
	require.NoError(t, err)
	parquettest.WriteTensors(t, path, parquet.WriterOptions{RowGroupBytes: rowGroupBytes, Compression: parquet.Zstd},
		dataset.Tensor{Name: "emb", Kind: dataset.KindFixedShape, Dense: emb},
		dataset.Tensor{Name: "ids", Kind: dataset.KindRagged, Ragged: ids})
}

// TestServeParquetRowGroups serves a Parquet table of two files, each of many row groups,
// larger than the MaxCopySize it is served within: DoGet reads it a row group at a time, so
// it is served whole all the same, to many clients at once, with the values written, and
// FlightInfo describes it before any value is read. Its table flight reads its columns' row
// groups in lockstep.
func TestServeParquetRowGroups(t *testing.T) {
	dir := t.TempDir()
	const half = 3000
	writeParquet(t, filepath.Join(dir, "table", "part-0.parquet"), 0, half, 8<<10)
	writeParquet(t, filepath.Join(dir, "table", "part-1.parquet"), half, half, 8<<10)
	lim := limits.Limits{MaxCopySize: 64 << 10} // the emb column alone is 192 000 bytes

	s := serve(t, Options{MaxMessageBytes: minMessageBytes + messageHeadroom}, "grpc")
	names, err := s.store.AddDir(dir, lim)
	require.NoError(t, err)
	require.Equal(t, []string{"table", "table.emb", "table.ids"}, names)
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()

	info, err := c.Info(ctx, "table.emb")
	require.NoError(t, err)
	assert.Equal(t, dataset.KindFixedShape, info.Kind)
	assert.Equal(t, ndarray.Shape{2 * half, 8}, info.Shape)
	assert.Equal(t, int64(2*half), info.Rows)
	assert.Equal(t, int64(2*half*8*4), info.Bytes)
	ids, err := c.Info(ctx, "table.ids")
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{2 * half, -1}, ids.Shape)
	assert.Equal(t, int64(-1), ids.Bytes, "unknown until read")

	_, err = s.store.Get("table.emb")
	require.ErrorIs(t, err, limits.ErrExceeded, "whole, it is more than MaxCopySize")

	// Batches as they come off the wire, with arrow-go's reader: at least one per row group.
	recs := arrowGoGet(t, s.uri, "table.emb")
	rows := int64(0)
	for _, r := range recs {
		rows += r.NumRows()
		r.Release()
	}
	assert.Equal(t, int64(2*half), rows)
	assert.Greater(t, len(recs), 20)

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emb, err := c.Get(ctx, "table.emb")
			if !assert.NoError(t, err) {
				return
			}
			got := emb.Dense.(*ndarray.Dense[float32])
			assert.Equal(t, ndarray.Shape{2 * half, 8}, got.Shape())
			for i, v := range got.Ravel() {
				if v != float32(i) {
					assert.Equal(t, float32(i), v, "value %d", i)
					return
				}
			}
			r, err := c.Get(ctx, "table.ids")
			if !assert.NoError(t, err) {
				return
			}
			a := r.Ragged.(*ragged.Array[int64])
			assert.Equal(t, int64(2*half), a.NumRows())
			lengths := a.RowLengths()
			for i, n := range lengths {
				if n != int64(i%3) {
					assert.Equal(t, int64(i%3), n, "row %d", i)
					return
				}
			}
			all, err := c.GetTable(ctx, "table")
			if !assert.NoError(t, err) || !assert.Len(t, all, 2) {
				return
			}
			assert.Equal(t, "table.emb", all[0].Name)
			assert.True(t, got.Equal(all[0].Dense.(*ndarray.Dense[float32])), "the table's emb")
			assert.Equal(t, "table.ids", all[1].Name)
			assert.Equal(t, lengths, all[1].Ragged.(*ragged.Array[int64]).RowLengths(), "the table's ids")
		}()
	}
	wg.Wait()

	// ActionList describes it without reading it.
	list, err := c.fc.DoAction(ctx, &arrowflight.Action{Type: ActionList})
	require.NoError(t, err)
	var entries []listEntry
	for {
		r, err := list.Recv()
		if err != nil {
			break
		}
		var e listEntry
		require.NoError(t, json.Unmarshal(r.Body, &e))
		entries = append(entries, e)
	}
	require.Len(t, entries, 3)
	assert.Equal(t, "table", entries[0].Name)
	assert.Equal(t, []int64{2 * half}, entries[0].Shape)
	require.Len(t, entries[0].Columns, 2)
	assert.Equal(t, []int64{2 * half, 8}, entries[0].Columns[0].Shape)
	assert.Equal(t, []int64{2 * half, 8}, entries[1].Shape)

	tab, err := c.Info(ctx, "table")
	require.NoError(t, err)
	assert.Equal(t, KindTable, tab.Kind)
	assert.Equal(t, int64(-1), tab.Bytes, "unknown until ids is read")
	require.Len(t, tab.Columns, 2)
	assert.Equal(t, info.Shape, tab.Columns[0].Shape)
}
