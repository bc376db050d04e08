package ipc

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

// messagesOf splits an IPC stream into its messages' metadata and bodies, as Flight carries
// them; it stops at the first message it cannot frame.
func messagesOf(b []byte) (metas, bodies [][]byte) {
	for pos := int64(0); pos < int64(len(b)); {
		m, n, err := parseMessage(b[pos:], pos, DefaultLimits())
		if err != nil {
			break
		}
		metas = append(metas, m.meta.Table().Bytes)
		bodies = append(bodies, m.body)
		pos += n
	}
	return metas, bodies
}

// leafValues returns the bytes of the values a record's first column holds below its
// fixed-size lists, as Decode built them, and how many there are.
func leafValues(rec arrow.Record) ([]byte, bool) {
	var a arrow.Array = rec.Column(0)
	for {
		switch x := a.(type) {
		case array.ExtensionArray:
			a = x.Storage()
			continue
		case *array.FixedSizeList:
			a = x.ListValues()
			continue
		}
		break
	}
	width := 0
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		width = fw.BitWidth() / 8
	}
	if width == 0 || len(a.Data().Buffers()) < 2 || a.Data().Buffers()[1] == nil {
		return nil, false
	}
	b := a.Data().Buffers()[1].Bytes()
	from := a.Data().Offset() * width
	return b[from : from+a.Len()*width], true
}

// TestValuesSpan: the batches of one column of fixed-size lists (at any depth) of numbers
// without nulls are located, the span holding exactly the values Decode gives; any other
// message is left to Decode.
func TestValuesSpan(t *testing.T) {
	d := ndarray.New[float32](5, 3)
	for i := range d.Data() {
		d.Data()[i] = float32(i)
	}
	nested := arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16))
	two := func() []byte {
		a := record(t, "a", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), "[[1,2],[3,4]]")
		defer a.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: a.Schema().Field(0).Type}, {Name: "b", Type: a.Schema().Field(0).Type}}, nil)
		return writeRecords(t, false, []arrow.Record{array.NewRecord(schema, []arrow.Array{a.Column(0), a.Column(0)}, 2)})
	}
	one := func(name string, dt arrow.DataType, json string, opts ...arrowipc.Option) []byte {
		return writeRecords(t, false, []arrow.Record{record(t, name, dt, json)}, opts...)
	}
	for _, tc := range []struct {
		name   string
		stream []byte
		ok     bool
	}{
		{"fixed_shape_tensor", stream(t, d), true},
		{"nested fixed-size lists", one("n", nested, "[[[1,2,3],[4,5,6]],[[7,8,9],[10,11,12]]]"), true},
		{"numbers", one("i", arrow.PrimitiveTypes.Int64, "[1,2,3]"), true},
		{"a null row", one("n", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), "[[1,2],null]"), false},
		{"a null value", one("n", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), "[[1,null],[3,4]]"), false},
		{"bools", one("b", arrow.FixedSizeListOf(2, arrow.FixedWidthTypes.Boolean), "[[true,false],[false,true]]"), false},
		{"lists", one("l", arrow.ListOf(arrow.PrimitiveTypes.Int32), "[[1],[2,3]]"), false},
		{"strings", one("s", arrow.BinaryTypes.String, `["a","b"]`), false},
		{"compressed", one("z", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), "[[1,2],[3,4]]", arrowipc.WithZstd()), false},
		{"two columns", two(), false},
		{"dictionary", dictionaryStream(t), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			metas, bodies := messagesOf(tc.stream)
			spans, err := NewBatchDecoder(metas[0], BatchOptions{})
			require.NoError(t, err)
			defer spans.Release()
			dec, err := NewBatchDecoder(metas[0], BatchOptions{})
			require.NoError(t, err)
			defer dec.Release()
			located := 0
			for i := 1; i < len(metas); i++ {
				rows, off, n, ok, err := spans.ValuesSpan(metas[i], int64(len(bodies[i])))
				require.NoError(t, err)
				rec, err := dec.Decode(metas[i], bodies[i])
				require.NoError(t, err)
				if !ok {
					if rec != nil {
						rec.Release()
					}
					r, err := spans.Decode(metas[i], bodies[i]) // dictionaries and all
					require.NoError(t, err)
					if r != nil {
						r.Release()
					}
					continue
				}
				located++
				require.NotNil(t, rec)
				assert.Equal(t, rec.NumRows(), rows)
				want, _ := leafValues(rec)
				assert.Equal(t, want, bodies[i][off:off+n])
				rec.Release()
			}
			assert.Equal(t, tc.ok, located > 0 && located == len(metas)-1, "located %d of %d", located, len(metas)-1)
		})
	}

	metas, bodies := messagesOf(stream(t, d))
	dec, err := NewBatchDecoder(metas[0], BatchOptions{})
	require.NoError(t, err)
	defer dec.Release()
	_, _, _, ok, err := dec.ValuesSpan(metas[1], int64(len(bodies[1]))-1)
	assert.False(t, ok, "a body shorter than its metadata says is Decode's to refuse")
	assert.NoError(t, err)
	_, _, _, ok, err = dec.ValuesSpan(metas[1], int64(len(bodies[1])))
	assert.True(t, ok)
	assert.NoError(t, err)
	_, _, _, ok, err = dec.ValuesSpan([]byte("not a flatbuffer"), 100)
	assert.False(t, ok)
	assert.NoError(t, err)
	_, _, _, ok, _ = decoderWithin(t, metas[0], Limits{MaxElements: 2}).ValuesSpan(metas[1], int64(len(bodies[1])))
	assert.False(t, ok, "over the limits: Decode says so")
}

// decoderWithin returns a decoder of the schema meta within lim.
func decoderWithin(t *testing.T, meta []byte, lim Limits) *BatchDecoder {
	dec, err := NewBatchDecoder(meta, BatchOptions{Limits: lim})
	require.NoError(t, err)
	t.Cleanup(dec.Release)
	return dec
}

// FuzzValuesSpan compares ValuesSpan with Decode on every message of a stream: what ValuesSpan
// locates Decode decodes, to the same rows and exactly the values in the span; what it refuses
// Decode refuses.
func FuzzValuesSpan(f *testing.F) {
	d := ndarray.New[float32](7, 2, 2)
	for i := range d.Data() {
		d.Data()[i] = float32(i)
	}
	f.Add(stream(f, d))
	f.Add(streamRows(f, d, 3))
	f.Add(writeRecords(f, false, []arrow.Record{record(f, "n", arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Uint8)), "[[[1,2],[3,4]],[[5,6],[7,8]]]")}))
	f.Add(writeRecords(f, false, []arrow.Record{record(f, "n", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), "[[1,2],null]")}))
	for _, path := range integrationSeeds(f) {
		f.Add(mustRead(f, path))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		metas, bodies := messagesOf(b)
		if len(metas) == 0 {
			return
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		opts := BatchOptions{Allocator: mem, Limits: Limits{MaxElements: 1 << 20, MaxCopySize: 64 << 20}}
		spans, err := NewBatchDecoder(metas[0], opts)
		if err != nil {
			return
		}
		defer spans.Release()
		dec, err := NewBatchDecoder(metas[0], opts)
		require.NoError(t, err)
		defer dec.Release()
		for i := 1; i < len(metas); i++ {
			rows, off, n, ok, spanErr := spans.ValuesSpan(metas[i], int64(len(bodies[i])))
			rec, err := dec.Decode(metas[i], bodies[i])
			if spanErr != nil {
				assertSentinel(t, spanErr)
				require.Error(t, err, "ValuesSpan refused what Decode decodes: %v", spanErr)
				return
			}
			if !ok {
				if rec != nil {
					rec.Release()
				}
				r, err := spans.Decode(metas[i], bodies[i])
				if err != nil {
					return
				}
				if r != nil {
					r.Release()
				}
				continue
			}
			require.NoError(t, err, "ValuesSpan located a message Decode refuses")
			require.NotNil(t, rec)
			require.Equal(t, rec.NumRows(), rows)
			want, has := leafValues(rec)
			require.True(t, has)
			require.True(t, bytes.Equal(want, bodies[i][off:off+n]), "the span holds the values Decode gives")
			rec.Release()
		}
	})
}
