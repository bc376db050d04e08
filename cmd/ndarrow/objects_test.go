package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/flight"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// goldenFiles are every golden file ndarrow reads: Arrow C++ 17's IPC files, streams and
// Tensor messages, its Parquet files, NumPy's .npy and .npz files, TensorFlow's TFRecord files.
func goldenFiles(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{
		golden + "/*.tensor", golden + "/*.arrow", golden + "/*.arrows",
		"../../arrowtensor/testdata/arrow-cpp-17/*.arrow*",
		"../../parquet/testdata/arrow-cpp-17-parquet/*.parquet",
		"../../npy/testdata/numpy/*.npy",
		"../../npy/testdata/numpy-npz/*.npz",
		"../../tfrecord/testdata/tensorflow/*.tfrecord*",
	} {
		found, err := filepath.Glob(pattern)
		require.NoError(t, err)
		require.NotEmpty(t, found, pattern)
		files = append(files, found...)
	}
	return files
}

// TestGoldenObjectsInspectAsFiles: every golden file uploaded to a bucket of a real
// S3-compatible store inspects exactly as the local file does — the same lines, or the same
// error naming the object instead of the file.
func TestGoldenObjectsInspectAsFiles(t *testing.T) {
	srv := storetest.StartS3(t, "golden")
	files := goldenFiles(t)
	for i, file := range files {
		key := filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
		srv.PutFile(t, "golden", key, file)
		uri := "s3://golden/" + key
		t.Run(key, func(t *testing.T) {
			wantCode, wantOut, wantErr := runCLI("inspect", "--json", "--splits", file)
			code, out, errOut := runCLI("inspect", "--json", "--splits", uri)
			assert.Equal(t, wantCode, code)
			assert.Equal(t, strings.ReplaceAll(wantOut, file, uri), out)
			assert.Equal(t, strings.ReplaceAll(wantErr, file, uri), errOut)
			if i == 0 {
				assert.NotEmpty(t, out)
			}
		})
	}
}

// TestConvertThroughObjects: every output format written to s3:// (a multipart upload past 8
// MiB) and read back from there gives the tensors the local file gives; a conversion that
// fails, or is interrupted, leaves no object and no upload behind.
func TestConvertThroughObjects(t *testing.T) {
	srv := storetest.StartS3(t, "conv")
	dir := t.TempDir()
	for _, tc := range []struct{ in, to string }{
		{golden + "/dense_float_rank3.tensor", "tensor"},
		{golden + "/dense_double_rank3.tensor", "npy"},
		{"../../npy/testdata/numpy-npz/savez.npz", "npz"},
		{"../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow", "arrow"},
		{"../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow", "arrows"},
		{golden + "/coo_double_4x6_i64.tensor", "coo"},
		{golden + "/csr_double_5x7_i64.tensor", "csr"},
		{golden + "/csc_double_5x7_i64.tensor", "csc"},
		{golden + "/csf_double_3x4x5_i64.tensor", "csf"},
		{"../../parquet/testdata/arrow-cpp-17-parquet/tensors.parquet", "parquet"},
		{"../../npy/testdata/numpy/i16_rank2.npy", "tfrecord"},
		{golden + "/dense_double_rank3.tensor", "tensorproto"},
	} {
		t.Run(tc.to, func(t *testing.T) {
			local := filepath.Join(dir, "x."+tc.to)
			uri := "s3://conv/out/x." + tc.to
			code, _, stderr := runCLI("convert", "--to", tc.to, tc.in, local)
			require.Equal(t, exitOK, code, stderr)
			code, _, stderr = runCLI("convert", "--to", tc.to, tc.in, uri)
			require.Equal(t, exitOK, code, stderr)
			got, err := srv.Get("conv", "out/x."+tc.to)
			require.NoError(t, err)
			want, err := os.ReadFile(local)
			require.NoError(t, err)
			assert.Equal(t, want, got, "the object holds what the file holds")
			assert.Equal(t, inspectJSON(t, local), inspectJSON(t, uri))

			back := filepath.Join(dir, "back."+tc.to)
			code, _, stderr = runCLI("convert", "--to", tc.to, uri, back)
			require.Equal(t, exitOK, code, stderr)
			again, err := os.ReadFile(back)
			require.NoError(t, err)
			assert.Equal(t, want, again, "from the object, the same bytes again")
		})
	}

	// Large enough for several parts.
	big := filepath.Join(dir, "big.npy")
	require.NoError(t, os.WriteFile(big, bigNpy(t, 20<<20), 0o644))
	code, _, stderr := runCLI("convert", "--to", "arrow", big, "s3://conv/big.arrow")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCLI("convert", "--to", "npy", "s3://conv/big.arrow", filepath.Join(dir, "big2.npy"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, inspectJSON(t, big)[0].SHA256, inspectJSON(t, filepath.Join(dir, "big2.npy"))[0].SHA256)

	// Failures leave nothing: a tensor that is not there, a format that cannot hold it, an
	// interruption part-way through the upload.
	code, _, stderr = runCLI("convert", "--to", "csr", golden+"/dense_double_rank3.tensor", "s3://conv/fail/x.csr")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	var out, errOut strings.Builder
	code = run(ctx, []string{"convert", "--to", "npy", big, "s3://conv/fail/big.npy"}, &out, &errOut)
	if code == exitOK {
		t.Log("the conversion finished before the interruption")
	} else {
		assert.Contains(t, errOut.String(), "s3://conv/fail/big.npy")
	}
	objects, uploads := srv.Keys(t, "conv")
	for _, o := range objects {
		if code != exitOK {
			assert.False(t, strings.HasPrefix(o, "fail/"), "left behind: %s", o)
		}
	}
	assert.Empty(t, uploads, "no upload left behind")

	// Not writable, not there.
	code, _, stderr = runCLI("convert", "--to", "npy", big, "https://example.invalid/x.npy")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "https://example.invalid/x.npy: objects cannot be written there")
	code, _, stderr = runCLI("inspect", "s3://conv/nothing.npy")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow inspect: s3://conv/nothing.npy: no such object (404 Not Found, NotFound)\n", stderr)
	srv.Put(t, "conv", "empty.npy", nil)
	code, _, stderr = runCLI("inspect", "s3://conv/empty.npy")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow inspect: s3://conv/empty.npy: the file is empty\n", stderr)
	b, err := os.ReadFile(big)
	require.NoError(t, err)
	srv.Put(t, "conv", "cut.npy", b[:len(b)/2])
	code, _, stderr = runCLI("inspect", "s3://conv/cut.npy")
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasPrefix(stderr, "ndarrow inspect: s3://conv/cut.npy: "), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "\n"))
}

// bigNpy returns a float32 .npy file of about n bytes.
func bigNpy(t *testing.T, n int) []byte {
	t.Helper()
	rows := n / (4 * 256)
	header := "{'descr': '<f4', 'fortran_order': False, 'shape': (" + strconv.Itoa(rows) + ", 256), }"
	for (10+len(header)+1)%64 != 0 {
		header += " "
	}
	header += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(header)), byte(len(header)>>8))
	b = append(b, header...)
	data := make([]byte, rows*256*4)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return append(b, data...)
}

// TestServeObjects: serve s3://BUCKET/PREFIX serves a Hive-partitioned Parquet table (one
// tensor per column, the partitions' rows in key order, each row group fetched as it is sent)
// beside a directory of mixed files, and follows objects added, by listing the prefix again;
// get writes to an object and put uploads one.
func TestServeObjects(t *testing.T) {
	srv := storetest.StartS3(t, "lake")
	dir := t.TempDir()
	part := filepath.Join(dir, "part.parquet")
	code, _, stderr := runCLI("convert", "--to", "parquet", "../../npy/testdata/numpy/i16_rank2.npy", part)
	require.Equal(t, exitOK, code, stderr)
	srv.PutFile(t, "lake", "data/events/year=2024/part-0.parquet", part)
	srv.PutFile(t, "lake", "data/events/year=2025/part-0.parquet", part)
	srv.Put(t, "lake", "data/events/_SUCCESS", nil)
	srv.PutFile(t, "lake", "data/f16_rank2.npy", "../../npy/testdata/numpy/f16_rank2.npy")
	srv.PutFile(t, "lake", "data/batch.arrow", "../../arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow")
	srv.PutFile(t, "lake", "data/lingvo.tfrecord", "../../tfrecord/testdata/tensorflow/lingvo_wmt14_ende_wpm_32k_test.tfrecord")
	srv.PutFile(t, "lake", "other/x.npy", "../../npy/testdata/numpy/i64_vector.npy")

	s := startServe(t, "s3://lake/data", "--writable", "--poll", "100ms")
	// serve's log is its standard error: a writable server without a token says so, and
	// nothing else is said at start
	noToken := `level=WARN msg="flight: the server takes uploads and deletes (serve --writable) from any client that reaches it: it has no token (serve --token, $NDARROW_TOKEN)"`
	require.Eventually(t, func() bool { return strings.Contains(s.stderr.String(), noToken) }, 10*time.Second, 10*time.Millisecond, s.stderr.String())
	assert.Equal(t, 1, strings.Count(s.stderr.String(), "\n"), s.stderr.String())
	code, out, stderr := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	for _, name := range []string{"events.i16_rank2", "f16_rank2", "batch.images", "lingvo.source_id"} {
		assert.Contains(t, out, name+" ")
	}
	assert.NotContains(t, out, "i64_vector", "outside the prefix")

	// The table is the two partitions' rows, as the same table on disk gives.
	local := filepath.Join(dir, "lake", "events")
	for _, y := range []string{"2024", "2025"} {
		require.NoError(t, os.MkdirAll(filepath.Join(local, "year="+y), 0o755))
		b, err := os.ReadFile(part)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(local, "year="+y, "part-0.parquet"), b, 0o644))
	}
	got := filepath.Join(dir, "got.npy")
	code, _, stderr = runCLI("get", s.uri, "events.i16_rank2", got)
	require.Equal(t, exitOK, code, stderr)
	want := inspectJSON(t, local)
	require.Len(t, want, 1)
	assert.Equal(t, []int64{8, 6}, want[0].Shape)
	assert.Equal(t, want[0].SHA256, inspectJSON(t, got)[0].SHA256)
	code, _, stderr = runCLI("get", s.uri, "f16_rank2", got)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, inspectJSON(t, "../../npy/testdata/numpy/f16_rank2.npy")[0].SHA256, inspectJSON(t, got)[0].SHA256)

	// get writes an object, put uploads one.
	code, _, stderr = runCLI("get", s.uri, "events.i16_rank2", "s3://lake/out/events.npy")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, want[0].SHA256, inspectJSON(t, "s3://lake/out/events.npy")[0].SHA256)
	code, _, stderr = runCLI("put", "--name", "uploaded", s.uri, "s3://lake/other/x.npy")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCLI("get", s.uri, "uploaded", got)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, inspectJSON(t, "../../npy/testdata/numpy/i64_vector.npy")[0].SHA256, inspectJSON(t, got)[0].SHA256)

	// A new partition appears at the next listing.
	srv.PutFile(t, "lake", "data/events/year=2026/part-0.parquet", part)
	require.Eventually(t, func() bool { return strings.Contains(s.stdout.String(), "changed events.i16_rank2") }, 10*time.Second, 20*time.Millisecond, s.stdout.String())
	code, out, _ = runCLI("ls", s.uri)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "(12, 6)")
}

// TestGoldenFilesOverHTTP: a golden file an HTTP server serves (range requests, as any static
// file server or a presigned URL answers them) inspects as the local file does; the URL's
// query is sent but never shown.
func TestGoldenFilesOverHTTP(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	srv := httptest.NewServer(http.FileServer(http.Dir(root)))
	defer srv.Close()
	for _, rel := range []string{
		"parquet/testdata/arrow-cpp-17-parquet/tensors.parquet",
		"npy/testdata/numpy/f64_fortran.npy",
		"npy/testdata/numpy-npz/savez.npz",
		"arrowtensor/testdata/arrow-cpp-17/batch_tensors.arrow",
		"tfrecord/testdata/tensorflow/tfx_penguin_eval.tfrecord.gz",
	} {
		file := "../../" + rel
		uri := srv.URL + "/" + rel
		_, want, _ := runCLI("inspect", "--json", "--splits", file)
		code, got, stderr := runCLI("inspect", "--json", "--splits", uri+"?X-Amz-Signature=secret")
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, want, got, rel)
	}
	code, _, stderr := runCLI("inspect", srv.URL+"/missing.npy?X-Amz-Signature=secret")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "ndarrow inspect: "+srv.URL+"/missing.npy: no such object (404 Not Found)\n", stderr)
}

// TestServeObjectsInShards: two servers over the same prefix, each serving its share of the
// objects and row groups (--shard K/2) and listing the other (--shards), give one tensor whose
// rows come from both, fetched from the two in parallel, equal to the files read locally.
func TestServeObjectsInShards(t *testing.T) {
	srv := storetest.StartS3(t, "sharded")
	dir := t.TempDir()
	local := filepath.Join(dir, "t")
	require.NoError(t, os.MkdirAll(local, 0o755))
	for i := range 3 { // three parts of 5 row groups each
		rows := int64(50 + 10*i)
		d := ndarray.New[float32](rows, 64)
		for j := range d.Ravel() {
			d.Ravel()[j] = float32(i*100000 + j)
		}
		rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "emb", Kind: dataset.KindFixedShape, Dense: d}})
		require.NoError(t, err)
		path := filepath.Join(local, fmt.Sprintf("part-%d.parquet", i))
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{RowGroupBytes: rows * 64 * 4 / 5})
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
		rec.Release()
		srv.PutFile(t, "sharded", "t/"+filepath.Base(path), path)
	}
	addrs := []string{freeAddr(t), freeAddr(t)}
	uris := []string{"grpc://" + addrs[0], "grpc://" + addrs[1]}
	for k := range 2 {
		startServeAt(t, addrs[k], "s3://sharded/t", "--shard", fmt.Sprintf("%d/2", k), "--location", uris[k], "--shards", strings.Join(uris, ","))
	}
	want := inspectJSON(t, local)
	require.Len(t, want, 1)
	require.Equal(t, []int64{180, 64}, want[0].Shape)
	for k := range 2 {
		c, err := flight.Dial(uris[k], flight.ClientOptions{})
		require.NoError(t, err)
		info, err := c.Info(context.Background(), "t.emb")
		require.NoError(t, err)
		assert.Equal(t, 2, info.Endpoints, "one endpoint per server")
		assert.EqualValues(t, 180, info.Rows)
		c.Close()

		got := filepath.Join(dir, fmt.Sprintf("got%d.npy", k))
		code, _, stderr := runCLI("get", uris[k], "t.emb", got)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, want[0].SHA256, inspectJSON(t, got)[0].SHA256)
	}

	code, _, stderr := runCLI("serve", "--shard", "2/2", "s3://sharded/t")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--shard "2/2": not K/N with 0 ≤ K < N`)
}

// TestServeObjectsFaults: an object replaced or removed after it was listed is an error
// naming it for the client that asked, and the server serves everything else — the next
// listing serves the new version; a store that stops answering fails only what must still be
// fetched from it (a Parquet row group, a run of .npy rows), not what was read whole.
func TestServeObjectsFaults(t *testing.T) {
	srv := storetest.StartS3(t, "faults")
	dir := t.TempDir()
	big := filepath.Join(dir, "big.npy") // larger than what is fetched with the footer
	require.NoError(t, os.WriteFile(big, bigNpy(t, 1<<20), 0o644))
	part := filepath.Join(dir, "part.parquet")
	code, _, stderr := runCLI("convert", "--to", "parquet", "--parquet-compression", "none", big, part)
	require.Equal(t, exitOK, code, stderr)
	srv.PutFile(t, "faults", "d/a.parquet", part)
	srv.PutFile(t, "faults", "d/b.parquet", part)
	srv.PutFile(t, "faults", "d/f16_rank2.npy", "../../npy/testdata/numpy/f16_rank2.npy")
	// A column-major .npy is read whole; the rest is fetched as it is read.
	srv.PutFile(t, "faults", "d/f64_fortran.npy", "../../npy/testdata/numpy/f64_fortran.npy")
	// Changes are seen at SIGHUP or the reload action only.
	s := startServe(t, "s3://faults/d", "--poll", "1h")
	got := filepath.Join(dir, "got.npy")

	// a.parquet replaced by another version: its row groups are not fetched from it.
	other := filepath.Join(dir, "other.parquet")
	code, _, stderr = runCLI("convert", "--to", "parquet", "--parquet-compression", "snappy", big, other)
	require.Equal(t, exitOK, code, stderr)
	srv.PutFile(t, "faults", "d/a.parquet", other)
	code, _, stderr = runCLI("get", s.uri, "a.big", got)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "code = DataLoss desc = a.parquet: file changed while being read")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	// b.parquet removed.
	_, err := srv.Client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String("faults"), Key: aws.String("d/b.parquet")})
	require.NoError(t, err)
	code, _, stderr = runCLI("get", s.uri, "b.big", got)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "b.parquet: no such object")
	// Everything else is served.
	code, _, stderr = runCLI("get", s.uri, "f16_rank2", got)
	require.Equal(t, exitOK, code, stderr)

	// A reload lists the prefix again: the new a, no b.
	raw, err := arrowflight.NewClientWithMiddleware(strings.TrimPrefix(s.uri, "grpc://"), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer raw.Close()
	stream, err := raw.DoAction(context.Background(), &arrowflight.Action{Type: flight.ActionReload})
	require.NoError(t, err)
	_, err = stream.Recv()
	require.NoError(t, err)
	code, out, _ := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "a.big")
	assert.NotContains(t, out, "b.big")
	code, _, stderr = runCLI("get", s.uri, "a.big", got)
	require.Equal(t, exitOK, code, stderr)

	// The store stops answering: what was read whole is still served, the rest fails.
	srv.Stop()
	code, _, stderr = runCLI("get", s.uri, "f64_fortran", got)
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCLI("get", s.uri, "f16_rank2", got)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "f16_rank2.npy: read: dial tcp")
	code, _, stderr = runCLI("get", s.uri, "a.big", got)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "a.parquet: read: dial tcp")
	assert.Contains(t, stderr, "connection refused")
}

// TestObjectsOnGCS: gs:// works as s3:// does, against Google Cloud Storage's emulator:
// golden files inspect as the local files, conversions write objects that appear whole, and
// serve gs://BUCKET/PREFIX serves a Hive-partitioned table.
func TestObjectsOnGCS(t *testing.T) {
	gcs := storetest.StartGCS(t, "gbucket")
	for _, file := range goldenFiles(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		key := "golden/" + filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
		gcs.Put(t, "gbucket", key, b)
		uri := "gs://gbucket/" + key
		wantCode, wantOut, wantErr := runCLI("inspect", "--json", "--splits", file)
		code, out, errOut := runCLI("inspect", "--json", "--splits", uri)
		assert.Equal(t, wantCode, code, file)
		assert.Equal(t, strings.ReplaceAll(wantOut, file, uri), out, file)
		assert.Equal(t, strings.ReplaceAll(wantErr, file, uri), errOut, file)
	}

	dir := t.TempDir()
	big := filepath.Join(dir, "big.npy")
	require.NoError(t, os.WriteFile(big, bigNpy(t, 20<<20), 0o644))
	for _, to := range []string{"parquet", "arrow", "npy"} {
		uri := "gs://gbucket/table/year=202" + strconv.Itoa(len(to)) + "/part-0." + to
		if to != "parquet" {
			uri = "gs://gbucket/out/big." + to
		}
		code, _, stderr := runCLI("convert", "--to", to, big, uri)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, inspectJSON(t, big)[0].SHA256, inspectJSON(t, uri)[0].SHA256, to)
	}
	code, _, stderr := runCLI("convert", "--to", "parquet", big, "gs://gbucket/table/year=2021/part-0.parquet")
	require.Equal(t, exitOK, code, stderr)

	s := startServe(t, "gs://gbucket/table")
	code, out, stderr := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "table.big ")
	got := filepath.Join(dir, "got.npy")
	code, _, stderr = runCLI("get", s.uri, "table.big", got)
	require.Equal(t, exitOK, code, stderr)
	rows := inspectJSON(t, big)[0].Shape[0]
	assert.Equal(t, []int64{2 * rows, 256}, inspectJSON(t, got)[0].Shape)
}

// TestInterruptedUploadLeavesNothing: Ctrl-C (SIGINT) while convert uploads an object to a
// real store ends the process with 130, and neither the object nor its upload's parts remain.
func TestInterruptedUploadLeavesNothing(t *testing.T) {
	srv := storetest.StartS3(t, "intr")
	big := filepath.Join(t.TempDir(), "big.npy")
	require.NoError(t, os.WriteFile(big, bigNpy(t, 256<<20), 0o644))
	cmd := exec.Command(os.Args[0], "convert", "--to", "arrows", big, "s3://intr/big.arrows")
	cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Interrupted once its upload is under way (the store lists it), or once it is done.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		objects, uploads := srv.Keys(t, "intr")
		if len(objects)+len(uploads) > 0 {
			break
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	objects, uploads := srv.Keys(t, "intr")
	assert.Empty(t, uploads, "no upload left behind")
	if err == nil { // finished before the signal: then it is there whole
		t.Log("the upload finished before the interruption")
		assert.Equal(t, []string{"big.arrows"}, objects)
		return
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 130, exit.ExitCode(), stderr.String())
	assert.Empty(t, objects, "nothing half-written")
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), stderr.String())
}
