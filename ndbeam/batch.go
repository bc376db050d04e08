package ndbeam

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
)

// Batch is a record batch of a table's rows: the element of the PCollections Read gives and
// Write takes. Its Record is in Go memory (Beam does not release elements: nothing needs
// releasing); Source and First say where its rows came from, for a reader that wants them in
// order (Write orders its parts by them).
type Batch struct {
	Record arrow.Record
	Source string // the file or object the rows are of; "" for rows made in the pipeline
	// First is the row of Source the batch's first row is (for TFRecord, the byte its first
	// record starts at).
	First int64
}

// ErrBatch is wrapped by the error of a batch's encoding that does not decode.
var ErrBatch = errors.New("ndbeam: invalid batch encoding")

func init() {
	beam.RegisterType(reflect.TypeOf((*Batch)(nil)).Elem())
	beam.RegisterCoder(reflect.TypeOf((*Batch)(nil)).Elem(), encodeBatch, decodeBatch)
}

// batchMagic begins a batch's encoding: its version.
const batchMagic = "ndb1"

// batchLimits bound what one batch's encoding may make its decoder allocate (the limits'
// MaxCopySize: 4 GiB).
var batchLimits = limits.Default()

// encodeBatch is the coder of Batch: "ndb1", Source (its length as a uvarint, then its
// bytes), First (a varint), then the record as an Arrow IPC stream — the schema, the record
// batch, the end marker — which any Arrow implementation reads.
func encodeBatch(b Batch) ([]byte, error) {
	if b.Record == nil {
		return nil, fmt.Errorf("ndbeam: a batch without a record: %w", ErrBatch)
	}
	var buf bytes.Buffer
	buf.WriteString(batchMagic)
	buf.Write(binary.AppendUvarint(nil, uint64(len(b.Source))))
	buf.WriteString(b.Source)
	buf.Write(binary.AppendVarint(nil, b.First))
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(b.Record.Schema()))
	if err := w.Write(b.Record); err != nil {
		return nil, fmt.Errorf("ndbeam: encoding a batch of %s: %w", b.Source, err)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeBatch decodes what encodeBatch encoded, the record through ndarrow's verified
// decoder (ipc.ReadRecordBatches: every length, offset and count checked before anything is
// read), viewing data.
func decodeBatch(data []byte) (Batch, error) {
	rest, ok := bytes.CutPrefix(data, []byte(batchMagic))
	if !ok {
		return Batch{}, fmt.Errorf("%w: no %q", ErrBatch, batchMagic)
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k) {
		return Batch{}, fmt.Errorf("%w: its source's length", ErrBatch)
	}
	source := string(rest[k : k+int(n)])
	rest = rest[k+int(n):]
	first, k := binary.Varint(rest)
	if k <= 0 {
		return Batch{}, fmt.Errorf("%w: its first row", ErrBatch)
	}
	schema, recs, err := ipc.ReadRecordBatches(rest[k:], ipc.BatchOptions{Limits: batchLimits, Allocator: memory.NewGoAllocator()})
	if err != nil {
		return Batch{}, fmt.Errorf("ndbeam: a batch of %s: %w", source, err)
	}
	switch len(recs) {
	case 0:
		return Batch{Record: array.NewRecord(schema, emptyColumns(schema), 0), Source: source, First: first}, nil
	case 1:
		return Batch{Record: recs[0], Source: source, First: first}, nil
	}
	return Batch{}, fmt.Errorf("%w: %d record batches, not one", ErrBatch, len(recs))
}

// emptyColumns returns a column of no rows of each of schema's fields.
func emptyColumns(schema *arrow.Schema) []arrow.Array {
	out := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		out[i] = array.MakeArrayOfNull(memory.NewGoAllocator(), f.Type, 0)
	}
	return out
}
