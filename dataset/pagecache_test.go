package dataset

import (
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
