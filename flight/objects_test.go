package flight

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestDoGetCancelledStopsTheFetch: a client that cancels a DoGet of a tensor of an s3://
// prefix whose store drips the tensor's rows ends the server's fetch of them: the store sees
// its client go away (long before the stall rule's 30 s would have ended it).
func TestDoGetCancelledStopsTheFetch(t *testing.T) {
	h := storetest.StartHostile(t)
	h.UseS3(t)
	d := ndarray.New[float32](256, 256)
	path := filepath.Join(t.TempDir(), "x.npy")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, dataset.Write(f, dataset.FormatNpy, []dataset.Tensor{{Name: "x", Kind: dataset.KindDense, Dense: d}}, dataset.WriteOptions{}))
	require.NoError(t, f.Close())
	npy, err := os.ReadFile(path)
	require.NoError(t, err)
	// Its header is answered; its rows (256 KiB) drip a byte at a time.
	h.Put("b", "p/x.npy", storetest.HostileObject{Data: npy, Fault: storetest.Drip, FaultMin: 32 << 10})

	s := serve(t, Options{}, "grpc")
	names, err := s.store.AddDir("s3://b/p", limits.Limits{})
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, names)
	c := dial(t, s.uri, ClientOptions{GRPCOnly: true})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, "x")
		done <- err
	}()
	require.Eventually(t, func() bool { return h.Started("b", "p/x.npy") > 0 }, 30*time.Second, time.Millisecond, "the server began fetching the rows")
	cancel()
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Get went on after its context was cancelled")
	}
	require.Eventually(t, func() bool { return h.Abandoned("b", "p/x.npy") > 0 }, 20*time.Second, time.Millisecond, "the store saw the server's request end")
}
