package parquet

import (
	"encoding/binary"
	"fmt"
)

// Parquet's footer and page headers are Thrift structs in the compact protocol. arrow-go's
// generated Thrift code makes a slice as long as a list header claims (up to 100 million
// elements) before reading one element, so ndarrow walks every struct first: a list, map or
// string may claim no more elements or bytes than the input has left, and structs nest at most
// maxThriftDepth deep. The walk reads every byte once.

// maxThriftDepth bounds the nesting of Thrift structs and containers. parquet.thrift's deepest
// path (FileMetaData, RowGroup, ColumnChunk, ColumnMetaData, Statistics or a LogicalType, its
// members) is seven levels.
const maxThriftDepth = 32

// Compact protocol type codes.
const (
	thriftStop   = 0
	thriftTrue   = 1
	thriftFalse  = 2
	thriftByte   = 3
	thriftI16    = 4
	thriftI32    = 5
	thriftI64    = 6
	thriftDouble = 7
	thriftBinary = 8
	thriftList   = 9
	thriftSet    = 10
	thriftMap    = 11
	thriftStruct = 12
)

// compactReader reads compact-protocol Thrift from b, checking every length against what is
// left.
type compactReader struct {
	b     []byte
	pos   int
	depth int
}

func (c *compactReader) errorf(format string, args ...any) error {
	return fmt.Errorf("parquet: thrift at byte %d: %s: %w", c.pos, fmt.Sprintf(format, args...), ErrInvalid)
}

func (c *compactReader) left() int { return len(c.b) - c.pos }

func (c *compactReader) readByte() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, c.errorf("cut short")
	}
	c.pos++
	return c.b[c.pos-1], nil
}

func (c *compactReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(c.b[c.pos:])
	if n <= 0 {
		return 0, c.errorf("bad varint")
	}
	c.pos += n
	return v, nil
}

// i32 reads a zigzag varint that must fit 32 bits.
func (c *compactReader) i32() (int32, error) {
	u, err := c.uvarint()
	if err != nil {
		return 0, err
	}
	v := int64(u>>1) ^ -int64(u&1)
	if v < -1<<31 || v > 1<<31-1 {
		return 0, c.errorf("i32 %d out of range", v)
	}
	return int32(v), nil
}

// length reads a container or binary length that the remaining input can hold at one byte
// per element.
func (c *compactReader) length(u uint64) (int, error) {
	if u > uint64(c.left()) {
		return 0, c.errorf("a length of %d with %d bytes left", u, c.left())
	}
	return int(u), nil
}

// field reads a struct field header: its id and type, or typ thriftStop at the struct's end.
func (c *compactReader) field(last int16) (id int16, typ byte, err error) {
	h, err := c.readByte()
	if err != nil {
		return 0, 0, err
	}
	typ = h & 0x0f
	if typ == thriftStop {
		return 0, thriftStop, nil
	}
	if delta := int16(h >> 4); delta != 0 {
		return last + delta, typ, nil
	}
	v, err := c.i32()
	if err != nil {
		return 0, 0, err
	}
	if v < -1<<15 || v > 1<<15-1 {
		return 0, 0, c.errorf("field id %d", v)
	}
	return int16(v), typ, nil
}

// walkStruct reads the fields of a struct, handing each to visit, which reads the value and
// returns true, or returns false to have it skipped.
func (c *compactReader) walkStruct(visit func(id int16, typ byte) (bool, error)) error {
	if c.depth++; c.depth > maxThriftDepth {
		return c.errorf("structs nested deeper than %d", maxThriftDepth)
	}
	defer func() { c.depth-- }()
	var last int16
	for {
		id, typ, err := c.field(last)
		if err != nil {
			return err
		}
		if typ == thriftStop {
			return nil
		}
		last = id
		done := false
		if visit != nil {
			if done, err = visit(id, typ); err != nil {
				return err
			}
		}
		if !done {
			if err := c.skip(typ); err != nil {
				return err
			}
		}
	}
}

// skip reads a value of type typ without keeping it.
func (c *compactReader) skip(typ byte) error {
	switch typ {
	case thriftTrue, thriftFalse:
		return nil
	case thriftByte:
		_, err := c.readByte()
		return err
	case thriftI16, thriftI32, thriftI64:
		_, err := c.uvarint()
		return err
	case thriftDouble:
		if c.left() < 8 {
			return c.errorf("cut short")
		}
		c.pos += 8
		return nil
	case thriftBinary:
		u, err := c.uvarint()
		if err != nil {
			return err
		}
		n, err := c.length(u)
		if err != nil {
			return err
		}
		c.pos += n
		return nil
	case thriftList, thriftSet:
		n, elem, err := c.listHeader()
		if err != nil {
			return err
		}
		return c.skipElements(n, elem)
	case thriftMap:
		u, err := c.uvarint()
		if err != nil {
			return err
		}
		if u == 0 {
			return nil
		}
		n, err := c.length(u)
		if err != nil {
			return err
		}
		kv, err := c.readByte()
		if err != nil {
			return err
		}
		if c.depth++; c.depth > maxThriftDepth {
			return c.errorf("containers nested deeper than %d", maxThriftDepth)
		}
		defer func() { c.depth-- }()
		for i := 0; i < n; i++ {
			if err := c.element(kv >> 4); err != nil {
				return err
			}
			if err := c.element(kv & 0x0f); err != nil {
				return err
			}
		}
		return nil
	case thriftStruct:
		return c.walkStruct(nil)
	}
	return c.errorf("unknown type %d", typ)
}

// listHeader reads a list or set header: its element count (checked against the bytes left)
// and element type.
func (c *compactReader) listHeader() (n int, elem byte, err error) {
	h, err := c.readByte()
	if err != nil {
		return 0, 0, err
	}
	u := uint64(h >> 4)
	if u == 15 {
		if u, err = c.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	n, err = c.length(u)
	return n, h & 0x0f, err
}

func (c *compactReader) skipElements(n int, typ byte) error {
	if c.depth++; c.depth > maxThriftDepth {
		return c.errorf("containers nested deeper than %d", maxThriftDepth)
	}
	defer func() { c.depth-- }()
	for i := 0; i < n; i++ {
		if err := c.element(typ); err != nil {
			return err
		}
	}
	return nil
}

// element reads one element of a container: a boolean there is a whole byte.
func (c *compactReader) element(typ byte) error {
	if typ == thriftTrue || typ == thriftFalse {
		_, err := c.readByte()
		return err
	}
	return c.skip(typ)
}

// checkThriftStruct returns an error unless b starts with one well-formed compact-protocol
// struct whose every length fits in b; it returns the struct's length.
func checkThriftStruct(b []byte) (int, error) {
	c := compactReader{b: b}
	if err := c.walkStruct(nil); err != nil {
		return 0, err
	}
	return c.pos, nil
}

// pageHeader is what the reader checks of a Parquet PageHeader (parquet.thrift field ids).
type pageHeader struct {
	typ                    int32 // 0 data, 1 index, 2 dictionary, 3 data v2
	uncompressed           int32
	compressed             int32
	numValues              int32 // of the data, dictionary or data v2 header
	encoding               int32 // of the values
	hasNumValues           bool
	levelsBytes            int64 // v2: definition + repetition level bytes (stored uncompressed)
	headerLen              int   // bytes of the header itself
	hasUncompressed, hasCS bool

	// What the direct path (direct.go) reads besides: a v1 data page's level encodings, a v2
	// data page's null count, level byte lengths and whether its values are compressed.
	defEncoding, repEncoding int32
	numNulls                 int32
	defBytes, repBytes       int32
	v2Uncompressed           bool   // is_compressed false
	hasType                  bool   // the PageHeader's type was given
	subFields                uint16 // the i32 fields given of the data, dictionary or v2 header, a bit per id
}

// Page types.
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

// readPageHeader decodes the PageHeader at the start of b.
func readPageHeader(b []byte) (pageHeader, error) {
	var h pageHeader
	c := compactReader{b: b}
	var in int16 // the PageHeader field whose struct sub reads: 5 data, 7 dictionary, 8 data v2
	sub := func(id int16, typ byte) (bool, error) {
		if in == 8 && id == 7 && (typ == thriftTrue || typ == thriftFalse) {
			h.v2Uncompressed = typ == thriftFalse
			return true, nil
		}
		if typ != thriftI32 {
			return false, nil
		}
		v, err := c.i32()
		if err != nil {
			return true, err
		}
		if id > 0 && id < 16 {
			h.subFields |= 1 << id
		}
		switch {
		case id == 1:
			h.numValues, h.hasNumValues = v, true
		case id == 2 && in != 8, id == 4 && in == 8:
			h.encoding = v
		case in == 5 && id == 3:
			h.defEncoding = v
		case in == 5 && id == 4:
			h.repEncoding = v
		case in == 8 && id == 2:
			h.numNulls = v
		case in == 8 && (id == 5 || id == 6):
			if v < 0 {
				return true, c.errorf("level byte length %d", v)
			}
			h.levelsBytes += int64(v)
			if id == 5 {
				h.defBytes = v
			} else {
				h.repBytes = v
			}
		}
		return true, nil
	}
	err := c.walkStruct(func(id int16, typ byte) (bool, error) {
		switch {
		case typ == thriftI32 && id >= 1 && id <= 3:
			v, err := c.i32()
			if err != nil {
				return true, err
			}
			switch id {
			case 1:
				h.typ, h.hasType = v, true
			case 2:
				h.uncompressed, h.hasUncompressed = v, true
			case 3:
				h.compressed, h.hasCS = v, true
			}
			return true, nil
		case typ == thriftStruct && (id == 5 || id == 7 || id == 8):
			in = id
			return true, c.walkStruct(sub)
		}
		return false, nil
	})
	if err != nil {
		return h, err
	}
	if !h.hasUncompressed || !h.hasCS {
		return h, c.errorf("a page header without its sizes")
	}
	h.headerLen = c.pos
	return h, nil
}
