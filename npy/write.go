package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Write writes d to w as a .npy file, byte for byte as numpy.save writes the same array:
// format 1.0 (2.0 when the header needs more than 65535 bytes), the header dictionary padded
// with spaces and a newline so the data starts on a 64-byte boundary, then the values. A
// row-major array is written in C order and a column-major one in Fortran order, both straight
// from memory; other layouts are written as a C-order copy. It returns the bytes written.
func Write[T ndarray.Numeric | bool](w io.Writer, d *ndarray.Dense[T]) (int64, error) {
	l := d.Layout()
	fortran := !l.IsRowMajor() && l.IsColumnMajor()
	values, ok := d.Contiguous()
	if !ok {
		values = d.Clone().Data()
	}
	head := Header(d.DType(), d.Shape(), fortran)
	n, err := w.Write(head)
	total := int64(n)
	if err == nil && len(values) > 0 {
		n, err = w.Write(ndarray.LittleEndianBytes(values))
		total += int64(n)
	}
	if err != nil {
		return total, fmt.Errorf("npy: writing: %w", err)
	}
	return total, nil
}

// WriteStrings writes d to w as a .npy file of strings, as numpy.save writes them: as bytes
// (|S<n>, each value NUL-padded to the longest's length) when asBytes, else as text (<U<n>,
// UCS-4), which fails with ErrInvalid for a value that is not UTF-8. It returns the bytes
// written.
func WriteStrings(w io.Writer, d *ndarray.Dense[string], asBytes bool) (int64, error) {
	values := d.Clone().Data() // C order
	width := 1                 // NumPy's narrowest: S1, U1
	for i, v := range values {
		n := len(v)
		if !asBytes {
			if !utf8.ValidString(v) {
				return 0, fmt.Errorf("npy: element %d: not UTF-8 text (write it as bytes): %w", i, ErrInvalid)
			}
			n = utf8.RuneCountInString(v)
		}
		width = max(width, n)
	}
	descr := "<U" + strconv.Itoa(width)
	item := 4 * width
	if asBytes {
		descr, item = "|S"+strconv.Itoa(width), width
	}
	if item > maxStringWidth {
		return 0, fmt.Errorf("npy: strings of %d bytes, more than %d: %w", item, maxStringWidth, ErrUnsupported)
	}
	head := headerOf(descr, d.Shape(), false)
	data := make([]byte, len(values)*item)
	for i, v := range values {
		b := data[i*item : (i+1)*item]
		if asBytes {
			copy(b, v)
			continue
		}
		k := 0
		for _, r := range v {
			binary.LittleEndian.PutUint32(b[k:], uint32(r))
			k += 4
		}
	}
	n, err := w.Write(head)
	total := int64(n)
	if err == nil && len(data) > 0 {
		n, err = w.Write(data)
		total += int64(n)
	}
	if err != nil {
		return total, fmt.Errorf("npy: writing: %w", err)
	}
	return total, nil
}

// Header returns the preamble and header numpy.save writes for an array of dtype and shape.
func Header(dtype ndarray.DType, shape ndarray.Shape, fortran bool) []byte {
	return headerOf(descrOf(dtype), shape, fortran)
}

// headerOf is Header of a type string.
func headerOf(descr string, shape ndarray.Shape, fortran bool) []byte {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = strconv.FormatInt(n, 10)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		tuple += ","
	}
	tuple += ")"
	order := "False"
	if fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, tuple)
	// NumPy pads with spaces so that preamble + header + '\n' is a multiple of 64, using
	// format 1.0 unless the header is too long for its 16-bit length.
	pad := func(preamble int) string {
		n := alignment - (preamble+len(dict)+1)%alignment
		if n == alignment {
			n = 0
		}
		return dict + strings.Repeat(" ", n) + "\n"
	}
	text := pad(len(magic) + 4)
	out := make([]byte, 0, len(magic)+6+len(text))
	out = append(out, magic...)
	if len(text) <= math.MaxUint16 {
		out = append(out, 1, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(text)))
	} else {
		text = pad(len(magic) + 6)
		out = append(out, 2, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(text)))
	}
	return append(out, text...)
}
