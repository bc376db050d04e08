package ragged_test

import (
	"errors"
	"testing"

	"github.com/ndarrow/ndarrow/ragged"
)

// FuzzMake builds arrays from arbitrary nested row splits (two levels, one of them possibly
// uniform): no panic; either a ValidationError, or an array whose every element Get reaches,
// in the order of its flat values, and that survives Clone, Concat and a dense round trip.
func FuzzMake(f *testing.F) {
	f.Add([]byte{0, 3, 3, 5}, []byte{0, 4, 4, 7, 8, 8}, uint8(8), uint8(0))
	f.Add([]byte{0, 2, 4}, []byte{0, 1, 1, 1, 4}, uint8(4), uint8(0))
	f.Add([]byte{}, []byte{0, 2, 4, 6, 8}, uint8(8), uint8(2))
	f.Add([]byte{0, 5, 2}, []byte{0}, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, outer, inner []byte, nvals, uniform uint8) {
		split := func(b []byte) []int64 {
			s := make([]int64, len(b))
			for i, v := range b {
				s[i] = int64(int8(v))
			}
			return s
		}
		values := make([]uint16, nvals)
		for i := range values {
			values[i] = uint16(i)
		}
		first := ragged.RowSplits(split(outer))
		if uniform > 0 {
			first = ragged.UniformRowLength(int64(uniform) - 3)
		}
		a, err := ragged.Make(values, nil, first, ragged.RowSplits(split(inner)))
		if err != nil {
			var ve *ragged.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ragged.ErrInvalid) {
				t.Fatalf("not a ValidationError: %v", err)
			}
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range a.NumRows() {
			row := a.Row(i)
			for j := range row.NumRows() {
				for k := range int64(len(row.RowValues(j))) {
					if got := a.Get(i, j, k); got != values[n] {
						t.Fatalf("Get(%d, %d, %d) = %d, want %d", i, j, k, got, values[n])
					}
					n++
				}
			}
		}
		if n != len(values) {
			t.Fatalf("reached %d of %d values", n, len(values))
		}
		_ = a.String()
		if c := a.Clone(); !ragged.Equal(a, c) {
			t.Fatal("clone differs")
		}
		if c, err := ragged.Concat(a, a); err != nil || c.NumRows() != 2*a.NumRows() {
			t.Fatalf("concat: %v", err)
		}
		d, err := a.ToDense(0xffff)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for v := range d.Values() {
			if v != 0xffff {
				count++
			}
		}
		if count != len(values) {
			t.Fatalf("dense holds %d values, want %d", count, len(values))
		}
	})
}
