package ndarray

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
)

// verbCase is one line of testdata/verbs.jsonl (gen_verbs.py): an operation, its operands and
// what NumPy gives.
type verbCase struct {
	Op       string       `json:"op"`
	A        *verbOperand `json:"a"`
	B        *verbOperand `json:"b"`
	View     string       `json:"view"`
	Axis     *int         `json:"axis"`
	Want     verbOperand  `json:"want"`
	Num      int64        `json:"num"`
	Endpoint bool         `json:"endpoint"`
	RTol     float64      `json:"rtol"`
	ATol     float64      `json:"atol"`
	DDOF     int          `json:"ddof"`
	// Formula says the operands are made, not listed: "mod11" is element (i, j)
	// ((7i + 3j) mod 11 - 5) / 4 (of an integer dtype, not divided by 4).
	Formula string `json:"formula"`
}

type verbOperand struct {
	DType string   `json:"dtype"`
	Shape []int64  `json:"shape"`
	Data  []string `json:"data"`
}

// formulaOf returns the operand of a case made by its formula.
func formulaOf[T Real](o verbOperand) *Dense[T] {
	return FromFunc(func(i []int64) T {
		v := (7*i[0]+3*i[1])%11 - 5
		if isFloat[T]() {
			return T(float64(v) / 4)
		}
		return T(v)
	}, o.Shape...)
}

// denseOf returns the operand as an array of T.
func denseOf[T Real](t *testing.T, o verbOperand) *Dense[T] {
	vals := make([]T, len(o.Data))
	for i, s := range o.Data {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			n, ierr := strconv.ParseInt(s, 10, 64)
			require.NoError(t, ierr, s)
			f = float64(n)
		}
		vals[i] = T(f)
	}
	d, err := FromSlice(vals, o.Shape...)
	require.NoError(t, err)
	return d
}

// floatsOf returns the operand's values as float64s.
func floatsOf(t *testing.T, o verbOperand) []float64 { return denseOf[float64](t, o).Ravel() }

// requireValues requires got to hold want's shape and values: equal, or within rtol for floats
// (NaN matching NaN).
func requireValues(t *testing.T, want verbOperand, gotShape Shape, got []float64, rtol float64, what string) {
	t.Helper()
	require.Equal(t, Shape(want.Shape), gotShape, what)
	w := floatsOf(t, want)
	for i := range w {
		switch {
		case math.IsNaN(w[i]):
			require.True(t, math.IsNaN(got[i]), "%s: element %d: %v, NumPy NaN", what, i, got[i])
		case rtol == 0:
			require.Equal(t, w[i], got[i], "%s: element %d", what, i)
		default:
			require.InDelta(t, w[i], got[i], rtol*math.Max(1, math.Abs(w[i])), "%s: element %d", what, i)
		}
	}
}

func toFloats[T Real](d *Dense[T]) []float64 {
	out := make([]float64, 0, d.Size())
	for v := range d.Values() {
		out = append(out, float64(v))
	}
	return out
}

// runVerb checks one case on arrays of T.
func runVerb[T Real](t *testing.T, c verbCase, rtol float64) {
	what := fmt.Sprintf("%s %s%v view %q axis %v", c.Op, c.A.DType, c.A.Shape, c.View, c.Axis)
	operand := denseOf[T]
	if c.Formula == "mod11" {
		operand = func(_ *testing.T, o verbOperand) *Dense[T] { return formulaOf[T](o) }
	}
	a := operand(t, *c.A)
	switch c.View {
	case "T":
		a = a.Transpose()
	case "step2":
		idx := make([]Index, a.Rank())
		for i := range idx {
			idx[i] = All()
		}
		idx[len(idx)-1] = Step(2)
		var err error
		a, err = a.Slice(idx...)
		require.NoError(t, err)
	}
	exact := 0.0
	if isFloat[T]() {
		exact = rtol
	}
	scalar := func(v float64) { requireValues(t, c.Want, Shape{}, []float64{v}, exact, what) }
	switch c.Op {
	case "var", "std":
		what += fmt.Sprintf(" ddof %d", c.DDOF)
		if c.Axis == nil {
			f := map[string]func(*Dense[T], int) float64{"var": Var[T], "std": Std[T]}[c.Op]
			requireValues(t, c.Want, Shape{}, []float64{f(a, c.DDOF)}, 1e-12, what)
			return
		}
		f := map[string]func(*Dense[T], int, int) (*Dense[float64], error){"var": VarAxis[T], "std": StdAxis[T]}[c.Op]
		r, err := f(a, *c.Axis, c.DDOF)
		require.NoError(t, err)
		requireValues(t, c.Want, r.Shape(), r.Ravel(), 1e-12, what)
		return
	case "matmul", "dot":
		b := operand(t, *c.B)
		f := map[string]func(a, b *Dense[T]) (*Dense[T], error){"matmul": MatMul[T], "dot": Dot[T]}[c.Op]
		r, err := f(a, b)
		require.NoError(t, err, what)
		tol := 0.0
		if isFloat[T]() { // float32's sums in another order than BLAS's
			tol = map[bool]float64{true: 1e-12, false: 1e-4}[rtol < 1e-9]
		}
		requireValues(t, c.Want, r.Shape(), toFloats(r), tol, what)
		return
	}
	if c.Axis == nil {
		switch c.Op {
		case "sum":
			scalar(float64(Sum(a)))
			return
		case "mean":
			requireValues(t, c.Want, Shape{}, []float64{Mean(a)}, max(rtol, 1e-12), what)
			return
		case "min", "max":
			f := Min[T]
			if c.Op == "max" {
				f = Max[T]
			}
			v, err := f(a)
			require.NoError(t, err)
			scalar(float64(v))
			return
		case "argmin", "argmax":
			f := ArgMin[T]
			if c.Op == "argmax" {
				f = ArgMax[T]
			}
			i, err := f(a)
			require.NoError(t, err)
			requireValues(t, c.Want, Shape{}, []float64{float64(i)}, 0, what)
			return
		}
	}
	axis := 0
	if c.Axis != nil {
		axis = *c.Axis
	}
	var shape Shape
	var got []float64
	switch c.Op {
	case "sum", "min", "max":
		f := map[string]func(*Dense[T], int) (*Dense[T], error){"sum": SumAxis[T], "min": MinAxis[T], "max": MaxAxis[T]}[c.Op]
		r, err := f(a, axis)
		require.NoError(t, err)
		shape, got = r.Shape(), toFloats(r)
	case "mean":
		r, err := MeanAxis(a, axis)
		require.NoError(t, err)
		requireValues(t, c.Want, r.Shape(), r.Ravel(), max(rtol, 1e-12), what)
		return
	case "argmin", "argmax":
		f := ArgMinAxis[T]
		if c.Op == "argmax" {
			f = ArgMaxAxis[T]
		}
		r, err := f(a, axis)
		require.NoError(t, err)
		requireValues(t, c.Want, r.Shape(), toFloats(r), 0, what)
		return
	case "add", "sub", "mul", "div":
		b := denseOf[T](t, *c.B)
		f := map[string]func(a, b *Dense[T]) (*Dense[T], error){"add": Add[T], "sub": Sub[T], "mul": Mul[T], "div": Div[T]}[c.Op]
		r, err := f(a, b)
		require.NoError(t, err)
		shape, got = r.Shape(), toFloats(r)
		// the in-place form gives the same where the result has a's shape
		if a.Shape().Equal(r.Shape()) {
			dst := a.Clone()
			in := map[string]func(dst, b *Dense[T]) error{"add": AddInPlace[T], "sub": SubInPlace[T], "mul": MulInPlace[T], "div": DivInPlace[T]}[c.Op]
			require.NoError(t, in(dst, b))
			requireValues(t, c.Want, dst.Shape(), toFloats(dst), exact, what+" in place")
		}
	default:
		t.Fatalf("unknown op %q", c.Op)
	}
	requireValues(t, c.Want, shape, got, exact, what)
}

// TestVerbsMatchNumPy: every case of testdata/verbs.jsonl (gen_verbs.py) — sums, means,
// minima, maxima and their positions, over everything and along each axis, of contiguous,
// transposed and strided views; broadcasting arithmetic; linspace, eye, allclose — gives what
// NumPy gives.
func TestVerbsMatchNumPy(t *testing.T) {
	f, err := os.Open("testdata/verbs.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	ops := map[string]int{}
	for sc.Scan() {
		var c verbCase
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		ops[c.Op]++
		switch c.Op {
		case "linspace":
			ab := floatsOf(t, *c.A)
			d, err := Linspace(ab[0], ab[1], c.Num, c.Endpoint)
			require.NoError(t, err)
			requireValues(t, c.Want, d.Shape(), d.Ravel(), 1e-15, fmt.Sprint("linspace ", ab, c.Num, c.Endpoint))
			continue
		case "eye":
			n := int64(floatsOf(t, *c.A)[0])
			d := Eye[float64](n)
			requireValues(t, c.Want, d.Shape(), d.Ravel(), 0, fmt.Sprint("eye ", n))
			continue
		case "allclose":
			ok, err := AllClose(denseOf[float64](t, *c.A), denseOf[float64](t, *c.B), c.RTol, c.ATol)
			require.NoError(t, err)
			assert.Equal(t, floatsOf(t, c.Want)[0] == 1, ok, "allclose %v %v", c.A.Data, c.B.Data)
			continue
		}
		switch c.A.DType {
		case "float64":
			runVerb[float64](t, c, 1e-12)
		case "float32":
			runVerb[float32](t, c, 2e-6)
		case "int32":
			runVerb[int32](t, c, 0)
		case "int64":
			runVerb[int64](t, c, 0)
		case "uint8":
			runVerb[uint8](t, c, 0)
		default:
			t.Fatalf("dtype %s", c.A.DType)
		}
	}
	require.NoError(t, sc.Err())
	for _, op := range []string{"sum", "mean", "min", "max", "argmin", "argmax", "add", "sub", "mul", "div", "linspace", "eye", "allclose", "var", "std", "matmul", "dot"} {
		assert.Positive(t, ops[op], op)
	}
}

// TestVerbErrors: what has no answer is an error, not a panic.
func TestVerbErrors(t *testing.T) {
	empty := New[float64](0, 3)
	_, err := Min(empty)
	assert.ErrorIs(t, err, ErrShape)
	_, err = ArgMaxAxis(empty, 0)
	assert.ErrorIs(t, err, ErrShape)
	r, err := SumAxis(empty, 0)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0, 0}, r.Ravel(), "an empty sum is 0")
	_, err = SumAxis(empty, 2)
	assert.ErrorIs(t, err, ErrIndex)
	_, err = Add(New[float64](2, 3), New[float64](4))
	assert.ErrorIs(t, err, ErrShape)
	_, err = Div(Ones[int32](2), Zeros[int32](2))
	assert.ErrorIs(t, err, ErrDivideByZero)
	_, err = DivScalar(Ones[int32](2), 0)
	assert.ErrorIs(t, err, ErrDivideByZero)
	q, err := Div(Ones[float64](2), Zeros[float64](2))
	require.NoError(t, err)
	assert.True(t, math.IsInf(q.Get(0), 1), "floats divide by zero as IEEE says")
	_, err = Linspace(0.0, 1.0, -1, true)
	assert.ErrorIs(t, err, ErrShape)
	assert.Panics(t, func() { Apply(Ones[float64](2).AsReadOnly(), func(x float64) float64 { return x }) })
	b, err := BroadcastTo(Ones[float64](3), 2, 3)
	require.NoError(t, err)
	assert.True(t, b.ReadOnly())
	assert.Panics(t, func() { _ = AddInPlace(b, Ones[float64](3)) }, "a broadcast view is read-only")

	_, err = MatMul(Ones[float64](2, 3), Ones[float64](2, 3))
	assert.ErrorIs(t, err, ErrShape, "inner dimensions differ")
	_, err = MatMul(Full(2.0), Ones[float64](2))
	assert.ErrorIs(t, err, ErrShape, "a scalar")
	_, err = MatMul(Ones[float64](2, 2, 3), Ones[float64](3, 3, 2))
	assert.ErrorIs(t, err, ErrShape, "stacks that do not broadcast")
	_, err = Dot(Ones[float64](2, 2, 3), Ones[float64](3))
	assert.ErrorIs(t, err, ErrShape, "Dot of rank 3")
	_, err = VarAxis(Ones[float64](2), 1, 0)
	assert.ErrorIs(t, err, ErrIndex)
	assert.True(t, math.IsNaN(Var(empty, 0)), "an empty array's variance")
	assert.True(t, math.IsInf(Var(Must(FromSlice([]float64{1, 2}, 2)), 2), 1), "ddof of n: a positive sum over 0")
}

// TestInPlaceReadsBeforeWriting: dst += a view of dst reads the old values, as NumPy does.
func TestInPlaceReadsBeforeWriting(t *testing.T) {
	d := Must(FromSlice([]float64{1, 2, 3, 4}, 4))
	flipped := Must(d.Slice(Flip()))
	require.NoError(t, AddInPlace(d, flipped))
	assert.Equal(t, []float64{5, 5, 5, 5}, d.Ravel())
	m := Must(FromSlice([]int64{1, 2, 3, 4, 5, 6}, 2, 3))
	require.NoError(t, MulInPlace(m, Must(FromSlice([]int64{10, 100, 1000}, 3))))
	assert.Equal(t, []int64{10, 200, 3000, 40, 500, 6000}, m.Ravel())
	Apply(m, func(v int64) int64 { return -v })
	assert.Equal(t, int64(-6000), m.Get(1, 2))
	assert.Equal(t, []string{"-10", "-200"}, Map(Must(m.Slice(At(0), To(2))), func(v int64) string { return strconv.FormatInt(v, 10) }).Ravel())
	assert.Equal(t, []int64{-9, -199}, AddScalar(Must(m.Slice(At(0), To(2))), 1).Ravel())
}

// TestAsTypeChecked: a value the target cannot hold is an error naming it; what fits converts
// as AsType converts it.
func TestAsTypeChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		conv func() error
		ok   bool
	}{
		{"1e10 to int8", func() error { _, err := AsTypeChecked[int8](Full(1e10, 2)); return err }, false},
		{"NaN to int32", func() error { _, err := AsTypeChecked[int32](Full(math.NaN(), 1)); return err }, false},
		{"Inf to int64", func() error { _, err := AsTypeChecked[int64](Full(math.Inf(-1), 1)); return err }, false},
		{"1e300 to float32", func() error { _, err := AsTypeChecked[float32](Full(1e300, 1)); return err }, false},
		{"Inf to float32", func() error { _, err := AsTypeChecked[float32](Full(math.Inf(1), 1)); return err }, true},
		{"-1 to uint8", func() error { _, err := AsTypeChecked[uint8](Full[int16](-1, 1)); return err }, false},
		{"300 to int8", func() error { _, err := AsTypeChecked[int8](Full[int64](300, 1)); return err }, false},
		{"127.9 to int8", func() error { _, err := AsTypeChecked[int8](Full(127.9, 1)); return err }, true},
		{"128.0 to int8", func() error { _, err := AsTypeChecked[int8](Full(128.0, 1)); return err }, false},
		{"-128.5 to int8", func() error { _, err := AsTypeChecked[int8](Full(-128.5, 1)); return err }, true},
		{"2^63 to int64", func() error { _, err := AsTypeChecked[int64](Full[uint64](1<<63, 1)); return err }, false},
		{"2^63-1 to uint64", func() error { _, err := AsTypeChecked[uint64](Full[int64](math.MaxInt64, 1)); return err }, true},
		{"uint64 max to uint32", func() error { _, err := AsTypeChecked[uint32](Full[uint64](math.MaxUint64, 1)); return err }, false},
		{"int64 to float32", func() error { _, err := AsTypeChecked[float32](Full[int64](math.MaxInt64, 1)); return err }, true},
	} {
		err := tc.conv()
		if tc.ok {
			assert.NoError(t, err, tc.name)
		} else {
			assert.ErrorIs(t, err, ErrDType, tc.name)
		}
	}
	d := Must(FromSlice([]float64{1, 2.7, 1e10}, 3))
	_, err := AsTypeChecked[int16](d)
	assert.EqualError(t, err, "ndarray: AsTypeChecked float64 to int16: element 2 (1e+10) does not fit: unsupported dtype")
	got, err := AsTypeChecked[int16](Must(d.Slice(To(2))))
	require.NoError(t, err)
	assert.Equal(t, []int16{1, 2}, got.Ravel())
}

// TestSumIsAccurate: pairwise summation keeps a float32 sum of many values within float32's
// precision, where a running sum drifts.
func TestSumIsAccurate(t *testing.T) {
	const n = 1 << 20
	d := Full[float32](0.1, n)
	want := 0.1 * float64(float32(0.1)) / 0.1 * n
	got := float64(Sum(d))
	assert.InDelta(t, want, got, want*1e-6)
	running := float32(0)
	for _, v := range d.Ravel() {
		running += v
	}
	assert.Greater(t, math.Abs(float64(running)-want), math.Abs(got-want), "better than a running sum")
	// and a strided view of the same values
	x := Must(FromSlice(floats.Span(make([]float64, 1001), 0, 1000), 1001))
	assert.Equal(t, 500500.0, Sum(x))
	assert.Equal(t, 250500.0, Sum(Must(x.Slice(Step(2)))))
}
