package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/table"
)

// TestMain runs main itself when a test runs this binary as the command.
func TestMain(m *testing.M) {
	if os.Getenv("NDBEAM_CONVERT_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// convert runs the command with args, as `go run ./examples/convert ARGS` would.
func convert(t *testing.T, args ...string) (int, string) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "NDBEAM_CONVERT_AS_MAIN=1", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err)
	return 0, string(out)
}

// TestConvert: the example pipeline converts a directory of TFRecord parts into Parquet parts
// on Prism, every row once; without --input it says so and exits 1.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	require.NoError(t, os.MkdirAll(in, 0o755))
	for k := range int64(3) {
		label := ndarray.FromFunc(func(i []int64) int64 { return k*400 + i[0] }, 400)
		require.NoError(t, dataset.Save(filepath.Join(in, "train-0000"+string(rune('0'+k))+"-of-00003.tfrecord"),
			[]dataset.Tensor{{Name: "label", Column: "label", Dense: label}}, dataset.WriteOptions{}))
	}
	out := filepath.Join(dir, "out")
	code, output := convert(t, "--input", in, "--output", out, "--format", "parquet", "--batch-rows", "100", "--runner=prism")
	require.Equal(t, 0, code, output)
	tab, err := table.Open(out, table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	rows := make([]int64, tab.NumRows())
	for i := range rows {
		rows[i] = int64(i)
	}
	got, err := tab.Take(context.Background(), rows, []string{"label"})
	require.NoError(t, err)
	labels, err := dataset.DenseOf[int64](got.Columns[0])
	require.NoError(t, err)
	all := labels.Ravel()
	slices.Sort(all)
	require.Len(t, all, 1200)
	for i, l := range all {
		require.Equal(t, int64(i), l)
	}
	parts, _ := filepath.Glob(filepath.Join(out, "part-*-of-*.parquet"))
	assert.NotEmpty(t, parts)

	code, output = convert(t, "--output", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, output, "--input and --output are required")
}
