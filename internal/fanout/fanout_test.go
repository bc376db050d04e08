package fanout_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/fanout"
)

func TestEachCallsEveryIndexOnceWithinTheLimit(t *testing.T) {
	for _, c := range []struct {
		name     string
		n, limit int
	}{
		{"none", 0, 4},
		{"one", 1, 4},
		{"fewer than the limit", 3, 8},
		{"more than the limit", 100, 3},
		{"one at a time", 20, 1},
		{"limit below one is one", 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := make([]atomic.Int32, c.n)
			var running, most atomic.Int32
			err := fanout.Each(context.Background(), c.n, c.limit, func(ctx context.Context, i int) error {
				now := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				calls[i].Add(1)
				return ctx.Err()
			})
			require.NoError(t, err)
			for i := range calls {
				assert.Equal(t, int32(1), calls[i].Load(), "call %d", i)
			}
			assert.LessOrEqual(t, int(most.Load()), max(c.limit, 1))
		})
	}
}

func TestEachReturnsTheFirstErrorAndCancelsTheOthersWithIt(t *testing.T) {
	errFirst := errors.New("first")
	var mu sync.Mutex
	var causes []error
	err := fanout.Each(context.Background(), 5, 2, func(ctx context.Context, i int) error {
		if i == 0 {
			return errFirst
		}
		<-ctx.Done() // call 1 runs beside call 0; the later ones start after it failed
		mu.Lock()
		causes = append(causes, context.Cause(ctx))
		mu.Unlock()
		return ctx.Err()
	})
	require.ErrorIs(t, err, errFirst)
	require.Len(t, causes, 4, "the calls after the failure are still made")
	for _, c := range causes {
		assert.ErrorIs(t, c, errFirst)
	}
}

func TestEachCancelsWithTheParentContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fanout.Each(ctx, 3, 2, func(ctx context.Context, i int) error { return ctx.Err() })
	require.ErrorIs(t, err, context.Canceled)
}
