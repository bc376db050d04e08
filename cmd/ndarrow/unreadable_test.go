package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// unreadableRows is the rows of each part writeTrainParts writes.
const unreadableRows = 40

// writeTrainParts writes n Parquet parts into dir (part-I.parquet: label 1000·I + the row, emb
// 2 floats) with the project's writer and returns their paths.
func writeTrainParts(t *testing.T, dir string, n int) []string {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var paths []string
	for i := range n {
		label := ndarray.Must(ndarray.Arange(int64(1000*i), int64(1000*i+unreadableRows), 1))
		emb := ndarray.New[float32](unreadableRows, 2)
		path := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i))
		require.NoError(t, dataset.Save(path, []dataset.Tensor{{Name: "label", Column: "label", Dense: label}, {Name: "emb", Column: "emb", Dense: emb}}, dataset.WriteOptions{}))
		paths = append(paths, path)
	}
	return paths
}

// labelsOfParts returns the labels writeTrainParts writes into the parts numbered parts.
func labelsOfParts(parts ...int) []int64 {
	var out []int64
	for _, i := range parts {
		for r := range unreadableRows {
			out = append(out, int64(1000*i+r))
		}
	}
	return out
}

// truncateHalf cuts the file at path to half its size: a Parquet file without its footer.
func truncateHalf(t *testing.T, path string) {
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, info.Size()/2))
}

// fileLabels reads the label column of the file at path whole, into a copy.
func fileLabels(t *testing.T, path string) []int64 {
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	tab, err := f.Table()
	require.NoError(t, err)
	label, err := tab.Column("label")
	require.NoError(t, err)
	return slices.Clone(must(dataset.DenseOf[int64](label)).Ravel()) // the file is unmapped on return
}

// TestUnreadablePartFailsTheCommand: take, batches, convert and inspect of a directory of
// four parts one of which is cut short exit with status 1 and one line naming the part and
// saying --skip-unreadable reads the rest, nothing at OUT; with --skip-unreadable each exits
// 0, the part named on stderr as skipped, and OUT holds the rows of the other three.
func TestUnreadablePartFailsTheCommand(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train")
	paths := writeTrainParts(t, train, 4)
	truncateHalf(t, paths[2])
	want := labelsOfParts(0, 1, 3)

	for _, tc := range []struct {
		command string
		args    func(out string) []string
		out     string // OUT's name, "" for none
		hint    string
		rows    func(t *testing.T, out string) []int64
	}{
		{"take", func(out string) []string { return []string{"take", "--rows", "0,40,80,-1", train, out} }, "rows.arrow",
			"(--skip-unreadable reads the rest)", func(t *testing.T, out string) []int64 { return fileLabels(t, out) }},
		{"batches", func(out string) []string { return []string{"batches", "--batch-size", "25", train, out} }, "b.arrows",
			"(--skip-unreadable reads the rest)", func(t *testing.T, out string) []int64 { return slices.Concat(streamLabels(t, out)...) }},
		{"convert", func(out string) []string { return []string{"convert", train, out} }, "all.arrow",
			"(--skip-unreadable reads the rest)", func(t *testing.T, out string) []int64 { return fileLabels(t, out) }},
		{"inspect", func(string) []string { return []string{"inspect", train} }, "",
			"(--skip-unreadable leaves it out)", nil},
	} {
		t.Run(tc.command, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tc.out)
			code, _, stderr := ndarrowProcess(t, tc.args(out)...)
			assert.Equal(t, exitFail, code, stderr)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			require.Len(t, lines, 1, "one line: %s", stderr)
			assert.True(t, strings.HasPrefix(lines[0], "ndarrow "+tc.command+": "), lines[0])
			assert.Equal(t, 1, strings.Count(lines[0], paths[2]), "the part named once: %s", lines[0])
			assert.True(t, strings.HasSuffix(lines[0], tc.hint), lines[0])
			if tc.out != "" {
				assert.NoFileExists(t, out)
			}

			args := append([]string{tc.command, "--skip-unreadable"}, tc.args(out)[1:]...)
			code, _, stderr = ndarrowProcess(t, args...)
			require.Equal(t, exitOK, code, stderr)
			var skipped []string
			for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				if strings.Contains(line, ": skipped: ") {
					skipped = append(skipped, line)
				}
			}
			require.Len(t, skipped, 1, stderr)
			assert.True(t, strings.HasPrefix(skipped[0], "ndarrow "+tc.command+": skipped: "+paths[2]+": "), skipped[0])
			if tc.rows == nil {
				return
			}
			got := tc.rows(t, out)
			if tc.command == "take" {
				assert.Equal(t, []int64{want[0], want[40], want[80], want[len(want)-1]}, got, "rows numbered across the parts read")
				return
			}
			assert.Equal(t, want, got, "the rows of the parts read")
		})
	}
}

// TestInspectOfAnUnreadablePartPrintsNoTable: inspect of a directory of four parts one of
// which is cut short, and a file of its own, prints nothing of the table — as text or --json
// — and exits 1 naming the part, the other file's tensor printed; with --skip-unreadable it
// prints the table of the other three parts (their 120 rows).
func TestInspectOfAnUnreadablePartPrintsNoTable(t *testing.T) {
	train := filepath.Join(t.TempDir(), "train")
	paths := writeTrainParts(t, train, 4)
	truncateHalf(t, paths[2])
	require.NoError(t, dataset.Save(filepath.Join(train, "other.npy"), []dataset.Tensor{{Dense: ndarray.New[int64](3)}}, dataset.WriteOptions{}))
	for _, tc := range []struct {
		name  string
		flags []string
		rows  string // what a line of the table says of its rows
	}{
		{"text", nil, "(120,)"},
		{"json", []string{"--json"}, `"shape":[120]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := ndarrowProcess(t, slices.Concat([]string{"inspect"}, tc.flags, []string{train})...)
			assert.Equal(t, exitFail, code, stderr)
			assert.NotContains(t, string(stdout), "train", "never a smaller table")
			assert.Contains(t, string(stdout), "other", "a table of its own, whole")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
			assert.Contains(t, stderr, paths[2])

			code, stdout, stderr = ndarrowProcess(t, slices.Concat([]string{"inspect", "--skip-unreadable"}, tc.flags, []string{train})...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, string(stdout), "train.label")
			assert.Contains(t, string(stdout), tc.rows, "the rows of the parts read")
		})
	}
}

// TestServeNamesTheUnreadablePart: serve of a directory whose table has a part cut short does
// not serve the table smaller: its log names the part, ls lists the table with no rows and
// names the part on stderr, and get fails naming the part; with serve --skip-unreadable the
// table is served from the other parts, ls --json naming the part in "skipped".
func TestServeNamesTheUnreadablePart(t *testing.T) {
	dir := t.TempDir()
	paths := writeTrainParts(t, filepath.Join(dir, "train"), 4)
	truncateHalf(t, paths[2])

	s := startServe(t, dir, "--watch=false")
	assert.Contains(t, s.stderr.String(), "ndarrow serve: unreadable: "+paths[2]+": ")
	assert.Contains(t, s.stderr.String(), "the table train is not served (serve --skip-unreadable serves the rest)\n")
	code, stdout, stderr := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^train\s+table\s+-\s+\(-1,\)\s+-\s+-$`, stdout, "listed, with no rows")
	assert.Regexp(t, `(?m)^train.label\s+dense\s+int64\s+\(-1,\)\s+-\s+-$`, stdout, "its columns too")
	assert.True(t, strings.HasPrefix(stderr, "ndarrow ls: train: not served: unreadable part train/part-2.parquet: "), stderr)
	assert.True(t, strings.HasSuffix(stderr, " (serve --skip-unreadable serves the rest)\n"), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "the part named once for the table and its columns: %s", stderr)
	out := filepath.Join(t.TempDir(), "t.arrow")
	code, _, stderr = runCLI("get", s.uri, "train", out)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "unreadable part train/part-2.parquet: ")
	assert.Contains(t, stderr, "serve --skip-unreadable serves the rest")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.NoFileExists(t, out)
	code, _, stderr = runCLI("get", "--rows", "0", s.uri, "train", out)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "unreadable part train/part-2.parquet: ")

	skip := startServe(t, dir, "--watch=false", "--skip-unreadable")
	assert.Contains(t, skip.stderr.String(), "ndarrow serve: skipped: "+paths[2]+": ")
	assert.Contains(t, skip.stderr.String(), "the table train is served without it\n")
	code, stdout, stderr = runCLI("ls", "--json", skip.uri)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "ndarrow ls: train: served without train/part-2.parquet: ")
	listed := map[string]lsLine{}
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var line lsLine
		require.NoError(t, dec.Decode(&line))
		listed[line.Name] = line
	}
	for _, name := range []string{"train", "train.label", "train.emb"} {
		require.Contains(t, listed, name)
		assert.Equal(t, int64(3*unreadableRows), listed[name].Rows, name)
		require.Len(t, listed[name].Skipped, 1, name)
		assert.True(t, strings.HasPrefix(listed[name].Skipped[0], "train/part-2.parquet: "), listed[name].Skipped[0])
	}
	code, _, stderr = runCLI("get", skip.uri, "train", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, labelsOfParts(0, 1, 3), fileLabels(t, out))
}

// TestGetNamesTheUnreadablePart: get of a table served without a part cut short (serve
// --skip-unreadable) — whole, --rows or --batch-size — names the part on stderr as ls does;
// of a table not served for it, each fails in one line naming the flight once and the part.
func TestGetNamesTheUnreadablePart(t *testing.T) {
	dir := t.TempDir()
	paths := writeTrainParts(t, filepath.Join(dir, "train"), 4)
	truncateHalf(t, paths[2])
	skip := startServe(t, dir, "--watch=false", "--skip-unreadable")
	refuse := startServe(t, dir, "--watch=false")
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{"whole", nil, "t.arrow"},
		{"rows", []string{"--rows", "0,-1"}, "t.arrow"},
		{"batches", []string{"--batch-size", "25"}, "t.arrows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tc.out)
			code, _, stderr := runCLI(slices.Concat([]string{"get"}, tc.args, []string{skip.uri, "train", out})...)
			require.Equal(t, exitOK, code, stderr)
			assert.True(t, strings.HasPrefix(stderr, "ndarrow get: train: served without train/part-2.parquet: "), stderr)
			assert.Equal(t, 1, strings.Count(stderr, "part-2.parquet"), "named once: %s", stderr)

			out = filepath.Join(t.TempDir(), tc.out)
			code, _, stderr = runCLI(slices.Concat([]string{"get"}, tc.args, []string{refuse.uri, "train", out})...)
			assert.Equal(t, exitFail, code)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
			assert.Contains(t, stderr, "unreadable part train/part-2.parquet: ")
			assert.Equal(t, 1, strings.Count(stderr, "train: "), "the flight named once: %s", stderr)
			assert.NoFileExists(t, out)
		})
	}
}

// TestServeOfTwoFilesOfOneBaseName: serve of t.parquet and t.arrow, never joined, says
// neither is served and that no file of the table can be read — not that --skip-unreadable
// serves a rest there is none of — in its log, ls and get alike.
func TestServeOfTwoFilesOfOneBaseName(t *testing.T) {
	dir := t.TempDir()
	labels := []dataset.Tensor{{Name: "label", Column: "label", Dense: ndarray.New[int64](10)}}
	for _, name := range []string{"t.parquet", "t.arrow"} {
		require.NoError(t, dataset.Save(filepath.Join(dir, name), labels, dataset.WriteOptions{}))
	}
	s := startServe(t, dir, "--watch=false")
	assert.Contains(t, s.stderr.String(), "neither is read (rename or move one): the table t is not served: no file of it can be read\n")
	code, _, lsErr := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, lsErr)
	assert.Contains(t, lsErr, "ndarrow ls: t: not served: unreadable part t.arrow: t.parquet beside it")
	out := filepath.Join(t.TempDir(), "t.arrow")
	code, _, getErr := runCLI("get", s.uri, "t", out)
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasSuffix(getErr, ": no file of it can be read\n"), getErr)
	for what, text := range map[string]string{"serve": s.stderr.String(), "ls": lsErr, "get": getErr} {
		assert.NotContains(t, text, "serves the rest", what)
	}
}

// TestServeLogsAPartGone: a part of a served table deleted is named in serve's log — the
// table is served without it, fewer rows — besides the table's change on standard output.
func TestServeLogsAPartGone(t *testing.T) {
	dir := t.TempDir()
	paths := writeTrainParts(t, filepath.Join(dir, "train"), 3)
	s := startServe(t, dir)
	require.NoError(t, os.Remove(paths[1]))
	says := "ndarrow serve: gone: " + paths[1] + ": what was made of it is served without it\n"
	require.Eventually(t, func() bool { return strings.Contains(s.stderr.String(), says) }, 5*followLimit, 10*time.Millisecond, "%s", s.stderr.String())
	assert.Equal(t, 1, strings.Count(s.stderr.String(), "gone: "), "named once: %s", s.stderr.String())
	assert.Contains(t, s.stdout.String(), " changed train")
}

// TestADirectoryOfOnePartIsItsTable: a directory of one part is the table named after it, as
// one of three is, for serve, take and batches alike: a client's flight name does not change
// as parts are added.
func TestADirectoryOfOnePartIsItsTable(t *testing.T) {
	train := filepath.Join(t.TempDir(), "train")
	writeTrainParts(t, train, 1)
	s := startServe(t, train)
	assert.Equal(t, map[string]string{"train": "[40]", "train.label": "[40]", "train.emb": "[40 2]"}, lsNames(t, s.uri))

	for _, args := range [][]string{
		{"take", "--rows", "0", "--table", "train", train, filepath.Join(t.TempDir(), "r.arrow")},
		{"batches", "--batch-size", "8", "--table", "train", train, filepath.Join(t.TempDir(), "b.arrows")},
	} {
		code, _, stderr := runCLI(args...)
		assert.Equal(t, exitOK, code, "%s: %s", args[0], stderr)
	}

	parts := writeTrainParts(t, filepath.Join(t.TempDir(), "more"), 3)
	for _, p := range parts[1:] {
		tmp := filepath.Join(train, "."+filepath.Base(p))
		require.NoError(t, os.Rename(p, tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(train, filepath.Base(p))))
	}
	require.Eventually(t, func() bool {
		return fmt.Sprint(lsNames(t, s.uri)) == fmt.Sprint(map[string]string{"train": "[120]", "train.label": "[120]", "train.emb": "[120 2]"})
	}, 5*followLimit, 10*time.Millisecond, "the same names, more rows: %v", lsNames(t, s.uri))
}

// TestTFIORefusesATableWithAnUnreadablePart: serve --tfio streams no table a file of which
// cannot be read (the error names it and --skip-unreadable), every tensor's when it streams
// them all, only the picked ones' tables' with --tfio-tensors.
func TestTFIORefusesATableWithAnUnreadablePart(t *testing.T) {
	dir := t.TempDir()
	paths := writeTrainParts(t, filepath.Join(dir, "train"), 2)
	truncateHalf(t, paths[1])
	require.NoError(t, dataset.Save(filepath.Join(dir, "other.npy"), []dataset.Tensor{{Dense: ndarray.New[int64](3)}}, dataset.WriteOptions{}))
	d, err := dataset.OpenDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	pick := func(name string) []tensor { return []tensor{d.Tensors[indexOfTensor(d.Tensors, name)]} }

	err = tfioWhole(d, d.Tensors, false)
	require.ErrorIs(t, err, dataset.ErrUnreadable)
	assert.ErrorContains(t, err, paths[1]+": ")
	assert.ErrorContains(t, err, "the table train is not streamed (serve --skip-unreadable streams the rest)")
	require.ErrorIs(t, tfioWhole(d, pick("train.label"), true), dataset.ErrUnreadable)
	assert.NoError(t, tfioWhole(d, pick("other"), true), "a whole table picked alone")
}
