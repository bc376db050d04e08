package sysmem

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTotal: on Linux the machine's memory is known and plausible.
func TestTotal(t *testing.T) {
	n, ok := Total()
	if runtime.GOOS != "linux" {
		t.Skip("memory is read from /proc and /sys: Linux only")
	}
	require.True(t, ok)
	require.Greater(t, n, int64(64<<20))
	require.Less(t, n, int64(1<<50))
}
