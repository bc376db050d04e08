package parquet_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
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
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/parquet"
)

// readFile reads every row group of the Parquet file b, returning the rows read, the columns
// read and the first error.
func readFile(b []byte, mem memory.Allocator) (rows int64, cols int, err error) {
	r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem})
	if err != nil {
		return 0, 0, err
	}
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		if err != nil {
			return rows, len(r.Schema().Fields()), err
		}
		rows += rec.NumRows()
		rec.Release()
	}
	return rows, len(r.Schema().Fields()), nil
}

// TestCorpus reads every file of Apache's parquet-testing (valid files and bad_data): each
// gives its values or an error wrapping one of the reader's sentinels, never a panic.
func TestCorpus(t *testing.T) {
	type outcome struct {
		rows, cols int64
		err        error
		leaks      bool // arrow-go v17's page reader keeps a page buffer (of Go memory) of these
	}
	want := map[string]outcome{
		"bad_data/ARROW-GH-41321.parquet":                {err: parquet.ErrInvalid},
		"bad_data/ARROW-GH-43605.parquet":                {err: parquet.ErrInvalid},
		"bad_data/ARROW-GH-45185.parquet":                {err: parquet.ErrInvalid},
		"bad_data/ARROW-GH-47662.parquet":                {err: parquet.ErrInvalid},
		"bad_data/ARROW-RS-GH-6229-DICTHEADER.parquet":   {err: parquet.ErrInvalid},
		"bad_data/ARROW-RS-GH-6229-LEVELS.parquet":       {rows: 1, cols: 0}, // its one column is a list of structs
		"bad_data/PARQUET-1481.parquet":                  {err: parquet.ErrInvalid},
		"data/alltypes_plain.parquet":                    {rows: 8, cols: 11},
		"data/alltypes_plain.snappy.parquet":             {rows: 2, cols: 11},
		"data/byte_stream_split.zstd.parquet":            {rows: 300, cols: 2}, // the direct path reads it (arrow-go v17 does not)
		"data/concatenated_gzip_members.parquet":         {rows: 513, cols: 1, leaks: true},
		"data/datapage_v2.snappy.parquet":                {rows: 5, cols: 5, leaks: true}, // DELTA_BINARY_PACKED among its pages
		"data/datapage_v2_empty_datapage.snappy.parquet": {rows: 1, cols: 1, leaks: true},
		"data/dict-page-offset-zero.parquet":             {rows: 39, cols: 1},
		"data/fixed_length_byte_array.parquet":           {rows: 1000, cols: 1},
		"data/float16_nonzeros_and_nans.parquet":         {rows: 8, cols: 1},
		"data/float16_zeros_and_nans.parquet":            {rows: 3, cols: 1},
		"data/hadoop_lz4_compressed.parquet":             {rows: 4, cols: 3},
		"data/list_columns.parquet":                      {rows: 3, cols: 2},
		"data/lz4_raw_compressed.parquet":                {rows: 4, cols: 3},
		"data/nation.dict-malformed.parquet":             {rows: 25, cols: 4},
		"data/nested_lists.snappy.parquet":               {rows: 3, cols: 2},
		"data/nested_structs.rust.parquet":               {rows: 1, cols: 36},
		"data/nonnullable.impala.parquet":                {rows: 1, cols: 3},
		"data/null_list.parquet":                         {rows: 1, cols: 1},
		"data/byte_stream_split_extended.gzip.parquet":   {rows: 200, cols: 14}, // every column split, FIXED_LEN_BYTE_ARRAY(5) and decimal too
		"data/delta_binary_packed.parquet":               {rows: 200, cols: 66, leaks: true},
		"data/delta_encoding_optional_column.parquet":    {rows: 100, cols: 17, leaks: true}, // DELTA_BYTE_ARRAY strings: the direct path's
		"data/delta_encoding_required_column.parquet":    {rows: 100, cols: 17, leaks: true},
		"data/delta_length_byte_array.parquet":           {rows: 1000, cols: 1, leaks: true},
		"data/hadoop_lz4_compressed_larger.parquet":      {rows: 10000, cols: 1},
		"data/lz4_raw_compressed_larger.parquet":         {rows: 10000, cols: 1},
		"data/non_hadoop_lz4_compressed.parquet":         {rows: 4, cols: 3},
		"data/nullable.impala.parquet":                   {rows: 7, cols: 3},
		"data/old_list_structure.parquet":                {rows: 1, cols: 1}, // a two-level list of lists
		"data/page_v2_empty_compressed.parquet":          {rows: 10, cols: 1, leaks: true},
		"data/repeated_no_annotation.parquet":            {rows: 6, cols: 1},
		"data/repeated_primitive_no_list.parquet":        {rows: 4, cols: 3}, // and a struct
		"data/rle-dict-snappy-checksum.parquet":          {rows: 1000, cols: 2, leaks: true},
	}
	paths, err := filepath.Glob("testdata/parquet-testing/*/*.parquet")
	require.NoError(t, err)
	require.Len(t, paths, len(want), "every corpus file has an expected outcome")
	for _, p := range paths {
		name, _ := filepath.Rel("testdata/parquet-testing", p)
		t.Run(name, func(t *testing.T) {
			w, ok := want[filepath.ToSlash(name)]
			require.True(t, ok, "no expected outcome")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			rows, cols, err := readFile(b, mem)
			if w.err != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, w.err)
				t.Log(err)
				return
			}
			require.NoError(t, err)
			if !w.leaks {
				mem.AssertSize(t, 0)
			}
			assert.Equal(t, w.rows, rows)
			assert.Equal(t, w.cols, int64(cols))
		})
	}
}

// TestCorpusValues checks values of a few corpus files against what parquet-testing's
// documentation and the files' writers say they hold.
func TestCorpusValues(t *testing.T) {
	read := func(t *testing.T, name string) arrow.Record {
		b, err := os.ReadFile(filepath.Join("testdata/parquet-testing/data", name))
		require.NoError(t, err)
		r, err := parquet.NewReader(b, parquet.ReaderOptions{})
		require.NoError(t, err)
		rec, err := r.ReadRowGroup(0)
		require.NoError(t, err)
		return rec
	}
	rec := read(t, "alltypes_plain.parquet")
	assert.Equal(t, []int32{4, 5, 6, 7, 2, 3, 0, 1}, rec.Column(0).(*array.Int32).Int32Values())
	rec = read(t, "list_columns.parquet")
	assert.Equal(t, `[[1 2 3] [(null) 1] [4]]`, rec.Column(0).String())
	rec = read(t, "repeated_no_annotation.parquet")
	assert.Equal(t, int64(6), rec.NumRows())
	rec = read(t, "null_list.parquet")
	assert.Equal(t, `[[]]`, rec.Column(0).String())
	// A two-level list whose repeated group is a LIST: a list of lists, as Arrow C++ and
	// arrow-rs read it (pqarrow alone: a list of structs of one list).
	rec = read(t, "old_list_structure.parquet")
	assert.Equal(t, "list<array: list<item: int32, nullable>>", rec.Schema().Field(0).Type.String(), "elements required, as the spec says")
	assert.Equal(t, `[[[1 2] [3 4]]]`, rec.Column(0).String())
}

func TestLimits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := everyTensorColumn(t, mem, 100)
	defer rec.Release()
	b := writeParquet(t, rec, parquet.WriterOptions{Allocator: mem, Compression: parquet.Uncompressed})
	for _, c := range []struct {
		name string
		lim  limits.Limits
	}{
		{"footer", limits.Limits{MaxMetadataSize: 100}},
		{"copies", limits.Limits{MaxCopySize: 1000}},
		{"values", limits.Limits{MaxElements: 50}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Limits: c.lim})
			if err == nil {
				var rec arrow.Record
				rec, err = r.ReadRowGroup(0)
				if rec != nil {
					rec.Release()
				}
			}
			assert.ErrorIs(t, err, limits.ErrExceeded)
		})
	}
}

func TestNotParquet(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("PAR1"), []byte("PAR1\x00\x00\x00\x00PAR1"), []byte("PAR1\xff\xff\xff\x7fPAR1"), []byte("hello, world, not parquet")} {
		_, err := parquet.NewReader(b, parquet.ReaderOptions{})
		assert.True(t, errors.Is(err, parquet.ErrInvalid), "%q: %v", b, err)
	}
	assert.False(t, parquet.IsParquet([]byte("PAR1")))
}

// TestLz4FilesAsArrowCppReadsThem: parquet-testing's LZ4_RAW and Hadoop-LZ4 files give the
// values Arrow C++ 17 reads from them (`parquet_golden read FILE DIR`: the sha256 of its dumps
// of c0 and v11, the same for both files), through the direct path and through pqarrow.
func TestLz4FilesAsArrowCppReadsThem(t *testing.T) {
	want := map[string]string{
		"c0":  "2feebf90a393e8c27b857b0728aec269e87f35441c948e40f2a080fd1a4f911e",
		"v11": "77465a6537cd313b57a2159a750da971bbe88742ada712c4ef52c07ba1ab00b0",
	}
	for _, f := range []string{"hadoop_lz4_compressed", "lz4_raw_compressed"} {
		b, err := os.ReadFile("testdata/parquet-testing/data/" + f + ".parquet")
		require.NoError(t, err)
		for _, general := range []bool{false, true} {
			recs := readRowGroups(t, b, general)
			require.Len(t, recs, 1)
			for i, field := range recs[0].Schema().Fields() {
				if h, ok := want[field.Name]; ok {
					sum := sha256.Sum256(leafValues(t, recs[0].Column(i)))
					assert.Equal(t, h, hex.EncodeToString(sum[:]), "%s: %s (pqarrow alone: %v)", f, field.Name, general)
				}
			}
			recs[0].Release()
		}
	}
}

// TestDeltaFileAsArrowCppReadsIt: parquet-testing's datapage_v2.snappy.parquet, whose int32
// column b is DELTA_BINARY_PACKED, gives the values Arrow C++ 17 reads from it (the sha256 of
// `parquet_golden read`'s dumps of b and c).
func TestDeltaFileAsArrowCppReadsIt(t *testing.T) {
	b, err := os.ReadFile("testdata/parquet-testing/data/datapage_v2.snappy.parquet")
	require.NoError(t, err)
	r, err := file.NewParquetReader(bytes.NewReader(b))
	require.NoError(t, err)
	cc, err := r.MetaData().RowGroup(0).ColumnChunk(1)
	require.NoError(t, err)
	require.Contains(t, fmt.Sprint(cc.Encodings()), "DELTA_BINARY_PACKED")
	want := map[string]string{
		"b": "4f6addc9659d6fb90fe94b6688a79f2a1fa8d36ec43f8f3e1d9b6528c448a384",
		"c": "177ba1685074f68fc362b3dc384391ff3c464f84e4e8b3daccbfbe5a743f68b5",
	}
	recs := readRowGroups(t, b, false)
	require.Len(t, recs, 1)
	defer recs[0].Release()
	for i, field := range recs[0].Schema().Fields() {
		if h, ok := want[field.Name]; ok {
			sum := sha256.Sum256(leafValues(t, recs[0].Column(i)))
			assert.Equal(t, h, hex.EncodeToString(sum[:]), field.Name)
		}
	}
}

// TestDeltaEncodingsRead: arrow-go's DELTA_BINARY_PACKED (int32, int64, with nulls) and
// DELTA_LENGTH_BYTE_ARRAY (strings) pages, v1 and v2, compressed or not, read back as written.
func TestDeltaEncodingsRead(t *testing.T) {
	mem := memory.DefaultAllocator
	const rows = 5000
	i32 := array.NewInt32Builder(mem)
	i64 := array.NewInt64Builder(mem)
	str := array.NewStringBuilder(mem)
	for i := range rows {
		i32.Append(int32(i*7919%100003 - 50000))
		if i%13 == 0 {
			i64.AppendNull()
		} else {
			i64.Append(int64(i) * -1_000_000_007)
		}
		str.Append(strings.Repeat("ab", i%9))
	}
	cols := []arrow.Array{i32.NewArray(), i64.NewArray(), str.NewArray()}
	schema := arrow.NewSchema([]arrow.Field{{Name: "i32", Type: cols[0].DataType()}, {Name: "i64", Type: cols[1].DataType(), Nullable: true},
		{Name: "s", Type: cols[2].DataType()}}, nil)
	rec := array.NewRecord(schema, cols, rows)
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	for _, v2 := range []bool{false, true} {
		for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
			version := pq.DataPageV1
			if v2 {
				version = pq.DataPageV2
			}
			props := pq.NewWriterProperties(pq.WithDictionaryDefault(false), pq.WithCompression(codec), pq.WithDataPageVersion(version),
				pq.WithDataPageSize(4096),
				pq.WithEncodingFor("i32", pq.Encodings.DeltaBinaryPacked), pq.WithEncodingFor("i64", pq.Encodings.DeltaBinaryPacked),
				pq.WithEncodingFor("s", pq.Encodings.DeltaLengthByteArray))
			var buf bytes.Buffer
			require.NoError(t, pqarrow.WriteTable(array.NewTableFromRecords(schema, []arrow.Record{rec}), &buf, rows, props, pqarrow.DefaultWriterProps()))
			r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			for c, want := range []string{"DELTA_BINARY_PACKED", "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY"} {
				cc, err := r.MetaData().RowGroup(0).ColumnChunk(c)
				require.NoError(t, err)
				require.Contains(t, fmt.Sprint(cc.Encodings()), want)
			}
			recs := readRowGroups(t, buf.Bytes(), false)
			back := concat(t, recs)
			assert.True(t, array.RecordEqual(rec, back), "v2 %v, %v", v2, codec)
			back.Release()
			for _, r := range recs {
				r.Release()
			}
		}
	}
}

// TestDuckDBDeltaFile: DuckDB's data page v2 file of DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY
// and BYTE_STREAM_SPLIT pages (testdata/duckdb/delta_v2.parquet) gives the values Arrow C++ 17
// reads from it, and the strings DuckDB was given.
func TestDuckDBDeltaFile(t *testing.T) {
	b, err := os.ReadFile("testdata/duckdb/delta_v2.parquet")
	require.NoError(t, err)
	want := map[string]string{
		"n":   "0bd2462cf373e94a14dfa9528ee8d28ca4e3fadde843c5391001b206b986c2cf",
		"big": "b568e14a95086defa8dfd8c3b0d6ce249462baef4909fb6514d0af334ff4a394",
		"d":   "b946dacf07eaf54beb22aa2be6cdff26acd264e38b684020fbed3dbdab224654",
		"tri": "b0fa82a84a96be89be1138099358701e563a29a0cb22872ceab50659cdfa4431",
	}
	recs := readRowGroups(t, b, false)
	require.Len(t, recs, 1)
	rec := recs[0]
	defer rec.Release()
	require.Equal(t, int64(5000), rec.NumRows())
	for i, field := range rec.Schema().Fields() {
		col := rec.Column(i)
		switch c := col.(type) {
		case *array.List:
			lo, _ := c.ValueOffsets(0)
			_, end := c.ValueOffsets(c.Len() - 1)
			values := array.NewSlice(c.ListValues(), lo, end)
			sum := sha256.Sum256(leafValues(t, values))
			values.Release()
			assert.Equal(t, want[field.Name], hex.EncodeToString(sum[:]), field.Name)
		case *array.String:
			for r := range c.Len() {
				require.Equal(t, strings.Repeat("xy", r%7)+fmt.Sprint(r), c.Value(r), "s row %d", r)
			}
		default:
			sum := sha256.Sum256(leafValues(t, col))
			assert.Equal(t, want[field.Name], hex.EncodeToString(sum[:]), field.Name)
		}
	}
}

// cellOf formats element i of a, as parquet-testing's _expect.csv files write values ("" for
// a null).
func cellOf(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch v := a.(type) {
	case *array.Int32:
		return fmt.Sprint(v.Value(i))
	case *array.Int64:
		return fmt.Sprint(v.Value(i))
	case *array.String:
		return v.Value(i)
	case *array.Binary:
		return string(v.Value(i))
	}
	return a.ValueStr(i)
}

// TestParquetTestingDeltaFiles: parquet-testing's DELTA_BINARY_PACKED files (parquet-mr's,
// every delta bit width from 0 to 64; TPC-DS columns, required and optional, whose strings are
// DELTA_BYTE_ARRAY) give the values of their _expect.csv, column by column, and their string
// columns are read by the direct path (arrow-go v17 is not given DELTA_BYTE_ARRAY pages).
func TestParquetTestingDeltaFiles(t *testing.T) {
	for _, tc := range []struct {
		file    string
		columns []int // of the CSV, in the Parquet file's order; nil: all
		strings bool  // DELTA_BYTE_ARRAY string columns
	}{
		{"delta_binary_packed", nil, false},
		{"delta_encoding_required_column", nil, true},
		{"delta_encoding_optional_column", nil, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/parquet-testing/data/" + tc.file + ".parquet")
			require.NoError(t, err)
			f, err := os.Open("testdata/parquet-testing/data/" + tc.file + "_expect.csv")
			require.NoError(t, err)
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			require.NoError(t, err)
			header, rows := rows[0], rows[1:]
			all, err := parquet.NewReader(b, parquet.ReaderOptions{})
			require.NoError(t, err)
			names := make([]string, 0, len(tc.columns))
			cols := tc.columns
			if cols == nil {
				for j := range header {
					cols = append(cols, j)
				}
			}
			for _, j := range cols {
				names = append(names, all.Schema().Field(j).Name)
			}
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: names})
			require.NoError(t, err)
			var recs []arrow.Record
			for i := range r.NumRowGroups() {
				rec, err := r.ReadRowGroup(i)
				require.NoError(t, err, "row group %d", i)
				recs = append(recs, rec)
			}
			rec := concat(t, recs)
			defer rec.Release()
			require.Equal(t, int64(len(rows)), rec.NumRows())
			for k, j := range cols {
				for i, row := range rows {
					require.Equal(t, row[j], cellOf(rec.Column(k), i), "column %s row %d", header[j], i)
				}
			}
			if tc.strings {
				name := all.Schema().Field(9).Name // c_customer_id, strings
				r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{name}})
				require.NoError(t, err)
				rec, err := r.ReadRowGroup(0)
				require.NoError(t, err)
				rec.Release()
				assert.Equal(t, 1, parquet.DirectReads(r), "the DELTA_BYTE_ARRAY column is read by the direct path")
			}
		})
	}
}

// TestParquetTestingLz4AndByteStreamSplitFiles: the larger LZ4 files (Hadoop framing and
// LZ4_RAW) hold the same 10000 values, and codec LZ4 as a raw block (early Arrow C++) the
// values of the small Hadoop file; every BYTE_STREAM_SPLIT column of pyarrow's extended file
// equals its PLAIN twin, FIXED_LEN_BYTE_ARRAY(5) and decimal(7, 3) included.
func TestParquetTestingLz4AndByteStreamSplitFiles(t *testing.T) {
	read := func(file string, cols ...string) arrow.Record {
		b, err := os.ReadFile("testdata/parquet-testing/data/" + file)
		require.NoError(t, err)
		r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: cols})
		require.NoError(t, err)
		var recs []arrow.Record
		for i := range r.NumRowGroups() {
			rec, err := r.ReadRowGroup(i)
			require.NoError(t, err, "%s row group %d", file, i)
			recs = append(recs, rec)
		}
		return concat(t, recs)
	}
	hadoop, raw := read("hadoop_lz4_compressed_larger.parquet"), read("lz4_raw_compressed_larger.parquet")
	assert.Equal(t, int64(10000), hadoop.NumRows())
	assert.True(t, array.RecordEqual(hadoop, raw), "the same values")
	hadoop.Release()
	raw.Release()
	small, rawBlock := read("hadoop_lz4_compressed.parquet"), read("non_hadoop_lz4_compressed.parquet")
	assert.True(t, array.RecordEqual(small, rawBlock), "the same values\n%v\n%v", small, rawBlock)
	small.Release()
	rawBlock.Release()

	for _, kind := range []string{"float16", "float", "double", "int32", "int64"} {
		rec := read("byte_stream_split_extended.gzip.parquet", kind+"_plain", kind+"_byte_stream_split")
		require.Equal(t, int64(200), rec.NumRows())
		assert.True(t, array.ApproxEqual(rec.Column(0), rec.Column(1), array.WithNaNsEqual(true), array.WithAbsTolerance(0)), kind)
		rec.Release()
	}
	for _, kind := range []string{"flba5", "decimal"} {
		rec := read("byte_stream_split_extended.gzip.parquet", kind+"_plain", kind+"_byte_stream_split")
		require.Equal(t, int64(200), rec.NumRows())
		assert.True(t, array.Equal(rec.Column(0), rec.Column(1)), kind)
		rec.Release()
	}
	// The PLAIN twins as pqarrow reads them: the direct path's FIXED_LEN_BYTE_ARRAY and
	// decimal values are pqarrow's.
	b, err := os.ReadFile("testdata/parquet-testing/data/byte_stream_split_extended.gzip.parquet")
	require.NoError(t, err)
	for _, col := range []string{"flba5_plain", "decimal_plain"} {
		direct, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{col}})
		require.NoError(t, err)
		general, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{col}})
		require.NoError(t, err)
		parquet.ReadGeneral(general)
		d, err := direct.ReadRowGroup(0)
		require.NoError(t, err)
		g, err := general.ReadRowGroup(0)
		require.NoError(t, err)
		assert.True(t, array.RecordEqual(d, g), col)
		assert.Positive(t, parquet.DirectReads(direct), "%s read directly", col)
		d.Release()
		g.Release()
	}
}
