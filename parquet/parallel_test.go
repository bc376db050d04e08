package parquet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/parquet"
)

// manyRowGroups is a file of 3000 rows of tensor columns in row groups of about 16 KiB.
func manyRowGroups(t testing.TB) []byte {
	return directFile(t, 3000, parquet.Zstd, 16<<10)
}

// readInOrder reads every row group of b with ReadRowGroups at parallelism p.
func readInOrder(t *testing.T, b []byte, p int, mem memory.Allocator) []arrow.Record {
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Parallelism: p})
	require.NoError(t, err)
	var recs []arrow.Record
	next := 0
	require.NoError(t, r.ReadRowGroups(context.Background(), 0, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		require.Equal(t, next, i, "in order")
		next++
		recs = append(recs, rec)
		return nil
	}))
	require.Equal(t, r.NumRowGroups(), next)
	return recs
}

// TestReadRowGroupsInParallel: at every parallelism, ReadRowGroups gives what ReadRowGroup
// gives, in order, for the written file and every golden file, and leaks nothing.
func TestReadRowGroupsInParallel(t *testing.T) {
	paths, err := filepath.Glob("testdata/arrow-cpp-17-parquet/*.parquet")
	require.NoError(t, err)
	files := map[string][]byte{"written": manyRowGroups(t)}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		files[p] = b
	}
	for name, b := range files {
		want := readInOrder(t, b, 1, memory.DefaultAllocator)
		require.NotEmpty(t, want)
		for _, p := range []int{2, 3, 8} {
			t.Run(fmt.Sprintf("%s/%d", name, p), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				got := readInOrder(t, b, p, mem)
				require.Len(t, got, len(want))
				for i := range got {
					assert.True(t, array.RecordEqual(want[i], got[i]), "row group %d", i)
					got[i].Release()
				}
			})
		}
		for _, w := range want {
			w.Release()
		}
	}
}

// TestReadRowGroupsStops: an error from yield, a cancelled context and a row group that does
// not decode each end the read with that error, releasing every row group decoded ahead.
func TestReadRowGroupsStops(t *testing.T) {
	b := manyRowGroups(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Parallelism: 4})
	require.NoError(t, err)
	require.Greater(t, r.NumRowGroups(), 8)
	stop := errors.New("enough")
	seen := 0
	err = r.ReadRowGroups(context.Background(), 2, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		rec.Release()
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 3, seen)

	ctx, cancel := context.WithCancel(context.Background())
	err = r.ReadRowGroups(ctx, 0, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		rec.Release()
		if i == 1 {
			cancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)

	// A page of the fifth row group made to lie about its size.
	bad := append([]byte(nil), b...)
	r5, err := parquet.NewReader(bad, parquet.ReaderOptions{})
	require.NoError(t, err)
	off := parquet.ColumnChunkOffset(r5, 5, 0)
	bad[off+3] ^= 0x7f // inside the first page header's sizes
	r, err = parquet.NewReader(bad, parquet.ReaderOptions{Allocator: mem, Parallelism: 4})
	require.NoError(t, err)
	var yielded []int
	err = r.ReadRowGroups(context.Background(), 0, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		yielded = append(yielded, i)
		rec.Release()
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row group 5")
	assert.Equal(t, []int{0, 1, 2, 3, 4}, yielded)

	_, err = parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	require.Error(t, r.ReadRowGroups(context.Background(), 3, 2, nil))
	require.Error(t, r.ReadRowGroups(context.Background(), 0, r.NumRowGroups()+1, nil))
}

// TestReadRowGroupsHoldsAtMostParallelism: however slowly yield takes the row groups, no more
// than Parallelism of them are decoded and held at once.
func TestReadRowGroupsHoldsAtMostParallelism(t *testing.T) {
	b := manyRowGroups(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Parallelism: 3})
	require.NoError(t, err)
	var largest int64
	require.NoError(t, r.ReadRowGroups(context.Background(), 0, r.NumRowGroups(), func(i int, rec arrow.Record) error {
		time.Sleep(5 * time.Millisecond) // the workers run ahead as far as they may
		largest = max(largest, int64(mem.CurrentAlloc()))
		rec.Release()
		return nil
	}))
	one := readInOrder(t, b, 1, memory.DefaultAllocator)
	var groupBytes int64
	for _, rec := range one {
		n := int64(0)
		for _, c := range rec.Columns() {
			n += dataBytes(c.Data())
		}
		groupBytes = max(groupBytes, n)
		rec.Release()
	}
	assert.LessOrEqual(t, largest, 3*groupBytes*3/2, "at most 3 row groups held (largest %d bytes)", groupBytes)
	assert.Greater(t, largest, groupBytes, "the workers ran ahead of yield")
	mem.AssertSize(t, 0)
}
