package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
)

// writeReplacedDictionaries writes at path an Arrow IPC stream of a label and a category
// (dictionary<int32, utf8>) in two record batches of other dictionaries — [red, green], then
// [blue, red] — as a stream that replaces its dictionary holds them.
func writeReplacedDictionaries(t *testing.T, path string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "cat", Type: typ, Nullable: true}}, nil)
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := dataset.NewTableWriter(f, dataset.FormatArrows, dataset.WriteOptions{Allocator: mem})
	require.NoError(t, err)
	for _, b := range []struct{ dict, idx, labels string }{
		{`["red", "green"]`, `[0, 1, null, 1]`, `[0, 1, 2, 3]`},
		{`["blue", "red"]`, `[0, 1, 0]`, `[4, 5, 6]`},
	} {
		dict, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(b.dict))
		require.NoError(t, err)
		idx, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(b.idx))
		require.NoError(t, err)
		labels, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(b.labels))
		require.NoError(t, err)
		cat := array.NewDictionaryArray(typ, idx, dict)
		rec := array.NewRecord(schema, []arrow.Array{labels, cat}, int64(idx.Len()))
		require.NoError(t, w.WriteRecord(rec))
		for _, a := range []interface{ Release() }{rec, cat, dict, idx, labels} {
			a.Release()
		}
	}
	require.NoError(t, w.Close())
}

// dictionaryBatches returns how many dictionary batch messages the Arrow IPC stream at path
// holds.
func dictionaryBatches(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	r := arrowipc.NewMessageReader(bytes.NewReader(b))
	defer r.Release()
	n := 0
	for {
		m, err := r.Message()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(t, err)
		if m.Type() == arrowipc.MessageDictionaryBatch {
			n++
		}
	}
}

// TestDictionariesThroughTheCLI: a category whose dictionary a stream replaces goes through
// convert to an Arrow IPC file of one dictionary (unified), through serve and get (a table
// flight and the column's own, to a file and a stream) and through batches as a dictionary
// of utf8, every row's value and null the stream's.
func TestDictionariesThroughTheCLI(t *testing.T) {
	served := t.TempDir()
	src := filepath.Join(served, "src.arrows")
	writeReplacedDictionaries(t, src)
	require.Equal(t, 2, dictionaryBatches(t, src), "the input replaces its dictionary")
	const dictType = "dictionary<values=utf8, indices=int32, ordered=false>"
	requireOneDictionary := func(t *testing.T, path string) {
		t.Helper()
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		dicts, _, err := ipc.FileBlocks(b, ipc.BatchOptions{})
		require.NoError(t, err)
		assert.Len(t, dicts, 1, "%s: one dictionary", path)
	}
	dir := t.TempDir()

	out := filepath.Join(dir, "converted.arrow")
	code, _, stderr := runCLI("convert", src, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, dictType, columnTypes(t, out)["cat"])
	requireOneDictionary(t, out)
	requireSameColumns(t, src, out)

	s := startServe(t, served)
	for _, get := range []struct{ name, out string }{{"src", "table.arrow"}, {"src", "table.arrows"}, {"src.cat", "cat.arrow"}} {
		path := filepath.Join(dir, get.out)
		code, _, stderr := runCLI("get", s.uri, get.name, path)
		require.Equal(t, exitOK, code, stderr)
		types := columnTypes(t, path)
		column := "cat"
		if get.name == "src.cat" { // the column's flight, written as a tensor of its name
			require.Len(t, types, 1)
			for name := range types {
				column = name
			}
		}
		assert.Equal(t, dictType, types[column], "%s → %s", get.name, get.out)
		if strings.HasSuffix(path, ".arrow") {
			requireOneDictionary(t, path)
		}
		if get.name == "src" {
			requireSameColumns(t, src, path)
		} else {
			f, err := dataset.Open(path, limits.Limits{})
			require.NoError(t, err)
			cat := f.Tensors[0]
			values, err := dataset.DenseOf[string](cat)
			require.NoError(t, err)
			assert.Equal(t, []string{"red", "green", "", "green", "blue", "red", "blue"}, values.Data())
			assert.Equal(t, []bool{true, true, false, true, true, true, true}, cat.Valid)
			f.Release()
		}
	}

	batched := filepath.Join(dir, "batches.arrows")
	code, _, stderr = runCLI("batches", "--batch-size", "3", src, batched)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, dictType, columnTypes(t, batched)["cat"])
	assert.GreaterOrEqual(t, dictionaryBatches(t, batched), 1, "each batch after its dictionary")
	requireSameColumns(t, src, batched)
}
