package sparse_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// number is the element types a test can make from an int.
type number interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// randomDense returns a dense array of a random shape of rank 1–4 (zero-size dimensions
// included) whose elements are non-zero with probability density.
func randomDense[T number](rng *rand.Rand, rank int, density float64) *ndarray.Dense[T] {
	shape := make([]int64, rank)
	for i := range shape {
		shape[i] = int64(rng.IntN(6))
		if rng.IntN(10) == 0 {
			shape[i] = 0
		}
	}
	d := ndarray.New[T](shape...)
	data := d.Data()
	for i := range data {
		if rng.Float64() < density {
			data[i] = T(1 + rng.IntN(100))
		}
	}
	return d
}

// allFormats converts d to every sparse format its rank allows.
func allFormats[T ndarray.Element](t *testing.T, d *ndarray.Dense[T]) []sparse.Tensor[T] {
	t.Helper()
	coo := sparse.FromDense(d)
	out := []sparse.Tensor[T]{coo}
	if d.Rank() == 2 {
		csr, err := coo.ToCSR()
		require.NoError(t, err)
		csc, err := coo.ToCSC()
		require.NoError(t, err)
		direct, err := sparse.CSRFromDense(d)
		require.NoError(t, err)
		out = append(out, csr, csc, direct)
	}
	if d.Rank() >= 1 {
		csf, err := coo.ToCSF()
		require.NoError(t, err)
		order := identity(d.Rank())
		slices.Reverse(order)
		rev, err := coo.ToCSF(order...)
		require.NoError(t, err)
		out = append(out, csf, rev)
	}
	return out
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// convertAll converts s to every format its rank allows, through s's own methods.
func convertAll[T ndarray.Element](t *testing.T, s sparse.Tensor[T]) []sparse.Tensor[T] {
	t.Helper()
	type toCompressed interface {
		ToCSR() (*sparse.CSR[T], error)
		ToCSC() (*sparse.CSC[T], error)
	}
	type toCSF interface {
		ToCSF(axisOrder ...int) (*sparse.CSF[T], error)
	}
	out := []sparse.Tensor[T]{s.ToCOO()}
	switch m := s.(type) {
	case *sparse.CSR[T]:
		out = append(out, m.ToCSR(), m.ToCSC())
	case *sparse.CSC[T]:
		out = append(out, m.ToCSR(), m.ToCSC())
	case toCompressed:
		if s.Rank() == 2 {
			csr, err := m.ToCSR()
			require.NoError(t, err)
			csc, err := m.ToCSC()
			require.NoError(t, err)
			out = append(out, csr, csc)
		} else {
			_, err := m.ToCSR()
			require.ErrorIs(t, err, sparse.ErrInvalid)
		}
	}
	if f, ok := s.(toCSF); ok && s.Rank() >= 1 {
		csf, err := f.ToCSF()
		require.NoError(t, err)
		out = append(out, csf)
	}
	return out
}

func checkSame[T ndarray.Numeric](t *testing.T, want *ndarray.Dense[T], got sparse.Tensor[T], what string) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), what)
	require.True(t, want.Equal(dense(got.ToDense())), "%s: ToDense\nwant %v\ngot  %v", what, want, dense(got.ToDense()))
	require.Equal(t, slices.Collect(want.Values()), slices.Collect(got.Values()), "%s: Values", what)
	require.True(t, sparse.Equal[T](want, got), what)
	var zero T
	nnz := int64(0)
	for v := range want.Values() {
		if v != zero {
			nnz++
		}
	}
	require.Equal(t, nnz, got.NNZ(), "%s: NNZ", what)
	if want.Size() > 0 {
		idx := make([]int64, want.Rank())
		for k := range 5 {
			for i, n := range want.Shape() {
				idx[i] = int64((k * 7919) % int(n))
			}
			require.Equal(t, want.Get(idx...), got.Get(idx...), "%s: Get%v", what, idx)
		}
	}
}

// TestRoundTripProperty converts random dense arrays of every numeric type to each format,
// each format to every other, and back to dense, and compares the elements.
func TestRoundTripProperty(t *testing.T) {
	t.Run("int8", func(t *testing.T) { roundTrips[int8](t) })
	t.Run("uint16", func(t *testing.T) { roundTrips[uint16](t) })
	t.Run("int32", func(t *testing.T) { roundTrips[int32](t) })
	t.Run("uint64", func(t *testing.T) { roundTrips[uint64](t) })
	t.Run("float32", func(t *testing.T) { roundTrips[float32](t) })
	t.Run("float64", func(t *testing.T) { roundTrips[float64](t) })
}

func roundTrips[T number](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, uint64(ndarray.DTypeOf[T]())))
	for trial := range 150 {
		d := randomDense[T](rng, 1+trial%4, []float64{0, 0.05, 0.3, 1}[trial%4])
		for _, s := range allFormats(t, d) {
			what := fmt.Sprintf("trial %d %v %v", trial, s.Format(), d.Shape())
			checkSame(t, d, s, what)
			for _, c := range convertAll(t, s) {
				checkSame(t, d, c, what+" → "+c.Format().String())
			}
		}
	}
}

func TestFloat16AndBool(t *testing.T) {
	h := ndarray.Must(ndarray.FromSlice([]float16.Num{float16.New(0), float16.New(1.5), float16.New(0), float16.New(-2)}, 2, 2))
	c := sparse.FromDense(h)
	assert.EqualValues(t, 2, c.NNZ())
	assert.True(t, h.Equal(dense(c.ToDense())))
	b := ndarray.Must(ndarray.FromSlice([]bool{false, true, true, false, false, true}, 3, 2))
	csr, err := sparse.CSRFromDense(b)
	require.NoError(t, err)
	assert.EqualValues(t, 3, csr.NNZ())
	assert.True(t, b.Equal(dense(csr.ToDense())))
	s := sparse.NewCOO[string](2, 2)
	s.Set("x", 1, 0)
	assert.Equal(t, "x", s.Get(1, 0))
	assert.Equal(t, "", s.Get(0, 0))
}

func TestCOOSetGet(t *testing.T) {
	c := sparse.NewCOO[float64](3, 4)
	assert.Equal(t, ndarray.Int32, c.Indices().DType())
	assert.True(t, c.IsCanonical())
	c.Set(1, 0, 1)
	c.Set(2, 1, 0)
	c.Set(3, 2, 3)
	assert.True(t, c.IsCanonical(), "in-order sets keep the array canonical")
	c.Set(4, 1, 0) // update in place
	assert.True(t, c.IsCanonical())
	assert.EqualValues(t, 3, c.NNZ())
	c.Set(5, 0, 0) // out of order
	assert.False(t, c.IsCanonical())
	assert.EqualValues(t, 4, c.NNZ())
	c.Set(6, 0, 0)
	assert.EqualValues(t, 4, c.NNZ(), "a set at a stored coordinate updates it")
	assert.Equal(t, 6.0, c.Get(0, 0))
	assert.Equal(t, 4.0, c.Get(1, 0))
	assert.Equal(t, 0.0, c.Get(2, 2))
	c.Canonicalize()
	assert.True(t, c.IsCanonical())
	assert.Equal(t, []int32{0, 0, 0, 1, 1, 0, 2, 3}, c.Indices().Int32())
	assert.Equal(t, []float64{6, 1, 4, 3}, c.Data())

	big := sparse.NewCOO[int8](3, 1<<33)
	assert.Equal(t, ndarray.Int64, big.Indices().DType(), "index type derived from the shape")
	big.Set(7, 2, 1<<32)
	assert.EqualValues(t, 7, big.Get(2, 1<<32))

	assert.PanicsWithValue(t, "sparse: COO.Get: index [3 0] out of range for shape (3, 4)", func() { c.Get(3, 0) })
	assert.PanicsWithValue(t, "sparse: COO.Set: 1 indices for rank 2", func() { c.Set(1, 0) })
	assert.PanicsWithValue(t, "sparse: COO.Set: array is read-only", func() { c.AsReadOnly().Set(1, 0, 0) })
	assert.Panics(t, func() { sparse.NewCOO[int8](2, -1) })
}

// TestCOOSetRandom builds a COO by random sets, duplicates included, and checks it against a
// dense array that received the same sets.
func TestCOOSetRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		shape := []int64{int64(1 + rng.IntN(9)), int64(1 + rng.IntN(9)), int64(1 + rng.IntN(3))}
		c := sparse.NewCOO[int64](shape...)
		d := ndarray.New[int64](shape...)
		for range rng.IntN(200) {
			idx := []int64{rng.Int64N(shape[0]), rng.Int64N(shape[1]), rng.Int64N(shape[2])}
			v := rng.Int64N(1000) + 1
			c.Set(v, idx...)
			d.Set(v, idx...)
			require.Equal(t, v, c.Get(idx...))
		}
		require.True(t, d.Equal(dense(c.ToDense())), "trial %d", trial)
		require.True(t, sparse.Equal[int64](d, c))
		require.Equal(t, sparse.FromDense(d).NNZ(), c.NNZ())
		c.Canonicalize()
		require.True(t, c.IsCanonical())
		require.True(t, d.Equal(dense(c.ToDense())))
	}
}

// TestDuplicates pins the documented choice: the later entry of a duplicated coordinate wins,
// in Get, Values, ToDense, conversions and Canonicalize.
func TestDuplicates(t *testing.T) {
	c, err := sparse.MakeCOO(ndarray.Shape{2, 3}, sparse.Int64Indices([]int64{1, 2, 0, 0, 1, 2}), []float32{1, 2, 3})
	require.NoError(t, err)
	assert.False(t, c.IsCanonical())
	assert.EqualValues(t, 3, c.NNZ(), "NNZ counts stored values")
	assert.Equal(t, float32(3), c.Get(1, 2))
	want := []float32{2, 0, 0, 0, 0, 3}
	assert.Equal(t, want, dense(c.ToDense()).Data())
	assert.Equal(t, want, slices.Collect(c.Values()))
	csr, err := c.ToCSR()
	require.NoError(t, err)
	assert.Equal(t, want, dense(csr.ToDense()).Data())
	assert.EqualValues(t, 2, csr.NNZ())
	c.Canonicalize()
	assert.Equal(t, []int64{0, 0, 1, 2}, c.Indices().Int64())
	assert.Equal(t, []float32{2, 3}, c.Data())
}

func TestMakeValidation(t *testing.T) {
	i32 := func(v ...int32) sparse.Indices { return sparse.Int32Indices(v) }
	i64 := func(v ...int64) sparse.Indices { return sparse.Int64Indices(v) }
	vals := func(n int) []float64 { return make([]float64, n) }
	for _, tc := range []struct {
		name string
		make func() error
		want string
	}{
		{"coo index negative", func() error { _, err := sparse.MakeCOO(ndarray.Shape{2, 2}, i32(0, -1), vals(1)); return err }, "coordinate -1 of dimension 1"},
		{"coo index past dim", func() error { _, err := sparse.MakeCOO(ndarray.Shape{2, 2}, i32(2, 0), vals(1)); return err }, "coordinate 2 of dimension 0"},
		{"coo short indices", func() error { _, err := sparse.MakeCOO(ndarray.Shape{2, 2}, i32(1), vals(1)); return err }, "1 coordinates for 1 values of rank 2"},
		{"coo negative shape", func() error { _, err := sparse.MakeCOO(ndarray.Shape{-2, 2}, i32(), vals(0)); return err }, "dimension 0 is -2"},
		{"csr rank 3", func() error {
			_, err := sparse.MakeCSR(ndarray.Shape{1, 1, 1}, i32(0, 0), i32(), vals(0))
			return err
		}, "rank 2"},
		{"csr indptr length", func() error { _, err := sparse.MakeCSR(ndarray.Shape{2, 2}, i32(0, 1), i32(0), vals(1)); return err }, "2 pointers for 2 lines, want 3"},
		{"csr indptr first", func() error { _, err := sparse.MakeCSR(ndarray.Shape{2, 2}, i32(1, 1, 1), i32(0), vals(1)); return err }, "starts at 1"},
		{"csr indptr decreasing", func() error {
			_, err := sparse.MakeCSR(ndarray.Shape{2, 2}, i32(0, 2, 1), i32(0, 1), vals(2))
			return err
		}, "decreases at 2"},
		{"csr indptr last", func() error {
			_, err := sparse.MakeCSR(ndarray.Shape{2, 2}, i32(0, 1, 1), i32(0, 1), vals(2))
			return err
		}, "ends at 1, want 2"},
		{"csr column past", func() error { _, err := sparse.MakeCSR(ndarray.Shape{2, 2}, i32(0, 1, 1), i32(2), vals(1)); return err }, "indices[0] = 2 is outside [0, 2)"},
		{"csc row past", func() error {
			_, err := sparse.MakeCSC(ndarray.Shape{2, 3}, i32(0, 1, 1, 1), i32(2), vals(1))
			return err
		}, "indices[0] = 2 is outside [0, 2)"},
		{"csr mixed types", func() error { _, err := sparse.MakeCSR(ndarray.Shape{1, 1}, i32(0, 1), i64(0), vals(1)); return err }, "one type for both"},
		{"csf axis order", func() error {
			_, err := sparse.MakeCSF(ndarray.Shape{2, 2}, []int{0, 0}, []sparse.Indices{i32(0, 1)}, []sparse.Indices{i32(0), i32(0)}, vals(1))
			return err
		}, "not a permutation"},
		{"csf buffer counts", func() error {
			_, err := sparse.MakeCSF(ndarray.Shape{2, 2}, []int{0, 1}, nil, []sparse.Indices{i32(0), i32(0)}, vals(1))
			return err
		}, "0 pointer and 2 index arrays for rank 2"},
		{"csf indptr past next level", func() error {
			_, err := sparse.MakeCSF(ndarray.Shape{2, 2}, []int{0, 1}, []sparse.Indices{i32(0, 2)}, []sparse.Indices{i32(0), i32(0)}, vals(1))
			return err
		}, "ends at 2, want 1"},
		{"csf indptr decreasing", func() error {
			_, err := sparse.MakeCSF(ndarray.Shape{3, 2}, []int{0, 1}, []sparse.Indices{i32(0, 2, 1)}, []sparse.Indices{i32(0, 1), i32(0)}, vals(1))
			return err
		}, "decreases"},
		{"csf leaves", func() error {
			_, err := sparse.MakeCSF(ndarray.Shape{2, 2}, []int{0, 1}, []sparse.Indices{i32(0, 1)}, []sparse.Indices{i32(0), i32(0)}, vals(2))
			return err
		}, "1 nodes for 2 values"},
		{"csf index past", func() error {
			_, err := sparse.MakeCSF(ndarray.Shape{2, 2}, []int{1, 0}, []sparse.Indices{i32(0, 1)}, []sparse.Indices{i32(0), i32(5)}, vals(1))
			return err
		}, "level 1 indices[0] = 5"},
		{"csf rank 0", func() error { _, err := sparse.MakeCSF(ndarray.Shape{}, nil, nil, nil, vals(0)); return err }, "rank 1 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.make()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.name != "coo negative shape" {
				assert.ErrorIs(t, err, sparse.ErrInvalid)
			} else {
				assert.ErrorIs(t, err, ndarray.ErrShape)
			}
		})
	}
}

func TestCSRFormats(t *testing.T) {
	// The 3×4 matrix [[0 1 0 2] [0 0 0 0] [3 0 4 0]].
	csr, err := sparse.MakeCSR(ndarray.Shape{3, 4}, sparse.Int32Indices([]int32{0, 2, 2, 4}), sparse.Int32Indices([]int32{3, 1, 0, 2}), []int16{2, 1, 3, 4})
	require.NoError(t, err)
	want := []int16{0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 0}
	assert.Equal(t, want, dense(csr.ToDense()).Data())
	assert.Equal(t, want, slices.Collect(csr.Values()), "unsorted columns within a row")
	assert.Equal(t, []int64{0, 2, 2, 4}, csr.RowSplits())
	sorted := csr.ToCSR()
	assert.Equal(t, []int32{1, 3, 0, 2}, sorted.Indices().Int32())
	csc := csr.ToCSC()
	assert.Equal(t, []int32{0, 1, 2, 3, 4}, csc.Indptr().Int32())
	assert.Equal(t, []int32{2, 0, 2, 0}, csc.Indices().Int32())
	assert.Equal(t, []int16{3, 1, 4, 2}, csc.Data())
	assert.Equal(t, int16(4), csc.Get(2, 2))
	assert.True(t, csc.SetStored(9, 2, 2))
	assert.False(t, csc.SetStored(9, 1, 1))
	assert.Equal(t, int16(9), csc.Get(2, 2))
	f, err := csr.ToCSF(1, 0)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 0}, f.AxisOrder())
	assert.Equal(t, []int32{0, 1, 2, 3}, f.Indices(0).Int32())
	assert.Equal(t, want, dense(f.ToDense()).Data())
	_, err = csr.ToCSF(0, 0)
	assert.ErrorIs(t, err, sparse.ErrInvalid)
	assert.PanicsWithValue(t, "sparse: CSR.SetStored: array is read-only", func() { csr.AsReadOnly().SetStored(1, 0, 0) })
}

func TestCSFStructure(t *testing.T) {
	// Arrow's documentation example of a CSF tensor, shape [2, 3, 4, 5] with axis order
	// [0 1 2 3]: X[0,0,0,1]=1, X[0,0,0,2]=2, X[0,1,0,0]=3, X[0,1,0,2]=4, X[0,1,1,0]=5,
	// X[1,1,1,0]=6, X[1,1,1,1]=7, X[1,1,1,2]=8.
	c := sparse.NewCOO[int64](2, 3, 4, 5)
	for i, idx := range [][]int64{{0, 0, 0, 1}, {0, 0, 0, 2}, {0, 1, 0, 0}, {0, 1, 0, 2}, {0, 1, 1, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}, {1, 1, 1, 2}} {
		c.Set(int64(i+1), idx...)
	}
	f, err := c.ToCSF()
	require.NoError(t, err)
	ints := func(x sparse.Indices) []int64 { return x.AsInt64() }
	assert.Equal(t, []int64{0, 2, 3}, ints(f.Indptr(0)))
	assert.Equal(t, []int64{0, 1, 3, 4}, ints(f.Indptr(1)))
	assert.Equal(t, []int64{0, 2, 4, 5, 8}, ints(f.Indptr(2)))
	assert.Equal(t, []int64{0, 1}, ints(f.Indices(0)))
	assert.Equal(t, []int64{0, 1, 1}, ints(f.Indices(1)))
	assert.Equal(t, []int64{0, 0, 1, 1}, ints(f.Indices(2)))
	assert.Equal(t, []int64{1, 2, 0, 2, 0, 0, 1, 2}, ints(f.Indices(3)))
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, f.Data())
	assert.Equal(t, int64(7), f.Get(1, 1, 1, 1))
	assert.Equal(t, int64(0), f.Get(1, 1, 1, 3))
}

func TestTFSparse(t *testing.T) {
	c := sparse.NewCOO[float32](3, 4)
	c.Set(2, 2, 1)
	c.Set(1, 0, 3)
	tf := c.TFSparse()
	assert.Equal(t, []int64{0, 3, 2, 1}, tf.Indices)
	assert.Equal(t, []float32{1, 2}, tf.Values)
	assert.Equal(t, []int64{3, 4}, tf.DenseShape)

	back, err := sparse.FromTFSparse(tf.Indices, tf.Values, tf.DenseShape, true)
	require.NoError(t, err)
	again := back.TFSparse()
	assert.Same(t, &tf.Indices[0], &again.Indices[0], "a canonical int64 COO is viewed, not copied")
	_, err = sparse.FromTFSparse([]int64{2, 1, 0, 3}, []float32{1, 2}, []int64{3, 4}, true)
	assert.ErrorIs(t, err, sparse.ErrInvalid)
	_, err = sparse.FromTFSparse([]int64{0, 3, 0, 3}, []float32{1, 2}, []int64{3, 4}, true)
	assert.ErrorIs(t, err, sparse.ErrInvalid, "duplicates are not canonical")
	_, err = sparse.FromTFSparse([]int64{0, 4}, []float32{1}, []int64{3, 4}, false)
	assert.ErrorIs(t, err, sparse.ErrInvalid)
}

// TestUnorderedToCSR converts matrices built by random sets (out of order, with repeated
// coordinates) to CSR through the counting-sort path and compares with the dense result.
func TestUnorderedToCSR(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 100 {
		rows, cols := int64(1+rng.IntN(12)), int64(1+rng.IntN(12))
		d := ndarray.New[float32](rows, cols)
		var coords []int64
		var values []float32
		for range rng.IntN(60) {
			r, c, v := rng.Int64N(rows), rng.Int64N(cols), float32(1+rng.IntN(9))
			coords = append(coords, r, c)
			values = append(values, v)
			d.Set(v, r, c) // later entries win, as in the COO
		}
		coo, err := sparse.MakeCOO(ndarray.Shape{rows, cols}, sparse.Int64Indices(coords), values)
		require.NoError(t, err)
		csr, err := coo.ToCSR()
		require.NoError(t, err)
		require.True(t, d.Equal(dense(csr.ToDense())), "trial %d", trial)
		require.Equal(t, sparse.FromDense(d).NNZ(), csr.NNZ(), "one entry per coordinate")
		require.Equal(t, csr.Indices().AsInt64(), csr.ToCSR().Indices().AsInt64(), "columns sorted within rows")
	}
}

// TestConcurrentGet reads one COO from many goroutines while its index is built lazily: run
// under -race.
func TestConcurrentGet(t *testing.T) {
	c, err := sparse.MakeCOO(ndarray.Shape{100, 100}, sparse.Int32Indices([]int32{5, 5, 1, 1, 99, 0, 5, 5}), []int16{1, 2, 3, 4})
	require.NoError(t, err)
	done := make(chan int16)
	for range 16 {
		go func() { done <- c.Get(5, 5) + c.Get(1, 1) + c.Get(99, 0) + c.Get(0, 0) }()
	}
	for range 16 {
		assert.Equal(t, int16(4+2+3), <-done)
	}
}

// dense returns d, panicking on an error: for tests whose arrays are far within the limit.
func dense[T ndarray.Element](d *ndarray.Dense[T], err error) *ndarray.Dense[T] {
	if err != nil {
		panic(err)
	}
	return d
}

func TestDenseFormIsBounded(t *testing.T) {
	c := sparse.NewCOO[float32](1895825411, 4) // the hostile shape: 4 stored values, 60 GB dense
	c.Set(1, 0, 0)
	_, err := c.ToDense()
	require.ErrorIs(t, err, sparse.ErrTooLarge)
	assert.ErrorIs(t, err, limits.ErrExceeded)
	assert.ErrorContains(t, err, "shape (1895825411, 4) has 7583301644 elements, above the limit of 268435456")
	_, err = c.DenseArray(0)
	assert.ErrorIs(t, err, sparse.ErrTooLarge, "0 means the default limit")
	_, err = c.ToCSR()
	assert.ErrorIs(t, err, sparse.ErrTooLarge, "1895825412 row pointers are a dense form too")
	assert.ErrorContains(t, err, "needs 1895825412 pointers")
	_, err = c.ToCSC()
	assert.NoError(t, err, "5 column pointers are fine")
	f, err := c.ToCSF()
	require.NoError(t, err, "CSF pointers follow the stored values")
	_, err = f.ToDense()
	assert.ErrorIs(t, err, sparse.ErrTooLarge)

	small := sparse.NewCOO[float32](3, 4)
	small.Set(2, 1, 1)
	_, err = small.DenseArray(11)
	assert.ErrorIs(t, err, sparse.ErrTooLarge, "a limit below the size refuses")
	d, err := small.DenseArray(12)
	require.NoError(t, err)
	assert.Equal(t, float32(2), d.(*ndarray.Dense[float32]).Get(1, 1))
	assert.NoError(t, sparse.CheckDense(ndarray.Shape{3, 4}, 12))
}

// TestDenseLimitErrorSaysWhatItNeeds: CheckDense's error is a *limits.ExceededError of
// MaxDenseElements telling the elements a dense form needs and the limit it is above — what a
// caller setting the limit names — and a shape whose elements an int64 cannot count is refused as such, never let
// through by a product that wraps around.
func TestDenseLimitErrorSaysWhatItNeeds(t *testing.T) {
	for _, tc := range []struct {
		shape           ndarray.Shape
		max             int64
		elements, limit int64
		text            string
	}{
		{ndarray.Shape{3, 1e12}, 0, 3e12, 1 << 28, "shape (3, 1000000000000) has 3000000000000 elements, above the limit of 268435456"},
		{ndarray.Shape{10, 10}, 99, 100, 99, "shape (10, 10) has 100 elements, above the limit of 99"},
		{ndarray.Shape{1 << 40, 1 << 40}, 0, -1, 1 << 28, "shape (1099511627776, 1099511627776) has more elements than an int64 counts"},
		{ndarray.Shape{1 << 32, 1 << 32, 1 << 32}, 1 << 62, -1, 1 << 62, "more elements than an int64 counts, above the limit of 4611686018427387904"},
	} {
		err := sparse.CheckDense(tc.shape, tc.max)
		var dl *limits.ExceededError
		require.ErrorAs(t, err, &dl, "%v", tc.shape)
		assert.Equal(t, "MaxDenseElements", dl.Field)
		assert.ErrorIs(t, err, sparse.ErrTooLarge)
		assert.ErrorIs(t, err, limits.ErrExceeded)
		assert.Equal(t, tc.elements, dl.Needs)
		assert.Equal(t, tc.elements, sparse.DenseElements(tc.shape))
		assert.Equal(t, tc.limit, dl.Limit, "0: the default")
		assert.Contains(t, err.Error(), tc.text)
	}
	require.NoError(t, sparse.CheckDense(ndarray.Shape{1 << 40, 1 << 40, 0}, 0), "no element")
	require.NoError(t, sparse.CheckDense(ndarray.Shape{4, 4}, 16))
}
