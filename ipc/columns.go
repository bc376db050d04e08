package ipc

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

// TensorColumn is an arrow.fixed_shape_tensor column of a record-batch file or stream: its
// name, its type and one array per record batch.
type TensorColumn struct {
	Name   string
	Type   *arrowtensor.FixedShapeTensorType
	Chunks []*arrowtensor.FixedShapeTensorArray
}

// Release releases the column's arrays.
func (c *TensorColumn) Release() {
	for _, a := range c.Chunks {
		a.Release()
	}
}

// ReadTensorColumns reads the arrow.fixed_shape_tensor columns of the Arrow IPC file or stream
// in b without copying: the arrays' buffers are views of b (map a file with OpenFile's
// machinery, or pass any []byte), which must outlive them. Other columns are skipped.
//
// It decodes the record batches itself, because arrow-go's readers copy every body. It
// handles uncompressed batches whose columns are of the types it knows the buffer layout of
// (primitives, binary and string, lists, fixed-size lists, structs, maps, run-end encoded,
// dictionary-encoded); a batch it cannot lay out (compressed, unions, views) fails with
// ErrUnsupported, and ReadRecordBatches reads it instead. The input is verified as in
// ReadRecordBatches; buffers are checked against the body and 8-byte alignment.
func ReadTensorColumns(b []byte) ([]*TensorColumn, error) {
	if err := checkBatches(b); err != nil {
		return nil, fmt.Errorf("ipc: record batches: %w", err)
	}
	msgs, err := batchMessages(b)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 || msgs[0].meta.HeaderType() != arrowfb.MessageHeaderSchema {
		return nil, fmt.Errorf("ipc: record batches: the first message is not a schema: %w", ErrInvalid)
	}
	d, err := newColumnDecoder(msgs[0].meta)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs[1:] {
		if err := d.decode(m); err != nil {
			d.release()
			return nil, err
		}
	}
	return d.order, nil
}

// ColumnDecoder reads the arrow.fixed_shape_tensor columns of record batches that arrive one
// message at a time, metadata and body apart, as Arrow Flight's FlightData carries them. Like
// ReadTensorColumns it copies nothing: each batch's arrays view the body passed to Decode.
type ColumnDecoder struct {
	fields []*arrowfb.Field
	cols   map[int]*TensorColumn
	order  []*TensorColumn
}

// NewColumnDecoder returns a decoder for the batches of the schema whose message metadata (a
// flatbuffer Message with a Schema header, FlightData.data_header) is meta. The schema may
// have no tensor column; Columns is then empty.
func NewColumnDecoder(meta []byte) (*ColumnDecoder, error) {
	m, _, err := parseMetadata(meta, 0, DefaultLimits())
	if err != nil {
		return nil, err
	}
	if m.HeaderType() != arrowfb.MessageHeaderSchema {
		return nil, fmt.Errorf("ipc: record batches: the first message is not a schema: %w", ErrInvalid)
	}
	return newColumnDecoder(m)
}

func newColumnDecoder(m *arrowfb.Message) (*ColumnDecoder, error) {
	var tbl flatbuffers.Table
	m.Header(&tbl)
	var schema arrowfb.Schema
	schema.Init(tbl.Bytes, tbl.Pos)
	d := &ColumnDecoder{fields: make([]*arrowfb.Field, schema.FieldsLength()), cols: map[int]*TensorColumn{}}
	for i := range d.fields {
		d.fields[i] = new(arrowfb.Field)
		schema.Fields(d.fields[i], i)
		typ, err := tensorColumnType(d.fields[i])
		if err != nil {
			return nil, fmt.Errorf("ipc: column %q: %w", d.fields[i].Name(), err)
		}
		if typ != nil {
			c := &TensorColumn{Name: string(d.fields[i].Name()), Type: typ}
			d.cols[i] = c
			d.order = append(d.order, c)
		}
	}
	return d, nil
}

// Decode reads the record batch message with metadata meta and body body, appending one
// chunk, a view of body, to each tensor column. Dictionary batches are skipped; any other
// message, metadata that does not verify, or a body of another length than the metadata
// says fails with ErrInvalid.
func (d *ColumnDecoder) Decode(meta, body []byte) error {
	m, n, err := parseMetadata(meta, 0, DefaultLimits())
	if err != nil {
		return err
	}
	if n != int64(len(body)) {
		return fmt.Errorf("ipc: record batch: metadata says a body of %d bytes, %d came: %w", n, len(body), ErrInvalid)
	}
	switch m.HeaderType() {
	case arrowfb.MessageHeaderRecordBatch, arrowfb.MessageHeaderDictionaryBatch:
	default:
		return fmt.Errorf("ipc: record batch: a message of type %v: %w", m.HeaderType(), ErrInvalid)
	}
	return d.decode(message{meta: m, body: body})
}

// decode reads one verified message.
func (d *ColumnDecoder) decode(m message) error {
	if m.meta.HeaderType() != arrowfb.MessageHeaderRecordBatch {
		return nil // dictionary batches belong to dictionary-encoded columns, skipped here
	}
	var tbl flatbuffers.Table
	m.meta.Header(&tbl)
	var rb arrowfb.RecordBatch
	rb.Init(tbl.Bytes, tbl.Pos)
	if err := readBatch(m, &rb, d.fields, d.cols); err != nil {
		return fmt.Errorf("ipc: record batch at byte %d: %w", m.offset, err)
	}
	return nil
}

// Columns returns the tensor columns, in schema order, with the chunks decoded so far.
func (d *ColumnDecoder) Columns() []*TensorColumn { return d.order }

// release releases every chunk decoded so far.
func (d *ColumnDecoder) release() {
	for _, c := range d.order {
		c.Release()
	}
}

// batchMessages returns the messages of a stream, or of the stream inside a file, which
// checkBatches has verified.
func batchMessages(b []byte) ([]message, error) {
	start, end := int64(0), int64(len(b))
	if bytes.HasPrefix(b, []byte(fileMagic)) {
		footerLen := int64(int32(uint32(b[len(b)-10]) | uint32(b[len(b)-9])<<8 | uint32(b[len(b)-8])<<16 | uint32(b[len(b)-7])<<24))
		start, end = 8, int64(len(b)-10)-footerLen
	}
	var out []message
	for pos := start; pos < end; {
		m, n, err := parseMessage(b[pos:end], pos, DefaultLimits())
		if err != nil {
			break // io.EOF at the end-of-stream marker; checkBatches saw everything else
		}
		out = append(out, m)
		pos += n
	}
	return out, nil
}

// tensorColumnType returns the extension type of a field that is an arrow.fixed_shape_tensor
// of a numeric type, and nil for any other field.
func tensorColumnType(f *arrowfb.Field) (*arrowtensor.FixedShapeTensorType, error) {
	var name, meta string
	var kv arrowfb.KeyValue
	for i := range f.CustomMetadataLength() {
		f.CustomMetadata(&kv, i)
		switch string(kv.Key()) {
		case "ARROW:extension:name":
			name = string(kv.Value())
		case "ARROW:extension:metadata":
			meta = string(kv.Value())
		}
	}
	if name != arrowtensor.FixedShapeTensorName || f.TypeType() != arrowfb.TypeFixedSizeList || f.ChildrenLength() != 1 {
		return nil, nil
	}
	var tbl flatbuffers.Table
	f.Type(&tbl)
	var fsl arrowfb.FixedSizeList
	fsl.Init(tbl.Bytes, tbl.Pos)
	var child arrowfb.Field
	f.Children(&child, 0)
	value, err := primitiveType(&child)
	if err != nil {
		return nil, err
	}
	if fsl.ListSize() <= 0 {
		return nil, fmt.Errorf("fixed-size list of %d: %w", fsl.ListSize(), ErrInvalid)
	}
	storage := arrow.FixedSizeListOfField(fsl.ListSize(), arrow.Field{Name: string(child.Name()), Type: value, Nullable: child.Nullable()})
	typ, err := (&arrowtensor.FixedShapeTensorType{}).Deserialize(storage, meta)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return typ.(*arrowtensor.FixedShapeTensorType), nil
}

// primitiveType returns the Arrow numeric type of a field.
func primitiveType(f *arrowfb.Field) (arrow.DataType, error) {
	dtype, err := elementType(f.TypeType(), func(t *flatbuffers.Table) { f.Type(t) })
	if err != nil {
		return nil, fmt.Errorf("tensor values: %v: %w", err, ErrUnsupported)
	}
	return dtype.ArrowType(), nil
}

// batchCursor walks the nodes and buffers of one record batch.
type batchCursor struct {
	rb     *arrowfb.RecordBatch
	body   []byte
	node   int
	buffer int
}

func (c *batchCursor) nextNode() (arrowfb.FieldNode, error) {
	var n arrowfb.FieldNode
	if c.node >= c.rb.NodesLength() {
		return n, fmt.Errorf("%d field nodes for more arrays: %w", c.rb.NodesLength(), ErrInvalid)
	}
	c.rb.Nodes(&n, c.node)
	c.node++
	if n.Length() < 0 || n.NullCount() < 0 || n.NullCount() > n.Length() {
		return n, fmt.Errorf("field node %d: length %d, null count %d: %w", c.node-1, n.Length(), n.NullCount(), ErrInvalid)
	}
	return n, nil
}

// nextBuffer returns the next buffer as a view of the body.
func (c *batchCursor) nextBuffer() ([]byte, error) {
	if c.buffer >= c.rb.BuffersLength() {
		return nil, fmt.Errorf("%d buffers for more: %w", c.rb.BuffersLength(), ErrInvalid)
	}
	var b arrowfb.Buffer
	c.rb.Buffers(&b, c.buffer)
	c.buffer++
	off, n := b.Offset(), b.Length()
	if off < 0 || n < 0 || off > int64(len(c.body)) || n > int64(len(c.body))-off {
		return nil, fmt.Errorf("buffer %d (offset %d, length %d) outside a body of %d bytes: %w", c.buffer-1, off, n, len(c.body), ErrInvalid)
	}
	return c.body[off : off+n], nil
}

// skip passes over the nodes and buffers of a field that is not read.
func (c *batchCursor) skip(f *arrowfb.Field) error {
	if _, err := c.nextNode(); err != nil {
		return err
	}
	buffers := 0
	switch t := f.TypeType(); t {
	case arrowfb.TypeNull:
	case arrowfb.TypeStruct_, arrowfb.TypeFixedSizeList:
		buffers = 1
	case arrowfb.TypeList, arrowfb.TypeLargeList, arrowfb.TypeMap:
		buffers = 2
	case arrowfb.TypeBinary, arrowfb.TypeUtf8, arrowfb.TypeLargeBinary, arrowfb.TypeLargeUtf8:
		buffers = 3
	case arrowfb.TypeRunEndEncoded:
	case arrowfb.TypeUnion, arrowfb.TypeBinaryView, arrowfb.TypeUtf8View, arrowfb.TypeListView, arrowfb.TypeLargeListView:
		return fmt.Errorf("a %v column: %w", t, ErrUnsupported)
	default:
		buffers = 2 // validity and values
	}
	var dict arrowfb.DictionaryEncoding
	if f.Dictionary(&dict) != nil {
		buffers = 2 // the indices
	}
	for range buffers {
		if _, err := c.nextBuffer(); err != nil {
			return err
		}
	}
	if f.Dictionary(&dict) != nil {
		return nil
	}
	var child arrowfb.Field
	for i := range f.ChildrenLength() {
		f.Children(&child, i)
		if err := c.skip(&child); err != nil {
			return err
		}
	}
	return nil
}

// readBatch appends the tensor columns of one record batch to cols.
func readBatch(m message, rb *arrowfb.RecordBatch, fields []*arrowfb.Field, cols map[int]*TensorColumn) error {
	var comp arrowfb.BodyCompression
	if rb.Compression(&comp) != nil {
		return fmt.Errorf("a compressed batch: %w", ErrUnsupported)
	}
	c := &batchCursor{rb: rb, body: m.body}
	for i, f := range fields {
		col, ok := cols[i]
		if !ok {
			if err := c.skip(f); err != nil {
				return fmt.Errorf("column %q: %w", f.Name(), err)
			}
			continue
		}
		arr, err := c.tensorArray(col.Type, rb.Length())
		if err != nil {
			return fmt.Errorf("column %q: %w", col.Name, err)
		}
		col.Chunks = append(col.Chunks, arr)
	}
	return nil
}

// tensorArray builds a fixed_shape_tensor array over the body for the next field.
func (c *batchCursor) tensorArray(typ *arrowtensor.FixedShapeTensorType, rows int64) (*arrowtensor.FixedShapeTensorArray, error) {
	list, err := c.nextNode()
	if err != nil {
		return nil, err
	}
	listValidity, err := c.nextBuffer()
	if err != nil {
		return nil, err
	}
	values, err := c.nextNode()
	if err != nil {
		return nil, err
	}
	valueValidity, err := c.nextBuffer()
	if err != nil {
		return nil, err
	}
	data, err := c.nextBuffer()
	if err != nil {
		return nil, err
	}
	size := int64(typ.StorageType().(*arrow.FixedSizeListType).Len())
	width := int64(typ.ValueType().(arrow.FixedWidthDataType).BitWidth() / 8)
	switch {
	case list.Length() != rows:
		return nil, fmt.Errorf("%d rows in a batch of %d: %w", list.Length(), rows, ErrInvalid)
	case values.Length()/size < list.Length() || values.Length() > int64(len(data))/width:
		return nil, fmt.Errorf("%d values for %d rows of %d, in %d bytes: %w", values.Length(), rows, size, len(data), ErrInvalid)
	case values.NullCount() != 0:
		return nil, fmt.Errorf("null tensor elements: %w", ErrUnsupported)
	case list.NullCount() != 0 && int64(len(listValidity))*8 < list.Length():
		return nil, fmt.Errorf("a validity bitmap of %d bytes for %d rows: %w", len(listValidity), list.Length(), ErrInvalid)
	}
	buffer := func(b []byte) *memory.Buffer {
		if len(b) == 0 {
			return nil
		}
		return memory.NewBufferBytes(b)
	}
	_ = valueValidity // no nulls among the values: the bitmap, if any, is all set
	child := array.NewData(typ.ValueType(), int(values.Length()), []*memory.Buffer{nil, buffer(data)}, nil, 0, 0)
	defer child.Release()
	validity := buffer(listValidity)
	if list.NullCount() == 0 {
		validity = nil
	}
	d := array.NewData(typ, int(list.Length()), []*memory.Buffer{validity}, []arrow.ArrayData{child}, int(list.NullCount()), 0)
	defer d.Release()
	return array.MakeFromData(d).(*arrowtensor.FixedShapeTensorArray), nil
}
