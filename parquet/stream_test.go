package parquet_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// streamMatches writes b as an Arrow IPC stream and checks that arrow-go's reader reads back
// a record batch per row group, each what ReadRowGroup gives, or that both refuse; it returns
// the stream (nil: refused). It allocates from mem.
func streamMatches(t *testing.T, b []byte, lim limits.Limits, mem memory.Allocator) []byte {
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: lim})
	if err != nil {
		return nil
	}
	var out bytes.Buffer
	streamErr := r.WriteArrowStream(&out, parquet.StreamOptions{})
	var groups []arrow.Record
	defer func() {
		for _, g := range groups {
			g.Release()
		}
	}()
	var readErr error
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		if err != nil {
			readErr = err
			break
		}
		groups = append(groups, rec)
	}
	if readErr != nil {
		require.Error(t, streamErr, "the stream was written where row group %d is refused: %v", len(groups), readErr)
		return nil
	}
	require.NoError(t, streamErr)
	sr, err := arrowipc.NewReader(bytes.NewReader(out.Bytes()), arrowipc.WithAllocator(mem))
	require.NoError(t, err)
	defer sr.Release()
	require.True(t, sr.Schema().Equal(r.Schema()), "the stream's schema is the reader's")
	n := 0
	for sr.Next() {
		require.Less(t, n, len(groups))
		assert.True(t, array.RecordApproxEqual(groups[n], sr.Record(), array.WithNaNsEqual(true), array.WithAbsTolerance(0)),
			"batch %d: other values than row group %d", n, n)
		n++
	}
	require.NoError(t, sr.Err())
	require.Equal(t, len(groups), n, "a batch per row group")
	return out.Bytes()
}

// TestWriteArrowStream: on every Parquet file of the repository and on tensor columns of each
// codec and row-group size, the stream holds the row groups' values, a batch each.
func TestWriteArrowStream(t *testing.T) {
	paths, err := filepath.Glob("testdata/*/*.parquet")
	require.NoError(t, err)
	more, err := filepath.Glob("testdata/*/*/*.parquet")
	require.NoError(t, err)
	written := 0
	for _, p := range append(paths, more...) {
		t.Run(p, func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			// pqarrow leaks a page's buffer of some files (TestCorpus): Go's memory here
			if streamMatches(t, b, limits.Limits{}, memory.NewGoAllocator()) != nil {
				written++
			}
		})
	}
	assert.Greater(t, written, 20)
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		for _, rg := range []int64{1 << 10, 64 << 10, 0} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			require.NotNil(t, streamMatches(t, directFile(t, 3000, c, rg), limits.Limits{}, mem))
			mem.AssertSize(t, 0)
		}
	}
}

// addressWriter records the address and length of every write.
type addressWriter struct {
	writes [][2]uintptr
	n      int64
}

func (w *addressWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.writes = append(w.writes, [2]uintptr{uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p))})
	}
	w.n += int64(len(p))
	return len(p), nil
}

// TestWriteArrowStreamFromTheFile: an uncompressed tensor column's values are written from
// the file's own bytes — every byte of them handed to the writer lies in the file — while a
// compressed file's are decoded into memory first.
func TestWriteArrowStreamFromTheFile(t *testing.T) {
	inFile := func(b []byte, w *addressWriter) (in int64) {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		for _, wr := range w.writes {
			if wr[0] >= lo && wr[0]+wr[1] <= lo+uintptr(len(b)) {
				in += int64(wr[1])
			}
		}
		return in
	}
	const rows = 4000
	values := int64(rows * (12*4 + 2*8 + 5*8 + 6*4)) // every column's
	b := directFile(t, rows, parquet.Uncompressed, 64<<10)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	var w addressWriter
	require.NoError(t, r.WriteArrowStream(&w, parquet.StreamOptions{}))
	assert.Equal(t, values, inFile(b, &w), "every value written from the file")
	assert.Less(t, w.n-values, values/10, "and little else")

	z := directFile(t, rows, parquet.Zstd, 64<<10)
	r, err = parquet.NewReader(z, parquet.ReaderOptions{})
	require.NoError(t, err)
	w = addressWriter{}
	require.NoError(t, r.WriteArrowStream(&w, parquet.StreamOptions{}))
	assert.Zero(t, inFile(z, &w), "compressed values are decoded")
}

// TestWriteArrowStreamFromAShrinkingFile: a mapped file cut short under the write is an error,
// not a fault that ends the process.
func TestWriteArrowStreamFromAShrinkingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	require.NoError(t, os.WriteFile(path, directFile(t, 20000, parquet.Uncompressed, 256<<10), 0o644))
	r, err := parquet.Open(path, parquet.ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, os.Truncate(path, 4096))
	err = r.WriteArrowStream(copyingWriter{}, parquet.StreamOptions{})
	require.Error(t, err)
}

// copyingWriter reads what it is given, as a user-space writer (a buffer, a compressor) does.
type copyingWriter struct{}

func (copyingWriter) Write(p []byte) (int, error) {
	sum := byte(0)
	for _, c := range p {
		sum += c
	}
	_ = sum
	return len(p), nil
}

// TestWriteArrowStreamWriteError: the writer's error ends the stream.
func TestWriteArrowStreamWriteError(t *testing.T) {
	r, err := parquet.NewReader(directFile(t, 3000, parquet.Uncompressed, 16<<10), parquet.ReaderOptions{})
	require.NoError(t, err)
	bad := errors.New("disk full")
	err = r.WriteArrowStream(&failingWriter{left: 5000, err: bad}, parquet.StreamOptions{})
	require.ErrorIs(t, err, bad)
}

// failingWriter fails once more than left bytes would have been written to it.
type failingWriter struct {
	left int
	err  error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		return 0, f.err
	}
	f.left -= len(p)
	return len(p), nil
}

var _ io.Writer = (*failingWriter)(nil)

// TestWriteArrowStreamOnlyFromFile: with OnlyFromFile an uncompressed file of tensor columns is
// written as without it, and a compressed one not at all.
func TestWriteArrowStreamOnlyFromFile(t *testing.T) {
	b := directFile(t, 3000, parquet.Uncompressed, 16<<10)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	var all, only bytes.Buffer
	require.NoError(t, r.WriteArrowStream(&all, parquet.StreamOptions{}))
	require.NoError(t, r.WriteArrowStream(&only, parquet.StreamOptions{OnlyFromFile: true}))
	assert.Equal(t, all.Bytes(), only.Bytes())

	r, err = parquet.NewReader(directFile(t, 3000, parquet.Snappy, 16<<10), parquet.ReaderOptions{})
	require.NoError(t, err)
	var none bytes.Buffer
	require.ErrorIs(t, r.WriteArrowStream(&none, parquet.StreamOptions{OnlyFromFile: true}), parquet.ErrNotFromFile)
	assert.Zero(t, none.Len(), "nothing written")
}

// TestWriteArrowStreamArrowCpp: Arrow C++ 17 reads the stream WriteArrowStream writes from a
// file of tensor columns in uncompressed pages (testdata/stream: tensors.parquet, five row
// groups; tensors.arrows, the stream; what `golden read tensors.arrows DIR` printed, and the
// sha256 of each value dump it wrote): the stream is written again byte for byte, and every
// batch's values are what Arrow C++ read.
func TestWriteArrowStreamArrowCpp(t *testing.T) {
	b, err := os.ReadFile("testdata/stream/tensors.parquet")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/stream/tensors.arrows")
	require.NoError(t, err)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	var got bytes.Buffer
	require.NoError(t, r.WriteArrowStream(&got, parquet.StreamOptions{OnlyFromFile: true}))
	require.Equal(t, want, got.Bytes(), "the stream Arrow C++ read")

	sums, err := os.ReadFile("testdata/stream/arrow-cpp-17.sha256")
	require.NoError(t, err)
	cpp := map[string]string{} // dump name → sha256
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 2)
		cpp[f[1]] = f[0]
	}
	require.Len(t, cpp, r.NumRowGroups()*int(r.Schema().NumFields()))
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		require.NoError(t, err)
		for k, f := range r.Schema().Fields() {
			d := rec.Column(k).Data()
			for len(d.Children()) == 1 {
				d = d.Children()[0]
			}
			sum := sha256.Sum256(d.Buffers()[1].Bytes())
			assert.Equal(t, cpp[fmt.Sprintf("msg%d.%s.bin", i+1, f.Name)], hex.EncodeToString(sum[:]), "row group %d, %s", i, f.Name)
		}
		rec.Release()
	}
}
