package ndbeam_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndbeam"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// colors are the categories of writeCategories, row r's colors[(r/7)%5].
var colors = []string{"red", "green", "blue", "violet", "amber"}

// writeCategories writes at path a Parquet file of rows rows of a label (the row) and a
// category (dictionary<int32, utf8>, its Arrow schema stored) in row groups of about 40 rows,
// each row group's values coming in another order.
func writeCategories(t *testing.T, path string, rows int) {
	t.Helper()
	typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "cat", Type: typ, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		require.NoError(t, b.Field(1).(*array.BinaryDictionaryBuilder).AppendString(colors[(r/7)%5]))
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, schema, parquet.WriterOptions{RowGroupBytes: 40 * 12})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// TestCategoriesReadAndWritten: a category of a Parquet file of many row groups, each its own
// dictionary, read by Read and written by Write as Arrow IPC files (each part's batches'
// dictionaries unified into one), streams and Parquet, reads back a dictionary of utf8 with
// every row's value.
func TestCategoriesReadAndWritten(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	require.NoError(t, os.MkdirAll(in, 0o755))
	const rows = 400
	writeCategories(t, filepath.Join(in, "part-0.parquet"), rows)
	for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet} {
		t.Run(string(format), func(t *testing.T) {
			out := filepath.Join(dir, "out-"+string(format))
			p, s := beam.NewPipelineWithRoot()
			batches := ndbeam.Read(s, in, ndbeam.ReadOptions{BatchRows: 30, SplitBytes: 1 << 10})
			ndbeam.Write(s, out, batches, ndbeam.WriteOptions{Format: format, PartRows: 150})
			require.NoError(t, run(t, p))
			parts := requireOnlyParts(t, out, string(format))
			require.Greater(t, parts, 1)
			if format == dataset.FormatArrow {
				entries, err := os.ReadDir(out)
				require.NoError(t, err)
				for _, e := range entries {
					b, err := os.ReadFile(filepath.Join(out, e.Name()))
					require.NoError(t, err)
					dicts, records, err := ipc.FileBlocks(b, ipc.BatchOptions{})
					require.NoError(t, err)
					assert.Len(t, dicts, 1, "%s: one dictionary for its %d batches", e.Name(), len(records))
				}
			}
			tab, err := table.Open(out, table.Options{})
			require.NoError(t, err)
			defer tab.Release()
			require.Equal(t, int64(rows), tab.NumRows())
			all := make([]int64, rows)
			for i := range all {
				all[i] = int64(i)
			}
			got, err := tab.Take(context.Background(), all, nil)
			require.NoError(t, err)
			cat, err := got.Column("cat")
			require.NoError(t, err)
			require.NotNil(t, cat.Dictionary, "a dictionary still")
			assert.Equal(t, "dictionary<values=utf8, indices=int32, ordered=false>", cat.Dictionary.Type.String())
			label, err := got.Column("label")
			require.NoError(t, err)
			labels := must(dataset.DenseOf[int64](label)).Data()
			values := must(dataset.DenseOf[string](cat)).Data()
			seen := map[int64]bool{}
			for i, l := range labels {
				require.Equal(t, colors[(l/7)%5], values[i], "row of label %d", l)
				seen[l] = true
			}
			assert.Len(t, seen, rows, "every row once")
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
