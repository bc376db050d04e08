package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// golden is where the Arrow C++ 17 golden files are.
const golden = "../../ipc/testdata/arrow-cpp-17"

// serving is a `ndarrow serve` running in the test.
type serving struct {
	uri    string
	stdout *syncBuffer
	stderr *syncBuffer
	stop   func() int
}

// startServe runs `ndarrow serve ARGS DIR` on a free loopback port until the test ends.
func startServe(t *testing.T, dir string, args ...string) *serving {
	t.Helper()
	return startServeAt(t, freeAddr(t), dir, args...)
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()
	return lis.Addr().String()
}

// startServeAt runs `ndarrow serve --addr ADDR ARGS DIR` until the test ends.
func startServeAt(t *testing.T, addr, dir string, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{uri: "grpc://" + addr, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(append([]string{"serve", "--addr", addr}, args...), dir), s.stdout, s.stderr)
	}()
	var once sync.Once
	var code int
	s.stop = func() int { once.Do(func() { cancel(); code = <-done }); return code }
	require.Eventually(t, func() bool { return strings.Contains(s.stdout.String(), "serving") }, 10*time.Second, 10*time.Millisecond)
	t.Cleanup(func() { s.stop() })
	return s
}

// TestServeRefusesWhatIsNotADirectory: serve on a missing directory or a plain file fails at
// once with status 1 and one line, instead of serving nothing.
func TestServeRefusesWhatIsNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for dir, reason := range map[string]string{
		filepath.Join(t.TempDir(), "nonexistent"): "no such file or directory",
		file: "not a directory",
	} {
		code, stdout, stderr := runCLI("serve", "--addr", "127.0.0.1:0", dir)
		assert.Equal(t, exitFail, code)
		assert.Empty(t, stdout)
		assert.Equal(t, "ndarrow serve: "+dir+": "+reason+"\n", stderr)
	}
}

// TestServeIgnoresFilesThatAreNotTensors: the golden folder holds .bin and .jsonl files beside
// the tensor files; serve says nothing about them. A file whose name says it is a tensor file
// but that does not read — cut short, empty, one of two files of one base name — is named.
func TestServeIgnoresFilesThatAreNotTensors(t *testing.T) {
	s := startServe(t, golden)
	for _, ext := range []string{".bin", ".jsonl"} {
		assert.NotContains(t, s.stderr.String(), ext+":", "no word about files that are not tensor files")
	}
	// batch_tensors.arrows holds the tensors of batch_tensors.arrow, under the same names:
	// never joined (they were, as a table of twice the rows, with no word), each named.
	assert.Equal(t, 2, strings.Count(s.stderr.String(), "\n"), s.stderr.String())
	assert.Contains(t, s.stderr.String(), "ndarrow serve: unreadable: "+golden+"/batch_tensors.arrow: batch_tensors.arrows beside it: ")
	assert.Contains(t, s.stderr.String(), "ndarrow serve: unreadable: "+golden+"/batch_tensors.arrows: batch_tensors.arrow beside it: ")
	assert.Contains(t, s.stdout.String(), "serving 28 tensors")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.npy"), nil, 0o644))
	b, err := os.ReadFile(filepath.Join(golden, "batch_tensors.arrow"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.arrow"), b[:len(b)/2], 0o644))
	s = startServe(t, dir)
	assert.Equal(t, 2, strings.Count(s.stderr.String(), "unreadable: "), "only the tensor files that cannot be read: %s", s.stderr.String())
	assert.Contains(t, s.stderr.String(), "cut.arrow: ")
	assert.Contains(t, s.stderr.String(), "empty.npy: ", "an empty part is a part dropped as much as one cut short")
	assert.NotContains(t, s.stderr.String(), "notes.txt")
}

// TestHelpIsTheSameEverywhere: help CMD, CMD -h and CMD --help print one full help on stdout
// with status 0, for every command.
func TestHelpIsTheSameEverywhere(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			code, want, stderr := runCLI("help", c.name)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			assert.True(t, strings.HasPrefix(want, "usage: ndarrow "+c.name), want)
			for _, flag := range []string{"-h", "--help", "-help"} {
				code, got, stderr := runCLI(c.name, flag)
				assert.Equal(t, exitOK, code, "%s %s", c.name, flag)
				assert.Empty(t, stderr)
				assert.Equal(t, want, got, "%s %s", c.name, flag)
			}
		})
	}
	_, convert, _ := runCLI("help", "convert")
	for _, f := range outputFormats {
		assert.Contains(t, convert, "\n  "+f.name+" ", "convert's help lists every output format")
	}
	assert.Contains(t, convert, "--tensor")
}

// TestConvertTakesTheFormatFromOUT: without --to the extension decides; --to overrides it.
func TestConvertTakesTheFormatFromOUT(t *testing.T) {
	in := filepath.Join(golden, "dense_int32_4x3_strided.tensor")
	dir := t.TempDir()
	for _, out := range []string{"x.npy", "x.arrows", "x.coo", "x.tensor"} {
		code, _, stderr := runCLI("convert", in, filepath.Join(dir, out))
		require.Equal(t, exitOK, code, "%s: %s", out, stderr)
	}
	npy, err := os.ReadFile(filepath.Join(dir, "x.npy"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(npy), "\x93NUMPY"))

	code, _, stderr := runCLI("convert", "--to", "npy", in, filepath.Join(dir, "y.data"))
	require.Equal(t, exitOK, code, stderr)
	y, err := os.ReadFile(filepath.Join(dir, "y.data"))
	require.NoError(t, err)
	assert.Equal(t, npy, y, "--to overrides the extension")

	// An extension that names no format is a usage error, as an unknown --to is, for every
	// command that writes a file; nothing is written.
	for _, args := range [][]string{
		{"convert", in, filepath.Join(dir, "y.what")},
		{"take", "--rows", "0", filepath.Join(golden, "batch_tensors.arrows"), filepath.Join(dir, "y.what")},
		{"convert", "--to", "what", in, filepath.Join(dir, "y.npy")},
	} {
		code, stdout, stderr := runCLI(args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		require.Len(t, lines, 2, stderr)
		assert.Contains(t, lines[0], "(tensor, npy, npz, arrow, arrows, coo, csr, csc, csf, parquet, tfrecord, tensorproto)")
		assert.True(t, strings.HasPrefix(lines[1], "usage: ndarrow "+args[0]), stderr)
		assert.NoFileExists(t, filepath.Join(dir, "y.what"))
	}
}

// TestTensorPicksOne: --tensor picks one tensor of a file of several, for convert and put.
func TestTensorPicksOne(t *testing.T) {
	in := filepath.Join(golden, "batch_tensors.arrows")
	out := filepath.Join(t.TempDir(), "one.npy")
	code, _, stderr := runCLI("convert", "--tensor", "batch_tensors.images", in, out)
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ := runCLI("inspect", "--json", out)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, `"shape":[4,2,3]`)

	code, _, stderr = runCLI("convert", in, out)
	assert.Equal(t, exitFail, code, "five tensors do not go into one .npy")
	assert.Contains(t, stderr, "holds 5 tensors")
	code, _, stderr = runCLI("convert", "--tensor", "nope", in, out)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, `no tensor "nope" (it holds batch_tensors.images, batch_tensors.perm, batch_tensors.tokens, batch_tensors.ids, batch_tensors.nested)`)

	s := startServe(t, t.TempDir(), "--writable")
	code, _, stderr = runCLI("put", "--tensor", "batch_tensors.tokens", "--name", "toks", s.uri, in)
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ = runCLI("ls", s.uri)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "toks")
	assert.NotContains(t, stdout, "images")

	code, _, stderr = runCLI("delete", s.uri, "toks")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ = runCLI("ls", s.uri)
	require.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "toks", "delete removed it")
	code, _, stderr = runCLI("delete", s.uri, "toks")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "no such tensor")
}

// TestOneErrorLinePerFailure: each bad input gives one line naming the file once and saying
// what is wrong — missing, empty, cut short, of no known format — and inspect
// prints no table header for files it cannot read.
func TestOneErrorLinePerFailure(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	tensor, err := os.ReadFile(filepath.Join(golden, "dense_float_rank3.tensor"))
	require.NoError(t, err)
	for path, reason := range map[string]string{
		filepath.Join(dir, "missing.npy"):            "no such file or directory",
		write("empty.npy", nil):                      "the file is empty",
		write("cut.tensor", tensor[:40]):             "the file ends inside its first message's metadata",
		write("cut.npy", []byte("\x93NUM")):          "the file ends inside its magic",
		write("notes.txt", []byte("hello\n")):        "not a tensor file: neither NumPy .npy or .npz, Arrow IPC, Parquet nor TFRecord",
		write("body.tensor", tensor[:len(tensor)-5]): "input ends inside the body",
	} {
		code, stdout, stderr := runCLI("inspect", path)
		assert.Equal(t, exitFail, code, path)
		assert.Empty(t, stdout, "no table header for a file that cannot be read")
		assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		assert.Equal(t, 1, strings.Count(stderr, path), "the file named once: %s", stderr)
		assert.Contains(t, stderr, reason)
	}

	// An output that cannot be written names itself, not the hidden temporary file.
	out := filepath.Join(t.TempDir(), "no-such-dir", "x.npy")
	code, _, stderr := runCLI("convert", filepath.Join(golden, "dense_float_rank3.tensor"), out)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow convert: "+out+": no such file or directory\n", stderr)
	if os.Geteuid() != 0 { // root writes anywhere
		locked := filepath.Join(t.TempDir(), "locked")
		require.NoError(t, os.Mkdir(locked, 0o500))
		out := filepath.Join(locked, "x.npy")
		code, _, stderr := runCLI("convert", filepath.Join(golden, "dense_float_rank3.tensor"), out)
		assert.Equal(t, exitFail, code)
		assert.Equal(t, "ndarrow convert: "+out+": permission denied\n", stderr)
	}
}

// TestOutputFilesFollowTheUmask: convert and get create files as os.Create would.
func TestOutputFilesFollowTheUmask(t *testing.T) {
	in := filepath.Join(golden, "dense_float_rank3.tensor")
	s := startServe(t, golden)
	for _, umask := range []int{0o022, 0o077, 0o002} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		conv := filepath.Join(dir, "c.npy")
		code, _, stderr := runCLI("convert", in, conv)
		require.Equal(t, exitOK, code, stderr)
		got := filepath.Join(dir, "g.npy")
		code, _, stderr = runCLI("get", s.uri, "dense_float_rank3", got)
		require.Equal(t, exitOK, code, stderr)
		syscall.Umask(old)
		for _, p := range []string{conv, got} {
			st, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o666&^umask), st.Mode().Perm(), "%s with umask %03o", filepath.Base(p), umask)
		}
	}
}

// TestLsAndInspectAgree: ls --json and inspect --json print the shared fields alike.
func TestLsAndInspectAgree(t *testing.T) {
	s := startServe(t, golden)
	code, ls, stderr := runCLI("ls", "--json", s.uri)
	require.Equal(t, exitOK, code, stderr)
	listed := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(ls), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		listed[m["name"].(string)] = m
	}
	files, err := filepath.Glob(filepath.Join(golden, "*.tensor"))
	require.NoError(t, err)
	code, inspected, stderr := runCLI(append([]string{"inspect", "--json"}, files...)...)
	require.Equal(t, exitOK, code, stderr)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(inspected), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		l, ok := listed[m["name"].(string)]
		require.True(t, ok, "%s is served", m["name"])
		for _, key := range []string{"kind", "dtype", "shape", "dim_names"} {
			assert.Equal(t, m[key], l[key], "%s: %s", m["name"], key)
		}
		n++
	}
	assert.Greater(t, n, 20)
}

// TestInspectSaysWhenAFileHoldsNoTensors: a record-batch file whose columns all have no tensor
// form (dates, times, timestamps) reads: inspect names each column with its Arrow type and why,
// in both modes, says the file holds no tensors, and exits 0; convert has nothing to write.
func TestInspectSaysWhenAFileHoldsNoTensors(t *testing.T) {
	path := "../../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/1.0.0-littleendian/generated_datetime.stream"
	const why = "times and dates are not mapped to tensors (cast them to int64 to read them as numbers)"
	code, stdout, stderr := runCLI("inspect", "--json", path)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "ndarrow inspect: "+path+": no tensors: none of its 15 columns has a tensor form\n", stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 15, "a line per column")
	for i, line := range lines {
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		assert.Equal(t, map[string]any{"name": "generated_datetime.f" + itoa(i), "column": "f" + itoa(i),
			"left_out": got["left_out"], "why": why}, got, "exactly these fields")
	}
	assert.Equal(t, "date32", gotField(t, lines[0], "left_out"))
	assert.Equal(t, "timestamp[s, tz=UTC]", gotField(t, lines[11], "left_out"), "the Arrow type as Arrow writes it, unescaped")
	assert.Contains(t, lines[11], `"timestamp[s, tz=UTC]"`)

	code, stdout, stderr = runCLI("inspect", path)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "ndarrow inspect: "+path+": no tensors: none of its 15 columns has a tensor form\n", stderr)
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 15)
	assert.Equal(t, "generated_datetime.f0: date32 left out: "+why, lines[0])
	assert.NotContains(t, stdout, "NAME", "no table without tensors")

	out := filepath.Join(t.TempDir(), "x.arrow")
	code, _, stderr = runCLI("convert", path, out)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow convert: "+path+": no tensors: none of its 15 columns has a tensor form (generated_datetime.f0 date32, "+
		"generated_datetime.f1 date64, generated_datetime.f2 time32[s], generated_datetime.f3 time32[ms], and 11 more)\n", stderr)
	assert.NoFileExists(t, out)
}

// gotField returns field of a JSON line.
func gotField(t *testing.T, line, field string) any {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m))
	return m[field]
}

// TestDirectoryIsOneDataset: a directory given to inspect, convert or put is every tensor file
// under it, under the names serve gives them (ls lists the same): a subdirectory's files
// (Hive-style key=value folders inside it included) are one table named after it, their
// tensors joined in path order; files that are not tensor files and hidden files are left
// alone; a broken file is one error line for inspect and fails convert and put, which take a
// dataset whole.
func TestDirectoryIsOneDataset(t *testing.T) {
	dir := t.TempDir()
	copyIn := func(src, name string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	copyIn(filepath.Join(golden, "dense_float_rank3.tensor"), "dense_float_rank3.tensor")
	copyIn(filepath.Join(golden, "multi_3.tensor"), "multi_3.tensor")
	copyIn("../../npy/testdata/numpy/u8_image.npy", "u8_image.npy")
	copyIn("../../npy/testdata/numpy-npz/positional.npz", "positional.npz")
	copyIn("../../npy/testdata/numpy/u8_image.npy", ".hidden.npy")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not tensors\n"), 0o644))
	for _, part := range []string{"sub/day=1", "sub/day=2", "sub/_temporary"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, part), 0o755))
	}
	copyIn("../../npy/testdata/numpy/u8_image.npy", "sub/day=1/part-0.npy")
	copyIn("../../npy/testdata/numpy/u8_image.npy", "sub/day=2/part-0.npy")
	copyIn("../../npy/testdata/numpy/u8_image.npy", "sub/day=2/part-1.npy")
	copyIn("../../npy/testdata/numpy/f32_scalar.npy", "sub/_temporary/part-9.npy")
	want := []string{"dense_float_rank3", "multi_3.0", "multi_3.1", "multi_3.2", "positional.arr_0", "positional.arr_1", "sub", "u8_image"}

	names := func(lines []inspection) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l.Name)
		}
		return out
	}
	described := inspectJSON(t, dir)
	assert.Equal(t, want, names(described))
	assert.Equal(t, []int64{24, 8, 3}, described[6].Shape, "three parts of 8 rows joined")

	s := startServe(t, dir)
	code, stdout, stderr := runCLI("ls", "--json", s.uri)
	require.Equal(t, exitOK, code, stderr)
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var l struct{ Name string }
		require.NoError(t, json.Unmarshal([]byte(line), &l))
		listed = append(listed, l.Name)
	}
	assert.Equal(t, want, listed, "serve gives the same names")

	out := filepath.Join(t.TempDir(), "all.npz")
	code, _, stderr = runCLI("convert", dir, out)
	require.Equal(t, exitOK, code, stderr)
	assert.Len(t, inspectJSON(t, out), len(want), "one archive of the whole dataset")

	other := startServe(t, t.TempDir(), "--writable")
	code, _, stderr = runCLI("put", other.uri, dir)
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ = runCLI("ls", other.uri)
	require.Equal(t, exitOK, code)
	for _, name := range want {
		assert.Contains(t, stdout, name)
	}

	// A broken file: inspect says so on one line and describes the rest; convert and put
	// refuse the dataset.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.npy"), []byte("\x93NUMPY\x01"), 0o644))
	code, stdout, stderr = runCLI("inspect", "--json", dir)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "broken.npy")
	assert.Equal(t, len(want), strings.Count(stdout, "\n"))
	code, _, stderr = runCLI("convert", dir, filepath.Join(t.TempDir(), "x.npz"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "broken.npy")
	code, _, stderr = runCLI("put", other.uri, dir)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "broken.npy")

	empty := t.TempDir()
	code, stdout, stderr = runCLI("inspect", empty)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "ndarrow inspect: "+empty+": no tensors: no tensor files\n", stderr)
}
