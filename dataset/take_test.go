package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestTensorTakeRows: rows of dense tensors (numbers, strings; row-major and not) with their
// validity, in any order and repeated, as copies; rows outside, and a sparse tensor, refused.
func TestTensorTakeRows(t *testing.T) {
	d, err := ndarray.FromSlice([]int32{0, 1, 2, 3, 4, 5}, 3, 2)
	require.NoError(t, err)
	tn := Tensor{Name: "x", Dense: d, Valid: []bool{true, false, true}}
	got, err := tn.TakeRows([]int64{2, 0, 2})
	require.NoError(t, err)
	assert.Equal(t, []int32{4, 5, 0, 1, 4, 5}, got.Dense.(*ndarray.Dense[int32]).Ravel())
	assert.Nil(t, got.Valid, "no null row taken")
	got.Dense.(*ndarray.Dense[int32]).Set(9, 0, 0)
	assert.Equal(t, int32(4), d.Get(2, 0), "a copy")

	tr := Tensor{Name: "t", Dense: d.Transpose()} // 2 rows of 3, column-major
	got, err = tr.TakeRows([]int64{1})
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 3, 5}, got.Dense.(*ndarray.Dense[int32]).Ravel())

	s, err := ndarray.FromSlice([]string{"a", "b"}, 2)
	require.NoError(t, err)
	got, err = Tensor{Name: "s", Dense: s}.TakeRows([]int64{1, 1, 0})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "b", "a"}, got.Dense.(*ndarray.Dense[string]).Ravel())

	for _, rows := range [][]int64{{3}, {-1}} {
		_, err = tn.TakeRows(rows)
		require.ErrorIs(t, err, ndarray.ErrShape)
	}
}

// TestReadRowsChecksRows: rows out of order, repeated or outside the chunk are refused before
// anything is read.
func TestReadRowsChecksRows(t *testing.T) {
	d, err := ndarray.FromSlice([]float32{0, 1, 2, 3}, 4)
	require.NoError(t, err)
	src := residentSource(&File{Path: "x.npy"}, Tensor{Name: "x", Dense: d}, limits.Limits{}.WithDefaults())
	assert.Equal(t, []int64{4}, src.ChunkRows())
	got, err := src.ReadRows(t.Context(), 0, []int64{1, 3})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 3}, got.Dense.(*ndarray.Dense[float32]).Ravel())
	for _, rows := range [][]int64{{3, 1}, {1, 1}, {4}, {-1}} {
		_, err := src.ReadRows(t.Context(), 0, rows)
		require.ErrorIs(t, err, ndarray.ErrShape, "%v", rows)
	}
	_, err = src.ReadRows(t.Context(), 1, nil)
	require.ErrorIs(t, err, ndarray.ErrShape)
}

// TestObjectReadRowsFetchesOnlyTheRows: rows of a .npy object are fetched a run of adjacent
// rows a request; rows of an Arrow IPC object's batch, for all its columns at once, are that
// batch alone, fetched once.
func TestObjectReadRowsFetchesOnlyTheRows(t *testing.T) {
	srv := storetest.StartS3(t, "rows")
	d := ndarray.New[float32](100, 64) // 256 bytes a row
	for i := range d.Ravel() {
		d.Ravel()[i] = float32(i)
	}
	var b bytes.Buffer
	require.NoError(t, writeNpy(&b, Tensor{Kind: KindDense, Dense: d}))
	srv.Put(t, "rows", "x.npy", b.Bytes())
	rd, err := ScanDir("s3://rows/x.npy", limits.Limits{})
	require.NoError(t, err)
	defer rd.Release()
	require.Len(t, rd.Sources, 1)
	obj := objectOf(rd.files[0])
	before, reqs := obj.Stats().Bytes(), obj.Stats().Requests()
	got, err := rd.Sources[0].ReadRows(t.Context(), 0, []int64{1, 2, 3, 90})
	require.NoError(t, err)
	assert.Equal(t, int64(4*256), obj.Stats().Bytes()-before, "the rows' bytes")
	assert.Equal(t, int64(2), obj.Stats().Requests()-reqs, "a run of rows a request")
	want, err := Tensor{Dense: d}.TakeRows([]int64{1, 2, 3, 90})
	require.NoError(t, err)
	assert.Equal(t, want.Dense.String(), got.Dense.String())

	dir := t.TempDir()
	path := filepath.Join(dir, "t.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	var w *arrowipc.FileWriter
	for k := range 3 {
		emb := ndarray.New[float32](100, 16)
		for i := range emb.Ravel() {
			emb.Ravel()[i] = float32(k*10000 + i)
		}
		ids := ndarray.New[int64](100)
		for i := range ids.Ravel() {
			ids.Ravel()[i] = int64(k*100 + i)
		}
		rec, err := Batch(memory.DefaultAllocator, []Tensor{{Name: "emb", Column: "emb", Dense: emb}, {Name: "ids", Column: "ids", Dense: ids}})
		require.NoError(t, err)
		if w == nil {
			w, err = arrowipc.NewFileWriter(f, arrowipc.WithSchema(rec.Schema()))
			require.NoError(t, err)
		}
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	srv.PutFile(t, "rows", "t.arrow", path)
	ad, err := ScanDir("s3://rows/t.arrow", limits.Limits{})
	require.NoError(t, err)
	defer ad.Release()
	require.Len(t, ad.Sources, 2)
	obj = objectOf(ad.files[0])
	before, reqs = obj.Stats().Bytes(), obj.Stats().Requests()
	ts, err := ReadRowsOf(t.Context(), ad.Sources, 1, []int64{0, 99})
	require.NoError(t, err)
	assert.Equal(t, ad.Sources[0].DecodeBytes()[1], obj.Stats().Bytes()-before, "batch 1, once")
	assert.Equal(t, int64(1), obj.Stats().Requests()-reqs)
	ids, err := DenseOf[int64](ts[1])
	require.NoError(t, err)
	assert.Equal(t, []int64{100, 199}, ids.Ravel())
	assert.Equal(t, "t.ids", ts[1].Name)
}
