package ndarray

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewIsZeroedRowMajor(t *testing.T) {
	a := New[float32](2, 3)
	assert.Equal(t, Shape{2, 3}, a.Shape())
	assert.Equal(t, 2, a.Rank())
	assert.Equal(t, int64(6), a.Size())
	assert.Equal(t, []int64{3, 1}, a.Layout().Strides)
	assert.True(t, a.IsContiguous())
	assert.Equal(t, Float32, a.DType())
	assert.Equal(t, make([]float32, 6), slices.Collect(a.Values()))

	s := New[int8]()
	assert.Equal(t, Shape{}, s.Shape())
	assert.Equal(t, int64(1), s.Size())
	s.Set(7)
	assert.Equal(t, int8(7), s.Get())

	e := New[bool](0, 5)
	assert.Equal(t, int64(0), e.Size())
	assert.Empty(t, slices.Collect(e.Values()))
}

func TestNewPanicsOnBadShape(t *testing.T) {
	assert.PanicsWithValue(t, "ndarray: New: ndarray: shape (2, -3): dimension 1 is -3: invalid or mismatched shape",
		func() { New[int32](2, -3) })
	assert.Panics(t, func() { New[int32](1<<40, 1<<40) }, "size overflow")
	assert.Panics(t, func() { New[int32](Unknown) }, "unknown dimension")
}

func TestFromSliceWrapsWithoutCopy(t *testing.T) {
	data := []float64{1, 2, 3, 4, 5, 6}
	a, err := FromSlice(data, 2, 3)
	require.NoError(t, err)
	a.Set(50, 1, 1)
	assert.Equal(t, 50.0, data[4], "the array writes into the caller's slice")
	data[0] = 10
	assert.Equal(t, 10.0, a.Get(0, 0), "the caller's writes show in the array")

	for _, tc := range []struct {
		name  string
		data  []float64
		shape []int64
	}{
		{"too few values", data[:5], []int64{2, 3}},
		{"too many values", data, []int64{5}},
		{"negative dimension", data, []int64{-6}},
		{"unknown dimension", data, []int64{Unknown, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromSlice(tc.data, tc.shape...)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, ErrShape)
		})
	}
}

func TestFromLayout(t *testing.T) {
	// A column-major 2x3 array over 1..6 holds [[1 3 5] [2 4 6]].
	data := []int32{1, 2, 3, 4, 5, 6}
	a, err := FromLayout(data, ColumnMajor(Shape{2, 3}))
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 3, 5, 2, 4, 6}, slices.Collect(a.Values()))
	assert.False(t, a.IsContiguous())
	assert.True(t, a.Layout().IsColumnMajor())

	for _, tc := range []struct {
		name   string
		layout Layout
		err    error
	}{
		{"strides reach past the end", Layout{Shape: Shape{2, 3}, Strides: []int64{3, 2}}, ErrLayout},
		{"negative stride reaches before the start", Layout{Shape: Shape{3}, Strides: []int64{-1}, Offset: 1}, ErrLayout},
		{"offset past the end", Layout{Shape: Shape{1}, Strides: []int64{1}, Offset: 6}, ErrLayout},
		{"negative offset", Layout{Shape: Shape{1}, Strides: []int64{1}, Offset: -1}, ErrLayout},
		{"fewer strides than dimensions", Layout{Shape: Shape{2, 3}, Strides: []int64{1}}, ErrLayout},
		{"stride overflow", Layout{Shape: Shape{3}, Strides: []int64{1 << 62}}, ErrLayout},
		{"negative dimension", Layout{Shape: Shape{-2}, Strides: []int64{1}}, ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromLayout(data, tc.layout)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, tc.err)
		})
	}

	t.Run("a negative stride inside the data is fine", func(t *testing.T) {
		got, err := FromLayout(data, Layout{Shape: Shape{3}, Strides: []int64{-2}, Offset: 5})
		require.NoError(t, err)
		assert.Equal(t, []int32{6, 4, 2}, slices.Collect(got.Values()))
	})
	t.Run("an empty layout needs no data", func(t *testing.T) {
		got, err := FromLayout([]int32{}, Layout{Shape: Shape{0, 4}, Strides: []int64{4, 1}, Offset: 9})
		require.NoError(t, err)
		assert.Equal(t, int64(0), got.Size())
	})
}

func TestGetSetPanicMessages(t *testing.T) {
	a := New[float32](2, 3)
	for _, tc := range []struct {
		name string
		fn   func()
		want string
	}{
		{"Get out of range", func() { a.Get(0, 3) }, "ndarray: Get index [0 3] out of range for shape (2, 3)"},
		{"Get negative", func() { a.Get(-1, 0) }, "ndarray: Get index [-1 0] out of range for shape (2, 3)"},
		{"Get too few indices", func() { a.Get(1) }, "ndarray: Get with 1 indices [1] on an array of rank 2, shape (2, 3)"},
		{"Set too many indices", func() { a.Set(1, 0, 0, 0) }, "ndarray: Set with 3 indices [0 0 0] on an array of rank 2, shape (2, 3)"},
		{"Set out of range", func() { a.Set(1, 2, 0) }, "ndarray: Set index [2 0] out of range for shape (2, 3)"},
		{"Set read-only", func() { a.AsReadOnly().Set(1, 0, 0) }, "ndarray: Set on a read-only array of shape (2, 3)"},
		{"Dim out of range", func() { a.Dim(2) }, "ndarray: Dim(2) on an array of shape (2, 3)"},
		{"Elements of a scalar", func() { New[int8]().Elements() }, "ndarray: Elements on a rank-0 array"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.PanicsWithValue(t, tc.want, tc.fn) })
	}
}

func TestReadOnly(t *testing.T) {
	a := arange(func(v int64) int16 { return int16(v) }, 2, 3)
	r := a.AsReadOnly()
	assert.False(t, a.ReadOnly())
	assert.True(t, r.ReadOnly())
	assert.True(t, r.SharesMemory(a))

	a.Set(40, 1, 1)
	assert.Equal(t, int16(40), r.Get(1, 1), "a read-only view sees writes made through the source")

	v, err := r.Slice(All(), At(1))
	require.NoError(t, err)
	assert.True(t, v.ReadOnly(), "views of a read-only array are read-only")
	assert.True(t, r.Transpose().ReadOnly())
	for _, e := range r.Elements() {
		assert.True(t, e.ReadOnly())
	}
	c, err := r.Slice(Incl(1, 1))
	require.NoError(t, err)
	assert.False(t, c.ReadOnly(), "a copy is writable")
	assert.False(t, r.Clone().ReadOnly())

	for name, write := range map[string]func(){
		"CopyFrom": func() { _ = r.CopyFrom(make([]int16, 6)) },
		"ReadFrom": func() { _, _ = r.ReadFrom(nil) },
		"Copy":     func() { _ = Copy(r, a) },
		"Set":      func() { v.Set(1, 0) },
	} {
		t.Run(name+" panics", func(t *testing.T) { assert.Panics(t, write) })
	}
	assert.Equal(t, []int16{0, 1, 2, 3, 40, 5}, slices.Collect(a.Values()), "nothing was written")
}

func TestElementsYieldsFreshViews(t *testing.T) {
	a := arange(func(v int64) float64 { return float64(v) }, 3, 2)
	var kept []*Dense[float64]
	var index []int64
	for i, row := range a.Elements() {
		index = append(index, i)
		kept = append(kept, row)
	}
	assert.Equal(t, []int64{0, 1, 2}, index)
	require.Len(t, kept, 3)
	for i, row := range kept {
		assert.Equal(t, Shape{2}, row.Shape())
		assert.Equal(t, []float64{float64(2 * i), float64(2*i + 1)}, slices.Collect(row.Values()),
			"row %d kept after the loop still holds its own values", i)
	}
	kept[1].Set(-1, 0)
	assert.Equal(t, -1.0, a.Get(1, 0), "rows are views")

	for i := range a.Elements() {
		if i == 1 {
			break
		}
	}
	vec := arange(func(v int64) int32 { return int32(v) }, 3)
	for i, e := range vec.Elements() {
		assert.Equal(t, 0, e.Rank())
		assert.Equal(t, int32(i), e.Get())
	}
}

func TestValuesOverLayouts(t *testing.T) {
	a := arange(func(v int64) int64 { return v }, 2, 3, 4)
	for _, tc := range []struct {
		name string
		view func() *Dense[int64]
		want []int64
	}{
		{"row-major", func() *Dense[int64] { return a }, seq(0, 24)},
		{"transposed", func() *Dense[int64] { return a.Transpose() },
			[]int64{0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23}},
		{"inner rows contiguous", func() *Dense[int64] { v, _ := a.Slice(All(), Range(1, 3)); return v },
			[]int64{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
		{"flipped", func() *Dense[int64] { v, _ := a.Slice(Ellipsis(), Flip()); return v },
			[]int64{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.view()
			assert.Equal(t, tc.want, slices.Collect(v.Values()))
			var firstFive []int64
			for x := range v.Values() {
				if len(firstFive) == 5 {
					break
				}
				firstFive = append(firstFive, x)
			}
			assert.Equal(t, tc.want[:5], firstFive, "early break")
		})
	}
}

func TestValuesOverHighRank(t *testing.T) {
	// Rank above the iterator's stack buffer, with a non-mergeable layout.
	shape := []int64{2, 1, 2, 1, 2, 1, 2, 1, 2, 2}
	a := arange(func(v int64) int64 { return v }, shape...)
	v, err := a.Slice(Ellipsis(), Flip())
	require.NoError(t, err)
	got := slices.Collect(v.Values())
	require.Len(t, got, 64)
	for i := 0; i < 64; i += 2 {
		assert.Equal(t, []int64{int64(i + 1), int64(i)}, got[i:i+2])
	}
	tr := a.Transpose()
	assert.True(t, tr.Clone().Transpose().Equal(a))
}

func seq(from, to int64) []int64 {
	var s []int64
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestCopyFromCopyTo(t *testing.T) {
	a := New[uint16](3, 4)
	col, err := a.Slice(All(), Range(1, 3))
	require.NoError(t, err)
	require.NoError(t, col.CopyFrom([]uint16{1, 2, 3, 4, 5, 6}))
	assert.Equal(t, []uint16{0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0}, a.Data())

	back := make([]uint16, 6)
	require.NoError(t, col.Transpose().CopyTo(back))
	assert.Equal(t, []uint16{1, 3, 5, 2, 4, 6}, back, "a copy from a strided view is in row-major order")

	assert.ErrorIs(t, col.CopyFrom(make([]uint16, 5)), ErrShape)
	assert.ErrorIs(t, col.CopyTo(make([]uint16, 7)), ErrShape)
	assert.Equal(t, []uint16{0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0}, a.Data(), "a failed CopyFrom writes nothing")
}

func TestCopyBetweenArrays(t *testing.T) {
	t.Run("strided into strided", func(t *testing.T) {
		src := arange(func(v int64) float32 { return float32(v) }, 4, 4)
		dst := New[float32](4, 4)
		sv, _ := src.Slice(Step(2), Flip())
		dv, _ := dst.Slice(Odd())
		require.False(t, sv.IsContiguous())
		require.False(t, dv.IsContiguous())
		require.NoError(t, Copy(dv, sv))
		assert.Equal(t, []float32{0, 0, 0, 0, 3, 2, 1, 0, 0, 0, 0, 0, 11, 10, 9, 8}, dst.Data())
	})
	t.Run("overlapping flip", func(t *testing.T) {
		a := arange(func(v int64) int32 { return int32(v) }, 6)
		rev, _ := a.Slice(Flip())
		require.NoError(t, Copy(a, rev))
		assert.Equal(t, []int32{5, 4, 3, 2, 1, 0}, a.Data(), "as if the source had been copied first")
	})
	t.Run("overlapping shift", func(t *testing.T) {
		a := arange(func(v int64) int32 { return int32(v) }, 6)
		lo, _ := a.Slice(Range(0, 4))
		hi, _ := a.Slice(Range(2, 6))
		require.NoError(t, Copy(hi, lo))
		assert.Equal(t, []int32{0, 1, 0, 1, 2, 3}, a.Data())
	})
	t.Run("contiguous into strided", func(t *testing.T) {
		a := New[string](2, 2)
		require.NoError(t, Copy(a.Transpose(), Must(FromSlice([]string{"a", "b", "c", "d"}, 2, 2))))
		assert.Equal(t, []string{"a", "c", "b", "d"}, a.Data())
	})
	t.Run("shape mismatch", func(t *testing.T) {
		err := Copy(New[int8](2, 3), New[int8](3, 2))
		assert.ErrorIs(t, err, ErrShape)
		assert.ErrorContains(t, err, "shape (3, 2) into shape (2, 3)")
	})
}

func TestCloneAndEqual(t *testing.T) {
	a := arange(func(v int64) float64 { return float64(v) }, 3, 4)
	tr := a.Transpose()
	c := tr.Clone()
	assert.True(t, c.IsContiguous())
	assert.False(t, c.SharesMemory(a))
	assert.True(t, c.Equal(tr))
	assert.False(t, c.Equal(a), "different shapes")
	c.Set(-1, 0, 0)
	assert.False(t, c.Equal(tr))
	assert.Equal(t, 0.0, a.Get(0, 0), "the clone is independent")

	nan := Must(FromSlice([]float64{0, nanValue()}, 2))
	assert.False(t, nan.Equal(nan), "NaN is never equal, as with ==")
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestPermuteAndTranspose(t *testing.T) {
	a := arange(func(v int64) int64 { return v }, 2, 3, 4)
	p, err := a.Permute(1, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, Shape{3, 4, 2}, p.Shape())
	assert.True(t, p.SharesMemory(a))
	assert.Equal(t, a.Get(1, 2, 3), p.Get(2, 3, 1))
	assert.Equal(t, Shape{4, 3, 2}, a.Transpose().Shape())
	assert.Equal(t, a.Get(1, 0, 2), a.Transpose().Get(2, 0, 1))

	for _, axes := range [][]int{{0, 1}, {0, 1, 1}, {0, 1, 3}, {-1, 0, 1}} {
		_, err := a.Permute(axes...)
		assert.ErrorIs(t, err, ErrIndex, "axes %v", axes)
	}
	s := Scalar(int64(3))
	assert.Equal(t, int64(3), s.Transpose().Get())
}

func TestReshapeErrorsAndInference(t *testing.T) {
	a := arange(func(v int64) int64 { return v }, 2, 6)
	for _, tc := range []struct {
		name  string
		shape []int64
	}{
		{"size differs", []int64{5, 2}},
		{"two unknowns", []int64{-1, -1}},
		{"cannot infer", []int64{5, -1}},
		{"negative", []int64{-2, -6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.Reshape(tc.shape...)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, ErrShape)
		})
	}
	r, err := a.Reshape(3, -1)
	require.NoError(t, err)
	assert.Equal(t, Shape{3, 4}, r.Shape())
	s, err := Scalar(float32(2)).Reshape(1, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(2), s.Get(0, 0))
	back, err := s.Reshape()
	require.NoError(t, err)
	assert.Equal(t, 0, back.Rank())
	empty, err := New[int8](0, 3).Reshape(3, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, Shape{3, 0, 2}, empty.Shape())
}

// TestReshapeProperty checks, over many strided views and target shapes, that Reshape keeps
// the row-major order of the elements and returns a view exactly when it says it can.
func TestReshapeProperty(t *testing.T) {
	base := arange(func(v int64) int64 { return v }, 4, 6, 2)
	views := map[string][]Index{
		"all":            {},
		"flip":           {Flip()},
		"step rows":      {Step(2)},
		"inner slice":    {All(), Range(1, 5)},
		"last flipped":   {Ellipsis(), Flip()},
		"middle stepped": {All(), Step(3)},
		"new axis":       {NewAxis(), Step(2)},
	}
	targets := [][]int64{{-1}, {2, -1}, {-1, 2}, {2, 2, -1}, {1, -1, 1}, {-1, 3}, {2, 1, -1, 1}}
	for name, idx := range views {
		v, err := base.Slice(idx...)
		require.NoError(t, err)
		want := slices.Collect(v.Values())
		for _, to := range targets {
			r, err := v.Reshape(to...)
			if err != nil {
				assert.ErrorIs(t, err, ErrShape)
				continue
			}
			assert.Equal(t, want, slices.Collect(r.Values()), "%s reshaped to %v", name, to)
			if r.SharesMemory(base) {
				require.NoError(t, r.Layout().Validate(int64(len(base.Data()))))
			}
			if v.IsContiguous() {
				assert.True(t, r.SharesMemory(base), "%s is contiguous: reshaping to %v must be a view", name, to)
			}
		}
	}
}

func TestSliceErrors(t *testing.T) {
	a := New[int32](3, 4)
	for _, tc := range []struct {
		name    string
		indices []Index
		msg     string
	}{
		{"At out of range", []Index{At(3)}, "dimension 0: At(3): position 3 out of range for dimension of size 3"},
		{"negative At out of range", []Index{All(), At(-5)}, "dimension 1: At(-5): position -5 out of range"},
		{"too many indices", []Index{At(0), At(0), At(0)}, "3 indices for rank 2"},
		{"two ellipses", []Index{Ellipsis(), Ellipsis()}, "2 ellipses"},
		{"zero step", []Index{RangeStep(0, 3, 0)}, "step must not be zero"},
		{"zero modulus", []Index{Mod(0)}, "Mod(0): modulus must be positive"},
		{"negative modulus", []Index{Mod(-2)}, "Mod(-2): modulus must be positive"},
		{"Incl out of range", []Index{Incl(0, 3)}, "Incl position 3"},
		{"Excl out of range", []Index{All(), Excl(4)}, "Excl position 4"},
		{"Take out of range", []Index{Take(Must(FromSlice([]int64{0, 9}, 2)))}, "Take position 9"},
		{"Take nil", []Index{Take(nil)}, "Take(nil)"},
		{"zero Index", []Index{{}}, "zero Index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.Slice(tc.indices...)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, ErrIndex)
			assert.ErrorContains(t, err, tc.msg)
			assert.ErrorContains(t, err, "shape (3, 4)")
		})
	}
	_, err := Scalar(1.0).Slice(At(0))
	assert.ErrorIs(t, err, ErrIndex, "a scalar has no dimension to index (the RFC's scalar.slice(0))")
}

func TestSliceExtremeBounds(t *testing.T) {
	a := arange(func(v int64) int64 { return v }, 5)
	const maxI, minI = int64(1<<63 - 1), int64(-1 << 63)
	for _, tc := range []struct {
		idx  Index
		want []int64
	}{
		{RangeStep(maxI, minI, -1), []int64{4, 3, 2, 1, 0}},
		{RangeStep(minI, maxI, 1), []int64{0, 1, 2, 3, 4}},
		{RangeStep(0, maxI, maxI), []int64{0}},
		{RangeStep(maxI, minI, minI), []int64{4}},
		{Mod(maxI), []int64{0}},
	} {
		v, err := a.Slice(tc.idx)
		require.NoError(t, err, "%v", tc.idx)
		assert.Equal(t, tc.want, slices.Collect(v.Values()), "%v", tc.idx)
	}
}

func TestIndexString(t *testing.T) {
	for _, tc := range []struct {
		idx  Index
		want string
	}{
		{At(-1), "At(-1)"}, {All(), "All()"}, {Range(1, 3), "Range(1, 3)"}, {Flip(), "Flip()"},
		{RangeStep(5, 0, -2), "RangeStep(5, 0, -2)"}, {Step(3), "Step(3)"},
		{From(2), "From(2)"}, {To(2), "To(2)"}, {Mod(3), "Mod(3)"}, {Even(), "Even()"}, {Odd(), "Odd()"},
		{Incl(1, 2), "Incl(1, 2)"}, {Excl(0), "Excl(0)"}, {NewAxis(), "NewAxis()"}, {Ellipsis(), "Ellipsis()"},
		{Take(New[int64](2)), "Take((2,) array)"}, {Take(nil), "Take(nil)"}, {Index{}, "Index{}"},
	} {
		assert.Equal(t, tc.want, tc.idx.String())
	}
}

func TestSharesMemory(t *testing.T) {
	a := New[int64](4)
	b := New[int64](4)
	lo, _ := a.Slice(Range(0, 2))
	hi, _ := a.Slice(Range(2, 4))
	assert.True(t, lo.SharesMemory(a))
	assert.False(t, a.SharesMemory(b))
	assert.True(t, lo.SharesMemory(hi), "the backing ranges are compared, not the elements")
	empty, _ := a.Slice(Range(2, 2))
	assert.False(t, empty.SharesMemory(a))
}

func TestErrorsAreSentinels(t *testing.T) {
	_, err := FromSlice([]int8{1}, 2)
	assert.True(t, errors.Is(err, ErrShape))
	assert.False(t, errors.Is(err, ErrIndex))
}

func TestExclSelections(t *testing.T) {
	for _, tc := range []struct {
		n        int64
		excluded []int64
		want     []int64
		view     bool
	}{
		{10, nil, seq(0, 10), true},
		{10, []int64{0, 1, 9}, seq(2, 9), true},
		{10, []int64{9, 0, 1, 0}, seq(2, 9), true},
		{10, []int64{-1, -10}, seq(1, 9), true},
		{10, []int64{4}, []int64{0, 1, 2, 3, 5, 6, 7, 8, 9}, false},
		{6, []int64{1, 3, 5}, []int64{0, 2, 4}, true},
		{7, []int64{0, 2, 3, 5, 6}, []int64{1, 4}, true},
		{3, []int64{0, 1, 2}, nil, true},
	} {
		a := arange(func(v int64) int64 { return v }, tc.n)
		v, err := a.Slice(Excl(tc.excluded...))
		require.NoError(t, err)
		assertValues(t, tc.want, v)
		if v.Size() > 0 {
			assert.Equal(t, tc.view, v.SharesMemory(a), "Excl%v of %d", tc.excluded, tc.n)
		}
	}
}

func TestExclOnAHugeBroadcastDimensionDoesNotAllocateIt(t *testing.T) {
	// One element broadcast along a dimension of 2^50 with stride 0.
	huge := Must(FromLayout([]float64{7}, Layout{Shape: Shape{1 << 50}, Strides: []int64{0}}))
	v, err := huge.Slice(Excl(0, -1))
	require.NoError(t, err)
	assert.Equal(t, Shape{1<<50 - 2}, v.Shape())
	assert.Equal(t, 7.0, v.Get(1<<49))
}

// TestBroadcastLayouts covers layouts with zero strides, where many positions share one
// element (a broadcast, or a size-1 dimension stretched by FromLayout).
func TestBroadcastLayouts(t *testing.T) {
	row := []int16{1, 2, 3}
	b := Must(FromLayout(row, Layout{Shape: Shape{2, 3}, Strides: []int64{0, 1}}))
	assert.Equal(t, []int16{1, 2, 3, 1, 2, 3}, slices.Collect(b.Values()))
	col := Must(FromLayout(row, Layout{Shape: Shape{3, 4}, Strides: []int64{1, 0}}))
	assert.Equal(t, []int16{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, slices.Collect(col.Values()))
	dst := make([]int16, 12)
	require.NoError(t, col.CopyTo(dst))
	assert.Equal(t, []int16{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, dst)
	var buf bytes.Buffer
	n, err := col.WriteTo(&buf)
	require.NoError(t, err)
	assert.Equal(t, int64(24), n)
	assert.True(t, col.Equal(col.Clone()))
	strs := Must(FromLayout([]string{"a"}, Layout{Shape: Shape{3}, Strides: []int64{0}}))
	buf.Reset()
	n, err = strs.WriteTo(&buf)
	require.NoError(t, err)
	assert.Equal(t, int64(15), n)
	assert.Equal(t, "[\"a\" \"a\" \"a\"]", strs.String())
}

// TestZeroValueIsEmpty: a zero Dense is an empty vector everywhere, not a scalar whose one
// element is missing.
func TestZeroValueIsEmpty(t *testing.T) {
	var d Dense[float32]
	assert.Equal(t, Shape{0}, d.Shape())
	assert.Equal(t, 1, d.Rank())
	assert.Equal(t, int64(0), d.Size())
	assert.Equal(t, "[]", d.String())
	assert.Equal(t, "[]", fmt.Sprintf("%.2f", &d))
	assert.Empty(t, slices.Collect(d.Values()))
	assert.Empty(t, d.Ravel())
	assert.True(t, d.Equal(New[float32](0)))
	assert.True(t, d.Clone().Equal(New[float32](0)))
	assert.PanicsWithValue(t, "ndarray: Get with 0 indices [] on an array of rank 1, shape (0,)", func() { d.Get() })
	assert.Panics(t, func() { d.Set(1, 0) })
	var buf bytes.Buffer
	n, err := d.WriteTo(&buf)
	require.NoError(t, err)
	assert.Zero(t, n)
	c, err := Concat(0, &d, Must(FromSlice([]float32{1, 2}, 2)), &Dense[float32]{})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, c.Data())
	s, err := AsType[string](&d)
	require.NoError(t, err)
	assert.Equal(t, Shape{0}, s.Shape())
	require.NoError(t, Copy(&d, New[float32](0)))
	r, err := d.Reshape(0, 3)
	require.NoError(t, err)
	assert.Equal(t, Shape{0, 3}, r.Shape())
}
