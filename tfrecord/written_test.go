package tfrecord_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord"
)

var updateWritten = flag.Bool("update-written", false, "rewrite testdata/ndarrow-written (then run check.py there)")

const writtenDir = "testdata/ndarrow-written"

// writtenColumns are the columns of examples.tfrecord: every list kind and the conversions
// into them.
func writtenColumns(t *testing.T) []tfrecord.Column {
	ids, err := ragged.FromRowSplits([]int32{1, 2, 3}, []int64{0, 2, 2, 3})
	require.NoError(t, err)
	sp := sparse.NewCOO[float32](3, 4)
	sp.Set(1.5, 0, 1)
	sp.Set(-2, 2, 3)
	flags := ndarray.New[bool](3, 2)
	flags.Set(true, 1, 0)
	return []tfrecord.Column{
		{Name: "f64", Dense: ndarray.Must(ndarray.Must(ndarray.Arange[float64](0.1, 1.25, 0.1)).Reshape(3, 2, 2))},
		{Name: "i16", Dense: ndarray.Must(ndarray.FromSlice([]int16{-3, 0, 32767}, 3))},
		{Name: "u64", Dense: ndarray.Must(ndarray.FromSlice([]uint64{0, 1, 1 << 62}, 3))},
		{Name: "half", Dense: ndarray.Must(ndarray.FromSlice([]float16.Num{float16.New(0.5), float16.FromBits(1), float16.New(-2)}, 3))},
		{Name: "flags", Dense: flags},
		{Name: "word", Dense: ndarray.Must(ndarray.FromSlice([]string{"a", "", "héllo"}, 3))},
		{Name: "ids", Ragged: ids},
		{Name: "sp", Sparse: sp},
	}
}

// writtenTensors are the tensors of tensors.tfrecord: one of every dtype.
func writtenTensors(t *testing.T) []ndarray.Array {
	src := ndarray.Must(ndarray.Must(ndarray.FromSlice([]float64{0, 1, 2.5, -3, 100, 7}, 6)).Reshape(2, 3))
	var out []ndarray.Array
	for _, d := range ndarray.DTypes() {
		a, err := ndarray.ConvertTo(src, d)
		require.NoError(t, err)
		out = append(out, a)
	}
	return out
}

// writeFiles writes the three files into dir.
func writeFiles(t *testing.T, dir string) {
	for _, name := range []string{"examples.tfrecord", "examples.tfrecord.gz"} {
		var buf bytes.Buffer
		w, err := tfrecord.NewWriter(&buf, tfrecord.CompressionOf(name))
		require.NoError(t, err)
		_, err = tfrecord.WriteExamples(w, writtenColumns(t))
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644))
	}
	var buf bytes.Buffer
	w, err := tfrecord.NewWriter(&buf, tfrecord.None)
	require.NoError(t, err)
	for _, a := range writtenTensors(t) {
		b, err := tfrecord.EncodeTensor(a, []string{"row", "col"})
		require.NoError(t, err)
		require.NoError(t, w.WriteRecord(b))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tensors.tfrecord"), buf.Bytes(), 0o644))
}

// TestWrittenFilesAreWhatPythonRead: ndarrow still writes byte for byte the files check.py
// read with TensorFlow's own .proto definitions, and what it read is what was written.
func TestWrittenFilesAreWhatPythonRead(t *testing.T) {
	if *updateWritten {
		writeFiles(t, writtenDir)
	}
	dir := t.TempDir()
	writeFiles(t, dir)
	for _, name := range []string{"examples.tfrecord", "examples.tfrecord.gz", "tensors.tfrecord"} {
		want, err := os.ReadFile(filepath.Join(writtenDir, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "%s: ndarrow no longer writes the bytes check.py read: rerun with -update-written and check.py", name)
	}

	f, err := os.Open(filepath.Join(writtenDir, "python-read.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	type feature struct {
		Kind   string            `json:"kind"`
		Values []json.RawMessage `json:"values"`
	}
	var line struct {
		File     string             `json:"file"`
		Record   int                `json:"record"`
		Features map[string]feature `json:"features"`
		DType    string             `json:"dtype"`
		Shape    []int64            `json:"shape"`
		Names    []string           `json:"names"`
		Values   []json.RawMessage  `json:"values"`
	}
	want := expectedFeatures(t)
	tensors := writtenTensors(t)
	lines := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines++
		line.Features = nil
		require.NoError(t, json.Unmarshal(s.Bytes(), &line))
		if line.File == "tensors.tfrecord" {
			a := tensors[line.Record]
			dt, _ := tfrecord.DataTypeOf(a.DType())
			assert.Equal(t, dt.String(), line.DType)
			assert.Equal(t, []int64(a.Shape()), line.Shape)
			assert.Equal(t, []string{"row", "col"}, line.Names)
			assert.Equal(t, rawStrings(line.Values), valueStrings(t, a), "%v read by Python", a.DType())
			continue
		}
		got := map[string]string{}
		for name, f := range line.Features {
			got[name] = f.Kind + " " + strings.Join(rawStrings(f.Values), " ")
		}
		assert.Equal(t, want[line.Record], got, "%s record %d", line.File, line.Record)
	}
	assert.Equal(t, 3+3+len(tensors), lines)
}

// expectedFeatures is what each Example of examples.tfrecord holds, as Python prints it.
func expectedFeatures(t *testing.T) []map[string]string {
	f32 := func(vs ...float64) string {
		var s []string
		for _, v := range vs {
			s = append(s, strconv.FormatFloat(float64(float32(v)), 'g', -1, 64))
		}
		return "float_list " + strings.Join(s, " ")
	}
	hexes := func(s string) string { return "bytes_list " + fmt.Sprintf("%q", hex.EncodeToString([]byte(s))) }
	f64 := writtenColumns(t)[0].Dense.(*ndarray.Dense[float64]).Ravel()
	return []map[string]string{
		{"f64": f32(f64[0:4]...), "i16": "int64_list -3", "u64": "int64_list 0", "half": f32(0.5), "flags": "int64_list 0 0",
			"word": hexes("a"), "ids": "int64_list 1 2", "sp/values": f32(1.5), "sp/index/1": "int64_list 1"},
		{"f64": f32(f64[4:8]...), "i16": "int64_list 0", "u64": "int64_list 1", "half": f32(math.Ldexp(1, -24)), "flags": "int64_list 1 0",
			"word": "bytes_list \"\"", "ids": "int64_list ", "sp/values": "float_list ", "sp/index/1": "int64_list "},
		{"f64": f32(f64[8:12]...), "i16": "int64_list 32767", "u64": "int64_list 4.611686018427388e+18", "half": f32(-2), "flags": "int64_list 0 0",
			"word": hexes("héllo"), "ids": "int64_list 3", "sp/values": f32(-2), "sp/index/1": "int64_list 3"},
	}
}

// rawStrings returns JSON values as text that compares as the values do: strings and bools
// as written, numbers as the shortest text of their float64 value (2.0 and 2 are one value).
func rawStrings(vs []json.RawMessage) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = number(string(v))
	}
	return out
}

// number returns the shortest text of a JSON number's float64 value, other JSON unchanged.
func number(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// valueStrings returns a tensor's values as Python's json prints them.
func valueStrings(t *testing.T, a ndarray.Array) []string {
	var out []string
	switch d := a.(type) {
	case *ndarray.Dense[string]:
		for _, s := range d.Ravel() {
			out = append(out, fmt.Sprintf("%q", hex.EncodeToString([]byte(s))))
		}
		return out
	case *ndarray.Dense[bool]:
		for _, b := range d.Ravel() {
			out = append(out, fmt.Sprint(b))
		}
		return out
	}
	f, err := ndarray.ConvertTo(a, ndarray.Float64)
	require.NoError(t, err)
	for _, v := range f.(*ndarray.Dense[float64]).Ravel() {
		out = append(out, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}
