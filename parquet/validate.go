package parquet

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// maxValidateDepth bounds the nesting checkArray walks; deeper types are refused.
const maxValidateDepth = 64

// checkArray checks an array arrow-go's Parquet decoder returned before anything reads it:
// every buffer long enough for the rows it holds at its offset, every list and string offset
// in order and within what it indexes, every child long enough for its parent, every
// dictionary index within its dictionary. A page that lies about its levels or values can
// leave arrays that would index out of range when read; this turns that into an error.
func checkArray(d arrow.ArrayData) error {
	return checkData(d, 0)
}

func checkData(d arrow.ArrayData, depth int) error {
	if depth > maxValidateDepth {
		return fmt.Errorf("a column nested more than %d levels: %w", maxValidateDepth, ErrUnsupported)
	}
	n, off := int64(d.Len()), int64(d.Offset())
	if n < 0 || off < 0 {
		return fmt.Errorf("an array of %d values at offset %d: %w", n, off, ErrInvalid)
	}
	end := off + n
	typ := d.DataType()
	if ext, ok := typ.(arrow.ExtensionType); ok {
		typ = ext.StorageType()
	}
	bufs := d.Buffers()
	buf := func(i int) []byte {
		if i < len(bufs) && bufs[i] != nil {
			return bufs[i].Bytes()
		}
		return nil
	}
	need := func(i int, bytes int64, what string) error {
		if have := int64(len(buf(i))); have < bytes {
			return fmt.Errorf("%v: %s of %d bytes for %d values at offset %d, %d needed: %w", typ, what, have, n, off, bytes, ErrInvalid)
		}
		return nil
	}
	if d.NullN() != 0 && typ.ID() != arrow.NULL {
		if err := need(0, (end+7)/8, "a validity bitmap"); err != nil {
			return err
		}
	}
	children := d.Children()
	child := func(i int, rows int64) (arrow.ArrayData, error) {
		if i >= len(children) || children[i] == nil {
			return nil, fmt.Errorf("%v: child %d missing: %w", typ, i, ErrInvalid)
		}
		c := children[i]
		if int64(c.Len()) < rows {
			return nil, fmt.Errorf("%v: a child of %d values where %d are indexed: %w", typ, c.Len(), rows, ErrInvalid)
		}
		return c, checkData(c, depth+1)
	}
	switch t := typ.(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BooleanType:
		return need(1, (end+7)/8, "a bitmap")
	case *arrow.ListType, *arrow.MapType:
		last, err := checkOffsets(buf(1), off, n, 4, typ)
		if err != nil {
			return err
		}
		_, err = child(0, last)
		return err
	case *arrow.LargeListType:
		last, err := checkOffsets(buf(1), off, n, 8, typ)
		if err != nil {
			return err
		}
		_, err = child(0, last)
		return err
	case *arrow.FixedSizeListType:
		size := int64(t.Len())
		if size < 0 || size > 0 && end > (1<<62)/size {
			return fmt.Errorf("%v: %d rows of %d values: %w", typ, end, size, ErrInvalid)
		}
		_, err := child(0, end*size)
		return err
	case *arrow.StringType, *arrow.BinaryType:
		last, err := checkOffsets(buf(1), off, n, 4, typ)
		if err != nil {
			return err
		}
		return need(2, last, "data")
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		last, err := checkOffsets(buf(1), off, n, 8, typ)
		if err != nil {
			return err
		}
		return need(2, last, "data")
	case *arrow.StructType:
		for i := range t.NumFields() {
			if _, err := child(i, end); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		width, ok := t.IndexType.(arrow.FixedWidthDataType)
		if !ok {
			return fmt.Errorf("%v: indices of %v: %w", typ, t.IndexType, ErrUnsupported)
		}
		if err := need(1, end*int64(width.BitWidth()/8), "indices"); err != nil {
			return err
		}
		dict := d.Dictionary()
		if dict == nil {
			return fmt.Errorf("%v: no dictionary: %w", typ, ErrInvalid)
		}
		if err := checkData(dict, depth+1); err != nil {
			return err
		}
		return checkIndices(d, buf(1), int64(width.BitWidth()/8), arrow.IsSignedInteger(t.IndexType.ID()), int64(dict.Len()))
	case arrow.FixedWidthDataType:
		bits := int64(t.BitWidth())
		if bits <= 0 {
			return fmt.Errorf("%v: a width of %d bits: %w", typ, bits, ErrUnsupported)
		}
		return need(1, (end*bits+7)/8, "values")
	}
	return fmt.Errorf("arrays of %v are not checked, so not read: %w", typ, ErrUnsupported)
}

// checkOffsets checks the offsets of rows [off, off+n) in b, of width bytes each: present,
// the first at least 0, none smaller than the one before. It returns the last.
func checkOffsets(b []byte, off, n int64, width int, typ arrow.DataType) (int64, error) {
	if int64(len(b))/int64(width) < off+n+1 {
		return 0, fmt.Errorf("%v: %d bytes of offsets for %d values at offset %d: %w", typ, len(b), n, off, ErrInvalid)
	}
	at := func(i int64) int64 {
		if width == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	prev := at(off)
	if prev < 0 {
		return 0, fmt.Errorf("%v: offset %d is %d: %w", typ, off, prev, ErrInvalid)
	}
	for i := off + 1; i <= off+n; i++ {
		o := at(i)
		if o < prev {
			return 0, fmt.Errorf("%v: offset %d is %d, after %d: offsets must not decrease: %w", typ, i, o, prev, ErrInvalid)
		}
		prev = o
	}
	return prev, nil
}

// checkIndices checks that every index of a dictionary array that is not null is within the
// dictionary's size.
func checkIndices(d arrow.ArrayData, b []byte, width int64, signed bool, size int64) error {
	var validity []byte
	if d.NullN() != 0 && len(d.Buffers()) > 0 && d.Buffers()[0] != nil {
		validity = d.Buffers()[0].Bytes()
	}
	off := int64(d.Offset())
	for i := off; i < off+int64(d.Len()); i++ {
		if validity != nil && validity[i/8]&(1<<(i%8)) == 0 {
			continue
		}
		var u uint64
		switch width {
		case 1:
			u = uint64(b[i])
		case 2:
			u = uint64(binary.LittleEndian.Uint16(b[2*i:]))
		case 4:
			u = uint64(binary.LittleEndian.Uint32(b[4*i:]))
		case 8:
			u = binary.LittleEndian.Uint64(b[8*i:])
		default:
			return fmt.Errorf("dictionary indices of %d bytes: %w", width, ErrUnsupported)
		}
		x := int64(u)
		if signed && width < 8 { // sign-extend
			shift := 64 - 8*width
			x = int64(u<<shift) >> shift
		}
		if x < 0 || x >= size {
			return fmt.Errorf("dictionary index %d at %d, of a dictionary of %d: %w", x, i, size, ErrInvalid)
		}
	}
	return nil
}
