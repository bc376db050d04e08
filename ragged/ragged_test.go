package ragged_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// The examples of TensorFlow's RaggedTensor docstrings.
func TestTensorFlowDocstringCases(t *testing.T) {
	values := []int32{3, 1, 4, 1, 5, 9, 2, 6}
	tests := []struct {
		name       string
		parts      []ragged.Partition
		want       string
		shape      ndarray.Shape
		raggedRank int
		splits     [][]int64
	}{
		{
			name:  "from_row_splits",
			parts: []ragged.Partition{ragged.RowSplits([]int64{0, 4, 4, 7, 8, 8})},
			want:  "[[3, 1, 4, 1], [], [5, 9, 2], [6], []]", shape: ndarray.Shape{5, -1}, raggedRank: 1,
			splits: [][]int64{{0, 4, 4, 7, 8, 8}},
		},
		{
			name:  "from_nested_row_splits",
			parts: []ragged.Partition{ragged.RowSplits([]int64{0, 3, 3, 5}), ragged.RowSplits([]int64{0, 4, 4, 7, 8, 8})},
			want:  "[[[3, 1, 4, 1], [], [5, 9, 2]], [], [[6], []]]", shape: ndarray.Shape{3, -1, -1}, raggedRank: 2,
			splits: [][]int64{{0, 3, 3, 5}, {0, 4, 4, 7, 8, 8}},
		},
		{
			name:  "from_uniform_row_length",
			parts: []ragged.Partition{ragged.UniformRowLength(2)},
			want:  "[[3, 1], [4, 1], [5, 9], [2, 6]]", shape: ndarray.Shape{4, 2}, raggedRank: 1,
			splits: [][]int64{{0, 2, 4, 6, 8}},
		},
		{
			name:  "uniform over uniform",
			parts: []ragged.Partition{ragged.UniformRowLength(2), ragged.UniformRowLength(2)},
			want:  "[[[3, 1], [4, 1]], [[5, 9], [2, 6]]]", shape: ndarray.Shape{2, 2, 2}, raggedRank: 2,
			splits: [][]int64{{0, 2, 4}, {0, 2, 4, 6, 8}},
		},
		{
			name:  "uniform over ragged",
			parts: []ragged.Partition{ragged.UniformRowLength(2), ragged.RowSplits([]int64{0, 4, 4, 7, 8})},
			want:  "[[[3, 1, 4, 1], []], [[5, 9, 2], [6]]]", shape: ndarray.Shape{2, 2, -1}, raggedRank: 2,
			splits: [][]int64{{0, 2, 4}, {0, 4, 4, 7, 8}},
		},
		{
			name:  "from_row_splits int32",
			parts: []ragged.Partition{ragged.RowSplits32([]int32{0, 4, 4, 7, 8, 8})},
			want:  "[[3, 1, 4, 1], [], [5, 9, 2], [6], []]", shape: ndarray.Shape{5, -1}, raggedRank: 1,
			splits: [][]int64{{0, 4, 4, 7, 8, 8}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ragged.Make(values, nil, tt.parts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, a.String())
			assert.Equal(t, tt.shape, a.Shape())
			assert.Equal(t, tt.raggedRank, a.RaggedRank())
			assert.Equal(t, tt.splits, a.RowSplits())
			assert.Equal(t, int64(8), a.NumValues())
			assert.Equal(t, values, slices.Collect(a.Values()))
			assert.Equal(t, ndarray.Int32, a.DType())
		})
	}
}

func TestValidationRules(t *testing.T) {
	values := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	tests := []struct {
		name  string
		inner ndarray.Shape
		parts []ragged.Partition
		level int
		rule  ragged.Rule
	}{
		{"empty splits", nil, []ragged.Partition{ragged.RowSplits([]int64{})}, 0, ragged.RuleNonEmpty},
		{"nil splits", nil, []ragged.Partition{ragged.RowSplits(nil)}, 0, ragged.RuleNonEmpty},
		{"first not zero", nil, []ragged.Partition{ragged.RowSplits([]int64{1, 4, 8})}, 0, ragged.RuleStartsAtZero},
		{"first negative", nil, []ragged.Partition{ragged.RowSplits([]int64{-1, 4, 8})}, 0, ragged.RuleStartsAtZero},
		{"decreasing", nil, []ragged.Partition{ragged.RowSplits([]int64{0, 5, 4, 8})}, 0, ragged.RuleNonDecreasing},
		{"last short", nil, []ragged.Partition{ragged.RowSplits([]int64{0, 4, 7})}, 0, ragged.RuleEndsAtNVals},
		{"last past values", nil, []ragged.Partition{ragged.RowSplits([]int64{0, 4, 9})}, 0, ragged.RuleEndsAtNVals},
		{"outer level ends wrong", nil, []ragged.Partition{ragged.RowSplits([]int64{0, 3, 4}), ragged.RowSplits([]int64{0, 4, 4, 7, 8, 8})}, 0, ragged.RuleEndsAtNVals},
		{"inner level decreasing", nil, []ragged.Partition{ragged.RowSplits([]int64{0, 3, 3, 5}), ragged.RowSplits([]int64{0, 4, 3, 7, 8, 8})}, 1, ragged.RuleNonDecreasing},
		{"mixed split dtypes", nil, []ragged.Partition{ragged.RowSplits([]int64{0, 3, 3, 5}), ragged.RowSplits32([]int32{0, 4, 4, 7, 8, 8})}, 1, ragged.RuleOneDType},
		{"negative uniform", nil, []ragged.Partition{ragged.UniformRowLength(-2)}, 0, ragged.RuleUniformLength},
		{"uniform not dividing", nil, []ragged.Partition{ragged.UniformRowLength(3)}, 0, ragged.RuleUniformLength},
		{"zero uniform over values", nil, []ragged.Partition{ragged.UniformRowLength(0)}, 0, ragged.RuleUniformLength},
		{"inner shape not dividing", ndarray.Shape{3}, []ragged.Partition{ragged.RowSplits([]int64{0, 2})}, -1, ragged.RuleInnerShape},
		{"values for empty inner shape", ndarray.Shape{0}, []ragged.Partition{ragged.RowSplits([]int64{0, 2})}, -1, ragged.RuleInnerShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ragged.Make(values, tt.inner, tt.parts...)
			require.Error(t, err)
			assert.Nil(t, a)
			assert.ErrorIs(t, err, ragged.ErrInvalid)
			var ve *ragged.ValidationError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Equal(t, tt.level, ve.Level, "%v", err)
			assert.Equal(t, tt.rule, ve.Rule, "%v", err)
			assert.Contains(t, err.Error(), string(tt.rule))
		})
	}
}

func TestMakeInnerShape(t *testing.T) {
	// Rows of 2-vectors: [[[1 2] [3 4]] [] [[5 6]]].
	a, err := ragged.Make([]int64{1, 2, 3, 4, 5, 6}, ndarray.Shape{2}, ragged.RowSplits([]int64{0, 2, 2, 3}))
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{3, -1, 2}, a.Shape())
	assert.Equal(t, int64(3), a.NumValues())
	assert.Equal(t, int64(6), a.Get(2, 0, 1))
	assert.Equal(t, "[[[1, 2], [3, 4]], [], [[5, 6]]]", a.String())
	d, err := a.ToDense(-1)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{3, 2, 2}, d.Shape())
	assert.Equal(t, []int64{1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1}, d.Data())

	// An empty inner dimension: rows count from the splits.
	e, err := ragged.Make([]int64{}, ndarray.Shape{0}, ragged.RowSplits([]int64{0, 2, 5}))
	require.NoError(t, err)
	assert.Equal(t, int64(5), e.NumValues())
	assert.Equal(t, []int64{2, 3}, e.RowLengths())
}

// TestRFCExample is the ragged example of the TensorFlow Java Tensor I/O RFC.
func TestRFCExample(t *testing.T) {
	a := ragged.New[float32](3, -1)
	a.Set(10, 0, 0)
	a.Set(20, 0, 1)
	a.Set(30, 0, 2)
	a.Set(40, 1, 0)
	a.Set(50, 2, 0)
	a.Set(60, 2, 1)
	assert.Equal(t, float32(20), a.Get(0, 1))
	assert.Equal(t, float32(40), a.Get(1, 0))
	assert.PanicsWithValue(t, "ragged: Get index [1 1] out of range: dimension 1 has length 1 there (shape (3, -1))", func() { a.Get(1, 1) })
	var rows [][]float32
	for _, row := range a.Elements() {
		rows = append(rows, slices.Collect(row.Values()))
	}
	assert.Equal(t, [][]float32{{10, 20, 30}, {40}, {50, 60}}, rows)
	assert.Equal(t, [][]int64{{0, 3, 4, 6}}, a.RowSplits())
	assert.Equal(t, ndarray.Int64, a.SplitDType())
	// A known first dimension does not grow.
	assert.Panics(t, func() { a.Set(1, 3, 0) })
}

// nested is a reference ragged array of rank 3 with a uniform inner dimension of 2: rows of
// rows of pairs.
type nested [][][][2]int32

// TestSetAgainstNestedSlices fills arrays by Set in random order, growing rows anywhere, and
// compares every element and the row splits with Go slices filled the same way.
func TestSetAgainstNestedSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		a := ragged.New[int32](-1, -1, -1, 2)
		var ref nested
		for range rng.IntN(60) {
			i, j, k, m := rng.Int64N(5), rng.Int64N(4), rng.Int64N(4), rng.Int64N(2)
			v := rng.Int32()
			a.Set(v, i, j, k, m)
			for int64(len(ref)) <= i {
				ref = append(ref, nil)
			}
			for int64(len(ref[i])) <= j {
				ref[i] = append(ref[i], nil)
			}
			for int64(len(ref[i][j])) <= k {
				ref[i][j] = append(ref[i][j], [2]int32{})
			}
			ref[i][j][k][m] = v
		}
		require.Equal(t, int64(len(ref)), a.NumRows(), "trial %d", trial)
		var splits0, splits1 = []int64{0}, []int64{0}
		var flat []int32
		for i, r := range ref {
			splits0 = append(splits0, splits0[len(splits0)-1]+int64(len(r)))
			for j, rr := range r {
				splits1 = append(splits1, splits1[len(splits1)-1]+int64(len(rr)))
				for k, pair := range rr {
					flat = append(flat, pair[0], pair[1])
					for m := range 2 {
						require.Equal(t, pair[m], a.Get(int64(i), int64(j), int64(k), int64(m)))
					}
				}
			}
		}
		if len(ref) == 0 {
			continue
		}
		assert.Equal(t, [][]int64{splits0, splits1}, a.RowSplits(), "trial %d", trial)
		assert.Equal(t, append([]int32{}, flat...), append([]int32{}, a.FlatValues()...))
		// The same array through Make from its parts, and through a dense round trip.
		b, err := ragged.Make(flat, ndarray.Shape{2}, ragged.RowSplits(splits0), ragged.RowSplits(splits1))
		require.NoError(t, err)
		assert.True(t, ragged.Equal(a, b))
		c := a.Clone()
		assert.True(t, ragged.Equal(a, c))
	}
}

func TestUniformPartitionGrows(t *testing.T) {
	// Each row holds exactly 2 ragged sub-rows.
	a := ragged.New[string](-1, 2, -1)
	a.Set("a", 1, 1, 2)
	a.Set("b", 0, 0, 0)
	assert.Equal(t, ndarray.Shape{2, 2, -1}, a.Shape())
	assert.Equal(t, `[[["b"], []], [[], ["", "", "a"]]]`, a.String())
	assert.Equal(t, [][]int64{{0, 2, 4}, {0, 1, 1, 1, 4}}, a.RowSplits())
	assert.Panics(t, func() { a.Set("c", 0, 2, 0) }, "a uniform dimension does not grow")
}

func TestRowViews(t *testing.T) {
	a, err := ragged.FromRowSplits([]int32{3, 1, 4, 1, 5, 9, 2, 6}, []int64{0, 3, 3, 5}, []int64{0, 4, 4, 7, 8, 8})
	require.NoError(t, err)
	row := a.Row(2)
	assert.Equal(t, ndarray.Shape{2, -1}, row.Shape())
	assert.Equal(t, "[[6], []]", row.String())
	assert.Equal(t, [][]int64{{0, 1, 1}}, row.RowSplits(), "rebased")
	assert.Equal(t, []int32{6}, row.FlatValues())
	assert.Equal(t, []int32{5, 9, 2}, a.Row(0).RowValues(2))
	assert.Equal(t, []int32{3, 1, 4, 1, 5, 9, 2}, a.RowValues(0))
	assert.Empty(t, a.RowValues(1))

	row0 := a.Row(0)
	row0.Set(42, 2, 1) // writes through
	assert.Equal(t, int32(42), a.Get(0, 2, 1))
	assert.Panics(t, func() { row0.Set(1, 1, 0) }, "a view does not grow")
	assert.Panics(t, func() { a.Row(3) })
	assert.Panics(t, func() { a.Row(0).Row(0).Row(0) }, "rank 1")

	ro := a.AsReadOnly()
	assert.True(t, ro.ReadOnly())
	assert.PanicsWithValue(t, "ragged: Set on a read-only array of shape (3, -1, -1)", func() { ro.Set(1, 0, 0, 0) })
	assert.True(t, ro.Row(0).ReadOnly())

	// Rows of an array without partitions are rows of its inner shape.
	m, err := ragged.Make([]int32{1, 2, 3, 4, 5, 6}, ndarray.Shape{3})
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{2, 3}, m.Shape())
	assert.Equal(t, 0, m.RaggedRank())
	assert.Equal(t, []int32{4, 5, 6}, slices.Collect(m.Row(1).Values()))
	assert.Equal(t, int32(6), m.Row(1).Get(2))
	assert.Nil(t, m.RowLengths())
}

func TestDenseRoundTrip(t *testing.T) {
	d := ndarray.Must(ndarray.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 3, 2, 2))
	a, err := ragged.FromDense(d, []int64{2, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, "[[[1, 2], [3, 4]], [], [[9, 10]]]", a.String())
	assert.Equal(t, []int64{2, 0, 1}, a.RowLengths())
	back, err := a.ToDense(0)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{3, 2, 2}, back.Shape())
	assert.Equal(t, []float32{1, 2, 3, 4, 0, 0, 0, 0, 9, 10, 0, 0}, back.Data())

	full, err := ragged.FromDense(d, nil)
	require.NoError(t, err)
	again, err := full.ToDense(0)
	require.NoError(t, err)
	assert.True(t, again.Equal(d))

	// A transposed (non-contiguous) source.
	tr, err := ragged.FromDense(ndarray.Must(ndarray.FromSlice([]int64{1, 2, 3, 4, 5, 6}, 2, 3)).Transpose(), []int64{1, 2, 2})
	require.NoError(t, err)
	assert.Equal(t, "[[1], [2, 5], [3, 6]]", tr.String())

	for _, bad := range [][]int64{{1}, {3, 0, 0}, {-1, 0, 0}} {
		_, err := ragged.FromDense(d, bad)
		assert.ErrorIs(t, err, ndarray.ErrShape, "%v", bad)
	}
	_, err = ragged.FromDense(ndarray.New[float32](4), nil)
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

func TestConcat(t *testing.T) {
	a, err := ragged.FromRowSplits([]int32{1, 2, 3}, []int64{0, 2, 3})
	require.NoError(t, err)
	b, err := ragged.FromRowSplits([]int32{4, 5, 6, 7}, []int64{0, 0, 4})
	require.NoError(t, err)
	flat, err := ragged.Make([]int32{9}, nil)
	require.NoError(t, err)
	c, err := ragged.Concat(a, flat, b)
	require.ErrorIs(t, err, ndarray.ErrShape, "rank 1 with rank 2")
	assert.Nil(t, c)
	c, err = ragged.Concat(a, b, a.Row(1), a)
	require.Error(t, err)
	assert.Nil(t, c)
	c, err = ragged.Concat(a, b, a)
	require.NoError(t, err)
	assert.Equal(t, "[[1, 2], [3], [], [4, 5, 6, 7], [1, 2], [3]]", c.String())
	assert.Equal(t, [][]int64{{0, 2, 3, 3, 7, 9, 10}}, c.RowSplits())
	c.Set(8, 1, 1) // the result owns its storage and grows
	assert.Equal(t, "[[1, 2], [3, 8], [], [4, 5, 6, 7], [1, 2], [3]]", c.String())
	assert.Equal(t, "[[1, 2], [3]]", a.String(), "sources untouched")
	_, err = ragged.Concat[int32]()
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

func TestStringSummarizes(t *testing.T) {
	a := ragged.New[int8](-1, -1)
	for i := range int64(8) {
		a.Set(int8(i), i, 0)
	}
	assert.Equal(t, "[[0], [1], [2], ..., [5], [6], [7]]", a.String())
	assert.Equal(t, "[]", ragged.New[bool](-1, -1).String())
	assert.Equal(t, "[[], []]", ragged.New[bool](2, -1).String())
}

func TestPanicsOnMisuse(t *testing.T) {
	a := ragged.New[float64](2, -1, 3)
	assert.Equal(t, ndarray.Shape{2, -1, 3}, a.Shape())
	assert.Equal(t, int64(-1), a.Size())
	assert.PanicsWithValue(t, "ragged: Get with 2 indices [0 0] on an array of rank 3, shape (2, -1, 3)", func() { a.Get(0, 0) })
	assert.Panics(t, func() { a.Set(1, 0, 0) })
	assert.Panics(t, func() { a.Set(1, 0, 0, 3) }, "inner dimensions do not grow")
	assert.Panics(t, func() { a.Set(1, -1, 0, 0) })
	assert.Panics(t, func() { a.Set(1, 0, -1, 0) })
	assert.Panics(t, func() { ragged.New[float64]() })
	assert.Panics(t, func() { ragged.New[float64](2, -2) })
	a.Set(1, 1, 4, 2)
	assert.Equal(t, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, a.FlatValues())
	assert.Equal(t, []int64{0, 5}, a.RowLengths())
	assert.Equal(t, ndarray.Shape{2, 5, 3}, a.BoundingShape())
	u := ragged.New[uint16](2, 3)
	assert.Equal(t, int64(6), u.Size())
	assert.Equal(t, 0, u.RaggedRank())
}

func TestConcatAny(t *testing.T) {
	a, err := ragged.FromRowSplits([]int32{1, 2, 3}, []int64{0, 2, 3})
	require.NoError(t, err)
	c, err := ragged.ConcatAny(a, a)
	require.NoError(t, err)
	assert.Equal(t, "[[1, 2], [3], [1, 2], [3]]", c.String())
	_, err = ragged.ConcatAny(a, ragged.New[int64](1, -1))
	assert.ErrorIs(t, err, ndarray.ErrDType)
	_, err = ragged.ConcatAny()
	assert.ErrorIs(t, err, ndarray.ErrShape)
}
