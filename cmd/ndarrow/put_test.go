package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/dataset/parquettest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
)

// TestPutChecksEveryTensorFirst: a file of several tensors, one of which Flight cannot carry
// (a scalar), stores none of them (not the ones before it, as it did), and the error names the
// tensor once; a bool tensor travels, and comes back as it went.
func TestPutChecksEveryTensorFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "arrays.npz")
	f, err := os.Create(path)
	require.NoError(t, err)
	z := npy.NewNpzWriter(f, false)
	require.NoError(t, z.Write("a", ndarray.Full[float32](1, 2, 2)))
	require.NoError(t, z.Write("mask", ndarray.Full(true, 2, 2)))
	require.NoError(t, z.Write("s", ndarray.Scalar[float32](1)))
	require.NoError(t, z.Write("h", ndarray.Full[float64](2, 3)))
	require.NoError(t, z.Close())
	require.NoError(t, f.Close())

	s := startServe(t, t.TempDir(), "--writable")
	code, stdout, stderr := runCLI("put", s.uri, path)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout, "nothing stored")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "arrays.s"), "the tensor named once: %s", stderr)
	code, stdout, _ = runCLI("ls", s.uri)
	assert.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "arrays.a")

	mask := filepath.Join(dir, "mask.npy")
	require.NoError(t, os.WriteFile(mask, npyOf(t, ndarray.Must(ndarray.FromSlice([]bool{true, false, false, true, true, false}, 3, 2))), 0o644))
	code, _, stderr = runCLI("put", s.uri, mask)
	require.Equal(t, exitOK, code, stderr)
	back := filepath.Join(dir, "back.npy")
	code, _, stderr = runCLI("get", s.uri, "mask", back)
	require.Equal(t, exitOK, code, stderr)
	want, _ := os.ReadFile(mask)
	got, _ := os.ReadFile(back)
	assert.Equal(t, want, got, "the bool tensor bit for bit")
}

func npyOf(t *testing.T, d *ndarray.Dense[bool]) []byte {
	var buf bytes.Buffer
	_, err := npy.Write(&buf, d)
	require.NoError(t, err)
	return buf.Bytes()
}

// TestTFRecordWarnsOfDroppedNames: a tf.train.Example has no place for dimension names; convert
// says which it dropped, as it does for .npy, and a TensorProto keeps them without a word.
func TestTFRecordWarnsOfDroppedNames(t *testing.T) {
	const named = "../../ipc/testdata/arrow-cpp-17/dense_float_rank3.tensor"
	dir := t.TempDir()
	code, _, stderr := runCLI("convert", named, filepath.Join(dir, "x.tfrecord"))
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "ndarrow convert: warning: dense_float_rank3: a tf.train.Example has no place for dimension names")
	code, _, stderr = runCLI("convert", "--to", "tensorproto", named, filepath.Join(dir, "y.tfrecord"))
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
}

// TestMixedDirectories: a directory mixing kinds fits no one output format; --pad writes
// ragged tensors dense (as RaggedTensor.to_tensor), --skip-unsupported leaves out what the
// format cannot hold, naming each on stderr, and every error names its tensor.
func TestMixedDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{
		"../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow",
		"../../npy/testdata/numpy/bool_mask.npy",
		"../../ipc/testdata/arrow-cpp-17/coo_double_4x6_i64.tensor",
	} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644))
	}
	out := t.TempDir()
	code, _, stderr := runCLI("convert", dir, filepath.Join(out, "all.npz"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "batch_tensors.tokens: a ragged array has no dense form")

	code, _, stderr = runCLI("convert", "--pad", "-1", dir, filepath.Join(out, "all.npz"))
	require.Equal(t, exitOK, code, stderr)
	f, err := dataset.Open(filepath.Join(out, "all.npz"), limits.Limits{})
	require.NoError(t, err)
	tokens, err := f.Tensor("all.tokens")
	require.NoError(t, err)
	d, err := dataset.DenseOf[float32](tokens)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{4, 3}, d.Shape(), "padded to the longest row")
	nested, err := f.Tensor("all.nested")
	require.NoError(t, err)
	assert.Equal(t, 3, nested.Shape().Rank())
	assert.Contains(t, d.Ravel(), float32(-1), "the padding")
	f.Release()

	code, _, stderr = runCLI("convert", dir, filepath.Join(out, "all.arrows"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "coo_double_4x6_i64: a sparse tensor is a record batch of its own")

	code, _, stderr = runCLI("convert", "--skip-unsupported", "--tensor", "", dir, filepath.Join(out, "some.tensor"))
	require.Equal(t, exitOK, code, stderr)
	for _, name := range []string{"batch_tensors.tokens", "batch_tensors.ids", "batch_tensors.nested", "bool_mask"} {
		assert.Contains(t, stderr, "warning: "+name+": skipped: ", "each skipped tensor named")
	}
	assert.NotContains(t, stderr, "batch_tensors.images: skipped")
}

// TestProgressOfLongWrites: convert and inspect draw how much of a large tensor went through,
// as get does; below the threshold, or off a terminal, nothing is drawn.
func TestProgressOfLongWrites(t *testing.T) {
	var sink, drawn bytes.Buffer
	p := &progressWriter{w: &sink, bar: newProgressBar(&drawn, "x.npy"), total: 4 << 20}
	for range 4 {
		_, err := p.Write(make([]byte, 1<<20))
		require.NoError(t, err)
	}
	p.bar.finish()
	assert.Equal(t, 4<<20, sink.Len(), "every byte passed on")
	assert.Contains(t, drawn.String(), "x.npy [##############################] 4.0 MiB / 4.0 MiB 100%")
	assert.True(t, strings.HasSuffix(drawn.String(), "\n"), "the line ended")

	var quiet bytes.Buffer
	w, done := withProgress(&sink, &quiet, "y", 1<<30)
	_, _ = w.Write([]byte("abc"))
	done()
	assert.Empty(t, quiet.String(), "not a terminal: no bar")
	assert.Equal(t, int64(6*8), valueBytes(dataset.Tensor{Dense: ndarray.New[float64](2, 3)}))
}

// TestDirectoryOfPartsInTheCLI: inspect of a folder of part files (as Spark and pyarrow write
// them) lists one table named after the folder, and convert writes it whole, where the parts
// were listed one by one and convert refused their row counts.
func TestDirectoryOfPartsInTheCLI(t *testing.T) {
	train := filepath.Join(t.TempDir(), "train")
	for i, rows := range []int64{50, 30} {
		emb := ndarray.Full(float32(i), rows, 8)
		parquettest.WriteTensors(t, filepath.Join(train, fmt.Sprintf("part-%d.parquet", i)), parquet.WriterOptions{},
			dataset.Tensor{Name: "emb", Kind: dataset.KindFixedShape, Dense: emb})
	}
	code, stdout, stderr := runCLI("inspect", train)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "train.emb")
	assert.Contains(t, stdout, "(80, 8)")
	assert.NotContains(t, stdout, "part-0")
	out := filepath.Join(t.TempDir(), "train.tfrecord")
	code, _, stderr = runCLI("convert", train, out)
	require.Equal(t, exitOK, code, stderr)
	code, stdout, _ = runCLI("inspect", out)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "(80, 8)")
}

// TestServeIsReadOnlyUnlessWritable: a server started without --writable refuses put and
// delete, each with one line saying which flag enables them (after the line saying the token
// goes in clear), and holds what it held; with --writable it takes them, and warns at start
// when it has no token.
func TestServeIsReadOnlyUnlessWritable(t *testing.T) {
	served := t.TempDir()
	x := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, os.WriteFile(x, npyOf(t, ndarray.Must(ndarray.FromSlice([]bool{true, false}, 2))), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(served, "kept.npy"), npyOf(t, ndarray.Must(ndarray.FromSlice([]bool{true}, 1))), 0o644))
	const enables = "serve --writable (flight.Options.Writable) takes uploads and deletes\n"
	for _, tc := range []struct {
		name     string
		args     []string
		put, del string // stderr
		warns    bool
	}{
		{"read-only", nil, "ndarrow put: flight: x: flight: the server is read-only: an upload is refused; " + enables,
			"ndarrow delete: flight: the server is read-only: a delete is refused; " + enables, false},
		{"writable", []string{"--writable"}, "", "", true},
		{"writable with a token", []string{"--writable", "--token", "t0k"}, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServeProcess(t, served, tc.args...)
			token := []string{"--token", "t0k"}
			inClear := "ndarrow %s: the token goes to " + p.uri + " in clear (no TLS): anyone on the network path can read it; dial grpc+tls:// beyond loopback or a trusted network\n"
			code, _, stderr := runCLI(append(append([]string{"put"}, token...), p.uri, x)...)
			assert.Equal(t, fmt.Sprintf(inClear, "put")+tc.put, stderr)
			assert.Equal(t, map[bool]int{true: exitOK, false: exitFail}[tc.put == ""], code)
			code, _, stderr = runCLI(append(append([]string{"delete"}, token...), p.uri, "x")...)
			assert.Equal(t, fmt.Sprintf(inClear, "delete")+tc.del, stderr)
			assert.Equal(t, map[bool]int{true: exitOK, false: exitFail}[tc.del == ""], code)
			code, stdout, stderr := runCLI(append(append([]string{"ls"}, token...), p.uri)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, "kept ")
			assert.NotContains(t, stdout, "x ")
			p.stop(t)
			warning := `level=WARN msg="flight: the server takes uploads and deletes (serve --writable) from any client that reaches it: it has no token (serve --token, $NDARROW_TOKEN)"`
			assert.Equal(t, tc.warns, strings.Contains(p.stderr.String(), warning), p.stderr.String())
		})
	}
	code, _, stderr := runCLI("serve", "--grace", "-1s", served)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "ndarrow serve: --grace -1s: a negative duration\n")
}

// TestTokenFromTheEnvironment: without --token, serve and the clients take $NDARROW_TOKEN; an
// explicit --token "" sends none; and no --help prints the token.
func TestTokenFromTheEnvironment(t *testing.T) {
	t.Setenv("NDARROW_TOKEN", "env-s3cret")
	s := startServe(t, t.TempDir())
	code, _, stderr := runCLI("ls", s.uri)
	assert.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCLI("ls", "--token", "", s.uri)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "Unauthenticated")
	for _, command := range []string{"serve", "ls", "get", "put", "delete"} {
		code, stdout, _ := runCLI(command, "--help")
		assert.Equal(t, exitOK, code, command)
		assert.Contains(t, stdout, "bearer token (default $NDARROW_TOKEN)\n", command)
		assert.NotContains(t, stdout, "env-s3cret", command)
	}
}
