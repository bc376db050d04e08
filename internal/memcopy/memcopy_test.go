package memcopy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopy copies as the built-in copy does, across chunk boundaries and for any element size.
func TestCopy(t *testing.T) {
	for _, n := range []int{0, 1, Chunk - 1, Chunk, 3*Chunk + 7} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * 7)
		}
		for _, short := range []int{0, 1} {
			dst := make([]byte, max(n-short, 0))
			require.Equal(t, len(dst), Copy(dst, src))
			require.Equal(t, src[:len(dst)], dst)
		}
	}
	src := []float64{1, 2, 3}
	dst := make([]float64, 5)
	require.Equal(t, 3, Copy(dst, src))
	require.Equal(t, []float64{1, 2, 3, 0, 0}, dst)
}
