package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
)

// TestTakeCommand: take writes the rows asked for, in their order, repeated, counted from the
// end, with every column (the one without a tensor form named on stderr) or those --columns
// names, from an Arrow IPC file of two batches, a stream and Parquet, to every table format;
// @FILE gives the rows one a line.
func TestTakeCommand(t *testing.T) {
	dir := t.TempDir()
	rowsFile := filepath.Join(dir, "rows.txt")
	require.NoError(t, os.WriteFile(rowsFile, []byte("3\n# a comment\n\n0\n-1\n3\n"), 0o644))
	for _, in := range []string{"t.arrow", "t.arrows", "t.parquet"} {
		path := filepath.Join(dir, in)
		writeUserTable(t, path, 3, 1)
		for _, out := range []string{"o.arrow", "o.arrows", "o.parquet"} {
			for _, rows := range []string{"3,0,-1,3", "@" + rowsFile} {
				outPath := filepath.Join(dir, strings.TrimPrefix(in, "t.")+"."+out)
				code, stdout, stderr := runCLI("take", "--rows", rows, path, outPath)
				require.Equal(t, 0, code, stderr)
				assert.Empty(t, stdout)
				assert.Equal(t, "ndarrow take: t.s: struct<a: int32> left out: a struct has no tensor form (read its fields as columns of their own)\n", stderr)
				f, err := dataset.Open(outPath, limits.Limits{})
				require.NoError(t, err)
				tab, err := f.Table()
				require.NoError(t, err)
				assert.Equal(t, tableColumns, tab.Names(), "%s -> %s", in, out)
				label, err := tab.Column("label")
				require.NoError(t, err)
				labels, err := dataset.DenseOf[int64](label)
				require.NoError(t, err)
				assert.Equal(t, []int64{40, 10, 40, 40}, labels.Ravel(), "%s -> %s", in, out)
				name, err := tab.Column("name")
				require.NoError(t, err)
				names, err := dataset.DenseOf[string](name)
				require.NoError(t, err)
				assert.Equal(t, []string{"d", "a", "d", "d"}, names.Ravel())
				f.Release()
			}
		}
		code, _, stderr := runCLI("take", "--rows", "1,2", "--columns", "emb,label", "--fill", "-1", path, filepath.Join(dir, "o.npz"))
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, stderr, "the columns asked for: nothing left out")
		f, err := dataset.Open(filepath.Join(dir, "o.npz"), limits.Limits{})
		require.NoError(t, err)
		label, err := f.Tensor("o.label")
		require.NoError(t, err)
		labels, err := dataset.DenseOf[int64](label)
		require.NoError(t, err)
		assert.Equal(t, []int64{-1, 30}, labels.Ravel(), "the null label filled")
		f.Release()
	}
}

// TestTakeCommandErrors: a row outside the table is one error line naming it and the table's
// rows, and no output; a missing --rows or a row that is no number is a usage error.
func TestTakeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	writeUserTable(t, path, 3, 1)
	out := filepath.Join(dir, "o.arrow")
	code, _, stderr := runCLI("take", "--rows", "0,4", path, out)
	assert.Equal(t, 1, code)
	assert.Equal(t, "ndarrow take: t: row 4 of a table of 4 rows: table: row out of range\n", stderr)
	assert.NoFileExists(t, out)
	code, _, stderr = runCLI("take", "--rows", "-5", path, out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "row -5 of a table of 4 rows")
	code, _, stderr = runCLI("take", "--rows", "0", "--columns", "nope", path, out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no column nope (it has emb, label, score, name, raw, cat)")
	code, _, stderr = runCLI("take", path, out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--rows is required")
	code, _, stderr = runCLI("take", "--rows", "1,x", path, out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `"x" is not a row index`)
	code, _, stderr = runCLI("take", "--rows", "@"+filepath.Join(dir, "none.txt"), path, out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "none.txt")

	// Inputs that are no table: one line naming the input once.
	bad := filepath.Join(dir, "bad.parquet")
	require.NoError(t, os.WriteFile(bad, []byte("PAR1garbagePAR1"), 0o644))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	for in, want := range map[string]string{
		bad:                                bad + ": parquet: a footer of 1701273954 bytes in a file of 15: invalid Parquet file\n",
		filepath.Join(dir, "none.parquet"): filepath.Join(dir, "none.parquet") + ": no such file or directory\n",
		empty:                              empty + ": no table: table: no such table\n",
	} {
		code, _, stderr = runCLI("take", "--rows", "0", in, out)
		assert.Equal(t, 1, code)
		assert.Equal(t, "ndarrow take: "+want, stderr)
	}
	assert.NoFileExists(t, out)
}
