package arrowtensor

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
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
