package dataset_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
)

const tfGolden = "../tfrecord/testdata/tensorflow"

// tfrecordFile frames records, compressed as c.
func tfrecordFile(t *testing.T, c tfrecord.Compression, records ...[]byte) []byte {
	var buf bytes.Buffer
	w, err := tfrecord.NewWriter(&buf, c)
	require.NoError(t, err)
	for _, r := range records {
		require.NoError(t, w.WriteRecord(r))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestTFRecordFiles(t *testing.T) {
	dir := t.TempDir()
	copyTo := func(src, name string) string {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		return path
	}
	t.Run("Examples by name, GZIP", func(t *testing.T) {
		f, err := dataset.Open(copyTo(filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz"), "penguins.tfrecords.gz"), limits.Limits{})
		require.NoError(t, err)
		defer f.Release()
		require.Len(t, f.Tensors, 5)
		x := f.Tensors[4]
		assert.Equal(t, "penguins.species", x.Name)
		assert.Equal(t, "species", x.Column)
		assert.Equal(t, dataset.KindDense, x.Kind)
		assert.Equal(t, ndarray.Int64, x.DType())
		assert.Equal(t, ndarray.Shape{100}, x.Shape(), "one value a record")
	})
	t.Run("Examples by their CRCs, whatever the name", func(t *testing.T) {
		f, err := dataset.Open(copyTo(filepath.Join(tfGolden, "lingvo_wmt14_ende_wpm_32k_test.tfrecord"), "lingvo.data"), limits.Limits{})
		require.NoError(t, err)
		defer f.Release()
		require.Len(t, f.Tensors, 10)
		assert.Equal(t, dataset.KindRagged, f.Tensors[2].Kind)
		assert.Equal(t, "lingvo.source_id", f.Tensors[2].Name)
	})
	t.Run("TensorProtos", func(t *testing.T) {
		a, err := tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2)), []string{"r", "c"})
		require.NoError(t, err)
		b, err := tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]bool{true}, 1)), nil)
		require.NoError(t, err)
		tensors, _, err := dataset.Read(tfrecordFile(t, tfrecord.None, a, b), "t", limits.Limits{})
		require.NoError(t, err)
		require.Len(t, tensors, 2)
		assert.Equal(t, "t.0", tensors[0].Name)
		assert.Equal(t, []string{"r", "c"}, tensors[0].DimNames)
		assert.Equal(t, "t.1", tensors[1].Name)
		assert.Equal(t, ndarray.Bool, tensors[1].DType())
	})
	t.Run("records of another type", func(t *testing.T) {
		_, err := dataset.Open(copyTo(filepath.Join(tfGolden, "lingvo_events.out.tfevents.test"), "events"), limits.Limits{})
		var unmapped *dataset.UnmappedRecordsError
		require.True(t, errors.As(err, &unmapped), "%v", err)
		assert.Equal(t, 361, unmapped.Records)
		assert.ErrorIs(t, err, dataset.ErrNotTensors)
	})
	t.Run("a directory leaves them out", func(t *testing.T) {
		d, err := dataset.OpenDir(dir, limits.Limits{})
		require.NoError(t, err)
		defer d.Release()
		assert.Empty(t, d.Skipped)
		assert.Len(t, d.Tensors, 15, "penguins' 5 and lingvo's 10; the events file is not tensors")
	})
	t.Run("a bad CRC names the file", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(tfGolden, "magenta_tfrecord_iterator_test.tfrecord"))
		require.NoError(t, err)
		b[20] ^= 1
		path := filepath.Join(t.TempDir(), "bad.tfrecord")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		_, err = dataset.Open(path, limits.Limits{})
		assert.ErrorIs(t, err, tfrecord.ErrChecksum)
		assert.ErrorContains(t, err, path+": tfrecord: record 0 at byte 0: data checksum")
	})
}

// TestExamplesBySpec: TFX's penguin Examples (a GZIP TFRecord file TensorFlow wrote) read by a
// feature spec come back in the spec's order and shapes — a scalar feature (100,), as the
// Examples alone give a feature of one value a record, and one of shape [1] (100, 1), as
// tf.io.FixedLenFeature([1]) parses it, with the same values — and the features the spec does
// not name are left out, each named; records that do not fit the spec, and records that are
// not Examples, are errors saying so.
func TestExamplesBySpec(t *testing.T) {
	path := "../tfrecord/testdata/tensorflow/tfx_penguin_eval.tfrecord.gz"
	spec, err := tfrecord.ReadSpec(strings.NewReader(`{"species": {"dtype": "int64", "shape": []}, "body_mass_g": {"dtype": "float32", "shape": [1]}}`))
	require.NoError(t, err)
	f, err := dataset.OpenExamples(path, tfrecord.GZIP, spec, limits.Limits{})
	require.NoError(t, err)
	defer f.Release()
	plain, err := dataset.Open(path, limits.Limits{})
	require.NoError(t, err)
	defer plain.Release()

	require.Len(t, f.Tensors, 2)
	for i, tc := range []struct {
		name  string
		shape ndarray.Shape
	}{{"species", ndarray.Shape{100}}, {"body_mass_g", ndarray.Shape{100, 1}}} {
		name := tc.name
		got := f.Tensors[i]
		assert.Equal(t, "tfx_penguin_eval."+name, got.Name)
		assert.Equal(t, name, got.Column)
		assert.Equal(t, tc.shape, got.Shape(), "%s by the spec", name)
		was, err := plain.Tensor("tfx_penguin_eval." + name)
		require.NoError(t, err)
		assert.Equal(t, ndarray.Shape{100}, was.Shape(), "%s without a spec: one value a record", name)
		var a, b bytes.Buffer
		_, err = got.WriteValues(&a, 0)
		require.NoError(t, err)
		_, err = was.WriteValues(&b, 0)
		require.NoError(t, err)
		assert.Equal(t, b.Bytes(), a.Bytes(), name)
	}
	var left []string
	for _, l := range f.LeftOut {
		left = append(left, l.String())
	}
	assert.Equal(t, []string{
		"tfx_penguin_eval.culmen_depth_mm: feature left out: the feature spec does not name it",
		"tfx_penguin_eval.culmen_length_mm: feature left out: the feature spec does not name it",
		"tfx_penguin_eval.flipper_length_mm: feature left out: the feature spec does not name it",
	}, left)

	wrong, err := tfrecord.ReadSpec(strings.NewReader(`{"species": {"dtype": "int64", "shape": [2]}}`))
	require.NoError(t, err)
	_, err = dataset.OpenExamples(path, tfrecord.GZIP, wrong, limits.Limits{})
	require.ErrorIs(t, err, tfrecord.ErrSpec)
	assert.Contains(t, err.Error(), `feature "species": record 0 has 1 values, rows of shape (2,) have 2`)

	proto, err := tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]int16{1, 2}, 2)), nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	w, err := tfrecord.NewWriter(&buf, tfrecord.None)
	require.NoError(t, err)
	require.NoError(t, w.WriteRecord(proto))
	require.NoError(t, w.Close())
	_, _, err = dataset.ReadExamples(buf.Bytes(), "p", tfrecord.None, spec, limits.Limits{})
	require.ErrorIs(t, err, tfrecord.ErrSpec)
	assert.Contains(t, err.Error(), "records of TensorProto: a feature spec is for tf.train.Example records")
}

// TestOneValueFeaturesRoundTrip: a table's plain columns — an int64 label, a float32 score, a
// bytes id, and a float64 and a bool that an Example holds as float32 and int64 — written as
// tf.train.Examples by Write and by a TableWriter of two batches (record batches of a checked
// allocator) read back as [rows], the shape they had, with their values; a [rows, 1] reads
// back as [rows] too (an Example records no shape), which Warn is told once, and a
// [rows, 2] keeps its shape.
func TestOneValueFeaturesRoundTrip(t *testing.T) {
	const rows = 6
	label := ndarray.FromFunc(func(i []int64) int64 { return i[0]*7 - 20 }, rows)
	score := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]) / 4 }, rows)
	id := ndarray.FromFunc(func(i []int64) string { return string([]byte{'i', 0xff, byte('0' + i[0])}) }, rows)
	wide := ndarray.FromFunc(func(i []int64) float64 { return float64(i[0]) + 0.5 }, rows)
	flag := ndarray.FromFunc(func(i []int64) bool { return i[0]%2 == 0 }, rows)
	column := ndarray.FromFunc(func(i []int64) int64 { return i[0] }, rows, 1)
	pair := ndarray.FromFunc(func(i []int64) int64 { return i[0]*2 + i[1] }, rows, 2)
	for _, tc := range []struct {
		name  string
		in    dataset.Tensor
		shape ndarray.Shape
		back  ndarray.Array // the values read back, in the feature's dtype
		warn  string        // what Warn is told of it, "" for nothing
	}{
		{"int64 label", dataset.Tensor{Dense: label}, ndarray.Shape{rows}, label, ""},
		{"float32 score", dataset.Tensor{Dense: score}, ndarray.Shape{rows}, score, ""},
		{"bytes id", dataset.Tensor{Dense: id, Bytes: true}, ndarray.Shape{rows}, id, ""},
		{"float64", dataset.Tensor{Dense: wide}, ndarray.Shape{rows},
			ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]) + 0.5 }, rows), "float64 values rounded to float32"},
		{"bool", dataset.Tensor{Dense: flag}, ndarray.Shape{rows},
			ndarray.FromFunc(func(i []int64) int64 { return 1 - i[0]%2 }, rows), "bool values written as 0 and 1"},
		{"[rows, 1]", dataset.Tensor{Dense: column}, ndarray.Shape{rows},
			ndarray.FromFunc(func(i []int64) int64 { return i[0] }, rows), "a tf.train.Example records no shape: [rows, 1] reads back as [rows]"},
		{"[rows, 2]", dataset.Tensor{Dense: pair}, ndarray.Shape{rows, 2}, pair, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Name, tc.in.Column = "t.f", "f"
			check := func(t *testing.T, file []byte, warnings []string, name string) {
				t.Helper()
				got, err := dataset.ReadTFRecord(file, "t", tfrecord.None, limits.Limits{})
				require.NoError(t, err)
				require.Len(t, got, 1)
				assert.Equal(t, "t.f", got[0].Name)
				assert.Equal(t, tc.shape, got[0].Shape())
				assert.Equal(t, ravel(tc.back), ravel(got[0].Dense))
				if tc.warn == "" {
					assert.Empty(t, warnings)
				} else {
					require.Len(t, warnings, 1)
					assert.True(t, strings.HasPrefix(warnings[0], name+": "), "%q names %s", warnings[0], name)
					assert.Contains(t, warnings[0], tc.warn)
				}
			}
			t.Run("Write", func(t *testing.T) {
				var buf bytes.Buffer
				var warnings []string
				require.NoError(t, dataset.Write(&buf, dataset.FormatTFRecord, []dataset.Tensor{tc.in},
					dataset.WriteOptions{Warn: func(s string) { warnings = append(warnings, s) }}))
				check(t, buf.Bytes(), warnings, "t.f")
			})
			t.Run("TableWriter", func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				var buf bytes.Buffer
				var warnings []string
				w, err := dataset.NewTableWriter(&buf, dataset.FormatTFRecord, dataset.WriteOptions{Warn: func(s string) { warnings = append(warnings, s) }})
				require.NoError(t, err)
				for _, half := range [][]int64{{0, 1, 2}, {3, 4, 5}} {
					in, err := tc.in.TakeRows(half)
					require.NoError(t, err)
					rec, err := dataset.Batch(mem, []dataset.Tensor{in})
					require.NoError(t, err)
					err = w.WriteRecord(rec)
					rec.Release()
					require.NoError(t, err)
				}
				require.NoError(t, w.Close())
				check(t, buf.Bytes(), warnings, "f") // a record batch's column
			})
		})
	}
}
