package parquet_test

import (
	"encoding/binary"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// parquetMutants calls yield with changed copies of the golden files and a file ndarrow
// wrote: every byte of each footer (the Thrift metadata whose counts and offsets arrow-go
// trusts) set to two other values, every byte of the pages of the smallest golden file
// likewise (page headers: sizes, value counts, encodings; and the encoded values) and every
// sixth byte of the pages of DuckDB's DELTA_* file and parquet-testing's LZ4_RAW file, every
// byte of the pages of a dictionary-encoded file (dictionary pages, indices — arrow-go sizes a
// buffer by the largest index — and the fallback to PLAIN) set to those two and to 31 (a bit
// width that makes the indices after it huge), and random changes of one to four bytes
// anywhere.
func parquetMutants(t *testing.T, yield func(what string, b []byte)) {
	var files [][]byte
	for _, name := range []string{"tensors.parquet", "tensors_snappy.parquet", "dtypes.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata/arrow-cpp-17-parquet", name))
		require.NoError(t, err)
		files = append(files, b)
	}
	rec := everyTensorColumn(t, memory.NewGoAllocator(), 5)
	files = append(files, writeParquet(t, rec, parquet.WriterOptions{Compression: parquet.Zstd}))
	rec.Release()
	dict := dictionaryTable(t, 24)
	pageFiles := [][]byte{files[2], dictionaryFile(t, dict, compress.Codecs.Uncompressed, pq.DataPageV1, 96)}
	dict.Release()
	for _, name := range []string{"duckdb/delta_v2.parquet", "parquet-testing/data/lz4_raw_compressed.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		pageFiles = append(pageFiles, b)
	}
	mutate := func(b []byte, at int, v byte) []byte {
		m := append([]byte(nil), b...)
		m[at] = v
		return m
	}
	for _, b := range files {
		footer := len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:]))
		for at := footer; at < len(b)-8; at++ {
			yield("footer byte", mutate(b, at, b[at]^0x80))
			yield("footer byte", mutate(b, at, 0xff))
		}
	}
	for i, small := range pageFiles {
		step := 1 // every byte of the golden file's and the dictionary file's pages; of the others, every sixth
		if i > 1 {
			step = 6
		}
		footer := len(small) - 8 - int(binary.LittleEndian.Uint32(small[len(small)-8:]))
		for at := 4; at < footer; at += step {
			yield("page byte", mutate(small, at, small[at]^0x80))
			yield("page byte", mutate(small, at, 0xff))
			if i == 1 { // a bit width byte made 31: the indices after it as large as they come
				yield("page byte", mutate(small, at, 31))
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	for range 4000 {
		b := append([]byte(nil), files[rng.Intn(len(files))]...)
		for range 1 + rng.Intn(4) {
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		}
		yield("random bytes", b)
	}
}

// TestMutantsUnderAMemoryLimit reads every mutant in a child process under a 2 GiB
// address-space limit: each gives records or an error wrapping a sentinel, none kills the
// process, and none allocates much more than the limits it is read with allow.
func TestMutantsUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestMutantsUnderAMemoryLimitChild", 2<<30)
}

func TestMutantsUnderAMemoryLimitChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestMutantsUnderAMemoryLimit")
	}
	lim := limits.Limits{MaxCopySize: 64 << 20}
	var n, refused int
	var worst uint64
	seen := 0
	parquetMutants(t, func(what string, b []byte) {
		if seen++; childtest.RaceEnabled && seen%8 != 0 {
			return // the race detector makes each read ten times slower: one mutant in eight
		}
		n++
		before := childtest.Allocated()
		if err := readSafely(t, b, lim); err != nil {
			refused++
		}
		worst = max(worst, childtest.Allocated()-before)
	})
	t.Logf("child: %d mutants, %d refused, none died; the most one allocated: %d KiB", n, refused, worst>>10)
	require.Less(t, worst, uint64(256<<20), "a mutant allocated far beyond MaxCopySize")
}
