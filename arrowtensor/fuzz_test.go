package arrowtensor

import (
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// FuzzExtensionMetadata parses arbitrary extension metadata for both tensor types: no panic,
// and what parses must serialize and parse back to an equal type.
func FuzzExtensionMetadata(f *testing.F) {
	for _, seed := range []string{
		`{"shape":[2,3],"permutation":[1,0],"dim_names":["h","w"]}`, `{"shape":[3,2],"permutation":[1,0]}`,
		`{"shape":[]}`, `{"shape":[2,3],"permutations":[1,0],"dim_names":null}`, `{}`, ``,
		`{"uniform_shape":[null,3],"dim_names":["a","b"]}`, `{"shape":[-1,6]}`, `{"shape":[4611686018427387904,4]}`,
		`{"shape":[0]}`, // a crasher: arrow-go panics on a fixed-size list of size 0
	} {
		f.Add(seed)
	}
	fixed := arrow.FixedSizeListOfField(6, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	variable := arrow.StructOf(
		arrow.Field{Name: "data", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8), Nullable: true},
		arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), Nullable: true},
	)
	f.Fuzz(func(t *testing.T, meta string) {
		for _, tc := range []struct {
			typ     arrow.ExtensionType
			storage arrow.DataType
		}{{&FixedShapeTensorType{}, fixed}, {&VariableShapeTensorType{}, variable}} {
			got, err := tc.typ.Deserialize(tc.storage, meta)
			if err != nil {
				if got != nil {
					t.Fatal("a type returned with an error")
				}
				continue
			}
			again, err := got.Deserialize(tc.storage, got.Serialize())
			if err != nil {
				t.Fatalf("cannot parse what it wrote, %q: %v", got.Serialize(), err)
			}
			if !got.ExtensionEquals(again) {
				t.Fatalf("%q and %q differ", got.Serialize(), again.Serialize())
			}
		}
	})
}

// FuzzSparseRecord reads a sparse COO record batch whose schema metadata and coordinates are
// arbitrary: no panic, and a record that reads must hold its coordinates inside its shape.
func FuzzSparseRecord(f *testing.F) {
	f.Add("coo", "[3,4]", `["r","c"]`, []byte{0, 1, 2, 3})
	f.Add("coo", "[3,-4]", ``, []byte{0, 1, 2, 3})
	f.Add("coo", "[9223372036854775807,2]", ``, []byte{255, 1})
	f.Add("csr", "[3,4]", ``, []byte{})
	f.Fuzz(func(t *testing.T, format, shape, names string, coords []byte) {
		meta := map[string]string{SparseFormatKey: format, SparseShapeKey: shape}
		if names != "" {
			meta[SparseDimNamesKey] = names
		}
		values := make([]int64, len(coords)/2*2)
		for i := range values {
			values[i] = int64(int8(coords[i]))
		}
		nnz := len(values) / 2
		indicesType := arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64)
		child := array.NewData(arrow.PrimitiveTypes.Int64, len(values), []*memory.Buffer{nil, memory.NewBufferBytes(ndarray.LittleEndianBytes(values))}, nil, 0, 0)
		defer child.Release()
		indices := array.MakeFromData(array.NewData(indicesType, nnz, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0))
		defer indices.Release()
		vals := array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int64, nnz, []*memory.Buffer{nil, memory.NewBufferBytes(ndarray.LittleEndianBytes(values[:nnz]))}, nil, 0, 0))
		defer vals.Release()
		md := arrow.MetadataFrom(meta)
		schema := arrow.NewSchema([]arrow.Field{{Name: SparseIndicesColumn, Type: indicesType}, {Name: SparseValuesColumn, Type: arrow.PrimitiveTypes.Int64}}, &md)
		rec := array.NewRecord(schema, []arrow.Array{indices, vals}, int64(nnz))
		defer rec.Release()
		a, _, err := SparseFromRecord(rec)
		if err != nil {
			return
		}
		if a, err = a.Convert(sparse.FormatCOO); err != nil {
			t.Fatalf("a %v read cannot become COO: %v", a.Format(), err)
		}
		c := a.(*sparse.COO[int64])
		s := c.Shape()
		for coord, v := range c.Entries() {
			for d, x := range coord {
				if x < 0 || x >= s[d] {
					t.Fatalf("coordinate %v outside shape %v", coord, s)
				}
			}
			if c.Get(coord...) == 0 && v != 0 && c.IsCanonical() {
				t.Fatalf("stored value %d at %v reads as 0", v, coord)
			}
		}
	})
}

// FuzzRaggedList reads list arrays with arbitrary offsets, validity, value counts and slices:
// no panic; a conversion either fails with a sentinel or gives an array that, once validated,
// reads every element by index exactly as its flat values and row splits say, and round-trips
// through Arrow.
func FuzzRaggedList(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0}, []byte{0xff}, uint8(6), uint8(0), false)
	f.Add([]byte{0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0}, []byte{0xff}, uint8(6), uint8(1), true)
	f.Add([]byte{2, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0}, []byte{0xfd}, uint8(8), uint8(1), false)
	f.Add([]byte{0, 0, 0, 0, 255, 255, 255, 127}, []byte{}, uint8(3), uint8(0), true)
	f.Fuzz(func(t *testing.T, rawOffsets, validity []byte, nvals, slice uint8, large bool) {
		offsets := arrow.Int32Traits.CastFromBytes(rawOffsets[:len(rawOffsets)/4*4])
		if len(offsets) == 0 {
			return
		}
		values := make([]int32, nvals)
		for i := range values {
			values[i] = int32(i)
		}
		rows := len(offsets) - 1
		var bitmap *memory.Buffer
		nulls := 0
		if len(validity) > 0 && len(validity)*8 >= rows {
			bitmap = memory.NewBufferBytes(validity)
			for i := range rows {
				if validity[i/8]&(1<<(i%8)) == 0 {
					nulls++
				}
			}
		}
		vals := array.NewData(arrow.PrimitiveTypes.Int32, len(values), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(values))}, nil, 0, 0)
		defer vals.Release()
		typ, offBuf := arrow.DataType(arrow.ListOf(arrow.PrimitiveTypes.Int32)), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))
		if large {
			wide := make([]int64, len(offsets))
			for i, o := range offsets {
				wide[i] = int64(o)
			}
			typ, offBuf = arrow.LargeListOf(arrow.PrimitiveTypes.Int32), memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(wide))
		}
		data := array.NewData(typ, rows, []*memory.Buffer{bitmap, offBuf}, []arrow.ArrayData{vals}, nulls, 0)
		defer data.Release()
		var arr arrow.Array = array.MakeFromData(data)
		defer arr.Release()
		if s := int64(slice); s <= int64(rows) {
			arr = array.NewSlice(arr, s, int64(rows))
			defer arr.Release()
		}
		a, err := RaggedFromList[int32](arr)
		if err != nil {
			if !errors.Is(err, ragged.ErrInvalid) && !errors.Is(err, ErrNull) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		if a.Validate() != nil {
			return
		}
		splits := a.RowSplits()[0]
		flat := a.FlatValues()
		if int64(len(flat)) != splits[len(splits)-1] || a.NumRows() != int64(len(splits)-1) {
			t.Fatalf("%d values and splits %v", len(flat), splits)
		}
		for i := range a.NumRows() {
			for j := range splits[i+1] - splits[i] {
				if got, want := a.Get(i, j), flat[splits[i]+j]; got != want {
					t.Fatalf("Get(%d, %d) = %d, want %d", i, j, got, want)
				}
			}
		}
		_ = a.String()
		if _, err := a.ToDense(-1); err != nil && !errors.Is(err, ndarray.ErrShape) {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		back, err := ListFromRagged(mem, a, arrow.LIST)
		if err != nil {
			t.Fatal(err)
		}
		defer back.Release()
		again, err := RaggedFromList[int32](back)
		if err != nil || !ragged.Equal(a, again) {
			t.Fatalf("round trip: %v\n%v\n%v", err, a, again)
		}
	})
}
