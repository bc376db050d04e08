package parquet_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// tensorTable is a record of a [rows, cell] float32 tensor column "emb" (fixed-size lists) and
// an int64 column "label", values from seed.
func tensorTable(t testing.TB, rows, cell int, seed uint64) arrow.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	values := make([]float32, rows*cell)
	for i := range values {
		values[i] = float32(rng.IntN(1000)) / 8 // compressible, as pixels are
	}
	labels := make([]int64, rows)
	for i := range labels {
		labels[i] = int64(i)*3 + int64(seed)
	}
	leaf := array.NewData(arrow.PrimitiveTypes.Float32, len(values), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(values))}, nil, 0, 0)
	defer leaf.Release()
	fsl := arrow.FixedSizeListOfNonNullable(int32(cell), arrow.PrimitiveTypes.Float32)
	embData := array.NewData(fsl, rows, []*memory.Buffer{nil}, []arrow.ArrayData{leaf}, 0, 0)
	defer embData.Release()
	emb := array.MakeFromData(embData)
	defer emb.Release()
	labelData := array.NewData(arrow.PrimitiveTypes.Int64, rows, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(labels))}, nil, 0, 0)
	defer labelData.Release()
	label := array.MakeFromData(labelData)
	defer label.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: fsl}, {Name: "label", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecord(schema, []arrow.Array{emb, label}, int64(rows))
}

// mixedTable is a record of columns TakeRows reads page by page and columns it decodes: a
// float32 [rows, 8] tensor, int64 labels, strings, float64s with nulls and a ragged list.
func mixedTable(t testing.TB, mem memory.Allocator, rows int) arrow.Record {
	bld := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ids", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil))
	defer bld.Release()
	emb := bld.Field(0).(*array.FixedSizeListBuilder)
	embValues := emb.ValueBuilder().(*array.Float32Builder)
	ids := bld.Field(4).(*array.ListBuilder)
	idValues := ids.ValueBuilder().(*array.Int32Builder)
	for i := range rows {
		emb.Append(true)
		for j := range 8 {
			embValues.Append(float32(i*8 + j))
		}
		bld.Field(1).(*array.Int64Builder).Append(int64(i) * 7)
		bld.Field(2).(*array.StringBuilder).Append(string(rune('a'+i%26)) + "-row")
		if i%5 == 3 {
			bld.Field(3).AppendNull()
		} else {
			bld.Field(3).(*array.Float64Builder).Append(float64(i) / 4)
		}
		ids.Append(true)
		for j := range i % 3 {
			idValues.Append(int32(i + j))
		}
	}
	return bld.NewRecord()
}

// pqarrowFile writes rec with arrow-go's pqarrow in pages of about pageBytes, rows a row group.
func pqarrowFile(t testing.TB, rec arrow.Record, codec compress.Compression, version pq.DataPageVersion, pageBytes, rowGroup int64) []byte {
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithCompression(codec), pq.WithDataPageSize(pageBytes), pq.WithDictionaryDefault(false),
		pq.WithDataPageVersion(version), pq.WithMaxRowGroupLength(rowGroup), pq.WithBatchSize(64), pq.WithStats(true))
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// withIndex is parquet.WithOffsetIndex of b.
func withIndex(t testing.TB, b []byte) []byte {
	out, err := parquet.WithOffsetIndex(b)
	require.NoError(t, err)
	return out
}

// takeFiles are files TakeRows is checked on: ndarrow's, arrow-go's pqarrow's, Arrow C++'s
// (cpp17-pageindex-*: with the page index Arrow C++ wrote) and parquet-testing's, with and
// without offset indexes.
func takeFiles(t *testing.T) map[string][]byte {
	mem := memory.NewGoAllocator()
	files := map[string][]byte{}
	tensors := tensorTable(t, 2600, 256, 1) // 1 KiB rows: pages of 1024 rows, two row groups
	defer tensors.Release()
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		b := writeParquet(t, tensors, parquet.WriterOptions{Compression: c, RowGroupBytes: 1600 << 10})
		files["ndarrow/tensor-"+c.String()] = b
		files["ndarrow/tensor-"+c.String()+"+index"] = withIndex(t, b)
	}
	rec := table(t, mem, 300)
	defer rec.Release()
	files["ndarrow/ragged"] = writeParquet(t, rec, parquet.WriterOptions{Compression: parquet.Snappy, RowGroupBytes: 4 << 10})
	mixed := mixedTable(t, mem, 1500)
	defer mixed.Release()
	for name, c := range map[string]compress.Compression{"none": compress.Codecs.Uncompressed, "zstd": compress.Codecs.Zstd, "snappy": compress.Codecs.Snappy} {
		for v, version := range map[string]pq.DataPageVersion{"v1": pq.DataPageV1, "v2": pq.DataPageV2} {
			b := pqarrowFile(t, mixed, c, version, 1024, 600)
			files["pqarrow/mixed-"+name+"-"+v] = b
			files["pqarrow/mixed-"+name+"-"+v+"+index"] = withIndex(t, b)
		}
	}
	dict := dictionaryTable(t, 2600)
	defer dict.Release()
	for name, c := range map[string]compress.Compression{"none": compress.Codecs.Uncompressed, "zstd": compress.Codecs.Zstd} {
		for v, version := range map[string]pq.DataPageVersion{"v1": pq.DataPageV1, "v2": pq.DataPageV2} {
			for limit, bytes := range map[string]int64{"whole": 1 << 20, "fallback": 1 << 10} {
				b := dictionaryFile(t, dict, c, version, bytes)
				key := fmt.Sprintf("pqarrow/dictionary-%s-%s-%s", limit, name, v)
				files[key] = b
				files[key+"+index"] = withIndex(t, b)
			}
		}
	}
	for _, pattern := range []string{"testdata/arrow-cpp-17-parquet/*.parquet", "testdata/take/*.parquet", "testdata/pageindex/*.parquet", "testdata/arrow-cpp-17-pageindex/*.parquet"} {
		paths, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			files[p] = b
			// Files written with a page index (parquet-testing's, Arrow C++'s cpp17-pageindex-*,
			// ndarrow's) are taken from with their own offset indexes only.
			if !strings.Contains(p, "pageindex") {
				files[p+"+index"] = withIndex(t, b)
			}
		}
	}
	return files
}

// rowSets returns the row sets to take of row group rg: none, the first, the last, the rows
// either side of every page boundary an offset index gives, every seventh, random ones, all.
func rowSets(t *testing.T, r *parquet.Reader, rg int) map[string][]int64 {
	n := r.RowGroupRows(rg)
	sets := map[string][]int64{"none": {}}
	if n == 0 {
		return sets
	}
	sets["first"] = []int64{0}
	sets["last"] = []int64{n - 1}
	if n > 1 {
		sets["first and last"] = []int64{0, n - 1}
	}
	var boundaries []int64
	for leaf := range parquet.NumLeaves(r) {
		indexed, _, err := parquet.PageLocations(r, rg, leaf)
		require.NoError(t, err)
		for _, p := range indexed {
			if p[2] > 0 {
				boundaries = append(boundaries, p[2]-1)
			}
			boundaries = append(boundaries, p[2])
		}
	}
	slices.Sort(boundaries)
	sets["page boundaries"] = slices.Compact(boundaries)
	var seventh, random, all []int64
	rng := rand.New(rand.NewPCG(uint64(n), uint64(rg)))
	for i := range n {
		all = append(all, i)
		if i%7 == 0 {
			seventh = append(seventh, i)
		}
		if rng.IntN(10) == 0 {
			random = append(random, i)
		}
	}
	sets["every seventh"], sets["random"], sets["all"] = seventh, random, all
	return sets
}

// requireRows checks that got holds rows rows of want, in order, column by column (a NaN
// equal to a NaN).
func requireRows(t *testing.T, want, got arrow.Record, rows []int64) {
	t.Helper()
	require.Equal(t, int64(len(rows)), got.NumRows())
	require.True(t, want.Schema().Equal(got.Schema()), "%s\n%s", want.Schema(), got.Schema())
	for c := range int(want.NumCols()) {
		for i, row := range rows {
			if !array.SliceEqual(want.Column(c), row, row+1, got.Column(c), int64(i), int64(i)+1) &&
				!array.SliceApproxEqual(want.Column(c), row, row+1, got.Column(c), int64(i), int64(i)+1, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
				t.Fatalf("column %s: row %d (row %d of the row group) differs", want.ColumnName(c), i, row)
			}
		}
	}
}

// checkedAllocator returns an allocator that must be back to zero at the end of the test, but
// for files arrow-go v17's page reader leaks a page buffer of (its data page v2 files).
func checkedAllocator(t *testing.T, name string) memory.Allocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	if !strings.HasPrefix(name, "pqarrow/") || !strings.Contains(name, "-v2") {
		t.Cleanup(func() { mem.AssertSize(t, 0) })
	}
	return mem
}

// TestTakeRows: TakeRows gives, for every file, row group and row set, the rows ReadRowGroup
// gives, and reads nothing outside TakeRanges, PageIndexRanges and the footer.
func TestTakeRows(t *testing.T) {
	for name, b := range takeFiles(t) {
		t.Run(name, func(t *testing.T) {
			mem := checkedAllocator(t, name)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
			require.NoError(t, err)
			if slices.Contains([]string{"ndarrow/tensor-none", "ndarrow/tensor-zstd+index", "testdata/take/cpp17-zstd.parquet+index", "testdata/take/cpp17-none.parquet",
				"testdata/take/cpp17-pageindex-none.parquet", "testdata/take/cpp17-pageindex-zstd.parquet", "testdata/arrow-cpp-17-pageindex/ndarrow-tensor-none.parquet"}, name) {
				assert.Equal(t, []string{"emb", "label"}, parquet.TakesDirectly(r, 0), "the columns read page by page")
			}
			if strings.HasPrefix(name, "pqarrow/dictionary-") || strings.HasPrefix(name, "testdata/arrow-cpp-17-parquet/tensors") {
				assert.Subset(t, parquet.TakesDirectly(r, 0), []string{"emb"}, "dictionary-encoded columns read page by page")
			}
			for rg := range r.NumRowGroups() {
				full, err := r.ReadRowGroup(rg)
				require.NoError(t, err)
				for set, rows := range rowSets(t, r, rg) {
					got, err := r.TakeRows(rg, rows)
					require.NoError(t, err, "row group %d, %s", rg, set)
					requireRows(t, full, got, rows)
					got.Release()
				}
				full.Release()
			}
		})
	}
}

// sparseCopy returns a copy of b holding only its magic, its footer and ranges: every other
// byte 0xEE.
func sparseCopy(b []byte, ranges ...[]parquet.ByteRange) []byte {
	out := bytes.Repeat([]byte{0xEE}, len(b))
	copy(out, b[:4])
	n := int(uint32(b[len(b)-8]) | uint32(b[len(b)-7])<<8 | uint32(b[len(b)-6])<<16 | uint32(b[len(b)-5])<<24)
	copy(out[len(b)-8-n:], b[len(b)-8-n:])
	for _, rs := range ranges {
		for _, br := range rs {
			copy(out[br.Offset:br.Offset+br.Length], b[br.Offset:br.Offset+br.Length])
		}
	}
	return out
}

// TestTakeRangesAreAllTakeRowsReads: with only the footer, the page indexes and TakeRanges'
// bytes of a file (every other byte overwritten), TakeRows gives the same rows; the ranges of
// a tensor column stored PLAIN and uncompressed are the page heads and the rows, of a
// compressed one whole pages.
func TestTakeRangesAreAllTakeRowsReads(t *testing.T) {
	for name, b := range takeFiles(t) {
		t.Run(name, func(t *testing.T) {
			mem := checkedAllocator(t, name)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
			require.NoError(t, err)
			for rg := range r.NumRowGroups() {
				for set, rows := range rowSets(t, r, rg) {
					ranges, err := r.TakeRanges(rg, rows)
					require.NoError(t, err)
					sparse := sparseCopy(b, ranges, r.PageIndexRanges(rg))
					rs, err := parquet.NewReader(sparse, parquet.ReaderOptions{Allocator: mem})
					require.NoError(t, err)
					want, err := r.TakeRows(rg, rows)
					require.NoError(t, err)
					got, err := rs.TakeRows(rg, rows)
					require.NoError(t, err, "row group %d, %s", rg, set)
					requireRows(t, want, got, seq(len(rows)))
					want.Release()
					got.Release()
				}
			}
		})
	}
}

// seq returns 0, 1, …, n-1.
func seq(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// TestTakeRangesOfPlainTensors: the bytes TakeRows reads of a PLAIN uncompressed tensor column
// with an offset index are each page's header and levels and the rows' bytes.
func TestTakeRangesOfPlainTensors(t *testing.T) {
	rec := tensorTable(t, 2600, 256, 2)
	defer rec.Release()
	b := withIndex(t, writeParquet(t, rec, parquet.WriterOptions{Compression: parquet.Uncompressed, RowGroupBytes: 1600 << 10}))
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{"emb"}})
	require.NoError(t, err)
	require.Greater(t, len(r.PageIndexRanges(0)), 0)
	rows := []int64{3, 500, 1023, 1024, 1400}
	ranges, err := r.TakeRanges(0, rows)
	require.NoError(t, err)
	total := int64(0)
	for _, br := range ranges {
		total += br.Length
	}
	assert.Less(t, total, int64(len(rows))*(1024+8<<10), "about a row's 1 KiB and a page head per row: %v", ranges)
	assert.GreaterOrEqual(t, total, int64(len(rows))*1024)
	whole, err := r.TakeRanges(0, seq(int(r.RowGroupRows(0))))
	require.NoError(t, err)
	assert.Len(t, whole, 1, "every row: the chunk, coalesced")
}

// TestTakeRowsRefuses: row numbers out of order, repeated, negative or past the row group, and
// row groups that are not the file's, are errors wrapping ErrInvalid.
func TestTakeRowsRefuses(t *testing.T) {
	rec := tensorTable(t, 100, 4, 3)
	defer rec.Release()
	b := withIndex(t, writeParquet(t, rec, parquet.WriterOptions{Compression: parquet.Uncompressed}))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		rg   int
		rows []int64
	}{
		{"duplicates are refused", 0, []int64{1, 2, 2}},
		{"unsorted rows are refused", 0, []int64{5, 4}},
		{"a negative row is refused", 0, []int64{-1}},
		{"a row past the row group is refused", 0, []int64{0, 100}},
		{"a row group past the file is refused", 1, []int64{0}},
		{"a negative row group is refused", -1, []int64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := r.TakeRows(tc.rg, tc.rows)
			require.ErrorIs(t, err, parquet.ErrInvalid)
			require.Nil(t, rec)
			ranges, err := r.TakeRanges(tc.rg, tc.rows)
			require.ErrorIs(t, err, parquet.ErrInvalid)
			require.Nil(t, ranges)
		})
	}
}

// TestOffsetIndexMatchesPages: the offset indexes of parquet-testing's files (parquet-mr's,
// Impala's, arrow-rs's) name exactly the data pages a walk of the page headers finds.
func TestOffsetIndexMatchesPages(t *testing.T) {
	paths, err := filepath.Glob("testdata/pageindex/*.parquet")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{})
			require.NoError(t, err)
			indexes := 0
			for rg := range r.NumRowGroups() {
				for leaf := range parquet.NumLeaves(r) {
					indexed, walked, err := parquet.PageLocations(r, rg, leaf)
					require.NoError(t, err)
					if indexed == nil {
						continue
					}
					indexes++
					require.Len(t, indexed, len(walked))
					for i := range indexed {
						assert.Equal(t, walked[i][:2], indexed[i][:2], "page %d", i)
					}
				}
			}
			assert.Positive(t, indexes)
		})
	}
}

// TestHostileOffsetIndexes: offset indexes that do not fit their column chunk or row group are
// errors wrapping ErrInvalid.
func TestHostileOffsetIndexes(t *testing.T) {
	rec := tensorTable(t, 100, 4, 4)
	defer rec.Release()
	plain := writeParquet(t, rec, parquet.WriterOptions{Compression: parquet.Uncompressed})
	b := withIndex(t, plain)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	indexed, _, err := parquet.PageLocations(r, 0, 0)
	require.NoError(t, err)
	require.Len(t, indexed, 1)
	page := [3]int64{indexed[0][0], indexed[0][1], 0}
	for _, tc := range []struct {
		name  string
		pages [][3]int64
	}{
		{"no pages", nil},
		{"a first row not 0", [][3]int64{{page[0], page[1], 1}}},
		{"a page before the chunk", [][3]int64{{page[0] - 1, page[1], 0}}},
		{"a page past the chunk", [][3]int64{{page[0], page[1] + 1, 0}}},
		{"a page of no bytes", [][3]int64{{page[0], 0, 0}}},
		{"rows not increasing", [][3]int64{{page[0], 10, 0}, {page[0] + 10, page[1] - 10, 0}}},
		{"overlapping pages", [][3]int64{{page[0], 10, 0}, {page[0] + 5, page[1] - 5, 50}}},
		{"a row past the row group", [][3]int64{{page[0], 10, 0}, {page[0] + 10, page[1] - 10, 100}}},
		{"a page's rows not its values", [][3]int64{{page[0], 10, 0}, {page[0] + 10, page[1] - 10, 50}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			hostile := parquet.ReplaceOffsetIndex(t, b, 0, 0, parquet.EncodeOffsetIndex(tc.pages))
			r, err := parquet.NewReader(hostile, parquet.ReaderOptions{Allocator: mem})
			require.NoError(t, err)
			rec, err := r.TakeRows(0, []int64{0, 60, 99})
			if err == nil { // only a page the direct path refuses: the chunk decoded instead
				require.Equal(t, "a page's rows not its values", tc.name)
				rec.Release()
				return
			}
			require.ErrorIs(t, err, parquet.ErrInvalid)
			require.Nil(t, rec)
		})
	}
}

// FuzzTakeRows: a file with any offset index (or none), any rows: TakeRows and TakeRanges give
// an error with a sentinel or rows, never a panic, within the limits.
func FuzzTakeRows(f *testing.F) {
	rec := tensorTable(f, 40, 4, 5)
	defer rec.Release()
	f.Add(withIndex(f, writeParquet(f, rec, parquet.WriterOptions{Compression: parquet.Uncompressed})), uint64(7))
	f.Add(withIndex(f, writeParquet(f, rec, parquet.WriterOptions{Compression: parquet.Zstd})), uint64(3))
	for _, b := range seedFiles(f, 4<<10) {
		f.Add(b, uint64(1))
	}
	paths, _ := filepath.Glob("testdata/pageindex/*.parquet")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
			f.Add(b, uint64(2))
		}
	}
	dict := dictionaryTable(f, 40) // dictionary pages, indices, the fallback to PLAIN partway
	f.Add(withIndex(f, dictionaryFile(f, dict, compress.Codecs.Uncompressed, pq.DataPageV1, 64)), uint64(4))
	f.Add(dictionaryFile(f, dict, compress.Codecs.Zstd, pq.DataPageV2, 1<<10), uint64(5))
	dict.Release()
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		mem := memory.NewGoAllocator()
		r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: fuzzLimits})
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		for rg := range min(r.NumRowGroups(), 4) {
			var rows []int64
			for i := range min(r.RowGroupRows(rg), 1<<12) {
				if rng.IntN(3) == 0 {
					rows = append(rows, i)
				}
			}
			_, rerr := r.TakeRanges(rg, rows)
			rec, err := r.TakeRows(rg, rows)
			for _, err := range []error{rerr, err} {
				if err != nil && !errors.Is(err, parquet.ErrInvalid) && !errors.Is(err, parquet.ErrUnsupported) && !errors.Is(err, limits.ErrExceeded) {
					t.Fatalf("an error with no sentinel: %v", err)
				}
			}
			if err == nil {
				require.Equal(t, int64(len(rows)), rec.NumRows())
				// What a take gives, reading the row group whole gives too (or refuses: a
				// take reads only some pages).
				if full, err := r.ReadRowGroup(rg); err == nil {
					requireRows(t, full, rec, rows)
					full.Release()
				}
				rec.Release()
			}
		}
	})
}

// TestTakeRowsOfAMappedFile: a file Open maps gives the rows of the bytes it holds.
func TestTakeRowsOfAMappedFile(t *testing.T) {
	rec := tensorTable(t, 300, 16, 6)
	defer rec.Release()
	b := withIndex(t, writeParquet(t, rec, parquet.WriterOptions{Compression: parquet.Uncompressed}))
	path := filepath.Join(t.TempDir(), "t.parquet")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := parquet.Open(path, parquet.ReaderOptions{Allocator: mem})
	require.NoError(t, err)
	defer r.Close()
	rows := []int64{0, 17, 299}
	ranges, err := r.TakeRanges(0, rows)
	require.NoError(t, err)
	assert.NotEmpty(t, ranges)
	got, err := r.TakeRows(0, rows)
	require.NoError(t, err)
	defer got.Release()
	requireRows(t, rec, got, rows)
}

// mapPages is a parquet.PageCache in maps, counting its use.
type mapPages struct {
	mu                    sync.Mutex
	pages                 map[int64][]byte
	chunks                map[int64]arrow.Array
	kept, hits            int
	keptChunks, chunkHits int
}

func (m *mapPages) Chunk(offset int64) (arrow.Array, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	arr, ok := m.chunks[offset]
	if ok {
		m.chunkHits++
		arr.Retain()
	}
	return arr, ok
}

func (m *mapPages) KeepChunk(offset int64, arr arrow.Array) arrow.Array {
	m.mu.Lock()
	defer m.mu.Unlock()
	if arr == nil {
		return nil
	}
	if m.chunks == nil {
		m.chunks = map[int64]arrow.Array{}
	}
	arr.Retain() // the map's
	m.chunks[offset] = arr
	m.keptChunks++
	arr.Retain() // the caller's
	return arr
}

func (m *mapPages) release() {
	for _, arr := range m.chunks {
		arr.Release()
	}
}

func (m *mapPages) Values(offset int64) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.pages[offset]
	if ok {
		m.hits++
	}
	return v, ok
}

func (m *mapPages) Keep(offset int64, values []byte) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if values == nil {
		return nil
	}
	if m.pages == nil {
		m.pages = map[int64][]byte{}
	}
	m.pages[offset] = slices.Clone(values)
	m.kept++
	return m.pages[offset]
}

// TestTakeRowsKeepPages: with a page cache, TakeRows keeps each page it decompresses, and
// each column whose chunk it decodes whole, and a take after it — by another Reader of the
// file — reads what was kept instead, with the same rows; a page kept with another length
// than its rows' is decoded again.
func TestTakeRowsKeepPages(t *testing.T) {
	for name, b := range takeFiles(t) {
		t.Run(name, func(t *testing.T) {
			var cache mapPages
			defer cache.release()
			mem := checkedAllocator(t, name)
			first, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
			require.NoError(t, err)
			first.SetPageCache(&cache)
			second, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
			require.NoError(t, err)
			second.SetPageCache(&cache)
			for rg := range first.NumRowGroups() {
				full, err := first.ReadRowGroup(rg)
				require.NoError(t, err)
				rows := rowSets(t, first, rg)["every seventh"]
				for _, r := range []*parquet.Reader{first, second} {
					got, err := r.TakeRows(rg, rows)
					require.NoError(t, err)
					requireRows(t, full, got, rows)
					got.Release()
				}
				full.Release()
			}
			if len(first.Schema().Fields()) > len(parquet.TakesDirectly(first, 0)) {
				assert.Positive(t, cache.keptChunks, "columns decoded whole are kept")
			}
			assert.Equal(t, cache.keptChunks, cache.chunkHits, "each kept once and read again from the cache")
			switch {
			case strings.Contains(name, "dictionary"): // pages of indices decoded, and their dictionaries
				assert.Positive(t, cache.hits, "pages decoded are kept and read again")
				assert.LessOrEqual(t, cache.hits, cache.kept, "the second take needs no dictionary")
			case strings.Contains(name, "zstd") && len(parquet.TakesDirectly(first, 0)) > 0:
				assert.Positive(t, cache.kept, "pages decompressed are kept")
				assert.Equal(t, cache.kept, cache.hits, "the second take reads each page kept")
			case strings.Contains(name, "none"):
				assert.Zero(t, cache.kept, "a PLAIN page stored as it is is read in place")
			}
			// Values of another length than the page's rows are not the page's.
			for off := range cache.pages {
				cache.pages[off] = cache.pages[off][:len(cache.pages[off])/2]
			}
			for rg := range second.NumRowGroups() {
				full, err := second.ReadRowGroup(rg)
				require.NoError(t, err)
				rows := rowSets(t, second, rg)["random"]
				got, err := second.TakeRows(rg, rows)
				require.NoError(t, err)
				requireRows(t, full, got, rows)
				got.Release()
				full.Release()
			}
		})
	}
}
