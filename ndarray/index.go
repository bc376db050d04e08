package ndarray

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Index selects along one dimension in Slice (or adds one, or stands for several). Build one
// with At, All, Range, RangeStep, From, To, Step, Flip, Incl, Excl, Even, Odd, Mod, Take,
// NewAxis or Ellipsis. Negative positions count from the end of the dimension, as in NumPy.
//
// Indices that select an arithmetic progression of positions — At, All, the ranges, Step,
// Flip, Even, Odd, Mod, NewAxis, Ellipsis, and Incl or Excl when the positions they leave
// happen to be evenly spaced — make Slice return a view. Incl and Excl on uneven sets and Take
// make Slice return a copy (NumPy's "advanced" and nd4j's "specified" indices).
type Index struct {
	kind        indexKind
	start, stop int64
	step        int64
	openStart   bool
	openStop    bool
	list        []int64
	take        *Dense[int64]
}

type indexKind uint8

const (
	kindAt indexKind = iota + 1
	kindRange
	kindMod
	kindIncl
	kindExcl
	kindTake
	kindNewAxis
	kindEllipsis
)

// At selects the single position i and removes the dimension from the result, like a[i] in
// NumPy. A negative i counts from the end.
func At(i int64) Index { return Index{kind: kindAt, start: i} }

// All selects the whole dimension, like a[:].
func All() Index { return Index{kind: kindRange, step: 1, openStart: true, openStop: true} }

// Range selects positions start ≤ i < end, like a[start:end]: negative bounds count from the
// end, bounds past the dimension are clamped, and end ≤ start selects nothing. The dimension is
// kept even when one position is selected.
func Range(start, end int64) Index { return RangeStep(start, end, 1) }

// RangeStep selects every step-th position from start towards end (exclusive), like
// a[start:end:step]. A negative step walks backwards. Slice fails on a zero step.
func RangeStep(start, end, step int64) Index {
	return Index{kind: kindRange, start: start, stop: end, step: step}
}

// From selects the positions from start to the end of the dimension, like a[start:].
func From(start int64) Index {
	return Index{kind: kindRange, start: start, step: 1, openStop: true}
}

// To selects the positions before end, like a[:end].
func To(end int64) Index {
	return Index{kind: kindRange, stop: end, step: 1, openStart: true}
}

// Step selects every step-th position of the whole dimension, like a[::step]; a negative step
// starts from the last position.
func Step(step int64) Index {
	return Index{kind: kindRange, step: step, openStart: true, openStop: true}
}

// Flip selects the whole dimension backwards, like a[::-1].
func Flip() Index { return Step(-1) }

// Even selects the positions 0, 2, 4, …
func Even() Index { return Mod(2) }

// Odd selects the positions 1, 3, 5, …
func Odd() Index { return Index{kind: kindRange, start: 1, step: 2, openStop: true} }

// Mod selects the positions i with i mod m = 0: 0, m, 2m, … Slice fails when m ≤ 0.
func Mod(m int64) Index { return Index{kind: kindMod, step: m, openStop: true} }

// Incl selects the listed positions in the order given; positions may repeat. The dimension is
// kept. Slice returns a view when the positions are evenly spaced and a copy otherwise.
func Incl(positions ...int64) Index {
	return Index{kind: kindIncl, list: append([]int64(nil), positions...)}
}

// Excl selects every position except the listed ones, in increasing order. Slice returns a view
// when the positions left are evenly spaced and a copy otherwise.
func Excl(positions ...int64) Index {
	return Index{kind: kindExcl, list: append([]int64(nil), positions...)}
}

// Take selects the positions held by the array idx and replaces the dimension with idx's
// dimensions, like NumPy's a[idx] with an integer array. Each Take selects independently of
// the other dimensions (outer indexing, as np.ix_), and Slice always returns a copy.
func Take(idx *Dense[int64]) Index { return Index{kind: kindTake, take: idx} }

// NewAxis inserts a dimension of size 1, like np.newaxis.
func NewAxis() Index { return Index{kind: kindNewAxis} }

// Ellipsis stands for as many All() as the dimensions not otherwise indexed, like "..." in
// NumPy. A Slice call may hold one Ellipsis at most.
func Ellipsis() Index { return Index{kind: kindEllipsis} }

// String describes the index as the Go call that builds it, such as "At(2)" or
// "RangeStep(0, 5, 2)".
func (x Index) String() string {
	switch x.kind {
	case kindAt:
		return fmt.Sprintf("At(%d)", x.start)
	case kindRange:
		switch {
		case x.openStart && x.openStop && x.step == 1:
			return "All()"
		case x.openStart && x.openStop && x.step == -1:
			return "Flip()"
		case x.openStart && x.openStop:
			return fmt.Sprintf("Step(%d)", x.step)
		case x.openStart:
			return fmt.Sprintf("To(%d)", x.stop)
		case x.openStop && x.start == 1 && x.step == 2:
			return "Odd()"
		case x.openStop:
			return fmt.Sprintf("From(%d)", x.start)
		case x.step == 1:
			return fmt.Sprintf("Range(%d, %d)", x.start, x.stop)
		}
		return fmt.Sprintf("RangeStep(%d, %d, %d)", x.start, x.stop, x.step)
	case kindMod:
		if x.step == 2 {
			return "Even()"
		}
		return fmt.Sprintf("Mod(%d)", x.step)
	case kindIncl:
		return "Incl(" + joinInts(x.list) + ")"
	case kindExcl:
		return "Excl(" + joinInts(x.list) + ")"
	case kindTake:
		if x.take == nil {
			return "Take(nil)"
		}
		return fmt.Sprintf("Take(%v array)", x.take.layout.Shape)
	case kindNewAxis:
		return "NewAxis()"
	case kindEllipsis:
		return "Ellipsis()"
	}
	return "Index{}"
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ", ")
}

// selection is what one Index selects along one dimension: nothing kept (drop), an arithmetic
// progression (start, count, step), or an explicit list of positions laid out with dims.
type selection struct {
	drop     bool
	start    int64
	count    int64
	step     int64
	explicit bool
	list     []int64
	dims     Shape
}

// resolve returns what x selects along a dimension of size n.
func (x Index) resolve(n int64) (selection, error) {
	switch x.kind {
	case kindAt:
		i, err := normalize(x.start, n)
		if err != nil {
			return selection{}, fmt.Errorf("At(%d): %w", x.start, err)
		}
		return selection{drop: true, start: i}, nil
	case kindRange:
		return x.resolveRange(n)
	case kindMod:
		if x.step <= 0 {
			return selection{}, fmt.Errorf("Mod(%d): modulus must be positive: %w", x.step, ErrIndex)
		}
		return x.resolveRange(n)
	case kindIncl:
		positions, err := normalizeAll("Incl", x.list, n)
		if err != nil {
			return selection{}, err
		}
		return fromPositions(positions), nil
	case kindExcl:
		excluded, err := normalizeAll("Excl", x.list, n)
		if err != nil {
			return selection{}, err
		}
		return excludeAll(excluded, n), nil
	case kindTake:
		if x.take == nil {
			return selection{}, fmt.Errorf("Take(nil): %w", ErrIndex)
		}
		positions, err := normalizeAll("Take", slices.Collect(x.take.Values()), n)
		if err != nil {
			return selection{}, err
		}
		return selection{explicit: true, list: positions, dims: x.take.Shape()}, nil
	}
	return selection{}, fmt.Errorf("%v is not a dimension index: %w", x, ErrIndex)
}

// resolveRange applies Python's slice.indices rules.
func (x Index) resolveRange(n int64) (selection, error) {
	if x.step == 0 {
		return selection{}, fmt.Errorf("%v: step must not be zero: %w", x, ErrIndex)
	}
	lower, upper := int64(0), n
	if x.step < 0 {
		lower, upper = -1, n-1
	}
	clamp := func(v int64, open bool, def int64) int64 {
		switch {
		case open:
			return def
		case v < 0:
			return max(v+n, lower) // v ≥ MinInt64 and n ≥ 0: no overflow
		default:
			return min(v, upper)
		}
	}
	var start, stop int64
	if x.step > 0 {
		start, stop = clamp(x.start, x.openStart, lower), clamp(x.stop, x.openStop, upper)
	} else {
		start, stop = clamp(x.start, x.openStart, upper), clamp(x.stop, x.openStop, lower)
	}
	count := int64(0)
	switch {
	case x.step > 0 && stop > start:
		count = (stop-start-1)/x.step + 1
	case x.step < 0 && start > stop:
		// -x.step cannot overflow: x.step == MinInt64 divides as a huge step, count 1.
		if x.step == math.MinInt64 {
			count = 1
		} else {
			count = (start-stop-1)/(-x.step) + 1
		}
	}
	return selection{start: start, count: count, step: x.step}, nil
}

// fromPositions returns a progression when positions are evenly spaced (with a non-zero step,
// or a single position) and an explicit list otherwise.
func fromPositions(positions []int64) selection {
	switch len(positions) {
	case 0:
		return selection{start: 0, count: 0, step: 1}
	case 1:
		return selection{start: positions[0], count: 1, step: 1}
	}
	step := positions[1] - positions[0]
	for k := 2; k < len(positions) && step != 0; k++ {
		if positions[k]-positions[k-1] != step {
			step = 0
		}
	}
	if step == 0 {
		return selection{explicit: true, list: positions, dims: Shape{int64(len(positions))}}
	}
	return selection{start: positions[0], count: int64(len(positions)), step: step}
}

// excludeAll returns the selection of the positions of [0, n) not in excluded (all inside it).
// It never allocates in proportion to n unless the result is a list that long: a kept set that
// is evenly spaced with a step of 2 or more needs n ≤ 2·len(excluded)+2, and one with step 1
// is a single run that is recognized from the excluded positions alone.
func excludeAll(excluded []int64, n int64) selection {
	slices.Sort(excluded)
	excluded = slices.Compact(excluded)
	m := int64(len(excluded))
	if n > 2*m+2 {
		// Many positions are kept: the result is a view only when they form one run
		// [first, first+kept), that is when excluded is a prefix [0, first) and a suffix.
		kept := n - m
		first := int64(0)
		for first < m && excluded[first] == first {
			first++
		}
		if first == m || excluded[first] >= first+kept {
			return selection{start: first, count: kept, step: 1}
		}
	}
	positions := make([]int64, 0, n-m)
	next := 0
	for i := int64(0); i < n; i++ {
		if next < len(excluded) && excluded[next] == i {
			next++
			continue
		}
		positions = append(positions, i)
	}
	return fromPositions(positions)
}

// normalizeAll returns positions normalized by normalize, in a new slice, or the error for the
// first bad one, naming the index constructor.
func normalizeAll(name string, positions []int64, n int64) ([]int64, error) {
	out := make([]int64, len(positions))
	for k, p := range positions {
		i, err := normalize(p, n)
		if err != nil {
			return nil, fmt.Errorf("%s position %d: %w", name, p, err)
		}
		out[k] = i
	}
	return out, nil
}

// normalize turns a possibly negative position into one in [0, n), or fails with ErrIndex.
func normalize(i, n int64) (int64, error) {
	j := i
	if j < 0 {
		j += n
	}
	if j < 0 || j >= n {
		return 0, fmt.Errorf("position %d out of range for dimension of size %d: %w", i, n, ErrIndex)
	}
	return j, nil
}

// Selection is what one Index selects along one dimension of an array, resolved against the
// dimension's size: the form in which packages with array kinds of their own (sparse and
// ragged arrays) implement Slice with the same rules as Dense.Slice.
type Selection struct {
	// Axis is the source dimension the index reads, or -1 for NewAxis, which adds a dimension
	// of size 1.
	Axis int
	// Fixed reports an At index: the source dimension is fixed at position Start and does not
	// appear in the result.
	Fixed bool
	// Start, Count and Step describe the source positions Start, Start+Step, … (Count of them)
	// when Positions is nil.
	Start, Count, Step int64
	// Positions lists the source positions of an index that is not an arithmetic progression
	// (Incl, Excl, Take), laid out in the result as Dims: one dimension, or the shape of the
	// Take array.
	Positions []int64
	Dims      Shape
}

// Select resolves indices against shape exactly as Dense.Slice does — missing trailing indices
// mean All, one Ellipsis stands for the dimensions not otherwise indexed — and returns one
// Selection per index in result order. It fails with ErrIndex where Slice would.
func Select(shape Shape, indices ...Index) ([]Selection, error) {
	sels, err := selections(shape, indices)
	if err != nil {
		return nil, fmt.Errorf("ndarray: Select %v of shape %v: %w", indices, shape, err)
	}
	out := make([]Selection, len(sels))
	for i, s := range sels {
		out[i] = Selection{Axis: s.axis, Fixed: s.drop, Start: s.start, Count: s.count, Step: s.step}
		if s.axis < 0 {
			out[i].Count, out[i].Step = 1, 1
		}
		if s.explicit {
			out[i].Positions, out[i].Dims = s.list, s.dims.Clone()
		}
	}
	return out, nil
}
