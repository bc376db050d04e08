package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// npyBytes is a float32 .npy file of rows×cols values, every one v.
func npyBytes(t testing.TB, rows, cols int64, v float32) []byte {
	var buf bytes.Buffer
	_, err := npy.Write(&buf, ndarray.Full(v, rows, cols))
	require.NoError(t, err)
	return buf.Bytes()
}

// replaceFile writes b to path as a careful writer does: a temporary file renamed over it.
func replaceFile(t testing.TB, path string, b []byte) {
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	require.NoError(t, os.WriteFile(tmp, b, 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// listing is what a server lists and serves: name → shape (the flights listed as unreadable,
// which it does not serve, left out).
func listing(t testing.TB, c *Client) map[string]string {
	infos, err := c.List(context.Background())
	require.NoError(t, err)
	out := map[string]string{}
	for _, i := range infos {
		if len(i.Unreadable) == 0 {
			out[i.Name] = fmt.Sprint(i.Shape)
		}
	}
	return out
}

// onDisk is what the directory holds now, as a fresh scan reads it: name → shape, of the
// tables whose every file reads.
func onDisk(t testing.TB, dir string) map[string]string {
	d, err := dataset.ScanDir(dir, limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	out := map[string]string{}
	for _, s := range d.Sources {
		if len(d.SkippedOf(tableOfSource(s))) == 0 {
			out[s.Name] = fmt.Sprint(s.Shape())
		}
	}
	return out
}

// followLimit is how soon a change must show: the second, more under the race
// detector, which slows everything several times (the plain run holds the second).
var followLimit = map[bool]time.Duration{false: time.Second, true: 3 * time.Second}[childtest.RaceEnabled]

// requireListedWithin fails unless the server lists the directory as it is within d.
func requireListedWithin(t testing.TB, c *Client, dir string, d time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	want := onDisk(t, dir)
	for {
		got := listing(t, c)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("%s: after %v the server lists %v, the directory holds %v", what, d, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServedDirectoryFollowsItsFiles: a served directory whose large file is replaced,
// truncated, appended to and removed in a loop while clients fetch it. The server never dies;
// each stream either brings one whole version of the file or fails with codes.DataLoss naming
// the file by its path under the directory (never the server's absolute path) — or NotFound
// once it is gone, FailedPrecondition (ErrUnreadable) naming it while it is cut short; a
// tensor of another file is served all along; and the listing is the directory as it is
// within a second of each change.
func TestServedDirectoryFollowsItsFiles(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	const cols = 1024
	rowsOf := func(version int) int64 { return int64(2048 + 256*(version%4)) } // 8–11 MiB
	replaceFile(t, x, npyBytes(t, rowsOf(1), cols, 1))
	replaceFile(t, filepath.Join(dir, "y.npy"), npyBytes(t, 16, 4, 7))

	var logs syncBuffer
	s := serve(t, Options{MaxMessageBytes: 256 << 10, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	watching := make(chan error, 1)
	go func() { watching <- s.store.Watch(ctx, func(Changes, error) {}) }()
	c := dial(t, s.uri, ClientOptions{})

	var (
		wg                               sync.WaitGroup
		done                             atomic.Bool
		whole, dataLoss, notFound, other atomic.Int64
		unreadable                       atomic.Int64
		failures                         = make(chan string, 100)
	)
	fail := func(msg string) {
		select {
		case failures <- msg:
		default: // enough to tell
		}
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				got, err := c.Get(ctx, "x")
				if err != nil {
					st, _ := status.FromError(err)
					switch {
					case strings.Contains(err.Error(), dir):
						fail("the server's path reached a client: " + err.Error())
					case st.Code() == codes.DataLoss && strings.Contains(st.Message(), "x.npy: ") &&
						strings.Contains(st.Message(), "file changed while being read"):
						dataLoss.Add(1)
					case st.Code() == codes.NotFound:
						notFound.Add(1)
						time.Sleep(2 * time.Millisecond) // removed
					case st.Code() == codes.FailedPrecondition && errors.Is(err, ErrUnreadable) &&
						strings.Contains(st.Message(), "unreadable part x.npy: "):
						unreadable.Add(1)
						time.Sleep(2 * time.Millisecond) // truncated: not served until whole
					default:
						other.Add(1)
						fail("unexpected error: " + err.Error())
					}
					continue
				}
				vals := got.Dense.(*ndarray.Dense[float32]).Ravel()
				v := vals[0]
				if got.Rows() != rowsOf(int(v)) || slices.IndexFunc(vals, func(e float32) bool { return e != v }) >= 0 {
					fail(fmt.Sprintf("a stream mixed versions: %d rows, first value %v", got.Rows(), v))
				}
				whole.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // the other file is served all along
		defer wg.Done()
		for !done.Load() {
			got, err := c.Get(ctx, "y")
			if err != nil || got.Dense.(*ndarray.Dense[float32]).Get(15, 3) != 7 {
				fail(fmt.Sprintf("y: %v", err))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	var slowest time.Duration
	wait := func(what string) {
		time.Sleep(30 * time.Millisecond) // let streams run into the change
		slowest = max(slowest, requireListedWithin(t, c, dir, followLimit, what))
	}
	raw := rawClient(t, s.uri)
	for v := 2; v < 6; v++ {
		replaceFile(t, x, npyBytes(t, rowsOf(v), cols, float32(v)))
		wait("replaced")
		// A stream under way (held by flow control after two messages) when the file shrinks.
		held, err := raw.DoGet(ctx, &arrowflight.Ticket{Ticket: []byte("x")})
		require.NoError(t, err)
		for range 2 {
			_, err := held.Recv()
			require.NoError(t, err)
		}
		require.NoError(t, os.Truncate(x, 1_000_000))
		err = collect(held.Recv)
		require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
		// the fault of a page past the end, or the message's check of the file before it is sent
		require.Regexp(t, `^x\.npy: (x: )?file changed while being read`, status.Convert(err).Message())
		require.NotContains(t, err.Error(), dir)
		dataLoss.Add(1)
		wait("truncated")
		replaceFile(t, x, npyBytes(t, rowsOf(v), cols, float32(v)))
		wait("whole again")
		f, err := os.OpenFile(x, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.Write(make([]byte, 4096))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		wait("appended to")
		require.NoError(t, os.Remove(x))
		wait("removed")
		replaceFile(t, x, npyBytes(t, rowsOf(v), cols, float32(v)))
		wait("back")
	}
	done.Store(true)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	t.Logf("streams: %d whole, %d DataLoss, %d NotFound, %d unreadable; the listing followed within %v",
		whole.Load(), dataLoss.Load(), notFound.Load(), unreadable.Load(), slowest)
	assert.Positive(t, whole.Load())
	assert.Zero(t, other.Load())
	assert.Contains(t, logs.String(), x, "the server's log names the file whole")

	// The reload action rescans too, naming the files it skips under the directory.
	require.NoError(t, os.Truncate(x, 100))
	stream, err := raw.DoAction(ctx, &arrowflight.Action{Type: ActionReload})
	require.NoError(t, err)
	res, err := stream.Recv()
	require.NoError(t, err)
	var reload ReloadResult
	require.NoError(t, json.Unmarshal(res.Body, &reload))
	if !slices.Contains(reload.Removed, "x") { // unless the watcher was first
		assert.Empty(t, listing(t, c)["x"])
	}
	stop()
	require.NoError(t, <-watching)
}

// TestReloadWithoutWatching: with no watcher, the reload action is what brings the store up
// to date: it reports what was added, changed and removed, and the files it skipped by their
// path under the directory (a table with one is not served); uploads are not touched, and a
// directory's tensor is not deleted.
func TestReloadWithoutWatching(t *testing.T) {
	dir := t.TempDir()
	replaceFile(t, filepath.Join(dir, "a.npy"), npyBytes(t, 4, 4, 1))
	replaceFile(t, filepath.Join(dir, "b.npy"), npyBytes(t, 4, 4, 2))
	s := serve(t, Options{Writable: true}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()
	require.NoError(t, c.Put(ctx, "up", dataset.Tensor{Kind: dataset.KindDense, Dense: ndarray.Full[float32](3, 2, 2)}))
	require.NoError(t, c.Put(ctx, "b", dataset.Tensor{Kind: dataset.KindDense, Dense: ndarray.Full[float32](9, 1, 1)}))

	replaceFile(t, filepath.Join(dir, "a.npy"), npyBytes(t, 8, 4, 1))
	require.NoError(t, os.Remove(filepath.Join(dir, "b.npy")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "t"), 0o755))
	replaceFile(t, filepath.Join(dir, "t", "c.npy"), npyBytes(t, 2, 4, 3))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t", "bad.npy"), []byte("\x93NUMPY\x01\x00"), 0o644))
	assert.Equal(t, "(4, 4)", listing(t, c)["a"], "nothing changes before the reload")

	reload := func() ReloadResult {
		stream, err := rawClient(t, s.uri).DoAction(ctx, &arrowflight.Action{Type: ActionReload})
		require.NoError(t, err)
		res, err := stream.Recv()
		require.NoError(t, err)
		var r ReloadResult
		require.NoError(t, json.Unmarshal(res.Body, &r))
		return r
	}
	r := reload()
	assert.Equal(t, []string{"t"}, r.Added)
	assert.Equal(t, []string{"a"}, r.Changed)
	assert.Equal(t, []string{"b"}, r.Removed)
	require.Len(t, r.Skipped, 1)
	assert.True(t, strings.HasPrefix(r.Skipped[0], "t/bad.npy: "), r.Skipped[0])
	assert.NotContains(t, r.Skipped[0], dir)
	assert.Equal(t, map[string]string{"a": "(8, 4)", "b": "(1, 1)", "up": "(2, 2)"}, listing(t, c),
		"the upload b stays; t, whose part bad.npy cannot be read, is not served")
	_, err = c.Get(ctx, "t")
	require.ErrorIs(t, err, ErrUnreadable)
	assert.Contains(t, err.Error(), "unreadable part t/bad.npy: ")

	r = reload()
	assert.True(t, Changes{Added: r.Added, Changed: r.Changed, Removed: r.Removed}.Empty())
	assert.Empty(t, r.Skipped, "a problem is reported once")

	assert.ErrorIs(t, s.store.Delete("a"), ErrFromDirectory)
	err = c.Delete(ctx, "a")
	require.ErrorIs(t, err, ErrFromDirectory, "the client's error matches it too")
	assert.Equal(t, "flight: a tensor of a served directory: a is read from a.npy; remove the file to remove it", err.Error())
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	require.NoError(t, c.Delete(ctx, "b"))
	require.NoError(t, c.Delete(ctx, "up"))
	assert.Equal(t, map[string]string{"a": "(8, 4)"}, listing(t, c))
}

// TestWatchFollowsNewTables: a table directory created while the server runs (nested
// partitions, its part written right after) is watched and served, and so is a partition
// added to it.
func TestWatchFollowsNewTables(t *testing.T) {
	dir := t.TempDir()
	s := serve(t, Options{}, "grpc")
	_, err := s.store.AddDir(dir, limits.Limits{})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var mu sync.Mutex
	var seen []Changes
	watching := make(chan error, 1)
	go func() {
		watching <- s.store.Watch(ctx, func(c Changes, err error) {
			mu.Lock()
			seen = append(seen, c)
			mu.Unlock()
			assert.NoError(t, err)
		})
	}()
	c := dial(t, s.uri, ClientOptions{})
	time.Sleep(50 * time.Millisecond) // the watcher is up

	part := filepath.Join(dir, "events", "day=1", "part-0.npy")
	require.NoError(t, os.MkdirAll(filepath.Dir(part), 0o755))
	replaceFile(t, part, npyBytes(t, 5, 3, 1))
	requireListedWithin(t, c, dir, followLimit, "a new table")
	assert.Equal(t, "(5, 3)", listing(t, c)["events"])

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "events", "day=2"), 0o755))
	replaceFile(t, filepath.Join(dir, "events", "day=2", "part-0.npy"), npyBytes(t, 2, 3, 2))
	requireListedWithin(t, c, dir, followLimit, "a new partition")
	assert.Equal(t, "(7, 3)", listing(t, c)["events"])
	stop()
	require.NoError(t, <-watching)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	assert.Equal(t, []string{"events"}, seen[0].Added)
}

// TestPutAllIsAtomic: tensors uploaded as one are stored together once the last has arrived,
// or not at all when one fails on the way (here: past the server's upload limit), and a
// transaction the server does not hold is NotFound.
func TestPutAllIsAtomic(t *testing.T) {
	s := serve(t, Options{Writable: true, MaxPutBytes: 1 << 20}, "grpc")
	c := dial(t, s.uri, ClientOptions{})
	ctx := context.Background()
	a := dataset.Tensor{Kind: dataset.KindDense, Dense: ndarray.Full[float32](1, 4, 4)}
	b := dataset.Tensor{Kind: dataset.KindDense, Dense: ndarray.Full[int64](2, 3)}
	require.NoError(t, c.PutAll(ctx, []string{"a", "b"}, []dataset.Tensor{a, b}))
	assert.Equal(t, map[string]string{"a": "(4, 4)", "b": "(3,)"}, listing(t, c))

	huge := dataset.Tensor{Kind: dataset.KindDense, Dense: ndarray.New[float64](1<<18, 1)} // 2 MiB
	small := dataset.Tensor{Kind: dataset.KindDense, Dense: ndarray.Full[float32](5, 2)}
	err := c.PutAll(ctx, []string{"c", "d"}, []dataset.Tensor{small, huge})
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.NotContains(t, listing(t, c), "c", "the first of a failed upload is not stored")
	s.staged.mu.Lock()
	assert.Zero(t, s.staged.bytes, "nothing left staged")
	assert.Empty(t, s.staged.txs)
	s.staged.mu.Unlock()

	raw := rawClient(t, s.uri)
	stream, err := raw.DoAction(ctx, &arrowflight.Action{Type: ActionCommit, Body: []byte("nope")})
	require.NoError(t, err)
	_, err = stream.Recv()
	assert.Equal(t, codes.NotFound, status.Code(err))
}
