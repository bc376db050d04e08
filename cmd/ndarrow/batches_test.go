package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/ndarray"
)

// streamLabels returns the label column of each record batch of the Arrow IPC stream at path.
func streamLabels(t *testing.T, path string) [][]int64 {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := arrowipc.NewReader(f)
	require.NoError(t, err)
	defer r.Release()
	var out [][]int64
	for r.Next() {
		rec := r.Record()
		k := rec.Schema().FieldIndices("label")
		require.Len(t, k, 1)
		out = append(out, slices.Clone(rec.Column(k[0]).(*array.Int64).Int64Values()))
	}
	require.NoError(t, r.Err())
	return out
}

// writeLabelled writes a Parquet table of rows rows: label (the row) and emb (2 floats).
func writeLabelled(t *testing.T, path string, rows int64) {
	label := ndarray.New[int64](rows)
	emb := ndarray.New[float32](rows, 2)
	for i := range rows {
		label.Set(i, i)
		emb.Set(float32(i), i, 1)
	}
	require.NoError(t, dataset.Save(path, []dataset.Tensor{{Name: "label", Column: "label", Dense: label}, {Name: "emb", Column: "emb", Dense: emb}}, dataset.WriteOptions{}))
}

// TestBatchesCommand: two shards of a shuffled epoch give every row once, in batches of the
// size asked but the last; a cursor from --cursors resumes with exactly the batches after it;
// a changed table refuses it; options that do not hold are usage errors.
func TestBatchesCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet")
	writeLabelled(t, in, 100)
	var all []int64
	var shard0 [][]int64
	for k := range 2 {
		out := filepath.Join(dir, "b.arrows")
		cursors := filepath.Join(dir, "cursors.txt")
		code, stdout, stderr := runCLI("batches", "--batch-size", "16", "--shuffle", "3", "--epoch", "1", "--shard", []string{"0/2", "1/2"}[k], "--cursors", cursors, in, out)
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, stdout)
		assert.Empty(t, stderr)
		got := streamLabels(t, out)
		require.Len(t, got, 4, "50 rows in batches of 16")
		for i, b := range got {
			if i < 3 {
				assert.Len(t, b, 16)
			}
			all = append(all, b...)
		}
		lines, err := os.ReadFile(cursors)
		require.NoError(t, err)
		cs := strings.Fields(string(lines))
		require.Len(t, cs, 4, "a cursor a batch")
		if k == 0 {
			shard0 = got
			code, _, stderr = runCLI("batches", "--batch-size", "16", "--shuffle", "3", "--epoch", "1", "--shard", "0/2", "--after", cs[1], in, out)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, shard0[2:], streamLabels(t, out), "resumed after batch 1")
		}
	}
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	for i, r := range sorted {
		require.Equal(t, int64(i), r, "every row once")
	}
	assert.False(t, slices.IsSorted(all), "shuffled")

	code, _, stderr := runCLI("batches", "--batch-size", "16", "--drop-last", "--shard", "1/3", in, "-")
	require.Equal(t, 0, code, stderr)

	// The table rewritten: a cursor of the old one is refused, naming the change.
	cursor := "c2.0000000000000000.1.3.1.16.0.2.0.2"
	code, _, stderr = runCLI("batches", "--batch-size", "16", "--shuffle", "3", "--epoch", "1", "--shard", "0/2", "--after", cursor, in, filepath.Join(dir, "x.arrows"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "the table changed since the cursor was made")
	assert.NoFileExists(t, filepath.Join(dir, "x.arrows"))

	for _, args := range [][]string{
		{in, filepath.Join(dir, "x.arrows")},
		{"--batch-size", "0", in, filepath.Join(dir, "x.arrows")},
		{"--batch-size", "4", "--shard", "2/2", in, filepath.Join(dir, "x.arrows")},
		{"--batch-size", "4", "--after", "nope", in, filepath.Join(dir, "x.arrows")},
		{"--batch-size", "4", in, filepath.Join(dir, "x.parquet")},
		{"--batch-size", "4", "--readahead", "lots", in, filepath.Join(dir, "x.arrows")},
		{"--batch-size", "4", "--page-cache", "-1", in, filepath.Join(dir, "x.arrows")},
		{"--batch-size", "4", "--page-cache", "2PiB", in, filepath.Join(dir, "x.arrows")},
	} {
		code, _, _ := runCLI(append([]string{"batches"}, args...)...)
		assert.Equal(t, 2, code, "%v", args)
	}
}

// TestBatchesPageCacheAndReadahead: the stream and the cursors are the same whatever pages
// are kept (--page-cache: none, the default, one too small for a page) and however many
// batches are read ahead; sizes take units.
func TestBatchesPageCacheAndReadahead(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet") // ZSTD, as Save writes Parquet
	writeLabelled(t, in, 3000)
	var first []byte
	var cursors string
	for i, flags := range [][]string{
		{"--page-cache", "0", "--readahead", "1"},
		{},
		{"--page-cache", "1KiB", "--readahead", "2.5MiB"},
		{"--page-cache", "64M", "--readahead", "100"},
	} {
		out := filepath.Join(dir, "b.arrows")
		cs := filepath.Join(dir, "c.txt")
		args := append([]string{"batches", "--batch-size", "50", "--shuffle", "9", "--cursors", cs}, flags...)
		code, _, stderr := runCLI(append(args, in, out)...)
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		c, err := os.ReadFile(cs)
		require.NoError(t, err)
		if i == 0 {
			first, cursors = b, string(c)
			require.Len(t, streamLabels(t, out), 60)
			continue
		}
		assert.Equal(t, first, b, "%v: the same stream", flags)
		assert.Equal(t, cursors, string(c), "%v: the same cursors", flags)
	}
}

// TestByteSize: sizes are bytes, or numbers with a binary unit.
func TestByteSize(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "100": 100, "1KiB": 1 << 10, "1k": 1 << 10, "2.5MiB": 5 << 19, "3G": 3 << 30, "1TiB": 1 << 40, "7B": 7} {
		var b byteSize
		require.NoError(t, b.Set(s), s)
		assert.Equal(t, want, int64(b), s)
	}
	for _, s := range []string{"", "-1", "1X", "GiB", "1e30", "NaN", "1 GiB"} {
		var b byteSize
		assert.Error(t, b.Set(s), s)
	}
}

// TestBudgetSize: a budget is a size, or -1 for no bound; serve takes --memory-budget and
// --wire-budget so.
func TestBudgetSize(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "-1": -1, "2GiB": 2 << 30, "512M": 512 << 20, "1048576": 1 << 20} {
		var v int64
		require.NoError(t, budgetSize{&v}.Set(s), s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "-2", "1X", "-1GiB"} {
		var v int64
		assert.Error(t, budgetSize{&v}.Set(s), s)
	}
	code, _, stderr := runCLI("serve", "--memory-budget", "lots", t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--memory-budget")
}

// TestBatchesCursorErrorsSayWhatIsWrong: a cursor of another table is refused as such — not
// as files that changed — and one of a part since touched names the part and what differs;
// each in one line, with status 1 and nothing at OUT.
func TestBatchesCursorErrorsSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.parquet"), filepath.Join(dir, "test.parquet")
	writeLabelled(t, train, 100)
	writeLabelled(t, test, 100)
	cursors := filepath.Join(dir, "cursors.txt")
	code, _, stderr := runCLI("batches", "--batch-size", "16", "--cursors", cursors, test, filepath.Join(dir, "test.arrows"))
	require.Equal(t, 0, code, stderr)
	lines, err := os.ReadFile(cursors)
	require.NoError(t, err)
	cursor := strings.Fields(string(lines))[0]
	out := filepath.Join(dir, "x.arrows")

	code, _, stderr = runCLI("batches", "--batch-size", "16", "--after", cursor, train, out)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow batches: table: invalid cursor: train: the cursor is of another table: the file it was made on is not one of the table's files ("+
		train+"): use it with the table it was made on, opened by the path it was made with\n", stderr)
	assert.NoFileExists(t, out)

	fileidtest.Stamped(t, test, func() error { return os.Chmod(test, 0o444) })
	code, _, stderr = runCLI("batches", "--batch-size", "16", "--after", cursor, test, out)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "ndarrow batches: test: table: the table changed since the cursor was made: "+test+": its change time differs")
	assert.NotContains(t, stderr, "while being read")
	assert.NoFileExists(t, out)
}
