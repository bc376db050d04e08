package saturate_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ndarrow/ndarrow/internal/saturate"
)

func TestAddStopsAtMaxInt64(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b int64
		want int64
	}{
		{"zeros", 0, 0, 0},
		{"small", 3, 4, 7},
		{"max plus zero", math.MaxInt64, 0, math.MaxInt64},
		{"zero plus max", 0, math.MaxInt64, math.MaxInt64},
		{"exactly max", math.MaxInt64 - 1, 1, math.MaxInt64},
		{"one past max", math.MaxInt64, 1, math.MaxInt64},
		{"one past max the other way", 1, math.MaxInt64, math.MaxInt64},
		{"max plus max", math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{"halves past max", 1 << 62, 1 << 62, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, saturate.Add(c.a, c.b))
		})
	}
}

func TestMulStopsAtMaxInt64(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b int64
		want int64
	}{
		{"zeros", 0, 0, 0},
		{"zero times max", 0, math.MaxInt64, 0},
		{"max times zero", math.MaxInt64, 0, 0},
		{"small", 6, 7, 42},
		{"one times max", 1, math.MaxInt64, math.MaxInt64},
		{"max times one", math.MaxInt64, 1, math.MaxInt64},
		{"just under max", 2, math.MaxInt64 / 2, math.MaxInt64 - 1},
		{"just past max", 2, math.MaxInt64/2 + 1, math.MaxInt64},
		{"2^63 in 64 bits", 1 << 32, 1 << 31, math.MaxInt64},
		{"past int64 within uint64", 3, 1 << 62, math.MaxInt64},
		{"past 64 bits", 1 << 40, 1 << 40, math.MaxInt64},
		{"max times max", math.MaxInt64, math.MaxInt64, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, saturate.Mul(c.a, c.b))
		})
	}
}
