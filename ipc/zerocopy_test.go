package ipc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

// within reports whether the memory of p lies inside b.
func within[T any](p *T, b []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	at := uintptr(unsafe.Pointer(p))
	return at >= start && at < start+uintptr(len(b))
}

func TestBytesReaderAliasesItsInput(t *testing.T) {
	src := ndarray.Must(ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	var buf bytes.Buffer
	_, err := WriteTensor(&buf, src, []string{"r", "c"})
	require.NoError(t, err)
	input := buf.Bytes()

	tensor, err := NewBytesReader(input, Limits{}).Next()
	require.NoError(t, err)
	assert.True(t, within(&tensor.Data()[0], input), "Data is a view of the input")
	d, err := AsDense[float64](tensor)
	require.NoError(t, err)
	assert.True(t, within(&d.Data()[0], input), "the array's values are the input's bytes")
	assert.True(t, d.ReadOnly(), "a view of the input is read-only")

	// A write to the input shows through the array: nothing was copied.
	tensor.Data()[6], tensor.Data()[7] = 0, 0x40 // 1.0 becomes 2.0, little-endian
	assert.Equal(t, 2.0, d.Get(0, 0))
}

func TestMisalignedInputIsCopied(t *testing.T) {
	src := ndarray.Must(ndarray.FromSlice([]int64{10, 20, 30}, 3))
	var buf bytes.Buffer
	_, err := WriteTensor(&buf, src, nil)
	require.NoError(t, err)
	shifted := make([]byte, buf.Len()+1)
	copy(shifted[1:], buf.Bytes()) // the body now starts one byte past an 8-byte boundary

	tensor, err := NewBytesReader(shifted[1:], Limits{}).Next()
	require.NoError(t, err)
	d, err := AsDense[int64](tensor)
	require.NoError(t, err)
	assert.True(t, d.Equal(src))
	assert.False(t, within(&d.Data()[0], shifted), "misaligned values are copied, never viewed")
	assert.False(t, d.ReadOnly(), "the copy is the caller's")
}

func TestMemoryMappedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tensor")
	src := ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4))
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = WriteTensor(f, src, nil)
	require.NoError(t, err)
	_, err = WriteTensor(f, src.Transpose(), nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	rd, err := OpenFile(path, Limits{})
	require.NoError(t, err)
	mapped := rd.owner.Bytes()
	tensors, err := rd.ReadAll()
	require.NoError(t, err)
	require.Len(t, tensors, 2)
	a := ndarray.Must(AsDense[int32](tensors[0]))
	b := ndarray.Must(AsDense[int32](tensors[1]))
	assert.True(t, within(&a.Data()[0], mapped), "values point into the mapping")
	assert.True(t, within(&b.Data()[0], mapped))
	assert.True(t, a.Equal(src))
	assert.True(t, b.Equal(src.Transpose()), "a column-major tensor keeps its layout")
	assert.False(t, b.IsContiguous())
	assert.Equal(t, int64(3), rd.owner.Refs(), "the reader and two tensors hold the mapping")

	require.NoError(t, rd.Close())
	require.NoError(t, rd.Close(), "Close twice is harmless")
	_, err = rd.Next()
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.Equal(t, int32(8), a.Get(1, 3), "tensors keep the mapping alive after Close")
	owner := tensors[0].owner
	tensors[0].Release()
	tensors[1].Release()
	assert.Equal(t, int64(0), owner.Refs())
	assert.Nil(t, owner.Bytes(), "unmapped after the last release")
	assert.Panics(t, func() { tensors[0].Release() }, "one Release too many")
}

func TestOpenFileErrors(t *testing.T) {
	_, err := OpenFile(filepath.Join(t.TempDir(), "missing.tensor"), Limits{})
	assert.ErrorIs(t, err, os.ErrNotExist)

	empty := filepath.Join(t.TempDir(), "empty.tensor")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	rd, err := OpenFile(empty, Limits{})
	require.NoError(t, err)
	tensors, err := rd.ReadAll()
	require.NoError(t, err)
	assert.Empty(t, tensors)
	require.NoError(t, rd.Close())
}

func TestAsDenseChecksTheType(t *testing.T) {
	tensor, err := readOne(t, validSpec().bytes(t), Limits{})
	require.NoError(t, err)
	_, err = AsDense[float32](tensor)
	assert.ErrorIs(t, err, ndarray.ErrDType)
	assert.ErrorContains(t, err, "tensor of int32 read as float32")
}
