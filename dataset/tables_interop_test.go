package dataset_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// The interop evidence of issue 35 (testdata/tables/README.md says who wrote what, and how):
// a table of a tensor column beside int64, float64, utf8, binary, dictionary<utf8> and struct
// columns, as Arrow JS 21.2.0 (IPC file and stream) and Arrow C++ 17 (Parquet) wrote it, read
// by ndarrow; what ndarrow writes of it read back by Arrow C++ 17, Arrow JS and DuckDB.

var updateTables = flag.Bool("update-tables", false,
	"rewrite the files of testdata/tables/ndarrow that ndarrow writes (then record again what Arrow C++, Arrow JS and DuckDB read of them: testdata/tables/README.md)")

const tablesDir = "testdata/tables"

// tableInputs are the files other writers wrote of the table.
var tableInputs = []string{"arrow-js/table.arrow", "arrow-js/table.arrows", "arrow-cpp-17/table.parquet"}

// ndarrowOutputs are the files ndarrow writes of the table (testdata/tables/ndarrow), which
// other readers read back: the whole table as Parquet, an Arrow IPC file and stream, and its
// number columns alone as Parquet — which ndarrow's own Parquet writer writes
// (parquet/directwrite.go), not pqarrow: a table of an embedding and its labels.
var ndarrowOutputs = []string{"table.parquet", "table.arrow", "table.arrows", "numbers.parquet"}

// outputColumns returns the expected columns the ndarrow output named file holds.
func outputColumns(t *testing.T, file string) []expectedColumn {
	cols, _ := expectedTable(t)
	if strings.HasPrefix(file, "numbers.") {
		return slices.DeleteFunc(cols, func(c expectedColumn) bool { return c.DType == "string" })
	}
	return cols
}

// expectedColumn is a line of testdata/tables/arrow-js/expected.jsonl: what a correct reader
// recovers of a column, computed by the generator from the values it wrote.
type expectedColumn struct {
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	Column  string  `json:"column"`
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Nulls   []int   `json:"nulls"`  // the null rows, none when absent
	SHA256  string  `json:"sha256"` // of the values, a null row as zero or ""
	LeftOut string  `json:"left_out"`
}

// expectedTable returns the columns of expected.jsonl: those with a tensor form, in order,
// and those without.
func expectedTable(t *testing.T) (cols, leftOut []expectedColumn) {
	t.Helper()
	f, err := os.Open(filepath.Join(tablesDir, "arrow-js", "expected.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c expectedColumn
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		if c.LeftOut != "" {
			leftOut = append(leftOut, c)
		} else {
			cols = append(cols, c)
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, cols)
	return cols, leftOut
}

// openTable opens the file at path and returns it as a table; release the File.
func openTable(t *testing.T, path string) (*dataset.File, *dataset.Table) {
	t.Helper()
	f, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	tab, err := f.Table()
	if err != nil {
		f.Release()
	}
	require.NoError(t, err)
	return f, tab
}

// checkExpectedTable checks that tab holds the columns cols of expected.jsonl with their kind,
// dtype, shape, null rows and values, in order, and names those of left, and those only, as
// left out with their type.
func checkExpectedTable(t *testing.T, tab *dataset.Table, cols, left []expectedColumn) {
	t.Helper()
	var names []string
	for _, w := range cols {
		names = append(names, w.Column)
	}
	assert.Equal(t, names, tab.Names(), "every column with a tensor form, in order")
	assert.Equal(t, cols[0].Shape[0], tab.Rows)
	for _, w := range cols {
		c, err := tab.Column(w.Column)
		if !assert.NoError(t, err) {
			continue
		}
		assert.Equal(t, tab.Name+"."+w.Column, c.Name)
		assert.Equal(t, w.Kind, string(c.ImpliedKind()), w.Column)
		assert.Equal(t, w.DType, c.DType().String(), w.Column)
		assert.Equal(t, ndarray.Shape(w.Shape), c.Shape(), w.Column)
		assert.Equal(t, w.Nulls, nullRows(c.Valid), "%s: its null rows", w.Column)
		assert.Equal(t, w.SHA256, tensorSHA256(t, c), "%s: its values", w.Column)
	}
	var got, want []string
	for _, l := range tab.LeftOut {
		got = append(got, l.Column+": "+l.Type)
		assert.NotEmpty(t, l.Why, l.Column)
	}
	for _, l := range left {
		want = append(want, l.Column+": "+l.LeftOut)
	}
	assert.Equal(t, want, got, "the columns with no tensor form, named with their type")
}

// nullRows returns the rows valid says are null, nil when none is.
func nullRows(valid []bool) []int {
	var out []int
	for i, v := range valid {
		if !v {
			out = append(out, i)
		}
	}
	return out
}

// tensorSHA256 returns the sha256 of c's values as expected.jsonl hashes them: little-endian,
// row-major, a string as its 4-byte little-endian length then its bytes, a null row as zero
// or the empty string.
func tensorSHA256(t *testing.T, c dataset.Tensor) string {
	zero := "0"
	if c.DType() == ndarray.String {
		zero = ""
	}
	filled, err := c.Filled(zero)
	require.NoError(t, err)
	h := sha256.New()
	_, err = filled.WriteValues(h, 0)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// TestTablesOtherWritersWrote: the table as Arrow JS (IPC file and stream) and Arrow C++ 17
// (Parquet) wrote it reads as every column but the struct, with its values, dtype and null
// rows; the struct is named, with its type.
func TestTablesOtherWritersWrote(t *testing.T) {
	cols, left := expectedTable(t)
	for _, input := range tableInputs {
		t.Run(input, func(t *testing.T) {
			f, tab := openTable(t, filepath.Join(tablesDir, input))
			defer f.Release()
			assert.Equal(t, "table", tab.Name)
			checkExpectedTable(t, tab, cols, left)
		})
	}
}

// TestTablesNdarrowWrites: each input saved as Parquet, an Arrow IPC file and stream (and its
// number columns as Parquet) gives the bytes of testdata/tables/ndarrow — the files Arrow
// C++ 17, Arrow JS and DuckDB read, so that what they read is what ndarrow writes now — and
// those read back as the table, nothing left out, their columns of the Arrow types other
// readers expect.
//
// The bytes, not only what they hold: ndarrow's writers are deterministic (no time, no
// randomness, pages in order whatever GOMAXPROCS), so bytes that differ mean a change to a
// writer or to a dependency (arrow-go, the ZSTD encoder) which the readers have not seen —
// their readings are then to be recorded again, with -update-tables and README's commands.
func TestTablesNdarrowWrites(t *testing.T) {
	for _, input := range tableInputs {
		f, tab := openTable(t, filepath.Join(tablesDir, input))
		for _, file := range ndarrowOutputs {
			t.Run(input+" saved as "+file, func(t *testing.T) {
				var columns []dataset.Tensor
				for _, c := range outputColumns(t, file) {
					columns = append(columns, must(tab.Column(c.Column)))
				}
				path := filepath.Join(t.TempDir(), file)
				require.NoError(t, dataset.Save(path, columns, dataset.WriteOptions{}))
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				committed := filepath.Join(tablesDir, "ndarrow", file)
				if *updateTables {
					require.NoError(t, os.WriteFile(committed, got, 0o644))
				}
				want, err := os.ReadFile(committed)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(want, got),
					"ndarrow now writes other bytes than %s, which Arrow C++ 17, Arrow JS and DuckDB read: run with -update-tables and record their readings again (testdata/tables/README.md)", committed)
			})
		}
		f.Release()
	}
	arrowTypes := map[string]string{
		"emb":   `extension<arrow.fixed_shape_tensor[float32, {"shape":[4]}]>`,
		"label": "int64", "score": "float64", "name": "utf8", "blob": "binary", "cat": "dictionary<values=utf8, indices=int32, ordered=false>",
	}
	for _, file := range ndarrowOutputs {
		t.Run("ndarrow/"+file+" reads back", func(t *testing.T) {
			path := filepath.Join(tablesDir, "ndarrow", file)
			f, tab := openTable(t, path)
			defer f.Release()
			cols := outputColumns(t, file)
			checkExpectedTable(t, tab, cols, nil)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			types := schemaOf(t, dataset.Format(strings.TrimPrefix(filepath.Ext(file), ".")), b)
			for _, c := range cols {
				assert.Equal(t, arrowTypes[c.Column], types[c.Column],
					"%s: int64 stays int64, strings utf8, bytes binary, the dictionary a dictionary", c.Column)
			}
			assert.Len(t, types, len(cols))
		})
	}
}

// readerTypes is each column's type as each reader spells it, when ndarrow's files hold
// what they should: int64 stays int64, utf8 a string column, binary binary, the dictionary
// column a dictionary of utf8 (DuckDB, which applies no ARROW:schema, a string column). DuckDB
// reads the tensor column as a list: a Parquet LIST is one to it.
var readerTypes = map[string]map[string]string{
	"arrow-cpp-17": {"emb": "extension<arrow.fixed_shape_tensor[value_type=float, shape=[4]]>",
		"label": "int64", "score": "double", "name": "string", "blob": "binary", "cat": "dictionary<values=string, indices=int32, ordered=0>"},
	"arrow-js": {"emb": "FixedSizeList[4]<Float32>",
		"label": "Int64", "score": "Float64", "name": "Utf8", "blob": "Binary", "cat": "Dictionary<Int32, Utf8>"},
	"duckdb": {"emb": "FLOAT[]",
		"label": "BIGINT", "score": "DOUBLE", "name": "VARCHAR", "blob": "BLOB", "cat": "VARCHAR"},
}

// cppColumn is a line of what parquet_golden read printed.
type cppColumn struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Rows        int64   `json:"rows"`
	NullCount   int     `json:"null_count"`
	ArrowSchema bool    `json:"arrow_schema"`
	ExtRestored bool    `json:"ext_restored"`
	Shape       []int64 `json:"shape"`
}

// readCppLines returns the lines parquet_golden read printed into path.
func readCppLines(t *testing.T, path string) []cppColumn {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []cppColumn
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c cppColumn
		require.NoError(t, json.Unmarshal([]byte(line), &c), line)
		out = append(out, c)
	}
	return out
}

// checkCppTypes checks the columns Arrow C++ 17 read: cols, in order, of the types it should
// read, rows and null counts.
func checkCppTypes(t *testing.T, read []cppColumn, cols []expectedColumn) {
	t.Helper()
	require.Len(t, read, len(cols), "the columns ndarrow wrote")
	for i, w := range cols {
		c := read[i]
		assert.Equal(t, w.Column, c.Name)
		assert.Equal(t, readerTypes["arrow-cpp-17"][w.Column], c.Type, w.Column)
		assert.Equal(t, w.Shape[0], c.Rows, w.Column)
		assert.Equal(t, len(w.Nulls), c.NullCount, "%s: its null rows", w.Column)
		assert.True(t, c.ArrowSchema, "%s: the Arrow schema stored", w.Column)
	}
	assert.True(t, read[0].ExtRestored, "the tensor column an arrow.fixed_shape_tensor again")
	assert.Equal(t, []int64{cols[0].Shape[0], 4}, read[0].Shape)
}

// TestTablesArrowCppReadsWhatNdarrowWrote: Arrow C++ 17 read ndarrow's Parquet with the
// columns' types, rows and null counts expected, and the values of its number columns (it
// dumps those; the null label's slot holds what C++'s decoder left there, the next value, so
// it is zeroed before hashing: Arrow leaves a null slot's value unspecified); it read
// ndarrow's Arrow IPC file and stream (rewritten as Parquet by it, from-ipc: its golden
// reader dumps no string columns) with the types expected, and the values it carried over
// read back here as expected.
func TestTablesArrowCppReadsWhatNdarrowWrote(t *testing.T) {
	dir := filepath.Join(tablesDir, "ndarrow", "read-by-arrow-cpp")
	for _, file := range []string{"table.parquet", "numbers.parquet"} {
		t.Run(file, func(t *testing.T) {
			cols := outputColumns(t, file)
			checkCppTypes(t, readCppLines(t, filepath.Join(dir, file+".jsonl")), cols)
			for _, w := range cols {
				dump, err := os.ReadFile(filepath.Join(dir, file+".dump", w.Column+".bin"))
				if w.DType == "string" {
					assert.ErrorIs(t, err, os.ErrNotExist, "%s: parquet_golden dumps no strings", w.Column)
					continue
				}
				require.NoError(t, err, w.Column)
				size := 8
				if w.DType == "float32" {
					size = 4
				}
				require.Len(t, dump, int(ndarray.Shape(w.Shape).Size())*size, w.Column)
				for _, row := range w.Nulls {
					clear(dump[row*size : (row+1)*size])
				}
				sum := sha256.Sum256(dump)
				assert.Equal(t, w.SHA256, hex.EncodeToString(sum[:]), "%s: the values Arrow C++ read", w.Column)
			}
		})
	}
	for _, file := range []string{"table.arrow", "table.arrows"} {
		t.Run(file, func(t *testing.T) {
			rewritten := filepath.Join(dir, file+".parquet")
			cols := outputColumns(t, file)
			checkCppTypes(t, readCppLines(t, rewritten+".jsonl"), cols)
			f, tab := openTable(t, rewritten)
			defer f.Release()
			checkExpectedTable(t, tab, cols, nil)
		})
	}
}

// jsonColumn is a column as the Arrow JS and DuckDB scripts print it: a type and values.
type jsonColumn struct {
	Name      string
	Type      string
	Metadata  map[string]string // Arrow JS only: the field's
	NullCount int               `json:"null_count"`
	Values    []any             // json.Number, string, nil or []any
}

// readJSONColumns returns the columns the Arrow JS script (read.mjs, a column per entry) or
// the DuckDB one (read.mjs, a row per entry, types from DESCRIBE) printed into path.
func readJSONColumns(t *testing.T, path string) []jsonColumn {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var read struct {
		Rows     json.RawMessage
		Columns  []jsonColumn
		Describe []struct{ Column, Type string }
		Typeof   []map[string]string
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&read))
	if read.Columns != nil { // Arrow JS
		return read.Columns
	}
	require.Len(t, read.Typeof, 1, "one type per column on every row")
	var rows []map[string]any
	dec = json.NewDecoder(bytes.NewReader(read.Rows))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&rows))
	var out []jsonColumn
	for _, d := range read.Describe {
		assert.Equal(t, d.Type, read.Typeof[0][d.Column], "%s: typeof() as DESCRIBE says", d.Column)
		c := jsonColumn{Name: d.Column, Type: d.Type}
		for _, r := range rows {
			c.Values = append(c.Values, r[d.Column])
			if r[d.Column] == nil {
				c.NullCount++
			}
		}
		out = append(out, c)
	}
	return out
}

// valuesSHA256 hashes values a reader printed of a column of dtype as expected.jsonl hashes
// them: numbers little-endian (int64 printed as decimal strings), a string as its length then
// its bytes (bytes printed as hex), a null row as zero or "".
func valuesSHA256(t *testing.T, dtype string, values []any) string {
	t.Helper()
	var buf []byte
	var add func(v any)
	add = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				add(x)
			}
			return
		case nil:
			if dtype == "string" {
				v = ""
			} else {
				v = json.Number("0")
			}
			add(v)
			return
		}
		s := fmt.Sprint(v)
		switch dtype {
		case "int64":
			n, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err)
			buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
		case "float64":
			f, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
		case "float32":
			f, err := strconv.ParseFloat(s, 32)
			require.NoError(t, err)
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(f)))
		case "string":
			buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
			buf = append(buf, s...)
		default:
			t.Fatalf("no hash for dtype %s", dtype)
		}
	}
	for _, v := range values {
		add(v)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// TestTablesArrowJSAndDuckDBReadWhatNdarrowWrote: Arrow JS read ndarrow's Arrow IPC file and
// stream, and DuckDB its Parquet, with every column of the type it should have (int64 stays
// int64 — DuckDB's BIGINT —, utf8 a string column, binary binary, the dictionary column a
// string column), every value and every null row as the generator wrote them.
func TestTablesArrowJSAndDuckDBReadWhatNdarrowWrote(t *testing.T) {
	for _, tc := range []struct{ reader, file string }{
		{"arrow-js", "table.arrow"},
		{"arrow-js", "table.arrows"},
		{"duckdb", "table.parquet"},
		{"duckdb", "numbers.parquet"},
	} {
		t.Run(tc.reader+" reads "+tc.file, func(t *testing.T) {
			cols := outputColumns(t, tc.file)
			read := readJSONColumns(t, filepath.Join(tablesDir, "ndarrow", "read-by-"+tc.reader, tc.file+".json"))
			require.Len(t, read, len(cols), "the columns ndarrow wrote")
			if tc.reader == "arrow-js" { // no extension types in Arrow JS: the field says it
				assert.Equal(t, "arrow.fixed_shape_tensor", read[0].Metadata["ARROW:extension:name"])
				assert.JSONEq(t, `{"shape":[4]}`, read[0].Metadata["ARROW:extension:metadata"])
			}
			for i, w := range cols {
				c := read[i]
				assert.Equal(t, w.Column, c.Name)
				assert.Equal(t, readerTypes[tc.reader][w.Column], c.Type, w.Column)
				require.Len(t, c.Values, int(w.Shape[0]), w.Column)
				var nulls []int
				for row, v := range c.Values {
					if v == nil {
						nulls = append(nulls, row)
					}
				}
				assert.Equal(t, w.Nulls, nulls, "%s: its null rows", w.Column)
				assert.Equal(t, len(w.Nulls), c.NullCount, w.Column)
				values := c.Values
				if w.Column == "blob" { // printed as hex: the bytes, as strings
					values = slices.Clone(values)
					for row, v := range values {
						if v != nil {
							b, err := hex.DecodeString(v.(string))
							require.NoError(t, err)
							values[row] = string(b)
						}
					}
				}
				assert.Equal(t, w.SHA256, valuesSHA256(t, w.DType, values), "%s: the values %s read", w.Column, tc.reader)
			}
		})
	}
}
