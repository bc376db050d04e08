// Package mutate finds the integer fields of Arrow IPC input — every length, count, offset
// and id a reader must not trust — and makes copies of the input with one of them, or one
// metadata byte, changed. Tests use it to feed readers hostile variants of valid files.
package mutate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

// Field is an integer of an IPC input: where it is, how many bytes it takes and what it is.
type Field struct {
	Name   string // as "message@584 RecordBatch.nodes[1].length"
	Offset int    // byte offset in the input
	Size   int    // 4 or 8
}

// Region is a span of metadata bytes in an input: a message's flatbuffer or a file's footer.
type Region struct {
	Name          string
	Offset, Bytes int
}

// Boundaries are the values a Field is set to: zero, minus one, the first value past int32,
// and the largest int64 (or int32, for 4-byte fields).
var Boundaries = []int64{0, -1, 1 << 31, math.MaxInt64}

// Input is what Scan finds in an Arrow IPC stream or file.
type Input struct {
	Fields   []Field
	Metadata []Region
}

const fileMagic = "ARROW1"

// Message is one framed message of an IPC stream: where it starts in its input, the length of
// its prefix, its flatbuffer metadata (verified) and its body.
type Message struct {
	Offset, Prefix int
	Meta, Body     []byte
}

// Messages returns the messages of b — an Arrow IPC stream, the stream inside a file, or a
// stream of Tensor messages — up to the end-of-stream marker, the end, or the first bytes that
// do not frame a message with verified metadata; and the bytes after them.
func Messages(b []byte) ([]Message, []byte) {
	start, end := 0, len(b)
	if bytes.HasPrefix(b, []byte(fileMagic)) && len(b) >= 18 {
		footerLen := int(int32(binary.LittleEndian.Uint32(b[len(b)-10:])))
		start = 8
		if footerLen > 0 && footerLen <= len(b)-18 {
			end = len(b) - 10 - footerLen
		}
	}
	var out []Message
	pos := start
	for pos+8 <= end {
		prefix := 8
		if binary.LittleEndian.Uint32(b[pos:]) != 0xFFFFFFFF {
			prefix = 4
		}
		metaLen := int(int32(binary.LittleEndian.Uint32(b[pos+prefix-4:])))
		if metaLen <= 0 || metaLen > end-pos-prefix || arrowfb.VerifyMessage(b[pos+prefix:pos+prefix+metaLen]) != nil {
			break
		}
		meta := b[pos+prefix : pos+prefix+metaLen]
		body := arrowfb.GetRootAsMessage(meta, 0).BodyLength()
		if body < 0 || body > int64(end-pos-prefix-metaLen) {
			break
		}
		out = append(out, Message{Offset: pos, Prefix: prefix, Meta: meta, Body: b[pos+prefix+metaLen : pos+prefix+metaLen+int(body)]})
		pos += prefix + metaLen + int(body)
	}
	return out, b[pos:]
}

// Scan returns the integer fields and metadata regions of b, a valid Arrow IPC stream or
// file (or a stream of Tensor and SparseTensor messages). It stops at the first message it
// cannot parse.
func Scan(b []byte) Input {
	var in Input
	if bytes.HasPrefix(b, []byte(fileMagic)) && len(b) >= 18 {
		footerLen := int(int32(binary.LittleEndian.Uint32(b[len(b)-10:])))
		in.Fields = append(in.Fields, Field{"footer length", len(b) - 10, 4})
		if end := len(b) - 10 - footerLen; footerLen > 0 && end >= 8 {
			in.footer(b[end:len(b)-10], end)
		}
	}
	msgs, _ := Messages(b)
	for _, m := range msgs {
		in.message(m)
	}
	return in
}

// message adds the fields and metadata of one message.
func (in *Input) message(msg Message) {
	name := fmt.Sprintf("message@%d", msg.Offset)
	base := msg.Offset + msg.Prefix
	in.Fields = append(in.Fields, Field{name + " metadata length", base - 4, 4})
	in.Metadata = append(in.Metadata, Region{name, base, len(msg.Meta)})
	m := arrowfb.GetRootAsMessage(msg.Meta, 0)
	in.scalar(m.Table(), 3, 8, base, name+" Message.bodyLength")
	var ht flatbuffers.Table
	m.Header(&ht)
	switch m.HeaderType() {
	case arrowfb.MessageHeaderRecordBatch:
		var rb arrowfb.RecordBatch
		rb.Init(ht.Bytes, ht.Pos)
		in.recordBatch(&rb, base, name+" RecordBatch")
	case arrowfb.MessageHeaderDictionaryBatch:
		var db arrowfb.DictionaryBatch
		db.Init(ht.Bytes, ht.Pos)
		in.scalar(db.Table(), 0, 8, base, name+" DictionaryBatch.id")
		var rb arrowfb.RecordBatch
		if db.Data(&rb) != nil {
			in.recordBatch(&rb, base, name+" DictionaryBatch.data")
		}
	case arrowfb.MessageHeaderSchema:
		var s arrowfb.Schema
		s.Init(ht.Bytes, ht.Pos)
		in.schema(&s, base, name+" Schema")
	}
}

// scalar adds the scalar in vtable slot of t, when present.
func (in *Input) scalar(t flatbuffers.Table, slot, size, base int, name string) {
	if o := t.Offset(flatbuffers.VOffsetT(4 + 2*slot)); o != 0 {
		in.Fields = append(in.Fields, Field{name, base + int(t.Pos) + int(o), size})
	}
}

// vector returns where the elements of the vector in slot start, and how many there are.
func vector(t flatbuffers.Table, slot int) (int, int) {
	o := t.Offset(flatbuffers.VOffsetT(4 + 2*slot))
	if o == 0 {
		return 0, 0
	}
	return int(t.Vector(flatbuffers.UOffsetT(o))), t.VectorLen(flatbuffers.UOffsetT(o))
}

func (in *Input) recordBatch(rb *arrowfb.RecordBatch, base int, name string) {
	t := rb.Table()
	in.scalar(t, 0, 8, base, name+".length")
	at, n := vector(t, 1)
	for i := range n {
		in.Fields = append(in.Fields,
			Field{fmt.Sprintf("%s.nodes[%d].length", name, i), base + at + 16*i, 8},
			Field{fmt.Sprintf("%s.nodes[%d].null_count", name, i), base + at + 16*i + 8, 8})
	}
	at, n = vector(t, 2)
	for i := range n {
		in.Fields = append(in.Fields,
			Field{fmt.Sprintf("%s.buffers[%d].offset", name, i), base + at + 16*i, 8},
			Field{fmt.Sprintf("%s.buffers[%d].length", name, i), base + at + 16*i + 8, 8})
	}
	at, n = vector(t, 4)
	for i := range n {
		in.Fields = append(in.Fields, Field{fmt.Sprintf("%s.variadicBufferCounts[%d]", name, i), base + at + 8*i, 8})
	}
}

// schema adds the sizes in the schema's types: fixed-size list lengths, fixed-size binary
// widths, integer and decimal bit widths, dictionary ids.
func (in *Input) schema(s *arrowfb.Schema, base int, name string) {
	for i := range s.FieldsLength() {
		var f arrowfb.Field
		s.Fields(&f, i)
		in.field(&f, base, fmt.Sprintf("%s.fields[%d]", name, i))
	}
}

func (in *Input) field(f *arrowfb.Field, base int, name string) {
	var tt flatbuffers.Table
	if f.Type(&tt) {
		switch f.TypeType() {
		case arrowfb.TypeFixedSizeList, arrowfb.TypeFixedSizeBinary, arrowfb.TypeInt:
			in.scalar(tt, 0, 4, base, name+".type[0]")
		case arrowfb.TypeTime:
			in.scalar(tt, 1, 4, base, name+".type.bitWidth")
		case arrowfb.TypeDecimal:
			in.scalar(tt, 2, 4, base, name+".type.bitWidth")
		}
	}
	var enc arrowfb.DictionaryEncoding
	if f.Dictionary(&enc) != nil {
		in.scalar(enc.Table(), 0, 8, base, name+".dictionary.id")
	}
	for i := range f.ChildrenLength() {
		var c arrowfb.Field
		f.Children(&c, i)
		in.field(&c, base, fmt.Sprintf("%s.children[%d]", name, i))
	}
}

// footer adds the blocks of a file's footer, at offset base of the input.
func (in *Input) footer(b []byte, base int) {
	if arrowfb.VerifyFooter(b) != nil {
		return
	}
	in.Metadata = append(in.Metadata, Region{"footer", base, len(b)})
	t := arrowfb.GetRootAsFooter(b, 0).Table()
	for slot, what := range []string{2: "dictionaries", 3: "recordBatches"} {
		if what == "" {
			continue
		}
		at, n := vector(t, slot)
		for i := range n {
			in.Fields = append(in.Fields,
				Field{fmt.Sprintf("footer.%s[%d].offset", what, i), base + at + 24*i, 8},
				Field{fmt.Sprintf("footer.%s[%d].metaDataLength", what, i), base + at + 24*i + 8, 4},
				Field{fmt.Sprintf("footer.%s[%d].bodyLength", what, i), base + at + 24*i + 16, 8})
		}
	}
	var s arrowfb.Schema
	if f := arrowfb.GetRootAsFooter(b, 0); f.Schema(&s) != nil {
		in.schema(&s, base, "footer.schema")
	}
}

// Set returns a copy of b with field f set to v (truncated to 4 bytes for a 4-byte field:
// a value past int32 becomes the largest int32).
func Set(b []byte, f Field, v int64) []byte {
	out := bytes.Clone(b)
	if f.Size == 4 {
		if v > math.MaxInt32 {
			v = math.MaxInt32
		}
		binary.LittleEndian.PutUint32(out[f.Offset:], uint32(int32(v)))
		return out
	}
	binary.LittleEndian.PutUint64(out[f.Offset:], uint64(v))
	return out
}

// Find returns the first field whose name ends with suffix, and whether there is one.
func (in Input) Find(suffix string) (Field, bool) {
	for _, f := range in.Fields {
		if len(f.Name) >= len(suffix) && f.Name[len(f.Name)-len(suffix):] == suffix {
			return f, true
		}
	}
	return Field{}, false
}

// Mutant is one changed copy of an input and what was changed.
type Mutant struct {
	What  string
	Bytes []byte
}

// All calls yield with every mutant of b: each integer field set to each of the Boundaries,
// and each metadata byte replaced by 0x00, 0xFF and itself plus one, until yield returns
// false.
func All(b []byte, yield func(Mutant) bool) {
	in := Scan(b)
	for _, f := range in.Fields {
		for _, v := range Boundaries {
			if !yield(Mutant{fmt.Sprintf("%s = %d", f.Name, v), Set(b, f, v)}) {
				return
			}
		}
	}
	for _, r := range in.Metadata {
		for i := r.Offset; i < r.Offset+r.Bytes; i++ {
			for _, v := range []byte{0x00, 0xFF, b[i] + 1} {
				if v == b[i] {
					continue
				}
				out := bytes.Clone(b)
				out[i] = v
				if !yield(Mutant{fmt.Sprintf("%s byte %d = %#x", r.Name, i, v), out}) {
					return
				}
			}
		}
	}
}
