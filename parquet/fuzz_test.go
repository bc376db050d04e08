package parquet_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// fuzzLimits keep a fuzzed input's work small.
var fuzzLimits = limits.Limits{MaxMetadataSize: 1 << 20, MaxElements: 1 << 20, MaxCopySize: 16 << 20}

// seedFiles returns the golden files, DuckDB's and the files of parquet-testing, those of at most
// maxSeed bytes when maxSeed > 0 (large seeds make the fuzzer spend its time minimizing).
func seedFiles(t testing.TB, maxSeed int) [][]byte {
	var out [][]byte
	for _, pattern := range []string{"testdata/arrow-cpp-17-parquet/*.parquet", "testdata/duckdb/*.parquet", "testdata/parquet-testing/*/*.parquet"} {
		paths, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			if maxSeed <= 0 || len(b) <= maxSeed {
				out = append(out, b)
			}
		}
	}
	return out
}

// readSafely reads every row group of b (at most 16) within lim: a file gives records or an
// error wrapping one of the reader's sentinels.
func readSafely(t testing.TB, b []byte, lim limits.Limits) error {
	mem := memory.NewGoAllocator()
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: lim})
	if err == nil {
		for i := range min(r.NumRowGroups(), 16) {
			rec, rerr := r.ReadRowGroup(i)
			if rerr != nil {
				err = rerr
				break
			}
			if rec.NumRows() != r.RowGroupRows(i) {
				t.Fatalf("row group %d: %d rows of %d", i, rec.NumRows(), r.RowGroupRows(i))
			}
			rec.Release()
		}
	}
	if err != nil && !errors.Is(err, parquet.ErrInvalid) && !errors.Is(err, parquet.ErrUnsupported) &&
		!errors.Is(err, limits.ErrExceeded) {
		t.Fatalf("an error with no sentinel: %v", err)
	}
	return err
}

func FuzzReader(f *testing.F) {
	for _, b := range seedFiles(f, 2<<10) {
		f.Add(b)
	}
	// a small file of tensor columns ndarrow wrote: a fixed_shape_tensor and a large_list
	rec := table(f, memory.NewGoAllocator(), 3)
	defer rec.Release()
	small := writeParquet(f, rec, parquet.WriterOptions{Compression: parquet.Snappy})
	f.Logf("a seed of %d bytes", len(small))
	f.Add(small)
	f.Fuzz(func(t *testing.T, b []byte) {
		readSafely(t, b, fuzzLimits)
	})
}
