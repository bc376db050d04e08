package tfrecord_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// exampleRecords writes cols as Examples and returns the records.
func exampleRecords(t testing.TB, cols ...tfrecord.Column) [][]byte {
	var file bytes.Buffer
	w, err := tfrecord.NewWriter(&file, tfrecord.None)
	require.NoError(t, err)
	_, err = tfrecord.WriteExamples(w, cols)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	records, err := tfrecord.Split(file.Bytes(), tfrecord.Options{})
	require.NoError(t, err)
	return records
}

// TestParseExamplesRestoresShapes: with a feature spec, columns come back in the spec's order
// and shapes — (5, 2, 3) as (5, 2, 3), (5,) as (5,) — ragged where declared, missing values
// filled from defaults; what does not fit is an error naming the feature.
func TestParseExamplesRestoresShapes(t *testing.T) {
	img := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 30, 1)).Reshape(5, 2, 3))
	label := ndarray.Must(ndarray.FromSlice([]int64{1, 0, 1, 1, 0}, 5))
	tokens, err := ragged.FromRowSplits([]int64{7, 8, 9}, []int64{0, 2, 2, 2, 3, 3})
	require.NoError(t, err)
	records := exampleRecords(t,
		tfrecord.Column{Name: "zimg", Dense: img},
		tfrecord.Column{Name: "label", Dense: label},
		tfrecord.Column{Name: "tokens", Ragged: tokens})

	cols, err := tfrecord.ParseExamples(records, []tfrecord.Feature{
		{Name: "zimg", DType: ndarray.Float32, Shape: ndarray.Shape{2, 3}},
		{Name: "label", DType: ndarray.Int64, Shape: ndarray.Shape{}},
		{Name: "tokens", DType: ndarray.Int64, Ragged: true},
		{Name: "first", DType: ndarray.Int64, Shape: ndarray.Shape{}, Default: ndarray.Scalar[int64](-1)},
	}, limits.Limits{})
	require.NoError(t, err)
	require.Len(t, cols, 4)
	assert.Equal(t, []string{"zimg", "label", "tokens", "first"}, []string{cols[0].Name, cols[1].Name, cols[2].Name, cols[3].Name}, "the spec's order")
	assert.True(t, img.Equal(cols[0].Dense.(*ndarray.Dense[float32])), "(5, 2, 3) as written")
	assert.Equal(t, ndarray.Shape{5}, cols[1].Dense.Shape())
	assert.Equal(t, label.Ravel(), cols[1].Dense.(*ndarray.Dense[int64]).Ravel())
	assert.Equal(t, [][]int64{{0, 2, 2, 2, 3, 3}}, cols[2].Ragged.RowSplits())
	assert.Equal(t, []int64{-1, -1, -1, -1, -1}, cols[3].Dense.(*ndarray.Dense[int64]).Ravel(), "the default")

	for name, tc := range map[string]struct {
		f    tfrecord.Feature
		want string
	}{
		"wrong shape":   {tfrecord.Feature{Name: "zimg", DType: ndarray.Float32, Shape: ndarray.Shape{4}}, "record 0 has 6 values, rows of shape (4,) have 4"},
		"wrong dtype":   {tfrecord.Feature{Name: "label", DType: ndarray.Float32, Shape: ndarray.Shape{}}, "the records hold int64 values, the spec says float32"},
		"no default":    {tfrecord.Feature{Name: "tokens", DType: ndarray.Int64, Shape: ndarray.Shape{}}, "record 0 has 2 values"},
		"missing":       {tfrecord.Feature{Name: "tokens", DType: ndarray.Int64, Shape: ndarray.Shape{2}}, "record 1 has no value and the spec no default"},
		"bad default":   {tfrecord.Feature{Name: "label", DType: ndarray.Int64, Shape: ndarray.Shape{}, Default: ndarray.Scalar[float32](1)}, "a default of float32"},
		"not a feature": {tfrecord.Feature{Name: "label", DType: ndarray.Float64, Shape: ndarray.Shape{}}, "dtype float64: an Example holds int64, float32 or string"},
	} {
		_, err := tfrecord.ParseExamples(records, []tfrecord.Feature{tc.f}, limits.Limits{})
		assert.ErrorIs(t, err, tfrecord.ErrSpec, name)
		assert.ErrorContains(t, err, fmt.Sprintf("feature %q: %s", tc.f.Name, tc.want), name)
	}
}

// ParseExamples reads Examples back as a feature spec declares them, as tf.io.parse_example.
func ExampleParseExamples() {
	img := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 12, 1)).Reshape(2, 2, 3))
	var file bytes.Buffer
	w, _ := tfrecord.NewWriter(&file, tfrecord.None)
	_, _ = tfrecord.WriteExamples(w, []tfrecord.Column{{Name: "image", Dense: img}})
	_ = w.Close()
	records, _ := tfrecord.Split(file.Bytes(), tfrecord.Options{})

	cols, err := tfrecord.ParseExamples(records, []tfrecord.Feature{
		{Name: "image", DType: ndarray.Float32, Shape: ndarray.Shape{2, 3}}, // tf.io.FixedLenFeature([2, 3], tf.float32)
		{Name: "label", DType: ndarray.Int64, Shape: ndarray.Shape{}, Default: ndarray.Scalar[int64](0)},
	}, limits.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cols {
		fmt.Println(c.Name, c.Dense.DType(), c.Dense.Shape())
	}
	// Output:
	// image float32 (2, 2, 3)
	// label int64 (2,)
}
