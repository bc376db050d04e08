package dataset_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
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
// by ndarrow; what ndarrow writes of it, pinned byte for byte.

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
		"label": "int64", "score": "float64", "name": "utf8", "blob": "binary", "cat": "utf8",
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
					"%s: int64 stays int64, strings and the dictionary's values utf8, bytes binary", c.Column)
			}
			assert.Len(t, types, len(cols))
		})
	}
}
