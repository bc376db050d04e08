package mutate

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanFindsTheFieldsOfAFileAndAStream(t *testing.T) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		b, err := os.ReadFile("../../ipc/testdata/arrow-cpp-17/" + name)
		require.NoError(t, err)
		in := Scan(b)
		f, ok := in.Find("RecordBatch.nodes[0].length")
		require.True(t, ok, "%s: a record batch's first node", name)
		assert.Equal(t, 8, f.Size)
		// The golden batch has 4 rows: the first node's length says so.
		assert.Equal(t, byte(4), b[f.Offset])
		_, ok = in.Find("RecordBatch.buffers[0].offset")
		assert.True(t, ok)
		assert.NotEmpty(t, in.Metadata)
		if strings.HasSuffix(name, ".arrow") {
			_, ok := in.Find("footer.recordBatches[0].bodyLength")
			assert.True(t, ok, "a file's footer blocks")
		}
		changed := Set(b, f, -1)
		assert.Equal(t, byte(0xFF), changed[f.Offset])
		assert.Equal(t, byte(4), b[f.Offset], "Set copies")
	}
}

func TestAllStopsWhenAsked(t *testing.T) {
	b, err := os.ReadFile("../../ipc/testdata/arrow-cpp-17/batch_tensors.arrows")
	require.NoError(t, err)
	n := 0
	All(b, func(Mutant) bool { n++; return n < 10 })
	assert.Equal(t, 10, n)
	total := 0
	All(b, func(m Mutant) bool {
		total++
		assert.Len(t, m.Bytes, len(b))
		return true
	})
	assert.Greater(t, total, 1000, "every field and metadata byte gives mutants")
}
