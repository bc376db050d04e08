package arrowtensor

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ndarray"
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
