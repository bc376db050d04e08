package ragged

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Take returns the rows of a at the given indices, in that order (an index may repeat), as a
// new array that shares no memory with a: its values and row splits are copies, of a's split
// dtype. It fails with an error wrapping ndarray.ErrShape for an array of rank 1 and an
// index out of range.
func Take[T ndarray.Element](a *Array[T], rows []int64) (*Array[T], error) {
	if a.Rank() < 2 {
		return nil, fmt.Errorf("ragged: Take of an array of rank 1, shape %v: %w", a.Shape(), ndarray.ErrShape)
	}
	for _, r := range rows {
		if r < 0 || r >= a.nrows {
			return nil, fmt.Errorf("ragged: Take of row %d of %d: %w", r, a.nrows, ndarray.ErrShape)
		}
	}
	if len(a.parts) == 0 { // uniform rows: each is inner[0] rows of the cells after it
		inner := a.inner[1:]
		d, cell := a.inner[0], inner.Size()
		values := make([]T, 0, int64(len(rows))*d*cell)
		for _, r := range rows {
			values = append(values, a.RowValues(r)...)
		}
		return Make(values, a.inner.Clone(), UniformRowLength(d))
	}
	// Level by level: the items each selected item spans at the next level, as runs.
	splits := a.RowSplits()
	type run struct{ lo, hi int64 }
	sel := make([]run, len(rows))
	for i, r := range rows {
		sel[i] = run{r, r + 1}
	}
	parts := make([]Partition, len(splits))
	for l, s := range splits {
		out := make([]int64, 1, len(sel)+1)
		next := make([]run, 0, len(sel))
		for _, rn := range sel {
			for i := rn.lo; i < rn.hi; i++ {
				out = append(out, out[len(out)-1]+s[i+1]-s[i])
			}
			if rn.hi > rn.lo {
				next = append(next, run{s[rn.lo], s[rn.hi]})
			}
		}
		switch {
		case a.parts[l].splits == nil:
			parts[l] = UniformRowLength(a.parts[l].uniform)
		case a.split32:
			s32 := make([]int32, len(out))
			for i, v := range out {
				s32[i] = int32(v)
			}
			parts[l] = RowSplits32(s32)
		default:
			parts[l] = RowSplits(out)
		}
		sel = next
	}
	flat := a.FlatValues()
	n := a.innerN
	values := make([]T, 0)
	for _, rn := range sel {
		values = append(values, flat[rn.lo*n:rn.hi*n]...)
	}
	return Make(values, a.inner.Clone(), parts...)
}

// TakeAny is Take for an array known only as Any.
func TakeAny(a Any, rows []int64) (Any, error) {
	t, ok := a.(interface{ takeAny([]int64) (Any, error) })
	if !ok {
		return nil, fmt.Errorf("ragged: TakeAny of %T: %w", a, ndarray.ErrDType)
	}
	return t.takeAny(rows)
}

func (a *Array[T]) takeAny(rows []int64) (Any, error) { return Take(a, rows) }
