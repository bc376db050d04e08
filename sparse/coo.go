package sparse

import (
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ndarrow/ndarrow/ndarray"
)

// COO is a sparse array in coordinate format: for each stored value, its coordinates, one per
// dimension, as a row of an [NNZ, Rank] index matrix. Any rank is allowed.
//
// A COO is either a whole array or a view of one made by Slice: views share the stored
// entries, so a Set through a view is seen by the array and by every other view of it. A COO
// is not safe for concurrent use when one goroutine writes; concurrent reads are safe.
type COO[T ndarray.Element] struct {
	st       *cooStore[T]
	win      *window // nil for the whole array
	readOnly bool
}

// cooStore holds the stored entries that a COO and its views share.
type cooStore[T ndarray.Element] struct {
	shape     ndarray.Shape
	strides   []int64 // row-major, in elements: an entry's key is its row-major position
	coords    Indices // [nnz, rank], row-major
	values    []T
	canonical bool

	mu    sync.Mutex                    // serializes building index
	index atomic.Pointer[map[int64]int] // key → position of the coordinate's last entry
}

// NewCOO returns an empty, writable COO of the given shape, with int32 coordinates when
// every dimension fits in an int32 and int64 ones otherwise. It panics on a negative or
// unknown dimension, as ndarray.New does.
func NewCOO[T ndarray.Element](shape ...int64) *COO[T] {
	s := ndarray.Shape(shape).Clone()
	mustShape("NewCOO", s)
	return newCOO(s, makeIndices(coordinateType(s), 0), []T{}, true)
}

// MakeCOO returns a COO of the given shape over indices — the [nnz, rank] coordinate matrix
// in row-major order, int32 or int64 — and values, one per row of it. The result views both
// slices without copying and is writable (Set may append to them). MakeCOO checks every
// coordinate against the shape and finds out whether the entries are canonical; it fails with
// an error wrapping ErrInvalid when they do not fit.
func MakeCOO[T ndarray.Element](shape ndarray.Shape, indices Indices, values []T) (*COO[T], error) {
	shape = shape.Clone()
	if err := checkShape(shape); err != nil {
		return nil, fmt.Errorf("sparse: MakeCOO: %w", err)
	}
	rank, nnz := len(shape), len(values)
	if want, ok := mulInt(nnz, rank); !ok || indices.Len() != want {
		return nil, fmt.Errorf("sparse: MakeCOO: %d coordinates for %d values of rank %d: %w", indices.Len(), nnz, rank, ErrInvalid)
	}
	if rank == 0 && nnz > 1 {
		return nil, fmt.Errorf("sparse: MakeCOO: %d values for a scalar: %w", nnz, ErrInvalid)
	}
	bad := coordsOutside(indices.narrow, shape)
	if indices.is64 {
		bad = coordsOutside(indices.wide, shape)
	}
	if bad >= 0 {
		i, d := bad/rank, bad%rank
		return nil, fmt.Errorf("sparse: MakeCOO: value %d: coordinate %d of dimension %d is outside [0, %d): %w", i, indices.At(bad), d, shape[d], ErrInvalid)
	}
	c := newCOO(shape, indices, values, false)
	c.st.canonical = c.st.sortedKeys()
	return c, nil
}

// coordsOutside returns the position in coords, a row-major [n, rank] matrix, of the first
// coordinate outside its dimension of shape, or -1.
func coordsOutside[I int32 | int64](coords []I, shape ndarray.Shape) int {
	rank := len(shape)
	for i := 0; i < len(coords); i += rank {
		for d, n := range shape {
			if x := int64(coords[i+d]); x < 0 || x >= n {
				return i + d
			}
		}
	}
	return -1
}

// rowsIncrease reports whether the rows of coords, a row-major [n, rank] matrix, strictly
// increase in lexicographic (row-major) order.
func rowsIncrease[I int32 | int64](coords []I, rank int) bool {
	for i := rank; i < len(coords); i += rank {
		if slices.Compare(coords[i-rank:i], coords[i:i+rank]) >= 0 {
			return false
		}
	}
	return true
}

// newCOO returns a whole COO over the parts, which the caller has checked.
func newCOO[T ndarray.Element](shape ndarray.Shape, coords Indices, values []T, canonical bool) *COO[T] {
	return &COO[T]{st: &cooStore[T]{shape: shape, strides: rowMajorStrides(shape), coords: coords, values: values, canonical: canonical}}
}

// mulInt returns a*b for non-negative a and b and whether it did not overflow.
func mulInt(a, b int) (int, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a && p >= 0
}

// DType returns the element type.
func (c *COO[T]) DType() ndarray.DType { return ndarray.DTypeOf[T]() }

// Format returns FormatCOO.
func (c *COO[T]) Format() Format { return FormatCOO }

// Shape returns a copy of the shape.
func (c *COO[T]) Shape() ndarray.Shape { return c.shape().Clone() }

func (c *COO[T]) shape() ndarray.Shape {
	if c.win != nil {
		return c.win.shape
	}
	return c.st.shape
}

// Rank returns the number of dimensions.
func (c *COO[T]) Rank() int { return len(c.shape()) }

// Size returns the number of elements, zeros included.
func (c *COO[T]) Size() int64 { return c.shape().Size() }

// ReadOnly reports whether writes panic.
func (c *COO[T]) ReadOnly() bool { return c.readOnly }

// AsReadOnly returns a read-only COO sharing c's entries.
func (c *COO[T]) AsReadOnly() *COO[T] {
	r := *c
	r.readOnly = true
	return &r
}

// IsView reports whether c is a view made by Slice rather than a whole array.
func (c *COO[T]) IsView() bool { return c.win != nil }

// IsCanonical reports whether the stored entries are in row-major order without duplicates.
// A view answers for the entries of the array it views.
func (c *COO[T]) IsCanonical() bool { return c.st.canonical }

// NNZ returns the number of stored values, duplicates included. For a view it counts the
// entries inside the view, which takes time proportional to the array's NNZ.
func (c *COO[T]) NNZ() int64 {
	if c.win == nil {
		return int64(len(c.st.values))
	}
	n := int64(0)
	for range c.Entries() {
		n++
	}
	return n
}

// Indices returns the [NNZ, Rank] coordinate matrix in row-major order: a view of the
// array's storage for a whole array, and a new int64 copy with the view's coordinates for a
// view.
func (c *COO[T]) Indices() Indices {
	if c.win != nil {
		return c.Clone().Indices()
	}
	return c.st.coords
}

// Data returns the stored values, one per row of Indices: a view of the storage for a whole
// array, a copy for a view.
func (c *COO[T]) Data() []T {
	if c.win != nil {
		return c.Clone().Data()
	}
	return c.st.values
}

// Get returns the element at indices: the stored value (the last one for a duplicated
// coordinate) or zero, in O(1) expected time through an index of the stored coordinates that
// the first Get builds (O(NNZ) time and memory, once) and Set keeps up to date. It panics on a
// wrong number of indices or an index out of range.
func (c *COO[T]) Get(indices ...int64) T {
	if !inShape(indices, c.shape()) {
		badIndexPanic("COO.Get", indices, c.shape())
	}
	coord := c.toStore(indices)
	if p, ok := c.st.find(coord); ok {
		return c.st.values[p]
	}
	var zero T
	return zero
}

// Set stores v at indices — value first, as Dense.Set. A coordinate already stored is updated
// in place; a new one is appended, O(1) amortized, and the array stays canonical when it is
// beyond every stored coordinate in row-major order. Zero is stored like any other value. It
// panics on a wrong number of indices, an index out of range or a read-only array.
func (c *COO[T]) Set(v T, indices ...int64) {
	if c.readOnly {
		readOnlyPanic("COO.Set")
	}
	if !inShape(indices, c.shape()) {
		badIndexPanic("COO.Set", indices, c.shape())
	}
	c.st.set(v, c.toStore(indices))
}

// toStore returns the store coordinates of the view coordinates indices (indices itself for a
// whole array).
func (c *COO[T]) toStore(indices []int64) []int64 {
	if c.win == nil {
		return indices
	}
	coord := make([]int64, len(c.st.shape))
	c.win.toStore(indices, coord)
	return coord
}

// key returns the row-major position of entry i.
func (s *cooStore[T]) key(i int) int64 {
	rank := len(s.shape)
	k := int64(0)
	for d := range rank {
		k += s.coords.At(i*rank+d) * s.strides[d]
	}
	return k
}

// keyOf returns the row-major position of coord.
func (s *cooStore[T]) keyOf(coord []int64) int64 { return position(coord, s.strides) }

// position returns the position of coord in an array with the given strides.
func position(coord, strides []int64) int64 {
	k := int64(0)
	for d, x := range coord {
		k += x * strides[d]
	}
	return k
}

// sortedKeys reports whether the keys strictly increase.
func (s *cooStore[T]) sortedKeys() bool {
	if len(s.shape) == 0 {
		return len(s.values) <= 1
	}
	if s.coords.is64 {
		return rowsIncrease(s.coords.wide, len(s.shape))
	}
	return rowsIncrease(s.coords.narrow, len(s.shape))
}

// find returns the position of the last entry at coord, building the index if need be.
func (s *cooStore[T]) find(coord []int64) (int, bool) {
	k := s.keyOf(coord)
	if idx := s.index.Load(); idx != nil {
		p, ok := (*idx)[k]
		return p, ok
	}
	idx := s.buildIndex()
	p, ok := idx[k]
	return p, ok
}

// buildIndex builds the key index once and returns it.
func (s *cooStore[T]) buildIndex() map[int64]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx := s.index.Load(); idx != nil {
		return *idx
	}
	idx := make(map[int64]int, len(s.values))
	for i := range s.values {
		idx[s.key(i)] = i // later entries win
	}
	s.index.Store(&idx)
	return idx
}

// set stores v at coord.
func (s *cooStore[T]) set(v T, coord []int64) {
	k := s.keyOf(coord)
	n := len(s.values)
	idx := s.index.Load()
	switch {
	case idx != nil:
		if p, ok := (*idx)[k]; ok {
			s.values[p] = v
			return
		}
	case s.canonical && (n == 0 || k > s.key(n-1)):
		// In-order append to a canonical array: no index needed.
	case s.canonical:
		if p, ok := s.search(k); ok {
			s.values[p] = v
			return
		}
		m := s.buildIndex()
		idx = &m
	default:
		m := s.buildIndex()
		if p, ok := m[k]; ok {
			s.values[p] = v
			return
		}
		idx = &m
	}
	if n > 0 && s.canonical && k <= s.key(n-1) {
		s.canonical = false
	}
	for _, x := range coord {
		s.coords = s.coords.appendIndex(x)
	}
	s.values = append(s.values, v)
	if idx != nil {
		(*idx)[k] = n
	}
}

// search finds key k by binary search in a canonical store.
func (s *cooStore[T]) search(k int64) (int, bool) {
	lo, hi := 0, len(s.values)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.key(mid) < k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(s.values) && s.key(lo) == k
}

// Entries iterates over the stored entries in storage order, duplicates included, yielding
// each value's coordinates (in the view's dimensions for a view) and the value. The
// coordinates slice is reused: copy it to keep it past one iteration.
func (c *COO[T]) Entries() iter.Seq2[[]int64, T] {
	return func(yield func([]int64, T) bool) {
		s := c.st
		rank := len(s.shape)
		coord := make([]int64, rank)
		var out []int64
		if c.win != nil {
			out = make([]int64, len(c.win.shape))
		}
		for i, v := range s.values {
			for d := range rank {
				coord[d] = s.coords.At(i*rank + d)
			}
			if c.win == nil {
				if !yield(coord, v) {
					return
				}
				continue
			}
			if c.win.fromStore(coord, out) && !yield(out, v) {
				return
			}
		}
	}
}

// sorted returns c's entries as row-major keys over c's shape, sorted, the last entry of a
// duplicated coordinate kept.
func (c *COO[T]) sorted() entries[T] {
	shape := c.shape()
	if c.win == nil && c.st.canonical {
		keys := make([]int64, len(c.st.values))
		for i := range keys {
			keys[i] = c.st.key(i)
		}
		return entries[T]{shape: shape, keys: keys, values: c.st.values}
	}
	strides := rowMajorStrides(shape)
	var e entries[T]
	e.shape = shape
	for coord, v := range c.Entries() {
		k := position(coord, strides)
		e.keys = append(e.keys, k)
		e.values = append(e.values, v)
	}
	e.sort()
	return e
}

// Values iterates over all elements in row-major order, zeros included: Size values, however
// few are stored.
func (c *COO[T]) Values() iter.Seq[T] { return c.sorted().all() }

// ToDense returns a new row-major dense array with c's elements (see Tensor).
func (c *COO[T]) ToDense() (*ndarray.Dense[T], error) {
	d, err := denseArray[T](c, 0)
	if err != nil {
		return nil, err
	}
	return d.(*ndarray.Dense[T]), nil
}

// fill writes c's elements into out, a zeroed row-major array of c's shape.
func (c *COO[T]) fill(out *ndarray.Dense[T]) {
	data := out.Data()
	strides := rowMajorStrides(c.shape())
	for coord, v := range c.Entries() {
		k := position(coord, strides)
		data[k] = v // later duplicates win
	}
}

// Clone returns a new, writable, whole COO with the entries of c (of the view, for a view) in
// storage order, duplicates included.
func (c *COO[T]) Clone() *COO[T] {
	if c.win == nil {
		s := c.st
		return newCOO(s.shape.Clone(), s.coords.clone(0), slices.Clone(s.values), s.canonical)
	}
	shape := c.Shape()
	coords := makeIndices(coordinateType(shape), 0)
	var values []T
	for coord, v := range c.Entries() {
		for _, x := range coord {
			coords = coords.appendIndex(x)
		}
		values = append(values, v)
	}
	if values == nil {
		values = []T{}
	}
	out := newCOO(shape, coords, values, false)
	out.st.canonical = out.st.sortedKeys()
	return out
}

// ToCOO returns a new canonical COO with c's elements: Clone followed by Canonicalize.
func (c *COO[T]) ToCOO() *COO[T] {
	out := c.Clone()
	out.Canonicalize()
	return out
}

// Canonicalize sorts the stored entries into row-major order and removes duplicated
// coordinates, keeping the last entry of each (see the package documentation). Called on a
// view, it reorders the array the view shares — which changes no element of it or of any
// view. It panics on a read-only array.
func (c *COO[T]) Canonicalize() {
	if c.readOnly {
		readOnlyPanic("COO.Canonicalize")
	}
	s := c.st
	if s.canonical {
		return
	}
	e := (&COO[T]{st: s}).sorted()
	rank := len(s.shape)
	coords := makeIndices(s.coords.DType(), len(e.keys)*rank)
	coord := make([]int64, rank)
	for i, k := range e.keys {
		unravel(k, s.shape, coord)
		for d, x := range coord {
			coords.set(i*rank+d, x)
		}
	}
	s.coords, s.values, s.canonical = coords, e.values, true
	s.index.Store(nil)
}

// FromDense returns a canonical COO holding the non-zero elements of d, with int32 or int64
// coordinates as its shape needs.
func FromDense[T ndarray.Element](d *ndarray.Dense[T]) *COO[T] {
	shape := d.Shape()
	rank := len(shape)
	coords := makeIndices(coordinateType(shape), 0)
	values := []T{}
	coord := make([]int64, rank)
	var zero T
	for v := range d.Values() {
		if v != zero {
			for _, x := range coord {
				coords = coords.appendIndex(x)
			}
			values = append(values, v)
		}
		for ax := rank - 1; ax >= 0; ax-- { // advance coord in row-major order
			coord[ax]++
			if coord[ax] < shape[ax] {
				break
			}
			coord[ax] = 0
		}
	}
	return newCOO(shape, coords, values, true)
}

// unravel writes the coordinates of row-major position k of shape into coord.
func unravel(k int64, shape ndarray.Shape, coord []int64) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			coord[d] = k % shape[d]
			k /= shape[d]
		}
	}
}

// String formats c as its dense form would be, prefixed by its layout and NNZ.
func (c *COO[T]) String() string { return describe[T](c) }
