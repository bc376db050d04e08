package ndarray

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fromTexts returns the values of texts (decimal integers, hex floats, true/false) as an
// array of dtype d, parsed with strconv alone.
func fromTexts(t *testing.T, d DType, texts []string) Array {
	t.Helper()
	ints := func(bits int) []int64 {
		out := make([]int64, len(texts))
		for i, s := range texts {
			v, err := strconv.ParseInt(s, 10, bits)
			require.NoError(t, err)
			out[i] = v
		}
		return out
	}
	uints := func(bits int) []uint64 {
		out := make([]uint64, len(texts))
		for i, s := range texts {
			v, err := strconv.ParseUint(s, 10, bits)
			require.NoError(t, err)
			out[i] = v
		}
		return out
	}
	floats := func() []float64 {
		out := make([]float64, len(texts))
		for i, s := range texts {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			out[i] = v
		}
		return out
	}
	n := int64(len(texts))
	switch d {
	case Int8:
		return vector(ints(8), func(v int64) int8 { return int8(v) }, n)
	case Int16:
		return vector(ints(16), func(v int64) int16 { return int16(v) }, n)
	case Int32:
		return vector(ints(32), func(v int64) int32 { return int32(v) }, n)
	case Int64:
		return vector(ints(64), func(v int64) int64 { return v }, n)
	case Uint8:
		return vector(uints(8), func(v uint64) uint8 { return uint8(v) }, n)
	case Uint16:
		return vector(uints(16), func(v uint64) uint16 { return uint16(v) }, n)
	case Uint32:
		return vector(uints(32), func(v uint64) uint32 { return uint32(v) }, n)
	case Uint64:
		return vector(uints(64), func(v uint64) uint64 { return v }, n)
	case Float16:
		return vector(floats(), halfFromFloat64, n) // the texts are exact float16 values
	case Float32:
		return vector(floats(), func(v float64) float32 { return float32(v) }, n)
	case Float64:
		return vector(floats(), func(v float64) float64 { return v }, n)
	case Bool:
		out := make([]bool, len(texts))
		for i, s := range texts {
			out[i] = s == "true"
		}
		return Must(FromSlice(out, n))
	}
	t.Fatalf("dtype %v", d)
	return nil
}

func vector[S any, T Element](in []S, conv func(S) T, n int64) *Dense[T] {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = conv(v)
	}
	return Must(FromSlice(out, n))
}

// texts returns the elements of a as AsType formats them as strings.
func texts(t *testing.T, a Array) []string {
	t.Helper()
	s, err := ConvertTo(a, String)
	require.NoError(t, err)
	return s.(*Dense[string]).Data()
}

// TestAsTypeMatchesNumPy converts between every pair of numeric and bool types and compares
// with what NumPy's astype gives (testdata/astype.jsonl, from gen_astype.py), where NumPy
// defines the result.
func TestAsTypeMatchesNumPy(t *testing.T) {
	f, err := os.Open("testdata/astype.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	cases := 0
	for sc.Scan() {
		var c struct {
			From, To string
			In       []string `json:"in"`
			Out      []string `json:"out"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		from, err := ParseDType(c.From)
		require.NoError(t, err)
		to, err := ParseDType(c.To)
		require.NoError(t, err)
		src, want := fromTexts(t, from, c.In), fromTexts(t, to, c.Out)
		got, err := ConvertTo(src, to)
		require.NoError(t, err)
		require.Equal(t, to, got.DType())
		gotTexts, wantTexts, inTexts := texts(t, got), texts(t, want), texts(t, src)
		for i := range wantTexts {
			assert.Equal(t, wantTexts[i], gotTexts[i], "%s %s → %s", c.From, inTexts[i], c.To)
		}
		cases++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 144, cases, "every pair of 12 types")
}

// TestAsTypeRules checks the rules AsType documents beyond NumPy's: float to integer
// saturates and maps NaN to 0, strings parse and format, and a failure names the element.
func TestAsTypeRules(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	f := Must(FromSlice([]float64{nan, inf, -inf, 1e10, -1e10, 300.9, -300.9, -0.9, 0.9}, 9))
	i8, err := AsType[int8](f)
	require.NoError(t, err)
	assert.Equal(t, []int8{0, 127, -128, 127, -128, 127, -128, 0, 0}, i8.Data())
	u16, err := AsType[uint16](f)
	require.NoError(t, err)
	assert.Equal(t, []uint16{0, 65535, 0, 65535, 0, 300, 0, 0, 0}, u16.Data())
	i64, err := AsType[int64](Must(FromSlice([]float64{9.3e18, -9.3e18, math.Ldexp(1, 62)}, 3)))
	require.NoError(t, err)
	assert.Equal(t, []int64{math.MaxInt64, math.MinInt64, 1 << 62}, i64.Data())
	u64, err := AsType[uint64](Must(FromSlice([]float32{2e19, -1, 1.5e19}, 3)))
	require.NoError(t, err)
	assert.Equal(t, []uint64{math.MaxUint64, 0, uint64(float32(1.5e19))}, u64.Data())

	wrap, err := AsType[int8](Must(FromSlice([]int16{300, -129, 128}, 3)))
	require.NoError(t, err)
	assert.Equal(t, []int8{44, 127, -128}, wrap.Data(), "modulo 2^8")

	s, err := AsType[string](Must(FromSlice([]float32{0.1, 1, 1e21, float32(nan), float32(-inf)}, 5)))
	require.NoError(t, err)
	assert.Equal(t, []string{"0.1", "1", "1e+21", "NaN", "-Inf"}, s.Data())
	h, err := AsType[string](Must(FromSlice([]float16.Num{halfFromFloat64(0.1), halfFromFloat64(65504)}, 2)))
	require.NoError(t, err)
	assert.Equal(t, []string{"0.1", "65500"}, h.Data(), "float16's own shortest digits")
	b, err := AsType[string](Must(FromSlice([]bool{true, false}, 2)))
	require.NoError(t, err)
	assert.Equal(t, []string{"true", "false"}, b.Data())
	u, err := AsType[string](Must(FromSlice([]uint64{math.MaxUint64}, 1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"18446744073709551615"}, u.Data())

	parsed, err := AsType[float32](Must(FromSlice([]string{"1.5", "-0", "1e39", "NaN", "0x1p-3"}, 5)))
	require.NoError(t, err)
	assert.Equal(t, float32(1.5), parsed.Data()[0])
	assert.True(t, math.Signbit(float64(parsed.Data()[1])))
	assert.True(t, math.IsInf(float64(parsed.Data()[2]), 1), "beyond range is Inf")
	assert.True(t, math.IsNaN(float64(parsed.Data()[3])))
	assert.Equal(t, float32(0.125), parsed.Data()[4])
	bools, err := AsType[bool](Must(FromSlice([]string{"true", "0", "T"}, 3)))
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, bools.Data())

	for name, tc := range map[string]struct {
		convert func() error
		msg     string
	}{
		"not a number": {func() error {
			_, err := AsType[int32](Must(FromSlice([]string{"1", "2", "x"}, 3)))
			return err
		}, `ndarray: AsType string to int32: element 2: "x"`},
		"beyond int8": {func() error {
			_, err := AsType[int8](Must(FromSlice([]string{"128"}, 1)))
			return err
		}, `element 0: "128"`},
		"negative unsigned": {func() error {
			_, err := AsType[uint8](Must(FromSlice([]string{"-1"}, 1)))
			return err
		}, `"-1"`},
		"not a bool": {func() error {
			_, err := AsType[bool](Must(FromSlice([]string{"yes"}, 1)))
			return err
		}, `"yes"`},
		"not a float16": {func() error {
			_, err := AsType[float16.Num](Must(FromSlice([]string{"1,5"}, 1)))
			return err
		}, `"1,5"`},
		"late in a long array": {func() error {
			in := New[string](3, 400)
			for k := range in.Data() {
				in.Data()[k] = "7"
			}
			in.Set("seven", 2, 399)
			_, err := AsType[int16](in.Transpose())
			return err
		}, "element 1199"},
	} {
		err := tc.convert()
		assert.ErrorIs(t, err, ErrDType, name)
		assert.ErrorContains(t, err, tc.msg, name)
	}
}

// TestAsTypeOfViews converts strided, transposed and broadcast views into new row-major
// arrays that share nothing with their source.
func TestAsTypeOfViews(t *testing.T) {
	a := New[int32](4, 300)
	for k := range a.Data() {
		a.Data()[k] = int32(k)
	}
	view := Must(a.Slice(Flip(), Step(7))).Transpose()
	got, err := AsType[float64](view)
	require.NoError(t, err)
	assert.True(t, got.IsContiguous())
	assert.Equal(t, view.Shape(), got.Shape())
	var want []float64
	for v := range view.Values() {
		want = append(want, float64(v))
	}
	assert.Equal(t, want, got.Data())

	same, err := AsType[int32](view)
	require.NoError(t, err)
	assert.True(t, same.Equal(view))
	assert.False(t, same.SharesMemory(view), "a copy even when the type is the same")

	scalar, err := AsType[uint8](Scalar(3.7))
	require.NoError(t, err)
	assert.Equal(t, uint8(3), scalar.Get())
	empty, err := AsType[string](New[float32](0, 3))
	require.NoError(t, err)
	assert.Equal(t, Shape{0, 3}, empty.Shape())

	_, err = ConvertTo(view, DType(0))
	assert.ErrorIs(t, err, ErrDType)
}

// TestHalfConversions: every float16 reads back as itself through float64, and rounding
// from float64 is to nearest, ties to even, with subnormals, overflow and NaN.
func TestHalfConversions(t *testing.T) {
	for bits := range 1 << 16 {
		h := float16.FromBits(uint16(bits))
		v := HalfToFloat64(h)
		if h.IsNaN() {
			assert.True(t, math.IsNaN(v))
			continue
		}
		require.Equal(t, uint16(bits), halfFromFloat64(v).Uint16(), "%#04x = %v", bits, v)
		if bits&0x7fff != 0x7c00 && bits&0x7fff < 0x7bff { // the midpoint to the next one rounds to even
			next := HalfToFloat64(float16.FromBits(uint16(bits + 1)))
			mid := (v + next) / 2
			even := uint16(bits)
			if even&1 == 1 {
				even++
			}
			assert.Equal(t, even, halfFromFloat64(mid).Uint16(), "tie between %#04x and the next", bits)
		}
	}
	assert.Equal(t, uint16(0x7c00), halfFromFloat64(65520).Uint16(), "rounds past the largest: Inf")
	assert.Equal(t, uint16(0x7bff), halfFromFloat64(65519.99).Uint16())
	assert.Equal(t, uint16(0x0001), halfFromFloat64(math.Ldexp(1, -24)).Uint16(), "smallest subnormal")
	assert.Equal(t, uint16(0x0000), halfFromFloat64(math.Ldexp(1, -25)).Uint16(), "a tie rounds to even: 0")
	assert.Equal(t, uint16(0x8000), halfFromFloat64(math.Copysign(0, -1)).Uint16())
	assert.Equal(t, "0.1", formatFloat(HalfToFloat64(halfFromFloat64(0.1)), 'g', -1, 16))
}
