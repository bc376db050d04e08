package parquet

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

// TestCheckArray: arrays a lying page can leave behind are refused before anything reads
// them; well-formed ones pass, sliced ones included.
func TestCheckArray(t *testing.T) {
	i32 := func(vals ...int32) *memory.Buffer { return memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals)) }
	i64 := func(vals ...int64) *memory.Buffer { return memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals)) }
	bytes := func(n int) *memory.Buffer { return memory.NewBufferBytes(make([]byte, n)) }
	floats := func(n, off int) arrow.ArrayData {
		return array.NewData(arrow.PrimitiveTypes.Float32, n, []*memory.Buffer{nil, bytes(4 * (n + off))}, nil, 0, off)
	}
	list := func(offs *memory.Buffer, n int, child arrow.ArrayData) arrow.ArrayData {
		return array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Float32), n, []*memory.Buffer{nil, offs}, []arrow.ArrayData{child}, 0, 0)
	}
	for _, tc := range []struct {
		name string
		data arrow.ArrayData
		ok   bool
	}{
		{"floats", floats(4, 0), true},
		{"floats at an offset", floats(4, 2), true},
		{"floats, short", array.NewData(arrow.PrimitiveTypes.Float32, 4, []*memory.Buffer{nil, bytes(15)}, nil, 0, 0), false},
		{"nulls without a bitmap", array.NewData(arrow.PrimitiveTypes.Float32, 9, []*memory.Buffer{nil, bytes(36)}, nil, 1, 0), false},
		{"bools, short", array.NewData(arrow.FixedWidthTypes.Boolean, 9, []*memory.Buffer{nil, bytes(1)}, nil, 0, 0), false},
		{"list", list(i32(0, 2, 4), 2, floats(4, 0)), true},
		{"list, offsets past the values", list(i32(0, 2, 5), 2, floats(4, 0)), false},
		{"list, decreasing offsets", list(i32(0, 3, 2), 2, floats(4, 0)), false},
		{"list, negative first offset", list(i32(-1, 2, 4), 2, floats(4, 0)), false},
		{"list, too few offsets", list(i32(0, 2), 2, floats(4, 0)), false},
		{"list, a short child", list(i32(0, 2, 4), 2, array.NewData(arrow.PrimitiveTypes.Float32, 4, []*memory.Buffer{nil, bytes(8)}, nil, 0, 0)), false},
		{"large list", array.NewData(arrow.LargeListOf(arrow.PrimitiveTypes.Float32), 1, []*memory.Buffer{nil, i64(0, 4)}, []arrow.ArrayData{floats(4, 0)}, 0, 0), true},
		{"large list, past", array.NewData(arrow.LargeListOf(arrow.PrimitiveTypes.Float32), 1, []*memory.Buffer{nil, i64(0, 5)}, []arrow.ArrayData{floats(4, 0)}, 0, 0), false},
		{"fixed-size list", array.NewData(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), 2, []*memory.Buffer{nil}, []arrow.ArrayData{floats(4, 0)}, 0, 0), true},
		{"fixed-size list, a short child", array.NewData(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), 3, []*memory.Buffer{nil}, []arrow.ArrayData{floats(4, 0)}, 0, 0), false},
		{"string", array.NewData(arrow.BinaryTypes.String, 2, []*memory.Buffer{nil, i32(0, 1, 3), bytes(3)}, nil, 0, 0), true},
		{"string, past its data", array.NewData(arrow.BinaryTypes.String, 2, []*memory.Buffer{nil, i32(0, 1, 4), bytes(3)}, nil, 0, 0), false},
		{"binary, decreasing", array.NewData(arrow.BinaryTypes.Binary, 2, []*memory.Buffer{nil, i32(0, 2, 1), bytes(3)}, nil, 0, 0), false},
		{"struct, a short field", array.NewData(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Float32}), 5, []*memory.Buffer{nil}, []arrow.ArrayData{floats(4, 0)}, 0, 0), false},
		{"dictionary", func() arrow.ArrayData {
			d := array.NewData(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Float32}, 2, []*memory.Buffer{nil, i32(0, 3)}, nil, 0, 0)
			d.SetDictionary(floats(4, 0))
			return d
		}(), true},
		{"dictionary, an index past it", func() arrow.ArrayData {
			d := array.NewData(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Float32}, 2, []*memory.Buffer{nil, i32(0, 4)}, nil, 0, 0)
			d.SetDictionary(floats(4, 0))
			return d
		}(), false},
		{"dictionary, uint8 indices up to 255", func() arrow.ArrayData {
			d := array.NewData(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.PrimitiveTypes.Float32}, 1, []*memory.Buffer{nil, memory.NewBufferBytes([]byte{255})}, nil, 0, 0)
			d.SetDictionary(floats(256, 0))
			return d
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkArray(tc.data)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalid)
			}
		})
	}
}
