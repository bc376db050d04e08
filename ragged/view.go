package ragged

import (
	"fmt"
	"math"

	"github.com/ndarrow/ndarrow/ndarray"
)

// RuleInBounds is the storage rule of View: the rows an array holds must lie inside the splits
// and values it is given.
const RuleInBounds Rule = "rows must lie within the storage"

// View returns an array over storage laid out as Make's, except that its rows are rows first
// to first+nrows of the outermost partition and the splits need not start at 0: the layout of a
// sliced Arrow list array, whose offsets point into child arrays that hold more than the slice.
// The array views values and int64 splits without copying (int32 splits are widened into new
// slices) and cannot grow.
//
// View takes time proportional to the number of levels, not of rows: it checks the split
// dtypes, that the first and last split of each level it uses lie inside the next level and
// are in order, and that the values cover the rows — and trusts the splits in between to be
// non-decreasing, as Arrow trusts the offsets of a valid list array. Call Validate before
// reading an array whose splits come from an untrusted source: until it succeeds, reads may
// panic on corrupt splits.
func View[T ndarray.Element](values []T, inner ndarray.Shape, first, nrows int64, parts ...Partition) (*Array[T], error) {
	if err := inner.Validate(); err != nil || !inner.IsKnown() {
		return nil, fmt.Errorf("ragged: inner shape %v: %w", inner, ndarray.ErrShape)
	}
	if first < 0 || nrows < 0 || first > math.MaxInt64-nrows {
		return nil, &ValidationError{Level: 0, Rule: RuleInBounds, Detail: fmt.Sprintf("rows %d to %d+%d", first, first, nrows)}
	}
	a := &Array[T]{values: values, inner: inner.Clone(), innerN: inner.Size(), view: true, base: first, nrows: nrows}
	if err := a.setParts(parts); err != nil {
		return nil, err
	}
	lo, hi := first, first+nrows
	for l, p := range a.parts {
		if p.splits == nil {
			if p.uniform < 0 || (p.uniform > 0 && hi > math.MaxInt64/p.uniform) {
				return nil, &ValidationError{Level: l, Rule: RuleUniformLength, Detail: fmt.Sprintf("length %d for %d rows", p.uniform, hi)}
			}
			lo, hi = lo*p.uniform, hi*p.uniform
			continue
		}
		if hi >= int64(len(p.splits)) {
			return nil, &ValidationError{Level: l, Rule: RuleInBounds, Detail: fmt.Sprintf("%d row splits for rows up to %d", len(p.splits), hi)}
		}
		s, e := p.splits[lo], p.splits[hi]
		if s < 0 {
			return nil, &ValidationError{Level: l, Rule: RuleInBounds, Detail: fmt.Sprintf("row_splits[%d] is %d", lo, s)}
		}
		if e < s {
			return nil, &ValidationError{Level: l, Rule: RuleNonDecreasing, Detail: fmt.Sprintf("row_splits[%d] = %d after row_splits[%d] = %d", hi, e, lo, s)}
		}
		lo, hi = s, e
	}
	if a.innerN > 0 && hi > int64(len(values))/a.innerN {
		return nil, &ValidationError{Level: -1, Rule: RuleInBounds, Detail: fmt.Sprintf("value rows up to %d of %d values in rows of %d", hi, len(values), a.innerN)}
	}
	return a, nil
}

// Validate checks every row split the array uses: non-decreasing, so that every row lies
// inside the storage. Arrays from New, Make, FromRowSplits and FromDense are always valid;
// View trusts the splits it is given, and Validate is the check it leaves out. The error is a
// *ValidationError naming the level.
func (a *Array[T]) Validate() error {
	lo, hi := a.base, a.base+a.nrows
	for l, p := range a.parts {
		if p.splits != nil {
			first := lo
			for r := lo + 1; r <= hi; r++ {
				if p.splits[r] < p.splits[r-1] {
					return &ValidationError{Level: l, Rule: RuleNonDecreasing, Detail: fmt.Sprintf("row_splits[%d] = %d after %d", r-first, p.splits[r], p.splits[r-1])}
				}
			}
		}
		lo, hi = p.start(lo), p.start(hi)
	}
	return nil
}
