package parquet_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// readAllMatches checks that ReadAll gives what the row groups, read one by one and
// concatenated, give, or that both refuse; it returns the record's rows (-1: refused).
func readAllMatches(t *testing.T, b []byte, lim limits.Limits, mem memory.Allocator, parallel int) int64 {
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: lim, Parallelism: parallel})
	if err != nil {
		return -1
	}
	var groups []arrow.Record
	defer func() {
		for _, g := range groups {
			g.Release()
		}
	}()
	var wantErr error
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		if err != nil {
			wantErr = err
			break
		}
		groups = append(groups, rec)
	}
	got, err := r.ReadAll(context.Background())
	if wantErr != nil {
		require.Error(t, err, "ReadAll read what row group %d refuses: %v", len(groups), wantErr)
		return -1
	}
	require.NoError(t, err)
	defer got.Release()
	require.Equal(t, r.NumRows(), got.NumRows())
	require.True(t, got.Schema().Equal(r.Schema()))
	for k := range got.NumCols() {
		chunks := make([]arrow.Array, len(groups))
		for i, g := range groups {
			chunks[i] = g.Column(int(k))
		}
		col := got.Column(int(k))
		if len(chunks) == 0 {
			require.Zero(t, col.Len())
			continue
		}
		want, err := array.Concatenate(chunks, memory.NewGoAllocator())
		require.NoError(t, err)
		assert.True(t, array.ApproxEqual(want, col, array.WithNaNsEqual(true), array.WithAbsTolerance(0)),
			"column %s: ReadAll gives other values than its row groups", got.ColumnName(int(k)))
		want.Release()
	}
	return got.NumRows()
}

// TestReadAllMatchesRowGroups: on every Parquet file of the repository and on tensor columns
// of each codec, row-group size and parallelism, ReadAll gives the row groups' values, joined.
func TestReadAllMatchesRowGroups(t *testing.T) {
	paths, err := filepath.Glob("testdata/*/*.parquet")
	require.NoError(t, err)
	more, err := filepath.Glob("testdata/*/*/*.parquet")
	require.NoError(t, err)
	read := 0
	for _, p := range append(paths, more...) {
		t.Run(p, func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			if readAllMatches(t, b, limits.Limits{}, memory.NewGoAllocator(), 0) >= 0 {
				read++
			}
		})
	}
	assert.Greater(t, read, 20)
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		for _, rg := range []int64{1 << 10, 64 << 10, 0} {
			for _, parallel := range []int{1, 3} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				require.EqualValues(t, 3000, readAllMatches(t, directFile(t, 3000, c, rg), limits.Limits{}, mem, parallel))
				mem.AssertSize(t, 0)
			}
		}
	}
}

// TestReadAllDecodesIntoOneBuffer: a tensor column of many row groups is one buffer that the
// row groups were decoded into — the column's values are the buffer ReadAll allocated, not a
// concatenation: one allocation of the column's size, and no more than the row groups' reads
// beside it.
func TestReadAllDecodesIntoOneBuffer(t *testing.T) {
	b := directFile(t, 4000, parquet.Uncompressed, 16<<10)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Columns: []string{"f32"}, Parallelism: 1})
	require.NoError(t, err)
	require.Greater(t, r.NumRowGroups(), 4)
	rec, err := r.ReadAll(context.Background())
	require.NoError(t, err)
	values := rec.Column(0).Data().Children()[0].Buffers()[1]
	assert.Equal(t, 4000*12*4, values.Len(), "one buffer of the whole column")
	assert.Equal(t, 4000*12*4, mem.CurrentAlloc(), "the record holds that buffer and nothing else")
	assert.Equal(t, r.NumRowGroups(), parquet.DirectReads(r), "every row group read directly")
	rec.Release()
	mem.AssertSize(t, 0)
}

// rowGroupsFile writes each record as a row group of its own (an empty record: an empty row
// group) with pqarrow, uncompressed, PLAIN or dictionary-encoded, the Arrow schema stored.
func rowGroupsFile(t *testing.T, dictionary bool, recs ...arrow.Record) []byte {
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithDictionaryDefault(dictionary), pq.WithMaxRowGroupLength(1<<20))
	w, err := pqarrow.NewFileWriter(recs[0].Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	for _, rec := range recs {
		w.NewBufferedRowGroup()
		require.NoError(t, w.WriteBuffered(rec))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// vectors returns rows rows from row first of a column v, fixed_size_list<float64, 4> (row r:
// 4r … 4r+3), as a record; the second value of each row in null is null.
func vectors(first, rows int, null ...int) arrow.Record {
	mem := memory.NewGoAllocator()
	bld := array.NewFixedSizeListBuilder(mem, 4, arrow.PrimitiveTypes.Float64)
	defer bld.Release()
	vals := bld.ValueBuilder().(*array.Float64Builder)
	for r := first; r < first+rows; r++ {
		bld.Append(true)
		for j := range 4 {
			if j == 1 && slices.Contains(null, r) {
				vals.AppendNull()
			} else {
				vals.Append(float64(4*r + j))
			}
		}
	}
	col := bld.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: col.DataType(), Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{col}, int64(rows))
}

// TestReadAllEmptyRowGroup: an empty row group among others holds nothing of the column's
// buffer: the column is still the one buffer the other row groups decoded into, nothing
// joined beside it — within a MaxCopySize that holds the buffer once and not twice — its
// values theirs.
func TestReadAllEmptyRowGroup(t *testing.T) {
	var groups []arrow.Record // four of 1000 rows, the third empty
	for _, first := range []int{0, 1000, -1, 2000, 3000} {
		if first < 0 {
			groups = append(groups, vectors(2000, 0))
		} else {
			groups = append(groups, vectors(first, 1000))
		}
	}
	defer func() {
		for _, g := range groups {
			g.Release()
		}
	}()
	file := rowGroupsFile(t, false, groups...)
	column := int64(4000 * 4 * 8)
	// Each row group's check asks for 117 KB (its levels counted at two bytes a value):
	// within the limit, as is the column's buffer once, but not twice.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r, err := parquet.NewReader(file, parquet.ReaderOptions{Allocator: mem, Parallelism: 1,
		Limits: limits.Limits{MaxCopySize: column + column/2}})
	require.NoError(t, err)
	require.Equal(t, 5, r.NumRowGroups())
	require.Zero(t, r.RowGroupRows(2), "the middle row group is empty")
	rec, err := r.ReadAll(context.Background())
	require.NoError(t, err, "the column decoded into its buffer, not joined beside it")
	assert.EqualValues(t, column, rec.Column(0).Data().Children()[0].Buffers()[1].Len(), "one buffer of the whole column")
	assert.EqualValues(t, column, mem.CurrentAlloc(), "the record holds that buffer and nothing else")
	assert.Equal(t, r.NumRowGroups(), parquet.DirectReads(r), "every row group read directly")
	want := vectors(0, 4000)
	defer want.Release()
	assert.True(t, array.Equal(want.Column(0), rec.Column(0)), "the row groups' values")
	rec.Release()
	mem.AssertSize(t, 0)
	require.EqualValues(t, 4000, readAllMatches(t, file, limits.Limits{}, mem, 2))
	mem.AssertSize(t, 0)
}

// TestReadAllJoinedColumnWithinMaxCopySize: a column ReadAll decodes into one buffer, one of
// whose row groups the direct path leaves to pqarrow (dictionary-encoded with a null value),
// is joined from its row
// groups beside that buffer: the join counts toward MaxCopySize with the buffer, the row
// groups' decoding and the joined column (ErrExceeded naming the column where they do not fit
// together), and within it gives the row groups' values.
func TestReadAllJoinedColumnWithinMaxCopySize(t *testing.T) {
	a, b, c := vectors(0, 1000), vectors(1000, 1000), vectors(2000, 1000, 2500)
	defer a.Release()
	defer b.Release()
	defer c.Release()
	file := rowGroupsFile(t, true, a, b, c)
	column := int64(3000 * 4 * 8) // the column's buffer, and its join
	// The buffer and the row group pqarrow decoded (its values and validity, 1.3 times the
	// buffer together) fit, and so does each row group's check (its dictionary pages counted
	// at what they may expand to, about 187 KB); the join beside the buffer and the row group
	// (2.3 times the buffer) does not.
	lim := limits.Limits{MaxCopySize: 2*column + column/8}
	groups, err := parquet.NewReader(file, parquet.ReaderOptions{Limits: lim})
	require.NoError(t, err)
	for i := range groups.NumRowGroups() {
		rec, err := groups.ReadRowGroup(i)
		require.NoError(t, err, "row group %d alone is within the limit", i)
		rec.Release()
	}
	r, err := parquet.NewReader(file, parquet.ReaderOptions{Limits: lim, Parallelism: 1})
	require.NoError(t, err)
	_, err = r.ReadAll(context.Background())
	require.ErrorIs(t, err, limits.ErrExceeded)
	assert.ErrorContains(t, err, "column v joined")
	assert.Less(t, parquet.DirectReads(r), r.NumRowGroups(), "a row group read by pqarrow")

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	require.EqualValues(t, 3000, readAllMatches(t, file, limits.Limits{MaxCopySize: 3 * column}, mem, 1))
	mem.AssertSize(t, 0)
}

// TestReadAllJoinsNulls: null values of a fixed-size column, in some row groups and not
// others, keep their places in the joined column.
func TestReadAllJoinsNulls(t *testing.T) {
	mem := memory.NewGoAllocator()
	bld := array.NewFixedSizeListBuilder(mem, 4, arrow.PrimitiveTypes.Float64)
	vals := bld.ValueBuilder().(*array.Float64Builder)
	const rows = 3000
	for r := range rows {
		bld.Append(true)
		for j := range 4 {
			if r > 2000 && (r*4+j)%37 == 0 {
				vals.AppendNull()
			} else {
				vals.Append(float64(r*4 + j))
			}
		}
	}
	col := bld.NewArray()
	bld.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: col.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, rows)
	col.Release()
	defer rec.Release()
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Snappy} {
		var buf bytes.Buffer
		w, err := parquet.NewWriter(&buf, schema, parquet.WriterOptions{Compression: c, RowGroupBytes: 8 << 10})
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		require.EqualValues(t, rows, readAllMatches(t, buf.Bytes(), limits.Limits{}, checked, 2))
		checked.AssertSize(t, 0)
	}
}

// TestReadAllFallsBackByRowGroup: a dictionary-encoded column that falls back to PLAIN
// partway, and one that pqarrow decodes in some row groups, still read to the same values.
func TestReadAllFallsBackByRowGroup(t *testing.T) {
	dict := dictionaryTable(t, 400)
	defer dict.Release()
	for _, v := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
		b := dictionaryFile(t, dict, compress.Codecs.Snappy, v, 256)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		require.EqualValues(t, 400, readAllMatches(t, b, limits.Limits{}, mem, 1))
		mem.AssertSize(t, 0)
	}
}

// TestReadAllBounded: the bytes ReadAll holds together — whole columns and row groups'
// decoding — are bounded by MaxCopySize, though each row group alone is within it.
func TestReadAllBounded(t *testing.T) {
	b := directFile(t, 4000, parquet.Uncompressed, 16<<10)
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Limits: limits.Limits{MaxCopySize: 100 << 10}})
	require.NoError(t, err)
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		require.NoError(t, err, "row group %d alone is within the limit", i)
		rec.Release()
	}
	_, err = r.ReadAll(context.Background())
	require.Error(t, err)
	assert.True(t, errors.Is(err, limits.ErrExceeded), "%v", err)
}

// TestReadAllCancelled: a cancelled context ends ReadAll with its error.
func TestReadAllCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := parquet.NewReader(directFile(t, 500, parquet.Uncompressed, 4<<10), parquet.ReaderOptions{})
	require.NoError(t, err)
	_, err = r.ReadAll(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// BenchmarkReadAll reads a file of tensor columns (32 MiB, row groups of 1 MiB) whole:
// into one record by ReadAll, and row group by row group then concatenated (what a reader of
// the whole file did before ReadAll).
func BenchmarkReadAll(b *testing.B) {
	file := directFile(b, 1<<18, parquet.Uncompressed, 1<<20)
	r, err := parquet.NewReader(file, parquet.ReaderOptions{})
	require.NoError(b, err)
	const size = 1 << 18 * (12*4 + 2*8 + 5*8 + 6*4) // the values' bytes
	b.Run("ReadAll", func(b *testing.B) {
		for b.Loop() {
			rec, err := r.ReadAll(context.Background())
			require.NoError(b, err)
			rec.Release()
		}
		b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
	b.Run("RowGroupsConcatenated", func(b *testing.B) {
		for b.Loop() {
			var groups []arrow.Record
			for i := range r.NumRowGroups() {
				rec, err := r.ReadRowGroup(i)
				require.NoError(b, err)
				groups = append(groups, rec)
			}
			for k := range r.Schema().NumFields() {
				chunks := make([]arrow.Array, len(groups))
				for i, g := range groups {
					chunks[i] = g.Column(k)
				}
				whole, err := array.Concatenate(chunks, memory.DefaultAllocator)
				require.NoError(b, err)
				whole.Release()
			}
			for _, g := range groups {
				g.Release()
			}
		}
		b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// TestReadAllColumnNamedTwice: a column selected twice is read into one buffer, given twice,
// and released.
func TestReadAllColumnNamedTwice(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r, err := parquet.NewReader(directFile(t, 1000, parquet.Uncompressed, 8<<10), parquet.ReaderOptions{Allocator: mem, Columns: []string{"f64", "f64"}})
	require.NoError(t, err)
	rec, err := r.ReadAll(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 2, rec.NumCols())
	assert.True(t, array.Equal(rec.Column(0), rec.Column(1)))
	rec.Release()
	mem.AssertSize(t, 0)
}
