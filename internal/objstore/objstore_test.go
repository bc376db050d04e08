package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/internal/storetest"
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct{ in, want, bucket, key string }{
		{"s3://bucket/a/b.parquet", "s3://bucket/a/b.parquet", "bucket", "a/b.parquet"},
		{"S3://bucket", "s3://bucket", "bucket", ""},
		{"https://host:8443/x/y.npy?X-Amz-Signature=secret", "https://host:8443/x/y.npy", "host:8443", "x/y.npy"},
	} {
		u, err := ParseURI(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, u.String())
		assert.Equal(t, tc.bucket, u.Bucket)
		assert.Equal(t, tc.key, u.Key)
	}
	for _, bad := range []string{"s3:///key", "s3://b/k?x=1", "https://user:pw@host/x", "ftp://h/x", "https:///x"} {
		_, err := ParseURI(bad)
		require.Error(t, err, bad)
		assert.ErrorIs(t, err, fs.ErrInvalid)
		assert.NotContains(t, err.Error(), "pw", "credentials never in errors")
		assert.NotContains(t, err.Error(), "x=1")
	}
	assert.True(t, IsURI("s3://buf/k"))
	assert.True(t, IsURI("HTTPS://h/k"))
	assert.False(t, IsURI("/tmp/s3://x"))
	assert.False(t, IsURI("s3:"))
}

// TestS3 reads, lists and writes objects of a real S3-compatible store.
func TestS3(t *testing.T) {
	srv := storetest.StartS3(t, "data")
	ctx := context.Background()
	data := randomBytes(3*PartSize/2 + 17)
	srv.Put(t, "data", "dir/x.bin", data)
	srv.Put(t, "data", "dir/sub/y.bin", []byte("y"))
	srv.Put(t, "data", "directory.bin", []byte("not under dir/"))

	o, err := Open(ctx, "s3://data/dir/x.bin")
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), o.Size)
	assert.NotEmpty(t, o.Version)
	p := make([]byte, 1000)
	n, err := o.ReadAt(p, 12345)
	require.NoError(t, err)
	assert.Equal(t, 1000, n)
	assert.Equal(t, data[12345:13345], p)
	n, err = o.ReadAt(p, int64(len(data))-10)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 10, n)
	assert.Equal(t, data[len(data)-10:], p[:10])
	assert.Equal(t, int64(3), o.Stats().Requests())
	assert.Equal(t, int64(1010), o.Stats().Bytes())

	// A listing is of the directory: dir/…, not directory.bin.
	objs, err := List(ctx, "s3://data/dir")
	require.NoError(t, err)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.URI.String())
	}
	assert.Equal(t, []string{"s3://data/dir/sub/y.bin", "s3://data/dir/x.bin"}, keys)
	assert.Equal(t, int64(1), objs[0].Size)

	_, err = Open(ctx, "s3://data/missing.bin")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "s3://data/missing.bin: no such object (404 Not Found, NotFound)", err.Error())
	_, err = Open(ctx, "s3://nobucket/x")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// Replaced while being read: the next read is ErrChanged naming the object.
	srv.Put(t, "data", "dir/x.bin", data[:len(data)-1])
	_, err = o.ReadAt(p, 0)
	assert.ErrorIs(t, err, ErrChanged)
	assert.ErrorIs(t, err, mmap.ErrChanged)
	assert.True(t, strings.HasPrefix(err.Error(), "s3://data/dir/x.bin: file changed while being read"), err.Error())

	// Wrong credentials: access denied, and the secret never appears.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
	_, err = Open(ctx, "s3://data/dir/x.bin")
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.NotContains(t, err.Error(), "not-the-secret")
	assert.NotContains(t, err.Error(), storetest.SecretKey)
}

// TestWriter: an object appears only when Close succeeds; small objects and multipart ones
// read back as written; Abort and a cancelled context leave neither object nor upload.
func TestWriter(t *testing.T) {
	srv := storetest.StartS3(t, "out")
	ctx := context.Background()
	for _, size := range []int{0, 100, PartSize, 2*PartSize + 5} {
		data := randomBytes(size)
		key := fmt.Sprintf("obj%d", size)
		w, err := Create(ctx, "s3://out/"+key)
		require.NoError(t, err)
		for off := 0; off < len(data); off += 1 << 20 {
			_, err := w.Write(data[off:min(off+1<<20, len(data))])
			require.NoError(t, err)
		}
		pos, err := w.Seek(0, io.SeekCurrent)
		require.NoError(t, err)
		assert.Equal(t, int64(size), pos)
		if size > PartSize {
			objs, _ := srv.Keys(t, "out")
			assert.NotContains(t, objs, key, "not visible before Close")
		}
		require.NoError(t, w.Close())
		got, err := srv.Get("out", key)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got), "size %d", size)
	}

	w, err := Create(ctx, "s3://out/aborted")
	require.NoError(t, err)
	_, err = w.Write(randomBytes(PartSize + 1))
	require.NoError(t, err)
	require.NoError(t, w.Abort())
	cctx, cancel := context.WithCancel(ctx)
	w, err = Create(cctx, "s3://out/cancelled")
	require.NoError(t, err)
	_, err = w.Write(randomBytes(PartSize + 1))
	require.NoError(t, err)
	cancel()
	_, err = w.Write([]byte("more"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Error(t, w.Close())
	objs, uploads := srv.Keys(t, "out")
	assert.Equal(t, []string{"obj0", "obj100", "obj16777221", "obj8388608"}, objs)
	assert.Empty(t, uploads, "aborted uploads leave no parts behind")

	_, err = Create(ctx, "https://example.com/x")
	assert.ErrorIs(t, err, ErrNotWritable)
}

// TestBuffer: Fetch reads only the ranges asked for, coalescing near ones and splitting long
// ones; what was not fetched faults as ErrNotFetched; Forget gives memory back.
func TestBuffer(t *testing.T) {
	srv := storetest.StartS3(t, "buf")
	data := randomBytes(3*partLimit + 12345)
	srv.Put(t, "buf", "k", data)
	ctx := context.Background()
	o, err := Open(ctx, "s3://buf/k")
	require.NoError(t, err)
	buf, err := o.NewBuffer()
	require.NoError(t, err)
	defer buf.Mapping().Release()
	b := buf.Mapping().Bytes()

	require.NoError(t, buf.Fetch(ctx, Range{100, 50}, Range{160, 40}, Range{int64(len(data)) - 8, 100}))
	assert.Equal(t, int64(1+2), o.Stats().Requests(), "open, one coalesced range, the tail")
	assert.Equal(t, int64(100+8), o.Stats().Bytes())
	assert.Equal(t, []Range{{100, 100}, {int64(len(data)) - 8, 8}}, buf.Fetched())
	require.NoError(t, mmap.Guard(func() error {
		assert.Equal(t, data[100:200], b[100:200])
		assert.Equal(t, data[len(data)-8:], b[len(data)-8:])
		return nil
	}))
	err = mmap.Guard(func() error { sink = b[2*partLimit]; return nil })
	assert.ErrorIs(t, err, mmap.ErrNotFetched)
	assert.Contains(t, err.Error(), "s3://buf/k")

	// The whole object: parts of 8 MiB, what was there not fetched again.
	require.NoError(t, buf.Fetch(ctx, Range{0, int64(len(data))}))
	assert.Equal(t, int64(len(data)), o.Stats().Bytes())
	assert.Equal(t, int64(3+5), o.Stats().Requests(), "[0,100), then [200, end-8) in 4 parts")
	require.NoError(t, mmap.Guard(func() error {
		assert.True(t, bytes.Equal(data, b))
		return nil
	}))
	require.NoError(t, buf.Fetch(ctx, Range{0, 10}))
	assert.Equal(t, int64(8), o.Stats().Requests(), "nothing new")

	require.NoError(t, buf.Forget(Range{partLimit, partLimit}))
	err = mmap.Guard(func() error { sink = b[partLimit+partLimit/2]; return nil })
	assert.ErrorIs(t, err, mmap.ErrNotFetched)

	// The object changes: a fetch fails naming it and fetches nothing.
	srv.Put(t, "buf", "k", data[:100])
	err = buf.Fetch(ctx, Range{partLimit, partLimit})
	assert.ErrorIs(t, err, ErrChanged)
}

// TestCoalesce checks the range arithmetic.
func TestCoalesce(t *testing.T) {
	assert.Equal(t, []Range{{0, 30}, {100, 10}}, coalesce([]Range{{20, 10}, {0, 10}, {100, 10}, {10, 5}, {5, 0}}, 5))
	assert.Equal(t, []Range{{0, 10}, {20, 10}}, coalesce([]Range{{20, 10}, {0, 10}}, 0))
	assert.Equal(t, []Range{{0, 5}, {15, 5}, {30, 10}}, subtract([]Range{{0, 20}, {30, 10}}, []Range{{5, 10}, {25, 5}}))
}

// TestHTTP reads an object from an HTTP server by range requests, conditionally.
func TestHTTP(t *testing.T) {
	data := randomBytes(100000)
	version := `"v1"`
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.Header.Get("Range"))
		switch r.URL.Path {
		case "/x.bin":
			if r.URL.Query().Get("sig") != "secret" {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			w.Header().Set("ETag", version)
			http.ServeContent(w, r, "x.bin", mod, bytes.NewReader(data))
		case "/truncated":
			if r.Header.Get("Range") == "bytes=0-0" {
				w.Header().Set("Content-Range", "bytes 0-0/100000")
				w.WriteHeader(http.StatusPartialContent)
				w.Write(data[:1])
				return
			}
			w.Header().Set("Content-Range", "bytes 0-99/100000")
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:50])
		case "/stall":
			if r.Header.Get("Range") == "bytes=0-0" {
				w.Header().Set("Content-Range", "bytes 0-0/1000")
				w.WriteHeader(http.StatusPartialContent)
				w.Write(data[:1])
				return
			}
			w.Header().Set("Content-Range", "bytes 0-999/1000")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:10])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/noranges":
			w.Write(data)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	o, err := Open(ctx, srv.URL+"/x.bin?sig=secret")
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), o.Size)
	assert.Equal(t, version, o.Version)
	p := make([]byte, 5000)
	_, err = o.ReadAt(p, 777)
	require.NoError(t, err)
	assert.Equal(t, data[777:5777], p)

	version = `"v2"` // replaced
	_, err = o.ReadAt(p, 0)
	assert.ErrorIs(t, err, ErrChanged)
	assert.NotContains(t, err.Error(), "secret")
	assert.True(t, strings.HasPrefix(err.Error(), srv.URL+"/x.bin: "), err.Error())

	_, err = Open(ctx, srv.URL+"/x.bin?sig=wrong")
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.NotContains(t, err.Error(), "wrong")
	_, err = Open(ctx, srv.URL+"/missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = Open(ctx, srv.URL+"/noranges")
	assert.ErrorContains(t, err, "does not serve byte ranges")

	o, err = Open(ctx, srv.URL+"/truncated")
	require.NoError(t, err)
	_, err = o.ReadAt(make([]byte, 100), 0)
	assert.ErrorIs(t, err, ErrTruncated)

	old := StallTimeout
	StallTimeout = 200 * time.Millisecond
	defer func() { StallTimeout = old }()
	o, err = Open(ctx, srv.URL+"/stall")
	require.NoError(t, err)
	start := time.Now()
	_, err = o.ReadAt(make([]byte, 1000), 0)
	assert.ErrorIs(t, err, ErrStalled)
	assert.Less(t, time.Since(start), 5*time.Second)

	// The caller's context ends a read at once.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	StallTimeout = time.Minute
	_, err = o.ReadRange(cctx, make([]byte, 1000), 0)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	_, err = List(ctx, srv.URL+"/")
	assert.ErrorIs(t, err, ErrNotListable)
}

// sink keeps a read of a byte from being optimized away.
var sink byte

// TestGCS reads, lists and writes objects of Google Cloud Storage's emulator through the JSON
// API: reads conditional on the generation, resumable uploads that appear only when complete.
func TestGCS(t *testing.T) {
	srv := storetest.StartGCS(t, "gdata")
	ctx := context.Background()
	data := randomBytes(2*PartSize + 1000)
	srv.Put(t, "gdata", "dir/x.bin", data)
	srv.Put(t, "gdata", "dir/sub/y.bin", []byte("y"))
	srv.Put(t, "gdata", "directory.bin", []byte("z"))

	o, err := Open(ctx, "gs://gdata/dir/x.bin")
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), o.Size)
	assert.NotEmpty(t, o.Version)
	p := make([]byte, 1000)
	_, err = o.ReadAt(p, 12345)
	require.NoError(t, err)
	assert.Equal(t, data[12345:13345], p)
	buf, err := o.NewBuffer()
	require.NoError(t, err)
	require.NoError(t, buf.Fetch(ctx, Range{0, o.Size}))
	require.NoError(t, mmap.Guard(func() error {
		assert.True(t, bytes.Equal(data, buf.Mapping().Bytes()))
		return nil
	}))
	buf.Mapping().Release()

	objs, err := List(ctx, "gs://gdata/dir")
	require.NoError(t, err)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.URI.String())
	}
	assert.Equal(t, []string{"gs://gdata/dir/sub/y.bin", "gs://gdata/dir/x.bin"}, keys)

	_, err = Open(ctx, "gs://gdata/missing.bin")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "gs://gdata/missing.bin: no such object (404 Not Found)", err.Error())

	srv.Put(t, "gdata", "dir/x.bin", randomBytes(len(data) + 0)[1:]) // a new generation, another size
	_, err = o.ReadAt(p, 0)
	assert.ErrorIs(t, err, ErrChanged)
	o, err = Open(ctx, "gs://gdata/dir/x.bin")
	require.NoError(t, err)
	srv.Put(t, "gdata", "dir/x.bin", data[:o.Size]) // a new generation of the same size
	_, err = o.ReadAt(p, 0)
	assert.ErrorIs(t, err, ErrChanged)
	assert.True(t, strings.HasPrefix(err.Error(), "gs://gdata/dir/x.bin: file changed while being read"), err.Error())

	for _, size := range []int{0, 100, PartSize, 2*PartSize + 5} {
		data := randomBytes(size)
		key := fmt.Sprintf("out/obj%d", size)
		w, err := Create(ctx, "gs://gdata/"+key)
		require.NoError(t, err)
		for off := 0; off < len(data); off += 1 << 20 {
			_, err := w.Write(data[off:min(off+1<<20, len(data))])
			require.NoError(t, err)
		}
		if size > PartSize {
			_, err := srv.Get("gdata", key)
			assert.Error(t, err, "not visible before Close")
		}
		require.NoError(t, w.Close())
		got, err := srv.Get("gdata", key)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got), "size %d", size)
	}
	w, err := Create(ctx, "gs://gdata/out/aborted")
	require.NoError(t, err)
	_, err = w.Write(randomBytes(2*PartSize + 1))
	require.NoError(t, err)
	require.NoError(t, w.Abort())
	_, err = srv.Get("gdata", "out/aborted")
	assert.Error(t, err, "an aborted upload leaves no object")
}

// TestHostileStoreAnswers: a store (or something posing as one) that answers a listing with
// more than 16 MiB, or a ranged read with more bytes than asked for, costs no more memory than
// that: the listing is an error, the read takes what it asked for.
func TestHostileStoreAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead:
			w.Header().Set("Content-Length", "100")
			w.Header().Set("ETag", `"e"`)
		case r.URL.Query().Get("list-type") == "2":
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name>`)
			chunk := []byte(strings.Repeat("<Contents><Key>k</Key><Size>1</Size></Contents>", 1000))
			for range 1000 { // 47 MB
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			io.WriteString(w, `</ListBucketResult>`)
		default: // a ranged read answered with far more than the range
			w.Header().Set("Content-Range", "bytes 0-9/100")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(randomBytes(1 << 20))
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_, err := List(context.Background(), "s3://b/p")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "s3://b/p/: list: "), err.Error())
	assert.Contains(t, err.Error(), "longer than 16777216 bytes")

	o, err := Open(context.Background(), "s3://b/k")
	require.NoError(t, err)
	p := make([]byte, 10)
	_, err = o.ReadAt(p, 0)
	assert.Error(t, err, "the store says it sends 1 MiB for 10 bytes")
}

// TestReader streams an object part by part, ahead of its reader, and stops at a change.
func TestReader(t *testing.T) {
	srv := storetest.StartS3(t, "stream")
	data := randomBytes(5*partLimit/2 + 3)
	srv.Put(t, "stream", "x", data)
	o, err := Open(context.Background(), "s3://stream/x")
	require.NoError(t, err)
	r := o.NewReader(context.Background())
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.True(t, bytes.Equal(data, got))
	assert.Equal(t, int64(1+3), o.Stats().Requests(), "open, then 3 parts")

	srv.Put(t, "stream", "x", data[1:])
	r = o.NewReader(context.Background())
	_, err = io.ReadAll(r)
	assert.ErrorIs(t, err, ErrChanged)
	require.NoError(t, r.Close())
}

// TestCopyAndRemove: Copy makes another object of the same bytes within the store (S3 and
// GCS; on S3 in one CopyObject or, larger than a copy part, by a multipart copy), replacing
// what was there; a source changed since is ErrChanged; Remove deletes, and what is not there
// matches fs.ErrNotExist; http(s):// is ErrNotWritable.
func TestCopyAndRemove(t *testing.T) {
	ctx := context.Background()
	t.Run("s3", func(t *testing.T) {
		srv := storetest.StartS3(t, "copies")
		defer func(old int64) { copyPartSize = old }(copyPartSize)
		copyPartSize = MinPartSize // the copy of the larger object in parts
		for _, size := range []int{10, 2*MinPartSize + 7} {
			data := randomBytes(size)
			srv.Put(t, "copies", "src/x.bin", data)
			srv.Put(t, "copies", "dst/y.bin", []byte("old"))
			require.NoError(t, Copy(ctx, "s3://copies/src/x.bin", "s3://copies/dst/y.bin"), "size %d", size)
			requireObject(t, "s3://copies/dst/y.bin", data)
		}
		srv.Put(t, "copies", "src/x.bin", []byte("0123456789"))
		o, err := Open(ctx, "s3://copies/src/x.bin")
		require.NoError(t, err)
		srv.Put(t, "copies", "src/x.bin", []byte("changed"))
		err = o.st.copy(ctx, o.Info, URI{Scheme: "s3", Bucket: "copies", Key: "dst/z.bin"})
		require.ErrorIs(t, err, ErrChanged, "a source changed since it was opened")
		checkRemove(t, "s3://copies")
	})
	t.Run("gcs", func(t *testing.T) {
		srv := storetest.StartGCS(t, "gcopies")
		data := randomBytes(1000)
		srv.Put(t, "gcopies", "src/x.bin", data)
		require.NoError(t, Copy(ctx, "gs://gcopies/src/x.bin", "gs://gcopies/dst/y.bin"))
		requireObject(t, "gs://gcopies/dst/y.bin", data)
		checkRemove(t, "gs://gcopies")
	})
	require.ErrorIs(t, Remove(ctx, "https://example.invalid/x"), ErrNotWritable)
}

// requireObject checks that the object at uri holds data.
func requireObject(t *testing.T, uri string, data []byte) {
	t.Helper()
	o, err := Open(context.Background(), uri)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), o.Size)
	got := make([]byte, len(data))
	require.NoError(t, o.ReadFull(context.Background(), got, 0))
	require.True(t, bytes.Equal(data, got))
}

// checkRemove removes BUCKET/dst/y.bin, then finds it gone.
func checkRemove(t *testing.T, bucket string) {
	ctx := context.Background()
	require.NoError(t, Remove(ctx, bucket+"/dst/y.bin"))
	_, err := Open(ctx, bucket+"/dst/y.bin")
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorIs(t, Remove(ctx, bucket+"/dst/y.bin"), fs.ErrNotExist)
}
