package ndarray

import (
	"math"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow/float16"
)

// HalfToFloat64 returns the exact value of an IEEE 754 binary16 number, subnormals, infinities
// and NaN included (arrow-go's float16.Num.Float32 reads subnormals as float32 subnormals and
// so gets them wrong).
func HalfToFloat64(h float16.Num) float64 {
	bits := h.Uint16()
	sign := 1.0
	if bits&0x8000 != 0 {
		sign = -1
	}
	exp := int(bits>>10) & 0x1f
	frac := float64(bits & 0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac · 2^-24
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// halfFromFloat64 rounds f to the nearest binary16 number, ties to even: beyond ±65504 (after
// rounding) to ±Inf, below the smallest subnormal to ±0, NaN to NaN (arrow-go's float16.New
// truncates, and flushes subnormals to zero).
func halfFromFloat64(f float64) float16.Num {
	var sign uint16
	if math.Signbit(f) {
		sign, f = 0x8000, -f
	}
	switch {
	case math.IsNaN(f):
		return float16.FromBits(0x7e00)
	case math.IsInf(f, 0):
		return float16.FromBits(sign | 0x7c00)
	case f == 0:
		return float16.FromBits(sign)
	}
	// The number of units of the last place at f's scale: 2^-24 below 2^-14 (subnormals),
	// 2^(e-10) for f in [2^e, 2^(e+1)).
	_, e := math.Frexp(f) // f = m · 2^e, m in [0.5, 1): f in [2^(e-1), 2^e)
	e--
	if e < -14 {
		e = -14
	}
	ulp := math.Ldexp(1, e-10)
	units := math.RoundToEven(f / ulp) // exact: f / ulp is a power-of-two scaling
	// units is at most 2048 (a carry into the next binade); the encoding absorbs the carry.
	var bits uint64
	if e == -14 && units < 1024 {
		bits = uint64(units) // subnormal (or zero)
	} else {
		if units >= 2048 {
			units /= 2
			e++
		}
		if e > 15 {
			return float16.FromBits(sign | 0x7c00)
		}
		bits = uint64(e+15)<<10 | (uint64(units) - 1024)
	}
	return float16.FromBits(sign | uint16(bits))
}

// formatFloat is strconv.FormatFloat for bits 16 too: with prec -1, the fewest digits that
// read back as the same float16 (0.1, not float32's 0.099975586).
func formatFloat(x float64, format byte, prec, bits int) string {
	if bits != 16 {
		return strconv.FormatFloat(x, format, prec, bits)
	}
	if prec >= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, format, prec, 32)
	}
	want := halfFromFloat64(x)
	for digits := 0; digits < 17; digits++ {
		y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'e', digits, 64), 64)
		if halfFromFloat64(y) == want {
			return strconv.FormatFloat(y, format, -1, 64)
		}
	}
	return strconv.FormatFloat(x, format, -1, 64)
}
