package sparse_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// TestSliceMatchesDense checks COO.Slice against Dense.Slice — the oracle whose rules are
// NumPy's — for random index lists, views of views included.
func TestSliceMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randomIndex := func(n int64) ndarray.Index {
		switch rng.IntN(10) {
		case 0:
			if n == 0 {
				return ndarray.All()
			}
			return ndarray.At(rng.Int64N(n) - rng.Int64N(2)*n)
		case 1:
			return ndarray.All()
		case 2:
			return ndarray.Range(rng.Int64N(n+1), rng.Int64N(n+2))
		case 3:
			return ndarray.RangeStep(rng.Int64N(n+1)-1, rng.Int64N(n+1)-n, -1-rng.Int64N(2))
		case 4:
			return ndarray.Even()
		case 5:
			return ndarray.Odd()
		case 6:
			return ndarray.Mod(1 + rng.Int64N(3))
		case 7:
			if n == 0 {
				return ndarray.All()
			}
			return ndarray.Incl(rng.Int64N(n), rng.Int64N(n), rng.Int64N(n))
		case 8:
			if n == 0 {
				return ndarray.All()
			}
			return ndarray.Excl(rng.Int64N(n))
		}
		return ndarray.NewAxis()
	}
	randomIndices := func(shape ndarray.Shape) []ndarray.Index {
		var idx []ndarray.Index
		for _, n := range shape {
			x := randomIndex(n)
			if rng.IntN(8) == 0 {
				idx = append(idx, ndarray.NewAxis())
			}
			idx = append(idx, x)
			if isNewAxis(x) {
				idx = append(idx, randomIndex(n))
			}
		}
		if len(idx) > 1 && rng.IntN(4) == 0 {
			idx = append([]ndarray.Index{ndarray.Ellipsis()}, idx[len(idx)/2+1:]...)
		}
		return idx
	}
	for trial := range 400 {
		d := randomDense[int32](rng, 1+trial%4, 0.4)
		c := sparse.FromDense(d)
		dv, cv := d, c
		for depth := range 2 {
			idx := randomIndices(dv.Shape())
			want, errD := dv.Slice(idx...)
			got, errC := cv.Slice(idx...)
			what := fmt.Sprintf("trial %d depth %d: shape %v Slice%v", trial, depth, dv.Shape(), idx)
			if errD != nil {
				require.Error(t, errC, what)
				require.ErrorIs(t, errC, ndarray.ErrIndex, what)
				break
			}
			require.NoError(t, errC, what)
			require.Equal(t, want.Shape(), got.Shape(), what)
			require.True(t, want.Equal(dense(got.ToDense())), "%s\nwant %v\ngot  %v", what, want, dense(got.ToDense()))
			require.True(t, sparse.Equal[int32](want, got), what)
			if want.Size() > 0 {
				require.Equal(t, want.SharesMemory(dv), got.IsView(), "%s: a view exactly where Dense gives one", what)
			}
			if want.Size() > 0 {
				idx := make([]int64, want.Rank())
				for i, n := range want.Shape() {
					idx[i] = rng.Int64N(n)
				}
				require.Equal(t, want.Get(idx...), got.Get(idx...), what)
			}
			dv, cv = want, got
		}
	}
}

func isNewAxis(x ndarray.Index) bool { return x.String() == ndarray.NewAxis().String() }

func TestSliceViewWritesThrough(t *testing.T) {
	c := sparse.NewCOO[float64](4, 5, 6)
	c.Set(1, 1, 2, 3)
	c.Set(2, 3, 2, 5)
	// nd4j's sparse view: dimension 1 fixed at 2 (hidden), offsets on the others.
	v, err := c.Slice(ndarray.Range(1, 4), ndarray.At(2), ndarray.NewAxis(), ndarray.RangeStep(1, 6, 2))
	require.NoError(t, err)
	assert.True(t, v.IsView())
	assert.Equal(t, ndarray.Shape{3, 1, 3}, v.Shape())
	assert.EqualValues(t, 2, v.NNZ())
	assert.Equal(t, 1.0, v.Get(0, 0, 1))
	assert.Equal(t, 2.0, v.Get(2, 0, 2))
	v.Set(7, 1, 0, 0) // array coordinates (2, 2, 1)
	assert.Equal(t, 7.0, c.Get(2, 2, 1))
	v.Set(8, 0, 0, 1) // an update of (1, 2, 3)
	assert.Equal(t, 8.0, c.Get(1, 2, 3))
	assert.EqualValues(t, 3, c.NNZ())
	assert.False(t, c.IsCanonical())
	c.Canonicalize()
	assert.Equal(t, 7.0, v.Get(1, 0, 0), "the view survives canonicalization of its array")

	copied, err := c.Slice(ndarray.Incl(3, 1, 2), ndarray.At(2))
	require.NoError(t, err)
	assert.False(t, copied.IsView())
	assert.True(t, copied.IsCanonical())
	assert.Equal(t, 2.0, copied.Get(0, 5))
	assert.Equal(t, 8.0, copied.Get(1, 3))
	assert.Equal(t, 7.0, copied.Get(2, 1))
	copied.Set(9, 0, 0)
	assert.Equal(t, 0.0, c.Get(3, 2, 0), "a copy does not write through")

	ro, err := c.AsReadOnly().Slice(ndarray.At(0))
	require.NoError(t, err)
	assert.Panics(t, func() { ro.Set(1, 0, 0) })
	_, err = c.Slice(ndarray.At(4))
	assert.ErrorIs(t, err, ndarray.ErrIndex)

	csr, err := sparse.FromDense(ndarray.Must(ndarray.FromSlice([]int32{0, 1, 2, 0}, 2, 2))).ToCSR()
	require.NoError(t, err)
	row, err := csr.Slice(ndarray.At(1))
	require.NoError(t, err)
	assert.Equal(t, []int32{2, 0}, dense(row.ToDense()).Data())
}
