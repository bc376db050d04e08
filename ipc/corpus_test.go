package ipc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corpusDir holds apache/arrow-testing's IPC data: fuzz crash reproducers and the
// integration "gold" files of many implementations and versions.
const corpusDir = "testdata/arrow-testing"

// integrationFiles returns the valid integration files: streams and files.
func integrationFiles(t testing.TB) []string {
	var out []string
	for _, pattern := range []string{"*.stream", "*.arrow_file"} {
		files, err := filepath.Glob(filepath.Join(corpusDir, "arrow-ipc-stream/integration/*", pattern))
		require.NoError(t, err)
		out = append(out, files...)
	}
	require.NotEmpty(t, out)
	return out
}

// crashFiles returns the fuzz crash reproducers and the forward-compatibility files.
func crashFiles(t testing.TB) []string {
	var out []string
	for _, pattern := range []string{"arrow-ipc-stream/*", "arrow-ipc-file/*", "arrow-ipc-tensor-stream/*", "forward-compatibility/*"} {
		files, err := filepath.Glob(filepath.Join(corpusDir, pattern))
		require.NoError(t, err)
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && !strings.HasSuffix(f, ".md") {
				out = append(out, f)
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// arrowGoRecords reads a trusted file with arrow-go's own readers, for comparison.
func arrowGoRecords(t *testing.T, b []byte) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	var recs []arrow.Record
	if bytes.HasPrefix(b, []byte(fileMagic)) {
		r, err := arrowipc.NewFileReader(bytes.NewReader(b))
		require.NoError(t, err)
		defer r.Close()
		for i := range r.NumRecords() {
			rec, err := r.Record(i)
			require.NoError(t, err)
			rec.Retain()
			recs = append(recs, rec)
		}
		return r.Schema(), recs
	}
	r, err := arrowipc.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer r.Release()
	for r.Next() {
		r.Record().Retain()
		recs = append(recs, r.Record())
	}
	require.NoError(t, r.Err())
	return r.Schema(), recs
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// TestIntegrationFilesMatchArrowGo reads every integration file — written by Arrow C++, Java,
// JS, Rust, Go and others over many versions, big-endian and compressed ones included — and
// compares each column with what arrow-go's own reader gives. Columns of types the decoder
// builds no arrays for are skipped (with SkipUnsupported) or refused with ErrUnsupported
// (without); nothing else may differ.
func TestIntegrationFilesMatchArrowGo(t *testing.T) {
	for _, path := range integrationFiles(t) {
		name := strings.TrimPrefix(path, corpusDir+"/arrow-ipc-stream/integration/")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)

			schema, recs, err := ReadRecordBatches(b, BatchOptions{Allocator: mem, SkipUnsupported: true})
			require.NoError(t, err)
			defer releaseAll(recs)
			strict, strictRecs, strictErr := ReadRecordBatches(b, BatchOptions{Allocator: mem})
			releaseAll(strictRecs)

			if strings.Contains(name, "decimal32") || strings.Contains(name, "decimal64") {
				// arrow-go v17 cannot read these; the decoder skips them.
				assert.Equal(t, 0, schema.NumFields())
				assert.ErrorIs(t, strictErr, ErrUnsupported)
				return
			}
			theirSchema, theirs := arrowGoRecords(t, b)
			defer releaseAll(theirs)
			require.Len(t, recs, len(theirs))
			if schema.NumFields() < theirSchema.NumFields() {
				assert.ErrorIs(t, strictErr, ErrUnsupported, "a skipped column is refused without SkipUnsupported")
				assert.ErrorContains(t, strictErr, "column")
			} else {
				require.NoError(t, strictErr)
				assert.True(t, strict.Equal(theirSchema), "schema %v, arrow-go's %v", strict, theirSchema)
			}
			// Match kept columns to arrow-go's by position among the fields of the same name.
			for c, f := range schema.Fields() {
				theirCol := -1
				seen := 0
				for i, g := range theirSchema.Fields() {
					if g.Name == f.Name && arrow.TypeEqual(g.Type, f.Type) {
						if seen == occurrence(schema, c) {
							theirCol = i
							break
						}
						seen++
					}
				}
				require.GreaterOrEqual(t, theirCol, 0, "column %q of type %v not in arrow-go's schema", f.Name, f.Type)
				for i := range recs {
					assert.True(t, array.Equal(recs[i].Column(c), theirs[i].Column(theirCol)),
						"batch %d column %q differs from arrow-go's", i, f.Name)
				}
			}
		})
	}
}

// occurrence returns how many earlier fields of schema have field c's name and type.
func occurrence(schema *arrow.Schema, c int) int {
	n := 0
	for i := range c {
		if schema.Field(i).Name == schema.Field(c).Name && arrow.TypeEqual(schema.Field(i).Type, schema.Field(c).Type) {
			n++
		}
	}
	return n
}

// TestBigEndianFilesEqualLittleEndianTwins reads each file Arrow C++ wrote on a big-endian
// machine and its little-endian twin (the same data): the records must be equal, values
// byte-swapped into copies.
func TestBigEndianFilesEqualLittleEndianTwins(t *testing.T) {
	bigs, err := filepath.Glob(filepath.Join(corpusDir, "arrow-ipc-stream/integration/1.0.0-bigendian/*"))
	require.NoError(t, err)
	require.NotEmpty(t, bigs)
	for _, big := range bigs {
		little := strings.Replace(big, "1.0.0-bigendian", "1.0.0-littleendian", 1)
		t.Run(filepath.Base(big), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			bb, err := os.ReadFile(big)
			require.NoError(t, err)
			lb, err := os.ReadFile(little)
			require.NoError(t, err)
			bs, brecs, err := ReadRecordBatches(bb, BatchOptions{Allocator: mem, SkipUnsupported: true})
			require.NoError(t, err)
			defer releaseAll(brecs)
			ls, lrecs, err := ReadRecordBatches(lb, BatchOptions{SkipUnsupported: true})
			require.NoError(t, err)
			defer releaseAll(lrecs)
			assert.True(t, bs.Equal(ls), "schemas differ: %v / %v", bs, ls)
			require.Len(t, brecs, len(lrecs))
			for i := range brecs {
				assert.True(t, array.RecordEqual(brecs[i], lrecs[i]), "batch %d differs", i)
			}
			if len(brecs) > 0 && brecs[0].NumRows() > 0 {
				assert.Positive(t, mem.CurrentAlloc(), "big-endian values are swapped into copies")
			}
		})
	}
}

// TestCrashReproducersGiveErrors reads every crash reproducer of Arrow's own fuzzers through
// the record-batch reader and the tensor reader: each gives an error wrapping a sentinel (or,
// for the few that are valid after all, records), never a panic, and leaks nothing.
func TestCrashReproducersGiveErrors(t *testing.T) {
	for _, path := range crashFiles(t) {
		t.Run(strings.TrimPrefix(path, corpusDir+"/"), func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, recs, err := ReadRecordBatches(b, BatchOptions{Allocator: mem, SkipUnsupported: true})
			if err == nil {
				for _, r := range recs {
					readRecord(t, r)
				}
				releaseAll(recs)
			} else {
				assertSentinel(t, err)
			}
			if _, err := NewBytesReader(b, Limits{}).ReadAll(); err != nil {
				assertSentinel(t, err)
			}
		})
	}
}

// assertSentinel fails unless err wraps one of the readers' sentinels.
func assertSentinel(t *testing.T, err error) {
	t.Helper()
	for _, s := range []error{ErrInvalid, ErrLimit, ErrUnsupported, io.ErrUnexpectedEOF} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("an error without a sentinel: %v", err)
}

// readRecord touches every value of a record through arrow-go's API: its string form visits
// each slot, and a round trip through arrow-go's writer and reader must give it back.
func readRecord(t *testing.T, rec arrow.Record) {
	t.Helper()
	for _, col := range rec.Columns() {
		for i := range col.Len() {
			_ = col.ValueStr(i)
		}
	}
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(rec.Schema()))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	_, back, err := ReadRecordBatches(buf.Bytes(), BatchOptions{})
	require.NoError(t, err, "ndarrow cannot read what arrow-go wrote of its own records")
	defer releaseAll(back)
	require.Len(t, back, 1)
	// Exactly equal, NaN to NaN (a float column may hold NaNs, which never compare equal).
	assert.True(t, array.RecordApproxEqual(rec, back[0], array.WithNaNsEqual(true), array.WithAbsTolerance(0)),
		"a round trip through arrow-go's writer changed the record")
}
