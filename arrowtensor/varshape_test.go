package arrowtensor

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

func TestVariableShapeTensorsThroughArrowGoIPC(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	images := []*ndarray.Dense[float32]{
		ndarray.Must(ndarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3, 1)),
		ndarray.Must(ndarray.FromSlice([]float32{7, 8, 9, 10}, 1, 4, 1)).Transpose().Transpose(),
		ndarray.Must(ndarray.New[float32](3, 3, 1).Slice(ndarray.Range(0, 0))), // an empty image
		ndarray.Must(ndarray.FromSlice([]float32{11, 12, 13, 14}, 2, 2, 1)).Transpose().Transpose(),
	}
	arr, err := NewVariableShapeTensorArray(mem, images, []string{"h", "w", "c"})
	require.NoError(t, err)
	typ := arr.ExtensionType().(*VariableShapeTensorType)
	assert.Equal(t, `{"dim_names":["h","w","c"],"uniform_shape":[null,null,1]}`, typ.Serialize())

	schema := arrow.NewSchema([]arrow.Field{{Name: "images", Type: typ, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	var stream bytes.Buffer
	w := ipc.NewWriter(&stream, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	rec.Release()

	r, err := ipc.NewReader(bytes.NewReader(stream.Bytes()), ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	got, ok := r.Record().Column(0).(*VariableShapeTensorArray)
	require.True(t, ok, "read back as %T", r.Record().Column(0))
	assert.True(t, typ.ExtensionEquals(got.ExtensionType()))
	for i, want := range images {
		d, err := TensorAt[float32](got, i)
		require.NoError(t, err)
		assert.True(t, d.Equal(want), "row %d: %v", i, d)
		assert.True(t, d.ReadOnly())
	}
	sliced := array.NewSlice(got, 1, 4).(*VariableShapeTensorArray)
	defer sliced.Release()
	d, err := TensorAt[float32](sliced, 2)
	require.NoError(t, err)
	assert.True(t, d.Equal(images[3]), "slices read their own rows")
	_, err = TensorAt[float32](sliced, 3)
	assert.ErrorIs(t, err, ndarray.ErrIndex)
	_, err = TensorAt[int32](sliced, 0)
	assert.ErrorIs(t, err, ndarray.ErrDType)
}

func TestVariableShapePermutation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	row := ndarray.Must(ndarray.FromSlice([]int16{0, 1, 2, 10, 11, 12}, 2, 3))
	base, err := NewVariableShapeTensorArray(mem, []*ndarray.Dense[int16]{row}, nil)
	require.NoError(t, err)
	defer base.Release()
	// The same storage under a type that says logical = physical transposed.
	typ, err := NewVariableShapeTensorType(arrow.PrimitiveTypes.Int16, 2, []int{1, 0}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"permutation":[1,0]}`, typ.Serialize())
	permuted := array.NewExtensionArrayWithStorage(typ, base.Storage()).(*VariableShapeTensorArray)
	defer permuted.Release()
	d, err := TensorAt[int16](permuted, 0)
	require.NoError(t, err)
	assert.True(t, d.Equal(row.Transpose()))
	_, err = RaggedFromVariableShape[int16](permuted)
	assert.ErrorIs(t, err, ErrUnsupported, "a ragged array has no permutation")
}

func TestVariableShapeMetadata(t *testing.T) {
	storage := func(ndim int32) arrow.DataType {
		return arrow.StructOf(
			arrow.Field{Name: "data", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
			arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(ndim, arrow.PrimitiveTypes.Int32), Nullable: true},
		)
	}
	for _, meta := range []string{"", "{}", `{"uniform_shape":[3,null]}`, `{"permutation":[1,0],"dim_names":["a","b"]}`} {
		got, err := (&VariableShapeTensorType{}).Deserialize(storage(2), meta)
		require.NoError(t, err, meta)
		want := meta
		if meta == "" {
			want = "{}"
		}
		assert.Equal(t, want, got.Serialize(), "written as read")
	}
	for name, tc := range map[string]struct {
		storage arrow.DataType
		meta    string
		err     error
	}{
		"malformed":              {storage(2), `{"permutation":`, ndarray.ErrShape},
		"bad permutation":        {storage(2), `{"permutation":[1,1]}`, ndarray.ErrIndex},
		"uniform shape too long": {storage(2), `{"uniform_shape":[1,2,3]}`, ndarray.ErrShape},
		"negative uniform size":  {storage(2), `{"uniform_shape":[-3,1]}`, ndarray.ErrShape},
		"storage not a struct":   {arrow.ListOf(arrow.PrimitiveTypes.Float64), `{}`, ErrUnsupported},
		"shape not int32": {arrow.StructOf(
			arrow.Field{Name: "data", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
			arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64)},
		), `{}`, ErrUnsupported},
	} {
		got, err := (&VariableShapeTensorType{}).Deserialize(tc.storage, tc.meta)
		assert.Nil(t, got, name)
		assert.ErrorIs(t, err, tc.err, name)
	}
	_, err := NewVariableShapeTensorArray[float32](memory.DefaultAllocator, nil, nil)
	assert.ErrorIs(t, err, ndarray.ErrShape)
	_, err = NewVariableShapeTensorArray(memory.DefaultAllocator, []*ndarray.Dense[float32]{ndarray.New[float32](2), ndarray.New[float32](2, 2)}, nil)
	assert.ErrorIs(t, err, ndarray.ErrShape, "ranks differ")
}
