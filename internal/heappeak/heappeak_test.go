package heappeak

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWatchSeesALiveAllocation: 64 MiB held across a few samples is in the peak.
func TestWatchSeesALiveAllocation(t *testing.T) {
	stop := Watch()
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	time.Sleep(20 * time.Millisecond)
	peak := stop()
	runtime.KeepAlive(b)
	assert.GreaterOrEqual(t, peak, uint64(64<<20))
}
