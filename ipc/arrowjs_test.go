package ipc

import (
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/mmap"
)

// jsDir holds files Apache Arrow JS wrote (see its README).
const jsDir = "testdata/arrow-js"

// TestArrowJSFiles reads the file and the stream Arrow JS wrote: the file's schema is only in
// its footer. Both give the records arrow-go's reader gives, the tensor column as the
// extension type, zero-copy from the mapped file.
func TestArrowJSFiles(t *testing.T) {
	var records [][]string
	for _, name := range []string{"tensors.arrow", "tensors.arrows"} {
		t.Run(name, func(t *testing.T) {
			m, err := mmap.Open(filepath.Join(jsDir, name))
			require.NoError(t, err)
			defer m.Release()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema, recs, err := ReadRecordBatches(m.Bytes(), BatchOptions{Allocator: mem})
			require.NoError(t, err)
			defer releaseAll(recs)
			require.Len(t, recs, 3)
			assert.Equal(t, []string{"images", "nested", "tokens", "ids", "labels"}, fieldNames(schema))
			typ, ok := schema.Field(0).Type.(*arrowtensor.FixedShapeTensorType)
			require.True(t, ok, "the extension type is restored from the field metadata")
			assert.Equal(t, []int64{2, 3}, typ.Shape())
			assert.Zero(t, mem.CurrentAlloc(), "nothing is copied")

			theirSchema, theirs := arrowGoRecords(t, m.Bytes())
			defer releaseAll(theirs)
			assert.True(t, schema.Equal(theirSchema))
			var rows []string
			for i := range recs {
				assert.True(t, array.RecordEqual(recs[i], theirs[i]), "batch %d", i)
				for r := range int(recs[i].NumRows()) {
					rows = append(rows, recs[i].Column(1).ValueStr(r)+" "+recs[i].Column(2).ValueStr(r))
				}
				d, err := arrowtensor.ToDense[float32](recs[i].Column(0).(*arrowtensor.FixedShapeTensorArray))
				require.NoError(t, err)
				assert.True(t, within(&d.Data()[0], m.Bytes()), "tensor values view the mapped file")
			}
			records = append(records, rows)
		})
	}
	require.Len(t, records, 2)
	assert.Equal(t, records[0], records[1], "the file and the stream hold the same rows")
}
