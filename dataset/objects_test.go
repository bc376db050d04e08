package dataset

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
)

// writeTable writes a Parquet file of cols float32 tensor columns named c0, c1, … of
// [rows, 256], row groups of rowGroupBytes, uncompressed, and returns its path.
func writeTable(t testing.TB, dir string, cols int, rows int64, rowGroupBytes int64) string {
	t.Helper()
	var tensors []Tensor
	for c := range cols {
		d := ndarray.New[float32](rows, 256)
		for i := range d.Ravel() {
			d.Ravel()[i] = float32(i%4096)*0.25 + float32(c)
		}
		tensors = append(tensors, Tensor{Name: fmt.Sprintf("c%d", c), Kind: KindFixedShape, Dense: d})
	}
	rec, err := Batch(memory.DefaultAllocator, tensors)
	require.NoError(t, err)
	defer rec.Release()
	path := filepath.Join(dir, "table.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{Compression: parquet.Uncompressed, RowGroupBytes: rowGroupBytes})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	return path
}

// objectOf returns the object a File fetched from.
func objectOf(f *File) *objstore.Object { return f.remote.Object() }

// TestObjectParquetFetchesOnlyWhatItReads: scanning a Parquet object fetches its ends and its
// footer; reading one column's first row group fetches that column chunk and nothing else;
// the values equal the local file's.
func TestObjectParquetFetchesOnlyWhatItReads(t *testing.T) {
	srv := storetest.StartS3(t, "tables")
	path := writeTable(t, t.TempDir(), 4, 4096, 1<<20) // 4 columns of 4 MiB, row groups of 1 MiB
	srv.PutFile(t, "tables", "t/table.parquet", path)

	d, err := ScanDir("s3://tables/t", limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	require.Len(t, d.Sources, 4)
	require.Len(t, d.files, 1)
	obj := objectOf(d.files[0])
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, st.Size(), obj.Size)

	footer := footerLength(t, path)
	assert.Equal(t, int64(probeSize+8+footer), obj.Stats().Bytes(), "the first 16 bytes, the footer, its length and magic")
	assert.Equal(t, int64(3), obj.Stats().Requests(), "listed, not opened: the two ends, then the footer")

	src := d.Sources[2]
	require.Equal(t, "table.c2", src.Name)
	rl, err := parquet.Open(path, parquet.ReaderOptions{Columns: []string{"c2"}})
	require.NoError(t, err)
	defer rl.Close()
	chunk := rl.ChunkRanges(0)
	require.Len(t, chunk, 1)
	before := obj.Stats().Bytes()
	for chunk0, err := range src.Chunks(t.Context()) {
		require.NoError(t, err)
		want, err := rl.ReadRowGroup(0)
		require.NoError(t, err)
		assert.Equal(t, want.NumRows(), chunk0.Rows())
		want.Release()
		break
	}
	assert.Equal(t, chunk[0].Length, obj.Stats().Bytes()-before, "the column chunk alone")
	assert.Equal(t, int64(4), obj.Stats().Requests())

	// The whole column, chunk by chunk, reads as the local file's.
	got, err := src.Read(t.Context())
	require.NoError(t, err)
	ld, err := ScanDir(filepath.Dir(path), limits.Limits{})
	require.NoError(t, err)
	defer ld.Release()
	want, err := ld.Sources[2].Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, ld.Sources[2].DecodeBytes()[0]/decodeFactor*(decodeFactor+1), src.DecodeBytes()[0], "the fetched chunk counted too")
	assert.True(t, want.Dense.(*ndarray.Dense[float32]).Equal(got.Dense.(*ndarray.Dense[float32])))
	assert.Equal(t, int64(4096), got.Rows())
}

// footerLength returns the length of the Parquet file's footer.
func footerLength(t testing.TB, path string) int64 {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	n := len(b)
	return int64(b[n-8]) | int64(b[n-7])<<8 | int64(b[n-6])<<16 | int64(b[n-5])<<24
}

// BenchmarkObjectParquet reads a Parquet object of 1 GiB (64 MiB with -short: 4 float32
// tensor columns, row groups of 128 MiB, uncompressed) from a real S3-compatible store on
// 127.0.0.1: one column of one row group (metrics: the bytes and requests fetched, against the
// column chunk's and the footer's bytes), and the whole object — fetched into memory as
// dataset.Open fetches it, read into tensors by dataset.Open, and, the baseline, one plain GET
// of the same object through the same client into fresh memory. GB/s counts the object's
// bytes.
func BenchmarkObjectParquet(b *testing.B) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	srv := storetest.StartS3(b, "bench")
	path := writeTable(b, b.TempDir(), 4, size/4/1024, 0)
	f, err := os.Open(path)
	require.NoError(b, err)
	st, err := f.Stat()
	require.NoError(b, err)
	_, err = srv.Client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String("t/table.parquet"), Body: f, ContentLength: aws.Int64(st.Size())})
	require.NoError(b, err)
	f.Close()
	syscall.Sync()       // the 2 GiB just written flushed before anything is timed,
	debug.FreeOSMemory() // and the table's memory collected and given back
	uri := "s3://bench/t/table.parquet"
	name := fmt.Sprintf("%dMiB", size>>20)

	b.Run(name+"/one-column-one-row-group", func(b *testing.B) {
		rl, err := parquet.Open(path, parquet.ReaderOptions{Columns: []string{"c1"}})
		require.NoError(b, err)
		chunk := rl.ChunkRanges(0)[0].Length
		rl.Close()
		footer := footerLength(b, path)
		var fetched, requests int64
		for range b.N {
			d, err := ScanDir("s3://bench/t", limits.Limits{})
			require.NoError(b, err)
			for _, err := range d.Sources[1].Chunks(b.Context()) {
				require.NoError(b, err)
				break
			}
			fetched, requests = objectOf(d.files[0]).Stats().Bytes(), objectOf(d.files[0]).Stats().Requests()
			d.Release()
		}
		b.ReportMetric(float64(fetched), "fetched-B")
		b.ReportMetric(float64(requests), "requests")
		b.ReportMetric(float64(chunk), "chunk-B")
		b.ReportMetric(float64(footer), "footer-B")
		b.ReportMetric(float64(fetched-chunk-footer), "extra-B")
	})
	b.Run(name+"/whole-object/plain-GET", func(b *testing.B) {
		b.SetBytes(st.Size())
		for range b.N {
			// One GET of the whole object through the same client, into fresh memory.
			obj, err := objstore.Open(context.Background(), uri)
			require.NoError(b, err)
			buf := make([]byte, obj.Size)
			_, err = obj.ReadRange(context.Background(), buf, 0)
			require.NoError(b, err)
		}
		b.ReportMetric(float64(st.Size())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
	b.Run(name+"/whole-object/fetch", func(b *testing.B) {
		b.SetBytes(st.Size())
		for range b.N {
			obj, err := objstore.Open(context.Background(), uri)
			require.NoError(b, err)
			buf, err := obj.NewBuffer()
			require.NoError(b, err)
			require.NoError(b, buf.Fetch(context.Background(), objstore.Range{Off: 0, Len: obj.Size}))
			buf.Mapping().Release()
		}
		b.ReportMetric(float64(st.Size())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
	b.Run(name+"/whole-object/dataset.Open", func(b *testing.B) {
		b.SetBytes(st.Size())
		for range b.N {
			f, err := Open(uri, limits.Limits{})
			require.NoError(b, err)
			require.Len(b, f.Tensors, 4)
			f.Release()
		}
		b.ReportMetric(float64(st.Size())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// TestSourceShare: the n shares of a Source hold its chunks once each, in row order, whole
// files and row groups; their rows add up and their values joined are the whole.
func TestSourceShare(t *testing.T) {
	dir := t.TempDir()
	path := writeTable(t, dir, 1, 1000, 64<<10) // row groups of 64 rows
	require.NoError(t, os.Rename(path, filepath.Join(dir, "part-0.parquet")))
	path = writeTable(t, dir, 1, 100, 1<<30) // one row group
	require.NoError(t, os.Rename(path, filepath.Join(dir, "part-1.parquet")))
	d, err := ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	require.Len(t, d.Sources, 1)
	src := d.Sources[0]
	whole, err := src.Read(t.Context())
	require.NoError(t, err)
	total := src.NumChunks()
	require.Greater(t, total, 10, "row groups of the first file, and the second file whole")
	for _, n := range []int{1, 2, 3, 5, total, total + 3} {
		var rows int64
		var parts []*ndarray.Dense[float32]
		chunks := 0
		for k := range n {
			share, ok := src.Share(k, n)
			if !ok {
				assert.Greater(t, n, total, "only more shares than chunks leave one empty")
				continue
			}
			rows += share.Rows()
			chunks += share.NumChunks()
			got, err := share.Read(t.Context())
			require.NoError(t, err)
			assert.Equal(t, share.Rows(), got.Rows())
			parts = append(parts, got.Dense.(*ndarray.Dense[float32]))
		}
		assert.Equal(t, src.Rows(), rows, "n=%d", n)
		assert.Equal(t, total, chunks, "n=%d", n)
		joined, err := ndarray.Concat(0, parts...)
		require.NoError(t, err)
		assert.True(t, whole.Dense.(*ndarray.Dense[float32]).Equal(joined), "n=%d", n)
	}
	_, ok := src.Share(2, 2)
	assert.False(t, ok)
}

// TestObjectsHeldWithinMaxCopySize: a prefix of objects other than Parquet, which are fetched
// whole, is served only as far as they fit in MaxCopySize together; the rest are skipped,
// each with an error naming it, and Parquet objects (footers only) are not counted.
func TestObjectsHeldWithinMaxCopySize(t *testing.T) {
	srv := storetest.StartS3(t, "held")
	stream := func(rows int) []byte { // an Arrow IPC stream: read whole
		d := ndarray.New[float32](int64(rows), 256)
		var b bytes.Buffer
		require.NoError(t, Write(&b, FormatArrows, []Tensor{{Name: "v", Kind: KindFixedShape, Dense: d}}, WriteOptions{}))
		return b.Bytes()
	}
	for i := range 3 {
		srv.Put(t, "held", fmt.Sprintf("p/x%d.arrows", i), stream(400)) // ~400 KiB each
	}
	path := writeTable(t, t.TempDir(), 1, 2048, 1<<20) // 2 MiB of Parquet
	srv.PutFile(t, "held", "p/t.parquet", path)
	lim := limits.Limits{MaxCopySize: 1 << 20}
	d, err := ScanDir("s3://held/p", lim)
	require.NoError(t, err)
	defer d.Release()
	var names []string
	for _, s := range d.Sources {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"t.c0", "x0.v", "x1.v"}, names)
	require.Len(t, d.Skipped, 1)
	assert.ErrorIs(t, d.Skipped[0], limits.ErrExceeded)
	assert.True(t, strings.HasPrefix(d.Skipped[0].Error(), "s3://held/p/x2.arrows: fetching its "), d.Skipped[0].Error())

	// A rescan keeps what it held and still skips the third.
	d2, err := d.Rescan()
	require.NoError(t, err)
	defer d2.Release()
	assert.Len(t, d2.Sources, 3)
	assert.Len(t, d2.Skipped, 1)
}

// TestMayHoldTensors: the first 16 bytes of every golden file say it may hold tensors; those
// of a CSV file, a JPEG image or text do not, and such objects are not fetched past them.
func TestMayHoldTensors(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../ipc/testdata/arrow-cpp-17/*.tensor", "../ipc/testdata/arrow-cpp-17/*.arrow*", "../npy/testdata/numpy/*.npy", "../npy/testdata/numpy-npz/*.npz", "../tfrecord/testdata/tensorflow/*.tfrecord", "../parquet/testdata/arrow-cpp-17-parquet/*.parquet"} {
		found, err := filepath.Glob(pattern)
		require.NoError(t, err)
		require.NotEmpty(t, found, pattern)
		files = append(files, found...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.True(t, mayHoldTensors(b[:min(len(b), probeSize)], int64(len(b))), f)
	}
	for _, head := range []string{"id,name,value\n1,", "\xff\xd8\xff\xe0\x00\x10JFIF\x00", "hello, world, th", "{\"a\": [1, 2, 3]}", ""} {
		assert.False(t, mayHoldTensors([]byte(head), 1<<20), "%q", head)
	}

	srv := storetest.StartS3(t, "mixed")
	srv.Put(t, "mixed", "d/data.csv", []byte(strings.Repeat("id,name,value\n1,a,2\n", 1000)))
	srv.PutFile(t, "mixed", "d/x.npy", "../npy/testdata/numpy/f16_rank2.npy")
	d, err := ScanDir("s3://mixed/d", limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	assert.Len(t, d.Sources, 1)
	assert.Empty(t, d.Skipped, "a file that is not a tensor file is no problem")
	assert.Len(t, d.files, 1)
}

// TestObjectArrowFileFetchesBlockByBlock: scanning an Arrow IPC file in object storage fetches
// its footer and its record batches' metadata; each batch is fetched as its chunk is read;
// every column reads as the local file's, shares included.
func TestObjectArrowFileFetchesBlockByBlock(t *testing.T) {
	srv := storetest.StartS3(t, "arrows")
	dir := t.TempDir()
	path := filepath.Join(dir, "t.arrow")
	writeArrowBatches(t, path, 4, func(k int) []Tensor { // four batches of 1000 rows: 1 MiB of emb, 0.25 MiB of ids each
		emb := ndarray.New[float32](1000, 256)
		for i := range emb.Ravel() {
			emb.Ravel()[i] = float32(k*1000000 + i)
		}
		ids := ndarray.New[int64](1000, 32)
		for i := range ids.Ravel() {
			ids.Ravel()[i] = int64(k*1000 + i)
		}
		return []Tensor{{Name: "emb", Kind: KindFixedShape, Dense: emb}, {Name: "ids", Kind: KindFixedShape, Dense: ids}}
	})
	srv.PutFile(t, "arrows", "d/t.arrow", path)
	st, err := os.Stat(path)
	require.NoError(t, err)

	d, err := ScanDir("s3://arrows/d", limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	require.Len(t, d.Sources, 2)
	obj := objectOf(d.files[0])
	scanned := obj.Stats().Bytes()
	assert.Less(t, scanned, st.Size()/20, "the footer and the batches' metadata, not the batches")
	local, err := ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer local.Release()
	for i, src := range d.Sources {
		assert.Equal(t, 4, src.NumChunks())
		_, resident := src.Resident()
		assert.False(t, resident)
		assert.Equal(t, int64(4000), src.Rows())
		before := obj.Stats().Bytes()
		for _, err := range src.Chunks(t.Context()) {
			require.NoError(t, err)
			break
		}
		assert.Equal(t, d.Sources[i].DecodeBytes()[0], obj.Stats().Bytes()-before, "one block")
		got, err := src.Read(t.Context())
		require.NoError(t, err)
		want, err := local.Sources[i].Read(t.Context())
		require.NoError(t, err)
		assert.Equal(t, want.Name, got.Name)
		assert.Equal(t, want.Shape(), got.Shape())
		assertSameValues(t, want, got, src.Name)
		share, ok := src.Share(1, 2)
		require.True(t, ok)
		half, err := share.Read(t.Context())
		require.NoError(t, err)
		assert.Equal(t, int64(2000), half.Rows())
	}

	// The object replaced: the next batch fetched names it.
	srv.PutFile(t, "arrows", "d/t.arrow", "../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow")
	_, err = d.Sources[0].Read(t.Context())
	assert.ErrorIs(t, err, ErrFileChanged)
	assert.True(t, strings.HasPrefix(err.Error(), "s3://arrows/d/t.arrow: "), err.Error())
}

// TestObjectNpyFetchesRows: scanning a .npy object fetches its header; its rows are fetched a
// run at a time as they are read, and read as the local file's — big-endian ones swapped;
// column-major files and scalars are read whole.
func TestObjectNpyFetchesRows(t *testing.T) {
	old := npyChunkBytes
	npyChunkBytes = 4 << 10
	defer func() { npyChunkBytes = old }()
	srv := storetest.StartS3(t, "npys")
	dir := t.TempDir()
	d := ndarray.New[float32](100, 64) // 256 bytes a row: 16 rows a chunk, 7 chunks
	for i := range d.Ravel() {
		d.Ravel()[i] = float32(i) * 0.5
	}
	var b bytes.Buffer
	require.NoError(t, writeNpy(&b, Tensor{Kind: KindDense, Dense: d}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.npy"), b.Bytes(), 0o644))
	srv.Put(t, "npys", "d/x.npy", b.Bytes())
	for _, name := range []string{"f64_bigendian.npy", "f64_fortran.npy", "f32_scalar.npy", "f32_empty.npy", "bool_mask.npy", "u8_image.npy"} {
		src := filepath.Join("../npy/testdata/numpy", name)
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
		srv.Put(t, "npys", "d/"+name, data)
	}

	rd, err := ScanDir("s3://npys/d", limits.Limits{})
	require.NoError(t, err)
	defer rd.Release()
	ld, err := ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer ld.Release()
	require.Equal(t, len(ld.Sources), len(rd.Sources))
	for i, src := range rd.Sources {
		want, err := ld.Sources[i].Read(t.Context())
		require.NoError(t, err)
		got, err := src.Read(t.Context())
		require.NoError(t, err, src.Name)
		assert.Equal(t, want.Name, got.Name)
		assert.Equal(t, want.Shape(), got.Shape(), src.Name)
		assertSameValues(t, want, got, src.Name)
		_, resident := src.Resident()
		switch src.Name {
		case "f64_fortran", "f32_scalar":
			assert.True(t, resident, "%s is read whole", src.Name)
		default:
			assert.False(t, resident, "%s is fetched by rows", src.Name)
		}
	}
	x := rd.Sources[slices.IndexFunc(rd.Sources, func(s *Source) bool { return s.Name == "x" })]
	assert.Equal(t, 7, x.NumChunks())
	var obj *objstore.Object
	for _, f := range rd.files {
		if strings.HasSuffix(f.Path, "/x.npy") {
			obj = objectOf(f)
		}
	}
	require.NotNil(t, obj)
	before := obj.Stats().Bytes()
	for _, err := range x.Chunks(t.Context()) {
		require.NoError(t, err)
		break
	}
	assert.Equal(t, int64(16*256), obj.Stats().Bytes()-before, "one run of rows")
}

// TestPartialReadFallsBackToWhole: a reader that, handed an object fetched in part, reads a
// byte that was not fetched is handed the whole object instead.
func TestPartialReadFallsBackToWhole(t *testing.T) {
	srv := storetest.StartS3(t, "fallback")
	data := bytes.Repeat([]byte("PAR1"), 10000) // Parquet's magic at both ends: its footer alone is fetched
	srv.Put(t, "fallback", "x.parquet", data)
	obj, err := objstore.Open(context.Background(), "s3://fallback/x.parquet")
	require.NoError(t, err)
	var calls []bool
	f, err := fetched(t.Context(), obj, limits.Limits{}, false, newObjectBudget(1, limits.Limits{}.WithDefaults().MaxCopySize).share(0, obj.Size), func(b []byte, partial bool) ([]Tensor, error) {
		calls = append(calls, partial)
		if b[20000] != 'P' { // not fetched in part: a fault the first time
			return nil, fmt.Errorf("byte 20000 is %q", b[20000])
		}
		return nil, nil
	})
	require.NoError(t, err)
	defer f.Release()
	assert.Equal(t, []bool{true, false}, calls)
	assert.Equal(t, int64(len(data)), f.held())
}

// TestObjectNpzFetchesMembersByRows: scanning an .npz object of stored members fetches its
// directory and its arrays' headers; each member's rows are fetched as they are read, and
// read as the local file's. An archive of deflated members is read whole.
func TestObjectNpzFetchesMembersByRows(t *testing.T) {
	old := npyChunkBytes
	npyChunkBytes = 64 << 10
	defer func() { npyChunkBytes = old }()
	srv := storetest.StartS3(t, "npzs")
	dir := t.TempDir()
	files := map[string]string{
		"savez.npz":            "../npy/testdata/numpy-npz/savez.npz",
		"positional.npz":       "../npy/testdata/numpy-npz/positional.npz",
		"compressed.npz":       "../npy/testdata/numpy-npz/savez_compressed.npz",
		"written.npz":          "../npy/testdata/ndarrow-npz/written.npz",
		"written_deflated.npz": "../npy/testdata/ndarrow-npz/written_compressed.npz",
	}
	for name, src := range files {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
		srv.Put(t, "npzs", "d/"+name, data)
	}
	var big bytes.Buffer // larger than what the directory's fetch brings: 3 arrays of 256 KiB
	z := npy.NewNpzWriter(&big, false)
	for k := range 3 {
		a := ndarray.New[float64](512, 64)
		for i := range a.Ravel() {
			a.Ravel()[i] = float64(k*100000 + i)
		}
		require.NoError(t, z.Write(fmt.Sprintf("a%d", k), a))
	}
	require.NoError(t, z.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.npz"), big.Bytes(), 0o644))
	srv.Put(t, "npzs", "d/big.npz", big.Bytes())
	rd, err := ScanDir("s3://npzs/d", limits.Limits{})
	require.NoError(t, err)
	defer rd.Release()
	ld, err := ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer ld.Release()
	require.Empty(t, rd.Skipped)
	require.Equal(t, len(ld.Sources), len(rd.Sources))
	for i, src := range rd.Sources {
		want, err := ld.Sources[i].Read(t.Context())
		require.NoError(t, err)
		got, err := src.Read(t.Context())
		require.NoError(t, err, src.Name)
		assert.Equal(t, want.Name, got.Name)
		assert.Equal(t, want.Column, got.Column)
		assert.Equal(t, want.Shape(), got.Shape(), src.Name)
		assertSameValues(t, want, got, src.Name)
		_, resident := src.Resident()
		switch {
		case strings.HasPrefix(src.Name, "big."):
			assert.False(t, resident, "%s is fetched by rows", src.Name)
			assert.Equal(t, 4, src.NumChunks(), "%s: 512 rows of 512 bytes, 64 KiB a chunk", src.Name)
		case strings.HasPrefix(src.Name, "compressed."), strings.HasPrefix(src.Name, "written_deflated."):
			assert.True(t, resident, "%s, deflated, is read whole", src.Name)
		}
	}
	for _, f := range rd.files {
		if strings.HasSuffix(f.Path, "/big.npz") {
			assert.Less(t, f.held(), objectOf(f).Size/2, "the directory and headers, not the values")
		}
	}
}

// TestObjectTFRecordStreamed: a TFRecord object (GZIP too) is streamed — fetched part by part
// ahead of the decoder, nothing of it held after — into the tensors the local file gives.
func TestObjectTFRecordStreamed(t *testing.T) {
	srv := storetest.StartS3(t, "tfr")
	for _, name := range []string{"lingvo_wmt14_ende_wpm_32k_test.tfrecord", "tfx_penguin_eval.tfrecord.gz"} {
		path := filepath.Join("../tfrecord/testdata/tensorflow", name)
		srv.PutFile(t, "tfr", "d/"+name, path)
		local, err := Open(path, limits.Limits{})
		require.NoError(t, err)
		remote, err := Open("s3://tfr/d/"+name, limits.Limits{})
		require.NoError(t, err, name)
		require.Equal(t, len(local.Tensors), len(remote.Tensors))
		for i := range local.Tensors {
			assert.Equal(t, local.Tensors[i].Name, remote.Tensors[i].Name)
			assertSameValues(t, local.Tensors[i], remote.Tensors[i], local.Tensors[i].Name)
		}
		assert.Empty(t, remote.remote.Fetched(), "nothing of the object held")
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, st.Size(), objectOf(remote).Stats().Bytes(), "the object, once")
		local.Release()
		remote.Release()
	}
	// Cut short: an error naming the object.
	b, err := os.ReadFile("../tfrecord/testdata/tensorflow/tfx_penguin_eval.tfrecord.gz")
	require.NoError(t, err)
	srv.Put(t, "tfr", "cut.tfrecord.gz", b[:len(b)/2])
	_, err = Open("s3://tfr/cut.tfrecord.gz", limits.Limits{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "s3://tfr/cut.tfrecord.gz: "), err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "s3://"), err.Error())
}

// assertSameValues asserts that two tensors hold the same values (as WriteValues writes them).
func assertSameValues(t *testing.T, want, got Tensor, name string) {
	t.Helper()
	var wb, gb bytes.Buffer
	_, err := want.WriteValues(&wb, 0)
	require.NoError(t, err)
	_, err = got.WriteValues(&gb, 0)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(wb.Bytes(), gb.Bytes()), name)
}

// writeArrowBatches writes an Arrow IPC file at path of n record batches, batch k of the
// tensors batch(k) gives.
func writeArrowBatches(t testing.TB, path string, n int, batch func(k int) []Tensor) {
	f, err := os.Create(path)
	require.NoError(t, err)
	var w *arrowipc.FileWriter
	for k := range n {
		rec, err := Batch(memory.DefaultAllocator, batch(k))
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
}
