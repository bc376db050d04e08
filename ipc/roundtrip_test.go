package ipc

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

// TestRoundTripProperty writes random views — random shapes, steps, flips, transposes and
// offsets — of every element type and reads them back through each kind of reader.
func TestRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		switch i % 11 {
		case 0:
			roundTripRandom(t, rng, func(r *rand.Rand) int8 { return int8(r.Uint32()) })
		case 1:
			roundTripRandom(t, rng, func(r *rand.Rand) int16 { return int16(r.Uint32()) })
		case 2:
			roundTripRandom(t, rng, func(r *rand.Rand) int32 { return int32(r.Uint32()) })
		case 3:
			roundTripRandom(t, rng, func(r *rand.Rand) int64 { return int64(r.Uint64()) })
		case 4:
			roundTripRandom(t, rng, func(r *rand.Rand) uint8 { return uint8(r.Uint32()) })
		case 5:
			roundTripRandom(t, rng, func(r *rand.Rand) uint16 { return uint16(r.Uint32()) })
		case 6:
			roundTripRandom(t, rng, func(r *rand.Rand) uint32 { return r.Uint32() })
		case 7:
			roundTripRandom(t, rng, func(r *rand.Rand) uint64 { return r.Uint64() })
		case 8:
			roundTripRandom(t, rng, func(r *rand.Rand) float16.Num { return float16.New(r.Float32()*100 - 50) })
		case 9:
			roundTripRandom(t, rng, func(r *rand.Rand) float32 { return r.Float32() })
		case 10:
			roundTripRandom(t, rng, func(r *rand.Rand) float64 { return r.NormFloat64() })
		}
	}
}

func roundTripRandom[T ndarray.Numeric](t *testing.T, rng *rand.Rand, value func(*rand.Rand) T) {
	rank := rng.IntN(5)
	shape := make([]int64, rank)
	for i := range shape {
		shape[i] = int64(rng.IntN(6))
		if rng.IntN(8) == 0 {
			shape[i] = 0
		}
	}
	src := ndarray.New[T](shape...)
	for i := range src.Data() {
		src.Data()[i] = value(rng)
	}
	view := src
	if rank > 0 {
		idx := make([]ndarray.Index, rank)
		for i := range idx {
			switch rng.IntN(4) {
			case 0:
				idx[i] = ndarray.All()
			case 1:
				idx[i] = ndarray.Flip()
			case 2:
				idx[i] = ndarray.Step(2)
			default:
				idx[i] = ndarray.From(1)
			}
		}
		view = ndarray.Must(view.Slice(idx...))
		if rng.IntN(2) == 0 {
			view = view.Transpose()
		}
	}
	names := make([]string, view.Rank())
	for i := range names {
		names[i] = string(rune('a' + rng.IntN(26)))
	}
	var buf bytes.Buffer
	n, err := WriteTensor(&buf, view, names)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	for how, rd := range map[string]*TensorReader{
		"bytes":     NewBytesReader(buf.Bytes(), Limits{}),
		"io.Reader": NewReader(bytes.NewReader(buf.Bytes()), Limits{}),
	} {
		tensor, err := rd.Next()
		require.NoError(t, err, how)
		got, err := AsDense[T](tensor)
		require.NoError(t, err, how)
		require.True(t, got.Equal(view), "%s: %v of shape %v", how, view.DType(), view.Shape())
		if len(names) > 0 {
			assert.Equal(t, names, tensor.DimNames())
		} else {
			assert.Nil(t, tensor.DimNames(), "a scalar has no dimension to name")
		}
	}
}

// TestStridedViewIsWrittenRowMajor writes a strided view and compares it with what Arrow C++
// wrote for the same values (it writes non-contiguous tensors as a row-major copy).
func TestStridedViewIsWrittenRowMajor(t *testing.T) {
	cpp, err := os.ReadFile(filepath.Join(goldenDir, "dense_int32_4x3_strided.tensor"))
	require.NoError(t, err)
	want, err := NewBytesReader(cpp, Limits{}).Next()
	require.NoError(t, err)
	values := ndarray.Must(AsDense[int32](want))

	// The same values every second column of a 4×6 array.
	wide := ndarray.New[int32](4, 6)
	strided := ndarray.Must(wide.Slice(ndarray.All(), ndarray.Step(2)))
	require.NoError(t, ndarray.Copy(strided, values))
	require.False(t, strided.IsContiguous())

	var ours bytes.Buffer
	_, err = WriteTensor(&ours, strided, nil)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(splitMessage(t, cpp).body, splitMessage(t, ours.Bytes()).body))
	got, err := NewBytesReader(ours.Bytes(), Limits{}).Next()
	require.NoError(t, err)
	assert.Equal(t, []int64{12, 4}, got.Strides())
}

// TestColumnMajorIsWrittenAsIs writes a transposed (column-major) view without copying it.
func TestColumnMajorIsWrittenAsIs(t *testing.T) {
	a := ndarray.Must(ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)).Transpose()
	var buf bytes.Buffer
	_, err := WriteTensor(&buf, a, nil)
	require.NoError(t, err)
	got, err := NewBytesReader(buf.Bytes(), Limits{}).Next()
	require.NoError(t, err)
	assert.Equal(t, []int64{8, 24}, got.Strides())
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, unsafe.Slice((*float64)(unsafe.Pointer(&got.Data()[0])), 6))
	d := ndarray.Must(AsDense[float64](got))
	assert.True(t, d.Equal(a))
}

func TestWriteTensorRefuses(t *testing.T) {
	var buf bytes.Buffer
	_, err := WriteTensor(&buf, ndarray.New[int8](2, 2), []string{"one"})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Zero(t, buf.Len(), "nothing written on refusal")
}
