package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// writeHugeSparse writes, at path, SciPy's .npz of a CSR float64 matrix of 3×1e12 holding two
// values: a dense form of 3e12 elements.
func writeHugeSparse(t *testing.T, path string) { writeSparseOfColumns(t, path, 1e12) }

// writeSparseOfColumns writes, at path, SciPy's .npz of a CSR float64 matrix of 3×columns
// holding two values.
func writeSparseOfColumns(t *testing.T, path string, columns int64) {
	t.Helper()
	m, err := sparse.MakeCSR(ndarray.Shape{3, columns}, sparse.Int64Indices([]int64{0, 1, 1, 2}), sparse.Int64Indices([]int64{5, 7}), []float64{1, 2})
	require.NoError(t, err)
	require.NoError(t, dataset.Save(path, []dataset.Tensor{{Name: "m", Sparse: m}}, dataset.WriteOptions{}))
}

// TestErrorsSayWhatToDo: errors a user met that misled or stopped short are one line (status
// 1; a usage error its line and the usage) that names what is wrong and what to do, with
// nothing on standard output and nothing at OUT: a cursor refused is not the output's error;
// a shard a cursor cannot hold is refused where --shard is read; a sparse tensor's dense form
// above --max-dense names the --max-dense that expands it; a rows file that is no list of
// rows (/dev/zero, a directory, a line that is no index, a line without end) names the file
// and the limit.
func TestErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet")
	writeLabelled(t, in, 100)
	ten := filepath.Join(dir, "ten.parquet")
	writeLabelled(t, ten, 10)
	cursors := filepath.Join(dir, "cursors.txt")
	code, _, stderr := runCLI("batches", "--batch-size", "16", "--shard", "0/2", "--cursors", cursors, in, filepath.Join(dir, "b.arrows"))
	require.Equal(t, exitOK, code, stderr)
	lines, err := os.ReadFile(cursors)
	require.NoError(t, err)
	cursor := strings.Fields(string(lines))[0]
	huge := filepath.Join(dir, "m.npz")
	writeHugeSparse(t, huge)
	wide := filepath.Join(dir, "wide.npz") // a dense form of 3e6 elements
	writeSparseOfColumns(t, wide, 1e6)
	rowsDir := filepath.Join(dir, "rows.d")
	require.NoError(t, os.Mkdir(rowsDir, 0o755))
	badRows := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(badRows, []byte("1\n# a comment\n2\nthree\n"), 0o644))
	longRow := filepath.Join(dir, "long.txt")
	require.NoError(t, os.WriteFile(longRow, append([]byte("1\n"), bytes.Repeat([]byte("7"), 5000)...), 0o644))

	for _, tc := range []struct {
		name string
		args []string // OUT, where there is one, last
		code int
		want []string // in the first line
		not  []string
	}{
		{"a cursor of another shard, to standard output", []string{"batches", "--batch-size", "16", "--shard", "1/2", "--after", cursor, in, "-"}, exitFail,
			[]string{"ndarrow batches: table: invalid cursor: " + cursor, "the cursor's shard 0 of 2, not 1 of 2 (resume with the options it was made with)"}, []string{"standard output"}},
		{"a cursor of another epoch, to a file", []string{"batches", "--batch-size", "16", "--shard", "0/2", "--epoch", "1", "--after", cursor, in, "o.arrows"}, exitFail,
			[]string{"ndarrow batches: table: invalid cursor", "the cursor's epoch 0, not 1"}, []string{"o.arrows"}},
		{"more shards than a cursor holds", []string{"batches", "--batch-size", "16", "--shard", "0/2147483649", in, "o.arrows"}, exitUsage,
			[]string{"ndarrow batches: --shard: table: shard 0 of 2147483649: a shard counts from 0 to one less than the shards, and the shards from 1 to 2147483648"}, nil},
		{"more shards than a cursor holds, over Flight", []string{"get", "--batch-size", "16", "--shard", "0/2147483649", "grpc://127.0.0.1:1", "t", "o.arrows"}, exitUsage,
			[]string{"ndarrow get: --shard: table: shard 0 of 2147483649", "the shards from 1 to 2147483648"}, nil},
		{"inspect of a dense form above --max-dense", []string{"inspect", "--max-dense", "1000", wide}, exitFail,
			[]string{"ndarrow inspect: " + wide + ": wide: ", "3000000 elements, above the limit of 1000", "give --max-dense 3000000 to hash its dense form"}, nil},
		{"inspect of a dense form too large to advise", []string{"inspect", huge}, exitFail,
			[]string{"ndarrow inspect: " + huge + ": m: ", "3000000000000 elements, above the limit of 268435456",
				"no --max-dense is advised to hash its dense form (inspect's sha256 is of a sparse tensor's dense values): its 3000000000000 elements are more than 4294967296"},
			[]string{"give --max-dense"}},
		{"a dense format of a dense form above --max-dense", []string{"convert", "--max-dense", "1000", wide, "o.npy"}, exitFail,
			[]string{"above the limit of 1000", "give --max-dense 3000000 to write it dense, or write .arrow, .arrows, .parquet or .tensor, which keep it sparse"}, nil},
		{"a dense format of a dense form too large to advise", []string{"convert", "--max-dense", "1000", huge, "o.npy"}, exitFail,
			[]string{"above the limit of 1000", "no --max-dense is advised to write it dense: its 3000000000000 elements are more than 4294967296; write .arrow, .arrows or .parquet, which keep it sparse"},
			[]string{"give --max-dense", ".tensor"}},
		{"--dense of a dense form above --max-dense", []string{"convert", "--dense", "--max-dense", "1000", wide, "o.arrow"}, exitFail,
			[]string{"give --max-dense 3000000 to write it dense, or leave out --dense to keep it sparse"}, nil},
		{"--dense of a dense form too large to advise", []string{"convert", "--dense", huge, "o.arrow"}, exitFail,
			[]string{"no --max-dense is advised to write it dense: its 3000000000000 elements are more than 4294967296; leave out --dense to keep it sparse"}, nil},
		{"a .coo of a shape no reader takes", []string{"convert", huge, "o.coo"}, exitFail,
			[]string{"ndarrow convert: ", "m: a SparseTensor message (.coo, .csr, .csc, .csf or .tensor) of shape (3, 1000000000000) is more than a reader of one takes: a shape of at most 1099511627776 elements",
				"so ndarrow could not read it back: write .npz, .arrow, .arrows or .parquet, which keep it sparse"}, nil},
		{"a .csr of a shape no reader takes", []string{"convert", huge, "o.csr"}, exitFail,
			[]string{"m: a SparseTensor message (.coo, .csr, .csc, .csf or .tensor) of shape (3, 1000000000000) is more than a reader of one takes"}, nil},
		{"a shard --drop-last leaves empty", []string{"batches", "--batch-size", "4", "--shard", "2/3", "--drop-last", ten, "o.arrows"}, exitFail,
			[]string{"ndarrow batches: " + ten + ": no batch to write: shard 2 of 3 evened by --drop-last holds 3 of the 10 rows, fewer than a batch of 4, and --drop-last leaves a short batch out: give --batch-size 3 or less, fewer shards, or leave out --drop-last"}, nil},
		{"fewer rows than a batch, --drop-last", []string{"batches", "--batch-size", "16", "--drop-last", ten, "o.arrows"}, exitFail,
			[]string{ten + ": no batch to write: 10 rows, fewer than a batch of 16, and --drop-last leaves a short batch out: give --batch-size 10 or less, or leave out --drop-last"}, nil},
		{"a shard of no row", []string{"batches", "--batch-size", "1", "--shard", "11/12", ten, "o.arrows"}, exitFail,
			[]string{ten + ": no batch to write: shard 11 of 12 holds no row of the 10: give at most 10 shards"}, nil},
		{"more shards than rows, --drop-last", []string{"batches", "--batch-size", "1", "--shard", "0/12", "--drop-last", ten, "o.arrows"}, exitFail,
			[]string{ten + ": no batch to write: --drop-last evens the shards to 0 rows each (10 rows among 12 shards): give at most 10 shards, or leave out --drop-last"}, nil},
		{"--rows @/dev/zero", []string{"take", "--rows", "@/dev/zero", in, "o.arrow"}, exitFail,
			[]string{"ndarrow take: --rows: /dev/zero: line 1 is longer than 4096 bytes: a rows file holds one index a line"}, []string{"bufio", "token too long"}},
		{"--rows of a line without end", []string{"take", "--rows", "@" + longRow, in, "o.arrow"}, exitFail,
			[]string{"--rows: " + longRow + ": line 2 is longer than 4096 bytes"}, nil},
		{"--rows of a line that is no index", []string{"take", "--rows", "@" + badRows, in, "o.arrow"}, exitFail,
			[]string{"--rows: " + badRows + `:4: "three" is not a row index: a rows file holds one index a line`}, nil},
		{"--rows of a directory", []string{"take", "--rows", "@" + rowsDir, in, "o.arrow"}, exitFail,
			[]string{"ndarrow take: --rows: " + rowsDir + ": is a directory"}, nil},
		{"get --rows @/dev/zero", []string{"get", "--rows", "@/dev/zero", "grpc://127.0.0.1:1", "t", "o.arrow"}, exitFail,
			[]string{"ndarrow get: --rows: /dev/zero: line 1 is longer than 4096 bytes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			out := ""
			if last := args[len(args)-1]; strings.HasPrefix(last, "o.") {
				out = filepath.Join(t.TempDir(), last)
				args = append(args[:len(args)-1:len(args)-1], out)
			}
			code, stdout, stderr := runCLI(args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Empty(t, stdout)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if tc.code == exitUsage {
				require.GreaterOrEqual(t, len(lines), 2, "the error and the usage")
				assert.True(t, strings.HasPrefix(lines[1], "usage: "), lines[1])
			} else {
				require.Len(t, lines, 1, "one line")
			}
			for _, w := range tc.want {
				assert.Contains(t, lines[0], w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, lines[0], n)
			}
			if out != "" {
				assert.NoFileExists(t, out)
			}
		})
	}
}

// TestGetOfAnEmptyShardSaysWhatToChange: get --batch-size of a shard of a served table that
// has no batch says why and what to change, as batches does, from the rows the flight holds.
func TestGetOfAnEmptyShardSaysWhatToChange(t *testing.T) {
	dir := t.TempDir()
	writeLabelled(t, filepath.Join(dir, "ten.parquet"), 10)
	s := startServe(t, dir)
	out := filepath.Join(t.TempDir(), "o.arrows")
	code, stdout, stderr := runCLI("get", "--batch-size", "4", "--shard", "2/3", "--drop-last", s.uri, "ten", out)
	assert.Equal(t, exitFail, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, "ndarrow get: ten: no batch to write: shard 2 of 3 evened by --drop-last holds 3 of the 10 rows, fewer than a batch of 4, and --drop-last leaves a short batch out: give --batch-size 3 or less, fewer shards, or leave out --drop-last\n", stderr)
	assert.NoFileExists(t, out)
}

// readStream returns the schema's field names and the record batches' rows of the Arrow IPC
// stream b.
func readStream(t *testing.T, b []byte) (fields []string, rows []int64) {
	t.Helper()
	r, err := arrowipc.NewReader(bytes.NewReader(b))
	require.NoError(t, err, "an Arrow IPC stream")
	defer r.Release()
	for _, f := range r.Schema().Fields() {
		fields = append(fields, f.Name)
	}
	for r.Next() {
		rows = append(rows, r.Record().NumRows())
	}
	require.NoError(t, r.Err())
	return fields, rows
}

// TestFinishedEpochInTheCLI: `batches` and `get --batch-size` after the cursor of an epoch's
// last batch — where a training loop resumes from its last checkpoint — agree with
// table.Batches and Flight: status 0, a stream of the batches' schema and no batch (to a file
// and to standard output, the same bytes from both commands), and one line on stderr saying
// the epoch is finished and what to run next.
func TestFinishedEpochInTheCLI(t *testing.T) {
	served := t.TempDir()
	in := filepath.Join(served, "t.parquet")
	writeLabelled(t, in, 100)
	s := startServe(t, served)
	dir := t.TempDir()
	opts := []string{"--batch-size", "30", "--shuffle", "5", "--epoch", "1", "--shard", "1/2", "--columns", "label,emb"}
	cursors := filepath.Join(dir, "cursors.txt")
	code, _, stderr := runCLI(append(append([]string{"batches"}, opts...), "--cursors", cursors, in, filepath.Join(dir, "all.arrows"))...)
	require.Equal(t, exitOK, code, stderr)
	all, err := os.ReadFile(filepath.Join(dir, "all.arrows"))
	require.NoError(t, err)
	wantFields, wantRows := readStream(t, all)
	require.Equal(t, []int64{30, 20}, wantRows, "50 rows in batches of 30")
	lines, err := os.ReadFile(cursors)
	require.NoError(t, err)
	cs := strings.Fields(string(lines))
	require.Len(t, cs, 2)
	last := cs[1]

	var streams [][]byte
	for _, tc := range []struct {
		command string
		args    []string
		note    string
	}{
		{"batches", []string{in}, "ndarrow batches: " + in + ": epoch 1 is finished: the cursor is after its last batch (2), so the stream holds no batch; the next is --epoch 2, without --after\n"},
		{"get", []string{s.uri, "t"}, "ndarrow get: t: epoch 1 is finished: the cursor is after its last batch (2), so the stream holds no batch; the next is --epoch 2, without --after\n"},
	} {
		for _, out := range []string{filepath.Join(t.TempDir(), "rest.arrows"), "-"} {
			t.Run(tc.command+" to "+filepath.Base(out), func(t *testing.T) {
				args := append(append(append([]string{tc.command}, opts...), "--after", last), append(tc.args, out)...)
				code, stdout, stderr := runCLI(args...)
				require.Equal(t, exitOK, code, stderr)
				assert.Equal(t, tc.note, stderr)
				got := []byte(stdout)
				if out != "-" {
					assert.Empty(t, stdout)
					got, err = os.ReadFile(out)
					require.NoError(t, err)
				}
				fields, rows := readStream(t, got)
				assert.Equal(t, wantFields, fields, "the batches' schema")
				assert.Empty(t, rows, "no batch")
				streams = append(streams, got)
			})
		}
	}
	require.Len(t, streams, 4)
	for _, st := range streams[1:] {
		assert.Equal(t, streams[0], st, "the same stream from batches and get, to a file and to standard output")
	}
	assert.True(t, bytes.HasPrefix(all, streams[0][:len(streams[0])-8]), "the schema the whole epoch's stream begins with")
}

// TestGetRowsAboveAMessageLimit: `get --rows` of rows that make a message above a limit says
// which limit and how to raise it — the client's request above its --max-message-bytes, the
// server's answer (the rows twice) above serve --max-message-bytes — in one line, with status
// 1 and nothing at OUT.
func TestGetRowsAboveAMessageLimit(t *testing.T) {
	served := t.TempDir()
	writeLabelled(t, filepath.Join(served, "t.parquet"), 1000)
	s := startServe(t, served, "--max-message-bytes", "1048576")
	rows := filepath.Join(t.TempDir(), "rows.txt")
	require.NoError(t, os.WriteFile(rows, bytes.Repeat([]byte("999\n"), 300_000), 0o644)) // a request of 1.2 MB
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"the server's answer", nil, []string{"ndarrow get: flight: t: a take of 300000 rows is a FlightInfo of",
			"above the 1048576 bytes this server sends (serve --max-message-bytes; Options.MaxMessageBytes): take fewer rows at a time, or raise the server's limit"}},
		{"the client's request", []string{"--max-message-bytes", "1000000"}, []string{"ndarrow get: flight: t: a take of 300000 rows is a request of",
			"above the 1000000 bytes this client sends (ClientOptions.MaxMessageBytes; get --max-message-bytes): take fewer rows at a time, or raise it to at least"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "o.arrow")
			code, stdout, stderr := runCLI(append(append([]string{"get"}, tc.args...), "--rows", "@"+rows, s.uri, "t", out)...)
			assert.Equal(t, exitFail, code)
			assert.Empty(t, stdout)
			require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "rpc error")
			assert.NoFileExists(t, out)
		})
	}
}

// TestLsBytesOfStrings: `ls` never shows 0 bytes for a column of strings: a served Parquet
// table's string columns, and the table, are - (-1 in --json: unknown before reading); an
// uploaded table's strings are what its record batches hold.
func TestLsBytesOfStrings(t *testing.T) {
	served := t.TempDir()
	writeLabelledTable(t, filepath.Join(served, "t.parquet"), 300)
	s := startServe(t, served, "--writable")
	upload := filepath.Join(t.TempDir(), "u.parquet")
	writeLabelledTable(t, upload, 200)
	code, _, stderr := runCLI("put", s.uri, upload)
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	bytesOf := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		f := strings.Fields(line)
		bytesOf[f[0]] = f[len(f)-1]
	}
	for _, name := range []string{"t", "t.name", "t.cat"} {
		assert.Equal(t, "-", bytesOf[name], "%s: unknown before reading\n%s", name, stdout)
	}
	for _, name := range []string{"u.name", "u.cat", "u"} {
		assert.NotContains(t, []string{"", "0", "-"}, bytesOf[name], "%s: known\n%s", name, stdout)
	}
	assert.NotEqual(t, "0", bytesOf["t.label"])

	code, stdout, stderr = runCLI("ls", "--json", s.uri)
	require.Equal(t, exitOK, code, stderr)
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var l lsLine
		require.NoError(t, json.Unmarshal([]byte(line), &l))
		assert.NotZero(t, l.Bytes, "%s: never 0", l.Name)
		if l.DType == "string" && strings.HasPrefix(l.Name, "t.") {
			assert.Equal(t, int64(-1), l.Bytes, l.Name)
		}
	}
}

// labels returns the label column of each record batch of the Arrow IPC stream b.
func labels(t *testing.T, b []byte) [][]int64 {
	t.Helper()
	r, err := arrowipc.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer r.Release()
	var out [][]int64
	for r.Next() {
		k := r.Schema().FieldIndices("label")
		require.Len(t, k, 1)
		out = append(out, append([]int64(nil), r.Record().Column(k[0]).(*array.Int64).Int64Values()...))
	}
	require.NoError(t, r.Err())
	return out
}
