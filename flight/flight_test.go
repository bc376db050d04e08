package flight

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ipc/tensorfile"
	"github.com/ndarrow/ndarrow/ndarray"
)

func TestSmokeDense(t *testing.T) {
	s := serve(t, Options{}, "grpc")
	d := ndarray.New[float32](1000, 3, 4)
	for i := range d.Data() {
		d.Data()[i] = float32(i)
	}
	require.NoError(t, s.store.Add("x", tensorfile.Tensor{Kind: tensorfile.KindDense, Dense: d}))
	c := dial(t, s.uri, ClientOptions{})
	got, err := GetDense[float32](context.Background(), c, "x")
	require.NoError(t, err)
	assert.True(t, got.Equal(d))
	list, err := c.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	t.Logf("%+v", list[0])
}
