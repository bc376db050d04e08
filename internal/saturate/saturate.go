// Package saturate adds and multiplies non-negative int64 counts (bytes, rows, elements) that
// stop at math.MaxInt64 instead of wrapping: a cost summed from hostile sizes stays "too much"
// and is refused, never turned negative or small.
package saturate

import (
	"math"
	"math/bits"
)

// Add returns a+b for a, b ≥ 0, or math.MaxInt64 past it.
func Add(a, b int64) int64 { return a + min(b, math.MaxInt64-a) }

// Mul returns a×b for a, b ≥ 0, or math.MaxInt64 past it.
func Mul(a, b int64) int64 {
	if hi, lo := bits.Mul64(uint64(a), uint64(b)); hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return a * b
}
