package dataset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestTensorTakeRows: rows of dense tensors (numbers, strings; row-major and not) with their
// validity, in any order and repeated, as copies; rows outside, and a sparse tensor, refused.
func TestTensorTakeRows(t *testing.T) {
	d, err := ndarray.FromSlice([]int32{0, 1, 2, 3, 4, 5}, 3, 2)
	require.NoError(t, err)
	tn := Tensor{Name: "x", Dense: d, Valid: []bool{true, false, true}}
	got, err := tn.TakeRows([]int64{2, 0, 2})
	require.NoError(t, err)
	assert.Equal(t, []int32{4, 5, 0, 1, 4, 5}, got.Dense.(*ndarray.Dense[int32]).Ravel())
	assert.Equal(t, []bool{true, true, true}, got.Valid)
	got.Dense.(*ndarray.Dense[int32]).Set(9, 0, 0)
	assert.Equal(t, int32(4), d.Get(2, 0), "a copy")

	tr := Tensor{Name: "t", Dense: d.Transpose()} // 2 rows of 3, column-major
	got, err = tr.TakeRows([]int64{1})
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 3, 5}, got.Dense.(*ndarray.Dense[int32]).Ravel())

	s, err := ndarray.FromSlice([]string{"a", "b"}, 2)
	require.NoError(t, err)
	got, err = Tensor{Name: "s", Dense: s}.TakeRows([]int64{1, 1, 0})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "b", "a"}, got.Dense.(*ndarray.Dense[string]).Ravel())

	for _, rows := range [][]int64{{3}, {-1}} {
		_, err = tn.TakeRows(rows)
		require.ErrorIs(t, err, ndarray.ErrShape)
	}
}

// TestReadRowsChecksRows: rows out of order, repeated or outside the chunk are refused before
// anything is read.
func TestReadRowsChecksRows(t *testing.T) {
	d, err := ndarray.FromSlice([]float32{0, 1, 2, 3}, 4)
	require.NoError(t, err)
	src := residentSource(&File{Path: "x.npy"}, Tensor{Name: "x", Dense: d}, limits.Limits{}.WithDefaults())
	assert.Equal(t, []int64{4}, src.ChunkRows())
	got, err := src.ReadRows(t.Context(), 0, []int64{1, 3})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 3}, got.Dense.(*ndarray.Dense[float32]).Ravel())
	for _, rows := range [][]int64{{3, 1}, {1, 1}, {4}, {-1}} {
		_, err := src.ReadRows(t.Context(), 0, rows)
		require.ErrorIs(t, err, ndarray.ErrShape, "%v", rows)
	}
	_, err = src.ReadRows(t.Context(), 1, nil)
	require.ErrorIs(t, err, ndarray.ErrShape)
}
