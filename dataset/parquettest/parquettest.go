// Package parquettest writes Parquet files of tensors for tests, as a pipeline would leave
// them in a dataset directory.
package parquettest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
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
	require.NoError(t, w.Close())
	require.NoError(t, f.Close(), "the writer leaves the file open")
}

// WriteNullElement writes a Parquet file at path of one column emb, a fixed_size_list<float32>[2]
// of rows rows in row groups of about 128 bytes, whose element 0 of row rows-3 is null: its
// footer reads, and the row group holding that row is no tensor (arrowtensor.ErrNull).
func WriteNullElement(t testing.TB, path string, rows int) {
	t.Helper()
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 2, arrow.PrimitiveTypes.Float32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	for i := range rows {
		b.Append(true)
		vb.AppendValues([]float32{float32(i), float32(i)}, []bool{i != rows-3, true})
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: col.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(rows))
	defer rec.Release()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, schema, parquet.WriterOptions{RowGroupBytes: 128})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}
