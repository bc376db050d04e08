package ndarray

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// The stream format of WriteTo and ReadFrom is the elements in row-major order with no header:
// fixed-width types as their little-endian bytes (bool one byte, 0 or 1; float16 its two IEEE
// 754 half-precision bytes), and each string as a 4-byte little-endian length followed by that
// many bytes. The shape travels separately: ReadFrom fills an array whose shape is known.

// ioChunk is the size of the staging buffer for strided, big-endian and string streams.
const ioChunk = 32 << 10

// hostLittleEndian reports whether the machine stores integers little-endian, in which case
// contiguous numeric data goes to and from streams without conversion.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// WriteTo writes the elements to w in the stream format above and returns the number of bytes
// written. A contiguous numeric array on a little-endian machine is written straight from its
// memory, with no copy.
func (d *Dense[T]) WriteTo(w io.Writer) (int64, error) {
	d = d.orEmpty()
	if DTypeOf[T]() == String {
		return d.writeStrings(w)
	}
	width := int64(sizeOf[T]())
	var total int64
	var err error
	write := func(b []byte) bool {
		if len(b) == 0 {
			return true
		}
		var n int
		n, err = w.Write(b)
		total += int64(n)
		return err == nil
	}
	var buf []byte // staging, allocated when a strided or short run needs it
	flush := func() bool {
		ok := write(buf)
		buf = buf[:0]
		return ok
	}
	stage := func(more int) bool {
		if buf == nil {
			buf = make([]byte, 0, min(d.Size()*width, ioChunk))
		}
		return len(buf)+more <= ioChunk || flush()
	}
	d.layout.lines(func(start, stride, n int64) bool {
		if stride == 1 && hostLittleEndian {
			raw := asBytes(d.data[start : start+n])
			if len(raw) >= ioChunk {
				return flush() && write(raw)
			}
			if !stage(len(raw)) {
				return false
			}
			buf = append(buf, raw...)
			return true
		}
		for i, p := int64(0), start; i < n; i, p = i+1, p+stride {
			if !stage(int(width)) {
				return false
			}
			buf = appendLE(buf, &d.data[p])
		}
		return true
	})
	if err == nil {
		flush()
	}
	if err != nil {
		return total, fmt.Errorf("ndarray: WriteTo: %w", err)
	}
	return total, nil
}

func (d *Dense[T]) writeStrings(w io.Writer) (int64, error) {
	buf := make([]byte, 0, ioChunk)
	var total int64
	for v := range d.Values() {
		s := any(v).(string)
		if uint64(len(s)) > math.MaxUint32 {
			return total, fmt.Errorf("ndarray: WriteTo: string of %d bytes exceeds the 4 GiB limit: %w", len(s), ErrShape)
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
		if len(buf)+len(s) > ioChunk {
			n, err := w.Write(buf)
			total += int64(n)
			if err != nil {
				return total, fmt.Errorf("ndarray: WriteTo: %w", err)
			}
			buf = buf[:0]
			if len(s) > ioChunk {
				n, err := io.WriteString(w, s)
				total += int64(n)
				if err != nil {
					return total, fmt.Errorf("ndarray: WriteTo: %w", err)
				}
				continue
			}
		}
		buf = append(buf, s...)
	}
	n, err := w.Write(buf)
	total += int64(n)
	if err != nil {
		return total, fmt.Errorf("ndarray: WriteTo: %w", err)
	}
	return total, nil
}

// ReadFrom reads exactly Size elements in the stream format above from r into the array, in
// row-major order, and returns the number of bytes read. Unlike most io.ReaderFrom
// implementations it stops after the last element rather than at EOF. A stream that ends early
// fails with io.ErrUnexpectedEOF, a bool byte other than 0 or 1 with ErrDType; the elements
// before the failure have been overwritten. Memory use is bounded by the data actually read: a
// string length in the stream is never allocated before its bytes arrive. ReadFrom panics when
// the array is read-only.
func (d *Dense[T]) ReadFrom(r io.Reader) (int64, error) {
	d = d.orEmpty()
	if d.readOnly {
		d.readOnlyPanic("ReadFrom")
	}
	read := d.readFixed
	if DTypeOf[T]() == String {
		read = d.readStrings
	}
	total, err := read(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return total, fmt.Errorf("ndarray: ReadFrom: shape %v: %w", d.layout.Shape, err)
	}
	return total, nil
}

// readFixed reads the elements of a fixed-width type for ReadFrom.
func (d *Dense[T]) readFixed(r io.Reader) (int64, error) {
	width := int64(sizeOf[T]())
	isBool := DTypeOf[T]() == Bool
	var total, elem int64
	var err error
	var buf []byte // staging for strided, bool and big-endian reads, allocated when needed
	d.layout.lines(func(start, stride, n int64) bool {
		if stride == 1 && hostLittleEndian && !isBool {
			var got int
			got, err = io.ReadFull(r, asBytes(d.data[start:start+n]))
			total += int64(got)
			elem += int64(got) / width
			return err == nil
		}
		if buf == nil {
			buf = make([]byte, min(d.Size()*width, ioChunk))
		}
		for n > 0 {
			k := min(n, ioChunk/width)
			buf = buf[:k*width]
			var got int
			got, err = io.ReadFull(r, buf)
			total += int64(got)
			if err != nil {
				elem += int64(got) / width
				return false
			}
			for i := range k {
				if err = decodeLE(&d.data[start+i*stride], buf[i*width:]); err != nil {
					err = fmt.Errorf("element %d: %w", elem+i, err)
					return false
				}
			}
			elem += k
			start += k * stride
			n -= k
		}
		return true
	})
	return total, err
}

// readStrings reads length-prefixed strings for ReadFrom.
func (d *Dense[T]) readStrings(r io.Reader) (int64, error) {
	var total, elem int64
	var err error
	var head [4]byte
	d.layout.lines(func(start, stride, n int64) bool {
		for i, p := int64(0), start; i < n; i, p = i+1, p+stride {
			var got int
			got, err = io.ReadFull(r, head[:])
			total += int64(got)
			if err != nil {
				return false
			}
			size := int64(binary.LittleEndian.Uint32(head[:]))
			var s []byte
			s, err = readAtMost(r, size)
			total += int64(len(s))
			if err != nil {
				err = fmt.Errorf("string element %d of %d bytes: %w", elem, size, err)
				return false
			}
			*any(&d.data[p]).(*string) = string(s)
			elem++
		}
		return true
	})
	return total, err
}

// readAtMost reads exactly n bytes, growing its buffer only as data arrives, so a corrupt
// length cannot make it allocate more than twice what the stream holds.
func readAtMost(r io.Reader, n int64) ([]byte, error) {
	if n <= ioChunk {
		b := make([]byte, n)
		got, err := io.ReadFull(r, b)
		return b[:got], err
	}
	var b []byte
	for int64(len(b)) < n {
		k := min(n-int64(len(b)), max(int64(len(b)), ioChunk))
		b = append(b, make([]byte, k)...)
		got, err := io.ReadFull(r, b[int64(len(b))-k:])
		if err != nil {
			return b[:int64(len(b))-k+int64(got)], err
		}
	}
	return b, nil
}

// asBytes returns the memory of a fixed-width slice as bytes, without copying.
func asBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*sizeOf[T]())
}

// appendLE appends the little-endian bytes of the fixed-width value *v.
func appendLE[T Element](buf []byte, v *T) []byte {
	raw := unsafe.Slice((*byte)(unsafe.Pointer(v)), sizeOf[T]())
	if hostLittleEndian {
		return append(buf, raw...)
	}
	for i := len(raw) - 1; i >= 0; i-- {
		buf = append(buf, raw[i])
	}
	return buf
}

// decodeLE stores the little-endian value at the start of b into *v. A bool byte must be 0
// or 1: any other value is not a Go bool and fails with ErrDType.
func decodeLE[T Element](v *T, b []byte) error {
	width := sizeOf[T]()
	raw := unsafe.Slice((*byte)(unsafe.Pointer(v)), width)
	if p, ok := any(v).(*bool); ok {
		if b[0] > 1 {
			return fmt.Errorf("bool byte %d is neither 0 nor 1: %w", b[0], ErrDType)
		}
		*p = b[0] == 1
		return nil
	}
	if hostLittleEndian {
		copy(raw, b[:width])
		return nil
	}
	for i := range width {
		raw[i] = b[width-1-i]
	}
	return nil
}
