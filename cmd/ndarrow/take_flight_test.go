package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// TestGetRows: `get --rows` of a served Parquet table (several row groups), of an uploaded
// table and of a served .npy tensor writes the same file `take --rows` writes of the file
// itself — the rows in their order, repeated, counted from the end, every column or those
// --columns or --tensor names, @FILE one a line — and a row outside the flight, or --columns
// without --rows, is one error line.
func TestGetRows(t *testing.T) {
	served := t.TempDir()
	src := filepath.Join(served, "t.parquet")
	writeLabelledTable(t, src, 450)
	x := ndarray.New[float64](30, 2)
	for i := range x.Data() {
		x.Data()[i] = float64(i) / 2
	}
	f, err := os.Create(filepath.Join(served, "x.npy"))
	require.NoError(t, err)
	_, err = npy.Write(f, x)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	upload := filepath.Join(t.TempDir(), "u.parquet")
	writeLabelledTable(t, upload, 260)

	s := startServe(t, served, "--writable")
	code, _, stderr := runCLI("put", s.uri, upload)
	require.Equal(t, exitOK, code, stderr)
	dir := t.TempDir()
	rowsFile := filepath.Join(dir, "rows.txt")
	require.NoError(t, os.WriteFile(rowsFile, []byte("7\n# a comment\n-1\n\n7\n0\n"), 0o644))

	for _, tc := range []struct {
		name, flight, file, out string
		args                    []string
	}{
		{"a Parquet table, every column", "t", src, "o.parquet", []string{"--rows", "3,0,-1,3,250"}},
		{"a Parquet table, rows from a file", "t", src, "o.arrow", []string{"--rows", "@" + rowsFile}},
		{"a Parquet table, columns picked", "t", src, "o.arrows", []string{"--rows", "449,1", "--columns", "name,label"}},
		{"a Parquet table, one column to .npy", "t", src, "o.npy", []string{"--rows", "5,4", "--columns", "emb"}},
		{"an uploaded table", "u", upload, "o.parquet", []string{"--rows", "-2,10,259"}},
		{"an uploaded table, --tensor", "u", upload, "o.npy", []string{"--rows", "1,2", "--tensor", "emb"}},
		{"a .npy tensor", "x", filepath.Join(served, "x.npy"), "o.npy", []string{"--rows", "29,0,-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := filepath.Join(t.TempDir(), tc.out)
			code, stdout, stderr := runCLI(append(append([]string{"get"}, tc.args...), s.uri, tc.flight, got)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, "→ "+got)
			want := filepath.Join(t.TempDir(), tc.out)
			args := tc.args
			if len(args) == 4 && args[2] == "--tensor" {
				args = []string{args[0], args[1], "--columns", args[3]}
			}
			code, _, stderr = runCLI(append(append([]string{"take"}, args...), tc.file, want)...)
			require.Equal(t, exitOK, code, stderr)
			requireSameColumns(t, want, got)
		})
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"a row past the end", []string{"--rows", "0,450", s.uri, "t", "o.parquet"}, exitFail, "row 450 of a flight of 450 rows"},
		{"a row before the start", []string{"--rows", "-31", s.uri, "x", "o.npy"}, exitFail, "row -31 of a flight of 30 rows"},
		{"a column the table does not have", []string{"--rows", "0", "--columns", "nope", s.uri, "t", "o.parquet"}, exitFail, "no column nope"},
		{"a flight not served", []string{"--rows", "0", s.uri, "nope", "o.parquet"}, exitFail, "nope"},
		{"a table into a one-tensor format", []string{"--rows", "0", s.uri, "t", "o.npy"}, exitFail, "pick it with --tensor or --columns"},
		{"a row that is no number", []string{"--rows", "1,x", s.uri, "t", "o.parquet"}, exitUsage, `"x" is not a row index`},
		{"--columns without --rows", []string{"--columns", "label", s.uri, "t", "o.parquet"}, exitUsage, "--columns picks the columns of --rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			args[len(args)-1] = filepath.Join(t.TempDir(), args[len(args)-1])
			code, _, stderr := runCLI(append([]string{"get"}, args...)...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.contains)
			assert.NoFileExists(t, args[len(args)-1])
		})
	}
}

// TestGetBatches: `get --batch-size` of a served Parquet table of several row groups writes
// the same Arrow IPC stream, byte for byte, and the same cursors as `batches` of the file —
// shuffled and sharded, columns picked or not, resumed after a cursor — and batch flags
// without --batch-size, or a bad cursor, are refused.
func TestGetBatches(t *testing.T) {
	served := t.TempDir()
	src := filepath.Join(served, "t.parquet")
	writeLabelledTable(t, src, 450)
	s := startServe(t, served)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"in table order", []string{"--batch-size", "64"}},
		{"shuffled and sharded", []string{"--batch-size", "50", "--shuffle", "42", "--epoch", "2", "--shard", "1/3"}},
		{"columns picked, the last dropped", []string{"--batch-size", "40", "--shuffle", "3", "--shard", "0/2", "--drop-last", "--columns", "name,emb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			run := func(args ...string) (string, string) {
				out, cursors := filepath.Join(dir, "o.arrows"), filepath.Join(dir, "cursors.txt")
				code, _, stderr := runCLI(append(append(args[:1:1], append(slices.Clone(tc.args), "--cursors", cursors)...), append(args[1:], out)...)...)
				require.Equal(t, exitOK, code, stderr)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				c, err := os.ReadFile(cursors)
				require.NoError(t, err)
				return string(b), string(c)
			}
			want, wantCursors := run("batches", src)
			got, gotCursors := run("get", s.uri, "t")
			require.Equal(t, wantCursors, gotCursors)
			require.True(t, want == got, "get --batch-size writes the stream batches writes")

			lines := strings.Split(strings.TrimSpace(gotCursors), "\n")
			require.Greater(t, len(lines), 2)
			tc.args = append(tc.args, "--after", lines[1])
			want, wantCursors = run("batches", src)
			got, gotCursors = run("get", s.uri, "t")
			require.Equal(t, wantCursors, gotCursors)
			require.Equal(t, strings.Join(lines[2:], "\n")+"\n", gotCursors, "resumed after the second batch")
			require.True(t, want == got, "resumed: the same stream")
		})
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"--shuffle without --batch-size", []string{"--shuffle", "1", s.uri, "t", "o.arrows"}, exitUsage, "only with --batch-size"},
		{"not a stream", []string{"--batch-size", "8", s.uri, "t", "o.parquet"}, exitUsage, "Arrow IPC stream"},
		{"with --rows", []string{"--batch-size", "8", "--rows", "1", s.uri, "t", "o.arrows"}, exitUsage, "not with --rows"},
		{"a bad cursor", []string{"--batch-size", "8", "--after", "c1.x", s.uri, "t", "o.arrows"}, exitUsage, "--after"},
		{"a cursor of another table", []string{"--batch-size", "8", "--after", "c2.0123456789abcdef.0.0.0.8.0.1.0.1", s.uri, "t", "o.arrows"}, exitFail, "changed"},
		{"a flight not served", []string{"--batch-size", "8", s.uri, "nope", "o.arrows"}, exitFail, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			args[len(args)-1] = filepath.Join(t.TempDir(), args[len(args)-1])
			code, _, stderr := runCLI(append([]string{"get"}, args...)...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.contains)
			_, err := os.Stat(args[len(args)-1])
			assert.True(t, os.IsNotExist(err), "no OUT written")
		})
	}
}
