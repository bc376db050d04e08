package ragged

import (
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Array is an n-dimensional array of T whose dimensions after the first may be ragged: rows of
// different lengths. It is TensorFlow's RaggedTensor: flat values, uniform inner dimensions,
// and one row partition per partitioned dimension — row splits for a ragged one, a uniform row
// length for a uniform one between ragged ones.
//
// An Array is not safe for concurrent writes; concurrent reads are safe.
type Array[T ndarray.Element] struct {
	values   []T           // flat values: value row r is values[r*innerN : (r+1)*innerN]
	inner    ndarray.Shape // uniform dimensions after the last partition
	innerN   int64         // product of inner
	parts    []partition   // one per partitioned dimension, outermost first
	base     int64         // the first top-level row, in the numbering parts[0] uses
	nrows    int64         // number of top-level rows
	growRows bool          // the first dimension was Unknown in New: Set may add rows
	view     bool          // shares its splits with another array or foreign memory: cannot grow
	readOnly bool
	split32  bool // built from int32 row splits
}

// partition maps each row of one level to a range of rows of the next level (or of value rows).
// Row numbers are absolute in the storage of each level, so that a view can share it.
type partition struct {
	splits  []int64 // ragged: row r's children are [splits[r], splits[r+1]); nil when uniform
	uniform int64   // the row length of a uniform partition; ndarray.Unknown for a ragged one
}

// children returns the range of next-level rows that row r holds.
func (p partition) children(r int64) (int64, int64) {
	if p.splits == nil {
		return r * p.uniform, (r + 1) * p.uniform
	}
	return p.splits[r], p.splits[r+1]
}

// start returns the first next-level row of row r, which for r one past the last row is the end
// of the last row's children.
func (p partition) start(r int64) int64 {
	if p.splits == nil {
		return r * p.uniform
	}
	return p.splits[r]
}

var (
	_ ndarray.NdArray[float32] = (*Array[float32])(nil)
	_ Any                      = (*Array[string])(nil)
)

// New returns an empty ragged array of the given shape, to be filled with Set. A dimension of
// ndarray.Unknown (-1) after the first is ragged: its rows start empty and grow as Set writes
// past their end. A first dimension of Unknown starts with no rows and grows the same way;
// a known one gives that many rows. Known dimensions between ragged ones are uniform row
// lengths; known dimensions after the last ragged one are the inner shape of the values
// (TensorFlow's flat_values). Elements that exist but were never set are zero.
//
// New panics on an empty shape or a dimension less than -1, like ndarray.New.
func New[T ndarray.Element](shape ...int64) *Array[T] {
	if len(shape) == 0 {
		panic("ragged: New: a ragged array needs at least one dimension")
	}
	last := 0
	for i, d := range shape {
		if d < ndarray.Unknown {
			panic(fmt.Sprintf("ragged: New: dimension %d of shape %v is %d", i, ndarray.Shape(shape), d))
		}
		if i > 0 && d == ndarray.Unknown {
			last = i
		}
	}
	a := &Array[T]{growRows: shape[0] == ndarray.Unknown}
	for _, d := range shape[1 : last+1] {
		if d == ndarray.Unknown {
			a.parts = append(a.parts, partition{splits: []int64{0}, uniform: ndarray.Unknown})
		} else {
			a.parts = append(a.parts, partition{uniform: d})
		}
	}
	a.inner = ndarray.Shape(shape[last+1:]).Clone()
	if err := ndarray.Shape(shape[1:]).Validate(); err != nil {
		panic(fmt.Sprintf("ragged: New: %v", err))
	}
	a.innerN = a.inner.Size()
	if shape[0] > 0 {
		a.insertRows(0, 0, shape[0])
		a.nrows = shape[0]
	}
	return a
}

// DType returns the element type.
func (a *Array[T]) DType() ndarray.DType { return ndarray.DTypeOf[T]() }

// Shape returns the shape: the number of rows, then ndarray.Unknown for each ragged dimension,
// the row length of each uniform one, and the inner shape.
func (a *Array[T]) Shape() ndarray.Shape {
	s := make(ndarray.Shape, 0, a.Rank())
	s = append(s, a.nrows)
	for _, p := range a.parts {
		s = append(s, p.uniform)
	}
	return append(s, a.inner...)
}

// Rank returns the number of dimensions.
func (a *Array[T]) Rank() int { return 1 + len(a.parts) + len(a.inner) }

// Size returns the number of elements when no dimension is ragged, and -1 otherwise; NumValues
// and len(FlatValues()) count what a ragged array holds.
func (a *Array[T]) Size() int64 { return a.Shape().Size() }

// RaggedRank returns the number of row partitions, TensorFlow's ragged_rank: the index of the
// last ragged dimension.
func (a *Array[T]) RaggedRank() int { return len(a.parts) }

// NumRows returns the number of rows, the size of the first dimension.
func (a *Array[T]) NumRows() int64 { return a.nrows }

// NumValues returns the number of value rows, TensorFlow's nvals: the last row split of the
// innermost partition. Without inner dimensions it is the number of elements stored.
func (a *Array[T]) NumValues() int64 {
	lo, hi := a.levelRange(len(a.parts))
	return hi - lo
}

// InnerShape returns a copy of the uniform dimensions after the last partition, the shape of
// one value row.
func (a *Array[T]) InnerShape() ndarray.Shape { return a.inner.Clone() }

// SplitDType returns the integer type the array's row splits came in: ndarray.Int32 for an
// array made from int32 splits or Arrow list offsets, ndarray.Int64 otherwise. Splits are
// always held as int64; the type says which Arrow list type and TensorFlow split dtype the
// array maps back to.
func (a *Array[T]) SplitDType() ndarray.DType {
	if a.split32 {
		return ndarray.Int32
	}
	return ndarray.Int64
}

// ReadOnly reports whether writes to the array panic.
func (a *Array[T]) ReadOnly() bool { return a.readOnly }

// AsReadOnly returns a read-only view of a that shares its storage.
func (a *Array[T]) AsReadOnly() *Array[T] {
	v := *a
	v.readOnly, v.view = true, true
	return &v
}

// levelRange returns the range of rows of level l (0 the top rows, RaggedRank the value rows)
// that the array holds.
func (a *Array[T]) levelRange(l int) (lo, hi int64) {
	lo, hi = a.base, a.base+a.nrows
	for _, p := range a.parts[:l] {
		lo, hi = p.start(lo), p.start(hi)
	}
	return lo, hi
}

// FlatValues returns the array's values in row-major order, TensorFlow's flat_values
// flattened: a view of the array's storage (writes are seen by the array) that stays valid until
// Set next grows the array.
func (a *Array[T]) FlatValues() []T {
	lo, hi := a.levelRange(len(a.parts))
	return a.values[lo*a.innerN : hi*a.innerN]
}

// Values iterates over the stored values in row-major order.
func (a *Array[T]) Values() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, v := range a.FlatValues() {
			if !yield(v) {
				return
			}
		}
	}
}

// RowSplits returns TensorFlow's nested row splits: one slice per partition, outermost first,
// each starting at 0 and ending at the number of rows of the next level. A ragged partition's
// slice is a view of the array's storage when it already starts at 0 — always so for an array
// made by New, Make or FromRowSplits — and a rebased copy otherwise (row views, arrays over
// sliced Arrow lists); a uniform partition's splits are computed. Do not modify the views.
func (a *Array[T]) RowSplits() [][]int64 {
	out := make([][]int64, len(a.parts))
	lo, hi := a.base, a.base+a.nrows
	for l, p := range a.parts {
		if p.splits == nil {
			s := make([]int64, hi-lo+1)
			for i := range s {
				s[i] = int64(i) * p.uniform
			}
			out[l] = s
		} else {
			s := p.splits[lo : hi+1]
			if s[0] != 0 {
				s = rebased(s)
			}
			out[l] = s
		}
		lo, hi = p.start(lo), p.start(hi)
	}
	return out
}

// rebased returns a copy of s minus s[0].
func rebased(s []int64) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = v - s[0]
	}
	return out
}

// RowLengths returns the length of each row of the outermost partition (TensorFlow's
// row_lengths), a new slice; nil for an array without partitions.
func (a *Array[T]) RowLengths() []int64 {
	if len(a.parts) == 0 {
		return nil
	}
	return a.NestedRowLengths()[0]
}

// NestedRowLengths returns the row lengths of every partition, outermost first, in new slices.
func (a *Array[T]) NestedRowLengths() [][]int64 {
	out := make([][]int64, len(a.parts))
	lo, hi := a.base, a.base+a.nrows
	for l, p := range a.parts {
		lengths := make([]int64, hi-lo)
		for i := range lengths {
			s, e := p.children(lo + int64(i))
			lengths[i] = e - s
		}
		out[l] = lengths
		lo, hi = p.start(lo), p.start(hi)
	}
	return out
}

// Get returns the element at indices, one per dimension. It panics when the number of indices
// is not the rank or an index is outside its row, like ndarray.Dense.Get.
func (a *Array[T]) Get(indices ...int64) T {
	return a.values[a.offset("Get", indices)]
}

// offset returns the position in values of the element at indices, panicking on bad indices.
func (a *Array[T]) offset(method string, indices []int64) int64 {
	if len(indices) != a.Rank() {
		panic(fmt.Sprintf("ragged: %s with %d indices %s on an array of rank %d, shape %v", method, len(indices), formatIndices(indices), a.Rank(), a.Shape()))
	}
	if i := indices[0]; i < 0 || i >= a.nrows {
		a.outOfRange(method, indices, 0, a.nrows)
	}
	r := a.base + indices[0]
	for l, p := range a.parts {
		s, e := p.children(r)
		j := indices[1+l]
		if j < 0 || j >= e-s {
			a.outOfRange(method, indices, 1+l, e-s)
		}
		r = s + j
	}
	return a.innerOffset(method, indices, r)
}

// innerOffset returns the position in values of the element at the inner indices of value
// row r.
func (a *Array[T]) innerOffset(method string, indices []int64, r int64) int64 {
	off, stride := r*a.innerN, a.innerN
	k := 1 + len(a.parts)
	for i, d := range a.inner {
		j := indices[k+i]
		if j < 0 || j >= d {
			a.outOfRange(method, indices, k+i, d)
		}
		stride /= d
		off += j * stride
	}
	return off
}

func (a *Array[T]) outOfRange(method string, indices []int64, axis int, length int64) {
	panic(fmt.Sprintf("ragged: %s index %s out of range: dimension %d has length %d there (shape %v)", method, formatIndices(indices), axis, length, a.Shape()))
}

// formatIndices formats indices as fmt's %v does. Get and Set hand it their variadic indices
// instead of fmt, so that the slice does not escape to the heap on every call.
func formatIndices(indices []int64) string {
	b := []byte{'['}
	for i, v := range indices {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(append(b, ']'))
}

// Set stores v at indices, one per dimension. Writing past the end of a row of a ragged
// dimension grows the row to hold the index (elements in between are zero); so does writing
// past the last row when New was given an Unknown first dimension. Appending in row-major order
// costs amortized O(1); growing a row before the last moves the values after it.
//
// Set panics on a read-only array, on a wrong number of indices, on an index outside a
// uniform or inner dimension, and when a row view or an array over foreign memory would grow.
func (a *Array[T]) Set(v T, indices ...int64) {
	if a.readOnly {
		panic(fmt.Sprintf("ragged: Set on a read-only array of shape %v", a.Shape()))
	}
	if len(indices) != a.Rank() {
		a.offset("Set", indices) // panics with the count message
	}
	if i := indices[0]; i < 0 || (i >= a.nrows && (!a.growRows || a.view)) {
		a.outOfRange("Set", indices, 0, a.nrows)
	}
	// Check what can be checked before anything grows, so that a panic leaves a unchanged.
	for l, p := range a.parts {
		if j := indices[1+l]; j < 0 || (p.splits == nil && j >= p.uniform) {
			a.outOfRange("Set", indices, 1+l, p.uniform)
		}
	}
	a.innerOffset("Set", indices, 0)
	if i := indices[0]; i >= a.nrows {
		a.insertRows(0, a.base+a.nrows, i-a.nrows+1)
		a.nrows = i + 1
	}
	r := a.base + indices[0]
	for l, p := range a.parts {
		s, e := p.children(r)
		j := indices[1+l]
		if j < 0 || (j >= e-s && (p.splits == nil || a.view)) {
			a.outOfRange("Set", indices, 1+l, e-s)
		}
		if j >= e-s {
			k := j - (e - s) + 1
			a.insertRows(l+1, e, k)
			splits := a.parts[l].splits
			for q := r + 1; q < int64(len(splits)); q++ {
				splits[q] += k
			}
		}
		r = s + j
	}
	a.values[a.innerOffset("Set", indices, r)] = v
}

// insertRows inserts k empty rows before row at of level l (0 the top rows, RaggedRank the
// value rows, which are zero-filled). A uniform partition gives each new row its children.
func (a *Array[T]) insertRows(l int, at, k int64) {
	if l == len(a.parts) {
		a.values = insertRepeat(a.values, at*a.innerN, k*a.innerN, *new(T))
		return
	}
	p := &a.parts[l]
	if p.splits == nil {
		a.insertRows(l+1, at*p.uniform, k*p.uniform)
		return
	}
	p.splits = insertRepeat(p.splits, at+1, k, p.splits[at])
}

// insertRepeat inserts n copies of v into s before index at, growing s geometrically.
func insertRepeat[E any](s []E, at, n int64, v E) []E {
	l := len(s)
	s = slices.Grow(s, int(n))[:l+int(n)]
	copy(s[at+n:], s[at:l])
	for i := at; i < at+n; i++ {
		s[i] = v
	}
	return s
}

// Row returns row i as a view of rank one less that shares a's storage: writes through it are
// seen by a. A view cannot grow, and it stays valid until a grows. Row panics on an array of
// rank 1 (use Get) and on an index out of range.
func (a *Array[T]) Row(i int64) *Array[T] {
	v := new(Array[T])
	a.rowInto(v, i)
	return v
}

// rowInto makes v the view of row i.
func (a *Array[T]) rowInto(v *Array[T], i int64) {
	if a.Rank() < 2 {
		panic(fmt.Sprintf("ragged: Row(%d) on an array of rank 1, shape %v", i, a.Shape()))
	}
	if i < 0 || i >= a.nrows {
		panic(fmt.Sprintf("ragged: Row(%d) out of range with %d rows", i, a.nrows))
	}
	r := a.base + i
	*v = Array[T]{values: a.values, inner: a.inner, innerN: a.innerN, view: true, readOnly: a.readOnly, split32: a.split32}
	if len(a.parts) > 0 {
		s, e := a.parts[0].children(r)
		v.parts, v.base, v.nrows = a.parts[1:], s, e-s
		return
	}
	d := a.inner[0]
	v.inner = a.inner[1:]
	v.innerN = v.inner.Size()
	v.base, v.nrows = r*d, d
}

// RowValues returns the flat values of row i, a view of the array's storage valid until the
// array grows. It panics on an index out of range.
func (a *Array[T]) RowValues(i int64) []T {
	if i < 0 || i >= a.nrows {
		panic(fmt.Sprintf("ragged: RowValues(%d) out of range with %d rows", i, a.nrows))
	}
	lo, hi := a.base+i, a.base+i+1
	for _, p := range a.parts {
		lo, hi = p.start(lo), p.start(hi)
	}
	return a.values[lo*a.innerN : hi*a.innerN]
}

// Elements iterates over the rows as views (see Row), with their indices. The views are
// allocated in blocks, so iterating costs far less than calling Row for each.
func (a *Array[T]) Elements() iter.Seq2[int64, *Array[T]] {
	return func(yield func(int64, *Array[T]) bool) {
		var block []Array[T]
		for i := range a.nrows {
			if len(block) == 0 {
				block = make([]Array[T], min(a.nrows-i, 64))
			}
			v := &block[0]
			block = block[1:]
			a.rowInto(v, i)
			if !yield(i, v) {
				return
			}
		}
	}
}

// WriteTo writes the flat values in the stream format of ndarray.Dense.WriteTo (little-endian,
// strings length-prefixed); the row splits travel separately.
func (a *Array[T]) WriteTo(w io.Writer) (int64, error) {
	values := a.FlatValues()
	d, err := ndarray.FromSlice(values, int64(len(values)))
	if err != nil {
		return 0, err
	}
	return d.WriteTo(w)
}
