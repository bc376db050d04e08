package parquet_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// directFile writes one record of tensor columns as Parquet with codec c and row groups of
// about rowGroupBytes: float32 [rows, 4, 3], float64 [rows, 2], int64 [rows, 5] as
// arrow.fixed_shape_tensor, and uint32 as nested fixed-size lists.
func directFile(t testing.TB, rows int64, c parquet.Compression, rowGroupBytes int64) []byte {
	mem := memory.DefaultAllocator
	f32 := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]*12+i[1]*3+i[2]) * 0.5 }, rows, 4, 3)
	f64 := ndarray.FromFunc(func(i []int64) float64 { return float64(i[0]*2+i[1]) - 7 }, rows, 2)
	i64 := ndarray.FromFunc(func(i []int64) int64 { return i[0]*5 + i[1] - 1<<40 }, rows, 5)
	var cols []arrow.Array
	var fields []arrow.Field
	add := func(name string, a arrow.Array) {
		cols = append(cols, a)
		fields = append(fields, arrow.Field{Name: name, Type: a.DataType(), Nullable: true})
	}
	a1, err := arrowtensor.NewFixedShapeTensorArray(mem, f32, nil)
	require.NoError(t, err)
	add("f32", a1)
	a2, err := arrowtensor.NewFixedShapeTensorArray(mem, f64, []string{"pair"})
	require.NoError(t, err)
	add("f64", a2)
	a3, err := arrowtensor.NewFixedShapeTensorArray(mem, i64, nil)
	require.NoError(t, err)
	add("i64", a3)
	nested := array.NewFixedSizeListBuilder(mem, 2, arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Uint32))
	inner := nested.ValueBuilder().(*array.FixedSizeListBuilder)
	vals := inner.ValueBuilder().(*array.Uint32Builder)
	for r := range rows {
		nested.Append(true)
		for k := range int64(2) {
			inner.Append(true)
			for j := range int64(3) {
				vals.Append(uint32(r*6 + k*3 + j))
			}
		}
	}
	add("nested", nested.NewArray())
	nested.Release()
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, rows)
	for _, a := range cols {
		a.Release()
	}
	defer rec.Release()
	var buf bytes.Buffer
	w, err := parquet.NewWriter(&buf, rec.Schema(), parquet.WriterOptions{Compression: c, RowGroupBytes: rowGroupBytes})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// compareDirect reads every row group of b through the direct path (where it applies) and
// through pqarrow alone: both refuse, or both give equal records. It returns the columns the
// direct path read.
func compareDirect(t *testing.T, b []byte, lim limits.Limits) int {
	// pqarrow leaks a page's buffer on some bad pages: the memory is Go's either way, and only
	// the direct path's own files are checked for leaks (TestDirectLeaksNothing).
	return compareDirectWith(t, b, lim, memory.NewGoAllocator())
}

// compareDirectWith is compareDirect allocating from mem.
func compareDirectWith(t *testing.T, b []byte, lim limits.Limits, mem memory.Allocator) int {
	direct, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: lim})
	if err != nil {
		return 0
	}
	general, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: lim})
	require.NoError(t, err)
	parquet.ReadGeneral(general)
	read := 0
	for i := range direct.NumRowGroups() {
		want, wantErr := general.ReadRowGroup(i)
		got, err := direct.ReadRowGroup(i)
		if wantErr != nil {
			// arrow-go's own panics, its decoders stopping short, and its "dict eof" are no
			// verdict on the file: v17 panics (index out of range) on, decodes no value of,
			// or runs out of, dictionary indices of bit width 0 in bit-packed runs — all zero,
			// valid — which the direct path reads (FuzzDirect/0072207aa868d4de,
			// b3a1a35a548ed514, cc23a18a1b001444).
			if !arrowGoFailed(wantErr) {
				require.Error(t, err, "the direct path read row group %d pqarrow refuses: %v", i, wantErr)
			}
			if got != nil {
				got.Release()
			}
			continue
		}
		require.NoError(t, err, "row group %d", i)
		// NaNs equal (a value of either path), nothing else approximately
		same := array.RecordApproxEqual(want, got, array.WithNaNsEqual(true), array.WithAbsTolerance(0))
		require.True(t, same, "row group %d: the direct path gives other values than pqarrow", i)
		want.Release()
		got.Release()
	}
	read += parquet.DirectReads(direct)
	return read
}

// arrowGoFailed reports whether err is arrow-go failing on its own rather than refusing the
// file (see compareDirectWith).
func arrowGoFailed(err error) bool {
	for _, msg := range []string{"runtime error", "rows decoded of", "dict eof"} {
		if strings.Contains(err.Error(), msg) {
			return true
		}
	}
	return false
}

// TestDirectMatchesPqarrow: on every Parquet file of the repository (Arrow C++'s, arrow-rs's,
// DuckDB's, parquet-testing's valid and bad files) and on tensor columns written with each
// codec and row-group size, the direct path gives what pqarrow gives, or both refuse; the
// written tensor columns are read directly.
func TestDirectMatchesPqarrow(t *testing.T) {
	paths, err := filepath.Glob("testdata/*/*.parquet")
	require.NoError(t, err)
	more, err := filepath.Glob("testdata/*/*/*.parquet")
	require.NoError(t, err)
	require.NotEmpty(t, more)
	direct := 0
	for _, p := range append(paths, more...) {
		t.Run(p, func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			direct += compareDirect(t, b, limits.Limits{})
		})
	}
	assert.Positive(t, direct, "Arrow C++'s and arrow-rs's tensor columns are read directly")
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Snappy, parquet.Zstd, parquet.Gzip} {
		for _, rg := range []int64{1 << 10, 64 << 10, 0} {
			n := compareDirect(t, directFile(t, 3000, c, rg), limits.Limits{})
			assert.Positive(t, n, "%v, row groups of %d bytes", c, rg)
		}
	}
}

// TestDirectLeaksNothing: what the direct path allocates is released with the records.
func TestDirectLeaksNothing(t *testing.T) {
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Snappy, parquet.Zstd} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		require.Positive(t, compareDirectWith(t, directFile(t, 500, c, 4<<10), limits.Limits{}, mem))
		mem.AssertSize(t, 0)
	}
}

// FuzzDirect compares the direct path with pqarrow on any file: what the direct path reads,
// pqarrow reads the same; and the Arrow stream WriteArrowStream writes holds what the row
// groups read.
func FuzzDirect(f *testing.F) {
	f.Add(directFile(f, 6, parquet.Uncompressed, 256))
	f.Add(directFile(f, 6, parquet.Zstd, 0))
	// tensor and list columns Arrow C++, arrow-rs and DuckDB wrote, a few kilobytes each
	for _, name := range []string{"arrow-cpp-17-parquet/tensors.parquet", "arrow-cpp-17-parquet/tensors_snappy.parquet",
		"arrow-rs/batch_tensors.snappy.parquet", "arrow-rs/batch_tensors.zstd.parquet", "duckdb/lists_v2.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	// nested ragged columns, nulls at every level (the nested direct reader)
	f.Add(nestedFile(f, 40, 5))
	f.Add(nestedFile(f, 60, 0)) // and without nulls: cells a block at a time, levels in one run
	// dictionary pages, indices, and the fallback to PLAIN partway (the dictionary path)
	dict := dictionaryTable(f, 40)
	f.Add(dictionaryFile(f, dict, compress.Codecs.Uncompressed, pq.DataPageV1, 64))
	f.Add(dictionaryFile(f, dict, compress.Codecs.Snappy, pq.DataPageV2, 1<<10))
	dict.Release()
	// strings in DELTA_BYTE_ARRAY pages, which the direct path alone reads (more string files
	// are in testdata/fuzz/FuzzDirect)
	strs := bytesTable(f, 30, true)
	f.Add(bytesFile(f, strs, compress.Codecs.Uncompressed, pq.DataPageV1, pq.Encodings.DeltaByteArray, false, 0))
	f.Add(bytesFile(f, strs, compress.Codecs.Snappy, pq.DataPageV2, pq.Encodings.DeltaByteArray, false, 0))
	strs.Release()
	lim := limits.Limits{MaxMetadataSize: 1 << 16, MaxElements: 1 << 14, MaxCopySize: 1 << 20} // small: a fuzzed exec runs instrumented
	f.Fuzz(func(t *testing.T, b []byte) {
		compareDirect(t, b, lim)
		streamMatches(t, b, lim, memory.NewGoAllocator()) // pages written from the file as they are
	})
}

// TestByteStreamSplit reads parquet-testing's BYTE_STREAM_SPLIT file (float and double columns,
// ZSTD) to the values Arrow C++ 17 reads from it.
func TestByteStreamSplit(t *testing.T) {
	b, err := os.ReadFile("testdata/parquet-testing/data/byte_stream_split.zstd.parquet")
	require.NoError(t, err)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	rec, err := r.ReadRowGroup(0)
	require.NoError(t, err)
	defer rec.Release()
	for i, name := range []string{"f32", "f64"} {
		want, err := os.ReadFile("testdata/arrow-cpp-17-parquet/byte_stream_split." + name + ".bin")
		require.NoError(t, err)
		require.Equal(t, name, rec.Schema().Field(i).Name)
		col := rec.Column(i)
		require.Zero(t, col.NullN())
		got := col.Data().Buffers()[1].Bytes()
		width := len(want) / col.Len()
		require.Equal(t, want, got[col.Data().Offset()*width:][:len(want)], name)
	}
	require.Equal(t, 2, parquet.DirectReads(r))
}

// dictionaryFile writes rec with pqarrow's dictionary encoding, as Arrow C++ and pyarrow do by
// default: a dictionary page, data pages of RLE_DICTIONARY indices, and past dictLimit bytes
// of dictionary the fallback to PLAIN pages in the same column chunk.
func dictionaryFile(t testing.TB, rec arrow.Record, codec compress.Compression, version pq.DataPageVersion, dictLimit int64) []byte {
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithCompression(codec), pq.WithDataPageSize(4<<10), pq.WithDictionaryDefault(true),
		pq.WithDictionaryPageSizeLimit(dictLimit), pq.WithDataPageVersion(version), pq.WithMaxRowGroupLength(1000), pq.WithBatchSize(64))
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// dictionaryTable is rows rows of emb (fixed_size_list<float32>[8], of 1000 distinct values)
// and label (int64, each its own). (Its list elements are nullable: arrow-go v17's dictionary
// writer writes a fixed-size list of non-nullable elements as nulls.)
func dictionaryTable(t testing.TB, rows int) arrow.Record {
	mem := memory.DefaultAllocator
	embs := array.NewFixedSizeListBuilder(mem, 8, arrow.PrimitiveTypes.Float32)
	defer embs.Release()
	values := embs.ValueBuilder().(*array.Float32Builder)
	labels := array.NewInt64Builder(mem)
	defer labels.Release()
	for r := range rows {
		embs.Append(true)
		for k := range 8 {
			values.Append(float32((r*8+k)*7%1000) / 8)
		}
		labels.Append(int64(r) * 3)
	}
	emb, label := embs.NewArray(), labels.NewArray()
	defer emb.Release()
	defer label.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: emb.DataType(), Nullable: true}, {Name: "label", Type: label.DataType()}}, nil)
	return array.NewRecord(schema, []arrow.Array{emb, label}, int64(rows))
}

// TestDictionaryReadDirectly: tensor and scalar columns whose chunks are dictionary-encoded —
// wholly, or falling back to PLAIN pages partway, in data pages v1 and v2, uncompressed or
// not — are read by the direct path, to what pqarrow reads; so are Arrow C++'s (its writer's
// default: dictionary encoding).
func TestDictionaryReadDirectly(t *testing.T) {
	rec := dictionaryTable(t, 2600)
	defer rec.Release()
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Zstd, compress.Codecs.Snappy} {
		for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
			for _, limit := range []int64{1 << 20, 1 << 10} { // the whole chunk; a fallback
				name := fmt.Sprintf("%s/v%d/dictionary of %d bytes", codec, version, limit)
				t.Run(name, func(t *testing.T) {
					b := dictionaryFile(t, rec, codec, version, limit)
					r, err := parquet.NewReader(b, parquet.ReaderOptions{})
					require.NoError(t, err)
					require.Equal(t, 3, r.NumRowGroups())
					assert.Equal(t, 2*r.NumRowGroups(), compareDirect(t, b, limits.Limits{}), "every column read directly")
				})
			}
		}
	}
}

// TestArrowCppDictionaryReadDirectly: the fixed-size list columns Arrow C++ 17 wrote with
// dictionary encoding (images, perm, emb of tensors.parquet) are read directly, to the values
// pqarrow reads (the golden tests check them against Arrow C++'s own dumps).
func TestArrowCppDictionaryReadDirectly(t *testing.T) {
	for _, name := range []string{"tensors.parquet", "tensors_snappy.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata/arrow-cpp-17-parquet", name))
		require.NoError(t, err)
		r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{"images", "perm", "emb"}})
		require.NoError(t, err)
		for rg := range r.NumRowGroups() {
			rec, err := r.ReadRowGroup(rg)
			require.NoError(t, err)
			rec.Release()
		}
		assert.Equal(t, 3*r.NumRowGroups(), parquet.DirectReads(r), name)
		assert.GreaterOrEqual(t, compareDirect(t, b, limits.Limits{}), 3*r.NumRowGroups(), "%s: every column as pqarrow reads it", name)
	}
}
