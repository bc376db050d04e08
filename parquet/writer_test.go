package parquet_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
)

// table is a record batch of tensor columns: a fixed_shape_tensor with dimension names, a
// ragged list and a nested ragged list, rows rows.
func table(t testing.TB, mem memory.Allocator, rows int64) arrow.Record {
	images := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, float32(rows*6), 1)).Reshape(rows, 2, 3))
	splits := make([]int64, rows+1)
	var values []int64
	for i := range rows {
		for j := range i % 4 {
			values = append(values, i*10+j)
		}
		splits[i+1] = int64(len(values))
	}
	ids, err := ragged.FromRowSplits(values, splits)
	require.NoError(t, err)
	rec, err := dataset.Batch(mem, []dataset.Tensor{
		{Name: "images", Kind: dataset.KindFixedShape, DimNames: []string{"", "h", "w"}, Dense: images},
		{Name: "ids", Kind: dataset.KindRagged, Ragged: ids},
	})
	require.NoError(t, err)
	return rec
}

// opened opens a Parquet file ndarrow wrote with arrow-go's low-level reader. (arrow-go v17's
// pqarrow cannot read an extension type with nested storage, so the values are checked leaf
// by leaf and the stored Arrow schema through ndarrow's own IPC decoder.)
func opened(t *testing.T, b []byte) *file.Reader {
	r, err := file.NewParquetReader(bytes.NewReader(b))
	require.NoError(t, err)
	return r
}

// storedSchema decodes the footer's ARROW:schema with ndarrow's IPC decoder.
func storedSchema(t *testing.T, r *file.Reader) *arrow.Schema {
	v := r.MetaData().KeyValueMetadata().FindValue("ARROW:schema")
	require.NotNil(t, v, "the Arrow schema is stored")
	msg, err := base64.StdEncoding.DecodeString(*v)
	require.NoError(t, err)
	schema, err := ipc.ReadSchema(msg, ipc.BatchOptions{})
	require.NoError(t, err)
	return schema
}

// leaves returns every value of leaf column col, all row groups in order.
func leaves[T int64 | float32](t *testing.T, r *file.Reader, col int) []T {
	var out []T
	for g := range r.NumRowGroups() {
		cr, err := r.RowGroup(g).Column(col)
		require.NoError(t, err)
		n := r.MetaData().RowGroup(g).NumRows() * 8
		def, rep := make([]int16, n), make([]int16, n)
		vals := make([]T, n)
		var read int
		switch c := cr.(type) {
		case *file.Float32ColumnChunkReader:
			_, read, err = c.ReadBatch(n, any(vals).([]float32), def, rep)
		case *file.Int64ColumnChunkReader:
			_, read, err = c.ReadBatch(n, any(vals).([]int64), def, rep)
		}
		require.NoError(t, err)
		out = append(out, vals[:read]...)
	}
	return out
}

func TestWriteKeepsTensorColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := table(t, mem, 10)
	defer rec.Release()
	codecs := map[parquet.Compression]compress.Compression{
		parquet.Zstd: compress.Codecs.Zstd, parquet.Snappy: compress.Codecs.Snappy,
		parquet.Uncompressed: compress.Codecs.Uncompressed, parquet.Gzip: compress.Codecs.Gzip}
	for c, codec := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := parquet.NewWriter(&buf, rec.Schema(), parquet.WriterOptions{Compression: c, Allocator: mem})
			require.NoError(t, err)
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())

			r := opened(t, buf.Bytes())
			defer r.Close()
			stored := storedSchema(t, r)
			assert.True(t, stored.Equal(rec.Schema()), "the stored Arrow schema is the batches':\n%v\n%v", stored, rec.Schema())
			_, ok := stored.Field(0).Type.(*arrowtensor.FixedShapeTensorType)
			assert.True(t, ok, "arrow.fixed_shape_tensor is stored")
			assert.Equal(t, arrow.LARGE_LIST, stored.Field(1).Type.ID(), "a large_list is stored as one (written as a LIST)")

			col, err := r.MetaData().RowGroup(0).ColumnChunk(0)
			require.NoError(t, err)
			assert.Equal(t, codec, col.Compression())
			stats, err := col.Statistics()
			require.NoError(t, err)
			assert.NotNil(t, stats, "statistics are written")

			orig, _, err := dataset.FromRecords(rec.Schema(), []arrow.Record{rec}, "f")
			require.NoError(t, err)
			images := orig[0].Dense.(*ndarray.Dense[float32]).Ravel()
			assert.Equal(t, images, leaves[float32](t, r, 0), "the images' values, row-major")
			ids := orig[1].Ragged.(*ragged.Array[int64]).FlatValues()
			assert.Equal(t, ids, leaves[int64](t, r, 1), "the ids' flat values")
		})
	}
}

func TestRowGroupsEndByBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := table(t, mem, 1000)
	defer rec.Release()
	orig, _, err := dataset.FromRecords(rec.Schema(), []arrow.Record{rec}, "f")
	require.NoError(t, err)
	// images: 24 bytes a row; ids: an offset and 1.5 int64 on average: 44 KiB in all.
	for _, batch := range []int64{100, 1000, 7} { // small batches, one big one, odd sizes
		t.Run(fmt.Sprint(batch), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := parquet.NewWriter(&buf, rec.Schema(), parquet.WriterOptions{RowGroupBytes: 8 << 10, Allocator: mem})
			require.NoError(t, err)
			for lo := int64(0); lo < 1000; lo += batch { // streaming: batch by batch
				part := rec.NewSlice(lo, min(1000, lo+batch))
				require.NoError(t, w.Write(part))
				part.Release()
			}
			require.NoError(t, w.Close())
			r := opened(t, buf.Bytes())
			defer r.Close()
			assert.EqualValues(t, 1000, r.NumRows())
			groups := r.NumRowGroups()
			assert.Greater(t, groups, 3, "about 44 KiB of Arrow data in row groups of 8 KiB")
			assert.Less(t, groups, 20)
			for g := range groups {
				assert.LessOrEqual(t, r.MetaData().RowGroup(g).NumRows(), int64(8<<10/24), "row group %d", g)
			}
			assert.Equal(t, orig[0].Dense.(*ndarray.Dense[float32]).Ravel(), leaves[float32](t, r, 0), "every value, in order")
			assert.Equal(t, orig[1].Ragged.(*ragged.Array[int64]).FlatValues(), leaves[int64](t, r, 1))
		})
	}
}

func TestParseCompression(t *testing.T) {
	for s, want := range map[string]parquet.Compression{"": parquet.Zstd, "ZSTD": parquet.Zstd, "snappy": parquet.Snappy, "none": parquet.Uncompressed, "uncompressed": parquet.Uncompressed, "gzip": parquet.Gzip} {
		got, err := parquet.ParseCompression(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	_, err := parquet.ParseCompression("lz4")
	assert.ErrorIs(t, err, parquet.ErrUnsupported)
}

// TestCloseLeavesTheWriterOpen: Close finishes the Parquet file, not the caller's file: the
// caller writes after it and closes it.
func TestCloseLeavesTheWriterOpen(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := table(t, mem, 10)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{Allocator: mem})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "a second Close does nothing")
	st, err := f.Stat()
	require.NoError(t, err, "the file is open")
	_, err = f.Write([]byte("after"))
	require.NoError(t, err)
	require.NoError(t, f.Close(), "the caller closes it")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, st.Size()+5, int64(len(b)))
	r := opened(t, b[:st.Size()])
	defer r.Close()
	assert.Equal(t, int64(10), r.NumRows())
}

// TestOpenMapsTheFile: Open reads a Parquet file from a mapping; a file that shrinks under it
// is an error naming the file, not a fault.
func TestOpenMapsTheFile(t *testing.T) {
	rec := table(t, memory.DefaultAllocator, 2000)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{RowGroupBytes: 16 << 10, Compression: parquet.Uncompressed})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	r, err := parquet.Open(path, parquet.ReaderOptions{})
	require.NoError(t, err)
	require.Greater(t, r.NumRowGroups(), 2)
	first, err := r.ReadRowGroup(0)
	require.NoError(t, err)
	first.Release()
	require.NoError(t, os.Truncate(path, 4096))
	_, err = r.ReadRowGroup(r.NumRowGroups() - 1)
	require.Error(t, err)
	assert.ErrorIs(t, err, dataset.ErrFileChanged)
	assert.Contains(t, err.Error(), path+": file changed while being read")
	require.NoError(t, r.Close())

	_, err = parquet.Open(filepath.Join(t.TempDir(), "missing.parquet"), parquet.ReaderOptions{})
	assert.ErrorIs(t, err, os.ErrNotExist)
}
