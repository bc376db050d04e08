package ndmat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/ndarrow/ndarrow/ndarray"
)

// grid returns a row-major [rows, cols] array whose element (i, j) is 10·i + j.
func grid(rows, cols int64) *ndarray.Dense[float64] {
	return ndarray.FromFunc(func(i []int64) float64 { return float64(10*i[0] + i[1]) }, rows, cols)
}

// TestMatrixViews hands gonum every layout it can view — the whole array, row and column
// ranges, one row, one column, a row-major copy of a transpose — and checks that gonum sees
// the same elements and that writes go both ways.
func TestMatrixViews(t *testing.T) {
	g := grid(4, 5)
	for name, view := range map[string]*ndarray.Dense[float64]{
		"whole":           g,
		"rows 1:3":        ndarray.Must(g.Slice(ndarray.Range(1, 3))),
		"cols 1:4":        ndarray.Must(g.Slice(ndarray.All(), ndarray.Range(1, 4))),
		"every 2nd row":   ndarray.Must(g.Slice(ndarray.Step(2), ndarray.Range(2, 5))),
		"one row":         ndarray.Must(g.Slice(ndarray.Range(3, 4))),
		"one column":      ndarray.Must(g.Slice(ndarray.All(), ndarray.Range(2, 3))),
		"transposed copy": g.Transpose().Clone(),
	} {
		t.Run(name, func(t *testing.T) {
			m, err := Matrix(view)
			require.NoError(t, err)
			r, c := m.Dims()
			require.Equal(t, view.Shape(), ndarray.Shape{int64(r), int64(c)})
			for i := range r {
				for j := range c {
					require.Equal(t, view.Get(int64(i), int64(j)), m.At(i, j))
				}
			}
			m.Set(r-1, c-1, -1)
			assert.Equal(t, -1.0, view.Get(int64(r-1), int64(c-1)), "gonum writes into the array")
			view.Set(-2, 0, 0)
			assert.Equal(t, -2.0, m.At(0, 0), "the array writes into gonum's matrix")

			back, err := FromMatrix(m)
			require.NoError(t, err)
			assert.True(t, back.Equal(view))
			assert.True(t, back.SharesMemory(view))
		})
	}
}

// TestVectorViews does the same for vectors: a row, a column (strided), every other element.
func TestVectorViews(t *testing.T) {
	g := grid(4, 5)
	for name, view := range map[string]*ndarray.Dense[float64]{
		"a row":       ndarray.Must(g.Slice(ndarray.At(1))),
		"a column":    ndarray.Must(g.Slice(ndarray.All(), ndarray.At(3))),
		"every other": ndarray.Must(g.Slice(ndarray.At(2), ndarray.Step(2))),
		"one element": ndarray.Must(g.Slice(ndarray.At(2), ndarray.Range(4, 5))),
	} {
		t.Run(name, func(t *testing.T) {
			v, err := Vector(view)
			require.NoError(t, err)
			require.Equal(t, int(view.Size()), v.Len())
			for i := range v.Len() {
				require.Equal(t, view.Get(int64(i)), v.AtVec(i))
			}
			v.SetVec(0, 99)
			assert.Equal(t, 99.0, view.Get(0))
			back, err := FromVector(v)
			require.NoError(t, err)
			assert.True(t, back.Equal(view))
			assert.True(t, back.SharesMemory(view))
		})
	}
}

// TestWhatGonumCannotView: layouts gonum has no form for, empty and read-only arrays and
// the wrong rank fail with the sentinel that says why, and nothing is copied behind the
// caller's back.
func TestWhatGonumCannotView(t *testing.T) {
	g := grid(4, 5)
	for name, tc := range map[string]struct {
		call func() error
		want error
	}{
		"transpose":    {func() error { _, err := Matrix(g.Transpose()); return err }, ndarray.ErrLayout},
		"flipped rows": {func() error { _, err := Matrix(ndarray.Must(g.Slice(ndarray.Flip()))); return err }, ndarray.ErrLayout},
		"every 2nd column": {func() error {
			_, err := Matrix(ndarray.Must(g.Slice(ndarray.All(), ndarray.Step(2))))
			return err
		}, ndarray.ErrLayout},
		"flipped vector": {func() error {
			_, err := Vector(ndarray.Must(g.Slice(ndarray.At(0), ndarray.Flip())))
			return err
		}, ndarray.ErrLayout},
		"empty":         {func() error { _, err := Matrix(ndarray.New[float64](0, 3)); return err }, ndarray.ErrShape},
		"rank 3":        {func() error { _, err := Matrix(ndarray.New[float64](2, 2, 2)); return err }, ndarray.ErrShape},
		"vector rank 2": {func() error { _, err := Vector(g); return err }, ndarray.ErrShape},
		"read-only":     {func() error { _, err := Matrix(g.AsReadOnly()); return err }, ErrReadOnly},
	} {
		assert.ErrorIs(t, tc.call(), tc.want, name)
	}
	_, err := FromMatrix(&mat.Dense{})
	require.NoError(t, err, "gonum's empty matrix is an empty array")
}

// TestReadOnlyArraysSayClone: a read-only array (what a mapped file gives) is refused by
// Matrix and Vector with ErrReadOnly and one line that names the function and the shape and
// says what to do — Clone it — and its Clone is then viewed.
func TestReadOnlyArraysSayClone(t *testing.T) {
	g := grid(4, 5)
	for _, tc := range []struct {
		name  string
		call  func(d *ndarray.Dense[float64]) error
		array *ndarray.Dense[float64]
		want  string
	}{
		{"Matrix", func(d *ndarray.Dense[float64]) error { _, err := Matrix(d); return err }, g.AsReadOnly(),
			"ndmat: Matrix: a read-only array of shape (4, 5)"},
		{"Vector", func(d *ndarray.Dense[float64]) error { _, err := Vector(d); return err }, ndarray.Must(g.AsReadOnly().Slice(ndarray.At(1))),
			"ndmat: Vector: a read-only array of shape (5,)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(tc.array)
			require.ErrorIs(t, err, ErrReadOnly)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "Clone it into a writable copy first")
			assert.NotContains(t, err.Error(), "\n")
			require.NoError(t, tc.call(tc.array.Clone()), "what the error says to do works")
		})
	}
}
