package ragged

import (
	"errors"
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
)

// ErrInvalid is wrapped by every error about row partitions or values that do not form a
// ragged array.
var ErrInvalid = errors.New("invalid ragged array")

// Rule names one of the checks TensorFlow applies to the parts of a RaggedTensor.
type Rule string

// The rules Make enforces, as TensorFlow's RaggedTensor.from_nested_row_splits,
// from_uniform_row_length and their RowPartition checks do.
const (
	RuleNonEmpty      Rule = "row splits must not be empty"
	RuleStartsAtZero  Rule = "row splits must start at 0"
	RuleNonDecreasing Rule = "row splits must not decrease"
	RuleEndsAtNVals   Rule = "the last row split must be the number of values"
	RuleOneDType      Rule = "all row splits must have one dtype"
	RuleUniformLength Rule = "a uniform row length must be non-negative and divide the values"
	RuleInnerShape    Rule = "the values must fill whole rows of the inner shape"
)

// ValidationError says which rule failed at which level: the index of the partition,
// outermost 0 (TensorFlow's nested_row_splits[Level]), or -1 for the values themselves.
type ValidationError struct {
	Level  int
	Rule   Rule
	Detail string
}

func (e *ValidationError) Error() string {
	if e.Level < 0 {
		return fmt.Sprintf("ragged: values: %s: %s", e.Rule, e.Detail)
	}
	return fmt.Sprintf("ragged: level %d: %s: %s", e.Level, e.Rule, e.Detail)
}

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Partition is how one level of a ragged array divides the rows of the next level (or the
// values) among its own rows: by row splits (a ragged dimension) or by a uniform row length.
type Partition struct {
	splits  []int64
	split32 []int32
	uniform int64
}

// RowSplits returns a partition by int64 row splits: row i holds next-level rows
// splits[i] to splits[i+1]. Make uses the slice itself, without copying.
func RowSplits(splits []int64) Partition {
	if splits == nil {
		splits = []int64{}
	}
	return Partition{splits: splits, uniform: ndarray.Unknown}
}

// RowSplits32 returns a partition by int32 row splits, which Make widens into a new int64
// slice; the array remembers the type (Array.SplitDType).
func RowSplits32(splits []int32) Partition {
	if splits == nil {
		splits = []int32{}
	}
	return Partition{split32: splits, uniform: ndarray.Unknown}
}

// UniformRowLength returns a partition whose rows all hold length next-level rows
// (TensorFlow's uniform_row_length). At the outermost level, a length of 0 gives no rows.
func UniformRowLength(length int64) Partition { return Partition{uniform: length} }

// Make returns the ragged array with the given flat values, inner shape (the uniform
// dimensions of each value row, nil for none) and partitions, outermost first — TensorFlow's
// RaggedTensor.from_nested_row_splits, generalized to uniform partitions. The array views
// values and int64 splits without copying; it can be written with Set but not grown.
//
// Make checks the parts exactly as TensorFlow does and returns a *ValidationError (wrapping
// ErrInvalid) naming the level and the Rule that failed: row splits non-empty, starting at 0,
// non-decreasing and ending at the number of rows of the next level; one split dtype for all
// levels; uniform lengths non-negative and dividing the next level; values filling whole rows
// of the inner shape.
func Make[T ndarray.Element](values []T, inner ndarray.Shape, parts ...Partition) (*Array[T], error) {
	if err := inner.Validate(); err != nil {
		return nil, fmt.Errorf("ragged: inner shape: %w", err)
	}
	if !inner.IsKnown() {
		return nil, fmt.Errorf("ragged: inner shape %v has an unknown dimension: %w", inner, ndarray.ErrShape)
	}
	a := &Array[T]{values: values, inner: inner.Clone(), innerN: inner.Size(), view: true}
	if err := a.setParts(parts); err != nil {
		return nil, err
	}
	nvals, err := a.valueRows()
	if err != nil {
		return nil, err
	}
	for l := len(a.parts) - 1; l >= 0; l-- {
		if nvals, err = a.parts[l].check(l, nvals); err != nil {
			return nil, err
		}
	}
	a.nrows = nvals
	return a, nil
}

// FromRowSplits returns the array over flat values partitioned by nested int64 row splits,
// outermost first: Make(values, nil, RowSplits(splits[0]), RowSplits(splits[1]), ...).
func FromRowSplits[T ndarray.Element](values []T, splits ...[]int64) (*Array[T], error) {
	parts := make([]Partition, len(splits))
	for i, s := range splits {
		parts[i] = RowSplits(s)
	}
	return Make(values, nil, parts...)
}

// setParts converts the partitions, checking that ragged ones share one split dtype.
func (a *Array[T]) setParts(parts []Partition) error {
	first := -1
	for l, p := range parts {
		if p.uniform != ndarray.Unknown {
			a.parts = append(a.parts, partition{uniform: p.uniform})
			continue
		}
		is32 := p.split32 != nil
		if first < 0 {
			first, a.split32 = l, is32
		} else if is32 != a.split32 {
			return &ValidationError{Level: l, Rule: RuleOneDType, Detail: fmt.Sprintf("%s splits after %s ones at level %d", dtypeName(is32), dtypeName(a.split32), first)}
		}
		s := p.splits
		if is32 {
			s = make([]int64, len(p.split32))
			for i, v := range p.split32 {
				s[i] = int64(v)
			}
		}
		a.parts = append(a.parts, partition{splits: s, uniform: ndarray.Unknown})
	}
	return nil
}

func dtypeName(is32 bool) string {
	if is32 {
		return "int32"
	}
	return "int64"
}

// valueRows returns the number of value rows the values make.
func (a *Array[T]) valueRows() (int64, error) {
	n := int64(len(a.values))
	if a.innerN == 0 {
		if n != 0 {
			return 0, &ValidationError{Level: -1, Rule: RuleInnerShape, Detail: fmt.Sprintf("%d values for the empty inner shape %v", n, a.inner)}
		}
		// The value rows are empty; their number comes from the innermost ragged partition.
		if l := len(a.parts) - 1; l >= 0 && a.parts[l].splits != nil && len(a.parts[l].splits) > 0 {
			return a.parts[l].splits[len(a.parts[l].splits)-1], nil
		}
		return 0, nil
	}
	if n%a.innerN != 0 {
		return 0, &ValidationError{Level: -1, Rule: RuleInnerShape, Detail: fmt.Sprintf("%d values do not divide into rows of shape %v", n, a.inner)}
	}
	return n / a.innerN, nil
}

// check validates partition p at level l over nvals next-level rows and returns its row count.
func (p partition) check(l int, nvals int64) (int64, error) {
	if p.splits == nil {
		switch {
		case p.uniform < 0:
			return 0, &ValidationError{Level: l, Rule: RuleUniformLength, Detail: fmt.Sprintf("length %d", p.uniform)}
		case p.uniform == 0 && nvals != 0:
			return 0, &ValidationError{Level: l, Rule: RuleUniformLength, Detail: fmt.Sprintf("length 0 over %d values", nvals)}
		case p.uniform == 0:
			return 0, nil
		case nvals%p.uniform != 0:
			return 0, &ValidationError{Level: l, Rule: RuleUniformLength, Detail: fmt.Sprintf("%d values do not divide into rows of %d", nvals, p.uniform)}
		}
		return nvals / p.uniform, nil
	}
	s := p.splits
	if len(s) == 0 {
		return 0, &ValidationError{Level: l, Rule: RuleNonEmpty, Detail: "no row splits (one row needs two)"}
	}
	if s[0] != 0 {
		return 0, &ValidationError{Level: l, Rule: RuleStartsAtZero, Detail: fmt.Sprintf("row_splits[0] is %d", s[0])}
	}
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] {
			return 0, &ValidationError{Level: l, Rule: RuleNonDecreasing, Detail: fmt.Sprintf("row_splits[%d] = %d after %d", i, s[i], s[i-1])}
		}
	}
	if last := s[len(s)-1]; last != nvals {
		return 0, &ValidationError{Level: l, Rule: RuleEndsAtNVals, Detail: fmt.Sprintf("row_splits[%d] is %d, but there are %d values", len(s)-1, last, nvals)}
	}
	return int64(len(s) - 1), nil
}
