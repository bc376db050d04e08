package ndarray

import "fmt"

// CopyFrom copies src into the array in row-major order, whatever its layout. It fails with
// ErrShape, writing nothing, when len(src) differs from Size, and panics when the array is
// read-only.
func (d *Dense[T]) CopyFrom(src []T) error {
	d = d.orEmpty()
	if d.readOnly {
		d.readOnlyPanic("CopyFrom")
	}
	if int64(len(src)) != d.Size() {
		return fmt.Errorf("ndarray: CopyFrom: %d values into shape %v of size %d: %w", len(src), d.layout.Shape, d.Size(), ErrShape)
	}
	k := int64(0)
	d.layout.lines(func(start, stride, n int64) bool {
		if stride == 1 {
			copy(d.data[start:start+n], src[k:k+n])
		} else {
			for p, v := range src[k : k+n] {
				d.data[start+int64(p)*stride] = v
			}
		}
		k += n
		return true
	})
	return nil
}

// CopyTo copies the elements into dst in row-major order. It fails with ErrShape, writing
// nothing, when len(dst) differs from Size.
func (d *Dense[T]) CopyTo(dst []T) error {
	d = d.orEmpty()
	if int64(len(dst)) != d.Size() {
		return fmt.Errorf("ndarray: CopyTo: %d slots for shape %v of size %d: %w", len(dst), d.layout.Shape, d.Size(), ErrShape)
	}
	k := int64(0)
	d.layout.lines(func(start, stride, n int64) bool {
		if stride == 1 {
			copy(dst[k:k+n], d.data[start:start+n])
		} else {
			for p := range dst[k : k+n] {
				dst[k+int64(p)] = d.data[start+int64(p)*stride]
			}
		}
		k += n
		return true
	})
	return nil
}

// Copy copies the elements of src into dst, which must have the same shape; the layouts may
// differ. Overlapping arrays are handled as if src were copied first. Copy fails with ErrShape
// when the shapes differ and panics when dst is read-only.
func Copy[T Element](dst, src *Dense[T]) error {
	dst, src = dst.orEmpty(), src.orEmpty()
	if dst.readOnly {
		dst.readOnlyPanic("Copy")
	}
	if !dst.layout.Shape.Equal(src.layout.Shape) {
		return fmt.Errorf("ndarray: Copy: shape %v into shape %v: %w", src.layout.Shape, dst.layout.Shape, ErrShape)
	}
	switch {
	case dst.SharesMemory(src):
		src = src.Clone()
		fallthrough
	case src.layout.IsRowMajor():
		return dst.CopyFrom(src.contiguous())
	case dst.layout.IsRowMajor():
		return src.CopyTo(dst.contiguous())
	}
	pairs(dst.layout, src.layout, func(pd, ps int64) bool {
		dst.data[pd] = src.data[ps]
		return true
	})
	return nil
}

// contiguous returns the elements of a row-major array as one slice of the backing.
func (d *Dense[T]) contiguous() []T {
	if d.Size() == 0 {
		return nil
	}
	return d.data[d.layout.Offset : d.layout.Offset+d.Size()]
}

// Contiguous returns the elements of a contiguous array — row-major or column-major, see
// Layout.IsContiguous — as the one run of the backing slice they occupy, in storage order: a
// view (writes go through to d, even when d is read-only), not a copy. It returns nil and false
// when d is not contiguous; Ravel always gives the elements.
func (d *Dense[T]) Contiguous() ([]T, bool) {
	d = d.orEmpty()
	if !d.layout.IsContiguous() {
		return nil, false
	}
	return d.contiguous(), true
}

// Ravel returns the elements in row-major order as one slice of Size elements: a view of the
// backing slice when d is row-major contiguous (writes go through to d), otherwise a new
// row-major copy — NumPy's ravel. Unlike Data, which returns the whole backing slice, its
// length is always d.Size(); hand it to code that wants the values, gonum's included.
func (d *Dense[T]) Ravel() []T {
	d = d.orEmpty()
	if d.layout.IsRowMajor() {
		if v := d.contiguous(); v != nil {
			return v
		}
		return []T{}
	}
	return d.Clone().data
}

// Clone returns a row-major copy of the array that shares no memory with it. The copy is
// writable even when d is read-only.
func (d *Dense[T]) Clone() *Dense[T] {
	d = d.orEmpty()
	out := New[T](d.layout.Shape...)
	_ = d.CopyTo(out.data) // sizes match by construction
	return out
}

// Equal reports whether d and o have the same shape and equal elements (compared with ==, so a
// NaN is never equal), whatever their layouts.
func (d *Dense[T]) Equal(o *Dense[T]) bool {
	d = d.orEmpty()
	o = o.orEmpty()
	if !d.layout.Shape.Equal(o.layout.Shape) {
		return false
	}
	equal := true
	pairs(d.layout, o.layout, func(pd, po int64) bool {
		equal = d.data[pd] == o.data[po]
		return equal
	})
	return equal
}
