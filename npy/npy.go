// Package npy reads and writes NumPy's .npy files (format versions 1.0, 2.0 and 3.0), the
// format of numpy.save and numpy.load, and .npz archives of them, the format of numpy.savez
// and numpy.savez_compressed (ReadNpz, OpenNpz, NpzWriter).
//
// Reading from a []byte or a memory-mapped file does not copy little-endian data: the array's
// values are a view of the file. C-order files become row-major arrays and Fortran-order
// files column-major ones, both without copying; big-endian data is converted (a copy).
// Object arrays, which NumPy stores pickled, are refused with ErrUnsupported and never
// unpickled. Every header is parsed strictly and every size checked against the input and
// against Limits before anything is allocated.
//
// Writing produces what numpy.save writes, byte for byte: format 1.0 (2.0 for headers too long
// for it), a header padded with spaces so that the data starts on a 64-byte boundary (which
// also makes the files friendly to memory mapping), then the values.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Sentinel errors; every error from this package wraps one of them (or io.ErrUnexpectedEOF
// for a truncated file).
var (
	// ErrInvalid reports a file that is not a well-formed .npy file: a bad magic string or
	// version, a header that is not the dictionary NumPy writes, or a data size that does not
	// match the shape. It wraps arrow.ErrInvalid.
	ErrInvalid = sentinel.New("invalid .npy file", arrow.ErrInvalid)
	// ErrUnsupported reports a well-formed file of a type ndarrow does not read: object
	// (pickled) arrays, complex numbers, structured types.
	ErrUnsupported = errors.New("unsupported .npy file")
	// ErrLimit reports a file that exceeds one of the reader's Limits. It wraps
	// limits.ErrExceeded.
	ErrLimit = sentinel.New(".npy file exceeds a limit", limits.ErrExceeded)
)

// Limits bound what a reader accepts: MaxMetadataSize bounds the header dictionary (NumPy's
// own reader stops at 10,000 bytes), MaxRank the dimensions, MaxElements the elements. A zero
// field takes its default (see package limits).
type Limits = limits.Limits

const (
	magic     = "\x93NUMPY"
	alignment = 64
)

// Array is the content of a .npy file: its element type, shape, order and the bytes of its
// values, little-endian.
type Array struct {
	dtype   ndarray.DType
	item    int  // bytes of one element
	text    byte // of a string array: 'S' (bytes) or 'U' (text)
	shape   ndarray.Shape
	fortran bool
	data    []byte
	copied  bool
	owner   *mmap.Mapping
}

// DType returns the element type.
func (a *Array) DType() ndarray.DType { return a.dtype }

// Shape returns a copy of the shape.
func (a *Array) Shape() ndarray.Shape { return a.shape.Clone() }

// FortranOrder reports whether the values are stored in column-major order.
func (a *Array) FortranOrder() bool { return a.fortran }

// Data returns the values' bytes, little-endian, in the file's order: a view of the input
// unless the file was big-endian or read from an io.Reader.
func (a *Array) Data() []byte { return a.data }

// Layout returns the layout of the values in elements: row-major, or column-major for a
// Fortran-order file.
func (a *Array) Layout() ndarray.Layout {
	if a.fortran {
		return ndarray.ColumnMajor(a.shape)
	}
	return ndarray.RowMajor(a.shape)
}

// Release drops the array's reference to a memory-mapped file; see Open. It does nothing for
// arrays read otherwise.
func (a *Array) Release() {
	if a.owner != nil {
		a.owner.Release()
	}
}

// AsDense returns the numeric array as a Dense[T] in the file's order (a Fortran-order file
// gives a column-major view). It views the values without copying when they are
// little-endian in the input and aligned for T, returning a read-only array; otherwise it
// returns a writable copy. T must be the array's element type; see AsBool for bool arrays.
func AsDense[T ndarray.Numeric](a *Array) (*ndarray.Dense[T], error) {
	if want := ndarray.DTypeOf[T](); want != a.dtype {
		return nil, fmt.Errorf("npy: array of %v read as %v: %w", a.dtype, want, ndarray.ErrDType)
	}
	values, viewed := ndarray.ViewBytes[T](a.data)
	return wrap(a, values, viewed)
}

// AsBool returns a bool array as a Dense[bool], a read-only view of the values when they come
// from a []byte or a mapped file. It fails with ErrInvalid when a byte is neither 0 nor 1,
// which NumPy never writes and Go's bool cannot hold.
func AsBool(a *Array) (*ndarray.Dense[bool], error) {
	if a.dtype != ndarray.Bool {
		return nil, fmt.Errorf("npy: array of %v read as bool: %w", a.dtype, ndarray.ErrDType)
	}
	for i, b := range a.data {
		if b > 1 {
			return nil, fmt.Errorf("npy: bool element %d is byte %d, neither 0 nor 1: %w", i, b, ErrInvalid)
		}
	}
	var values []bool
	if len(a.data) > 0 {
		values = unsafe.Slice((*bool)(unsafe.Pointer(unsafe.SliceData(a.data))), len(a.data))
	}
	return wrap(a, values, true)
}

// wrap puts values in the array's layout, read-only when they view the input.
func wrap[T ndarray.Element](a *Array, values []T, viewed bool) (*ndarray.Dense[T], error) {
	d, err := ndarray.FromLayout(values, a.Layout())
	if err != nil {
		return nil, fmt.Errorf("npy: %w: %w", ErrInvalid, err)
	}
	if viewed && !a.copied {
		d = d.AsReadOnly()
	}
	return d, nil
}

// Dense returns the array as a Dense of its element type (AsBool for bool, AsDense
// otherwise) behind the type-free ndarray.Array interface; a type switch recovers the
// *ndarray.Dense[T].
func (a *Array) Dense() (ndarray.Array, error) {
	switch a.dtype {
	case ndarray.Bool:
		return AsBool(a)
	case ndarray.Int8:
		return AsDense[int8](a)
	case ndarray.Int16:
		return AsDense[int16](a)
	case ndarray.Int32:
		return AsDense[int32](a)
	case ndarray.Int64:
		return AsDense[int64](a)
	case ndarray.Uint8:
		return AsDense[uint8](a)
	case ndarray.Uint16:
		return AsDense[uint16](a)
	case ndarray.Uint32:
		return AsDense[uint32](a)
	case ndarray.Uint64:
		return AsDense[uint64](a)
	case ndarray.Float16:
		return AsDense[float16.Num](a)
	case ndarray.Float32:
		return AsDense[float32](a)
	case ndarray.Float64:
		return AsDense[float64](a)
	case ndarray.String:
		return AsStrings(a)
	}
	return nil, fmt.Errorf("npy: %v: %w", a.dtype, ErrUnsupported)
}

// WriteValues writes the values to w in row-major order, little-endian (bool one byte each),
// whatever the file's order, and returns the number of bytes written.
func (a *Array) WriteValues(w io.Writer) (int64, error) {
	d, err := a.Dense()
	if err != nil {
		return 0, err
	}
	return d.WriteTo(w)
}

// header is the parsed header dictionary.
type header struct {
	descr   string
	fortran bool
	shape   ndarray.Shape
}

// descrs maps NumPy type strings (without the byte-order character) onto element types.
var descrs = map[string]ndarray.DType{
	"b1": ndarray.Bool, "?": ndarray.Bool,
	"i1": ndarray.Int8, "i2": ndarray.Int16, "i4": ndarray.Int32, "i8": ndarray.Int64,
	"u1": ndarray.Uint8, "u2": ndarray.Uint16, "u4": ndarray.Uint32, "u8": ndarray.Uint64,
	"f2": ndarray.Float16, "f4": ndarray.Float32, "f8": ndarray.Float64,
	"b": ndarray.Int8, "B": ndarray.Uint8,
}

// descrOf returns the NumPy type string numpy.save writes for d.
func descrOf(d ndarray.DType) string {
	switch {
	case d == ndarray.Bool:
		return "|b1"
	case d.Size() == 1 && d.IsInteger() && d.IsSigned():
		return "|i1"
	case d.Size() == 1:
		return "|u1"
	case d.IsFloat():
		return "<f" + strconv.Itoa(d.Size())
	case d.IsSigned():
		return "<i" + strconv.Itoa(d.Size())
	default:
		return "<u" + strconv.Itoa(d.Size())
	}
}

// elem is the element type of a file: ndarray's, its bytes, and for strings their kind: 'S'
// (bytes, NUL-padded) or 'U' (text in UCS-4, zero-padded); 0 for numbers and bools.
type elem struct {
	dtype ndarray.DType
	size  int
	text  byte
}

// maxStringWidth bounds the bytes of one string element (|S or <U): NumPy's own limit is the
// int32 itemsize, far beyond any array a reader should take.
const maxStringWidth = 1 << 20

// parseDescr returns the element type of a type string and whether its data is big-endian.
func parseDescr(descr string) (elem, bool, error) {
	order, typ := byte('|'), descr
	if len(descr) > 0 && strings.IndexByte("<>|=", descr[0]) >= 0 {
		order, typ = descr[0], descr[1:]
	}
	if strings.HasPrefix(typ, "O") {
		return elem{}, false, fmt.Errorf("npy: descr %q: object arrays are stored pickled and are never unpickled: %w", descr, ErrUnsupported)
	}
	big := order == '>' || (order == '=' && !hostLittleEndian)
	if len(typ) > 1 && (typ[0] == 'S' || typ[0] == 'U' || typ[0] == 'a') {
		n, err := strconv.Atoi(typ[1:])
		width := map[byte]int{'S': 1, 'a': 1, 'U': 4}[typ[0]]
		if err != nil || n < 1 || n > maxStringWidth/width || typ[1] == '+' {
			return elem{}, false, fmt.Errorf("npy: descr %q: strings of 1 to %d bytes: %w", descr, maxStringWidth, ErrUnsupported)
		}
		kind := map[byte]byte{'S': 'S', 'a': 'S', 'U': 'U'}[typ[0]]
		return elem{dtype: ndarray.String, size: n * width, text: kind}, big && kind == 'U', nil
	}
	d, ok := descrs[typ]
	if !ok {
		return elem{}, false, fmt.Errorf("npy: descr %q: %w", descr, ErrUnsupported)
	}
	return elem{dtype: d, size: d.Size()}, big && d.Size() > 1, nil
}

// swapWidth is the unit whose bytes a big-endian element swaps: 4 for UCS-4 text.
func (e elem) swapWidth() int {
	if e.text == 'U' {
		return 4
	}
	return e.size
}

// readMapped reads the bytes of m, the file at path, with read under mmap.Guard. A file that
// shrank while it was read is an error naming it (format: it); any other error says the path
// after the reason.
func readMapped[T any](m *mmap.Mapping, path, format string, read func([]byte) (T, error)) (T, error) {
	var out T
	err := mmap.Guard(func() error { // the file may shrink under the mapping
		var err error
		out, err = read(m.Bytes())
		return err
	})
	var fault *mmap.FaultError
	switch {
	case errors.As(err, &fault):
		return out, fmt.Errorf("%s: %w", format, err)
	case err != nil:
		return out, fmt.Errorf("%w (file %s)", err, path)
	}
	return out, nil
}

// Open memory-maps the .npy file at path (where the platform can; elsewhere it reads it
// whole) and returns its array, whose values view the mapping. The mapping lives until the
// array is released. A file that shrinks while it is read is an error naming it that wraps
// dataset.ErrFileChanged; read the array's values inside dataset.Guard.
func Open(path string, lim Limits) (*Array, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	a, err := readMapped(m, path, "npy", func(b []byte) (*Array, error) { return ReadBytes(b, lim) })
	if err != nil {
		m.Release()
		return nil, err
	}
	a.owner = m
	return a, nil
}

// IsBytes reports whether a string array holds bytes (NumPy's |S) rather than text (<U).
func (a *Array) IsBytes() bool { return a.text == 'S' }

// AsStrings returns a string array — NumPy's bytes (|S<n>: each value its bytes up to the
// trailing NULs NumPy pads with) or text (<U<n>: UCS-4 code points up to the trailing zeros,
// as UTF-8) — as a new Dense[string] in the file's order. A code point that is not one (a
// surrogate, above U+10FFFF) fails with ErrInvalid.
func AsStrings(a *Array) (*ndarray.Dense[string], error) {
	if a.dtype != ndarray.String {
		return nil, fmt.Errorf("npy: array of %v read as strings: %w", a.dtype, ndarray.ErrDType)
	}
	n := a.shape.Size()
	values := make([]string, n)
	for i := range values {
		b := a.data[int64(i)*int64(a.item) : int64(i+1)*int64(a.item)]
		if a.text == 'S' {
			values[i] = string(bytes.TrimRight(b, "\x00"))
			continue
		}
		var sb strings.Builder
		for k := 0; k+4 <= len(b); k += 4 {
			r := rune(binary.LittleEndian.Uint32(b[k:]))
			if r == 0 {
				if len(bytes.Trim(b[k:], "\x00")) != 0 { // a NUL inside the text
					sb.WriteRune(0)
					continue
				}
				break
			}
			if !utf8.ValidRune(r) {
				return nil, fmt.Errorf("npy: element %d: code point %#x: %w", i, uint32(r), ErrInvalid)
			}
			sb.WriteRune(r)
		}
		values[i] = sb.String()
	}
	return ndarray.FromLayout(values, a.Layout())
}
