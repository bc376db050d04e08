package arrowtensor_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestPlainColumns: every plain type reads as a tensor of one value per row, its nulls as
// validity, and PlainColumn writes it back as the same type (strings as utf8, or binary when a
// value is not UTF-8); nothing leaks.
func TestPlainColumns(t *testing.T) {
	for _, tc := range []struct {
		typ   arrow.DataType
		json  string
		want  any
		valid []bool
		back  arrow.DataType // what PlainColumn writes, when not typ
	}{
		{arrow.PrimitiveTypes.Int8, `[1, -2, 3]`, []int8{1, -2, 3}, nil, nil},
		{arrow.PrimitiveTypes.Int16, `[1, null, 3]`, []int16{1, 0, 3}, []bool{true, false, true}, nil},
		{arrow.PrimitiveTypes.Int32, `[7]`, []int32{7}, nil, nil},
		{arrow.PrimitiveTypes.Int64, `[1, 2, null]`, []int64{1, 2, 0}, []bool{true, true, false}, nil},
		{arrow.PrimitiveTypes.Uint8, `[255, 0]`, []uint8{255, 0}, nil, nil},
		{arrow.PrimitiveTypes.Uint16, `[1]`, []uint16{1}, nil, nil},
		{arrow.PrimitiveTypes.Uint32, `[4294967295]`, []uint32{4294967295}, nil, nil},
		{arrow.PrimitiveTypes.Uint64, `[4611686018427387904]`, []uint64{1 << 62}, nil, nil},
		{arrow.FixedWidthTypes.Float16, `[1.5, -2]`, []float16.Num{float16.New(1.5), float16.New(-2)}, nil, nil},
		{arrow.PrimitiveTypes.Float32, `[0.25, null]`, []float32{0.25, 0}, []bool{true, false}, nil},
		{arrow.PrimitiveTypes.Float64, `[3.5, 1e300]`, []float64{3.5, 1e300}, nil, nil},
		{arrow.FixedWidthTypes.Boolean, `[true, null, false]`, []bool{true, false, false}, []bool{true, false, true}, nil},
		{arrow.BinaryTypes.String, `["a", "", null, "héllo"]`, []string{"a", "", "", "héllo"}, []bool{true, true, false, true}, nil},
		{arrow.BinaryTypes.LargeString, `["x", "yz"]`, []string{"x", "yz"}, nil, arrow.BinaryTypes.String},
		{arrow.BinaryTypes.Binary, `["AP8=", "YWI="]`, []string{"\x00\xff", "ab"}, nil, nil},
		{arrow.BinaryTypes.LargeBinary, `["YWI="]`, []string{"ab"}, nil, arrow.BinaryTypes.String},
		{&arrow.FixedSizeBinaryType{ByteWidth: 2}, `["YWI=", "Y2Q="]`, []string{"ab", "cd"}, nil, arrow.BinaryTypes.String},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			arr, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
			require.NoError(t, err)
			defer arr.Release()
			require.True(t, arrowtensor.IsPlainType(tc.typ))
			a, valid, err := arrowtensor.ColumnValues(arr)
			require.NoError(t, err)
			assert.Equal(t, ndarray.Shape{int64(arr.Len())}, a.Shape())
			assert.Equal(t, tc.valid, valid)
			assert.True(t, a.ReadOnly())
			got := values(t, a)
			if tc.valid != nil { // a null row's value is unspecified in a view
				for i, v := range tc.valid {
					if !v {
						zeroAt(got, i)
					}
				}
			}
			assert.Equal(t, tc.want, got)

			back, err := arrowtensor.PlainColumn(mem, a, valid)
			require.NoError(t, err)
			defer back.Release()
			want := tc.back
			if want == nil {
				want = tc.typ
			}
			assert.True(t, arrow.TypeEqual(want, back.DataType()), "%v written as %v", tc.typ, back.DataType())
			assert.Equal(t, arr.NullN(), back.NullN())
			again, againValid, err := arrowtensor.ColumnValues(back)
			require.NoError(t, err)
			assert.Equal(t, valid, againValid)
			gotAgain := values(t, again)
			if tc.valid != nil {
				for i, v := range tc.valid {
					if !v {
						zeroAt(gotAgain, i)
					}
				}
			}
			assert.Equal(t, tc.want, gotAgain)
		})
	}
}

// values returns a's values as a slice of its element type.
func values(t *testing.T, a ndarray.Array) any {
	switch d := a.(type) {
	case *ndarray.Dense[int8]:
		return append([]int8{}, d.Data()...)
	case *ndarray.Dense[int16]:
		return append([]int16{}, d.Data()...)
	case *ndarray.Dense[int32]:
		return append([]int32{}, d.Data()...)
	case *ndarray.Dense[int64]:
		return append([]int64{}, d.Data()...)
	case *ndarray.Dense[uint8]:
		return append([]uint8{}, d.Data()...)
	case *ndarray.Dense[uint16]:
		return append([]uint16{}, d.Data()...)
	case *ndarray.Dense[uint32]:
		return append([]uint32{}, d.Data()...)
	case *ndarray.Dense[uint64]:
		return append([]uint64{}, d.Data()...)
	case *ndarray.Dense[float16.Num]:
		return append([]float16.Num{}, d.Data()...)
	case *ndarray.Dense[float32]:
		return append([]float32{}, d.Data()...)
	case *ndarray.Dense[float64]:
		return append([]float64{}, d.Data()...)
	case *ndarray.Dense[bool]:
		return append([]bool{}, d.Data()...)
	case *ndarray.Dense[string]:
		return append([]string{}, d.Data()...)
	}
	t.Fatalf("unexpected %T", a)
	return nil
}

// zeroAt sets element i of a slice values returned to its zero value.
func zeroAt(s any, i int) {
	switch v := s.(type) {
	case []int16:
		v[i] = 0
	case []int64:
		v[i] = 0
	case []float32:
		v[i] = 0
	case []bool:
		v[i] = false
	case []string:
		v[i] = ""
	}
}

// TestPlainColumnViews: a column of numbers is read without a copy (the tensor views the
// values buffer at the array's offset), and written without one; strings are copied into one
// allocation, so that no string views the column's buffers.
func TestPlainColumnViews(t *testing.T) {
	arr, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64, strings.NewReader("[1, 2, 3, 4]"))
	require.NoError(t, err)
	sliced := array.NewSlice(arr, 1, 3)
	a, _, err := arrowtensor.ColumnValues(sliced)
	require.NoError(t, err)
	d := a.(*ndarray.Dense[int64])
	assert.Equal(t, []int64{2, 3}, d.Data())
	buf := arr.Data().Buffers()[1].Bytes()
	assert.Equal(t, unsafe.Pointer(&buf[8]), unsafe.Pointer(&d.Data()[0]), "a view of the values buffer")
	back, err := arrowtensor.PlainColumn(memory.DefaultAllocator, d, nil)
	require.NoError(t, err)
	assert.Equal(t, unsafe.Pointer(&buf[8]), unsafe.Pointer(&back.Data().Buffers()[1].Bytes()[0]), "written as a view")

	words, _, err := array.FromJSON(memory.DefaultAllocator, arrow.BinaryTypes.String, strings.NewReader(`["ab", "cd"]`))
	require.NoError(t, err)
	w, _, err := arrowtensor.ColumnValues(words)
	require.NoError(t, err)
	s := w.(*ndarray.Dense[string]).Data()
	data := words.Data().Buffers()[2].Bytes()
	assert.NotEqual(t, unsafe.Pointer(&data[0]), unsafe.Pointer(unsafe.StringData(s[0])), "a copy")
	assert.Equal(t, unsafe.Add(unsafe.Pointer(unsafe.StringData(s[0])), 2), unsafe.Pointer(unsafe.StringData(s[1])), "one allocation")
}

// TestDictionaryColumns: a dictionary-encoded column reads as its values; a row whose index is
// null, or whose value is, is null.
func TestDictionaryColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	dict, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["cat", "dog", null]`))
	require.NoError(t, err)
	defer dict.Release()
	idx, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(`[1, 0, null, 2, 1]`))
	require.NoError(t, err)
	defer idx.Release()
	arr := array.NewDictionaryArray(dictType, idx, dict)
	defer arr.Release()
	require.True(t, arrowtensor.IsPlainType(dictType))
	a, valid, err := arrowtensor.ColumnValues(arr)
	require.NoError(t, err)
	assert.Equal(t, []string{"dog", "cat", "", "", "dog"}, a.(*ndarray.Dense[string]).Data())
	assert.Equal(t, []bool{true, true, false, false, true}, valid)

	for _, typ := range []arrow.DataType{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), arrow.FixedWidthTypes.Timestamp_ms, arrow.Null} {
		assert.False(t, arrowtensor.IsPlainType(typ), "%v", typ)
	}
}

// TestPlainColumnRefuses: PlainColumn takes one value per row and one validity flag per row.
func TestPlainColumnRefuses(t *testing.T) {
	_, err := arrowtensor.PlainColumn(memory.DefaultAllocator, ndarray.New[int32](2, 2), nil)
	assert.ErrorIs(t, err, ndarray.ErrShape)
	_, err = arrowtensor.PlainColumn(memory.DefaultAllocator, ndarray.New[int32](2), []bool{true})
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

// TestAsBinary: utf8 values become binary at any depth of lists, viewing the same buffers
// (nulls, offsets and bytes), sliced or not; other types come back as they are; nothing leaks.
func TestAsBinary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		typ  arrow.DataType
		json string
		want string // the type AsBinary gives
	}{
		{arrow.BinaryTypes.String, `["a", null, "bc"]`, "binary"},
		{arrow.BinaryTypes.LargeString, `["a", "é"]`, "large_binary"},
		{arrow.ListOf(arrow.BinaryTypes.String), `[["a"], null, [], ["b", "c"]]`, "list<item: binary, nullable>"},
		{arrow.LargeListOf(arrow.FixedSizeListOf(2, arrow.BinaryTypes.String)), `[[["a", "b"]], [["c", null], ["d", "e"]]]`,
			"large_list<item: fixed_size_list<item: binary, nullable>[2], nullable>"},
		{arrow.BinaryTypes.Binary, `["YQ=="]`, "binary"},
		{arrow.PrimitiveTypes.Int64, `[1, null]`, "int64"},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			arr, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
			require.NoError(t, err)
			defer arr.Release()
			sliced := array.NewSlice(arr, 1, int64(arr.Len()))
			defer sliced.Release()
			for _, a := range []arrow.Array{arr, sliced} {
				b := arrowtensor.AsBinary(a)
				assert.Equal(t, tc.want, b.DataType().String())
				sameBuffers(t, a.Data(), b.Data())
				b.Release()
			}
		})
	}
}

// sameBuffers checks that b views a's buffers, level by level, at a's length, offset and nulls.
func sameBuffers(t *testing.T, a, b arrow.ArrayData) {
	t.Helper()
	assert.Equal(t, a.Len(), b.Len())
	assert.Equal(t, a.Offset(), b.Offset())
	assert.Equal(t, a.NullN(), b.NullN())
	require.Len(t, b.Buffers(), len(a.Buffers()))
	for i, buf := range a.Buffers() {
		assert.Same(t, buf, b.Buffers()[i], "buffer %d", i)
	}
	require.Len(t, b.Children(), len(a.Children()))
	for i, c := range a.Children() {
		sameBuffers(t, c, b.Children()[i])
	}
}

// TestAsBinaryOfNoValues: a column of bytes with no value at all (lists of no strings, what
// a feature every Example holds empty becomes) is a well-formed binary array that an IPC
// writer writes and a reader reads back.
func TestAsBinaryOfNoValues(t *testing.T) {
	none := array.MakeArrayOfNull(memory.DefaultAllocator, arrow.BinaryTypes.String, 0) // no offsets buffer at all
	defer none.Release()
	offsets := memory.NewBufferBytes(make([]byte, 3*4))
	data := array.NewData(arrow.ListOf(arrow.BinaryTypes.String), 2, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{none.Data()}, 0, 0)
	defer data.Release()
	arr := array.MakeFromData(data)
	defer arr.Release()
	b := arrowtensor.AsBinary(arr)
	defer b.Release()
	assert.Equal(t, "list<item: binary, nullable>", b.DataType().String())
	schema := arrow.NewSchema([]arrow.Field{{Name: "b", Type: b.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{b}, 2)
	defer rec.Release()
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	r, err := arrowipc.NewReader(&buf)
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	assert.Equal(t, `[[] []]`, fmt.Sprint(r.Record().Column(0)))
}
