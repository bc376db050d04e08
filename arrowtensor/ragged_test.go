package arrowtensor

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// columnArray returns the column of rec named name.
func columnArray(t *testing.T, rec arrow.Record, name string) arrow.Array {
	idx := rec.Schema().FieldIndices(name)
	require.Len(t, idx, 1)
	return rec.Column(idx[0])
}

// bufferAddr returns the address of the first byte of buffer i of arr's data.
func bufferAddr(arr arrow.Array, i int) uintptr {
	return uintptr(unsafe.Pointer(&arr.Data().Buffers()[i].Bytes()[0]))
}

func TestGoldenRaggedColumns(t *testing.T) {
	want := loadExpected(t)
	for _, file := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		t.Run(file, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := readGolden(t, mem, file)
			defer rec.Release()
			for _, tc := range []struct {
				column string
				typ    arrow.DataType
				split  ndarray.DType
				list   arrow.Type
			}{
				{"tokens", arrow.ListOf(arrow.PrimitiveTypes.Float32), ndarray.Int32, arrow.LIST},
				{"ids", arrow.LargeListOf(arrow.PrimitiveTypes.Int64), ndarray.Int64, arrow.LARGE_LIST},
				{"nested", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), ndarray.Int32, arrow.LIST},
			} {
				e := want["batch_tensors."+tc.column]
				col := columnArray(t, rec, tc.column)
				require.True(t, arrow.TypeEqual(tc.typ, col.DataType()), "%v", col.DataType())
				a, err := RaggedFromListAny(col)
				require.NoError(t, err)
				require.NoError(t, a.Validate())
				assert.Equal(t, e.Kind, "ragged")
				assert.Equal(t, e.DType, a.DType().String())
				assert.Equal(t, e.NRows, a.NumRows())
				assert.Equal(t, e.NVals, a.NumValues())
				assert.Equal(t, e.RowSplits, a.RowSplits())
				assert.Equal(t, len(e.RowSplits), a.RaggedRank())
				assert.Equal(t, e.SHA256, sha(t, a.WriteTo))
				bin, err := os.ReadFile(filepath.Join(goldenDir, "batch_tensors."+tc.column+".bin"))
				require.NoError(t, err)
				var buf bytes.Buffer
				_, err = a.WriteTo(&buf)
				require.NoError(t, err)
				assert.Equal(t, bin, buf.Bytes())
				assert.Equal(t, tc.split, a.SplitDType())
				assert.True(t, a.ReadOnly())

				// Back to Arrow: the same type and the same values.
				back, err := ListFromRaggedAny(mem, a, tc.list)
				require.NoError(t, err)
				assert.True(t, arrow.TypeEqual(col.DataType(), back.DataType()), "%v", back.DataType())
				assert.True(t, array.Equal(col, back), "%v\n%v", col, back)
				back.Release()
			}

			// Zero-copy: the large_list column's values and offsets are the record's buffers.
			ids := columnArray(t, rec, "ids").(*array.LargeList)
			a, err := RaggedFromList[int64](ids)
			require.NoError(t, err)
			assert.Equal(t, bufferAddr(ids.ListValues(), 1), uintptr(unsafe.Pointer(&a.FlatValues()[0])))
			assert.Equal(t, bufferAddr(ids, 1), uintptr(unsafe.Pointer(&a.RowSplits()[0][0])))
			// The list<float32> column's values too; only its int32 offsets are widened.
			tokens := columnArray(t, rec, "tokens").(*array.List)
			f, err := RaggedFromList[float32](tokens)
			require.NoError(t, err)
			assert.Equal(t, bufferAddr(tokens.ListValues(), 1), uintptr(unsafe.Pointer(&f.FlatValues()[0])))

			_, err = RaggedFromList[float64](tokens)
			assert.ErrorIs(t, err, ndarray.ErrDType)
			_, err = RaggedFromListAny(columnArray(t, rec, "images"))
			assert.ErrorIs(t, err, ErrUnsupported, "a fixed_shape_tensor column is an extension array, not a list")
		})
	}
}

// TestSlicedLists reads slices of list arrays in place, their row splits rebased to 0.
func TestSlicedLists(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := readGolden(t, mem, "batch_tensors.arrow")
	defer rec.Release()

	ids := array.NewSlice(columnArray(t, rec, "ids"), 1, 3)
	defer ids.Release()
	a, err := RaggedFromList[int64](ids)
	require.NoError(t, err)
	full, err := RaggedFromList[int64](columnArray(t, rec, "ids"))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 4, 5}}, a.RowSplits())
	assert.Equal(t, full.Row(1).FlatValues(), a.Row(0).FlatValues())
	assert.Same(t, &full.FlatValues()[2], &a.FlatValues()[0], "a view of the same values")

	nested := array.NewSlice(columnArray(t, rec, "nested"), 2, 4)
	defer nested.Release()
	n, err := RaggedFromList[int32](nested)
	require.NoError(t, err)
	fullNested, err := RaggedFromList[int32](columnArray(t, rec, "nested"))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 3, 3}, {0, 0, 1, 3}}, n.RowSplits())
	assert.Equal(t, fullNested.Row(2).String(), n.Row(0).String())
	assert.Equal(t, "[]", n.Row(1).String())

	// Offsets that do not start at 0 are valid Arrow: the rows read as they are.
	offsets := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{2, 4, 4, 7}))
	values := array.NewData(arrow.PrimitiveTypes.Int32, 8, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 1, 2, 3, 4, 5, 6, 7}))}, nil, 0, 0)
	defer values.Release()
	list := array.MakeFromData(array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int32), 3, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{values}, 0, 0))
	defer list.Release()
	r, err := RaggedFromList[int32](list)
	require.NoError(t, err)
	assert.Equal(t, "[[2, 3], [], [4, 5, 6]]", r.String())
	assert.Equal(t, [][]int64{{0, 2, 2, 5}}, r.RowSplits())
}

// listOf returns a list array of the given offsets over int32 values, with a validity bitmap
// when valid is not nil.
func listOf(offsets []int32, values []int32, valid []bool) arrow.Array {
	var bitmap *memory.Buffer
	nulls := 0
	if valid != nil {
		b := make([]byte, (len(valid)+7)/8)
		for i, v := range valid {
			if v {
				b[i/8] |= 1 << (i % 8)
			} else {
				nulls++
			}
		}
		bitmap = memory.NewBufferBytes(b)
	}
	vals := array.NewData(arrow.PrimitiveTypes.Int32, len(values), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(values))}, nil, 0, 0)
	defer vals.Release()
	data := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int32), len(offsets)-1, []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{vals}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// TestBadListOffsets covers the ragged rows of RELIABILITY.md: offsets decreasing, not starting
// at 0 (valid Arrow, read in place above), past the values.
func TestBadListOffsets(t *testing.T) {
	values := []int32{0, 1, 2, 3}
	tests := []struct {
		name     string
		offsets  []int32
		validate bool // the error comes from Validate, not from the conversion
	}{
		{"past the values", []int32{0, 2, 9}, false},
		{"first negative", []int32{-1, 2, 4}, false},
		{"last before first", []int32{3, 4, 1}, false},
		{"decreasing inside", []int32{0, 3, 1, 4}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := listOf(tt.offsets, values, nil)
			defer list.Release()
			a, err := RaggedFromList[int32](list)
			if !tt.validate {
				require.Error(t, err)
				assert.ErrorIs(t, err, ragged.ErrInvalid)
				assert.Nil(t, a)
				return
			}
			require.NoError(t, err, "the conversion trusts the offsets between first and last")
			err = a.Validate()
			assert.ErrorIs(t, err, ragged.ErrInvalid)
			assert.Contains(t, err.Error(), string(ragged.RuleNonDecreasing))
		})
	}
	// The gathering path (taken for nulls) checks every offset.
	list := listOf([]int32{0, 3, 1, 4}, values, []bool{true, true, false})
	defer list.Release()
	_, err := RaggedFromList[int32](list)
	assert.ErrorIs(t, err, ragged.ErrInvalid)

	// A buffer of offsets shorter than the rows.
	short := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int32), 5, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 1}))},
		[]arrow.ArrayData{array.NewData(arrow.PrimitiveTypes.Int32, 0, []*memory.Buffer{nil, nil}, nil, 0, 0)}, 0, 0)
	defer short.Release()
	shortList := array.MakeFromData(short)
	defer shortList.Release()
	_, err = RaggedFromList[int32](shortList)
	assert.ErrorIs(t, err, ragged.ErrInvalid)
}

func TestListNulls(t *testing.T) {
	// Row 1 is null but its offsets span values 2 and 3: it reads empty, and they drop out.
	list := listOf([]int32{0, 2, 4, 5}, []int32{10, 11, 12, 13, 14}, []bool{true, false, true})
	defer list.Release()
	a, err := RaggedFromList[int32](list)
	require.NoError(t, err)
	assert.Equal(t, "[[10, 11], [], [14]]", a.String())
	assert.Equal(t, []int32{10, 11, 14}, a.FlatValues())
	assert.Equal(t, ndarray.Int32, a.SplitDType())
	assert.True(t, a.ReadOnly())

	// A null leaf value has no place in a ragged array.
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{1, 2, 3}, []bool{true, false, true})
	leaf := b.NewArray()
	b.Release()
	defer leaf.Release()
	data := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int32), 1, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 3}))}, []arrow.ArrayData{leaf.Data()}, 0, 0)
	defer data.Release()
	withNull := array.MakeFromData(data)
	defer withNull.Release()
	_, err = RaggedFromList[int32](withNull)
	assert.ErrorIs(t, err, ErrNull)

	// A null fixed-size-list slot neither.
	fb := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 2, arrow.PrimitiveTypes.Int32)
	defer fb.Release()
	fb.Append(true)
	fb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	fb.AppendNull()
	fixed := fb.NewArray()
	defer fixed.Release()
	_, err = RaggedFromList[int32](fixed)
	assert.ErrorIs(t, err, ErrNull)
}

func TestFixedSizeListLevels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tests := []struct {
		name  string
		make  func() (*ragged.Array[float32], error)
		typ   arrow.DataType
		shape ndarray.Shape
	}{
		{
			name: "ragged rows of 3-vectors (inner shape)",
			make: func() (*ragged.Array[float32], error) {
				return ragged.Make([]float32{1, 2, 3, 4, 5, 6}, ndarray.Shape{3}, ragged.RowSplits([]int64{0, 2, 2}))
			},
			typ:   arrow.LargeListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)),
			shape: ndarray.Shape{2, -1, 3},
		},
		{
			name: "pairs of ragged rows (uniform partition)",
			make: func() (*ragged.Array[float32], error) {
				return ragged.Make([]float32{1, 2, 3, 4, 5}, nil, ragged.UniformRowLength(2), ragged.RowSplits([]int64{0, 1, 1, 4, 5}))
			},
			typ:   arrow.FixedSizeListOf(2, arrow.LargeListOf(arrow.PrimitiveTypes.Float32)),
			shape: ndarray.Shape{2, 2, -1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.make()
			require.NoError(t, err)
			arr, err := ListFromRagged(mem, a, arrow.LARGE_LIST)
			require.NoError(t, err)
			defer arr.Release()
			assert.True(t, arrow.TypeEqual(tt.typ, arr.DataType()), "%v", arr.DataType())
			back, err := RaggedFromList[float32](arr)
			require.NoError(t, err)
			assert.Equal(t, tt.shape, back.Shape())
			assert.Equal(t, a.FlatValues(), back.FlatValues())
			// Fixed-size lists read back as uniform partitions, so the inner shape of the first
			// case becomes a partition: the same elements, one more ragged rank.
			d1, err := a.ToDense(0)
			require.NoError(t, err)
			d2, err := back.ToDense(0)
			require.NoError(t, err)
			assert.True(t, d1.Equal(d2))

			// A slice of the fixed-size-list-topped array reads its own rows.
			part := array.NewSlice(arr, 1, 2)
			defer part.Release()
			p, err := RaggedFromList[float32](part)
			require.NoError(t, err)
			assert.Equal(t, back.Row(1).String(), p.Row(0).String())
		})
	}
	_, err := ListFromRagged(mem, ragged.New[int8](2, -1, 0), arrow.LIST)
	assert.ErrorIs(t, err, ndarray.ErrShape, "arrow-go has no fixed-size list of size 0")
	_, err = ListFromRagged(mem, ragged.New[int8](2, -1), arrow.FIXED_SIZE_LIST)
	assert.ErrorIs(t, err, ErrUnsupported)
}

// TestRaggedListRoundTripEveryType writes a ragged array of each element type as list and
// large_list and reads it back.
func TestRaggedListRoundTripEveryType(t *testing.T) {
	t.Run("int8", func(t *testing.T) { listRoundTrip(t, func(i int) int8 { return int8(i) }) })
	t.Run("int16", func(t *testing.T) { listRoundTrip(t, func(i int) int16 { return int16(-i) }) })
	t.Run("int32", func(t *testing.T) { listRoundTrip(t, func(i int) int32 { return int32(i * 1000) }) })
	t.Run("int64", func(t *testing.T) { listRoundTrip(t, func(i int) int64 { return int64(i) << 40 }) })
	t.Run("uint8", func(t *testing.T) { listRoundTrip(t, func(i int) uint8 { return uint8(i) }) })
	t.Run("uint16", func(t *testing.T) { listRoundTrip(t, func(i int) uint16 { return uint16(i) }) })
	t.Run("uint32", func(t *testing.T) { listRoundTrip(t, func(i int) uint32 { return uint32(i) }) })
	t.Run("uint64", func(t *testing.T) { listRoundTrip(t, func(i int) uint64 { return uint64(i) << 50 }) })
	t.Run("float16", func(t *testing.T) { listRoundTrip(t, func(i int) float16.Num { return float16.New(float32(i) / 2) }) })
	t.Run("float32", func(t *testing.T) { listRoundTrip(t, func(i int) float32 { return float32(i) / 3 }) })
	t.Run("float64", func(t *testing.T) { listRoundTrip(t, func(i int) float64 { return float64(i) / 7 }) })
	t.Run("bool", func(t *testing.T) { listRoundTrip(t, func(i int) bool { return i%3 == 0 }) })
	t.Run("string", func(t *testing.T) { listRoundTrip(t, func(i int) string { return string(rune('a' + i%26)) }) })
}

func listRoundTrip[T ndarray.Element](t *testing.T, value func(int) T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := ragged.New[T](-1, -1, -1)
	n := 0
	for i := range int64(5) {
		for j := range i % 3 {
			for k := range (i + j) % 4 {
				a.Set(value(n), i, j, k)
				n++
			}
		}
	}
	for _, list := range []arrow.Type{arrow.LIST, arrow.LARGE_LIST} {
		arr, err := ListFromRagged(mem, a, list)
		require.NoError(t, err)
		back, err := RaggedFromList[T](arr)
		require.NoError(t, err)
		assert.True(t, ragged.Equal(a, back), "%v\n%v", a, back)
		want := ndarray.Int64
		if list == arrow.LIST {
			want = ndarray.Int32
		}
		assert.Equal(t, want, back.SplitDType())
		anyBack, err := RaggedFromListAny(arr)
		require.NoError(t, err)
		assert.Equal(t, a.String(), anyBack.String())
		arr.Release()
	}
}

func TestVariableShapeRagged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Three tensors of shapes (2, 3), (1, 2) and (0, 4).
	a, err := ragged.FromRowSplits([]int32{1, 2, 3, 4, 5, 6, 7, 8}, []int64{0, 2, 3, 3}, []int64{0, 3, 6, 8})
	require.NoError(t, err)
	v, err := VariableShapeFromRagged(mem, a, []string{"h", "w"})
	require.NoError(t, err)
	defer v.Release()
	first, err := TensorAt[int32](v, 0)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{2, 3}, first.Shape())
	assert.Equal(t, "[[1 2 3]\n [4 5 6]]", first.String())

	back, err := RaggedFromVariableShape[int32](v)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{3, -1, -1}, back.Shape())
	assert.Equal(t, "[[[1, 2, 3], [4, 5, 6]], [[7, 8]], []]", back.String())
	assert.Equal(t, [][]int64{{0, 2, 3, 3}, {0, 3, 6, 8}}, back.RowSplits())
	assert.Same(t, &back.FlatValues()[0], (*int32)(unsafe.Pointer(&v.Storage().(*array.Struct).Field(0).(*array.List).ListValues().Data().Buffers()[1].Bytes()[0])), "values viewed")

	// A uniform dimension becomes a uniform partition.
	typ, err := NewVariableShapeTensorType(arrow.PrimitiveTypes.Int32, 2, nil, nil, []int64{-1, 2})
	require.NoError(t, err)
	u, err := NewVariableShapeTensorArray(mem, []*ndarray.Dense[int32]{
		ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3, 4}, 2, 2)), ndarray.Must(ndarray.FromSlice([]int32{5, 6}, 1, 2)),
	}, nil)
	require.NoError(t, err)
	defer u.Release()
	assert.Equal(t, typ.Serialize(), u.ExtensionType().(*VariableShapeTensorType).Serialize())
	ur, err := RaggedFromVariableShape[int32](u)
	require.NoError(t, err)
	assert.Equal(t, ndarray.Shape{2, -1, 2}, ur.Shape())
	assert.Equal(t, "[[[1, 2], [3, 4]], [[5, 6]]]", ur.String())

	// Rows that are not rectangular have no tensor.
	jag, err := ragged.FromRowSplits([]int32{1, 2, 3}, []int64{0, 2}, []int64{0, 1, 3})
	require.NoError(t, err)
	_, err = VariableShapeFromRagged(mem, jag, nil)
	assert.ErrorIs(t, err, ndarray.ErrShape)
	_, err = RaggedFromVariableShape[float32](v)
	assert.ErrorIs(t, err, ndarray.ErrDType)
}

// TestRaggedRecordBatches writes ragged columns beside a tensor column with arrow-go's IPC file
// and stream writers and reads them back with its readers.
func TestRaggedRecordBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tokens := ragged.New[float32](6, -1)
	ids := ragged.New[int64](6, -1)
	for i := range int64(6) {
		for j := range i % 4 {
			tokens.Set(float32(i)+float32(j)/10, i, j)
		}
		for j := range 5 - i {
			ids.Set(i*100+j, i, j)
		}
	}
	images := ndarray.New[float32](6, 2, 3)
	tokArr, err := ListFromRagged(mem, tokens, arrow.LIST)
	require.NoError(t, err)
	defer tokArr.Release()
	idArr, err := ListFromRagged(mem, ids, arrow.LARGE_LIST)
	require.NoError(t, err)
	defer idArr.Release()
	imgArr, err := NewFixedShapeTensorArray(memory.DefaultAllocator, images, nil)
	require.NoError(t, err)
	defer imgArr.Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "tokens", Type: tokArr.DataType()}, {Name: "ids", Type: idArr.DataType()}, {Name: "images", Type: imgArr.DataType()},
	}, nil)
	rec := array.NewRecord(schema, []arrow.Array{tokArr, idArr, imgArr}, 6)
	defer rec.Release()

	err = CheckTensorFlowIO(rec)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), `column "ids"`)
	assert.Contains(t, err.Error(), `column "images"`)
	assert.NotContains(t, err.Error(), `column "tokens"`)

	var stream bytes.Buffer
	path := filepath.Join(t.TempDir(), "ragged.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	fw, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	require.NoError(t, err)
	require.NoError(t, fw.Write(rec))
	require.NoError(t, fw.Close())
	require.NoError(t, f.Close())
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	sw := ipc.NewWriter(&stream, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	require.NoError(t, sw.Write(rec))
	require.NoError(t, sw.Close())

	check := func(t *testing.T, got arrow.Record) {
		tk, err := RaggedFromList[float32](got.Column(0))
		require.NoError(t, err)
		assert.True(t, ragged.Equal(tokens, tk))
		id, err := RaggedFromList[int64](got.Column(1))
		require.NoError(t, err)
		assert.True(t, ragged.Equal(ids, id))
		_, ok := got.Column(2).(*FixedShapeTensorArray)
		assert.True(t, ok)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(file), ipc.WithAllocator(mem))
	require.NoError(t, err)
	got, err := fr.Record(0)
	require.NoError(t, err)
	check(t, got)
	require.NoError(t, fr.Close())
	sr, err := ipc.NewReader(bytes.NewReader(stream.Bytes()), ipc.WithAllocator(mem))
	require.NoError(t, err)
	require.True(t, sr.Next())
	check(t, sr.Record())
	sr.Release()

	// In pieces, as a stream of batches.
	recs, err := RaggedRecords(mem, "tokens", tokens, arrow.LIST, 4)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	var parts []*ragged.Array[float32]
	for _, r := range recs {
		require.NoError(t, CheckTensorFlowIO(r), "list<float32> alone is readable")
		p, err := RaggedFromList[float32](r.Column(0))
		require.NoError(t, err)
		parts = append(parts, p)
	}
	joined, err := ragged.Concat(parts...)
	require.NoError(t, err)
	assert.True(t, ragged.Equal(tokens, joined))
	for _, r := range recs {
		r.Release()
	}
	_, err = RaggedRecords(mem, "tokens", tokens, arrow.LIST, 0)
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

func TestCheckTensorFlowIO(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		{Name: "label", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "tokens", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{Name: "nested", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32))},
	}, nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "b"}, nil)
	lb := b.Field(2).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	lb.AppendNull()
	nb := b.Field(3).(*array.ListBuilder)
	nb.AppendEmptyValue()
	nb.AppendEmptyValue()
	rec := b.NewRecord()
	defer rec.Release()
	err := CheckTensorFlowIO(rec)
	require.ErrorIs(t, err, ErrUnsupported)
	msg := err.Error()
	assert.Contains(t, msg, `column "tokens": 1 null values`)
	assert.Contains(t, msg, `column "nested" (list<item: list<item: int32, nullable>, nullable>): a nested list`)
	assert.NotContains(t, msg, `"label"`)
	assert.NotContains(t, msg, `"text"`)

	readable := array.NewRecord(arrow.NewSchema(rec.Schema().Fields()[:2], nil), rec.Columns()[:2], rec.NumRows())
	defer readable.Release()
	assert.NoError(t, CheckTensorFlowIO(readable))
}

// TestVariableShapeBadRows: a tensor whose shape does not match its data
// is refused with a clear error (RELIABILITY.md: prod(shape) ≠ list size).
func TestVariableShapeBadRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ, err := NewVariableShapeTensorType(arrow.PrimitiveTypes.Int32, 2, nil, nil, nil)
	require.NoError(t, err)
	st := typ.Storage.(*arrow.StructType)
	build := func(dims []int32, offsets []int32, nvals int) *VariableShapeTensorArray {
		n := len(offsets) - 1
		values := array.NewData(arrow.PrimitiveTypes.Int32, nvals, []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 4*nvals))}, nil, 0, 0)
		list := array.NewData(st.Field(0).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{values}, 0, 0)
		dimData := array.NewData(arrow.PrimitiveTypes.Int32, len(dims), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(dims))}, nil, 0, 0)
		shapes := array.NewData(st.Field(1).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{dimData}, 0, 0)
		data := array.NewData(typ, n, []*memory.Buffer{nil}, []arrow.ArrayData{list, shapes}, 0, 0)
		defer func() {
			for _, d := range []arrow.ArrayData{values, list, dimData, shapes, data} {
				d.Release()
			}
		}()
		return array.MakeFromData(data).(*VariableShapeTensorArray)
	}
	for name, tc := range map[string]struct {
		dims    []int32
		offsets []int32
		nvals   int
	}{
		"shape bigger than data":  {[]int32{2, 3, 1, 1}, []int32{0, 5, 6}, 6},
		"shape smaller than data": {[]int32{1, 2, 1, 1}, []int32{0, 5, 6}, 6},
		"negative dimension":      {[]int32{-1, -5, 1, 1}, []int32{0, 5, 6}, 6},
		"data past the values":    {[]int32{2, 3, 1, 1}, []int32{0, 6, 7}, 6},
		"shapes list too short":   {[]int32{2, 3}, []int32{0, 6, 7}, 7},
		"huge empty dimensions":   {[]int32{1 << 30, 0, 1 << 30, 0}, []int32{0, 0, 0}, 0},
	} {
		t.Run(name, func(t *testing.T) {
			v := build(tc.dims, tc.offsets, tc.nvals)
			defer v.Release()
			_, err := RaggedFromVariableShape[int32](v)
			assert.ErrorIs(t, err, ErrUnsupported)
		})
	}
	plain, err := NewVariableShapeTensorArray(mem, []*ndarray.Dense[int32]{ndarray.New[int32](2, 3)}, nil)
	require.NoError(t, err)
	defer plain.Release()
	ok, err := RaggedFromVariableShape[int32](plain)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 2}, {0, 3, 6}}, ok.RowSplits())
}

// TestListFromRaggedReleasesInnerLevels checks that the fixed-size list levels of inner
// dimensions hold one reference to what they wrap: allocated leaves (bool, strings) and list
// offsets come back to the allocator when the array is released.
func TestListFromRaggedReleasesInnerLevels(t *testing.T) {
	for _, list := range []arrow.Type{arrow.LIST, arrow.LARGE_LIST} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		a, err := ragged.Make([]bool{true, false, true, true, false, false, true, false}, ndarray.Shape{2, 2},
			ragged.RowSplits([]int64{0, 1, 2}))
		require.NoError(t, err)
		arr, err := ListFromRagged(mem, a, list)
		require.NoError(t, err)
		arr.Release()
		mem.AssertSize(t, 0)

		s, err := ragged.Make([]string{"a", "bc", "", "d"}, ndarray.Shape{2}, ragged.RowSplits([]int64{0, 0, 2}))
		require.NoError(t, err)
		arr, err = ListFromRagged(mem, s, list)
		require.NoError(t, err)
		arr.Release()
		mem.AssertSize(t, 0)
	}
}
