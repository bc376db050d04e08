package ragged_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// TestTake: rows in any order, repeated, of one and two ragged levels, int32 splits kept;
// out of range refused.
func TestTake(t *testing.T) {
	a, err := ragged.FromRowSplits([]float32{1, 2, 3, 4, 5, 6}, []int64{0, 2, 2, 3, 5}, []int64{0, 1, 3, 3, 4, 6})
	require.NoError(t, err)
	got, err := ragged.Take(a, []int64{3, 0, 3, 1})
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 2, 4, 6, 6}, {0, 1, 3, 4, 6, 7, 9}}, got.RowSplits())
	assert.Equal(t, []float32{4, 5, 6, 1, 2, 3, 4, 5, 6}, got.FlatValues())
	for i, r := range []int64{3, 0, 3, 1} {
		assert.Equal(t, a.Row(r).String(), got.Row(int64(i)).String())
	}

	b, err := ragged.Make([]int32{1, 2, 3, 4, 5, 6}, ndarray.Shape{2}, ragged.RowSplits32([]int32{0, 1, 3}))
	require.NoError(t, err)
	gb, err := ragged.Take(b, []int64{1, 1, 0})
	require.NoError(t, err)
	assert.Equal(t, ndarray.Int32, gb.SplitDType())
	assert.Equal(t, []int32{3, 4, 5, 6, 3, 4, 5, 6, 1, 2}, gb.FlatValues())
	any, err := ragged.TakeAny(b, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(0), any.NumRows())

	_, err = ragged.Take(b, []int64{2})
	require.ErrorIs(t, err, ndarray.ErrShape)
}
