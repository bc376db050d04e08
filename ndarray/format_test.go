package ndarray

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
)

func TestStringMatchesNumPy(t *testing.T) {
	i64 := func(v int64) int64 { return v }
	for _, tc := range []struct {
		numpy string // the expression whose str() NumPy 1.24 prints as want
		got   fmt.Stringer
		want  string
	}{
		{"np.arange(6).reshape(2, 3)", arange(i64, 2, 3), "[[0 1 2]\n [3 4 5]]"},
		{"np.arange(24).reshape(2, 3, 4) - 5", arange(func(v int64) int64 { return v - 5 }, 2, 3, 4),
			"[[[-5 -4 -3 -2]\n  [-1  0  1  2]\n  [ 3  4  5  6]]\n\n [[ 7  8  9 10]\n  [11 12 13 14]\n  [15 16 17 18]]]"},
		{"np.arange(2000)", arange(i64, 2000), "[   0    1    2 ... 1997 1998 1999]"},
		{"np.arange(1600).reshape(40, 40)", arange(i64, 40, 40),
			"[[   0    1    2 ...   37   38   39]\n [  40   41   42 ...   77   78   79]\n [  80   81   82 ...  117  118  119]\n ...\n [1480 1481 1482 ... 1517 1518 1519]\n [1520 1521 1522 ... 1557 1558 1559]\n [1560 1561 1562 ... 1597 1598 1599]]"},
		{"np.array([0.5, 1, 2.25])", Must(FromSlice([]float64{0.5, 1, 2.25}, 3)), "[0.5  1.   2.25]"},
		{"np.array([1e9, 1])", Must(FromSlice([]float64{1e9, 1}, 2)), "[1.e+09 1.e+00]"},
		{"np.array([[0.001, 1], [2, 3]])", Must(FromSlice([]float64{0.001, 1, 2, 3}, 2, 2)), "[[1.e-03 1.e+00]\n [2.e+00 3.e+00]]"},
		{"np.arange(6, dtype=np.float32).reshape(3, 2) / 4", arange(func(v int64) float32 { return float32(v) / 4 }, 3, 2),
			"[[0.   0.25]\n [0.5  0.75]\n [1.   1.25]]"},
		{"np.float16 like float32", arange(func(v int64) float16.Num { return float16.New(float32(v) / 4) }, 3, 2),
			"[[0.   0.25]\n [0.5  0.75]\n [1.   1.25]]"},
		{"np.array([0.1, 6e-8], dtype=np.float16)", Must(FromSlice([]float16.Num{halfFromFloat64(0.1), halfFromFloat64(6e-8)}, 2)), "[1.e-01 6.e-08]"},
		{"np.array([0.1, 0.2, 1.5], dtype=np.float16)", Must(FromSlice([]float16.Num{halfFromFloat64(0.1), halfFromFloat64(0.2), halfFromFloat64(1.5)}, 3)), "[0.1 0.2 1.5]"},
		{"np.array([65504, 3.14], dtype=np.float16)", Must(FromSlice([]float16.Num{halfFromFloat64(65504), halfFromFloat64(3.14)}, 2)), "[6.55e+04 3.14e+00]"},
		{"np.array([0.10000000000000009, 1e-9 + 1])", Must(FromSlice([]float64{0.10000000000000009, 1e-9 + 1}, 2)), "[0.1 1. ]"},
		{"np.array([1.123456789012, 2.0])", Must(FromSlice([]float64{1.123456789012, 2}, 2)), "[1.12345679 2.        ]"},
		{"np.array([1e-5, 1.123456789012])", Must(FromSlice([]float64{1e-5, 1.123456789012}, 2)), "[1.00000000e-05 1.12345679e+00]"},
		{"np.zeros((2, 0))", New[float64](2, 0), "[]"},
		{"np.array(7)", Scalar(int32(7)), "7"},
	} {
		t.Run(tc.numpy, func(t *testing.T) { assert.Equal(t, tc.want, tc.got.String()) })
	}
}

func TestStringGoSpellings(t *testing.T) {
	assert.Equal(t, "[ true false]", Must(FromSlice([]bool{true, false}, 2)).String())
	assert.Equal(t, `["a" "b c"]`, Must(FromSlice([]string{"a", "b c"}, 2)).String())
	nan := math.NaN()
	assert.Equal(t, "[  1.  NaN +Inf]", Must(FromSlice([]float64{1, nan, math.Inf(1)}, 3)).String())
	assert.Equal(t, "[  -Inf 1.e-09 1.e+00]", Must(FromSlice([]float64{math.Inf(-1), 1e-9, 1}, 3)).String())
}

func TestFormatVerbs(t *testing.T) {
	a := Must(FromSlice([]int32{10, 255, -3, 4}, 2, 2))
	assert.Equal(t, "[[ a ff]\n [-3  4]]", fmt.Sprintf("%x", a))
	assert.Equal(t, "[[ +10 +255]\n [  -3   +4]]", fmt.Sprintf("%+d", a))
	assert.Equal(t, "[[   10   255]\n [   -3     4]]", fmt.Sprintf("%5d", a))
	h := Must(FromSlice([]float16.Num{float16.New(0.5), float16.New(2)}, 2))
	assert.Equal(t, "[0.500 2.000]", fmt.Sprintf("%.3f", h))
	assert.Equal(t, "[]", fmt.Sprintf("%x", New[int8](0)))
}
