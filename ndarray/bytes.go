package ndarray

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// ViewBytes returns the little-endian numeric values in b as a []T of len(b)/width elements
// (trailing bytes are ignored). On a little-endian machine, when b is aligned for T, the
// result is a view of b's memory and the bool is true; otherwise it is a converted copy and
// the bool is false. A view must not outlive b's memory.
func ViewBytes[T Numeric](b []byte) ([]T, bool) {
	var zero T
	width := int(unsafe.Sizeof(zero))
	n := len(b) / width
	if n == 0 {
		return nil, true
	}
	if hostLittleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Alignof(zero) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), true
	}
	out := make([]T, n)
	raw := asBytes(out)
	copy(raw, b)
	if !hostLittleEndian {
		SwapBytes(raw, width)
	}
	return out, false
}

// LittleEndianBytes returns the bytes of values in little-endian order (bool one byte, 0 or
// 1): on a little-endian machine a view of the values' own memory (no copy), elsewhere a
// converted copy.
func LittleEndianBytes[T Numeric | bool](values []T) []byte {
	b := asBytes(values)
	if !hostLittleEndian && len(b) > 0 {
		b = append([]byte(nil), b...)
		SwapBytes(b, sizeOf[T]())
	}
	return b
}

// SwapBytes reverses, in place, the byte order of each width-byte value of b: big-endian
// values become little-endian and back. Trailing bytes short of a value are left alone.
func SwapBytes(b []byte, width int) {
	switch width {
	case 2:
		for i := 0; i+2 <= len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(b[i:])))
		}
	case 8:
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], bits.ReverseBytes64(binary.LittleEndian.Uint64(b[i:])))
		}
	default:
		for i := 0; width > 1 && i+width <= len(b); i += width {
			for l, r := i, i+width-1; l < r; l, r = l+1, r-1 {
				b[l], b[r] = b[r], b[l]
			}
		}
	}
}
