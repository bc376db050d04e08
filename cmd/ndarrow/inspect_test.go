package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
)

// The golden files live beside the packages that read them; the CLI tests use the same copies.
var goldenDirs = []string{"../../ipc/testdata/arrow-cpp-17", "../../npy/testdata/numpy", "../../arrowtensor/testdata/arrow-cpp-17",
	"../../parquet/testdata/arrow-cpp-17-parquet"}

// goldenExpectations returns every expected.jsonl line by name, with the file it came from.
func goldenExpectations(t *testing.T) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, dir := range goldenDirs {
		f, err := os.Open(filepath.Join(dir, "expected.jsonl"))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
			out[m["name"].(string)] = m
		}
		f.Close()
	}
	return out
}

func TestInspectGoldenFiles(t *testing.T) {
	want := goldenExpectations(t)
	seen := map[string]bool{}
	for _, dir := range goldenDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		require.NoError(t, err)
		for _, path := range files {
			ext := filepath.Ext(path)
			if ext != ".tensor" && ext != ".npy" && ext != ".arrow" && ext != ".arrows" && ext != ".parquet" {
				continue
			}
			base := strings.TrimSuffix(filepath.Base(path), ext)
			t.Run(filepath.Base(path), func(t *testing.T) {
				code, stdout, stderr := runCLI("inspect", "--json", "--splits", path)
				if e, ok := want[base]; ok && e["kind"] == "error" {
					assert.Equal(t, exitFail, code)
					assert.Empty(t, stdout)
					assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr")
					return
				}
				assert.Equal(t, exitOK, code, stderr)
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				require.NotEmpty(t, lines)
				for _, line := range lines {
					var got map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &got))
					name := got["name"].(string)
					e, ok := want[name]
					require.True(t, ok, "no expectation for %s", name)
					seen[name] = true
					for _, field := range []string{"kind", "dtype", "shape", "sha256", "dim_names", "nnz", "nrows", "nvals", "row_splits"} {
						if v, ok := e[field]; ok {
							assert.Equal(t, v, got[field], "%s %s", name, field)
						}
					}
				}
			})
		}
	}
	for name, e := range want {
		switch e["kind"] {
		case "dense", "fixed_shape_tensor", "ragged":
			assert.True(t, seen[name], "%s was not reported", name)
		}
	}
}

func TestInspectTable(t *testing.T) {
	code, stdout, stderr := runCLI("inspect", "../../ipc/testdata/arrow-cpp-17/dense_float_7.tensor")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "NAME")
	assert.Contains(t, stdout, "NAME           KIND   DTYPE    SHAPE  NNZ  NULLS  DIM NAMES  SHA256\n")
	assert.Contains(t, stdout, "dense_float_7  dense  float32  (7,)   7    0      x")
	code, stdout, stderr = runCLI("inspect", "../../ipc/testdata/arrow-cpp-17/csr_float_4x4_i32.tensor")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "csr_float_4x4_i32  sparse_csr  float32  (4, 4)  6")
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.bin")
	require.NoError(t, os.WriteFile(garbage, []byte("hello, world"), 0o644))
	truncated := filepath.Join(dir, "cut.tensor")
	b, err := os.ReadFile("../../ipc/testdata/arrow-cpp-17/dense_float_7.tensor")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(truncated, b[:len(b)-3], 0o644))
	badSparse := filepath.Join(dir, "bad.tensor")
	b, err = os.ReadFile("../../ipc/testdata/arrow-cpp-17/csr_float_4x4_i32.tensor")
	require.NoError(t, err)
	// The int32 indptr [0 2 3 4 6] starts the body: make its second pointer 5, past the third.
	body := 8 + int(binary.LittleEndian.Uint32(b[4:]))
	require.Equal(t, uint32(2), binary.LittleEndian.Uint32(b[body+4:]))
	binary.LittleEndian.PutUint32(b[body+4:], 5)
	require.NoError(t, os.WriteFile(badSparse, b, 0o644))
	for name, tc := range map[string]struct {
		args []string
		code int
		msg  string
	}{
		"garbage":           {[]string{"--json", garbage}, exitFail, "not a tensor file"},
		"truncated":         {[]string{"--json", truncated}, exitFail, "unexpected EOF"},
		"missing":           {[]string{filepath.Join(dir, "nope.npy")}, exitFail, "no such file"},
		"no file":           {nil, exitUsage, "usage: ndarrow inspect"},
		"unknown flag":      {[]string{"--yaml", garbage}, exitUsage, "flag provided but not defined"},
		"bad sparse tensor": {[]string{badSparse}, exitFail, "indptr decreases"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runCLI(append([]string{"inspect"}, tc.args...)...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr, tc.msg)
			if tc.code == exitFail {
				assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr: %q", stderr)
			}
		})
	}
}

// TestInspectCompressedStream reads a stream whose batches arrow-go compressed: the zero-copy
// reader refuses it and inspect reads it through arrow-go's reader instead.
func TestInspectCompressedStream(t *testing.T) {
	d := ndarray.New[int16](6, 2)
	for i := range d.Data() {
		d.Data()[i] = int16(i)
	}
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "values", d, nil, 4)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "z.arrows")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := arrowipc.NewWriter(f, arrowipc.WithSchema(recs[0].Schema()), arrowipc.WithZstd())
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	code, stdout, stderr := runCLI("inspect", "--json", path)
	require.Equal(t, exitOK, code, stderr)
	var got inspection
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, []int64{6, 2}, got.Shape)
	assert.Equal(t, "fixed_shape_tensor", got.Kind)
	var want bytes.Buffer
	_, _ = d.WriteTo(&want)
	sum := sha256.Sum256(want.Bytes())
	assert.Equal(t, hex.EncodeToString(sum[:]), got.SHA256)
}
