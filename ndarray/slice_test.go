package ndarray

import (
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type sliceCase struct {
	name   string
	steps  [][]Index // one Slice call per entry, each applied to the previous result
	shape  Shape
	values []int64
	view   bool
}

type reshapeCase struct {
	name      string
	slice     []Index
	transpose bool
	to        []int64
	shape     Shape
	values    []int64
	view      bool
}

// arange returns np.arange(size).reshape(shape) converted to T by conv.
func arange[T Element](conv func(int64) T, shape ...int64) *Dense[T] {
	a := New[T](shape...)
	for i := range a.data {
		a.data[i] = conv(int64(i))
	}
	return a
}

// take22 is the index array of the Take case in sliceCases.
var take22 = func() *Dense[int64] {
	d, err := FromSlice([]int64{0, 3, -1, 1}, 2, 2)
	if err != nil {
		panic(err)
	}
	return d
}()

// assertValues checks the elements of got, in row-major order, against want.
func assertValues[T Element](t *testing.T, want []T, got *Dense[T]) {
	t.Helper()
	values := slices.Collect(got.Values())
	if len(want) == 0 {
		assert.Empty(t, values, "Values")
		return
	}
	assert.Equal(t, want, values, "Values")
}

func TestSliceMatchesNumPy(t *testing.T) {
	t.Run("int64", func(t *testing.T) { sliceTable(t, func(v int64) int64 { return v }) })
	t.Run("int8", func(t *testing.T) { sliceTable(t, func(v int64) int8 { return int8(v) }) })
	t.Run("int16", func(t *testing.T) { sliceTable(t, func(v int64) int16 { return int16(v) }) })
	t.Run("int32", func(t *testing.T) { sliceTable(t, func(v int64) int32 { return int32(v) }) })
	t.Run("uint8", func(t *testing.T) { sliceTable(t, func(v int64) uint8 { return uint8(v) }) })
	t.Run("uint16", func(t *testing.T) { sliceTable(t, func(v int64) uint16 { return uint16(v) }) })
	t.Run("uint32", func(t *testing.T) { sliceTable(t, func(v int64) uint32 { return uint32(v) }) })
	t.Run("uint64", func(t *testing.T) { sliceTable(t, func(v int64) uint64 { return uint64(v) }) })
	t.Run("float16", func(t *testing.T) { sliceTable(t, func(v int64) float16.Num { return float16.New(float32(v)) }) })
	t.Run("float32", func(t *testing.T) { sliceTable(t, func(v int64) float32 { return float32(v) }) })
	t.Run("float64", func(t *testing.T) { sliceTable(t, func(v int64) float64 { return float64(v) }) })
	t.Run("bool", func(t *testing.T) { sliceTable(t, func(v int64) bool { return v%3 == 1 }) })
	t.Run("string", func(t *testing.T) { sliceTable(t, func(v int64) string { return "s" + strconv.FormatInt(v, 10) }) })
}

func sliceTable[T Element](t *testing.T, conv func(int64) T) {
	for _, tc := range sliceCases {
		t.Run(tc.name, func(t *testing.T) {
			a := arange(conv, 3, 4, 5)
			got := a
			for _, step := range tc.steps {
				var err error
				got, err = got.Slice(step...)
				require.NoError(t, err)
			}
			want := make([]T, len(tc.values))
			for i, v := range tc.values {
				want[i] = conv(v)
			}
			assert.Equal(t, tc.shape, got.Shape())
			assert.Equal(t, tc.shape.Size(), got.Size())
			assert.Equal(t, len(tc.shape), got.Rank())
			assertValues(t, want, got)
			flat := make([]T, got.Size())
			require.NoError(t, got.CopyTo(flat))
			assert.Equal(t, want, flat, "CopyTo")
			if got.Size() == 0 {
				return
			}
			assert.Equal(t, tc.view, got.SharesMemory(a), "view or copy")
			// A write through a view is seen by the source; a copy leaves it alone.
			first := make([]int64, got.Rank())
			before := a.Clone()
			other := conv(0)
			for k := int64(1); other == got.Get(first...); k++ {
				other = conv(k)
			}
			got.Set(other, first...)
			assert.Equal(t, tc.view, !a.Equal(before), "write through the result")
		})
	}
}

func TestReshapeMatchesNumPy(t *testing.T) {
	for _, tc := range reshapeCases {
		t.Run(tc.name, func(t *testing.T) {
			b := arange(func(v int64) int64 { return v }, 4, 6)
			src := b.Transpose()
			if !tc.transpose {
				var err error
				src, err = b.Slice(tc.slice...)
				require.NoError(t, err)
			}
			before := src.Layout()
			got, err := src.Reshape(tc.to...)
			require.NoError(t, err)
			assert.Equal(t, tc.shape, got.Shape())
			assertValues(t, tc.values, got)
			assert.Equal(t, tc.view, got.SharesMemory(b), "view or copy")
			assert.Equal(t, before, src.Layout(), "the receiver is unchanged")
		})
	}
}

// Code derived with NumPy 1.24.2 by testdata/gen_slices.py; do not edit by hand.
// a is np.arange(60).reshape(3, 4, 5); take22 is [[0, 3], [-1, 1]].
var sliceCases = []sliceCase{
	{ // a[1]
		name:   "At drops the axis",
		steps:  [][]Index{{At(1)}},
		shape:  Shape{4, 5},
		values: []int64{20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39},
		view:   true,
	},
	{ // a[-1, -2]
		name:   "negative At counts from the end",
		steps:  [][]Index{{At(-1), At(-2)}},
		shape:  Shape{5},
		values: []int64{50, 51, 52, 53, 54},
		view:   true,
	},
	{ // a[2, 3, 4]
		name:   "all At gives a scalar",
		steps:  [][]Index{{At(2), At(3), At(4)}},
		shape:  Shape{},
		values: []int64{59},
		view:   true,
	},
	{ // a[:, 0]
		name:   "missing trailing indices mean All",
		steps:  [][]Index{{All(), At(0)}},
		shape:  Shape{3, 5},
		values: []int64{0, 1, 2, 3, 4, 20, 21, 22, 23, 24, 40, 41, 42, 43, 44},
		view:   true,
	},
	{ // a[1:2]
		name:   "length-1 Range keeps the axis",
		steps:  [][]Index{{Range(1, 2)}},
		shape:  Shape{1, 4, 5},
		values: []int64{20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39},
		view:   true,
	},
	{ // a[:, -3:-1]
		name:   "Range with negative bounds",
		steps:  [][]Index{{All(), Range(-3, -1)}},
		shape:  Shape{3, 2, 5},
		values: []int64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54},
		view:   true,
	},
	{ // a[2:2]
		name:   "empty Range",
		steps:  [][]Index{{Range(2, 2)}},
		shape:  Shape{0, 4, 5},
		values: []int64{},
		view:   true,
	},
	{ // a[:, 3:1]
		name:   "reversed bounds select nothing",
		steps:  [][]Index{{All(), Range(3, 1)}},
		shape:  Shape{3, 0, 5},
		values: []int64{},
		view:   true,
	},
	{ // a[1:100, -100:2]
		name:   "bounds past the end are clamped",
		steps:  [][]Index{{Range(1, 100), Range(-100, 2)}},
		shape:  Shape{2, 2, 5},
		values: []int64{20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49},
		view:   true,
	},
	{ // a[:, :, 0:5:2]
		name:   "RangeStep with a step",
		steps:  [][]Index{{All(), All(), RangeStep(0, 5, 2)}},
		shape:  Shape{3, 4, 3},
		values: []int64{0, 2, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19, 20, 22, 24, 25, 27, 29, 30, 32, 34, 35, 37, 39, 40, 42, 44, 45, 47, 49, 50, 52, 54, 55, 57, 59},
		view:   true,
	},
	{ // a[:, 3:0:-2]
		name:   "RangeStep backwards",
		steps:  [][]Index{{All(), RangeStep(3, 0, -2)}},
		shape:  Shape{3, 2, 5},
		values: []int64{15, 16, 17, 18, 19, 5, 6, 7, 8, 9, 35, 36, 37, 38, 39, 25, 26, 27, 28, 29, 55, 56, 57, 58, 59, 45, 46, 47, 48, 49},
		view:   true,
	},
	{ // a[-1:-100:-1]
		name:   "RangeStep backwards past the start",
		steps:  [][]Index{{RangeStep(-1, -100, -1)}},
		shape:  Shape{3, 4, 5},
		values: []int64{40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
		view:   true,
	},
	{ // a[..., ::3]
		name:   "Step every third",
		steps:  [][]Index{{Ellipsis(), Step(3)}},
		shape:  Shape{3, 4, 2},
		values: []int64{0, 3, 5, 8, 10, 13, 15, 18, 20, 23, 25, 28, 30, 33, 35, 38, 40, 43, 45, 48, 50, 53, 55, 58},
		view:   true,
	},
	{ // a[..., ::-2]
		name:   "Step negative",
		steps:  [][]Index{{Ellipsis(), Step(-2)}},
		shape:  Shape{3, 4, 3},
		values: []int64{4, 2, 0, 9, 7, 5, 14, 12, 10, 19, 17, 15, 24, 22, 20, 29, 27, 25, 34, 32, 30, 39, 37, 35, 44, 42, 40, 49, 47, 45, 54, 52, 50, 59, 57, 55},
		view:   true,
	},
	{ // a[1:, -2:]
		name:   "From",
		steps:  [][]Index{{From(1), From(-2)}},
		shape:  Shape{2, 2, 5},
		values: []int64{30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59},
		view:   true,
	},
	{ // a[:-1, :1]
		name:   "To",
		steps:  [][]Index{{To(-1), To(1)}},
		shape:  Shape{2, 1, 5},
		values: []int64{0, 1, 2, 3, 4, 20, 21, 22, 23, 24},
		view:   true,
	},
	{ // a[::-1]
		name:   "Flip the first axis",
		steps:  [][]Index{{Flip()}},
		shape:  Shape{3, 4, 5},
		values: []int64{40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
		view:   true,
	},
	{ // a[..., ::-1]
		name:   "Flip the last axis",
		steps:  [][]Index{{Ellipsis(), Flip()}},
		shape:  Shape{3, 4, 5},
		values: []int64{4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 14, 13, 12, 11, 10, 19, 18, 17, 16, 15, 24, 23, 22, 21, 20, 29, 28, 27, 26, 25, 34, 33, 32, 31, 30, 39, 38, 37, 36, 35, 44, 43, 42, 41, 40, 49, 48, 47, 46, 45, 54, 53, 52, 51, 50, 59, 58, 57, 56, 55},
		view:   true,
	},
	{ // a[:, ::2]
		name:   "Even",
		steps:  [][]Index{{All(), Even()}},
		shape:  Shape{3, 2, 5},
		values: []int64{0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34, 40, 41, 42, 43, 44, 50, 51, 52, 53, 54},
		view:   true,
	},
	{ // a[:, :, 1::2]
		name:   "Odd",
		steps:  [][]Index{{All(), All(), Odd()}},
		shape:  Shape{3, 4, 2},
		values: []int64{1, 3, 6, 8, 11, 13, 16, 18, 21, 23, 26, 28, 31, 33, 36, 38, 41, 43, 46, 48, 51, 53, 56, 58},
		view:   true,
	},
	{ // a[:, :, ::3]
		name:   "Mod 3",
		steps:  [][]Index{{All(), All(), Mod(3)}},
		shape:  Shape{3, 4, 2},
		values: []int64{0, 3, 5, 8, 10, 13, 15, 18, 20, 23, 25, 28, 30, 33, 35, 38, 40, 43, 45, 48, 50, 53, 55, 58},
		view:   true,
	},
	{ // a[np.newaxis]
		name:   "NewAxis in front",
		steps:  [][]Index{{NewAxis()}},
		shape:  Shape{1, 3, 4, 5},
		values: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59},
		view:   true,
	},
	{ // a[0, np.newaxis, 1]
		name:   "NewAxis in the middle with At",
		steps:  [][]Index{{At(0), NewAxis(), At(1)}},
		shape:  Shape{1, 5},
		values: []int64{5, 6, 7, 8, 9},
		view:   true,
	},
	{ // a[..., np.newaxis]
		name:   "NewAxis at the end after Ellipsis",
		steps:  [][]Index{{Ellipsis(), NewAxis()}},
		shape:  Shape{3, 4, 5, 1},
		values: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59},
		view:   true,
	},
	{ // a[1, ..., -1]
		name:   "Ellipsis in the middle",
		steps:  [][]Index{{At(1), Ellipsis(), At(-1)}},
		shape:  Shape{4},
		values: []int64{24, 29, 34, 39},
		view:   true,
	},
	{ // a[0, 1, ..., 2]
		name:   "Ellipsis standing for nothing",
		steps:  [][]Index{{At(0), At(1), Ellipsis(), At(2)}},
		shape:  Shape{},
		values: []int64{7},
		view:   true,
	},
	{ // a[:, 0, [0, 2, 4]]
		name:   "Incl evenly spaced is a view",
		steps:  [][]Index{{All(), At(0), Incl(0, 2, 4)}},
		shape:  Shape{3, 3},
		values: []int64{0, 2, 4, 20, 22, 24, 40, 42, 44},
		view:   true,
	},
	{ // a[[-1]]
		name:   "Incl single position keeps the axis",
		steps:  [][]Index{{Incl(-1)}},
		shape:  Shape{1, 4, 5},
		values: []int64{40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59},
		view:   true,
	},
	{ // a[:, [3, 0, 1]]
		name:   "Incl uneven is a copy",
		steps:  [][]Index{{All(), Incl(3, 0, 1)}},
		shape:  Shape{3, 3, 5},
		values: []int64{15, 16, 17, 18, 19, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 35, 36, 37, 38, 39, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 55, 56, 57, 58, 59, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49},
		view:   false,
	},
	{ // a[2, [1, 1]]
		name:   "Incl repeated positions is a copy",
		steps:  [][]Index{{At(2), Incl(1, 1)}},
		shape:  Shape{2, 5},
		values: []int64{45, 46, 47, 48, 49, 45, 46, 47, 48, 49},
		view:   false,
	},
	{ // a[ix([0, 2], [3, 1])]
		name:   "Incl of two positions on two axes is a view",
		steps:  [][]Index{{Incl(0, 2), Incl(3, 1)}},
		shape:  Shape{2, 2, 5},
		values: []int64{15, 16, 17, 18, 19, 5, 6, 7, 8, 9, 55, 56, 57, 58, 59, 45, 46, 47, 48, 49},
		view:   true,
	},
	{ // a[ix([0, 2, 1], [3, 1])]
		name:   "Incl on two axes selects the outer product",
		steps:  [][]Index{{Incl(0, 2, 1), Incl(3, 1)}},
		shape:  Shape{3, 2, 5},
		values: []int64{15, 16, 17, 18, 19, 5, 6, 7, 8, 9, 55, 56, 57, 58, 59, 45, 46, 47, 48, 49, 35, 36, 37, 38, 39, 25, 26, 27, 28, 29},
		view:   false,
	},
	{ // a[:, :, [0, 2, 4]]
		name:   "Excl leaving an even set is a view",
		steps:  [][]Index{{All(), All(), Excl(1, 3)}},
		shape:  Shape{3, 4, 3},
		values: []int64{0, 2, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19, 20, 22, 24, 25, 27, 29, 30, 32, 34, 35, 37, 39, 40, 42, 44, 45, 47, 49, 50, 52, 54, 55, 57, 59},
		view:   true,
	},
	{ // a[:, [0, 1, 3]]
		name:   "Excl leaving an uneven set is a copy",
		steps:  [][]Index{{All(), Excl(-2)}},
		shape:  Shape{3, 3, 5},
		values: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 55, 56, 57, 58, 59},
		view:   false,
	},
	{ // a[[]]
		name:   "Excl everything selects nothing",
		steps:  [][]Index{{Excl(0, 1, 2)}},
		shape:  Shape{0, 4, 5},
		values: []int64{},
		view:   true,
	},
	{ // a[:, np.array([[0, 3], [-1, 1]])]
		name:   "Take with a 2x2 index array",
		steps:  [][]Index{{All(), Take(take22)}},
		shape:  Shape{3, 2, 2, 5},
		values: []int64{0, 1, 2, 3, 4, 15, 16, 17, 18, 19, 15, 16, 17, 18, 19, 5, 6, 7, 8, 9, 20, 21, 22, 23, 24, 35, 36, 37, 38, 39, 35, 36, 37, 38, 39, 25, 26, 27, 28, 29, 40, 41, 42, 43, 44, 55, 56, 57, 58, 59, 55, 56, 57, 58, 59, 45, 46, 47, 48, 49},
		view:   false,
	},
	{ // a[::-1, 1:4][-1, :, 1::2]
		name:   "view of a view",
		steps:  [][]Index{{Flip(), Range(1, 4)}, {At(-1), All(), Odd()}},
		shape:  Shape{3, 2},
		values: []int64{6, 8, 11, 13, 16, 18},
		view:   true,
	},
	{ // a[::2, ::-1, ::2][:, 0:2, ::-1]
		name:   "view of a strided view",
		steps:  [][]Index{{Step(2), Step(-1), Step(2)}, {All(), Range(0, 2), Flip()}},
		shape:  Shape{2, 2, 3},
		values: []int64{19, 17, 15, 14, 12, 10, 59, 57, 55, 54, 52, 50},
		view:   true,
	},
	{ // a[::2, ::-1][ix([1, 0], [0, 1, 3])]
		name:   "copy of a strided view",
		steps:  [][]Index{{Step(2), Step(-1)}, {Incl(1, 0), Incl(0, 1, 3)}},
		shape:  Shape{2, 3, 5},
		values: []int64{55, 56, 57, 58, 59, 50, 51, 52, 53, 54, 40, 41, 42, 43, 44, 15, 16, 17, 18, 19, 10, 11, 12, 13, 14, 0, 1, 2, 3, 4},
		view:   false,
	},
}
var reshapeCases = []reshapeCase{
	{ // b.reshape((2, 12))
		name:   "row-major merge",
		slice:  []Index{All()},
		to:     []int64{2, 12},
		shape:  Shape{2, 12},
		values: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23},
		view:   true,
	},
	{ // b[::2].reshape((2, 2, 3))
		name:   "split a strided axis",
		slice:  []Index{Step(2)},
		to:     []int64{2, 2, 3},
		shape:  Shape{2, 2, 3},
		values: []int64{0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17},
		view:   true,
	},
	{ // b[:, 0:3].reshape((12,))
		name:   "merge rows of a column slice needs a copy",
		slice:  []Index{All(), Range(0, 3)},
		to:     []int64{12},
		shape:  Shape{12},
		values: []int64{0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20},
		view:   false,
	},
	{ // b[:, 0:4].reshape((4, 2, 2))
		name:   "split inside a column slice stays a view",
		slice:  []Index{All(), Range(0, 4)},
		to:     []int64{4, 2, 2},
		shape:  Shape{4, 2, 2},
		values: []int64{0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15, 18, 19, 20, 21},
		view:   true,
	},
	{ // b.T.reshape((24,))
		name:      "transpose flattened is a copy",
		transpose: true,
		to:        []int64{24},
		shape:     Shape{24},
		values:    []int64{0, 6, 12, 18, 1, 7, 13, 19, 2, 8, 14, 20, 3, 9, 15, 21, 4, 10, 16, 22, 5, 11, 17, 23},
		view:      false,
	},
	{ // b[::-1].reshape((-1,))
		name:   "flip flattened is a copy",
		slice:  []Index{Flip()},
		to:     []int64{-1},
		shape:  Shape{24},
		values: []int64{18, 19, 20, 21, 22, 23, 12, 13, 14, 15, 16, 17, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5},
		view:   false,
	},
	{ // b[::-1].reshape((2, 2, 6))
		name:   "flip split keeps a view",
		slice:  []Index{Flip()},
		to:     []int64{2, 2, 6},
		shape:  Shape{2, 2, 6},
		values: []int64{18, 19, 20, 21, 22, 23, 12, 13, 14, 15, 16, 17, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5},
		view:   true,
	},
	{ // b[::2, ::2].reshape((3, -1))
		name:   "inferred dimension",
		slice:  []Index{Step(2), Step(2)},
		to:     []int64{3, -1},
		shape:  Shape{3, 2},
		values: []int64{0, 2, 4, 12, 14, 16},
		view:   false,
	},
	{ // b[::3].reshape((1, 2, 1, 6, 1))
		name:   "adding unit dimensions",
		slice:  []Index{Step(3)},
		to:     []int64{1, 2, 1, 6, 1},
		shape:  Shape{1, 2, 1, 6, 1},
		values: []int64{0, 1, 2, 3, 4, 5, 18, 19, 20, 21, 22, 23},
		view:   true,
	},
}
