package dataset_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

func TestTensorMessagesKeepWhatTheyCan(t *testing.T) {
	m := ndarray.Must(ndarray.FromSlice([]float64{0, 1, 0, 2, 0, 0}, 2, 3))
	x := dataset.Tensor{Name: "b.m", Column: "m", Kind: dataset.KindFixedShape, DimNames: []string{"row", "col"}, Dense: m}

	var buf bytes.Buffer
	require.NoError(t, x.WriteTensorMessage(&buf))
	back, _, err := dataset.Read(buf.Bytes(), "f", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, back, 1)
	assert.Equal(t, dataset.KindFixedShape, back[0].Kind, "the kind rides in the message's metadata")
	assert.Equal(t, "m", back[0].Column)
	assert.Equal(t, []string{"row", "col"}, back[0].DimNames)
	assert.True(t, m.Equal(back[0].Dense.(*ndarray.Dense[float64])))

	buf.Reset()
	require.NoError(t, x.WriteSparseMessage(&buf, sparse.FormatCSR))
	back, _, err = dataset.Read(buf.Bytes(), "f", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, back, 1)
	assert.Equal(t, dataset.SparseKind(sparse.FormatCSR), back[0].Kind)
	assert.Equal(t, int64(2), back[0].Sparse.NNZ())
	assert.Equal(t, []string{"row", "col"}, back[0].DimNames)

	cube := dataset.Tensor{Name: "c", Dense: ndarray.New[float32](2, 2, 2)}
	assert.ErrorContains(t, cube.WriteSparseMessage(&buf, sparse.FormatCSC), "csc needs a rank-2 tensor")
	flags := dataset.Tensor{Name: "b", Dense: ndarray.New[bool](2)}
	assert.ErrorIs(t, flags.WriteTensorMessage(&buf), ndarray.ErrDType)
}
