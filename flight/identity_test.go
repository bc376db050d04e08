package flight

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid/fileidtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// constantParquet is a ZSTD Parquet table t of rows rows — label, every value v — in row
// groups of 64 KiB and pages of 8 KiB: the same size for v 0x0202020202020202 and
// 0x0303030303030303 (each page a run of one byte).
func constantParquet(t *testing.T, rows, v int64) []byte {
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "label", Column: "label", Dense: ndarray.Full(v, rows)}})
	require.NoError(t, err)
	defer rec.Release()
	var b bytes.Buffer
	w, err := parquet.NewWriter(&b, rec.Schema(), parquet.WriterOptions{Compression: parquet.Zstd, RowGroupBytes: 64 << 10, PageBytes: 8 << 10})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return b.Bytes()
}

// labelsOf returns the values of the one tensor of a take of t.label, or of a batch of it.
func labelsOf(t *testing.T, ts []dataset.Tensor) []int64 {
	t.Helper()
	require.Len(t, ts, 1)
	d, err := dataset.DenseOf[int64](ts[0])
	require.NoError(t, err)
	return d.Ravel()
}

// TestPageCacheServesOneVersionOfARewrite: a served ZSTD Parquet file whose pages a take put
// in the page cache is rewritten in place keeping its size and modification time (rsync
// --inplace -t): a take or batches answered from the entry opened before — old pages from the
// cache, the others from the mapping, now the new version's — fails with DataLoss naming the
// file and its change time rather than send rows of both; once the directory is rescanned the
// file is a new version, whose takes and batches hold the new rows whole, none from the old
// version's cached pages.
func TestPageCacheServesOneVersionOfARewrite(t *testing.T) {
	const rows = 1 << 16 // 512 KiB of labels: 8 row groups, 64 pages
	const v1, v2 = 0x0202020202020202, 0x0303030303030303
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	b1, b2 := constantParquet(t, rows, v1), constantParquet(t, rows, v2)
	require.Len(t, b2, len(b1), "the versions are of one size")
	require.NoError(t, os.WriteFile(path, b1, 0o644))
	cache, err := dataset.NewPageCache(t.TempDir(), 64<<20)
	if err != nil {
		t.Skipf("no page cache here: %v", err)
	}
	defer cache.Close()
	s := serve(t, Options{PageCache: cache}, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := t.Context()

	firstHalf := make([]int64, 0, rows/2) // every page of the first half: cached
	for r := int64(0); r < rows/2; r += 97 {
		firstHalf = append(firstHalf, r)
	}
	got, err := c.Take(ctx, "t.label", firstHalf, nil)
	require.NoError(t, err)
	for _, l := range labelsOf(t, got) {
		require.Equal(t, int64(v1), l)
	}
	require.Positive(t, cache.Stats().Pages, "pages kept")

	fileidtest.RewriteKeepingTimes(t, path, b2)
	every := make([]int64, 0, rows/97+1) // both halves: cached pages of the old version, the rest read from the new
	for r := int64(0); r < rows; r += 97 {
		every = append(every, r)
	}
	const says = "t.parquet: t.label: file changed while being read: its change time differs"
	_, err = c.Take(ctx, "t.label", every, nil)
	require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), says)
	for _, err := range c.Batches(ctx, "t.label", table.BatchOptions{Size: rows / 4, Shuffle: true, Seed: 3}) {
		if err != nil {
			require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), says)
			break
		}
	}

	_, err = s.store.Rescan()
	require.NoError(t, err)
	got, err = c.Take(ctx, "t.label", every, nil)
	require.NoError(t, err, "the new version")
	for i, l := range labelsOf(t, got) {
		require.Equal(t, int64(v2), l, "row %d of the new version", every[i])
	}
	n := 0
	for b, err := range c.Batches(ctx, "t.label", table.BatchOptions{Size: rows / 4, Shuffle: true, Seed: 3}) {
		require.NoError(t, err)
		for _, l := range labelsOf(t, b.Values.Columns) {
			require.Equal(t, int64(v2), l)
		}
		n++
	}
	assert.Equal(t, 4, n, "every batch, of the new version")
}

// TestBatchesSendNoRowOfARewrite: a served ZSTD Parquet file whose first half's pages a take
// put in the page cache is rewritten in place keeping its size and modification time (rsync
// --inplace -t), no rescan following it: a stream of mini-batches of the entry opened before
// sends no batch holding a row of the new version — every row it sends is of the version it
// started with (the cached pages), and it fails with DataLoss naming the file before it sends
// one read from the new bytes, as a take of them does. (A batch sent cannot be taken back: a
// client given batches of both versions has trained on them before the error at the stream's
// end tells it.)
func TestBatchesSendNoRowOfARewrite(t *testing.T) {
	const rows = 1 << 16 // 8 row groups, 64 pages
	const v1, v2 = 0x0202020202020202, 0x0303030303030303
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	b1, b2 := constantParquet(t, rows, v1), constantParquet(t, rows, v2)
	require.Len(t, b2, len(b1), "the versions are of one size")
	require.NoError(t, os.WriteFile(path, b1, 0o644))
	cache, err := dataset.NewPageCache(t.TempDir(), 64<<20)
	if err != nil {
		t.Skipf("no page cache here: %v", err)
	}
	defer cache.Close()
	s := serve(t, Options{PageCache: cache}, "grpc")
	_, err = s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := t.Context()
	firstHalf := make([]int64, 0, rows/2)
	for r := int64(0); r < rows/2; r += 97 {
		firstHalf = append(firstHalf, r)
	}
	_, err = c.Take(ctx, "t.label", firstHalf, nil)
	require.NoError(t, err)

	fileidtest.RewriteKeepingTimes(t, path, b2)
	var failed error
	batches := 0
	for b, err := range c.Batches(ctx, "t.label", table.BatchOptions{Size: rows / 4, Shuffle: true, Seed: 3}) {
		if err != nil {
			failed = err
			break
		}
		counts := map[int64]int{}
		for _, l := range labelsOf(t, b.Values.Columns) {
			counts[l]++
		}
		assert.Equal(t, map[int64]int{v1: rows / 4}, counts, "batch %d: its rows' labels (%#x: the new version's)", b.Index, int64(v2))
		batches++
	}
	require.Equal(t, codes.DataLoss, status.Code(failed), "after %d batches: %v", batches, failed)
	assert.Contains(t, status.Convert(failed).Message(), "t.parquet: t.label: file changed while being read: its change time differs")
}

// TestBatchesChangedTableNamesFilesAsServed: a cursor of a served table one of whose files
// was touched since (a new version, rescanned) is refused with FailedPrecondition naming the
// file as the server names its files to clients — by its path under the served directory, as
// every other error of a served file does (fileStatus) — never by the server's own path.
func TestBatchesChangedTableNamesFilesAsServed(t *testing.T) {
	s, path, c := batchesFixture(t, Options{})
	o := table.BatchOptions{Size: 8}
	b, err := first(c.Batches(t.Context(), "t", o))
	require.NoError(t, err)
	fileidtest.Stamped(t, path, func() error { now := time.Now(); return os.Chtimes(path, now, now) }) // touch
	_, err = s.store.Rescan()
	require.NoError(t, err)
	o.After = &b.Cursor
	_, err = first(c.Batches(t.Context(), "t", o))
	require.ErrorIs(t, err, table.ErrTableChanged)
	msg := status.Convert(err).Message()
	assert.Contains(t, msg, "the table changed since the cursor was made: t.parquet: its modification time and change time differ")
	assert.NotContains(t, msg, filepath.Dir(path), "the server's own path")
}

// numbersOf returns every value of the numeric arrays of rec (its columns, the values of its
// lists and tensors), each once, as float64.
func numbersOf(rec arrow.Record) map[float64]bool {
	out := map[float64]bool{}
	var walk func(a arrow.Array)
	walk = func(a arrow.Array) {
		switch a := a.(type) {
		case array.ExtensionArray:
			walk(a.Storage())
		case *array.FixedSizeList:
			walk(a.ListValues())
		case *array.List:
			walk(a.ListValues())
		case *array.Float32:
			for _, v := range a.Float32Values() {
				out[float64(v)] = true
			}
		case *array.Int64:
			for _, v := range a.Int64Values() {
				out[float64(v)] = true
			}
		}
	}
	for _, c := range rec.Columns() {
		walk(c)
	}
	return out
}

// versionedFile is a served file of 8 MiB whose every value is v, of the same size for v 1
// and 2: a .npy file (a record batch viewing its mapping, sent in pieces) or an uncompressed
// Parquet table of label and emb in row groups of 256 KiB (read and sent a row group at a
// time).
func versionedFile(t *testing.T, name string, v int64) []byte {
	if filepath.Ext(name) == ".npy" {
		return npyBytes(t, 2048, 1024, float32(v))
	}
	const rows = 1 << 19
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{
		{Name: "label", Column: "label", Dense: ndarray.Full(v, rows)},
		{Name: "emb", Column: "emb", Dense: ndarray.Full(float32(v), rows, 2)},
	})
	require.NoError(t, err)
	defer rec.Release()
	var b bytes.Buffer
	w, err := parquet.NewWriter(&b, rec.Schema(), parquet.WriterOptions{Compression: parquet.Uncompressed, RowGroupBytes: 256 << 10})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return b.Bytes()
}

// TestAStreamSendsNoMessageOfARewrite: a served file (a .npy tensor sent from its mapping, a
// Parquet table sent a row group at a time) streamed to a client that pauses after its first
// messages, while the file is rewritten in place keeping its size and modification time
// (rsync --inplace -t): by DoGet and by the data URL, no message the client gets holds a value
// of the new version — each message is checked against its file once copied, before it is
// sent (DoGet), or before its body's last byte is written (the data URL: a message read from
// the new bytes ends one byte short, which no Arrow reader takes as an end) — and the stream
// fails with DataLoss naming the file.
func TestAStreamSendsNoMessageOfARewrite(t *testing.T) {
	for _, name := range []string{"x.npy", "x.parquet"} {
		for _, via := range []string{"DoGet", "data URL"} {
			t.Run(name+" by "+via, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				v1, v2 := versionedFile(t, name, 1), versionedFile(t, name, 2)
				require.Len(t, v2, len(v1), "the versions are of one size")
				require.NoError(t, os.WriteFile(path, v1, 0o644))
				lis, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				s := serveOn(t, smallBuffers{lis}, Options{MaxMessageBytes: 256 << 10})
				_, err = s.store.AddDir(dir, limits.Limits{})
				require.NoError(t, err)
				c := dial(t, s.uri, ClientOptions{})
				rewrite := func() { fileidtest.RewriteKeepingTimes(t, path, v2) }

				var values []map[float64]bool // of each record batch the client got
				var failed error
				switch via {
				case "DoGet":
					stream, err := slowRawClient(t, s.uri).DoGet(t.Context(), &arrowflight.Ticket{Ticket: []byte("x")})
					require.NoError(t, err)
					r, err := arrowflight.NewRecordReader(stream)
					require.NoError(t, err)
					defer r.Release()
					for r.Next() {
						values = append(values, numbersOf(r.Record()))
						if len(values) == 2 {
							rewrite()
						}
					}
					failed = r.Err()
				default:
					resp, err := pausingHTTP(1<<20, rewrite).Get(dataURLOf(t, c, "x"))
					require.NoError(t, err)
					body, err := io.ReadAll(resp.Body)
					require.NoError(t, err, "the response ends well formed")
					resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode)
					r, err := arrowipc.NewReader(bytes.NewReader(body))
					require.NoError(t, err)
					for r.Next() {
						values = append(values, numbersOf(r.Record()))
					}
					require.Error(t, r.Err(), "the stream ends inside a message, not as a stream of fewer batches")
					r.Release()
					failed = statusIn(resp.Trailer)
				}
				require.Greater(t, len(values), 1, "batches before the rewrite")
				for i, v := range values {
					require.Equal(t, map[float64]bool{1: true}, v, "record batch %d: a value of the new version (2)", i)
				}
				require.Equal(t, codes.DataLoss, status.Code(failed), "%v", failed)
				assert.Contains(t, status.Convert(failed).Message(), name+": x")
				assert.Contains(t, status.Convert(failed).Message(), "file changed while being read: its ") // its change time, or with the modification time when the check came before the times were set back
			})
		}
	}
}

// TestDataLossSaysHowToGetTheNewVersion: a take of a served file rewritten in place fails
// with DataLoss saying what to do: of a store not watching its directory, send serve SIGHUP
// or the reload action; of one watching it, fetch again once the change is seen.
func TestDataLossSaysHowToGetTheNewVersion(t *testing.T) {
	const rows = 1 << 12
	for _, tc := range []struct {
		name     string
		watching bool
		says     string
	}{
		{"not watched", false, " (the server does not watch its directory: once the file is whole, send ndarrow serve SIGHUP or the reload action, then fetch it again)"},
		{"watched", true, " (fetch it again: the server serves the new version once it sees the change)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.parquet")
			b1, b2 := constantParquet(t, rows, 0x0202020202020202), constantParquet(t, rows, 0x0303030303030303)
			require.NoError(t, os.WriteFile(path, b1, 0o644))
			s := serve(t, Options{}, "grpc")
			_, err := s.store.AddDir(dir, limits.Limits{})
			require.NoError(t, err)
			if tc.watching { // as a Watch running counts itself: one that rescans nothing here
				s.store.watching.Add(1)
				defer s.store.watching.Add(-1)
			}
			c := dial(t, s.uri, ClientOptions{})
			fileidtest.RewriteKeepingTimes(t, path, b2)
			_, err = c.Take(t.Context(), "t.label", []int64{0, rows - 1}, nil)
			require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
			msg := status.Convert(err).Message()
			assert.Contains(t, msg, "t.parquet: t.label: file changed while being read")
			assert.True(t, strings.HasSuffix(msg, tc.says), msg)
		})
	}
}
