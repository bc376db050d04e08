package arrowtensor

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// fixedShapeFromJSON builds a fixed_shape_tensor column of cells of shape [2] from JSON lists.
func fixedShapeFromJSON(t *testing.T, json string) *FixedShapeTensorArray {
	typ, err := NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{2}, nil, nil)
	require.NoError(t, err)
	storage, _, err := array.FromJSON(memory.DefaultAllocator, typ.StorageType(), strings.NewReader(json))
	require.NoError(t, err)
	defer storage.Release()
	return array.NewExtensionArrayWithStorage(typ, storage).(*FixedShapeTensorArray)
}

func TestNullsInAFixedShapeColumnAreErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		json string
		row  int
	}{
		"no nulls":        {`[[1, 2], [3, 4], [5, 6]]`, -1},
		"a null row":      {`[[1, 2], null, [5, 6]]`, 1},
		"a null element":  {`[[1, 2], [3, 4], [5, null]]`, 2},
		"both, row first": {`[null, [3, null], [5, 6]]`, 0},
	} {
		t.Run(name, func(t *testing.T) {
			a := fixedShapeFromJSON(t, tc.json)
			defer a.Release()
			assert.Equal(t, tc.row, NullRow(a))
			d, err := ToDense[float32](a)
			if tc.row < 0 {
				require.NoError(t, err)
				assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, d.Data())
				return
			}
			assert.Nil(t, d, "never silent zeros")
			assert.ErrorIs(t, err, ErrNull)
			assert.ErrorContains(t, err, "row "+string(rune('0'+tc.row))+" is null")
		})
	}
	// A slice past the null rows reads.
	a := fixedShapeFromJSON(t, `[null, [3, 4], [5, 6]]`)
	defer a.Release()
	tail := array.NewSlice(a, 1, 3).(*FixedShapeTensorArray)
	defer tail.Release()
	d, err := ToDense[float32](tail)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{2, 2}, d.Shape())
	assert.Equal(t, float32(6), d.Get(1, 1))
}

func TestDictionaryLeavesReadAsRagged(t *testing.T) {
	dt := arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String})
	assert.True(t, IsRaggedType(dt))
	arr, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(`[["a", "b"], [], ["b"]]`))
	require.NoError(t, err)
	defer arr.Release()
	a, err := RaggedFromListAny(arr)
	require.NoError(t, err)
	s, ok := a.(*ragged.Array[string])
	require.True(t, ok)
	assert.Equal(t, []string{"a", "b", "b"}, s.FlatValues())
	assert.Equal(t, [][]int64{{0, 2, 2, 3}}, s.RowSplits())
}

func TestIsRaggedType(t *testing.T) {
	for dt, want := range map[arrow.DataType]bool{
		arrow.ListOf(arrow.PrimitiveTypes.Int32):                               true,
		arrow.LargeListOf(arrow.ListOf(arrow.BinaryTypes.String)):              true,
		arrow.FixedSizeListOf(3, arrow.FixedWidthTypes.Boolean):                true,
		arrow.ListOf(arrow.FixedWidthTypes.Float16):                            true,
		arrow.PrimitiveTypes.Int32:                                             false,
		arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.Null})): false,
		arrow.ListOf(arrow.FixedWidthTypes.Date32):                             false,
		arrow.MapOf(arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int8):      false,
		arrow.ListOf(&arrow.Decimal128Type{Precision: 4, Scale: 1}):            false,
	} {
		assert.Equal(t, want, IsRaggedType(dt), "%v", dt)
	}
	deep := arrow.DataType(arrow.PrimitiveTypes.Int8)
	for range 65 {
		deep = arrow.ListOf(deep)
	}
	assert.False(t, IsRaggedType(deep), "deeper than 64 levels")
}

// TestListLengthNearMaxInt: a list array whose length is near the largest int no longer
// passes the offsets check by overflow.
func TestListLengthNearMaxInt(t *testing.T) {
	values := array.NewData(arrow.PrimitiveTypes.Int8, 0, []*memory.Buffer{nil, nil}, nil, 0, 0)
	defer values.Release()
	offsets := memory.NewBufferBytes(make([]byte, 8))
	data := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int8), math.MaxInt, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{values}, 0, 0)
	defer data.Release()
	list := array.NewListData(data)
	defer list.Release()
	_, err := RaggedFromListAny(list)
	assert.ErrorIs(t, err, ragged.ErrInvalid)
	assert.ErrorContains(t, err, "2 offsets for 9223372036854775807 rows")
}
