package ipc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

// batchLoader walks the field nodes and buffers of one RecordBatch (of a record batch or a
// dictionary batch) in the order a schema's fields lay them out, checks every length, count,
// offset and buffer against the body, the limits and each other, and builds arrow-go array
// data over views of the body. Nothing is handed to arrow-go before its checks pass.
type batchLoader struct {
	d          *decoder
	rb         *arrowfb.RecordBatch
	body       []byte
	bodyLen    int64 // len(body), or the length of a body not at hand (valuesSpan)
	codec      arrowfb.CompressionType
	compressed bool
	version    arrowfb.MetadataVersion
	node       int
	buffer     int
	variadic   int
}

// fieldNode is a FieldNode read and checked: a length and a null count.
type fieldNode struct{ length, nulls int64 }

// newBatchLoader prepares to load rb, whose buffers lie in body.
func (d *decoder) newBatchLoader(rb *arrowfb.RecordBatch, body []byte, version arrowfb.MetadataVersion) (*batchLoader, error) {
	l := &batchLoader{d: d, rb: rb, body: body, bodyLen: int64(len(body)), version: version}
	var comp arrowfb.BodyCompression
	if rb.Compression(&comp) != nil {
		if comp.Method() != arrowfb.BodyCompressionMethodBUFFER {
			return nil, fmt.Errorf("body compression method %d: %w", comp.Method(), ErrUnsupported)
		}
		switch comp.Codec() {
		case arrowfb.CompressionTypeLZ4_FRAME, arrowfb.CompressionTypeZSTD:
		default:
			return nil, fmt.Errorf("compression codec %d: %w", comp.Codec(), ErrUnsupported)
		}
		l.codec, l.compressed = comp.Codec(), true
	}
	if n := rb.Length(); n < 0 || n > d.lim.MaxElements || n > math.MaxInt {
		return nil, fmt.Errorf("a batch of %d rows (limit %d): %w", n, d.lim.MaxElements, errLength(n))
	}
	return l, nil
}

// errLength is the sentinel for a length out of range: ErrInvalid below zero, ErrLimit above
// the limits.
func errLength(n int64) error {
	if n < 0 {
		return ErrInvalid
	}
	return ErrLimit
}

// nextNode reads the next field node, checked: a length within the limits and a null count
// between 0 and the length.
func (l *batchLoader) nextNode(p *fieldPlan) (fieldNode, error) {
	if l.node >= l.rb.NodesLength() {
		return fieldNode{}, fmt.Errorf("%s: the batch has %d field nodes, too few for its schema: %w", p.path, l.rb.NodesLength(), ErrInvalid)
	}
	var n arrowfb.FieldNode
	l.rb.Nodes(&n, l.node)
	l.node++
	node := fieldNode{n.Length(), n.NullCount()}
	switch {
	case node.length < 0 || node.length > l.d.lim.MaxElements || node.length > math.MaxInt:
		return node, fmt.Errorf("%s: field node %d: length %d (limit %d): %w", p.path, l.node-1, node.length, l.d.lim.MaxElements, errLength(node.length))
	case node.nulls < 0 || node.nulls > node.length:
		return node, fmt.Errorf("%s: field node %d: null count %d for length %d: %w", p.path, l.node-1, node.nulls, node.length, ErrInvalid)
	}
	return node, nil
}

// rawBuffer returns the next buffer's bytes, a view of the body, checked to lie inside it.
func (l *batchLoader) rawBuffer(p *fieldPlan) ([]byte, error) {
	off, n, err := l.nextSpan(p)
	if err != nil {
		return nil, err
	}
	return l.body[off : off+n], nil
}

// nextSpan returns the offset and length of the next buffer, checked to lie inside the body.
func (l *batchLoader) nextSpan(p *fieldPlan) (off, n int64, err error) {
	if l.buffer >= l.rb.BuffersLength() {
		return 0, 0, fmt.Errorf("%s: the batch has %d buffers, too few for its schema: %w", p.path, l.rb.BuffersLength(), ErrInvalid)
	}
	var b arrowfb.Buffer
	l.rb.Buffers(&b, l.buffer)
	l.buffer++
	off, n = b.Offset(), b.Length()
	if off < 0 || n < 0 || off > l.bodyLen || n > l.bodyLen-off {
		return 0, 0, fmt.Errorf("%s: buffer %d (offset %d, length %d) lies outside a body of %d bytes: %w", p.path, l.buffer-1, off, n, l.bodyLen, ErrInvalid)
	}
	return off, n, nil
}

// nextBuffer returns the next buffer, decompressed, byte-swapped to little-endian (by swap,
// for big-endian input) and aligned to align bytes: a view of the body when none of that
// was needed, else a copy. A nil buffer is an empty one. The caller owns one reference.
func (l *batchLoader) nextBuffer(p *fieldPlan, swap swapKind, align int) (*memory.Buffer, error) {
	raw, err := l.rawBuffer(p)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil
	}
	what := fmt.Sprintf("%s: buffer %d", p.path, l.buffer-1)
	buf, owned := memory.NewBufferBytes(raw), false
	if l.compressed {
		if buf, owned, err = l.d.copies.decompress(l.codec, raw, what); err != nil || buf == nil {
			return nil, err
		}
	}
	needSwap := l.d.plan.bigEndian && swap != swapNone
	if !owned && (needSwap || !aligned(buf.Bytes(), align)) {
		copied, err := l.d.copies.copyOf(buf.Bytes(), what)
		if err != nil {
			return nil, err
		}
		buf = copied
	}
	if needSwap {
		swapBytes(swap, buf.Bytes())
	}
	return buf, nil
}

// skipBuffers walks past n buffers, checking only that they lie inside the body.
func (l *batchLoader) skipBuffers(p *fieldPlan, n int) error {
	for range n {
		if _, err := l.rawBuffer(p); err != nil {
			return err
		}
	}
	return nil
}

// skip walks past the nodes and buffers of a field whose arrays are not built.
func (l *batchLoader) skip(p *fieldPlan) error {
	if _, err := l.nextNode(p); err != nil {
		return err
	}
	buffers := 0
	switch p.layout {
	case layoutFixed, layoutBool, layoutList, layoutLargeList:
		buffers = 2
	case layoutBinary, layoutLargeBinary, layoutListView:
		buffers = 3
	case layoutFixedList, layoutStruct:
		buffers = 1
	case layoutSparseUnion, layoutDenseUnion:
		buffers = 1
		if p.layout == layoutDenseUnion {
			buffers = 2
		}
		if l.version < arrowfb.MetadataVersionV5 {
			buffers++ // a validity bitmap, dropped in V5
		}
	case layoutView:
		if l.variadic >= l.rb.VariadicBufferCountsLength() {
			return fmt.Errorf("%s: the batch has %d variadic buffer counts, too few for its schema: %w", p.path, l.rb.VariadicBufferCountsLength(), ErrInvalid)
		}
		n := l.rb.VariadicBufferCounts(l.variadic)
		l.variadic++
		if left := int64(l.rb.BuffersLength() - l.buffer - 2); n < 0 || n > left {
			return fmt.Errorf("%s: %d variadic buffers where %d remain: %w", p.path, n, max(left, 0), ErrInvalid)
		}
		buffers = 2 + int(n)
	}
	if err := l.skipBuffers(p, buffers); err != nil {
		return err
	}
	if p.dictID >= 0 {
		return nil // the children belong to the dictionary's values
	}
	for _, c := range p.children {
		if err := l.skip(c); err != nil {
			return err
		}
	}
	return nil
}

// held collects the buffers and child data of one array being loaded, released together
// when it is built (the array data retains what it keeps) or when loading fails.
type held struct {
	buffers  []*memory.Buffer
	children []arrow.ArrayData
}

func (h *held) release() {
	for _, b := range h.buffers {
		if b != nil {
			b.Release()
		}
	}
	for _, c := range h.children {
		c.Release()
	}
}

// load checks and builds the array data of field p.
func (l *batchLoader) load(p *fieldPlan) (arrow.ArrayData, error) {
	node, err := l.nextNode(p)
	if err != nil {
		return nil, err
	}
	var h held
	defer h.release()
	n := int(node.length)
	if p.layout == layoutNull {
		return array.NewData(p.field.Type, n, []*memory.Buffer{nil}, nil, n, 0), nil
	}
	validity, err := l.validity(p, node)
	h.buffers = append(h.buffers, validity)
	if err != nil {
		return nil, err
	}
	nulls := int(node.nulls)

	switch p.layout {
	case layoutFixed:
		align := min(p.width, 8)
		if _, ok := p.field.Type.(*arrow.FixedSizeBinaryType); ok || p.width&(p.width-1) != 0 {
			align = 1
		}
		values, err := l.nextBuffer(p, p.swap, align)
		h.buffers = append(h.buffers, values)
		if err != nil {
			return nil, err
		}
		if err := need(p, "values", values, node.length, int64(p.width)); err != nil {
			return nil, err
		}
		if p.dictID >= 0 {
			return l.dictionaryIndices(p, node, validity, values)
		}
		return array.NewData(p.field.Type, n, h.buffers, nil, nulls, 0), nil

	case layoutBool:
		values, err := l.nextBuffer(p, swapNone, 1)
		h.buffers = append(h.buffers, values)
		if err != nil {
			return nil, err
		}
		if int64(bufLen(values)) < bitmapBytes(node.length) {
			return nil, fmt.Errorf("%s: a bitmap of %d bytes for %d values: %w", p.path, bufLen(values), node.length, ErrInvalid)
		}
		return array.NewData(p.field.Type, n, h.buffers, nil, nulls, 0), nil

	case layoutBinary, layoutLargeBinary:
		width := offsetWidth(p.layout)
		offsets, err := l.offsets(p, node.length, width)
		h.buffers = append(h.buffers, offsets)
		if err != nil {
			return nil, err
		}
		data, err := l.nextBuffer(p, swapNone, 1)
		h.buffers = append(h.buffers, data)
		if err != nil {
			return nil, err
		}
		if err := checkOffsets(p, offsets, node.length, width, int64(bufLen(data)), "bytes of data"); err != nil {
			return nil, err
		}
		return array.NewData(p.field.Type, n, h.buffers, nil, nulls, 0), nil

	case layoutList, layoutLargeList:
		width := offsetWidth(p.layout)
		offsets, err := l.offsets(p, node.length, width)
		h.buffers = append(h.buffers, offsets)
		if err != nil {
			return nil, err
		}
		child, err := l.load(p.children[0])
		if err != nil {
			return nil, err
		}
		h.children = append(h.children, child)
		if err := checkOffsets(p, offsets, node.length, width, int64(child.Len()), "child values"); err != nil {
			return nil, err
		}
		return array.NewData(p.field.Type, n, h.buffers, h.children, nulls, 0), nil

	case layoutFixedList:
		child, err := l.load(p.children[0])
		if err != nil {
			return nil, err
		}
		h.children = append(h.children, child)
		if hi, lo := bits.Mul64(uint64(node.length), uint64(p.width)); hi != 0 || lo > uint64(child.Len()) {
			return nil, fmt.Errorf("%s: %d lists of %d need more than the %d child values: %w", p.path, node.length, p.width, child.Len(), ErrInvalid)
		}
		return array.NewData(p.field.Type, n, h.buffers, h.children, nulls, 0), nil

	case layoutStruct:
		for _, c := range p.children {
			child, err := l.load(c)
			if err != nil {
				return nil, err
			}
			h.children = append(h.children, child)
			if int64(child.Len()) < node.length {
				return nil, fmt.Errorf("%s: a child of %d values in a struct of %d: %w", c.path, child.Len(), node.length, ErrInvalid)
			}
		}
		return array.NewData(p.field.Type, n, h.buffers, h.children, nulls, 0), nil
	}
	return nil, fmt.Errorf("%s: layout %d has no arrays: %w", p.path, p.layout, ErrUnsupported)
}

// validity returns the validity bitmap of a node: nil when it has no nulls (whatever the
// buffer holds), else a bitmap long enough for the node whose zero bits number exactly the
// node's null count.
func (l *batchLoader) validity(p *fieldPlan, node fieldNode) (*memory.Buffer, error) {
	buf, err := l.nextBuffer(p, swapNone, 1)
	if err != nil || node.nulls == 0 {
		if buf != nil {
			buf.Release()
		}
		return nil, err
	}
	if int64(bufLen(buf)) < bitmapBytes(node.length) {
		n := bufLen(buf)
		if buf != nil {
			buf.Release()
		}
		return nil, fmt.Errorf("%s: a validity bitmap of %d bytes for %d values: %w", p.path, n, node.length, ErrInvalid)
	}
	if set := int64(bitutil.CountSetBits(buf.Bytes(), 0, int(node.length))); node.length-set != node.nulls {
		buf.Release()
		return nil, fmt.Errorf("%s: null count %d, but the validity bitmap has %d nulls: %w", p.path, node.nulls, node.length-set, ErrInvalid)
	}
	return buf, nil
}

// offsets returns the offsets buffer of a node of length n: n+1 offsets of width bytes. A
// node of no values may have an empty buffer, which becomes one zero offset.
func (l *batchLoader) offsets(p *fieldPlan, n int64, width int) (*memory.Buffer, error) {
	swap := swap32
	if width == 8 {
		swap = swap64
	}
	buf, err := l.nextBuffer(p, swap, width)
	if err != nil {
		return nil, err
	}
	if n == 0 && bufLen(buf) == 0 {
		return memory.NewBufferBytes(make([]byte, width)), nil
	}
	if err := need(p, "offsets", buf, n+1, int64(width)); err != nil {
		if buf != nil {
			buf.Release()
		}
		return nil, err
	}
	return buf, nil
}

// checkOffsets checks the n+1 offsets in buf: the first at least 0, none smaller than the one
// before, the last at most limit.
func checkOffsets(p *fieldPlan, buf *memory.Buffer, n int64, width int, limit int64, what string) error {
	b := bytesOf(buf)
	prev := int64(0)
	for i := int64(0); i <= n; i++ {
		var o int64
		if width == 4 {
			o = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		} else {
			o = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		switch {
		case o < prev:
			return fmt.Errorf("%s: offset %d is %d, after %d: offsets must not decrease: %w", p.path, i, o, prev, ErrInvalid)
		case o > limit:
			return fmt.Errorf("%s: offset %d is %d, past the %d %s: %w", p.path, i, o, limit, what, ErrInvalid)
		}
		prev = o
	}
	return nil
}

// dictionaryIndices builds the data of a dictionary-encoded node over the current dictionary
// of its id, after checking every index that is not null against the dictionary's length.
func (l *batchLoader) dictionaryIndices(p *fieldPlan, node fieldNode, validity, values *memory.Buffer) (arrow.ArrayData, error) {
	dict, ok := l.d.dicts[p.dictID]
	if !ok {
		return nil, fmt.Errorf("%s: %s was not read before the batch that uses it: %w", p.path, dictionaryName(p.dictID), ErrInvalid)
	}
	size := uint64(dict.Len())
	b := bytesOf(values)
	typ := p.field.Type
	if ext, ok := typ.(arrow.ExtensionType); ok {
		typ = ext.StorageType()
	}
	signed := arrow.IsSignedInteger(typ.(*arrow.DictionaryType).IndexType.ID())
	for i := 0; i < int(node.length); i++ {
		if validity != nil && !bitutil.BitIsSet(validity.Bytes(), i) {
			continue
		}
		var x uint64
		switch p.width {
		case 1:
			x = uint64(b[i])
			if signed {
				x = uint64(int64(int8(b[i])))
			}
		case 2:
			x = uint64(binary.LittleEndian.Uint16(b[2*i:]))
			if signed {
				x = uint64(int64(int16(x)))
			}
		case 4:
			x = uint64(binary.LittleEndian.Uint32(b[4*i:]))
			if signed {
				x = uint64(int64(int32(x)))
			}
		default:
			x = binary.LittleEndian.Uint64(b[8*i:])
		}
		if x >= size { // a negative index is huge as a uint64
			return nil, fmt.Errorf("%s: index %d of value %d is outside %s of %d values: %w", p.path, i, int64(x), dictionaryName(p.dictID), size, ErrInvalid)
		}
	}
	return array.NewDataWithDictionary(p.field.Type, int(node.length), []*memory.Buffer{validity, values}, int(node.nulls), 0, dict.(*array.Data)), nil
}

// need checks that buf holds at least n values of width bytes.
func need(p *fieldPlan, what string, buf *memory.Buffer, n, width int64) error {
	hi, lo := bits.Mul64(uint64(n), uint64(width))
	if hi != 0 || lo > uint64(bufLen(buf)) {
		return fmt.Errorf("%s: %s buffer of %d bytes for %d values of %d bytes: %w", p.path, what, bufLen(buf), n, width, ErrInvalid)
	}
	return nil
}

// bytesOf returns the bytes of a buffer, nil for a nil (empty) one.
func bytesOf(b *memory.Buffer) []byte {
	if b == nil {
		return nil
	}
	return b.Bytes()
}

// bufLen returns the length of a buffer, 0 for a nil (empty) one.
func bufLen(b *memory.Buffer) int {
	if b == nil {
		return 0
	}
	return b.Len()
}

// bitmapBytes returns the bytes of a bitmap of n bits.
func bitmapBytes(n int64) int64 { return (n + 7) / 8 }

// offsetWidth returns the width of the offsets of a binary or list layout.
func offsetWidth(l layout) int {
	if l == layoutLargeBinary || l == layoutLargeList {
		return 8
	}
	return 4
}
