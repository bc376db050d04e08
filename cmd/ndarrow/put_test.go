package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// TestPutChecksEveryTensorFirst: a file of several tensors, one of which Flight cannot carry,
// stores none of them (not the ones before it, as it did), and the error names the tensor
// once.
func TestPutChecksEveryTensorFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "arrays.npz")
	f, err := os.Create(path)
	require.NoError(t, err)
	z := npy.NewNpzWriter(f, false)
	require.NoError(t, z.Write("a", ndarray.Full[float32](1, 2, 2)))
	require.NoError(t, z.Write("mask", ndarray.Full(true, 2, 2)))
	require.NoError(t, z.Write("h", ndarray.Full[float64](2, 3)))
	require.NoError(t, z.Close())
	require.NoError(t, f.Close())

	s := startServe(t, t.TempDir())
	code, stdout, stderr := runCLI("put", s.uri, path)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout, "nothing stored")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "arrays.mask"), "the tensor named once: %s", stderr)
	code, stdout, _ = runCLI("ls", s.uri)
	assert.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "arrays.a")
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
