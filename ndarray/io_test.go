package ndarray

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteToBytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w io.Writer) (int64, error)
		want  []byte
	}{
		{"int16 little-endian", Must(FromSlice([]int16{1, -2}, 2)).WriteTo, []byte{1, 0, 0xfe, 0xff}},
		{"uint32", Must(FromSlice([]uint32{0x01020304}, 1)).WriteTo, []byte{4, 3, 2, 1}},
		{"float16 half bytes", Must(FromSlice([]float16.Num{float16.New(1), float16.New(-2)}, 2)).WriteTo, []byte{0x00, 0x3c, 0x00, 0xc0}},
		{"float64", Must(FromSlice([]float64{1}, 1)).WriteTo, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"bool one byte each", Must(FromSlice([]bool{true, false, true}, 3)).WriteTo, []byte{1, 0, 1}},
		{"strings length-prefixed", Must(FromSlice([]string{"ab", "", "é"}, 3)).WriteTo,
			[]byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9}},
		{"transposed view in row-major order", Must(FromSlice([]int8{1, 2, 3, 4, 5, 6}, 2, 3)).Transpose().WriteTo, []byte{1, 4, 2, 5, 3, 6}},
		{"empty", New[int64](0, 3).WriteTo, nil},
		{"scalar", Scalar(uint8(9)).WriteTo, []byte{9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := tc.write(&buf)
			require.NoError(t, err)
			assert.Equal(t, int64(len(tc.want)), n)
			if len(tc.want) == 0 {
				assert.Zero(t, buf.Len())
				return
			}
			assert.Equal(t, tc.want, buf.Bytes())
		})
	}
}

func TestStreamRoundTripEveryType(t *testing.T) {
	t.Run("int8", func(t *testing.T) { roundTrip(t, func(v int64) int8 { return int8(v) }) })
	t.Run("int16", func(t *testing.T) { roundTrip(t, func(v int64) int16 { return int16(v * 300) }) })
	t.Run("int32", func(t *testing.T) { roundTrip(t, func(v int64) int32 { return int32(-v * 70001) }) })
	t.Run("int64", func(t *testing.T) { roundTrip(t, func(v int64) int64 { return v << 40 }) })
	t.Run("uint8", func(t *testing.T) { roundTrip(t, func(v int64) uint8 { return uint8(v) }) })
	t.Run("uint16", func(t *testing.T) { roundTrip(t, func(v int64) uint16 { return uint16(v * 999) }) })
	t.Run("uint32", func(t *testing.T) { roundTrip(t, func(v int64) uint32 { return uint32(v * 1e7) }) })
	t.Run("uint64", func(t *testing.T) { roundTrip(t, func(v int64) uint64 { return uint64(v) << 50 }) })
	t.Run("float16", func(t *testing.T) { roundTrip(t, func(v int64) float16.Num { return float16.New(float32(v) / 4) }) })
	t.Run("float32", func(t *testing.T) { roundTrip(t, func(v int64) float32 { return float32(v) / 3 }) })
	t.Run("float64", func(t *testing.T) { roundTrip(t, func(v int64) float64 { return float64(v) / 7 }) })
	t.Run("bool", func(t *testing.T) { roundTrip(t, func(v int64) bool { return v%3 == 0 }) })
	t.Run("string", func(t *testing.T) { roundTrip(t, func(v int64) string { return strconv.Itoa(int(v * v)) }) })
}

// roundTrip writes views of several layouts and reads them back into other layouts.
func roundTrip[T Element](t *testing.T, conv func(int64) T) {
	// Large enough that contiguous runs exceed the staging buffer.
	a := arange(conv, 3, 40, 100)
	views := map[string][]Index{
		"whole":       {},
		"flipped":     {Flip(), All(), Flip()},
		"inner slice": {All(), Range(3, 30)},
		"stepped":     {Step(2), Odd(), Mod(3)},
	}
	for name, idx := range views {
		src := Must(a.Slice(idx...))
		var buf bytes.Buffer
		n, err := src.WriteTo(&buf)
		require.NoError(t, err, name)
		assert.Equal(t, int64(buf.Len()), n, name)

		dst := New[T](src.Shape()...).Transpose() // read into a non-contiguous layout
		dst = Must(dst.Reshape(src.Shape()...))
		got, err := dst.ReadFrom(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, name)
		assert.Equal(t, n, got, name)
		assert.True(t, src.Equal(dst), name)

		// Writing the read array again gives the same bytes.
		var again bytes.Buffer
		_, err = dst.WriteTo(&again)
		require.NoError(t, err)
		assert.Equal(t, buf.Bytes(), again.Bytes(), name)
	}
}

func TestReadFromStopsAfterTheLastElement(t *testing.T) {
	r := bytes.NewReader([]byte{1, 2, 3, 4, 5})
	a := New[uint8](2, 2)
	n, err := a.ReadFrom(r)
	require.NoError(t, err)
	assert.Equal(t, int64(4), n)
	assert.Equal(t, []uint8{1, 2, 3, 4}, a.Data())
	assert.Equal(t, 1, r.Len(), "the byte after the array is left unread")
}

func TestReadFromBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		read  func(r io.Reader) (int64, error)
		input []byte
		err   error
		msg   string
	}{
		{"empty stream", New[int32](2).ReadFrom, nil, io.ErrUnexpectedEOF, "shape (2,)"},
		{"short stream", New[int32](2).ReadFrom, []byte{1, 0, 0, 0, 2, 0}, io.ErrUnexpectedEOF, ""},
		{"short strided stream", New[int32](2, 2).Transpose().ReadFrom, []byte{1, 0, 0, 0, 2}, io.ErrUnexpectedEOF, ""},
		{"bool byte 2", New[bool](3).ReadFrom, []byte{0, 1, 2}, ErrDType, "element 2: bool byte 2 is neither 0 nor 1"},
		{"string head cut", New[string](1).ReadFrom, []byte{3, 0}, io.ErrUnexpectedEOF, ""},
		{"string body cut", New[string](2).ReadFrom, []byte{1, 0, 0, 0, 'x', 3, 0, 0, 0, 'a'}, io.ErrUnexpectedEOF, "string element 1 of 3 bytes"},
		{"string claiming 4 GiB", New[string](1).ReadFrom, []byte{0xff, 0xff, 0xff, 0xff, 'a', 'b'}, io.ErrUnexpectedEOF, "4294967295 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.read(bytes.NewReader(tc.input))
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.msg)
			assert.LessOrEqual(t, n, int64(len(tc.input)))
		})
	}
}

func TestReadFromHugeStringLengthAllocatesLittle(t *testing.T) {
	input := []byte{0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := New[string](1).ReadFrom(bytes.NewReader(input))
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "a 16-byte input claiming 4 GiB must not allocate it")
}

type failingWriter struct{ after int }

var errWrite = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.after {
		n := w.after
		w.after = 0
		return n, errWrite
	}
	w.after -= len(p)
	return len(p), nil
}

func TestWriteToPropagatesWriterErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(io.Writer) (int64, error)
	}{
		{"contiguous", New[float64](1 << 14).WriteTo},
		{"strided", Must(New[float64](64, 64).Slice(Step(2))).Transpose().WriteTo},
		{"strings", Must(FromSlice([]string{"abc", "defgh"}, 2)).WriteTo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.write(&failingWriter{after: 5})
			assert.ErrorIs(t, err, errWrite)
			assert.Equal(t, int64(5), n)
		})
	}
}

func TestLongStringsRoundTrip(t *testing.T) {
	long := string(bytes.Repeat([]byte("xyz"), ioChunk))
	a := Must(FromSlice([]string{"a", long, "", long[:ioChunk+1]}, 4))
	var buf bytes.Buffer
	_, err := a.WriteTo(&buf)
	require.NoError(t, err)
	assert.Equal(t, uint32(len(long)), binary.LittleEndian.Uint32(buf.Bytes()[5:]))
	b := New[string](4)
	_, err = b.ReadFrom(&buf)
	require.NoError(t, err)
	assert.True(t, a.Equal(b))
}

// FuzzReadFrom feeds arbitrary bytes to ReadFrom for the types whose streams can be malformed
// (bool, string) and one fixed-width type. It must never panic, and what it reads must write
// back to exactly the bytes it consumed.
func FuzzReadFrom(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0, 1, 0, 0, 0, 'x', 0, 0x3c, 0, 0xc0})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 'a'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzStream(t, New[bool](2, 2).Transpose(), data)
		fuzzStream(t, New[string](3), data)
		fuzzStream(t, Must(New[float16.Num](4, 2).Slice(Flip())), data)
	})
}

func fuzzStream[T Element](t *testing.T, a *Dense[T], data []byte) {
	n, err := a.ReadFrom(bytes.NewReader(data))
	if n > int64(len(data)) {
		t.Fatalf("read %d bytes from %d", n, len(data))
	}
	if err != nil {
		if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrDType) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		return
	}
	var out bytes.Buffer
	if _, err := a.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data[:n]) {
		t.Fatalf("re-encoded %x, read %x", out.Bytes(), data[:n])
	}
}

func TestReadFromContiguousDoesNotAllocate(t *testing.T) {
	a := New[float64](1024)
	raw := make([]byte, 8*1024)
	r := bytes.NewReader(raw)
	allocs := testing.AllocsPerRun(10, func() {
		r.Reset(raw)
		_, _ = a.ReadFrom(r)
	})
	if hostLittleEndian {
		assert.Zero(t, allocs, "contiguous numeric data is read straight into the array")
	}
}

func TestViewBytes(t *testing.T) {
	raw := make([]byte, 17)
	binary.LittleEndian.PutUint32(raw, 7)
	binary.LittleEndian.PutUint32(raw[4:], 0xffffffff)
	v, view := ViewBytes[int32](raw[:9])
	assert.Equal(t, []int32{7, -1}, v, "trailing bytes are ignored")
	assert.Equal(t, hostLittleEndian, view)
	if view {
		raw[0] = 8
		assert.Equal(t, int32(8), v[0], "a view sees writes to the bytes")
	}
	odd, view := ViewBytes[uint16](raw[1:5])
	assert.False(t, view, "misaligned bytes are copied")
	assert.Len(t, odd, 2)
	none, view := ViewBytes[float64](raw[:7])
	assert.Nil(t, none)
	assert.True(t, view)

	h := []float16.Num{float16.New(1)}
	assert.Equal(t, []byte{0x00, 0x3c}, LittleEndianBytes(h))
	assert.Empty(t, LittleEndianBytes([]int64{}))
}

func TestSwapBytes(t *testing.T) {
	for _, width := range []int{1, 2, 4, 8, 16} {
		b := make([]byte, 3*width+1)
		for i := range b {
			b[i] = byte(i)
		}
		SwapBytes(b, width)
		for v := range 3 {
			for k := range width {
				assert.Equal(t, byte(v*width+width-1-k), b[v*width+k], "width %d value %d byte %d", width, v, k)
			}
		}
		assert.Equal(t, byte(3*width), b[3*width], "width %d: the trailing byte stays", width)
	}
}
