package sparse

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestIndicesPrint: indices print as their values and type, not as a Go struct, alone and
// inside the structures that hold them.
func TestIndicesPrint(t *testing.T) {
	assert.Equal(t, "int32[0 2 5]", Int32Indices([]int32{0, 2, 5}).String())
	assert.Equal(t, "int64[7]", fmt.Sprint(Int64Indices([]int64{7})))
	assert.Equal(t, "int32[]", Indices{}.String())
	assert.Equal(t, "[int64[1 2] int32[3]]", fmt.Sprint([]Indices{Int64Indices([]int64{1, 2}), Int32Indices([]int32{3})}))
}
