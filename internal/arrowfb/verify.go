package arrowfb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed reports flatbuffer bytes that do not hold a well-formed message: an offset or
// a length that points outside the buffer, a field too short for its type, a missing required
// field or an unknown union member.
var ErrMalformed = errors.New("malformed flatbuffer")

// VerifyMessage checks that buf holds a Message whose header can be read without going out of
// bounds: every table, vtable, vector and string of a Tensor or SparseTensor header and every
// vector of a Schema, RecordBatch or DictionaryBatch header (which arrow-go's readers size
// their allocations from), with Field nesting at most maxDepth deep. After VerifyMessage
// returns nil, GetRootAsMessage(buf, 0) and the accessors reachable from it are safe.
func VerifyMessage(buf []byte) error {
	v := verifier{buf: buf}
	if len(buf) < 4 {
		return v.fail(0, "buffer of %d bytes has no root offset", len(buf))
	}
	msg, err := v.table(uint64(binary.LittleEndian.Uint32(buf)), "Message")
	if err != nil {
		return err
	}
	if err := v.scalars(msg, "Message", field{0, 2}, field{1, 1}, field{3, 8}); err != nil {
		return err
	}
	if err := v.vectorOfTables(msg, 4, "Message.custom_metadata", false, v.keyValue); err != nil {
		return err
	}
	headerType := MessageHeader(v.u8(msg, 1))
	if headerType == MessageHeaderNONE {
		return v.fail(msg.pos, "Message has no header")
	}
	header, ok, err := v.child(msg, 2, "Message.header")
	if err != nil {
		return err
	}
	if !ok {
		return v.fail(msg.pos, "Message.header %v is missing", headerType)
	}
	switch headerType {
	case MessageHeaderTensor:
		return v.tensor(header)
	case MessageHeaderSparseTensor:
		return v.sparseTensor(header)
	case MessageHeaderSchema:
		return v.schema(header)
	case MessageHeaderRecordBatch:
		return v.recordBatch(header)
	case MessageHeaderDictionaryBatch:
		if err := v.scalars(header, "DictionaryBatch", field{0, 8}, field{2, 1}); err != nil {
			return err
		}
		batch, ok, err := v.child(header, 1, "DictionaryBatch.data")
		if err != nil || !ok {
			return err
		}
		return v.recordBatch(batch)
	}
	return v.fail(msg.pos, "unknown message header type %d", headerType)
}

type verifier struct {
	buf []byte
}

// tableRef locates a table: its position, its vtable, the sizes of both.
type tableRef struct {
	pos     uint32
	vt      uint32
	vtSize  uint16
	tblSize uint16
}

// field names a scalar slot and its size in bytes.
type field struct {
	slot int
	size uint32
}

func (v *verifier) fail(at uint32, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, at, fmt.Sprintf(format, args...))
}

// inside reports whether [at, at+n) lies within the buffer, without overflow.
func (v *verifier) inside(at, n uint64) bool {
	return at <= uint64(len(v.buf)) && n <= uint64(len(v.buf))-at
}

// table checks the table at pos and its vtable.
func (v *verifier) table(pos uint64, what string) (tableRef, error) {
	if pos%4 != 0 || !v.inside(pos, 4) {
		return tableRef{}, v.fail(uint32(min(pos, uint64(len(v.buf)))), "%s table offset %d outside %d bytes or misaligned", what, pos, len(v.buf))
	}
	vt := int64(pos) - int64(int32(binary.LittleEndian.Uint32(v.buf[pos:])))
	if vt < 0 || vt%2 != 0 || !v.inside(uint64(vt), 4) {
		return tableRef{}, v.fail(uint32(pos), "%s vtable at %d outside the buffer", what, vt)
	}
	vtSize := binary.LittleEndian.Uint16(v.buf[vt:])
	tblSize := binary.LittleEndian.Uint16(v.buf[vt+2:])
	if vtSize < 4 || vtSize%2 != 0 || !v.inside(uint64(vt), uint64(vtSize)) {
		return tableRef{}, v.fail(uint32(vt), "%s vtable size %d invalid", what, vtSize)
	}
	if tblSize < 4 || !v.inside(pos, uint64(tblSize)) {
		return tableRef{}, v.fail(uint32(pos), "%s table size %d reaches outside the buffer", what, tblSize)
	}
	return tableRef{pos: uint32(pos), vt: uint32(vt), vtSize: vtSize, tblSize: tblSize}, nil
}

// fieldAt returns the position of slot's field in t and whether it is present, checking that
// size bytes of it lie inside the table.
func (v *verifier) fieldAt(t tableRef, slot int, size uint32, what string) (uint32, bool, error) {
	entry := uint32(4 + 2*slot)
	if entry+2 > uint32(t.vtSize) {
		return 0, false, nil
	}
	off := binary.LittleEndian.Uint16(v.buf[t.vt+entry:])
	if off == 0 {
		return 0, false, nil
	}
	if uint32(off)+size > uint32(t.tblSize) {
		return 0, false, v.fail(t.pos, "%s: field %d of %d bytes at %d overruns a table of %d bytes", what, slot, size, off, t.tblSize)
	}
	return t.pos + uint32(off), true, nil
}

// scalars checks that each present scalar field fits in the table.
func (v *verifier) scalars(t tableRef, what string, fields ...field) error {
	for _, f := range fields {
		if _, _, err := v.fieldAt(t, f.slot, f.size, what); err != nil {
			return err
		}
	}
	return nil
}

// u8 returns the byte field in slot, 0 when absent; the slot must have been checked.
func (v *verifier) u8(t tableRef, slot int) uint8 {
	p, ok, _ := v.fieldAt(t, slot, 1, "")
	if !ok {
		return 0
	}
	return v.buf[p]
}

// target follows the offset field in slot and returns where it points.
func (v *verifier) target(t tableRef, slot int, what string) (uint64, bool, error) {
	p, ok, err := v.fieldAt(t, slot, 4, what)
	if err != nil || !ok {
		return 0, ok, err
	}
	return uint64(p) + uint64(binary.LittleEndian.Uint32(v.buf[p:])), true, nil
}

// child checks the sub-table referenced by slot.
func (v *verifier) child(t tableRef, slot int, what string) (tableRef, bool, error) {
	at, ok, err := v.target(t, slot, what)
	if err != nil || !ok {
		return tableRef{}, ok, err
	}
	c, err := v.table(at, what)
	return c, err == nil, err
}

// vector checks the vector referenced by slot, of elements of size bytes each, and returns its
// position (of the length word) and length.
func (v *verifier) vector(t tableRef, slot int, size uint32, what string) (uint32, uint32, bool, error) {
	at, ok, err := v.target(t, slot, what)
	if err != nil || !ok {
		return 0, 0, ok, err
	}
	if at%4 != 0 || !v.inside(at, 4) {
		return 0, 0, false, v.fail(t.pos, "%s: vector at %d outside the buffer", what, at)
	}
	n := binary.LittleEndian.Uint32(v.buf[at:])
	if !v.inside(at+4, uint64(n)*uint64(size)) {
		return 0, 0, false, v.fail(uint32(at), "%s: vector of %d elements of %d bytes overruns the buffer", what, n, size)
	}
	return uint32(at), n, true, nil
}

// str checks the string referenced by slot, with its terminating NUL.
func (v *verifier) str(t tableRef, slot int, what string) error {
	at, n, ok, err := v.vector(t, slot, 1, what)
	if err != nil || !ok {
		return err
	}
	if !v.inside(uint64(at)+4+uint64(n), 1) || v.buf[uint64(at)+4+uint64(n)] != 0 {
		return v.fail(at, "%s: string of %d bytes is not NUL-terminated", what, n)
	}
	return nil
}

// vectorOfTables checks the vector of tables in slot and each table with check.
func (v *verifier) vectorOfTables(t tableRef, slot int, what string, required bool, check func(tableRef) error) error {
	at, n, ok, err := v.vector(t, slot, 4, what)
	if err != nil {
		return err
	}
	if !ok {
		if required {
			return v.fail(t.pos, "%s is missing", what)
		}
		return nil
	}
	for i := uint32(0); i < n; i++ {
		p := uint64(at) + 4 + 4*uint64(i)
		elem, err := v.table(p+uint64(binary.LittleEndian.Uint32(v.buf[p:])), what)
		if err != nil {
			return err
		}
		if err := check(elem); err != nil {
			return fmt.Errorf("%s[%d]: %w", what, i, err)
		}
	}
	return nil
}

func (v *verifier) keyValue(t tableRef) error {
	if err := v.str(t, 0, "KeyValue.key"); err != nil {
		return err
	}
	return v.str(t, 1, "KeyValue.value")
}

// typeUnion checks a Type union stored in slots typeSlot (the member) and typeSlot+1 (the
// table), with the scalars and vectors of the member's table.
func (v *verifier) typeUnion(t tableRef, typeSlot int, what string) error {
	kind := Type(v.u8(t, typeSlot))
	if kind == TypeNONE || kind > TypeLargeListView {
		return v.fail(t.pos, "%s: unknown type %d", what, kind)
	}
	tt, ok, err := v.child(t, typeSlot+1, what)
	if err != nil {
		return err
	}
	if !ok {
		return v.fail(t.pos, "%s is missing", what)
	}
	return v.typeTable(kind, tt)
}

// typeTable checks the fields of the table of a Type union member.
func (v *verifier) typeTable(kind Type, tt tableRef) error {
	switch kind {
	case TypeInt:
		return v.scalars(tt, "Int", field{0, 4}, field{1, 1})
	case TypeFloatingPoint:
		return v.scalars(tt, "FloatingPoint", field{0, 2})
	case TypeDecimal:
		return v.scalars(tt, "Decimal", field{0, 4}, field{1, 4}, field{2, 4})
	case TypeDate:
		return v.scalars(tt, "Date", field{0, 2})
	case TypeTime:
		return v.scalars(tt, "Time", field{0, 2}, field{1, 4})
	case TypeTimestamp:
		if err := v.scalars(tt, "Timestamp", field{0, 2}); err != nil {
			return err
		}
		return v.str(tt, 1, "Timestamp.timezone")
	case TypeInterval:
		return v.scalars(tt, "Interval", field{0, 2})
	case TypeUnion:
		if err := v.scalars(tt, "Union", field{0, 2}); err != nil {
			return err
		}
		_, _, _, err := v.vector(tt, 1, 4, "Union.typeIds")
		return err
	case TypeFixedSizeBinary:
		return v.scalars(tt, "FixedSizeBinary", field{0, 4})
	case TypeFixedSizeList:
		return v.scalars(tt, "FixedSizeList", field{0, 4})
	case TypeMap:
		return v.scalars(tt, "Map", field{0, 1})
	case TypeDuration:
		return v.scalars(tt, "Duration", field{0, 2})
	}
	return nil
}

func (v *verifier) tensorDim(t tableRef) error {
	if err := v.scalars(t, "TensorDim", field{0, 8}); err != nil {
		return err
	}
	return v.str(t, 1, "TensorDim.name")
}

// requiredStruct checks that the struct field in slot is present and size bytes long.
func (v *verifier) requiredStruct(t tableRef, slot int, size uint32, what string) error {
	_, ok, err := v.fieldAt(t, slot, size, what)
	if err == nil && !ok {
		err = v.fail(t.pos, "%s is missing", what)
	}
	return err
}

func (v *verifier) tensor(t tableRef) error {
	if err := v.scalars(t, "Tensor", field{0, 1}); err != nil {
		return err
	}
	if err := v.typeUnion(t, 0, "Tensor.type"); err != nil {
		return err
	}
	if err := v.vectorOfTables(t, 2, "Tensor.shape", true, v.tensorDim); err != nil {
		return err
	}
	if _, _, _, err := v.vector(t, 3, 8, "Tensor.strides"); err != nil {
		return err
	}
	return v.requiredStruct(t, 4, 16, "Tensor.data")
}

func (v *verifier) sparseTensor(t tableRef) error {
	if err := v.scalars(t, "SparseTensor", field{0, 1}, field{3, 8}, field{4, 1}); err != nil {
		return err
	}
	if err := v.typeUnion(t, 0, "SparseTensor.type"); err != nil {
		return err
	}
	if err := v.vectorOfTables(t, 2, "SparseTensor.shape", true, v.tensorDim); err != nil {
		return err
	}
	if err := v.requiredStruct(t, 6, 16, "SparseTensor.data"); err != nil {
		return err
	}
	index, ok, err := v.child(t, 5, "SparseTensor.sparseIndex")
	if err != nil {
		return err
	}
	if !ok {
		return v.fail(t.pos, "SparseTensor.sparseIndex is missing")
	}
	intType := func(slot int, what string) error {
		c, ok, err := v.child(index, slot, what)
		if err == nil && !ok {
			err = v.fail(index.pos, "%s is missing", what)
		}
		if err != nil {
			return err
		}
		return v.scalars(c, what, field{0, 4}, field{1, 1})
	}
	switch kind := SparseTensorIndex(v.u8(t, 4)); kind {
	case SparseTensorIndexSparseTensorIndexCOO:
		if err := intType(0, "SparseTensorIndexCOO.indicesType"); err != nil {
			return err
		}
		if _, _, _, err := v.vector(index, 1, 8, "SparseTensorIndexCOO.indicesStrides"); err != nil {
			return err
		}
		if err := v.requiredStruct(index, 2, 16, "SparseTensorIndexCOO.indicesBuffer"); err != nil {
			return err
		}
		return v.scalars(index, "SparseTensorIndexCOO", field{3, 1})
	case SparseTensorIndexSparseMatrixIndexCSX:
		if err := v.scalars(index, "SparseMatrixIndexCSX", field{0, 2}); err != nil {
			return err
		}
		for _, f := range []struct {
			slot int
			what string
		}{{1, "SparseMatrixIndexCSX.indptrType"}, {3, "SparseMatrixIndexCSX.indicesType"}} {
			if err := intType(f.slot, f.what); err != nil {
				return err
			}
		}
		if err := v.requiredStruct(index, 2, 16, "SparseMatrixIndexCSX.indptrBuffer"); err != nil {
			return err
		}
		return v.requiredStruct(index, 4, 16, "SparseMatrixIndexCSX.indicesBuffer")
	case SparseTensorIndexSparseTensorIndexCSF:
		if err := intType(0, "SparseTensorIndexCSF.indptrType"); err != nil {
			return err
		}
		if err := intType(2, "SparseTensorIndexCSF.indicesType"); err != nil {
			return err
		}
		for _, f := range []struct {
			slot int
			size uint32
			what string
		}{{1, 16, "SparseTensorIndexCSF.indptrBuffers"}, {3, 16, "SparseTensorIndexCSF.indicesBuffers"}, {4, 4, "SparseTensorIndexCSF.axisOrder"}} {
			_, _, ok, err := v.vector(index, f.slot, f.size, f.what)
			if err == nil && !ok {
				err = v.fail(index.pos, "%s is missing", f.what)
			}
			if err != nil {
				return err
			}
		}
		return nil
	default:
		return v.fail(t.pos, "unknown sparse index type %d", kind)
	}
}

// maxDepth bounds the nesting of Schema fields, so that a reader recursing over them cannot
// run out of stack.
const maxDepth = 64

// schema checks a Schema table: its fields, recursively, its metadata and features.
func (v *verifier) schema(t tableRef) error {
	if err := v.scalars(t, "Schema", field{0, 2}); err != nil {
		return err
	}
	if err := v.vectorOfTables(t, 1, "Schema.fields", false, func(f tableRef) error { return v.field(f, 1) }); err != nil {
		return err
	}
	if err := v.vectorOfTables(t, 2, "Schema.custom_metadata", false, v.keyValue); err != nil {
		return err
	}
	_, _, _, err := v.vector(t, 3, 8, "Schema.features")
	return err
}

// field checks a Field table at the given nesting depth.
func (v *verifier) field(t tableRef, depth int) error {
	if depth > maxDepth {
		return v.fail(t.pos, "fields nested more than %d deep", maxDepth)
	}
	if err := v.str(t, 0, "Field.name"); err != nil {
		return err
	}
	if err := v.scalars(t, "Field", field{1, 1}, field{2, 1}); err != nil {
		return err
	}
	// The union's table offset is checked even when its type is NONE: Field.Type reads it
	// whatever type_type says.
	kind := Type(v.u8(t, 2))
	if kind > TypeLargeListView {
		return v.fail(t.pos, "Field.type: unknown type %d", kind)
	}
	tt, ok, err := v.child(t, 3, "Field.type")
	if err != nil {
		return err
	}
	if ok && kind != TypeNONE {
		if err := v.typeTable(kind, tt); err != nil {
			return err
		}
	}
	if dict, ok, err := v.child(t, 4, "Field.dictionary"); err != nil {
		return err
	} else if ok {
		if err := v.scalars(dict, "DictionaryEncoding", field{0, 8}, field{2, 1}, field{3, 2}); err != nil {
			return err
		}
		if index, ok, err := v.child(dict, 1, "DictionaryEncoding.indexType"); err != nil {
			return err
		} else if ok {
			if err := v.typeTable(TypeInt, index); err != nil {
				return err
			}
		}
	}
	if err := v.vectorOfTables(t, 5, "Field.children", false, func(c tableRef) error { return v.field(c, depth+1) }); err != nil {
		return err
	}
	return v.vectorOfTables(t, 6, "Field.custom_metadata", false, v.keyValue)
}

// recordBatch checks a RecordBatch table's vectors of nodes, buffers and counts.
func (v *verifier) recordBatch(t tableRef) error {
	if err := v.scalars(t, "RecordBatch", field{0, 8}); err != nil {
		return err
	}
	for _, f := range []struct {
		slot int
		size uint32
		what string
	}{{1, 16, "RecordBatch.nodes"}, {2, 16, "RecordBatch.buffers"}, {4, 8, "RecordBatch.variadicBufferCounts"}} {
		if _, _, _, err := v.vector(t, f.slot, f.size, f.what); err != nil {
			return err
		}
	}
	_, _, err := v.child(t, 3, "RecordBatch.compression")
	return err
}

// VerifyFooter checks the Footer flatbuffer at the end of an Arrow IPC file, as VerifyMessage
// checks a message: its schema, its vectors of blocks and its metadata. After VerifyFooter
// returns nil, GetRootAsFooter(buf, 0) and the accessors reachable from it are safe; the
// blocks' offsets and lengths are the caller's to check against the file.
func VerifyFooter(buf []byte) error {
	v := verifier{buf: buf}
	if len(buf) < 4 {
		return v.fail(0, "footer of %d bytes has no root offset", len(buf))
	}
	footer, err := v.table(uint64(binary.LittleEndian.Uint32(buf)), "Footer")
	if err != nil {
		return err
	}
	if err := v.scalars(footer, "Footer", field{0, 2}); err != nil {
		return err
	}
	if schema, ok, err := v.child(footer, 1, "Footer.schema"); err != nil {
		return err
	} else if ok {
		if err := v.schema(schema); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		slot int
		what string
	}{{2, "Footer.dictionaries"}, {3, "Footer.recordBatches"}} {
		if _, _, _, err := v.vector(footer, f.slot, 24, f.what); err != nil {
			return err
		}
	}
	return v.vectorOfTables(footer, 4, "Footer.custom_metadata", false, v.keyValue)
}
