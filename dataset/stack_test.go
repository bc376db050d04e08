package dataset

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

func TestStacker(t *testing.T) {
	part := func(rows int64, first float32) Tensor {
		return Tensor{Name: "x", Kind: KindFixedShape, DimNames: []string{"", "c"}, Dense: ndarray.FromFunc(func(i []int64) float32 { return first + float32(i[0]*3+i[1]) }, rows, 3)}
	}
	for _, capRows := range []int64{0, 1, 6, 100} {
		s, err := NewStacker(part(2, 0), capRows)
		require.NoError(t, err)
		for _, p := range []Tensor{part(2, 0), part(1, 6), part(3, 9)} {
			require.NoError(t, s.Add(p))
		}
		got := s.Tensor()
		require.Equal(t, "x", got.Name)
		require.Equal(t, KindFixedShape, got.Kind)
		require.Equal(t, []string{"", "c"}, got.DimNames)
		d := got.Dense.(*ndarray.Dense[float32])
		require.Equal(t, ndarray.Shape{6, 3}, d.Shape())
		for i, v := range d.Data() {
			require.Equal(t, float32(i), v, "capRows %d", capRows)
		}
	}

	// a strided view is copied in row-major order
	s, err := NewStacker(part(1, 0), 0)
	require.NoError(t, err)
	col, err := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]*3 + i[1]) }, 2, 6).Slice(ndarray.All(), ndarray.RangeStep(0, 6, 2))
	require.NoError(t, err)
	require.NoError(t, s.Add(Tensor{Dense: col}))
	require.Equal(t, []float32{0, 2, 4, 3, 5, 7}, s.Tensor().Dense.(*ndarray.Dense[float32]).Data())

	bools, err := NewStacker(Tensor{Dense: ndarray.New[bool](1, 2)}, 4)
	require.NoError(t, err)
	require.NoError(t, bools.Add(Tensor{Dense: ndarray.FromFunc(func(i []int64) bool { return i[1] == 1 }, 2, 2)}))
	require.Equal(t, []bool{false, true, false, true}, bools.Tensor().Dense.(*ndarray.Dense[bool]).Data())

	for _, tc := range []struct {
		name string
		add  Tensor
		err  error
	}{
		{"another dtype", Tensor{Dense: ndarray.New[float64](1, 3)}, ndarray.ErrDType},
		{"another cell shape", Tensor{Dense: ndarray.New[float32](1, 4)}, ndarray.ErrShape},
		{"a scalar", Tensor{Dense: ndarray.New[float32]()}, ndarray.ErrShape},
		{"a ragged part", Tensor{Kind: KindRagged}, ndarray.ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewStacker(part(1, 0), 2)
			require.NoError(t, err)
			require.NoError(t, s.Add(part(1, 0)))
			require.ErrorIs(t, s.Add(tc.add), tc.err)
			require.Equal(t, ndarray.Shape{1, 3}, s.Tensor().Shape(), "a refused part adds nothing")
		})
	}
	_, err = NewStacker(Tensor{Dense: ndarray.New[float32]()}, 0)
	require.ErrorIs(t, err, ndarray.ErrShape)
	// Strings stack as they come, their null rows kept; they have no bytes to add.
	words, err := NewStacker(Tensor{Name: "w", Dense: ndarray.New[string](0)}, 0)
	require.NoError(t, err)
	require.NoError(t, words.Add(Tensor{Dense: ndarray.Must(ndarray.FromSlice([]string{"a", "b"}, 2))}))
	require.NoError(t, words.Add(Tensor{Dense: ndarray.Must(ndarray.FromSlice([]string{"", "d"}, 2)), Valid: []bool{false, true}}))
	require.ErrorIs(t, words.AddBytes(1, [][]byte{{1}}), ndarray.ErrDType)
	got := words.Tensor()
	assert.Equal(t, []string{"a", "b", "", "d"}, got.Dense.(*ndarray.Dense[string]).Data())
	assert.Equal(t, []bool{true, true, false, true}, got.Valid)
}

// TestNewStackers: blocks of one allocation filled at once from several goroutines give the
// whole; a block given more rows than its own, or fewer, is an error.
func TestNewStackers(t *testing.T) {
	rows := []int64{3, 0, 5, 2}
	first := Tensor{Name: "x", Kind: KindFixedShape, Dense: ndarray.New[int32](0, 2)}
	parts, whole, err := NewStackers(first, rows)
	require.NoError(t, err)
	var wg sync.WaitGroup
	at := int64(0)
	for i, r := range rows {
		start := at
		at += r
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int64(0); k < r; k++ { // one row at a time
				row := ndarray.FromFunc(func(j []int64) int32 { return int32((start+k)*2 + j[1]) }, 1, 2)
				assert.NoError(t, parts[i].Add(Tensor{Dense: row}))
			}
		}()
	}
	wg.Wait()
	got, err := whole()
	require.NoError(t, err)
	require.Equal(t, KindFixedShape, got.Kind)
	d := got.Dense.(*ndarray.Dense[int32])
	require.Equal(t, ndarray.Shape{10, 2}, d.Shape())
	for i, v := range d.Data() {
		require.Equal(t, int32(i), v)
	}

	parts, whole, err = NewStackers(first, []int64{1, 1})
	require.NoError(t, err)
	require.ErrorIs(t, parts[0].Add(Tensor{Dense: ndarray.New[int32](2, 2)}), ndarray.ErrShape)
	require.NoError(t, parts[0].Add(Tensor{Dense: ndarray.New[int32](1, 2)}))
	_, err = whole()
	require.ErrorIs(t, err, ndarray.ErrShape, "block 1 holds none of its row")
	_, _, err = NewStackers(first, []int64{-1})
	require.ErrorIs(t, err, ndarray.ErrShape)
	_, _, err = NewStackers(first, []int64{1 << 62, 1 << 62})
	require.ErrorIs(t, err, ndarray.ErrShape)
}

// TestStackerKeepsNoMoreThanItHolds: storage allocated for more rows than came (a peer that
// announced more than it sent), or doubled past the last rows, is not kept by the result.
func TestStackerKeepsNoMoreThanItHolds(t *testing.T) {
	row := Tensor{Dense: ndarray.New[float64](1, 1024)} // 8 KiB
	for _, capRows := range []int64{8192, 0} {          // 64 MiB announced; grown by doubling
		heap := func() uint64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		before := heap()
		s, err := NewStacker(row, capRows)
		require.NoError(t, err)
		for range 300 { // 2.4 MiB
			require.NoError(t, s.Add(row))
		}
		got := s.Tensor()
		s = nil
		held := heap() - before
		require.Equal(t, ndarray.Shape{300, 1024}, got.Shape())
		require.Less(t, held, uint64(8<<20), "capRows %d: %d bytes held for 2.4 MiB of rows", capRows, held)
		runtime.KeepAlive(got)
	}
}

// TestStackerAddBytes: rows given as the little-endian bytes of their values, in parts cut
// anywhere, land below the rows added before, growing the storage or into a block; bytes that
// are not whole rows, and bools, are refused and add nothing.
func TestStackerAddBytes(t *testing.T) {
	part := func(rows int64, first float32) Tensor {
		return Tensor{Name: "x", Dense: ndarray.FromFunc(func(i []int64) float32 { return first + float32(i[0]*3+i[1]) }, rows, 3)}
	}
	bytesOf := func(p Tensor) []byte { return ndarray.LittleEndianBytes(p.Dense.(*ndarray.Dense[float32]).Data()) }
	for _, capRows := range []int64{0, 2, 100} {
		s, err := NewStacker(part(1, 0), capRows)
		require.NoError(t, err)
		require.NoError(t, s.Add(part(2, 0)))
		b := bytesOf(part(3, 6))
		require.NoError(t, s.AddBytes(3, [][]byte{b[:1], b[1:13], {}, b[13:]}))
		require.NoError(t, s.AddBytes(0, nil))
		require.NoError(t, s.Add(part(1, 15)))
		d := s.Tensor().Dense.(*ndarray.Dense[float32])
		require.Equal(t, ndarray.Shape{6, 3}, d.Shape())
		for i, v := range d.Data() {
			require.Equal(t, float32(i), v, "capRows %d", capRows)
		}
	}

	s, err := NewStacker(part(1, 0), 4)
	require.NoError(t, err)
	b := bytesOf(part(2, 0))
	for _, tc := range []struct {
		name  string
		rows  int64
		parts [][]byte
	}{
		{"a byte short", 2, [][]byte{b[:len(b)-1]}},
		{"a byte over", 1, [][]byte{b[:13]}},
		{"negative rows", -1, nil},
		{"rows past int64", 1 << 62, [][]byte{b}},
	} {
		require.ErrorIs(t, s.AddBytes(tc.rows, tc.parts), ndarray.ErrShape, tc.name)
	}
	require.Equal(t, int64(0), s.Tensor().Shape()[0], "a refused part adds nothing")

	bools, err := NewStacker(Tensor{Dense: ndarray.New[bool](1, 2)}, 4)
	require.NoError(t, err)
	require.ErrorIs(t, bools.AddBytes(1, [][]byte{{1, 0}}), ndarray.ErrDType)

	parts, whole, err := NewStackers(part(1, 0), []int64{1, 2})
	require.NoError(t, err)
	require.NoError(t, parts[1].AddBytes(2, [][]byte{bytesOf(part(2, 3))}))
	require.ErrorIs(t, parts[0].AddBytes(2, [][]byte{bytesOf(part(2, 0))}), ndarray.ErrShape, "more rows than the block's")
	require.NoError(t, parts[0].AddBytes(1, [][]byte{bytesOf(part(1, 0))}))
	all, err := whole()
	require.NoError(t, err)
	for i, v := range all.Dense.(*ndarray.Dense[float32]).Data() {
		require.Equal(t, float32(i), v)
	}
}

// TestStackerReadRows: rows read from a reader go straight into storage already allocated;
// rows that do not fit it are not read (false), a byte count that is not those rows', bools
// and a reader that fails are errors that add nothing.
func TestStackerReadRows(t *testing.T) {
	first := Tensor{Name: "x", Dense: ndarray.New[int32](1, 3)}
	s, err := NewStacker(first, 4)
	require.NoError(t, err)
	rows := func(vals ...int32) []byte { return arrow.Int32Traits.CastToBytes(vals) }
	read, err := s.ReadRows(2, 24, bytes.NewReader(rows(1, 2, 3, 4, 5, 6)))
	require.NoError(t, err)
	require.True(t, read)
	_, err = s.ReadRows(1, 11, bytes.NewReader(rows(7, 8, 9)))
	require.ErrorIs(t, err, ndarray.ErrShape)
	read, err = s.ReadRows(1, 12, io.LimitReader(bytes.NewReader(rows(7, 8, 9)), 5))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.True(t, read)
	read, err = s.ReadRows(3, 36, bytes.NewReader(rows(7, 8, 9, 7, 8, 9, 7, 8, 9)))
	require.NoError(t, err)
	require.False(t, read, "3 rows more than the 2 left of the 4 allocated")
	read, err = s.ReadRows(2, 24, bytes.NewReader(rows(7, 8, 9, 10, 11, 12)))
	require.NoError(t, err)
	require.True(t, read)
	require.Equal(t, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, s.Tensor().Dense.(*ndarray.Dense[int32]).Data())

	b, err := NewStacker(Tensor{Name: "m", Dense: ndarray.New[bool](1, 8)}, 4)
	require.NoError(t, err)
	_, err = b.ReadRows(1, 8, bytes.NewReader(make([]byte, 8)))
	require.ErrorIs(t, err, ndarray.ErrDType)
}
