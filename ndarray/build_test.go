package ndarray

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFull(t *testing.T) {
	f := Full(float32(2.5), 2, 3)
	assert.Equal(t, Shape{2, 3}, f.Shape())
	assert.Equal(t, []float32{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, f.Data())
	assert.Equal(t, []string{"x"}, Full("x", 1).Data())
	assert.Equal(t, true, Full(true).Get(), "no dimensions: a scalar")
	assert.Panics(t, func() { Full(int64(1), -1) })
}

// TestArangeMatchesNumPy compares with what numpy.arange gives for the same arguments.
func TestArangeMatchesNumPy(t *testing.T) {
	for _, tc := range []struct {
		numpy string
		got   func() (Array, error)
		want  string
	}{
		{"np.arange(0, 5, 1)", func() (Array, error) { return Arange[int32](0, 5, 1) }, "[0 1 2 3 4]"},
		{"np.arange(5, 0, -2)", func() (Array, error) { return Arange[int8](5, 0, -2) }, "[5 3 1]"},
		{"np.arange(0, 10, 3)", func() (Array, error) { return Arange[uint8](0, 10, 3) }, "[0 3 6 9]"},
		{"np.arange(3, 3, 1)", func() (Array, error) { return Arange[int64](3, 3, 1) }, "[]"},
		{"np.arange(0, 5, -1)", func() (Array, error) { return Arange[int64](0, 5, -1) }, "[]"},
		{"np.arange(-128, 127, 100, dtype=np.int8)", func() (Array, error) { return Arange[int8](-128, 127, 100) }, "[-128  -28   72]"},
		{"np.arange(0, 1, 0.25)", func() (Array, error) { return Arange(0, 1, 0.25) }, "[0.   0.25 0.5  0.75]"},
		{"np.arange(1, 0, -0.3)", func() (Array, error) { return Arange(1, 0, -0.3) }, "[1.  0.7 0.4 0.1]"},
		{"np.arange(0, 0.3, 0.1, dtype=np.float32)", func() (Array, error) { return Arange[float32](0, 0.3, 0.1) }, "[0.  0.1 0.2]"},
	} {
		t.Run(tc.numpy, func(t *testing.T) {
			got, err := tc.got()
			require.NoError(t, err)
			assert.Equal(t, 1, got.Rank())
			assert.Equal(t, tc.want, got.String())
		})
	}
	u, err := Arange[uint64](0, math.MaxUint64, 1<<63)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 1 << 63}, u.Data(), "a distance beyond int64")
	i, err := Arange[int64](math.MinInt64, math.MaxInt64, math.MaxInt64)
	require.NoError(t, err)
	assert.Equal(t, []int64{math.MinInt64, -1, math.MaxInt64 - 1}, i.Data())

	for name, call := range map[string]func() error{
		"a step of 0":       func() error { _, err := Arange(0.0, 1, 0); return err },
		"an infinite count": func() error { _, err := Arange(0, math.Inf(1), 1); return err },
		"NaN":               func() error { _, err := Arange(0, math.NaN(), 1); return err },
		"more than int64":   func() error { _, err := Arange[uint64](0, math.MaxUint64, 1); return err },
	} {
		assert.ErrorIs(t, call(), ErrShape, name)
	}
}

func TestFromFunc(t *testing.T) {
	var seen [][]int64
	d := FromFunc(func(i []int64) string {
		seen = append(seen, append([]int64(nil), i...))
		return fmt.Sprint(i)
	}, 2, 3)
	assert.Equal(t, []string{"[0 0]", "[0 1]", "[0 2]", "[1 0]", "[1 1]", "[1 2]"}, d.Data())
	assert.Len(t, seen, 6, "once per element, in row-major order")
	assert.Equal(t, int64(7), FromFunc(func([]int64) int64 { return 7 }).Get(), "a scalar")
	assert.Equal(t, int64(0), FromFunc(func([]int64) int8 { panic("never called") }, 3, 0).Size())
}

// TestConcatAndStackMatchNumPy compares with numpy.concatenate and numpy.stack on
// a = np.arange(6).reshape(2, 3) and b = 10 + np.arange(6).reshape(2, 3), and on views.
func TestConcatAndStackMatchNumPy(t *testing.T) {
	a := arange(func(v int64) int64 { return v }, 2, 3)
	b := arange(func(v int64) int64 { return 10 + v }, 2, 3)
	col := Must(b.Slice(All(), Range(0, 1))) // b[:, :1], a strided view
	rev := Must(b.Slice(Flip())).Transpose() // b[::-1].T
	for _, tc := range []struct {
		numpy string
		got   func() (*Dense[int64], error)
		want  string
	}{
		{"np.concatenate([a, b])", func() (*Dense[int64], error) { return Concat(0, a, b) }, "[[ 0  1  2]\n [ 3  4  5]\n [10 11 12]\n [13 14 15]]"},
		{"np.concatenate([a, b], axis=1)", func() (*Dense[int64], error) { return Concat(1, a, b) }, "[[ 0  1  2 10 11 12]\n [ 3  4  5 13 14 15]]"},
		{"np.concatenate([a, b[:, :1], a], axis=-1)", func() (*Dense[int64], error) { return Concat(-1, a, col, a) }, "[[ 0  1  2 10  0  1  2]\n [ 3  4  5 13  3  4  5]]"},
		{"np.concatenate([b[::-1].T, b[::-1].T])", func() (*Dense[int64], error) { return Concat(0, rev, rev) }, "[[13 10]\n [14 11]\n [15 12]\n [13 10]\n [14 11]\n [15 12]]"},
		{"np.concatenate([a])", func() (*Dense[int64], error) { return Concat(0, a) }, "[[0 1 2]\n [3 4 5]]"},
		{"np.stack([a, b])", func() (*Dense[int64], error) { return Stack(0, a, b) }, "[[[ 0  1  2]\n  [ 3  4  5]]\n\n [[10 11 12]\n  [13 14 15]]]"},
		{"np.stack([a, b], axis=1)", func() (*Dense[int64], error) { return Stack(1, a, b) }, "[[[ 0  1  2]\n  [10 11 12]]\n\n [[ 3  4  5]\n  [13 14 15]]]"},
		{"np.stack([a, b], axis=-1)", func() (*Dense[int64], error) { return Stack(-1, a, b) }, "[[[ 0 10]\n  [ 1 11]\n  [ 2 12]]\n\n [[ 3 13]\n  [ 4 14]\n  [ 5 15]]]"},
		{"np.stack([np.int64(1), np.int64(2)])", func() (*Dense[int64], error) { return Stack(0, Scalar[int64](1), Scalar[int64](2)) }, "[1 2]"},
	} {
		t.Run(tc.numpy, func(t *testing.T) {
			got, err := tc.got()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
			assert.True(t, got.IsContiguous())
			assert.False(t, got.SharesMemory(a) || got.SharesMemory(b), "a copy")
		})
	}
	empty, err := Concat(0, New[float32](0, 3), New[float32](2, 3), New[float32](0, 3))
	require.NoError(t, err)
	assert.Equal(t, Shape{2, 3}, empty.Shape())
	none, err := Concat(1, New[float32](4, 0), New[float32](4, 0))
	require.NoError(t, err)
	assert.Equal(t, Shape{4, 0}, none.Shape())

	for name, tc := range map[string]struct {
		err  error
		call func() error
	}{
		"no arrays":         {ErrShape, func() error { _, err := Concat[int64](0); return err }},
		"scalars":           {ErrShape, func() error { _, err := Concat(0, Scalar[int64](1), Scalar[int64](2)); return err }},
		"ranks differ":      {ErrShape, func() error { _, err := Concat(0, a, New[int64](3)); return err }},
		"other dims differ": {ErrShape, func() error { _, err := Concat(0, a, New[int64](2, 4)); return err }},
		"axis too large":    {ErrIndex, func() error { _, err := Concat(2, a, b); return err }},
		"axis too small":    {ErrIndex, func() error { _, err := Concat(-3, a, b); return err }},
		"stack no arrays":   {ErrShape, func() error { _, err := Stack[int64](0); return err }},
		"stack shapes":      {ErrShape, func() error { _, err := Stack(0, a, a.Transpose()); return err }},
		"stack axis":        {ErrIndex, func() error { _, err := Stack(3, a, b); return err }},
	} {
		assert.ErrorIs(t, tc.call(), tc.err, name)
	}
}
