package ndarray

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
)

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		shape Shape
		size  int64
		str   string
	}{
		{Shape{}, 1, "()"},
		{nil, 1, "()"},
		{Shape{7}, 7, "(7,)"},
		{Shape{2, 3}, 6, "(2, 3)"},
		{Shape{2, 0, 3}, 0, "(2, 0, 3)"},
		{Shape{3, Unknown}, -1, "(3, -1)"},
	} {
		t.Run(tc.str, func(t *testing.T) {
			assert.Equal(t, tc.size, tc.shape.Size())
			assert.Equal(t, len(tc.shape), tc.shape.Rank())
			assert.Equal(t, tc.str, tc.shape.String())
			assert.NoError(t, tc.shape.Validate())
			assert.True(t, tc.shape.Equal(tc.shape.Clone()))
		})
	}
	assert.True(t, Shape(nil).Equal(Shape{}))
	assert.False(t, Shape{2, 3}.Equal(Shape{3, 2}))
	assert.False(t, Shape{2, 3}.Equal(Shape{2, 3, 1}))
	assert.False(t, Shape{3, Unknown}.IsKnown())
	assert.True(t, Shape{3, 0}.IsKnown())
}

func TestShapeValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape Shape
		msg   string
	}{
		{"negative", Shape{2, -2}, "dimension 1 is -2"},
		{"overflow", Shape{1 << 32, 1 << 32}, "size overflows int"},
		{"overflow with int64 max", Shape{math.MaxInt64, 2}, "size overflows int"},
		{"min int64", Shape{math.MinInt64}, "dimension 0 is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.shape.Validate()
			assert.ErrorIs(t, err, ErrShape)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	assert.NoError(t, Shape{0, math.MaxInt64, math.MaxInt64}.Validate(), "an empty shape does not overflow")
}

func TestLayoutContiguity(t *testing.T) {
	for _, tc := range []struct {
		name     string
		layout   Layout
		row, col bool
	}{
		{"row-major", RowMajor(Shape{2, 3}), true, false},
		{"column-major", ColumnMajor(Shape{2, 3}), false, true},
		{"vector is both", RowMajor(Shape{5}), true, true},
		{"scalar is both", RowMajor(Shape{}), true, true},
		{"unit dimensions ignore their strides", Layout{Shape: Shape{1, 3, 1}, Strides: []int64{99, 1, -7}}, true, true},
		{"empty is both", Layout{Shape: Shape{2, 0}, Strides: []int64{5, 9}}, true, true},
		{"strided is neither", Layout{Shape: Shape{2, 3}, Strides: []int64{6, 2}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.row, tc.layout.IsRowMajor())
			assert.Equal(t, tc.col, tc.layout.IsColumnMajor())
			assert.Equal(t, tc.row || tc.col, tc.layout.IsContiguous())
		})
	}
	assert.Equal(t, []int64{12, 4, 1}, RowMajor(Shape{2, 3, 4}).Strides)
	assert.Equal(t, []int64{1, 2, 6}, ColumnMajor(Shape{2, 3, 4}).Strides)
	assert.Equal(t, []int64{3, 3, 1}, RowMajor(Shape{2, 0, 3}).Strides, "zero dimensions count as one")
}

func TestLayoutPosition(t *testing.T) {
	l := Layout{Shape: Shape{2, 3}, Strides: []int64{-3, 1}, Offset: 3}
	for _, tc := range []struct {
		idx []int64
		pos int64
		ok  bool
	}{
		{[]int64{0, 0}, 3, true},
		{[]int64{1, 2}, 2, true},
		{[]int64{2, 0}, 0, false},
		{[]int64{0, -1}, 0, false},
		{[]int64{0}, 0, false},
	} {
		pos, ok := l.Position(tc.idx...)
		assert.Equal(t, tc.ok, ok, "%v", tc.idx)
		assert.Equal(t, tc.pos, pos, "%v", tc.idx)
	}
	assert.NoError(t, l.Validate(6))
	assert.ErrorIs(t, l.Validate(5), ErrLayout)
	_, ok := Layout{Shape: Shape{2}}.Position(0)
	assert.False(t, ok, "missing strides")
}

func TestDType(t *testing.T) {
	for _, tc := range []struct {
		d      DType
		name   string
		size   int
		family Family
		arrow  arrow.DataType
		signed bool
	}{
		{Int8, "int8", 1, FamilyInteger, arrow.PrimitiveTypes.Int8, true},
		{Int16, "int16", 2, FamilyInteger, arrow.PrimitiveTypes.Int16, true},
		{Int32, "int32", 4, FamilyInteger, arrow.PrimitiveTypes.Int32, true},
		{Int64, "int64", 8, FamilyInteger, arrow.PrimitiveTypes.Int64, true},
		{Uint8, "uint8", 1, FamilyInteger, arrow.PrimitiveTypes.Uint8, false},
		{Uint16, "uint16", 2, FamilyInteger, arrow.PrimitiveTypes.Uint16, false},
		{Uint32, "uint32", 4, FamilyInteger, arrow.PrimitiveTypes.Uint32, false},
		{Uint64, "uint64", 8, FamilyInteger, arrow.PrimitiveTypes.Uint64, false},
		{Float16, "float16", 2, FamilyFloat, arrow.FixedWidthTypes.Float16, true},
		{Float32, "float32", 4, FamilyFloat, arrow.PrimitiveTypes.Float32, true},
		{Float64, "float64", 8, FamilyFloat, arrow.PrimitiveTypes.Float64, true},
		{Bool, "bool", 1, FamilyBool, nil, false},
		{String, "string", 0, FamilyString, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.True(t, tc.d.Valid())
			assert.Equal(t, tc.name, tc.d.String())
			assert.Equal(t, tc.size, tc.d.Size())
			assert.Equal(t, tc.family, tc.d.Family())
			assert.Equal(t, tc.arrow, tc.d.ArrowType())
			assert.Equal(t, tc.signed, tc.d.IsSigned())
			assert.Equal(t, tc.family == FamilyInteger || tc.family == FamilyFloat, tc.d.IsNumeric())
			assert.Equal(t, tc.family == FamilyInteger, tc.d.IsInteger())
			assert.Equal(t, tc.family == FamilyFloat, tc.d.IsFloat())
			parsed, err := ParseDType(tc.name)
			assert.NoError(t, err)
			assert.Equal(t, tc.d, parsed)
		})
	}
	assert.Len(t, DTypes(), 13)
	assert.Equal(t, Float16, DTypeOf[float16.Num]())
	assert.Equal(t, String, DTypeOf[string]())
	for _, name := range []string{"float128", "", "object", "complex64"} {
		_, err := ParseDType(name)
		assert.ErrorIs(t, err, ErrDType, name)
	}
	for alias, d := range map[string]DType{"half": Float16, "float": Float32, "double": Float64, "string": String} {
		got, err := ParseDType(alias)
		assert.NoError(t, err)
		assert.Equal(t, d, got)
	}
	assert.False(t, DType(0).Valid())
	assert.Equal(t, "DType(0)", DType(0).String())
	assert.Equal(t, "DType(99)", DType(99).String())
	assert.False(t, DType(99).IsNumeric())
	assert.Panics(t, func() { DType(0).Size() })
	assert.Equal(t, "integer", FamilyInteger.String())
	assert.Equal(t, "Family(9)", Family(9).String())
}

func TestElementWidthsMatchDTypes(t *testing.T) {
	assert.Equal(t, Int8.Size(), sizeOf[int8]())
	assert.Equal(t, Uint16.Size(), sizeOf[uint16]())
	assert.Equal(t, Float16.Size(), sizeOf[float16.Num]())
	assert.Equal(t, Float64.Size(), sizeOf[float64]())
	assert.Equal(t, Bool.Size(), sizeOf[bool]())
}
