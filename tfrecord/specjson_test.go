package tfrecord_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// TestReadSpec: a JSON feature spec, as an object (features in its key order, as a Python
// dict of tf.io specs) or an array of named features, reads as the []Feature ParseExamples
// takes; what it cannot mean is an error wrapping ErrSpec that names the feature.
func TestReadSpec(t *testing.T) {
	want := []tfrecord.Feature{
		{Name: "zimg", DType: ndarray.Float32, Shape: ndarray.Shape{2, 3}},
		{Name: "label", DType: ndarray.Int64, Shape: ndarray.Shape{}, Default: ndarray.Must(ndarray.FromSlice([]int64{-1}, 1))},
		{Name: "tokens", DType: ndarray.Int64, Ragged: true},
		{Name: "pair", DType: ndarray.String, Shape: ndarray.Shape{2}, Default: ndarray.Must(ndarray.FromSlice([]string{"a", "b"}, 2))},
	}
	for name, text := range map[string]string{
		"object": `{"zimg": {"dtype": "float32", "shape": [2, 3]}, "label": {"dtype": "int64", "shape": [], "default": -1},
		            "tokens": {"dtype": "int64", "ragged": true}, "pair": {"dtype": "string", "shape": [2], "default": ["a", "b"]}}`,
		"array": `[{"name": "zimg", "dtype": "float32", "shape": [2, 3]}, {"name": "label", "dtype": "int64", "shape": [], "default": [-1]},
		           {"name": "tokens", "dtype": "int64", "ragged": true}, {"name": "pair", "dtype": "bytes", "shape": [2], "default": ["a", "b"]}]`,
	} {
		spec, err := tfrecord.ReadSpec(strings.NewReader(text))
		require.NoError(t, err, name)
		assert.Equal(t, want, spec, name)
	}

	for text, words := range map[string]string{
		`{"x": {"dtype": "float64", "shape": []}}`:                                     `feature "x": dtype "float64": an Example holds int64, float32 or string`,
		`{"x": {"dtype": "int64"}}`:                                                    `feature "x": a fixed-length feature needs a shape`,
		`{"x": {"dtype": "int64", "shape": [-1]}}`:                                     `feature "x": shape [-1]`,
		`{"x": {"dtype": "int64", "ragged": true, "shape": [2]}}`:                      `feature "x": a ragged feature has no shape or default`,
		`{"x": {"dtype": "int64", "shape": [3], "default": [1, 2]}}`:                   `feature "x": default of 2 values for rows of 3`,
		`{"x": {"dtype": "int64", "shape": [], "default": "one"}}`:                     `feature "x": default "one": not int64 values`,
		`{"x": {"dtype": "int64", "shape": [], "default": []}}`:                        `feature "x": default []: no value`,
		`{"x": {"dtype": "int64", "shape": []}, "x": {"dtype": "int64", "shape": []}}`: `feature "x" named twice`,
		`{"x": {"dtype": "int64", "shape": [], "size": 3}}`:                            `unknown field "size"`,
		`[{"dtype": "int64", "shape": []}]`:                                            `a feature without a name`,
		`{}`:                                                                           `a feature spec of no feature`,
		`{"x": {"dtype": "int64", "shape": []}} {}`:                                    `more after its end`,
		`"x"`:    `a JSON object of features or an array of them`,
		`{"x": `: `JSON: `,
		``:       `JSON: EOF: tfrecord: feature spec`,
		`{"x": {"dtype": "float32", "shape": [], "default": 1e99}}`:       `feature "x": default 1e99: not float32 values`,
		`{"x": {"dtype": "int64", "shape": [4294967296, 4294967296, 4]}}`: `feature "x": shape`,
	} {
		_, err := tfrecord.ReadSpec(strings.NewReader(text))
		require.ErrorIs(t, err, tfrecord.ErrSpec, text)
		assert.Contains(t, err.Error(), words, text)
	}
	_, err := tfrecord.ReadSpec(strings.NewReader(`{"x": "` + strings.Repeat("y", 1<<20) + `"}`))
	require.ErrorIs(t, err, tfrecord.ErrSpec)
	assert.Contains(t, err.Error(), "a feature spec of more than 1048576 bytes")
}

// TestReadSpecParses: a spec read from JSON parses Examples as the same spec built in Go.
func TestReadSpecParses(t *testing.T) {
	tokens, err := ragged.FromRowSplits([]int64{7, 8, 9}, []int64{0, 2, 2, 3})
	require.NoError(t, err)
	records := exampleRecords(t,
		tfrecord.Column{Name: "img", Dense: ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 12, 1)).Reshape(3, 2, 2))},
		tfrecord.Column{Name: "tokens", Ragged: tokens})
	spec, err := tfrecord.ReadSpec(strings.NewReader(`{"tokens": {"dtype": "int64", "ragged": true}, "img": {"dtype": "float32", "shape": [4]},
		"missing": {"dtype": "int64", "shape": [], "default": 5}}`))
	require.NoError(t, err)
	cols, err := tfrecord.ParseExamples(records, spec, limits.Limits{})
	require.NoError(t, err)
	require.Len(t, cols, 3)
	assert.Equal(t, [][]int64{{0, 2, 2, 3}}, cols[0].Ragged.RowSplits())
	assert.Equal(t, ndarray.Shape{3, 4}, cols[1].Dense.Shape())
	assert.Equal(t, []int64{5, 5, 5}, cols[2].Dense.(*ndarray.Dense[int64]).Ravel())
}

// FuzzReadSpec reads arbitrary bytes as a JSON feature spec: a spec, or an error wrapping
// ErrSpec; never a panic; a spec read parses an Example without a panic.
func FuzzReadSpec(f *testing.F) {
	f.Add([]byte(`{"zimg": {"dtype": "float32", "shape": [2, 3]}, "label": {"dtype": "int64", "shape": [], "default": -1}}`))
	f.Add([]byte(`[{"name": "t", "dtype": "int64", "ragged": true}, {"name": "s", "dtype": "string", "shape": [2], "default": ["a", "b"]}]`))
	f.Add([]byte(`{"x": {"dtype": "int64", "shape": [4294967296, 4294967296, 4]}}`))
	records := exampleRecords(f,
		tfrecord.Column{Name: "zimg", Dense: ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 12, 1)).Reshape(2, 2, 3))},
		tfrecord.Column{Name: "label", Dense: ndarray.Must(ndarray.FromSlice([]int64{1, 2}, 2))})
	f.Fuzz(func(t *testing.T, b []byte) {
		spec, err := tfrecord.ReadSpec(strings.NewReader(string(b)))
		if err != nil {
			if !errors.Is(err, tfrecord.ErrSpec) {
				t.Fatalf("an error without ErrSpec: %v", err)
			}
			return
		}
		_, _ = tfrecord.ParseExamples(records, spec, limits.Limits{MaxElements: 1 << 20, MaxCopySize: 1 << 24})
	})
}

// TestSpecBoundsWhatDefaultsFill: a spec whose defaults would fill more values than the limits
// allow is refused before anything is allocated.
func TestSpecBoundsWhatDefaultsFill(t *testing.T) {
	records := exampleRecords(t, tfrecord.Column{Name: "label", Dense: ndarray.Must(ndarray.FromSlice([]int64{1, 2}, 2))})
	spec, err := tfrecord.ReadSpec(strings.NewReader(`{"x": {"dtype": "int64", "shape": [1000000, 1000000], "default": 1}}`))
	require.NoError(t, err)
	_, err = tfrecord.ParseExamples(records, spec, limits.Limits{})
	require.ErrorIs(t, err, limits.ErrExceeded)
	assert.Contains(t, err.Error(), `feature "x": 2 records of rows of shape (1000000, 1000000): more than`)
}
