package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ipc"
)

// TestConvertToParquet writes every golden tensor file's tensors as Parquet and checks the
// Arrow schema stored in the footer is the one the same tensors get in an Arrow IPC file, and
// that the rows are all there; TestEveryGoldenTensorSurvives reads every tensor back.
func TestConvertToParquet(t *testing.T) {
	dir := t.TempDir()
	for _, in := range []string{golden + "/batch_tensors.arrow", "../../npy/testdata/numpy/f32_c_rank3.npy"} {
		base := filepath.Join(dir, filepath.Base(in))
		code, _, stderr := runCLI("convert", in, base+".arrow")
		require.Equal(t, exitOK, code, stderr)
		code, _, stderr = runCLI("convert", "--parquet-compression", "snappy", in, base+".parquet")
		require.Equal(t, exitOK, code, stderr)

		arrowFile, err := os.ReadFile(base + ".arrow")
		require.NoError(t, err)
		want, err := ipc.ReadSchema(arrowFile, ipc.BatchOptions{})
		require.NoError(t, err)

		pq, err := os.ReadFile(base + ".parquet")
		require.NoError(t, err)
		r, err := file.NewParquetReader(bytes.NewReader(pq))
		require.NoError(t, err)
		v := r.MetaData().KeyValueMetadata().FindValue("ARROW:schema")
		require.NotNil(t, v)
		msg, err := base64.StdEncoding.DecodeString(*v)
		require.NoError(t, err)
		got, err := ipc.ReadSchema(msg, ipc.BatchOptions{})
		require.NoError(t, err)
		assert.True(t, want.Equal(got), "%s: the stored schema\n%v\nis the Arrow file's\n%v", in, got, want)
		rows := inspectJSON(t, in)[0].Shape[0]
		assert.Equal(t, rows, r.NumRows(), in)
		col, err := r.MetaData().RowGroup(0).ColumnChunk(0)
		require.NoError(t, err)
		assert.Equal(t, "SNAPPY", col.Compression().String())
		r.Close()
	}
	code, _, stderr := runCLI("convert", "--parquet-compression", "lz4", golden+"/batch_tensors.arrow", filepath.Join(dir, "x.parquet"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "not zstd, snappy, gzip or none")
}

// TestConvertByteStreamSplit: --parquet-encoding byte_stream_split writes a tensor column's
// pages in that encoding, which inspect reads back to the same values; a column it cannot
// encode is one error line, and an unknown encoding a usage error.
func TestConvertByteStreamSplit(t *testing.T) {
	dir := t.TempDir()
	in := "../../npy/testdata/numpy/f32_c_rank3.npy"
	out := filepath.Join(dir, "x.parquet")
	code, _, stderr := runCLI("convert", "--parquet-encoding", "byte_stream_split", in, out)
	require.Equal(t, exitOK, code, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	r, err := file.NewParquetReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer r.Close()
	col, err := r.MetaData().RowGroup(0).ColumnChunk(0)
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(col.Encodings()), "BYTE_STREAM_SPLIT")
	assert.Equal(t, inspectJSON(t, in)[0].SHA256, inspectJSON(t, out)[0].SHA256)

	code, _, stderr = runCLI("convert", "--parquet-encoding", "byte_stream_split", golden+"/batch_tensors.arrow", filepath.Join(dir, "y.parquet"))
	assert.NotEqual(t, exitOK, code)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, stderr)
	assert.Contains(t, stderr, "byte_stream_split")
	assert.NoFileExists(t, filepath.Join(dir, "y.parquet"))
	code, _, stderr = runCLI("convert", "--parquet-encoding", "delta", in, filepath.Join(dir, "z.parquet"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "not plain or byte_stream_split")
}

// TestServeParquetDataset: a directory holding a table of Parquet parts in Hive-style
// folders serves one tensor per column, the parts' rows joined, to ls and get; a Parquet
// file the reader refuses is one line naming it.
func TestServeParquetDataset(t *testing.T) {
	dir := t.TempDir()
	for _, part := range []string{"day=1/part-0.parquet", "day=2/part-0.parquet"} {
		out := filepath.Join(dir, "batches", part)
		require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
		code, _, stderr := runCLI("convert", golden+"/batch_tensors.arrow", out)
		require.Equal(t, exitOK, code, stderr)
	}
	s := startServe(t, dir)
	code, stdout, stderr := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	for _, name := range []string{"batches.images", "batches.perm", "batches.tokens", "batches.ids", "batches.nested"} {
		assert.Contains(t, stdout, name)
	}
	want := inspectJSON(t, golden+"/batch_tensors.arrow")[0] // images, 7 rows
	got := filepath.Join(t.TempDir(), "images.arrow")
	code, _, stderr = runCLI("get", s.uri, "batches.images", got)
	require.Equal(t, exitOK, code, stderr)
	back := inspectJSON(t, got)[0]
	assert.Equal(t, append([]int64{2 * want.Shape[0]}, want.Shape[1:]...), back.Shape, "both parts' rows")
	assert.Equal(t, want.Kind, back.Kind)
	assert.Equal(t, want.DimNames, back.DimNames)

	bad := filepath.Join(dir, "bad.parquet")
	require.NoError(t, os.WriteFile(bad, []byte("PAR1 not really parquet PAR1"), 0o644))
	code, _, stderr = runCLI("inspect", bad)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, bad)
	assert.Contains(t, stderr, "invalid Parquet file")
}
