// Package heappeak measures the most heap a stretch of code holds, for benchmarks that
// report peak memory.
package heappeak

import (
	"runtime"
	"sync"
	"time"
)

// Watch samples the heap every millisecond until the returned stop is called, which returns
// the largest HeapInuse seen above the heap at the start (after a garbage collection).
func Watch() (stop func() uint64) { return WatchWith(nil) }

// WatchWith is Watch counting, beside the heap, the bytes outside it that extra reports held
// at each sample (nil: none), such as memory mapped for buffers.
func WatchWith(extra func() uint64) (stop func() uint64) {
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			held := ms.HeapInuse
			if extra != nil {
				held += extra()
			}
			mu.Lock()
			peak = max(peak, held)
			mu.Unlock()
		}
	}()
	return func() uint64 {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		if peak < base.HeapInuse {
			return 0
		}
		return peak - base.HeapInuse
	}
}
