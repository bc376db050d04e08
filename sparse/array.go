package sparse

import (
	"fmt"
	"io"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Array is the part of the sparse arrays' API that needs no type parameter, for code that
// handles arrays whose element type is known only at run time, such as readers of files. A
// type switch on *COO[T], *CSR[T], *CSC[T] or *CSF[T] recovers the typed array.
type Array interface {
	Format() Format
	DType() ndarray.DType
	Shape() ndarray.Shape
	Rank() int
	Size() int64
	NNZ() int64
	ReadOnly() bool
	String() string
	// DenseArray returns a new row-major dense array with the same elements behind the
	// type-free ndarray.Array interface, or an error wrapping ErrTooLarge when it would hold
	// more than max elements (max ≤ 0: the default; see CheckDense).
	DenseArray(max int64) (ndarray.Array, error)
	// WriteTo writes the elements, zeros included, in dense row-major order in the stream
	// format of ndarray.Dense.WriteTo (for numbers, little-endian values back to back),
	// without building the dense array. It returns the number of bytes written.
	WriteTo(w io.Writer) (int64, error)
	// Convert returns a copy in format f (a CSF with its levels in row-major order). It fails
	// with ErrInvalid for CSR or CSC when the rank is not 2, and for CSF when it is 0.
	Convert(f Format) (Array, error)
}

var (
	_ Array = (*COO[float32])(nil)
	_ Array = (*CSR[float32])(nil)
	_ Array = (*CSC[float32])(nil)
	_ Array = (*CSF[float32])(nil)
)

// DenseArray returns c's dense form, within max elements (see Array).
func (c *COO[T]) DenseArray(max int64) (ndarray.Array, error) { return denseArray(c, max) }

// DenseArray returns m's dense form, within max elements (see Array).
func (m *compressed[T]) DenseArray(max int64) (ndarray.Array, error) { return denseArray(m, max) }

// DenseArray returns f's dense form, within max elements (see Array).
func (f *CSF[T]) DenseArray(max int64) (ndarray.Array, error) { return denseArray(f, max) }

// denseArray checks the limit and fills a dense array.
func denseArray[T ndarray.Element](t interface {
	Shape() ndarray.Shape
	fill(*ndarray.Dense[T])
}, max int64) (ndarray.Array, error) {
	if err := CheckDense(t.Shape(), max); err != nil {
		return nil, err
	}
	out := ndarray.New[T](t.Shape()...)
	t.fill(out)
	return out, nil
}

// Convert returns a copy of c in format f.
func (c *COO[T]) Convert(f Format) (Array, error) { return Convert[T](c, f) }

// Convert returns a copy of m in format f.
func (m *CSR[T]) Convert(f Format) (Array, error) { return Convert[T](m, f) }

// Convert returns a copy of m in format f.
func (m *CSC[T]) Convert(f Format) (Array, error) { return Convert[T](m, f) }

// Convert returns a copy of t in format f.
func (t *CSF[T]) Convert(f Format) (Array, error) { return Convert[T](t, f) }

// Convert returns a copy of t in format f: a canonical COO, a CSR or CSC matrix, or a CSF
// with its levels in row-major order. It fails with an error wrapping ErrInvalid for CSR or
// CSC when the rank is not 2, for CSF when the rank is 0, and for an unknown format.
func Convert[T ndarray.Element](t Tensor[T], f Format) (Tensor[T], error) {
	coo := t.ToCOO()
	switch f {
	case FormatCOO:
		return coo, nil
	case FormatCSR:
		return coo.ToCSR()
	case FormatCSC:
		return coo.ToCSC()
	case FormatCSF:
		return coo.ToCSF()
	}
	return nil, fmt.Errorf("sparse: Convert to %v: %w", f, ErrInvalid)
}

// FromDenseAs returns the non-zero elements of d in format f (see Convert).
func FromDenseAs[T ndarray.Element](d *ndarray.Dense[T], f Format) (Tensor[T], error) {
	if f == FormatCSR {
		return CSRFromDense(d)
	}
	return Convert[T](FromDense(d), f)
}

// WriteTo writes c's elements in dense row-major order (see Array).
func (c *COO[T]) WriteTo(w io.Writer) (int64, error) { return writeValues[T](w, c) }

// WriteTo writes m's elements in dense row-major order (see Array).
func (m *compressed[T]) WriteTo(w io.Writer) (int64, error) { return writeValues[T](w, m) }

// WriteTo writes f's elements in dense row-major order (see Array).
func (f *CSF[T]) WriteTo(w io.Writer) (int64, error) { return writeValues[T](w, f) }

// writeValues writes the elements of a in row-major order through ndarray.Dense.WriteTo, a
// chunk at a time.
func writeValues[T ndarray.Element](w io.Writer, a interface{ sorted() entries[T] }) (int64, error) {
	const chunk = 8192
	buf := make([]T, 0, chunk)
	total := int64(0)
	flush := func() error {
		d, _ := ndarray.FromSlice(buf, int64(len(buf)))
		n, err := d.WriteTo(w)
		total += n
		buf = buf[:0]
		return err
	}
	for v := range a.sorted().all() {
		buf = append(buf, v)
		if len(buf) == chunk {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if len(buf) > 0 {
		if err := flush(); err != nil {
			return total, err
		}
	}
	return total, nil
}
