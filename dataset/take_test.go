package dataset

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
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
	writeArrowBatches(t, path, 3, func(k int) []Tensor {
		emb := ndarray.New[float32](100, 16)
		for i := range emb.Ravel() {
			emb.Ravel()[i] = float32(k*10000 + i)
		}
		ids := ndarray.New[int64](100)
		for i := range ids.Ravel() {
			ids.Ravel()[i] = int64(k*100 + i)
		}
		return []Tensor{{Name: "emb", Column: "emb", Dense: emb}, {Name: "ids", Column: "ids", Dense: ids}}
	})
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

// writeEmbTable writes rows x 256 float32 emb beside an int64 label as uncompressed Parquet
// with ndarrow's writer (its default pages and page index) at path.
func writeEmbTable(t testing.TB, path string, rows int64) {
	emb := ndarray.New[float32](rows, 256)
	for i := range emb.Ravel() {
		emb.Ravel()[i] = float32(i % 9973)
	}
	label := ndarray.New[int64](rows)
	for i := range label.Ravel() {
		label.Ravel()[i] = int64(i)
	}
	require.NoError(t, Save(path, []Tensor{{Name: "emb", Column: "emb", Dense: emb}, {Name: "label", Column: "label", Dense: label}},
		WriteOptions{ParquetCompression: parquet.Uncompressed}))
}

// objectTake takes rows (table rows, ascending) of every column of the one Parquet object d
// scanned, fragment by fragment, and returns the bytes and requests it fetched.
func objectTake(t testing.TB, d *Dir, rows []int64) (bytes, requests int64, got []Tensor) {
	obj := objectOf(d.files[0])
	b0, r0 := obj.Stats().Bytes(), obj.Stats().Requests()
	frags := d.Sources[0].ChunkRows()
	first := int64(0)
	for i, n := range frags {
		var local []int64
		for _, r := range rows {
			if r >= first && r < first+n {
				local = append(local, r-first)
			}
		}
		if len(local) > 0 {
			ts, err := ReadRowsOf(context.Background(), d.Sources, i, local)
			require.NoError(t, err)
			got = append(got, ts...)
		}
		first += n
	}
	return obj.Stats().Bytes() - b0, obj.Stats().Requests() - r0, got
}

// TestObjectParquetTakeFetchesRows: random rows of an uncompressed Parquet object ndarrow
// wrote fetch the offset indexes, then each row's page head and bytes: at most 64 KiB a row
// besides 1 MiB of index, in at most 4 requests a row; the values are the rows'.
func TestObjectParquetTakeFetchesRows(t *testing.T) {
	srv := storetest.StartS3(t, "take")
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeEmbTable(t, path, 8192) // 8 MiB
	srv.PutFile(t, "take", "t.parquet", path)
	d, err := ScanDir("s3://take/t.parquet", limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	require.Len(t, d.Sources, 2)
	rows := []int64{3, 700, 701, 2048, 4000, 6001, 8191}
	fetched, requests, got := objectTake(t, d, rows)
	assert.LessOrEqual(t, fetched, int64(len(rows))*64<<10+1<<20, "bytes fetched")
	assert.LessOrEqual(t, requests, int64(4*len(rows)), "requests")
	t.Logf("%d rows: %d bytes, %d requests", len(rows), fetched, requests)
	requireEmbRows(t, got, rows)

	// The page index is fetched once: the same take again fetches only the rows' pages, and
	// gives the same rows.
	again, requestsAgain, gotAgain := objectTake(t, d, rows)
	t.Logf("again: %d bytes, %d requests", again, requestsAgain)
	assert.Less(t, again, fetched, "no page index the second time")
	assert.Less(t, requestsAgain, requests)
	requireEmbRows(t, gotAgain, rows)
}

// requireEmbRows checks that got, the tensors objectTake took of a table writeEmbTable wrote,
// fragment by fragment, are its rows rows: every label and every value of emb.
func requireEmbRows(t *testing.T, got []Tensor, rows []int64) {
	t.Helper()
	var labels []int64
	var embs []float32
	for _, tn := range got {
		switch tn.Column {
		case "label":
			l, err := DenseOf[int64](tn)
			require.NoError(t, err)
			labels = append(labels, l.Ravel()...)
		case "emb":
			e, err := DenseOf[float32](tn)
			require.NoError(t, err)
			require.Equal(t, int64(256), e.Shape()[1])
			embs = append(embs, e.Ravel()...)
		default:
			t.Fatalf("a column %q", tn.Column)
		}
	}
	require.Equal(t, rows, labels, "the rows' labels")
	require.Len(t, embs, len(rows)*256, "the rows' emb")
	for i, r := range rows {
		for j := range int64(256) {
			if want := float32((r*256 + j) % 9973); embs[int64(i)*256+j] != want {
				t.Fatalf("row %d of emb, value %d: %v, want %v", r, j, embs[int64(i)*256+j], want)
			}
		}
	}
}

// BenchmarkObjectParquetTake: 256 random rows of a 256 MiB uncompressed Parquet object
// (262144 x 256 float32 and an int64 label) on the S3 test server: bytes and requests a row.
func BenchmarkObjectParquetTake(b *testing.B) {
	srv := storetest.StartS3(b, "take")
	path := filepath.Join(b.TempDir(), "t.parquet")
	writeEmbTable(b, path, 262144)
	srv.PutFile(b, "take", "t.parquet", path)
	r := rand.New(rand.NewPCG(7, 7))
	rows := make([]int64, 0, 256)
	for _, i := range r.Perm(262144)[:256] {
		rows = append(rows, int64(i))
	}
	slices.Sort(rows)
	var fetched, requests int64
	b.ResetTimer()
	for range b.N {
		d, err := ScanDir("s3://take/t.parquet", limits.Limits{})
		require.NoError(b, err)
		obj := objectOf(d.files[0])
		objectTake(b, d, rows)
		fetched, requests = obj.Stats().Bytes(), obj.Stats().Requests() // the scan's too
		d.Release()
	}
	b.ReportMetric(float64(fetched)/256, "bytes/row")
	b.ReportMetric(float64(requests)/256, "requests/row")
}

// TestTakeRowsOf: rows across parts, as if joined — dense (contiguous or not, with nulls in
// one part) and ragged — equal Concat then TakeRows.
func TestTakeRowsOf(t *testing.T) {
	a, err := ndarray.FromSlice([]int32{0, 1, 2, 3}, 2, 2)
	require.NoError(t, err)
	b, err := ndarray.FromSlice([]int32{4, 6, 5, 7}, 2, 2)
	require.NoError(t, err)
	empty := ndarray.New[int32](0, 2)
	parts := []Tensor{{Name: "x", Dense: a}, {Name: "x", Dense: empty}, {Name: "x", Dense: b.Transpose(), Valid: []bool{true, false}}}
	rows := []int64{3, 0, 2, 2, 1}
	joined, err := Concat(parts)
	require.NoError(t, err)
	want, err := joined.TakeRows(rows)
	require.NoError(t, err)
	got, err := TakeRowsOf(parts, rows)
	require.NoError(t, err)
	assert.Equal(t, want.Dense.String(), got.Dense.String())
	assert.Equal(t, []int32{6, 7, 0, 1, 4, 5, 4, 5, 2, 3}, got.Dense.(*ndarray.Dense[int32]).Ravel())
	assert.Equal(t, []bool{false, true, true, true, true}, got.Valid)
	_, err = TakeRowsOf(parts, []int64{4})
	require.ErrorIs(t, err, ndarray.ErrShape)
}
