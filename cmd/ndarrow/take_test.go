package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/storetest"
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
// rows, and no output; a missing --rows or a row that is no number is a usage error; a rows
// file that cannot be read one error line naming it.
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
	assert.Equal(t, 1, code, "a rows file that cannot be read is a failure naming it, not a usage error")
	assert.Equal(t, "ndarrow take: --rows: "+filepath.Join(dir, "none.txt")+": no such file or directory\n", stderr)

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

// TestTakeCommandInputs: take reads a table wherever inspect does — a directory of parts (the
// rows numbered across them), a prefix of objects in S3, an object behind an https URL (its
// query never shown) — and writes to standard output with --to; from a TFRecord file it takes
// the same rows, saying that the file, which has no row index, was read whole.
func TestTakeCommandInputs(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	require.NoError(t, os.MkdirAll(parts, 0o755))
	writeUserTable(t, filepath.Join(parts, "part-0.parquet"), 4)    // names a b c d
	writeUserTable(t, filepath.Join(parts, "part-1.parquet"), 1, 1) // names a b
	const structWarning = "ndarrow take: parts.s: struct<a: int32> left out: a struct has no tensor form (read its fields as columns of their own)\n"
	names := func(t *testing.T, path string) []string {
		f, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err)
		defer f.Release()
		tab, err := f.Table()
		require.NoError(t, err)
		name, err := tab.Column("name")
		require.NoError(t, err)
		return must(dataset.DenseOf[string](name)).Ravel()
	}

	out := filepath.Join(dir, "dir.arrow")
	code, _, stderr := runCLI("take", "--rows", "3,4,-1,0", parts, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, structWarning, stderr)
	assert.Equal(t, []string{"d", "a", "b", "a"}, names(t, out), "rows across the parts")

	srv := storetest.StartS3(t, "lake")
	for _, part := range []string{"part-0.parquet", "part-1.parquet"} {
		srv.PutFile(t, "lake", "parts/"+part, filepath.Join(parts, part))
	}
	out = filepath.Join(dir, "s3.arrow")
	code, _, stderr = runCLI("take", "--rows", "3,4,-1,0", "s3://lake/parts/", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, structWarning, stderr)
	assert.Equal(t, []string{"d", "a", "b", "a"}, names(t, out), "from the prefix")

	web := httptest.NewServer(http.FileServer(http.Dir(parts)))
	defer web.Close()
	code, stdout, stderr := runCLI("take", "--rows", "2,1", "--columns", "name,label", "--to", "arrows", web.URL+"/part-0.parquet?X-Amz-Signature=secret", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	streamed := filepath.Join(dir, "https.arrows")
	require.NoError(t, os.WriteFile(streamed, []byte(stdout), 0o644))
	assert.Equal(t, []string{"c", "b"}, names(t, streamed), "from https, to standard output")

	examples := filepath.Join(dir, "t.tfrecord")
	code, _, stderr = runCLI("convert", "--fill", "-1", filepath.Join(parts, "part-0.parquet"), examples)
	require.Equal(t, exitOK, code, stderr)
	out = filepath.Join(dir, "tf.arrow")
	code, _, stderr = runCLI("take", "--rows", "3,0", examples, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "ndarrow take: warning: "+examples+": a TFRecord file has no row index: all its records were read to take the rows (Parquet and Arrow files are read only where the rows are: convert it once for random access)\n", stderr)
	assert.Equal(t, []string{"d", "a"}, names(t, out), "from Examples")
}
