package ipc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ndarray"
)

// TestReadTensorColumnsGolden reads the golden batch files zero-copy and compares each tensor
// column with what arrow-go's own (copying) reader gives for it.
func TestReadTensorColumnsGolden(t *testing.T) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		t.Run(name, func(t *testing.T) {
			m, err := mmap.Open(filepath.Join(goldenDir, name))
			require.NoError(t, err)
			defer m.Release()
			cols, err := ReadTensorColumns(m.Bytes())
			require.NoError(t, err)
			require.Len(t, cols, 2)
			assert.Equal(t, "images", cols[0].Name)
			assert.Equal(t, "perm", cols[1].Name)

			_, recs, err := ReadRecordBatches(m.Bytes(), nil)
			require.NoError(t, err)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			ours, err := arrowtensor.ToDense[float32](cols[0].Chunks[0])
			require.NoError(t, err)
			theirs, err := arrowtensor.ToDense[float32](recs[0].Column(0).(*arrowtensor.FixedShapeTensorArray))
			require.NoError(t, err)
			assert.True(t, ours.Equal(theirs))
			assert.True(t, within(&ours.Data()[0], m.Bytes()), "values point into the mapped file")
			assert.False(t, within(&theirs.Data()[0], m.Bytes()), "arrow-go's reader copies")
			assert.True(t, arrow.TypeEqual(cols[0].Type, recs[0].Column(0).DataType()))

			p, err := arrowtensor.ToDense[int64](cols[1].Chunks[0])
			require.NoError(t, err)
			q, err := arrowtensor.ToDense[int64](recs[0].Column(1).(*arrowtensor.FixedShapeTensorArray))
			require.NoError(t, err)
			assert.True(t, p.Equal(q), "the permuted column too")
			for _, c := range cols {
				c.Release()
			}
		})
	}
}

// TestReadTensorColumnsAcrossBatches writes a tensor in several batches with other columns
// around it, and reads the tensor column back without copying.
func TestReadTensorColumnsAcrossBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := ndarray.New[float64](5, 2, 3)
	for i := range d.Data() {
		d.Data()[i] = float64(i)
	}
	recs, err := arrowtensor.Records("t", d, []string{"a", "b"}, 2)
	require.NoError(t, err)
	// Put a string column and a list column before the tensor column.
	var withOthers []arrow.Record
	for _, r := range recs {
		sb := array.NewStringBuilder(mem)
		lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
		vb := lb.ValueBuilder().(*array.Int32Builder)
		for i := range r.NumRows() {
			sb.Append(string(rune('a' + i)))
			lb.Append(true)
			vb.AppendValues([]int32{int32(i), 7}, nil)
		}
		s, l := sb.NewArray(), lb.NewArray()
		sb.Release()
		lb.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: s.DataType()}, {Name: "l", Type: l.DataType()}, r.Schema().Field(0)}, nil)
		withOthers = append(withOthers, array.NewRecord(schema, []arrow.Array{s, l, r.Column(0)}, r.NumRows()))
		s.Release()
		l.Release()
		r.Release()
	}
	path := filepath.Join(t.TempDir(), "x.arrows")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := arrowipc.NewWriter(f, arrowipc.WithSchema(withOthers[0].Schema()), arrowipc.WithAllocator(mem))
	for _, r := range withOthers {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	m, err := mmap.Open(path)
	require.NoError(t, err)
	defer m.Release()
	cols, err := ReadTensorColumns(m.Bytes())
	require.NoError(t, err)
	require.Len(t, cols, 1)
	require.Len(t, cols[0].Chunks, 3)
	var got []float64
	for _, c := range cols[0].Chunks {
		part, err := arrowtensor.ToDense[float64](c)
		require.NoError(t, err)
		assert.True(t, within(&part.Data()[0], m.Bytes()))
		got = append(got, slices.Collect(part.Values())...)
	}
	assert.Equal(t, d.Data(), got)
	assert.Equal(t, []string{"a", "b"}, cols[0].Type.DimNames())
	cols[0].Release()
}

func TestReadTensorColumnsRefuses(t *testing.T) {
	_, err := ReadTensorColumns([]byte("not arrow at all"))
	assert.Error(t, err)
	good := stream(t, ndarray.New[float32](3, 2))
	cols, err := ReadTensorColumns(good)
	require.NoError(t, err)
	require.Len(t, cols, 1)
	assert.Equal(t, uintptr(0), uintptr(unsafe.Pointer(&good[0]))%8, "go allocations are aligned")
	cols[0].Release()
}

func TestReadSchema(t *testing.T) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		require.NoError(t, err)
		schema, err := ReadSchema(b)
		require.NoError(t, err)
		assert.Equal(t, 5, schema.NumFields())
		_, ok := schema.Field(0).Type.(*arrowtensor.FixedShapeTensorType)
		assert.True(t, ok)
	}
	_, err := ReadSchema([]byte("nope"))
	assert.Error(t, err)
}
