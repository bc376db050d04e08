package arrowtensor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

func exampleCOO() *sparse.COO[float32] {
	c := sparse.NewCOO[float32](3, 4, 2)
	c.Set(1.5, 0, 1, 1)
	c.Set(-2, 2, 3, 0)
	c.Set(4, 1, 0, 1) // out of order: not canonical
	return c
}

// TestCOORecordIPC writes a sparse tensor as a record batch through arrow-go's IPC file and
// stream writers and reads it back through arrow-go's readers.
func TestCOORecordIPC(t *testing.T) {
	c := exampleCOO()
	rec, err := arrowtensor.COORecord(memory.DefaultAllocator, c, []string{"x", "y", "z"})
	require.NoError(t, err)
	defer rec.Release()
	assert.EqualValues(t, 3, rec.NumRows())
	assert.True(t, arrowtensor.IsSparseSchema(rec.Schema()))
	v, _ := rec.Schema().Metadata().GetValue(arrowtensor.SparseShapeKey)
	assert.Equal(t, "[3,4,2]", v)

	for _, stream := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var buf bytes.Buffer
		var file *os.File
		if stream {
			w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())
		} else {
			var err error
			file, err = os.Create(filepath.Join(t.TempDir(), "sparse.arrow"))
			require.NoError(t, err)
			w, err := ipc.NewFileWriter(file, ipc.WithSchema(rec.Schema()))
			require.NoError(t, err)
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())
			b, err := os.ReadFile(file.Name())
			require.NoError(t, err)
			require.NoError(t, file.Close())
			buf.Write(b)
		}
		var back arrow.Record
		if stream {
			r, err := ipc.NewReader(bytes.NewReader(buf.Bytes()), ipc.WithAllocator(mem))
			require.NoError(t, err)
			require.True(t, r.Next())
			back = r.Record()
			back.Retain()
			r.Release()
		} else {
			r, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()), ipc.WithAllocator(mem))
			require.NoError(t, err)
			back, err = r.Record(0)
			require.NoError(t, err)
			back.Retain()
			require.NoError(t, r.Close())
		}
		got, names, err := arrowtensor.COOFromRecord[float32](back)
		require.NoError(t, err)
		assert.Equal(t, []string{"x", "y", "z"}, names)
		assert.True(t, got.ReadOnly())
		assert.False(t, got.IsCanonical(), "the stored order travels as it is")
		assert.True(t, sparse.Equal[float32](c, got))
		assert.Equal(t, c.Indices().AsInt64(), got.Indices().Int64())
		back.Release()
		mem.AssertSize(t, 0)
	}
}

func TestCOORecordZeroCopy(t *testing.T) {
	c, err := sparse.MakeCOO(ndarray.Shape{4, 4}, sparse.Int64Indices([]int64{0, 0, 3, 3}), []float64{1, 2})
	require.NoError(t, err)
	rec, err := arrowtensor.COORecord(memory.DefaultAllocator, c, nil)
	require.NoError(t, err)
	defer rec.Release()
	assert.Same(t, &c.Data()[0], (*float64)(unsafe.Pointer(&rec.Column(1).Data().Buffers()[1].Bytes()[0])), "int64 COO written without a copy")
	back, names, err := arrowtensor.COOFromRecord[float64](rec)
	require.NoError(t, err)
	assert.Nil(t, names)
	assert.Same(t, &c.Data()[0], &back.Data()[0], "read without a copy")
	assert.Same(t, &c.Indices().Int64()[0], &back.Indices().Int64()[0])
	sliced := rec.NewSlice(1, 2)
	defer sliced.Release()
	one, _, err := arrowtensor.COOFromRecord[float64](sliced)
	require.NoError(t, err)
	assert.Equal(t, 2.0, one.Get(3, 3))
	assert.EqualValues(t, 1, one.NNZ())
}

func TestSparseRecordErrors(t *testing.T) {
	good, err := arrowtensor.COORecord(memory.DefaultAllocator, exampleCOO(), nil)
	require.NoError(t, err)
	defer good.Release()
	_, _, err = arrowtensor.COOFromRecord[float64](good)
	assert.ErrorIs(t, err, ndarray.ErrDType)

	withMeta := func(meta map[string]string) arrow.Record {
		schema := arrow.NewSchema(good.Schema().Fields(), func() *arrow.Metadata { m := arrow.MetadataFrom(meta); return &m }())
		return array.NewRecord(schema, good.Columns(), good.NumRows())
	}
	for name, tc := range map[string]struct {
		meta map[string]string
		want error
		text string
	}{
		"no format":       {map[string]string{}, arrowtensor.ErrUnsupported, "ndarrow.sparse.format"},
		"unknown format":  {map[string]string{arrowtensor.SparseFormatKey: "bsr"}, arrowtensor.ErrUnsupported, `is "bsr", not coo, csr, csc or csf`},
		"bad shape":       {map[string]string{arrowtensor.SparseFormatKey: "coo", arrowtensor.SparseShapeKey: "[3,"}, arrowtensor.ErrUnsupported, "dense_shape"},
		"rank mismatch":   {map[string]string{arrowtensor.SparseFormatKey: "coo", arrowtensor.SparseShapeKey: "[3,4]"}, arrowtensor.ErrUnsupported, "for rank 2"},
		"index past dim":  {map[string]string{arrowtensor.SparseFormatKey: "coo", arrowtensor.SparseShapeKey: "[3,4,1]"}, sparse.ErrInvalid, "coordinate 1 of dimension 2"},
		"negative shape":  {map[string]string{arrowtensor.SparseFormatKey: "coo", arrowtensor.SparseShapeKey: "[3,-4,2]"}, ndarray.ErrShape, "-4"},
		"dim names count": {map[string]string{arrowtensor.SparseFormatKey: "coo", arrowtensor.SparseShapeKey: "[3,4,2]", arrowtensor.SparseDimNamesKey: `["a"]`}, arrowtensor.ErrUnsupported, "dim_names"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := withMeta(tc.meta)
			defer rec.Release()
			_, _, err := arrowtensor.SparseFromRecord(rec)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.text)
		})
	}

	// Null values are refused.
	b := array.NewFloat32Builder(memory.DefaultAllocator)
	b.AppendValues([]float32{1, 2}, []bool{true, false})
	b.Append(3)
	nulls := b.NewArray()
	defer nulls.Release()
	rec := array.NewRecord(good.Schema(), []arrow.Array{good.Column(0), nulls}, 3)
	defer rec.Release()
	_, _, err = arrowtensor.SparseFromRecord(rec)
	assert.ErrorIs(t, err, arrowtensor.ErrUnsupported)
	assert.ErrorContains(t, err, "null")

	_, err = arrowtensor.COORecord(memory.DefaultAllocator, sparse.NewCOO[float32](), nil)
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

// TestSparseRecordKeepsTheFormat: a CSR, a CSC and a CSF (with its axis order) travel as
// coordinates and come back in their own format, with the same values.
func TestSparseRecordKeepsTheFormat(t *testing.T) {
	c := exampleCOO() // 3-D
	m := sparse.NewCOO[float32](4, 5)
	m.Set(1, 0, 4)
	m.Set(2, 3, 1)
	m.Set(3, 2, 2)
	csr, err := m.ToCSR()
	require.NoError(t, err)
	csc, err := m.ToCSC()
	require.NoError(t, err)
	csf, err := c.ToCSF(2, 0, 1)
	require.NoError(t, err)
	for _, a := range []sparse.Array{csr, csc, csf, c} {
		t.Run(a.Format().String(), func(t *testing.T) {
			rec, err := arrowtensor.SparseRecord(memory.DefaultAllocator, a, nil)
			require.NoError(t, err)
			defer rec.Release()
			format, _ := rec.Schema().Metadata().GetValue(arrowtensor.SparseFormatKey)
			assert.Equal(t, a.Format().String(), format)
			back, _, err := arrowtensor.SparseFromRecord(rec)
			require.NoError(t, err)
			assert.Equal(t, a.Format(), back.Format())
			var want, got bytes.Buffer
			_, _ = a.WriteTo(&want)
			_, _ = back.WriteTo(&got)
			assert.Equal(t, want.Bytes(), got.Bytes())
			if f, ok := back.(*sparse.CSF[float32]); ok {
				assert.Equal(t, []int{2, 0, 1}, f.AxisOrder())
			}
			asCOO, _, err := arrowtensor.COOFromRecord[float32](rec)
			require.NoError(t, err, "any format reads as a COO too")
			assert.Equal(t, a.NNZ(), asCOO.NNZ())
		})
	}
}
