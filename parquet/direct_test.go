package parquet

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybrid encodes levels as RLE/bit-packed hybrid runs: each run a value and a count, a count
// below zero a bit-packed group of the values given.
func rleRun(value, count int) []byte {
	return append(binary.AppendUvarint(nil, uint64(count)<<1), byte(value))
}

func packedRun(width int, values ...int) []byte {
	groups := (len(values) + 7) / 8
	out := binary.AppendUvarint(nil, uint64(groups)<<1|1)
	packed := make([]byte, groups*width)
	for i, v := range values {
		for b := range width {
			if v>>b&1 == 1 {
				bit := i*width + b
				packed[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	return append(out, packed...)
}

// TestLevelCheck: the levels of lists of 4 values (rows of two lists of two, for nested
// lists) are recognised however a writer cuts them into runs; anything else is not.
func TestLevelCheck(t *testing.T) {
	flat := levelCheck{max: 1, rep: true, periods: periodsOf([]int64{4})}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	assert.True(t, flat.check(cat(packedRun(1, 0, 1, 1, 1, 0, 1, 1, 1)), 8, 0))
	assert.True(t, flat.check(cat(rleRun(0, 1), rleRun(1, 3), rleRun(0, 1), rleRun(1, 3)), 8, 0))
	assert.True(t, flat.check(cat(rleRun(1, 2), rleRun(0, 1), rleRun(1, 3)), 6, 2), "a page starting inside a row")
	assert.True(t, flat.check(cat(packedRun(1, 0, 1, 1, 1, 0, 1)), 6, 0), "the last group's padding")
	assert.False(t, flat.check(cat(rleRun(1, 4)), 4, 0), "a row without its start")
	assert.False(t, flat.check(cat(rleRun(0, 1), rleRun(1, 4)), 5, 0), "a list of 5")
	assert.False(t, flat.check(cat(packedRun(1, 0, 1, 1, 0)), 4, 0), "a list of 3")
	assert.False(t, flat.check(cat(rleRun(0, 1), rleRun(1, 3)), 8, 0), "levels missing")
	assert.False(t, flat.check([]byte{0x00}, 1, 0), "a run of none")
	assert.False(t, flat.check([]byte{0x80}, 1, 0), "a varint cut short")
	assert.False(t, flat.check(cat(packedRun(1, 0, 1, 1, 1))[:1], 4, 0), "a group cut short")
	assert.False(t, flat.check(cat(rleRun(2, 1)), 1, 0), "a level above the max")

	nested := levelCheck{max: 2, rep: true, periods: periodsOf([]int64{2, 2})}
	assert.True(t, nested.check(packedRun(2, 0, 2, 1, 2, 0, 2, 1, 2), 8, 0))
	assert.True(t, nested.check(cat(rleRun(0, 1), rleRun(2, 1), rleRun(1, 1), rleRun(2, 1)), 4, 0))
	assert.False(t, nested.check(packedRun(2, 0, 2, 2, 2), 4, 0))

	defs := levelCheck{max: 3}
	assert.True(t, defs.check(rleRun(3, 100), 100, 0))
	assert.True(t, defs.check(packedRun(2, 3, 3, 3), 3, 7))
	assert.False(t, defs.check(rleRun(2, 100), 100, 0), "a null")
	assert.False(t, defs.check(packedRun(2, 3, 1, 3), 3, 0), "a null")
	assert.True(t, levelCheck{}.check(nil, 5, 0), "no levels for a required column")
	rest, ok := defs.checkPrefixed(cat([]byte{2, 0, 0, 0}, rleRun(3, 9), []byte("values")), 9, 0)
	assert.True(t, ok)
	assert.Equal(t, "values", string(rest))
	_, ok = defs.checkPrefixed([]byte{9, 0, 0, 0, 1}, 1, 0)
	assert.False(t, ok, "a length past the page")
}

// TestRunEncoderRoundTrips encodes patterns of levels in the RLE/bit-packing hybrid and reads
// them back with hybridRuns: long runs, short runs bit-packed in groups (completed from the
// long run after them), fewer than 8 short levels before a long run kept as RLE runs, and the
// padding of the last group, at bit widths 1 to 4.
func TestRunEncoderRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, maxLevel := range []int{1, 2, 3, 7, 15} {
		for trial := range 200 {
			var levels []int
			for range 1 + rng.IntN(40) {
				v, n := rng.IntN(maxLevel+1), 1+rng.IntN(4)
				if rng.IntN(4) == 0 {
					n = 8 + rng.IntN(40)
				}
				for range n {
					levels = append(levels, v)
				}
			}
			var e runEncoder
			e.reset(maxLevel)
			for i := 0; i < len(levels); {
				j := i
				for j < len(levels) && levels[j] == levels[i] {
					j++
				}
				e.add(levels[i], int64(j-i))
				i = j
			}
			e.flush()
			var got []int
			require.True(t, hybridRuns(e.b, bits.Len(uint(maxLevel)), int64(len(levels)), func(v int, count int64) bool {
				for range count {
					got = append(got, v)
				}
				return true
			}), "max %d trial %d", maxLevel, trial)
			require.Equal(t, levels, got, "max %d trial %d", maxLevel, trial)
		}
	}
	// a tensor row's levels (0, then 255 ones) stay two RLE runs
	var e runEncoder
	e.reset(1)
	e.add(0, 1)
	e.add(1, 255)
	e.flush()
	require.Equal(t, []byte{2, 0, 0xfe, 0x03, 1}, e.b)
}
