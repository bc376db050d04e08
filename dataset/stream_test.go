package dataset_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// TestParquetStream: a Parquet file of tensor and number columns in uncompressed PLAIN
// pages is written as an Arrow stream whose tensors are the file's, as Open and Write give
// them; a compressed file, and one with a column of nulls or strings, are left to them.
func TestParquetStream(t *testing.T) {
	dir := t.TempDir()
	const rows = 5000
	emb := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, rows*16, 1)).Reshape(rows, 4, 4))
	label := ndarray.Must(ndarray.Arange[int64](0, rows, 1))
	tensors := []dataset.Tensor{
		{Name: "emb", Column: "emb", Dense: emb},
		{Name: "label", Column: "label", Dense: label},
	}
	save := func(name string, c parquet.Compression, ts []dataset.Tensor) string {
		path := filepath.Join(dir, name)
		require.NoError(t, dataset.Save(path, ts, dataset.WriteOptions{ParquetCompression: c}))
		return path
	}
	read := func(b []byte) []dataset.Tensor {
		ts, left, err := dataset.Read(b, "t", limits.Limits{})
		require.NoError(t, err)
		require.Empty(t, left)
		return ts
	}
	plain := save("plain.parquet", parquet.Uncompressed, tensors)
	f, err := dataset.Open(plain, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	var want bytes.Buffer
	require.NoError(t, dataset.Write(&want, dataset.FormatArrows, f.Tensors, dataset.WriteOptions{}))
	for _, populate := range []bool{false, true} {
		var got bytes.Buffer
		s := dataset.OpenParquetStream(plain, limits.Limits{})
		require.NotNil(t, s)
		require.NoError(t, s.Write(&got, parquet.StreamOptions{Populate: populate}))
		require.NoError(t, s.Close())
		a, b := read(want.Bytes()), read(got.Bytes())
		require.Len(t, b, len(a))
		for i := range a {
			assert.Equal(t, a[i].Name, b[i].Name)
			assert.Equal(t, a[i].Shape(), b[i].Shape())
			var va, vb bytes.Buffer
			_, err := a[i].WriteValues(&va, 0)
			require.NoError(t, err)
			_, err = b[i].WriteValues(&vb, 0)
			require.NoError(t, err)
			assert.Equal(t, va.Bytes(), vb.Bytes(), "%s", a[i].Name)
		}
	}

	words := ndarray.Must(ndarray.FromSlice([]string{"a", "b"}, 2))
	for name, path := range map[string]string{
		"ZSTD":    save("zstd.parquet", parquet.Zstd, tensors),
		"strings": save("strings.parquet", parquet.Uncompressed, []dataset.Tensor{{Name: "w", Column: "w", Dense: words}}),
		"nulls": save("nulls.parquet", parquet.Uncompressed, []dataset.Tensor{
			{Name: "n", Column: "n", Dense: ndarray.Must(ndarray.FromSlice([]int64{1, 2}, 2)), Valid: []bool{true, false}}}),
		"not Parquet": filepath.Join(dir, "missing.parquet"),
	} {
		assert.Nil(t, dataset.OpenParquetStream(path, limits.Limits{}), name)
	}
	_, err = os.Stat(plain)
	require.NoError(t, err)
}
