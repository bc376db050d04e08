package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// encoded returns a [256, 256] float32 tensor written as format.
func encoded(t *testing.T, format Format) []byte {
	t.Helper()
	d := ndarray.New[float32](256, 256)
	for i := range d.Ravel() {
		d.Ravel()[i] = float32(i)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, Write(f, format, []Tensor{{Name: "v", Kind: KindFixedShape, Dense: d}}, WriteOptions{}))
	b, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return b
}

// TestScanOfADrippingObject: a prefix of good objects and one whose store drips its answers a
// byte at a time is scanned — listed first, then its objects read concurrently — into the good
// objects' tensors, read while the slow one was still being answered, and the slow one skipped
// with an error naming it at the stall deadline.
func TestScanOfADrippingObject(t *testing.T) {
	old := objstore.StallTimeout
	objstore.StallTimeout = 2 * time.Second // the slow object's deadline: the others are read long before
	t.Cleanup(func() { objstore.StallTimeout = old })
	h := storetest.StartHostile(t)
	h.UseS3(t)
	npy := encoded(t, FormatNpy)
	h.Put("b", "p/0slow.npy", storetest.HostileObject{Data: npy, Fault: storetest.Drip}) // first in path order
	for _, name := range []string{"a", "b", "c"} {
		h.Put("b", "p/"+name+".npy", storetest.HostileObject{Data: npy})
	}
	d, err := ScanDir("s3://b/p", limits.Limits{})
	require.NoError(t, err)
	defer d.Release()
	var names []string
	for _, s := range d.Sources {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"a", "b", "c"}, names)
	require.Len(t, d.Skipped, 1)
	assert.ErrorIs(t, d.Skipped[0], objstore.ErrStalled)
	assert.True(t, strings.HasPrefix(d.Skipped[0].Error(), "s3://b/p/0slow.npy: "), d.Skipped[0].Error())

	require.Eventually(t, func() bool { return h.Abandoned("b", "p/0slow.npy") > 0 }, 30*time.Second, time.Millisecond)
	events := h.Events()
	abandoned := slices.Index(events, "abandoned b/p/0slow.npy")
	for _, name := range []string{"a", "b", "c"} {
		served := slices.Index(events, "served b/p/"+name+".npy")
		assert.True(t, served >= 0 && served < abandoned, "%s read before the slow object gave up: %q", name, events)
	}
}

// TestCancelledChunksStopTheirFetch: cancelling the context of a Source's iteration ends a
// fetch of a chunk from a store that drips it — the store sees its client go away — and the
// iteration yields an error wrapping context.Canceled naming the object.
func TestCancelledChunksStopTheirFetch(t *testing.T) {
	for _, format := range []Format{FormatNpy, FormatParquet, FormatArrow} {
		t.Run(string(format), func(t *testing.T) {
			h := storetest.StartHostile(t)
			h.UseS3(t)
			key := "p/x." + string(format)
			// The ends, footer and headers are answered; a chunk (64 KiB or more) drips.
			h.Put("b", key, storetest.HostileObject{Data: encoded(t, format), Fault: storetest.Drip, FaultMin: 32 << 10})
			d, err := ScanDir("s3://b/p", limits.Limits{})
			require.NoError(t, err)
			defer d.Release()
			require.Empty(t, d.Skipped)
			require.Len(t, d.Sources, 1)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				var last error
				for _, err := range d.Sources[0].Chunks(ctx) {
					last = err
				}
				done <- last
			}()
			require.Eventually(t, func() bool { return h.Started("b", key) > 0 }, 30*time.Second, time.Millisecond, "the chunk's fetch began")
			cancel()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.True(t, errors.Is(err, context.Canceled), "%v", err)
				assert.True(t, strings.HasPrefix(err.Error(), "s3://b/"+key+": "), err.Error())
			case <-time.After(30 * time.Second): // the drip would take 20 minutes, the stall rule 30 s
				t.Fatal("the iteration went on after its context was cancelled")
			}
			require.Eventually(t, func() bool { return h.Abandoned("b", key) > 0 }, 30*time.Second, time.Millisecond, "the store saw the request end")

			_, err = d.Sources[0].Read(ctx) // Read of a cancelled context reads nothing
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}

// TestObjectBudgetWaitsForSlowerObjects: objects read concurrently are held within
// MaxCopySize as if read one at a time in path order: an object that fits only if a slower
// one before it takes less than its size waits for it — here the slow one fails at the stall
// deadline, holding nothing, and both objects after it are held.
func TestObjectBudgetWaitsForSlowerObjects(t *testing.T) {
	old := objstore.StallTimeout
	objstore.StallTimeout = time.Second
	t.Cleanup(func() { objstore.StallTimeout = old })
	h := storetest.StartHostile(t)
	h.UseS3(t)
	stream := encoded(t, FormatArrows) // 256 KiB, fetched whole
	h.Put("b", "p/x0.arrows", storetest.HostileObject{Data: stream, Fault: storetest.Drip})
	h.Put("b", "p/x1.arrows", storetest.HostileObject{Data: stream})
	h.Put("b", "p/x2.arrows", storetest.HostileObject{Data: stream})
	d, err := ScanDir("s3://b/p", limits.Limits{MaxCopySize: int64(2*len(stream) + len(stream)/2)})
	require.NoError(t, err)
	defer d.Release()
	var names []string
	for _, s := range d.Sources {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"x1.v", "x2.v"}, names)
	require.Len(t, d.Skipped, 1)
	assert.ErrorIs(t, d.Skipped[0], objstore.ErrStalled)
}
