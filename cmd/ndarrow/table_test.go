package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pqparquet "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
)

// tableColumns are the columns of userTable that have a tensor form, in order.
var tableColumns = []string{"emb", "label", "score", "name", "raw", "cat"}

// userTable returns a table as users have them — an embedding beside a label with a null, a
// score, a name, raw bytes (not UTF-8), a dictionary-encoded category and a struct — as record
// batches of rows[0], rows[1], … rows (of the 4 rows it has), each released by the caller.
func userTable(t *testing.T, rows ...int) (*arrow.Schema, []arrow.Record) {
	mem := memory.DefaultAllocator
	fromJSON := func(typ arrow.DataType, s string) arrow.Array {
		a, _, err := array.FromJSON(mem, typ, strings.NewReader(s))
		require.NoError(t, err)
		return a
	}
	embType, err := arrowtensor.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{2}, nil, nil)
	require.NoError(t, err)
	catType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	structType := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: embType, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "cat", Type: catType, Nullable: true},
		{Name: "s", Type: structType, Nullable: true},
	}, nil)
	storage := fromJSON(embType.StorageType(), `[[1, 2], [3, 4], [5, 6], [7, 8]]`)
	defer storage.Release()
	cols := []arrow.Array{array.NewExtensionArrayWithStorage(embType, storage),
		fromJSON(arrow.PrimitiveTypes.Int64, `[10, null, 30, 40]`),
		fromJSON(arrow.PrimitiveTypes.Float64, `[0.5, 1.5, 2.5, 3.5]`),
		fromJSON(arrow.BinaryTypes.String, `["a", "b", "c", "d"]`),
		fromJSON(arrow.BinaryTypes.Binary, `["AP8=", "", "YWI=", "/w=="]`), // 00 ff, "", ab, ff
		array.NewDictionaryArray(catType, fromJSON(arrow.PrimitiveTypes.Int32, `[0, 1, 1, 0]`), fromJSON(arrow.BinaryTypes.String, `["red", "green"]`)),
		fromJSON(structType, `[{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}]`)}
	whole := array.NewRecord(schema, cols, 4)
	for _, c := range cols {
		c.Release()
	}
	defer whole.Release()
	if len(rows) == 0 {
		rows = []int{4}
	}
	var recs []arrow.Record
	start := int64(0)
	for _, n := range rows {
		recs = append(recs, whole.NewSlice(start, start+int64(n)))
		start += int64(n)
	}
	return schema, recs
}

// writeUserTable writes userTable's batches of rows into path as Parquet (pqarrow, the Arrow
// schema stored), an Arrow IPC file or stream, as path's extension says, with arrow-go as its
// users write them.
func writeUserTable(t *testing.T, path string, rows ...int) {
	schema, recs := userTable(t, rows...)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	switch filepath.Ext(path) {
	case ".parquet":
		w, err := pqarrow.NewFileWriter(schema, f, pqparquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
	case ".arrow":
		w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(schema))
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
	case ".arrows":
		w := arrowipc.NewWriter(f, arrowipc.WithSchema(schema))
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
	default:
		t.Fatalf("writeUserTable: %s", path)
	}
}

// stringsHash returns the sha256 inspect gives string values: each a 4-byte little-endian
// length, then its bytes.
func stringsHash(values ...string) string {
	h := sha256.New()
	for _, v := range values {
		_ = binary.Write(h, binary.LittleEndian, uint32(len(v)))
		h.Write([]byte(v))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestInspectListsEveryColumn: inspect lists every column of a table — Parquet, Arrow IPC file
// and stream, in one batch or several — in order: plain and string columns as tensors of one
// dimension (dtype string for utf8, binary and dictionary-encoded strings, hashed as lengths
// and bytes), a column with null rows with their count, the struct as left out with its Arrow
// type and why; nothing on stderr, status 0; the text table has a NULLS column and the left-out
// column a line after it.
func TestInspectListsEveryColumn(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		rows []int
	}{
		{"t.parquet", nil}, {"t.arrow", []int{3, 1}}, {"t.arrows", []int{1, 3}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			writeUserTable(t, path, tc.rows...)
			code, stdout, stderr := runCLI("inspect", "--json", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			tensors, left := inspectColumns(t, path)
			var names []string
			for _, c := range tensors {
				names = append(names, c.Column)
				assert.Equal(t, "t."+c.Column, c.Name)
			}
			assert.Equal(t, tableColumns, names, "every column but the struct, in order")
			byName := map[string]inspection{}
			for _, c := range tensors {
				byName[c.Column] = c
			}
			assert.Equal(t, []int64{4, 2}, byName["emb"].Shape)
			for _, col := range tableColumns[1:] {
				assert.Equal(t, []int64{4}, byName[col].Shape, col)
				assert.Equal(t, "dense", byName[col].Kind, col)
			}
			assert.Equal(t, int64(1), byName["label"].Nulls)
			assert.Contains(t, stdout, `"column":"label","dtype":"int64","shape":[4],"dim_names":[],"nnz":4,"sha256":"`)
			assert.Equal(t, 1, strings.Count(stdout, `"nulls":`), "only a column with null rows says so")
			assert.Equal(t, "float64", byName["score"].DType)
			for col, values := range map[string][]string{"name": {"a", "b", "c", "d"}, "raw": {"\x00\xff", "", "ab", "\xff"}, "cat": {"red", "green", "green", "red"}} {
				assert.Equal(t, "string", byName[col].DType, col)
				assert.Equal(t, stringsHash(values...), byName[col].SHA256, col)
			}
			require.Len(t, left, 1)
			assert.Equal(t, leftOutLine{Name: "t.s", Column: "s", LeftOut: "struct<a: int32>",
				Why: "a struct has no tensor form (read its fields as columns of their own)"}, left[0])

			code, stdout, stderr = runCLI("inspect", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			require.Len(t, lines, 8, stdout)
			assert.Regexp(t, `^NAME +KIND +DTYPE +SHAPE +NNZ +NULLS +DIM NAMES +SHA256$`, lines[0])
			assert.Regexp(t, `^t\.label +dense +int64 +\(4,\) +4 +1 `, lines[2])
			assert.Regexp(t, `^t\.name +dense +string +\(4,\) +4 +0 `, lines[4])
			assert.Equal(t, "t.s: struct<a: int32> left out: a struct has no tensor form (read its fields as columns of their own)", lines[7])
		})
	}
}
