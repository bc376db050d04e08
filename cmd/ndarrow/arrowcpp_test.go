package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/flightreplay"
	"github.com/ndarrow/ndarrow/limits"
)

// TestArrowCppFlightServer runs ls and get against Arrow C++ 17's Flight server, replayed
// from flight's recording: a table of five tensor columns listed column by column, written
// whole into the formats that hold several, and one column at a time with --tensor.
func TestArrowCppFlightServer(t *testing.T) {
	rec, err := flightreplay.Read("../../flight/testdata/arrow-cpp-17/flight.bin.zst")
	require.NoError(t, err)
	srv, err := flightreplay.Serve(rec)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	uri := srv.URI()

	code, stdout, stderr := runCLI("ls", uri)
	require.Equal(t, exitOK, code, stderr)
	for _, line := range []string{
		"big               fixed_shape_tensor  float32  (32768, 256)   32768  33554432",
		"table.images      fixed_shape_tensor  float32  (20000, 8, 8)  20000  5120000",
		"table.masks       fixed_shape_tensor  bool     (20000, 64)    20000  160000",
		"table.tokens      ragged              int32    (20000, -1)    20000  -",
	} {
		require.Contains(t, stdout, line)
	}
	code, stdout, stderr = runCLI("ls", "--json", uri)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, `{"name":"table.labels","kind":"fixed_shape_tensor","dtype":"int64","shape":[20000,1],"dim_names":[],"rows":20000,"bytes":160000,"endpoints":1,"table":"table"}`)

	dir := t.TempDir()
	for _, out := range []string{"t.arrow", "t.parquet", "t.tfrecord"} {
		path := filepath.Join(dir, out)
		code, stdout, stderr = runCLI("get", uri, "table", path)
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, 5, strings.Count(stdout, "→ "+path), stdout)
		if out == "t.tfrecord" {
			continue // a tf.train.Example per row: features, not columns
		}
		f, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err, out)
		var names []string
		for _, x := range f.Tensors {
			names = append(names, x.Name)
		}
		require.Equal(t, []string{"t.images", "t.masks", "t.labels", "t.tokens", "t.embeddings"}, names, out)
		f.Release()
	}
	npz := filepath.Join(dir, "t.npz")
	code, _, stderr = runCLI("get", uri, "table", npz)
	require.Equal(t, exitFail, code)
	require.Contains(t, stderr, "table.tokens: a ragged array has no dense form")
	code, stdout, stderr = runCLI("get", "--skip-unsupported", uri, "table", npz)
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, 4, strings.Count(stdout, "→ "+npz), stdout)

	one := filepath.Join(dir, "one.npy")
	code, _, stderr = runCLI("get", uri, "table", one)
	require.Equal(t, exitFail, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "table is a table of 5 tensors (images, masks, labels, tokens, embeddings); a .npy file holds one: pick it with --tensor")
	_, err = os.Stat(one)
	require.ErrorIs(t, err, os.ErrNotExist)
	for _, pick := range []string{"images", "table.images"} {
		code, stdout, stderr = runCLI("get", "--tensor", pick, uri, "table", one)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, stdout, "table.images: fixed_shape_tensor float32 (20000, 8, 8) → "+one)
	}
	code, stdout, stderr = runCLI("get", uri, "table.labels", one)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "table.labels: fixed_shape_tensor int64 (20000, 1)")
	code, stdout, stderr = runCLI("get", uri, "big", filepath.Join(dir, "big.npy"))
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "big: fixed_shape_tensor float32 (32768, 256)")
}
