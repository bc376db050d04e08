package ragged

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Any is the part of Array[T]'s API that needs no type parameter, for code that handles
// ragged arrays whose element type is known only at run time, such as readers of files. A type
// switch on *Array[T] recovers the typed array.
type Any interface {
	DType() ndarray.DType
	Shape() ndarray.Shape
	Rank() int
	RaggedRank() int
	NumRows() int64
	NumValues() int64
	InnerShape() ndarray.Shape
	RowSplits() [][]int64
	SplitDType() ndarray.DType
	ReadOnly() bool
	Validate() error
	WriteTo(w io.Writer) (int64, error)
	String() string
}

// Clone returns a copy of a that shares no memory with it and can grow: its row splits start
// at 0 and its values are exactly the rows it holds.
func (a *Array[T]) Clone() *Array[T] {
	c := &Array[T]{inner: a.inner.Clone(), innerN: a.innerN, nrows: a.nrows, growRows: a.growRows, split32: a.split32}
	for _, p := range a.compactParts() {
		c.parts = append(c.parts, partition{splits: slices.Clone(p.splits), uniform: p.uniform})
	}
	c.values = slices.Clone(a.FlatValues())
	return c
}

// compactParts returns a's partitions with the splits of the rows it holds, each starting at 0
// (views when they already do).
func (a *Array[T]) compactParts() []partition {
	splits := a.RowSplits()
	out := make([]partition, len(a.parts))
	for l, p := range a.parts {
		out[l] = partition{uniform: p.uniform}
		if p.splits != nil {
			out[l].splits = splits[l]
		}
	}
	return out
}

// Equal reports whether a and b have the same shape, partitions and row splits and equal values
// (compared with ==, so a NaN is never equal).
func Equal[T ndarray.Element](a, b *Array[T]) bool {
	if !a.Shape().Equal(b.Shape()) || a.RaggedRank() != b.RaggedRank() {
		return false
	}
	as, bs := a.RowSplits(), b.RowSplits()
	for l := range as {
		if !slices.Equal(as[l], bs[l]) {
			return false
		}
	}
	return slices.Equal(a.FlatValues(), b.FlatValues())
}

// Concat returns the rows of arrays one after another in a new array that can grow
// (TensorFlow's tf.concat along axis 0). The arrays must agree in everything but their number of
// rows and ragged row lengths: partition kinds, uniform lengths and inner shape; otherwise
// Concat fails with ndarray.ErrShape. With no arrays it fails too.
func Concat[T ndarray.Element](arrays ...*Array[T]) (*Array[T], error) {
	if len(arrays) == 0 {
		return nil, fmt.Errorf("ragged: Concat of no arrays: %w", ndarray.ErrShape)
	}
	first := arrays[0]
	out := &Array[T]{inner: first.inner.Clone(), innerN: first.innerN, growRows: first.growRows, split32: first.split32}
	for _, p := range first.parts {
		q := partition{uniform: p.uniform}
		if p.splits != nil {
			q.splits = []int64{0}
		}
		out.parts = append(out.parts, q)
	}
	for i, a := range arrays {
		if !sameKind(first, a) {
			return nil, fmt.Errorf("ragged: Concat: array %d of shape %v (ragged rank %d) does not match shape %v (ragged rank %d): %w",
				i, a.Shape(), a.RaggedRank(), first.Shape(), first.RaggedRank(), ndarray.ErrShape)
		}
		for l, p := range a.compactParts() {
			if p.splits == nil {
				continue
			}
			dst := &out.parts[l].splits
			shift := (*dst)[len(*dst)-1]
			for _, v := range p.splits[1:] {
				*dst = append(*dst, v+shift)
			}
		}
		out.values = append(out.values, a.FlatValues()...)
		out.nrows += a.nrows
		out.split32 = out.split32 && a.split32
	}
	return out, nil
}

// sameKind reports whether a and b have the same partition kinds, uniform lengths and inner
// shape.
func sameKind[T ndarray.Element](a, b *Array[T]) bool {
	if len(a.parts) != len(b.parts) || !a.inner.Equal(b.inner) {
		return false
	}
	for l := range a.parts {
		if a.parts[l].uniform != b.parts[l].uniform {
			return false
		}
	}
	return true
}

// String formats a as nested lists, like TensorFlow prints a RaggedTensor: [[1, 2], [], [3]].
// Rows beyond the first and last three of a long dimension print as "...".
func (a *Array[T]) String() string {
	var b strings.Builder
	var walk func(l int, lo, hi int64, dims []int64)
	// walk prints rows [lo, hi) of level l; dims are the inner dimensions still to print once
	// the partitions are done.
	walk = func(l int, lo, hi int64, dims []int64) {
		b.WriteByte('[')
		for r := lo; r < hi; r++ {
			if r > lo {
				b.WriteString(", ")
			}
			if hi-lo > 6 && r == lo+3 {
				b.WriteString("...")
				r = hi - 4
				continue
			}
			switch {
			case l < len(a.parts):
				s, e := a.parts[l].children(r)
				walk(l+1, s, e, a.inner)
			case len(dims) > 0:
				walk(l, r*dims[0], (r+1)*dims[0], dims[1:])
			default:
				fmt.Fprintf(&b, elementVerb(a.DType()), a.values[r])
			}
		}
		b.WriteByte(']')
	}
	if len(a.parts) > 0 {
		walk(0, a.base, a.base+a.nrows, nil)
		return b.String()
	}
	// No partitions: the top rows are value rows; print their inner dimensions.
	if len(a.inner) == 0 {
		walk(0, a.base, a.base+a.nrows, nil)
		return b.String()
	}
	return printInner(a)
}

// printInner formats an array without partitions, whose rows are value rows of inner shape.
func printInner[T ndarray.Element](a *Array[T]) string {
	d, err := ndarray.FromSlice(a.FlatValues(), a.Shape()...)
	if err != nil {
		return fmt.Sprintf("ragged array of shape %v", a.Shape())
	}
	return d.String()
}

// elementVerb returns the fmt verb for one element: strings quoted, everything else %v.
func elementVerb(dt ndarray.DType) string {
	if dt == ndarray.String {
		return "%q"
	}
	return "%v"
}

// ConcatAny is Concat for arrays known only as Any; all must have one element type, or it fails
// with ndarray.ErrDType.
func ConcatAny(arrays ...Any) (Any, error) {
	if len(arrays) == 0 {
		return nil, fmt.Errorf("ragged: Concat of no arrays: %w", ndarray.ErrShape)
	}
	first, ok := arrays[0].(interface{ concatAny([]Any) (Any, error) })
	if !ok {
		return nil, fmt.Errorf("ragged: ConcatAny of %T: %w", arrays[0], ndarray.ErrDType)
	}
	return first.concatAny(arrays)
}

func (a *Array[T]) concatAny(arrays []Any) (Any, error) {
	typed := make([]*Array[T], len(arrays))
	for i, x := range arrays {
		t, ok := x.(*Array[T])
		if !ok {
			return nil, fmt.Errorf("ragged: ConcatAny: array %d is a %T, array 0 a %T: %w", i, x, a, ndarray.ErrDType)
		}
		typed[i] = t
	}
	return Concat(typed...)
}
