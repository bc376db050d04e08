package dataset_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestSaveAndOpen: every output format a library user saves to opens back as the tensors that
// went in (what the format can hold of them); a name that names no format, and a failed
// write, leave no file behind.
func TestSaveAndOpen(t *testing.T) {
	emb := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 24, 1)).Reshape(6, 4))
	x := dataset.Tensor{Name: "emb", Kind: dataset.KindDense, DimNames: []string{"row", "feature"}, Dense: emb}
	dir := t.TempDir()
	for _, f := range dataset.OutputFormats() {
		t.Run(string(f), func(t *testing.T) {
			path := filepath.Join(dir, "emb."+string(f))
			var warned []string
			require.NoError(t, dataset.Save(path, []dataset.Tensor{x}, dataset.WriteOptions{Warn: func(s string) { warned = append(warned, s) }}))
			var file *dataset.File
			var err error
			if f == dataset.FormatTFRecord || f == dataset.FormatTensorProto {
				file, err = dataset.OpenTFRecord(path, 0, limits.Limits{})
			} else {
				file, err = dataset.Open(path, limits.Limits{})
			}
			require.NoError(t, err)
			defer file.Release()
			require.NotEmpty(t, file.Tensors)
			got := file.Tensors[0]
			if got.Sparse != nil {
				d, err := got.DenseArray(0)
				require.NoError(t, err)
				got.Dense = d
			}
			require.NotNil(t, got.Dense, "%v", got)
			var values []float32
			switch d := got.Dense.(type) {
			case *ndarray.Dense[float32]:
				values = d.Ravel()
			default:
				t.Fatalf("%T", d)
			}
			assert.Equal(t, emb.Ravel(), values)
			if f == dataset.FormatNpy || f == dataset.FormatNpz || f == dataset.FormatTFRecord {
				assert.NotEmpty(t, warned, "the names dropped are told")
			}
		})
	}
	_, err := dataset.FormatOf("x.hdf5")
	assert.ErrorIs(t, err, dataset.ErrFormat)
	bad := filepath.Join(dir, "two.npy")
	err = dataset.Save(bad, []dataset.Tensor{x, x}, dataset.WriteOptions{})
	assert.ErrorIs(t, err, ndarray.ErrShape)
	_, statErr := os.Stat(bad)
	assert.ErrorIs(t, statErr, os.ErrNotExist, "nothing left behind")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp")
	}
	var buf bytes.Buffer
	require.NoError(t, dataset.Write(&buf, dataset.FormatArrows, []dataset.Tensor{x}, dataset.WriteOptions{}))
	back, err := dataset.Read(buf.Bytes(), "s", limits.Limits{})
	require.NoError(t, err)
	assert.Equal(t, []string{"row", "feature"}, back[0].DimNames)
}

// TestRecordsNameEveryDimension: arrowtensor.Records given a name per dimension, the rows'
// included, gives them all back through FromRecords (the row name in the field metadata).
func TestRecordsNameEveryDimension(t *testing.T) {
	d := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 24, 1)).Reshape(4, 3, 2))
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "img", d, []string{"batch", "h", "w"}, 2)
	require.NoError(t, err)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	ts, err := dataset.FromRecords(recs[0].Schema(), recs, "f")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, []string{"batch", "h", "w"}, ts[0].DimNames)
	assert.Equal(t, ndarray.Shape{4, 3, 2}, ts[0].Shape())
	_, err = arrowtensor.Records(memory.DefaultAllocator, "img", d, []string{"a"}, 2)
	assert.Error(t, err, "one name for rank 3")
}
