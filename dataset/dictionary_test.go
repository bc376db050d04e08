package dataset_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// catType is the type of the dictionary-encoded column of the tests: what pyarrow writes of a
// pandas category.
var catType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// catBatch returns a record batch of a label and a category whose dictionary is dict and whose
// indices are idx (JSON, null for a null row), allocated from mem.
func catBatch(t testing.TB, mem memory.Allocator, dict, idx string, first int64) arrow.Record {
	t.Helper()
	d, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(dict))
	require.NoError(t, err)
	defer d.Release()
	return catBatchOf(t, mem, d, idx, first)
}

// catBatchOf is catBatch of a dictionary array, which the batch shares.
func catBatchOf(t testing.TB, mem memory.Allocator, dict arrow.Array, idx string, first int64) arrow.Record {
	t.Helper()
	indices, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(idx))
	require.NoError(t, err)
	defer indices.Release()
	cat := array.NewDictionaryArray(catType, indices, dict)
	defer cat.Release()
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range cat.Len() {
		b.Append(first + int64(i))
	}
	label := b.NewArray()
	defer label.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "cat", Type: catType, Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{label, cat}, int64(cat.Len()))
}

// catRows is what the batches of catBatches hold, row by row ("" for the null row).
var catRows = []string{"red", "green", "green", "", "blue", "red", "blue", "red", "violet"}

// catBatches returns three record batches of other dictionaries — the second and third
// sharing one, as a stream that replaces its dictionary does — and a fourth of a dictionary
// of its own, allocated from mem.
func catBatches(t testing.TB, mem memory.Allocator) []arrow.Record {
	shared, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["blue", "red"]`))
	require.NoError(t, err)
	defer shared.Release()
	return []arrow.Record{
		catBatch(t, mem, `["red", "green"]`, `[0, 1, 1, null]`, 0),
		catBatchOf(t, mem, shared, `[0, 1]`, 4),
		catBatchOf(t, mem, shared, `[0, 1]`, 6),
		catBatch(t, mem, `["violet", "green"]`, `[0]`, 8),
	}
}

// dictionaryMessages returns how many dictionary batch messages the Arrow IPC stream b holds.
func dictionaryMessages(t *testing.T, b []byte) int {
	t.Helper()
	r := arrowipc.NewMessageReader(bytes.NewReader(b))
	defer r.Release()
	n := 0
	for {
		m, err := r.Message()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(t, err)
		if m.Type() == arrowipc.MessageDictionaryBatch {
			n++
		}
	}
}

// requireCats checks that f, read back of what catBatches wrote, holds their labels and
// categories, nulls included, and the category a dictionary of catType.
func requireCats(t *testing.T, f *dataset.File) {
	t.Helper()
	tab, err := f.Table()
	require.NoError(t, err)
	cat, err := tab.Column("cat")
	require.NoError(t, err)
	assert.Equal(t, catRows, must(dataset.DenseOf[string](cat)).Data())
	assert.Equal(t, []bool{true, true, true, false, true, true, true, true, true}, cat.Valid)
	require.NotNil(t, cat.Dictionary, "a dictionary read back as one")
	assert.True(t, arrow.TypeEqual(catType, cat.Dictionary.Type), "%v", cat.Dictionary.Type)
	label, err := tab.Column("label")
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8}, must(dataset.DenseOf[int64](label)).Data())
}

// TestTableWriterUnifiesDictionaries: record batches of other dictionaries (allocated from a
// checked allocator, which the writer allocates from too) written by a TableWriter read back
// with every row's category: an Arrow IPC file holds one dictionary of every batch's values,
// each once, in the order they first come (Arrow C++'s file writer, and arrow-go's, refuse
// other dictionaries: "Dictionary replacement detected"), which arrow-go's file reader reads
// too; a stream replaces the dictionary where it changes (three dictionary batches for four
// batches), which ndarrow's reader and arrow-go's read; Parquet takes each batch as it is.
func TestTableWriterUnifiesDictionaries(t *testing.T) {
	for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet} {
		t.Run(string(format), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "t."+string(format))
			f, err := os.Create(path)
			require.NoError(t, err)
			w, err := dataset.NewTableWriter(f, format, dataset.WriteOptions{Allocator: mem})
			require.NoError(t, err)
			for i, rec := range catBatches(t, mem) {
				require.NoError(t, w.WriteRecord(rec), "batch %d", i)
				rec.Release()
			}
			require.NoError(t, w.Close())
			require.NoError(t, f.Close())

			got, err := dataset.Open(path, limits.Limits{})
			require.NoError(t, err)
			defer got.Release()
			requireCats(t, got)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			switch format {
			case dataset.FormatArrow:
				dicts, records, err := ipc.FileBlocks(b, ipc.BatchOptions{})
				require.NoError(t, err)
				assert.Len(t, dicts, 1, "one dictionary for every batch")
				assert.Len(t, records, 4)
				tab, _ := got.Table()
				cat, _ := tab.Column("cat")
				assert.Equal(t, []string{"red", "green", "blue", "violet"}, cat.Dictionary.Values, "the batches' values, each once, as they came")
				requireArrowGoReads(t, b, true)
			case dataset.FormatArrows:
				assert.Equal(t, 3, dictionaryMessages(t, b), "a dictionary, then a replacement where it changed")
				requireArrowGoReads(t, b, false)
			}
		})
	}
}

// requireArrowGoReads checks that arrow-go's reader of an IPC file (or stream) reads the rows
// of catBatches from b.
func requireArrowGoReads(t *testing.T, b []byte, file bool) {
	t.Helper()
	var got []string
	add := func(rec arrow.Record) {
		cat := rec.Column(1).(*array.Dictionary)
		values := cat.Dictionary().(*array.String)
		for i := range cat.Len() {
			if cat.IsNull(i) {
				got = append(got, "")
				continue
			}
			got = append(got, values.Value(cat.GetValueIndex(i)))
		}
	}
	if file {
		r, err := arrowipc.NewFileReader(bytes.NewReader(b))
		require.NoError(t, err)
		defer r.Close()
		for i := range r.NumRecords() {
			rec, err := r.Record(i)
			require.NoError(t, err)
			add(rec)
		}
	} else {
		r, err := arrowipc.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		defer r.Release()
		for r.Next() {
			add(r.Record())
		}
		require.NoError(t, r.Err())
	}
	assert.Equal(t, catRows, got, "arrow-go's reader")
}

// TestTableWriterDictionaryLimits: the unified dictionaries of an Arrow IPC file are held
// within WriteOptions.MaxCopySize (past it an error wrapping limits.ErrExceeded), and fit the
// column's index type (else an error saying so, and that a stream may hold them); a writer
// that failed writes no file, and lets go of what it held.
func TestTableWriterDictionaryLimits(t *testing.T) {
	int8Cat := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	wide := func(mem memory.Allocator, first int) arrow.Record {
		values := array.NewStringBuilder(mem)
		defer values.Release()
		indices := array.NewInt8Builder(mem)
		defer indices.Release()
		for i := range 100 {
			values.Append("v" + string(rune('A'+(first+i)/26)) + string(rune('a'+(first+i)%26)))
			indices.Append(int8(i))
		}
		v, idx := values.NewArray(), indices.NewArray()
		defer v.Release()
		defer idx.Release()
		cat := array.NewDictionaryArray(int8Cat, idx, v)
		defer cat.Release()
		return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "cat", Type: int8Cat, Nullable: true}}, nil), []arrow.Array{cat}, 100)
	}
	for _, tc := range []struct {
		name    string
		opts    dataset.WriteOptions
		batches func(memory.Allocator) []arrow.Record
		want    error
		says    string
	}{
		{"past MaxCopySize", dataset.WriteOptions{MaxCopySize: 200}, func(mem memory.Allocator) []arrow.Record { return catBatches(t, mem) },
			limits.ErrExceeded, "unifying the dictionaries of the batches of an Arrow IPC file takes more than MaxCopySize 200 bytes"},
		{"past the index type", dataset.WriteOptions{}, func(mem memory.Allocator) []arrow.Record { return []arrow.Record{wide(mem, 0), wide(mem, 100)} },
			ndarray.ErrDType, "column cat: the batches' dictionaries hold 200 values together, more than its int8 indices reach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			tc.opts.Allocator = mem
			var out bytes.Buffer
			w, err := dataset.NewTableWriter(&positioned{w: &out}, dataset.FormatArrow, tc.opts)
			require.NoError(t, err)
			var failed error
			for _, rec := range tc.batches(mem) {
				if failed == nil {
					failed = w.WriteRecord(rec)
				}
				rec.Release()
			}
			require.ErrorIs(t, failed, tc.want)
			assert.ErrorContains(t, failed, tc.says)
			rec := catBatch(t, mem, `["x"]`, `[0]`, 0)
			assert.ErrorIs(t, w.WriteRecord(rec), tc.want, "no batch after a failure")
			rec.Release()
			assert.ErrorIs(t, w.Close(), tc.want, "no file of a failed writer")
			assert.Zero(t, out.Len(), "nothing written")
		})
	}
}

// positioned is a writer that answers Seek(0, io.SeekCurrent), as an Arrow IPC file writer
// asks.
type positioned struct {
	w   io.Writer
	pos int64
}

func (p *positioned) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

func (p *positioned) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, errors.New("cannot seek")
	}
	return p.pos, nil
}

// TestDictionaryColumnsRoundTrip: a dictionary-encoded column read from an Arrow IPC file or
// stream keeps its type and its dictionary's order (its Dictionary), and Batch writes it back
// as that dictionary: Save as Arrow, Arrow stream or Parquet and read again gives the same
// type and rows; a dictionary of values that are not all UTF-8 is written of binary values,
// and a row selection (TakeRows) keeps the encoding, its dictionary the values the rows hold.
func TestDictionaryColumnsRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := catBatches(t, mem)
	schema := recs[0].Schema()
	ts, _, err := dataset.FromRecords(schema, recs, "t")
	require.NoError(t, err)
	cat := ts[1]
	require.NotNil(t, cat.Dictionary)
	assert.Equal(t, []string{"red", "green", "blue", "violet"}, cat.Dictionary.Values, "every batch's dictionary, each value once, in order")

	rec, err := dataset.Batch(mem, ts)
	require.NoError(t, err)
	col := rec.Column(1).(*array.Dictionary)
	assert.True(t, arrow.TypeEqual(catType, col.DataType()))
	assert.Equal(t, `["red" "green" "blue" "violet"]`, col.Dictionary().String(), "the dictionary's order kept")
	rec.Release()
	for _, r := range recs {
		r.Release()
	}

	for _, format := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet} {
		path := filepath.Join(t.TempDir(), "t."+string(format))
		require.NoError(t, dataset.Save(path, ts, dataset.WriteOptions{}))
		f, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err, format)
		requireCats(t, f)
		f.Release()
	}

	taken, err := cat.TakeRows([]int64{4, 3, 0})
	require.NoError(t, err)
	rec, err = dataset.Batch(mem, []dataset.Tensor{taken})
	require.NoError(t, err)
	col = rec.Column(0).(*array.Dictionary)
	assert.Equal(t, `["blue" "red"]`, col.Dictionary().String(), "the values the rows hold, as they come")
	assert.Equal(t, `[0 (null) 1]`, col.Indices().String(), "indices into the narrowed dictionary")
	rec.Release()

	bytesCat := dataset.Tensor{Name: "b", Column: "b", Dense: ndarray.Must(ndarray.FromSlice([]string{"\xff", "ok", "\xff"}, 3)), Dictionary: &dataset.Dictionary{Type: catType}}
	rec, err = dataset.Batch(mem, []dataset.Tensor{bytesCat})
	require.NoError(t, err)
	assert.Equal(t, "dictionary<values=binary, indices=int32, ordered=false>", rec.Schema().Field(0).Type.String(), "bytes that are not text")
	rec.Release()
}

// What Arrow C++ 17 reads of the files a TableWriter writes of catBatches (record batches of
// other dictionaries), recorded by TestRecordArrowCppDictionaryFiles: the committed files
// (unified.arrow, an Arrow IPC file of one unified dictionary; replaced.arrows, a stream that
// replaces its dictionary), what Arrow C++'s IPC readers read of each, written back as Parquet
// by parquet_golden from-ipc (*.cpp.parquet), and what parquet_golden read says of those
// (cpp-read.jsonl).
const dictionaryFiles = "testdata/dictionaries"

// writeCatBatches writes catBatches with a TableWriter in format to path.
func writeCatBatches(t *testing.T, path string, format dataset.Format) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := dataset.NewTableWriter(f, format, dataset.WriteOptions{Allocator: mem})
	require.NoError(t, err)
	for _, rec := range catBatches(t, mem) {
		require.NoError(t, w.WriteRecord(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
}

// TestRecordArrowCppDictionaryFiles records dictionaryFiles. It runs only when
// NDARROW_ARROW_CPP names the reference's bin directory:
//
//	NDARROW_ARROW_CPP=$PWD/../shared/reference/arrow-cpp-17/bin go test ./dataset -run RecordArrowCppDictionaryFiles
func TestRecordArrowCppDictionaryFiles(t *testing.T) {
	bin := os.Getenv("NDARROW_ARROW_CPP")
	if bin == "" {
		t.Skip("NDARROW_ARROW_CPP names Arrow C++ 17's programs (../shared/reference/arrow-cpp-17/bin) to record from")
	}
	require.NoError(t, os.MkdirAll(dictionaryFiles, 0o755))
	var read []string
	for _, name := range []string{"unified.arrow", "replaced.arrows"} {
		path := filepath.Join(dictionaryFiles, name)
		writeCatBatches(t, path, dataset.Format(strings.TrimPrefix(filepath.Ext(name), ".")))
		pq := path + ".cpp.parquet"
		b, err := exec.Command(filepath.Join(bin, "parquet_golden"), "from-ipc", path, pq).CombinedOutput()
		require.NoError(t, err, "%s", b)
		b, err = exec.Command(filepath.Join(bin, "parquet_golden"), "read", pq, t.TempDir()).Output()
		require.NoError(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			m["file"] = name
			line, _ := json.Marshal(m)
			read = append(read, string(line))
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dictionaryFiles, "cpp-read.jsonl"), []byte(strings.Join(read, "\n")+"\n"), 0o644))
}

// TestArrowCppReadsDictionaryFiles: a TableWriter writes today the bytes of the committed
// files, which Arrow C++ 17 read (recorded): the Arrow IPC file of batches of other
// dictionaries (one unified dictionary) and the stream that replaces its dictionary, each as
// the category dictionary<values=string, indices=int32> of 9 rows and 1 null, and what it read
// — the Parquet it wrote of it — holds every row's category and label, as ndarrow reads
// ndarrow's files.
func TestArrowCppReadsDictionaryFiles(t *testing.T) {
	lines, err := os.ReadFile(filepath.Join(dictionaryFiles, "cpp-read.jsonl"))
	require.NoError(t, err)
	cats := 0
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		if m["name"] == "cat" {
			cats++
			assert.Equal(t, "dictionary<values=string, indices=int32, ordered=0>", m["type"], m["file"])
			assert.Equal(t, float64(len(catRows)), m["rows"], m["file"])
			assert.Equal(t, float64(1), m["null_count"], m["file"])
		}
	}
	assert.Equal(t, 2, cats, "both files read")
	for _, name := range []string{"unified.arrow", "replaced.arrows"} {
		t.Run(name, func(t *testing.T) {
			committed := filepath.Join(dictionaryFiles, name)
			path := filepath.Join(t.TempDir(), name)
			writeCatBatches(t, path, dataset.Format(strings.TrimPrefix(filepath.Ext(name), ".")))
			want, err := os.ReadFile(committed)
			require.NoError(t, err)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "a TableWriter writes other bytes than %s, which Arrow C++ read: record again (TestRecordArrowCppDictionaryFiles)", committed)
			for _, file := range []string{committed, committed + ".cpp.parquet"} {
				f, err := dataset.Open(file, limits.Limits{})
				require.NoError(t, err, file)
				requireCats(t, f)
				f.Release()
			}
		})
	}
}

// TestDictionaryBytes: a dictionary-encoded column counts its indices in a record batch's
// bytes and its dictionary once beside them (RecordBytes: Flight's total_bytes); SplitRecord
// sizes batches by their indices and refuses, naming the column, a dictionary larger than a
// message, which goes whole in a message of its own.
func TestDictionaryBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := catBatch(t, mem, `["red", "green"]`, `[0, 1, 1, null, 0, 0, 1, 1]`, 0)
	defer rec.Release()
	n, err := dataset.RecordBytes(rec)
	require.NoError(t, err)
	// label: 8 int64; cat: a validity byte, 8 int32 indices; its dictionary: 3 offsets, 8 bytes
	assert.Equal(t, int64(8*8+1+8*4+3*4+8), n)

	parts, err := dataset.SplitRecord(rec, 8*2+1+4*2) // two rows a batch, the dictionary beside
	require.NoError(t, err)
	assert.Len(t, parts, 4)
	for _, p := range parts {
		p.Release()
	}
	_, err = dataset.SplitRecord(rec, 19)
	require.ErrorIs(t, err, dataset.ErrBatchTooLarge)
	var tl *dataset.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, dataset.TooLargeError{Row: -1, Column: "cat", Bytes: 20, Most: 19}, *tl)
	// a dictionary, not a row (the error once said "one row exceeds the batch size")
	assert.EqualError(t, err, "dataset: a dictionary exceeds the batch size: column cat's dictionary holds 20 bytes, a batch at most 19")
	wide := dataset.Tensor{Name: "x", Dense: ndarray.Full(float32(1), 2, 100)} // rows of 400 bytes
	_, err = wide.Records(mem, "x", 100)
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, dataset.TooLargeError{Row: 0, Bytes: 400, Most: 100}, *tl)
	assert.EqualError(t, err, "dataset: one row exceeds the batch size: row 0 holds 400 bytes, a batch at most 100")
}

// TestTakeNarrowsTheDictionary: rows taken of a dictionary-encoded column keep its encoding,
// their dictionary the values they hold alone — a take of two rows of a column of many values
// carries two, as a Parquet file's take does — in order and repeated as asked.
func TestTakeNarrowsTheDictionary(t *testing.T) {
	values := make([]string, 1000)
	for i := range values {
		values[i] = fmt.Sprintf("category-%03d", i)
	}
	rows := make([]string, 5000)
	for i := range rows {
		rows[i] = values[(i*7)%len(values)]
	}
	cat := dataset.Tensor{Name: "t.cat", Column: "cat", Dense: ndarray.Must(ndarray.FromSlice(rows, int64(len(rows)))),
		Dictionary: &dataset.Dictionary{Type: catType, Values: values}}
	half := cat
	half.Dense = ndarray.Must(cat.Dense.(*ndarray.Dense[string]).Slice(ndarray.Range(0, 2500)))
	rest := cat
	rest.Dense = ndarray.Must(cat.Dense.(*ndarray.Dense[string]).Slice(ndarray.Range(2500, 5000)))
	for _, tc := range []struct {
		name string
		take func(rows []int64) (dataset.Tensor, error)
	}{
		{"TakeRows", cat.TakeRows},
		{"TakeRowsOf", func(rows []int64) (dataset.Tensor, error) {
			return dataset.TakeRowsOf([]dataset.Tensor{half, rest}, rows)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.take([]int64{4999, 3, 4999})
			require.NoError(t, err)
			require.NotNil(t, got.Dictionary, "still dictionary-encoded")
			assert.Equal(t, catType, got.Dictionary.Type)
			assert.Nil(t, got.Dictionary.Values, "not the column's every value")
			assert.Equal(t, []string{rows[4999], rows[3], rows[4999]}, must(dataset.DenseOf[string](got)).Ravel())
			assert.Len(t, cat.Dictionary.Values, 1000, "the column's own dictionary untouched")
			rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{got})
			require.NoError(t, err)
			defer rec.Release()
			col := rec.Column(0).(*array.Dictionary)
			assert.Equal(t, fmt.Sprintf("[%q %q]", rows[4999], rows[3]), col.Dictionary().String(), "the values the rows hold, as they come")
		})
	}
}

// BenchmarkBatchCategory: Batch of a category of 2^20 rows and 64 values, as its strings and
// dictionary-encoded (what a Tensor read from a dictionary column writes): the time, and the
// bytes the record batch and its dictionary take (RecordBytes, what goes on the wire).
//
//	go test ./dataset -run '^$' -bench BatchCategory -benchtime 5x
func BenchmarkBatchCategory(b *testing.B) {
	const rows = 1 << 20
	values := ndarray.FromFunc(func(i []int64) string {
		return "category-" + strings.Repeat("x", int(i[0]%8)) + string(rune('A'+i[0]%64))
	}, rows)
	for _, dict := range []bool{false, true} {
		name := "strings"
		t := dataset.Tensor{Name: "c", Column: "c", Dense: values}
		if dict {
			name, t.Dictionary = "dictionary", &dataset.Dictionary{Type: catType}
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{t})
				if err != nil {
					b.Fatal(err)
				}
				n, err := dataset.RecordBytes(rec)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n), "wire-bytes/op")
				rec.Release()
			}
		})
	}
}
