package dataset

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
)

// TestParquetFilesAndMutantsDoNotPanic reads every Parquet file of the repository's test
// data (Arrow C++, arrow-rs, DuckDB, parquet-testing) and random mutants of each (one or two
// bytes changed) through Read: each reads or fails with an error, none panics. It once found
// parquet-testing's alltypes_plain.parquet, a valid file, panicking in RecordBytes (arrow-go's
// Binary.ValueOffset refuses the row past the last), and mutants whose pages lie about their
// levels leaving offsets that index past their values.
func TestParquetFilesAndMutantsDoNotPanic(t *testing.T) {
	var files []string
	require.NoError(t, filepath.WalkDir("../parquet/testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			if info, err := d.Info(); err == nil && info.Size() < 1<<20 {
				files = append(files, p)
			}
		}
		return err
	}))
	require.NotEmpty(t, files)
	mutants := 60
	if testing.Short() {
		mutants = 10
	}
	rng := rand.New(rand.NewSource(1))
	lim := limits.Limits{MaxCopySize: 256 << 20, MaxElements: 1 << 26, MaxDenseElements: 1 << 26}
	for _, f := range files {
		orig, err := os.ReadFile(f)
		require.NoError(t, err)
		read := func(b []byte, what string) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: %s: panic: %v", f, what, r)
				}
			}()
			_, _, _ = Read(b, "x", lim)
		}
		read(orig, "the file")
		for range mutants {
			b := append([]byte(nil), orig...)
			at := rng.Intn(len(b))
			b[at] = byte(rng.Intn(256))
			read(b, "a mutant")
		}
	}
}

// TestRecordBytesChecksOffsets: offsets that do not describe their values are an error
// wrapping ErrOffsets, not a panic. (Offsets past a string's data arrow-go refuses itself,
// when the array is built.)
func TestRecordBytesChecksOffsets(t *testing.T) {
	offsets := func(vals ...int32) *memory.Buffer {
		return memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals))
	}
	for _, tc := range []struct {
		name string
		data arrow.ArrayData
		err  error
	}{
		{"binary, valid", array.NewData(arrow.BinaryTypes.Binary, 2, []*memory.Buffer{nil, offsets(0, 1, 3), memory.NewBufferBytes([]byte("abc"))}, nil, 0, 0), nil},
		{"binary, decreasing", array.NewData(arrow.BinaryTypes.Binary, 2, []*memory.Buffer{nil, offsets(3, 2, 1), memory.NewBufferBytes([]byte("abc"))}, nil, 0, 0), ErrOffsets},
		{"string, decreasing", array.NewData(arrow.BinaryTypes.String, 2, []*memory.Buffer{nil, offsets(2, 1, 0), memory.NewBufferBytes([]byte("abc"))}, nil, 0, 0), ErrOffsets},
		{"list, past its values", array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int8), 1, []*memory.Buffer{nil, offsets(0, 10)},
			[]arrow.ArrayData{array.NewData(arrow.PrimitiveTypes.Int8, 9, []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 9))}, nil, 0, 0)}, 0, 0), ErrOffsets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arr := array.MakeFromData(tc.data)
			rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "c", Type: arr.DataType()}}, nil), []arrow.Array{arr}, int64(arr.Len()))
			_, err := RecordBytes(rec)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.Is(err, tc.err), "%v", err)
		})
	}
}
