package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/float16"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
)

func TestReadRecordBatchesGolden(t *testing.T) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b, err := os.ReadFile(filepath.Join(goldenDir, name))
			require.NoError(t, err)
			schema, recs, err := ReadRecordBatches(b, mem)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			assert.Equal(t, 5, schema.NumFields())
			col, ok := recs[0].Column(0).(*arrowtensor.FixedShapeTensorArray)
			require.True(t, ok, "tensor columns come back as extension arrays")
			d, err := arrowtensor.ToDense[float32](col)
			require.NoError(t, err)
			assert.Equal(t, ndarray.Shape{4, 2, 3}, d.Shape())
			for _, r := range recs {
				r.Release()
			}
		})
	}
}

// stream writes d as a fixed_shape_tensor column in an IPC stream, two rows a batch.
func stream(t testing.TB, d *ndarray.Dense[float32]) []byte { return streamRows(t, d, 2) }

// streamRows writes d as a fixed_shape_tensor column in an IPC stream, rows rows a batch.
func streamRows(t testing.TB, d *ndarray.Dense[float32], rows int64) []byte {
	recs, err := arrowtensor.Records("x", d, nil, rows)
	require.NoError(t, err)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestReadRecordBatchesBadInput(t *testing.T) {
	good := stream(t, ndarray.New[float32](5, 3))
	// The first record batch message follows the schema message; make its body claim 1 GiB.
	_, n, err := parseMessage(good, 0, DefaultLimits())
	require.NoError(t, err)
	m, _, err := parseMessage(good[n:], n, DefaultLimits())
	require.NoError(t, err)
	huge := append([]byte(nil), good...)
	metaLen := int64(binary.LittleEndian.Uint32(huge[n+4:]))
	meta := huge[n+8 : n+8+metaLen]
	// Patch bodyLength in place: find the 8-byte little-endian value equal to the real one.
	real := make([]byte, 8)
	binary.LittleEndian.PutUint64(real, uint64(len(m.body)))
	at := bytes.Index(meta, real)
	require.GreaterOrEqual(t, at, 0)
	binary.LittleEndian.PutUint64(meta[at:], 1<<30)

	fileMagicThenJunk := []byte("ARROW1\x00\x00junkjunkjunkARROW1")
	for name, tc := range map[string]struct {
		input []byte
		err   error
	}{
		"garbage":              {[]byte("definitely not arrow"), ErrLimit},
		"truncated":            {good[:len(good)/2], io.ErrUnexpectedEOF},
		"body claiming 1 GiB":  {huge, io.ErrUnexpectedEOF},
		"file magic then junk": {fileMagicThenJunk, ErrInvalid},
		"file magic alone":     {[]byte("ARROW1"), ErrInvalid},
		"empty":                {nil, ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema, recs, err := ReadRecordBatches(tc.input, mem)
			assert.Nil(t, schema)
			assert.Nil(t, recs)
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// FuzzRecordBatches reads arbitrary bytes as record batches and every tensor column of them
// as a Dense: no panic escapes, nothing is allocated beyond the budget, and every value of an
// accepted column is readable.
func FuzzRecordBatches(f *testing.F) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(stream(f, ndarray.New[float32](5, 3)))
	f.Add([]byte("ARROW1\x00\x00junkjunkjunkARROW1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if cols, err := ReadTensorColumns(b); err == nil {
			for _, c := range cols {
				for _, chunk := range c.Chunks {
					readColumn(t, c.Type.ValueType(), chunk)
				}
				c.Release()
			}
		} else if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("ReadTensorColumns: error without a sentinel: %v", err)
		}
		schema, recs, err := ReadRecordBatches(b, memory.NewGoAllocator())
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		for c, field := range schema.Fields() {
			typ, ok := field.Type.(*arrowtensor.FixedShapeTensorType)
			if !ok {
				continue
			}
			for _, rec := range recs {
				col, ok := rec.Column(c).(*arrowtensor.FixedShapeTensorArray)
				if !ok {
					continue
				}
				readColumn(t, typ.ValueType(), col)
			}
		}
	})
}

// readColumn views a tensor column as a Dense of its type and reads every value.
func readColumn(t *testing.T, dt arrow.DataType, col *arrowtensor.FixedShapeTensorArray) {
	var err error
	switch dt.ID() {
	case arrow.FLOAT32:
		err = readAll[float32](col)
	case arrow.FLOAT64:
		err = readAll[float64](col)
	case arrow.FLOAT16:
		err = readAll[float16.Num](col)
	case arrow.INT64:
		err = readAll[int64](col)
	case arrow.INT32:
		err = readAll[int32](col)
	case arrow.INT8:
		err = readAll[int8](col)
	default:
		return
	}
	if err != nil && !errors.Is(err, arrowtensor.ErrUnsupported) {
		t.Fatalf("reading a tensor column: %v", err)
	}
}

func readAll[T ndarray.Numeric](col *arrowtensor.FixedShapeTensorArray) error {
	d, err := arrowtensor.ToDense[T](col)
	if err != nil {
		return err
	}
	_, err = d.WriteTo(io.Discard)
	return err
}

func TestTensorReaderRefusesRecordBatches(t *testing.T) {
	_, err := NewBytesReader(stream(t, ndarray.New[float32](2, 2)), Limits{}).Next()
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "a Schema message is not a tensor")
}

// TestDeeplyNestedSchemaIsRefused builds a stream whose one column is a list nested 100 deep,
// which arrow-go writes happily; its reader would recurse as deep, so the verifier stops it.
func TestDeeplyNestedSchemaIsRefused(t *testing.T) {
	var typ arrow.DataType = arrow.PrimitiveTypes.Int8
	for range 100 {
		typ = arrow.ListOf(typ)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "deep", Type: typ, Nullable: true}}, nil)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	require.NoError(t, w.Close())
	_, _, err := ReadRecordBatches(buf.Bytes(), nil)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "fields nested more than 64 deep")
}
