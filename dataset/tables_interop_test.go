package dataset_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
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
// by ndarrow.

const tablesDir = "testdata/tables"

// tableInputs are the files other writers wrote of the table.
var tableInputs = []string{"arrow-js/table.arrow", "arrow-js/table.arrows", "arrow-cpp-17/table.parquet"}

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
