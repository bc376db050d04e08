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
	back, _, err := dataset.Read(buf.Bytes(), "s", limits.Limits{})
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
	ts, _, err := dataset.FromRecords(recs[0].Schema(), recs, "f")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, []string{"batch", "h", "w"}, ts[0].DimNames)
	assert.Equal(t, ndarray.Shape{4, 3, 2}, ts[0].Shape())
	_, err = arrowtensor.Records(memory.DefaultAllocator, "img", d, []string{"a"}, 2)
	assert.Error(t, err, "one name for rank 3")
}

// TestBoolTensorsTravel: a bool tensor of any rank goes into Arrow files, streams and Parquet
// as a plain fixed_size_list<bool> column (Arrow C++ 17 refuses an arrow.fixed_shape_tensor of
// bool; it reads this one: testdata/arrow-cpp-17/bool_read.jsonl) with its cell shape in the
// field, and comes back as it went.
func TestBoolTensorsTravel(t *testing.T) {
	vals := make([]bool, 4*2*3)
	for i := range vals {
		vals[i] = i%3 == 0 || i == 7
	}
	mask := ndarray.Must(ndarray.FromSlice(vals, 4, 2, 3))
	x := dataset.Tensor{Name: "mask", Kind: dataset.KindDense, DimNames: []string{"b", "h", "w"}, Dense: mask}
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{x})
	require.NoError(t, err)
	assert.Equal(t, "fixed_size_list<item: bool, nullable>[6]", rec.Schema().Field(0).Type.String())
	cell, _ := rec.Schema().Field(0).Metadata.GetValue(dataset.CellShapeKey)
	assert.Equal(t, "[2,3]", cell)
	rec.Release()
	dir := t.TempDir()
	for _, f := range []dataset.Format{dataset.FormatArrow, dataset.FormatArrows, dataset.FormatParquet, dataset.FormatNpz} {
		path := filepath.Join(dir, "m."+string(f))
		require.NoError(t, dataset.Save(path, []dataset.Tensor{x}, dataset.WriteOptions{}))
		file, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err, f)
		got, err := dataset.DenseOf[bool](file.Tensors[0])
		require.NoError(t, err, f)
		assert.True(t, mask.Equal(got), "%s: %v", f, got)
		if f != dataset.FormatNpz {
			assert.Equal(t, []string{"b", "h", "w"}, file.Tensors[0].DimNames, f)
			assert.Equal(t, dataset.KindDense, file.Tensors[0].Kind, f)
		}
		file.Release()
	}
	err = dataset.Save(filepath.Join(dir, "m.tensor"), []dataset.Tensor{x}, dataset.WriteOptions{})
	assert.ErrorIs(t, err, ndarray.ErrDType, "no bool Tensor messages")
}

// TestBoolFilesArrowCppRead: the files Arrow C++ 17 read (testdata/arrow-cpp-17) are what
// ndarrow writes today, and read back as the tensor.
func TestBoolFilesArrowCppRead(t *testing.T) {
	vals := make([]bool, 24)
	for i := range vals {
		vals[i] = i%3 == 0 || i == 7
	}
	want := ndarray.Must(ndarray.FromSlice(vals, 4, 2, 3))
	for _, ext := range []string{"arrow", "arrows", "parquet"} {
		path := "testdata/arrow-cpp-17/bool_mask_4x2x3." + ext
		f, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err)
		got, err := dataset.DenseOf[bool](f.Tensors[0])
		require.NoError(t, err)
		assert.True(t, want.Equal(got), path)
		f.Release()
		if ext == "parquet" {
			continue // its footer names the writer's version
		}
		written := filepath.Join(t.TempDir(), "x."+ext)
		require.NoError(t, dataset.Save(written, []dataset.Tensor{{Name: "mask", Kind: dataset.KindDense, DimNames: []string{"b", "h", "w"}, Dense: want}}, dataset.WriteOptions{}))
		a, _ := os.ReadFile(path)
		b, _ := os.ReadFile(written)
		assert.Equal(t, a, b, "%s: the bytes Arrow C++ read", ext)
	}
}
