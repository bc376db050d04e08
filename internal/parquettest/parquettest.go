// Package parquettest writes Parquet files of tensors for tests, as a pipeline would leave
// them in a dataset directory.
package parquettest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/parquet"
)

// WriteTensors writes tensors, a column each (dataset.Batch), as a Parquet file at path with
// opts, creating its directory; t fails on any error.
func WriteTensors(t testing.TB, path string, opts parquet.WriterOptions, tensors ...dataset.Tensor) {
	t.Helper()
	rec, err := dataset.Batch(memory.DefaultAllocator, tensors)
	require.NoError(t, err)
	defer rec.Release()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, rec.Schema(), opts)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close(), "closes the file too")
}
