package dataset_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
