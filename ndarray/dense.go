package ndarray

import (
	"fmt"
	"unsafe"
)

// Dense is an n-dimensional array of T: a view of a backing slice through a Layout (shape,
// strides in elements, offset). Slicing, transposing and most reshapes make new views of the
// same backing; only methods and functions whose documentation says so copy.
//
// The zero value is an empty vector, of shape (0), as a nil slice is an empty slice: it prints
// as [], iterates over nothing, and Get and Set on it panic with the index and the shape.
//
// A Dense is not safe for concurrent writes; concurrent reads are safe.
type Dense[T Element] struct {
	data     []T
	layout   Layout
	readOnly bool
}

// New returns a zeroed row-major array of the given shape; no dimensions make a scalar.
// New panics on a negative dimension or a size that overflows an int.
func New[T Element](shape ...int64) *Dense[T] {
	s := Shape(shape)
	size, err := s.checkedSize()
	if err == nil && !s.IsKnown() {
		err = fmt.Errorf("ndarray: shape %v: dimension is unknown: %w", s, ErrShape)
	}
	if err != nil {
		panic(fmt.Sprintf("ndarray: New: %v", err))
	}
	return &Dense[T]{data: make([]T, size), layout: RowMajor(s)}
}

// FromSlice returns a row-major array of the given shape that wraps data without copying it:
// writes through either are seen by both. It fails with ErrShape when len(data) differs from
// the shape's size or the shape is invalid.
func FromSlice[T Element](data []T, shape ...int64) (*Dense[T], error) {
	s := Shape(shape)
	size, err := s.checkedSize()
	if err != nil {
		return nil, err
	}
	if !s.IsKnown() {
		return nil, fmt.Errorf("ndarray: FromSlice: shape %v has an unknown dimension: %w", s, ErrShape)
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("ndarray: FromSlice: %d values for shape %v of size %d: %w", len(data), s, size, ErrShape)
	}
	return &Dense[T]{data: data, layout: RowMajor(s)}, nil
}

// FromLayout returns an array that views data through layout without copying it, for data laid
// out in column-major order, with a stride or an offset. It fails with ErrShape or ErrLayout
// when the layout does not fit in data (see Layout.Validate).
func FromLayout[T Element](data []T, layout Layout) (*Dense[T], error) {
	if err := layout.Validate(int64(len(data))); err != nil {
		return nil, err
	}
	l := layout.Clone()
	if l.Size() == 0 {
		l.Offset = 0
	}
	return &Dense[T]{data: data, layout: l}, nil
}

// Scalar returns a rank-0 array holding v.
func Scalar[T Element](v T) *Dense[T] {
	return &Dense[T]{data: []T{v}, layout: Layout{Shape: Shape{}, Strides: []int64{}}}
}

// DType returns the array's element type.
func (d *Dense[T]) DType() DType { return DTypeOf[T]() }

// Shape returns a copy of the array's shape.
func (d *Dense[T]) Shape() Shape {
	d = d.orEmpty()
	return d.layout.Shape.Clone()
}

// Dim returns the size of dimension i. It panics when i is not in [0, Rank()).
func (d *Dense[T]) Dim(i int) int64 {
	d = d.orEmpty()
	if i < 0 || i >= len(d.layout.Shape) {
		panic(fmt.Sprintf("ndarray: Dim(%d) on an array of shape %v", i, d.layout.Shape))
	}
	return d.layout.Shape[i]
}

// Rank returns the number of dimensions.
func (d *Dense[T]) Rank() int {
	d = d.orEmpty()
	return len(d.layout.Shape)
}

// Size returns the number of elements.
func (d *Dense[T]) Size() int64 {
	d = d.orEmpty()
	return d.layout.Shape.Size()
}

// Layout returns a copy of the array's layout: shape, strides in elements, and offset into
// Data.
func (d *Dense[T]) Layout() Layout {
	d = d.orEmpty()
	return d.layout.Clone()
}

// Data returns the backing slice, shared with the array and with every view of it: the whole
// of it, not just this view's elements, which sit at the positions Layout gives, not
// necessarily in order (a view of 4 elements of a 12-element array returns 12). Ravel gives the
// elements in order, Contiguous the run a contiguous array occupies. Writes through it bypass
// the read-only flag.
func (d *Dense[T]) Data() []T {
	d = d.orEmpty()
	return d.data
}

// IsContiguous reports whether the elements fill a contiguous row-major run of Data.
func (d *Dense[T]) IsContiguous() bool {
	d = d.orEmpty()
	return d.layout.IsRowMajor()
}

// Get returns the element at indices, one per dimension; negative indices are not allowed.
// Get panics when the number of indices differs from the rank or an index is out of range.
func (d *Dense[T]) Get(indices ...int64) T {
	d = d.orEmpty()
	p, ok := d.layout.Position(indices...)
	if !ok {
		d.badIndex("Get", indices)
	}
	return d.data[p]
}

// Set stores v at indices, one per dimension: value first, then indices, as in the Tensor I/O
// RFC. Set panics when the array is read-only, the number of indices differs from the rank or
// an index is out of range.
func (d *Dense[T]) Set(v T, indices ...int64) {
	d = d.orEmpty()
	if d.readOnly {
		d.readOnlyPanic("Set")
	}
	p, ok := d.layout.Position(indices...)
	if !ok {
		d.badIndex("Set", indices)
	}
	d.data[p] = v
}

// badIndex panics with a message that names the method, the indices and the shape.
//
//go:noinline
func (d *Dense[T]) badIndex(method string, indices []int64) {
	idx := append([]int64(nil), indices...)
	if len(idx) != d.Rank() {
		panic(fmt.Sprintf("ndarray: %s with %d indices %v on an array of rank %d, shape %v",
			method, len(idx), idx, d.Rank(), d.layout.Shape))
	}
	panic(fmt.Sprintf("ndarray: %s index %v out of range for shape %v", method, idx, d.layout.Shape))
}

//go:noinline
func (d *Dense[T]) readOnlyPanic(method string) {
	panic(fmt.Sprintf("ndarray: %s on a read-only array of shape %v", method, d.layout.Shape))
}

// ReadOnly reports whether writes through this array panic.
func (d *Dense[T]) ReadOnly() bool { return d.readOnly }

// AsReadOnly returns a read-only view of the array: it shares memory, sees later writes made
// through d, and panics on Set, CopyFrom, ReadFrom or any other write. Views made from it are
// read-only too.
func (d *Dense[T]) AsReadOnly() *Dense[T] {
	d = d.orEmpty()
	return &Dense[T]{data: d.data, layout: d.layout.Clone(), readOnly: true}
}

// view returns an array over the same backing with layout l, read-only if d is.
func (d *Dense[T]) view(l Layout) *Dense[T] {
	if l.Size() == 0 {
		l.Offset = 0
	}
	return &Dense[T]{data: d.data, layout: l, readOnly: d.readOnly}
}

// SharesMemory reports whether d and o view overlapping parts of the same backing memory (the
// test NumPy calls np.may_share_memory: both backing ranges are compared, not the elements).
func (d *Dense[T]) SharesMemory(o *Dense[T]) bool {
	d = d.orEmpty()
	o = o.orEmpty()
	if len(d.data) == 0 || len(o.data) == 0 || d.Size() == 0 || o.Size() == 0 {
		return false
	}
	width := uintptr(sizeOf[T]())
	a := uintptr(unsafe.Pointer(unsafe.SliceData(d.data)))
	b := uintptr(unsafe.Pointer(unsafe.SliceData(o.data)))
	return a < b+uintptr(len(o.data))*width && b < a+uintptr(len(d.data))*width
}

// Slice returns the part of the array that indices select, one Index per dimension (missing
// trailing ones mean All; NewAxis adds a dimension; one Ellipsis stands for the dimensions not
// otherwise indexed). The result is a view sharing memory with d when every index selects an
// arithmetic progression (see Index), and a new row-major copy otherwise. A view of a
// read-only array is read-only; a copy never is. Slice fails with ErrIndex on a position out of
// range, too many indices, a second Ellipsis or a zero step.
func (d *Dense[T]) Slice(indices ...Index) (*Dense[T], error) {
	d = d.orEmpty()
	sels, err := selections(d.layout.Shape, indices)
	if err != nil {
		return nil, fmt.Errorf("ndarray: Slice %v of shape %v: %w", indices, d.layout.Shape, err)
	}
	l := Layout{Offset: d.layout.Offset}
	explicit := false
	for _, s := range sels {
		if s.explicit {
			explicit = true
			break
		}
	}
	if explicit {
		return d.gather(sels), nil
	}
	for _, s := range sels {
		switch {
		case s.axis < 0: // NewAxis
			l.Shape = append(l.Shape, 1)
			l.Strides = append(l.Strides, 0)
		case s.drop:
			l.Offset += s.start * d.layout.Strides[s.axis]
		default:
			stride := d.layout.Strides[s.axis]
			if s.count > 0 {
				l.Offset += s.start * stride
			}
			l.Shape = append(l.Shape, s.count)
			l.Strides = append(l.Strides, stride*s.step)
		}
	}
	if l.Shape == nil {
		l.Shape, l.Strides = Shape{}, []int64{}
	}
	return d.view(l), nil
}

// axisSelection is a selection bound to the source axis it reads (-1 for NewAxis).
type axisSelection struct {
	selection
	axis int
}

// selections expands Ellipsis and missing trailing indices and resolves every index against
// its dimension of shape.
func selections(shape Shape, indices []Index) ([]axisSelection, error) {
	consuming, ellipses := 0, 0
	for _, x := range indices {
		switch x.kind {
		case kindNewAxis:
		case kindEllipsis:
			ellipses++
		case 0:
			return nil, fmt.Errorf("zero Index: %w", ErrIndex)
		default:
			consuming++
		}
	}
	rank := len(shape)
	if ellipses > 1 {
		return nil, fmt.Errorf("%d ellipses, at most one allowed: %w", ellipses, ErrIndex)
	}
	if consuming > rank {
		return nil, fmt.Errorf("%d indices for rank %d: %w", consuming, rank, ErrIndex)
	}
	sels := make([]axisSelection, 0, len(indices)+rank-consuming)
	axis := 0
	all := func(n int) {
		for ; n > 0; n-- {
			s, _ := All().resolve(shape[axis])
			sels = append(sels, axisSelection{s, axis})
			axis++
		}
	}
	for _, x := range indices {
		switch x.kind {
		case kindNewAxis:
			sels = append(sels, axisSelection{selection{count: 1}, -1})
		case kindEllipsis:
			all(rank - consuming)
		default:
			s, err := x.resolve(shape[axis])
			if err != nil {
				return nil, fmt.Errorf("dimension %d: %w", axis, err)
			}
			sels = append(sels, axisSelection{s, axis})
			axis++
		}
	}
	all(rank - axis)
	return sels, nil
}

// gather copies the elements that sels select into a new row-major array.
func (d *Dense[T]) gather(sels []axisSelection) *Dense[T] {
	var shape Shape
	base := d.layout.Offset
	for _, s := range sels {
		switch {
		case s.axis < 0:
			shape = append(shape, 1)
		case s.drop:
			base += s.start * d.layout.Strides[s.axis]
		case s.explicit:
			shape = append(shape, s.dims...)
		default:
			shape = append(shape, s.count)
		}
	}
	out := New[T](shape...)
	k := 0
	var walk func(i int, pos int64)
	walk = func(i int, pos int64) {
		for i < len(sels) && (sels[i].axis < 0 || sels[i].drop) {
			i++
		}
		if i == len(sels) {
			out.data[k] = d.data[pos]
			k++
			return
		}
		s := sels[i]
		stride := d.layout.Strides[s.axis]
		if s.explicit {
			for _, p := range s.list {
				walk(i+1, pos+p*stride)
			}
			return
		}
		for j := int64(0); j < s.count; j++ {
			walk(i+1, pos+(s.start+j*s.step)*stride)
		}
	}
	if out.Size() > 0 {
		walk(0, base)
	}
	return out
}

// Must returns d and panics if err is not nil. It is for initializations with known-good
// arguments, such as Must(FromSlice([]float32{1, 2, 3, 4}, 2, 2)), like template.Must.
func Must[T Element](d *Dense[T], err error) *Dense[T] {
	if err != nil {
		panic(err)
	}
	return d
}

// orEmpty returns d, or, for the zero Dense, which has neither data nor a shape, an empty
// vector: the zero value is an array of shape (0), as a nil slice is an empty slice.
func (d *Dense[T]) orEmpty() *Dense[T] {
	if d.layout.Shape == nil && d.data == nil {
		return &Dense[T]{layout: Layout{Shape: Shape{0}, Strides: []int64{1}}, readOnly: d.readOnly}
	}
	return d
}
