package parquet

import "encoding/binary"

// compactWriter appends compact-protocol Thrift to b: what the direct writer (directwrite.go)
// writes its page headers and footer with. Struct fields are written in increasing id order
// within each struct; begin and end keep the last id of every open struct.
type compactWriter struct {
	b    []byte
	last []int16 // the last field id written, per open struct (innermost last)
}

func (w *compactWriter) uvarint(u uint64) { w.b = binary.AppendUvarint(w.b, u) }

func (w *compactWriter) zigzag(v int64) { w.uvarint(uint64(v<<1) ^ uint64(v>>63)) }

// field writes the header of field id of type typ in the innermost open struct.
func (w *compactWriter) field(id int16, typ byte) {
	top := len(w.last) - 1
	if d := id - w.last[top]; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.zigzag(int64(id))
	}
	w.last[top] = id
}

// begin opens a struct (a top-level one, a field's or a list element's).
func (w *compactWriter) begin() { w.last = append(w.last, 0) }

// end closes the innermost struct.
func (w *compactWriter) end() {
	w.b = append(w.b, thriftStop)
	w.last = w.last[:len(w.last)-1]
}

func (w *compactWriter) i32(id int16, v int32) { w.field(id, thriftI32); w.zigzag(int64(v)) }
func (w *compactWriter) i64(id int16, v int64) { w.field(id, thriftI64); w.zigzag(v) }

func (w *compactWriter) boolean(id int16, v bool) {
	if v {
		w.field(id, thriftTrue)
	} else {
		w.field(id, thriftFalse)
	}
}

func (w *compactWriter) binary(id int16, v []byte) {
	w.field(id, thriftBinary)
	w.uvarint(uint64(len(v)))
	w.b = append(w.b, v...)
}

func (w *compactWriter) str(id int16, v string) {
	w.field(id, thriftBinary)
	w.uvarint(uint64(len(v)))
	w.b = append(w.b, v...)
}

// structField opens field id, a struct; close it with end.
func (w *compactWriter) structField(id int16) {
	w.field(id, thriftStruct)
	w.begin()
}

// list writes field id's list header: n elements of type elem, written next (a struct
// element with begin and end).
func (w *compactWriter) list(id int16, n int, elem byte) {
	w.field(id, thriftList)
	if n < 15 {
		w.b = append(w.b, byte(n)<<4|elem)
	} else {
		w.b = append(w.b, 0xF0|elem)
		w.uvarint(uint64(n))
	}
}

// listI32 writes field id, a list of i32.
func (w *compactWriter) listI32(id int16, v []int32) {
	w.list(id, len(v), thriftI32)
	for _, x := range v {
		w.zigzag(int64(x))
	}
}

// listStrings writes field id, a list of strings.
func (w *compactWriter) listStrings(id int16, v []string) { listOfBinary(w, id, v) }

// listBools writes field id, a list of bools (a byte each: 1 true, 2 false, as Thrift's
// compact protocol writes them in containers).
func (w *compactWriter) listBools(id int16, v []bool) {
	w.list(id, len(v), thriftTrue)
	for _, x := range v {
		if x {
			w.b = append(w.b, thriftTrue)
		} else {
			w.b = append(w.b, thriftFalse)
		}
	}
}

// listBinary writes field id, a list of binaries.
func (w *compactWriter) listBinary(id int16, v [][]byte) { listOfBinary(w, id, v) }

// listOfBinary writes field id of w, a list of strings or binaries.
func listOfBinary[T string | []byte](w *compactWriter, id int16, v []T) {
	w.list(id, len(v), thriftBinary)
	for _, s := range v {
		w.uvarint(uint64(len(s)))
		w.b = append(w.b, s...)
	}
}

// listI64 writes field id, a list of i64.
func (w *compactWriter) listI64(id int16, v []int64) {
	w.list(id, len(v), thriftI64)
	for _, x := range v {
		w.zigzag(x)
	}
}
