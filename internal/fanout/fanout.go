// Package fanout runs calls on goroutines, a bounded number at a time, the first error
// cancelling the rest.
package fanout

import (
	"context"
	"sync"
)

// Each calls fn(ctx, i) for every i in [0, n), each on a goroutine of its own, at most limit
// (at least 1) at once, started in order of i. Once a call returns an error, the context the
// calls are given is cancelled with that error as its cause; the calls not yet started are
// still made, with that context. Each waits for every call and returns the first error, or
// nil. It recovers no panic: fn must not panic.
func Each(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var once sync.Once
	var failed error
	slots := make(chan struct{}, max(limit, 1))
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { failed = err; cancel(err) })
			}
		}()
	}
	wg.Wait()
	return failed
}
