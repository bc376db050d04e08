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

// TestSparseMessagesReadableBack: a sparse tensor is written as a SparseTensor message (COO,
// CSR, CSC, its own format) only when a reader takes its shape — at most the default
// limits.Limits.MaxElements elements, and each dimension too — and is then read back; one of
// more is refused with limits.ErrExceeded naming the limit and the formats that keep it,
// nothing written.
func TestSparseMessagesReadableBack(t *testing.T) {
	most := limits.Default().MaxElements
	for _, tc := range []struct {
		name     string
		rows     int64
		columns  int64
		readable bool
	}{
		{"a shape of the limit", 1, most, true},
		{"3×1e12", 3, 1e12, false},
		{"no rows of a dimension above the limit", 0, most + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			indptr := make([]int64, tc.rows+1)
			var indices []int64
			var values []float64
			if tc.rows > 0 {
				indptr[tc.rows], indices, values = 1, []int64{tc.columns - 1}, []float64{7}
			}
			m, err := sparse.MakeCSR(ndarray.Shape{tc.rows, tc.columns}, sparse.Int64Indices(indptr), sparse.Int64Indices(indices), values)
			require.NoError(t, err)
			x := dataset.Tensor{Name: "m", Sparse: m}
			for _, f := range []dataset.Format{dataset.FormatCOO, dataset.FormatCSR, dataset.FormatTensor} {
				var buf bytes.Buffer
				err := dataset.Write(&buf, f, []dataset.Tensor{x}, dataset.WriteOptions{})
				if !tc.readable {
					require.ErrorIs(t, err, limits.ErrExceeded, f)
					assert.ErrorContains(t, err, "m: a SparseTensor message (.coo, .csr, .csc, .csf or .tensor) of shape")
					assert.ErrorContains(t, err, "a shape of at most 1099511627776 elements, each dimension too (limits.Limits.MaxElements), so ndarrow could not read it back: write .npz, .arrow, .arrows or .parquet")
					assert.Zero(t, buf.Len(), "nothing written")
					continue
				}
				require.NoError(t, err, f)
				back, _, err := dataset.Read(buf.Bytes(), "m", limits.Limits{})
				require.NoError(t, err, "%s read back", f)
				require.Len(t, back, 1)
				assert.Equal(t, ndarray.Shape{tc.rows, tc.columns}, back[0].Shape(), f)
				assert.Equal(t, int64(1), back[0].NNZ(), f)
			}
		})
	}
}
