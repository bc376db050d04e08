package parquet

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deltaHeader is a DELTA_BINARY_PACKED header.
func deltaHeader(block, minis, total uint64, first int64) []byte {
	b := binary.AppendUvarint(nil, block)
	b = binary.AppendUvarint(b, minis)
	b = binary.AppendUvarint(b, total)
	return binary.AppendVarint(b, first)
}

// deltaValues encodes vs as DELTA_BINARY_PACKED with blocks of 128 values in 4 miniblocks,
// every delta in 8 bits (vs must step by 0..255 from the block's least step).
func deltaValues(vs []int64) []byte {
	b := deltaHeader(128, 4, uint64(len(vs)), vs[0])
	for i := 1; i < len(vs); i += 128 {
		end := min(i+128, len(vs))
		minDelta := int64(1 << 62)
		for j := i; j < end; j++ {
			minDelta = min(minDelta, vs[j]-vs[j-1])
		}
		b = binary.AppendVarint(b, minDelta)
		used := (end - i + 31) / 32
		for m := range 4 {
			if m < used {
				b = append(b, 8)
			} else {
				b = append(b, 0)
			}
		}
		for m := range used {
			for k := range 32 {
				j := i + m*32 + k
				if j < end {
					b = append(b, byte(vs[j]-vs[j-1]-minDelta))
				} else {
					b = append(b, 0)
				}
			}
		}
	}
	return b
}

func TestCheckDelta(t *testing.T) {
	vs := make([]int64, 300)
	for i := range vs {
		vs[i] = int64(i*3+(i*7)%11) - 7
	}
	good := deltaValues(vs)
	n, used, err := checkDelta(good, 300, 32)
	require.NoError(t, err)
	assert.Equal(t, int64(300), n)
	assert.Equal(t, len(good), used)
	got, err := decodeDelta(good, n)
	require.NoError(t, err)
	assert.Equal(t, vs, got)

	for _, tc := range []struct {
		name string
		b    []byte
		max  int64
		bits int
	}{
		{"empty", nil, 10, 32},
		{"block size not a multiple of 128", deltaHeader(100, 4, 1, 0), 10, 32},
		{"block larger than the bound", deltaHeader(1<<20, 4, 1, 0), 10, 32},
		{"no miniblocks", deltaHeader(128, 0, 1, 0), 10, 32},
		{"2^64-1 miniblocks", deltaHeader(128, 1<<64-1, 1, 0), 10, 32},
		{"miniblocks of 24 values", append(deltaHeader(384, 16, 1, 0), 0), 10, 32},
		{"more values than the page", deltaHeader(128, 4, 11, 0), 10, 32},
		{"values without a block", deltaHeader(128, 4, 2, 0), 10, 32},
		{"bit widths cut short", append(deltaHeader(128, 4, 2, 0), 0, 1, 1), 10, 32},
		{"a 33-bit delta of int32", append(deltaHeader(128, 4, 2, 0), 0, 33, 0, 0, 0), 10, 32},
		{"a 65-bit delta of int64", append(deltaHeader(128, 4, 2, 0), 0, 65, 0, 0, 0), 10, 64},
		{"a miniblock cut short", append(deltaHeader(128, 4, 2, 0), 0, 8, 0, 0, 0, 1, 2, 3), 10, 32},
		{"a header varint too long", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 10, 32},
		{"the good values, cut", good[:len(good)-1], 300, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := checkDelta(tc.b, tc.max, tc.bits)
			require.ErrorIs(t, err, errDelta)
		})
	}
}

func TestCheckDeltaLengthByteArray(t *testing.T) {
	lengths := deltaValues([]int64{3, 0, 5})
	ok := append(append([]byte{}, lengths...), "abcdefgh"...)
	require.NoError(t, checkDeltaPage(encodingDeltaLengthByteArray, ok, 3, 0))
	require.ErrorIs(t, checkDeltaPage(encodingDeltaLengthByteArray, ok[:len(ok)-1], 3, 0), errDelta, "bytes cut short")
	negative := append(deltaValues([]int64{3, -1, 5}), "abcdefgh"...)
	require.ErrorIs(t, checkDeltaPage(encodingDeltaLengthByteArray, negative, 3, 0), errDelta)
	require.ErrorIs(t, checkDeltaPage(encodingDeltaLengthByteArray, ok, 2, 0), errDelta, "more values than the page")
}
