package ipc

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ndarray"
)

// tensorAlignment is the boundary Arrow C++ aligns a dense tensor's body to: the prefix,
// metadata and padding of a Tensor message add up to a multiple of it.
const tensorAlignment = 64

// WriteTensor writes d to w as one encapsulated Arrow Tensor message, exactly as Arrow C++'s
// ipc::WriteTensor frames it: continuation marker, metadata length, V5 flatbuffer metadata
// with one name per dimension (empty when dimNames is nil) and strides in bytes, zero padding
// to a 64-byte boundary, then the values. A row-major or column-major array is written as it
// is, straight from its memory; any other layout is written as a row-major copy. WriteTensor
// fails with ErrUnsupported when dimNames is neither nil nor one name per dimension. Options
// add to the message (WithMetadata); without them the bytes are the ones C++ writes. It
// returns the bytes written.
func WriteTensor[T ndarray.Numeric](w io.Writer, d *ndarray.Dense[T], dimNames []string, opts ...WriteOption) (int64, error) {
	dtype := d.DType()
	if dimNames != nil && len(dimNames) != d.Rank() {
		return 0, fmt.Errorf("ipc: WriteTensor: %d dimension names for rank %d: %w", len(dimNames), d.Rank(), ErrUnsupported)
	}
	layout := d.Layout()
	order := ndarray.RowMajor(layout.Shape)
	values, ok := d.Contiguous()
	switch {
	case !ok:
		values = d.Clone().Data()
	case !layout.IsRowMajor():
		order = ndarray.ColumnMajor(layout.Shape)
	}
	strides := scaledStrides(order, int64(dtype.Size()))
	body := ndarray.LittleEndianBytes(values)
	meta := tensorMetadata(dtype, layout.Shape, dimNames, strides, int64(len(body)), writeConfigOf(opts))
	return writeMessage(w, meta, tensorAlignment, body)
}

// A WriteOption changes how WriteTensor and WriteSparse write a message.
type WriteOption func(*writeConfig)

// writeConfig is what the options of one write ask for.
type writeConfig struct {
	metadata arrow.Metadata
}

// writeConfigOf applies opts.
func writeConfigOf(opts []WriteOption) writeConfig {
	var c writeConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithMetadata writes md as the message's custom_metadata, key-value pairs that readers
// which do not know a key ignore (Arrow C++'s ReadTensor and ReadSparseTensor ignore them
// all); Tensor.Metadata and SparseTensor.Metadata read them back.
func WithMetadata(md arrow.Metadata) WriteOption {
	return func(c *writeConfig) { c.metadata = md }
}

// buildMessage finishes b with the Message of a header, with the custom metadata c asks for.
func buildMessage(b *flatbuffers.Builder, kind arrowfb.MessageHeader, header flatbuffers.UOffsetT, bodyLen int64, c writeConfig) []byte {
	var custom flatbuffers.UOffsetT
	if n := c.metadata.Len(); n > 0 {
		pairs := make([]flatbuffers.UOffsetT, n)
		for i, k := range c.metadata.Keys() {
			key, value := b.CreateString(k), b.CreateString(c.metadata.Values()[i])
			arrowfb.KeyValueStart(b)
			arrowfb.KeyValueAddKey(b, key)
			arrowfb.KeyValueAddValue(b, value)
			pairs[i] = arrowfb.KeyValueEnd(b)
		}
		arrowfb.MessageStartCustomMetadataVector(b, n)
		for i := n - 1; i >= 0; i-- {
			b.PrependUOffsetT(pairs[i])
		}
		custom = b.EndVector(n)
	}
	arrowfb.MessageStart(b)
	arrowfb.MessageAddVersion(b, arrowfb.MetadataVersionV5)
	arrowfb.MessageAddHeaderType(b, kind)
	arrowfb.MessageAddHeader(b, header)
	arrowfb.MessageAddBodyLength(b, bodyLen)
	if custom != 0 {
		arrowfb.MessageAddCustomMetadata(b, custom)
	}
	b.Finish(arrowfb.MessageEnd(b))
	return b.FinishedBytes()
}

// tensorMetadata builds the flatbuffer Message of a Tensor.
func tensorMetadata(dtype ndarray.DType, shape ndarray.Shape, names []string, strides []int64, bodyLen int64, c writeConfig) []byte {
	b := flatbuffers.NewBuilder(256)
	typeType, typeOff := buildType(b, dtype)
	shapeOff := buildDims(b, shape, names)
	arrowfb.TensorStartStridesVector(b, len(strides))
	for i := len(strides) - 1; i >= 0; i-- {
		b.PrependInt64(strides[i])
	}
	stridesOff := b.EndVector(len(strides))

	arrowfb.TensorStart(b)
	arrowfb.TensorAddTypeType(b, typeType)
	arrowfb.TensorAddType(b, typeOff)
	arrowfb.TensorAddShape(b, shapeOff)
	arrowfb.TensorAddStrides(b, stridesOff)
	arrowfb.TensorAddData(b, arrowfb.CreateBuffer(b, 0, bodyLen))
	return buildMessage(b, arrowfb.MessageHeaderTensor, arrowfb.TensorEnd(b), bodyLen, c)
}

// buildType adds the Arrow type of a numeric dtype to b.
func buildType(b *flatbuffers.Builder, d ndarray.DType) (arrowfb.Type, flatbuffers.UOffsetT) {
	if d.IsFloat() {
		precision := map[ndarray.DType]arrowfb.Precision{
			ndarray.Float16: arrowfb.PrecisionHALF, ndarray.Float32: arrowfb.PrecisionSINGLE, ndarray.Float64: arrowfb.PrecisionDOUBLE,
		}[d]
		arrowfb.FloatingPointStart(b)
		arrowfb.FloatingPointAddPrecision(b, precision)
		return arrowfb.TypeFloatingPoint, arrowfb.FloatingPointEnd(b)
	}
	arrowfb.IntStart(b)
	arrowfb.IntAddBitWidth(b, int32(8*d.Size()))
	arrowfb.IntAddIsSigned(b, d.IsSigned())
	return arrowfb.TypeInt, arrowfb.IntEnd(b)
}

// writeMessage frames meta and the body, the concatenation of parts, as an encapsulated
// message whose body starts on an alignment boundary, and writes it with one call to w for the
// prefix and metadata and one per part, straight from the parts' memory.
func writeMessage(w io.Writer, meta []byte, alignment int, parts ...[]byte) (int64, error) {
	padded := len(meta)
	if rem := (8 + padded) % alignment; rem != 0 {
		padded += alignment - rem
	}
	head := make([]byte, 8+padded)
	binary.LittleEndian.PutUint32(head, continuation)
	binary.LittleEndian.PutUint32(head[4:], uint32(padded))
	copy(head[8:], meta)
	n, err := w.Write(head)
	total := int64(n)
	for _, p := range parts {
		if err != nil {
			break
		}
		if len(p) > 0 {
			n, err = w.Write(p)
			total += int64(n)
		}
	}
	if err != nil {
		return total, fmt.Errorf("ipc: writing a message: %w", err)
	}
	return total, nil
}

// WriteMessageMetadata writes the start of an encapsulated message: the continuation marker,
// the length of meta padded to 8 bytes, and meta so padded. The caller writes its body after.
func WriteMessageMetadata(w io.Writer, meta []byte) error {
	_, err := writeMessage(w, meta, 8)
	return err
}

// WriteEndOfStream writes the end-of-stream marker (0xFFFFFFFF 0x00000000) that tells a
// stream reader no message follows.
func WriteEndOfStream(w io.Writer) error {
	var eos [8]byte
	binary.LittleEndian.PutUint32(eos[:], continuation)
	if _, err := w.Write(eos[:]); err != nil {
		return fmt.Errorf("ipc: writing the end-of-stream marker: %w", err)
	}
	return nil
}
