package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/internal/mutate"
	"github.com/ndarrow/ndarrow/ndarray"
)

// stream writes d as a fixed_shape_tensor column in an IPC stream, two rows a batch.
func stream(t testing.TB, d *ndarray.Dense[float32]) []byte { return streamRows(t, d, 2) }

// streamRows writes d as a fixed_shape_tensor column in an IPC stream, rows rows a batch.
func streamRows(t testing.TB, d *ndarray.Dense[float32], rows int64) []byte {
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "x", d, nil, rows)
	require.NoError(t, err)
	return writeRecords(t, false, recs)
}

// writeRecords writes records (releasing them) with arrow-go's writer: a file or a stream.
func writeRecords(t testing.TB, file bool, recs []arrow.Record, opts ...arrowipc.Option) []byte {
	var buf bytes.Buffer
	opts = append(opts, arrowipc.WithSchema(recs[0].Schema()))
	if file {
		var ws seekBuffer
		w, err := arrowipc.NewFileWriter(&ws, opts...)
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, w.Write(r))
			r.Release()
		}
		require.NoError(t, w.Close())
		return ws.b
	}
	w := arrowipc.NewWriter(&buf, opts...)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// seekBuffer is an in-memory io.WriteSeeker, which arrow-go's file writer needs.
type seekBuffer struct {
	b   []byte
	pos int
}

func (s *seekBuffer) Write(p []byte) (int, error) {
	if end := s.pos + len(p); end > len(s.b) {
		s.b = append(s.b, make([]byte, end-len(s.b))...)
	}
	s.pos += copy(s.b[s.pos:], p)
	return len(p), nil
}

func (s *seekBuffer) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		s.pos = int(offset)
	case io.SeekCurrent:
		s.pos += int(offset)
	case io.SeekEnd:
		s.pos = len(s.b) + int(offset)
	}
	return int64(s.pos), nil
}

// record builds a one-column record from JSON, as arrow-go's array.FromJSON reads it.
func record(t testing.TB, name string, dt arrow.DataType, json string) arrow.Record {
	arr, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(json))
	require.NoError(t, err)
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len()))
}

func TestReadRecordBatchesGoldenZeroCopy(t *testing.T) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		t.Run(name, func(t *testing.T) {
			m, err := mmap.Open(filepath.Join(goldenDir, name))
			require.NoError(t, err)
			defer m.Release()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)

			schema, recs, err := ReadRecordBatches(m.Bytes(), BatchOptions{Allocator: mem})
			require.NoError(t, err)
			defer releaseAll(recs)
			require.Len(t, recs, 1)
			assert.Equal(t, []string{"images", "perm", "tokens", "ids", "nested"}, fieldNames(schema))
			assert.Zero(t, mem.CurrentAlloc(), "nothing is copied from a little-endian, uncompressed input")

			theirSchema, theirs := arrowGoRecords(t, m.Bytes())
			defer releaseAll(theirs)
			assert.True(t, schema.Equal(theirSchema))
			assert.True(t, array.RecordEqual(recs[0], theirs[0]), "the values are arrow-go's")

			images, ok := recs[0].Column(0).(*arrowtensor.FixedShapeTensorArray)
			require.True(t, ok, "tensor columns come back as extension arrays")
			d, err := arrowtensor.ToDense[float32](images)
			require.NoError(t, err)
			assert.Equal(t, ndarray.Shape{4, 2, 3}, d.Shape())
			assert.True(t, within(&d.Data()[0], m.Bytes()), "tensor values point into the mapped file")

			tokens := recs[0].Column(2).(*array.List)
			assert.True(t, within(&tokens.Offsets()[0], m.Bytes()), "list offsets point into the mapped file")
			values := tokens.ListValues().(*array.Float32).Float32Values()
			assert.True(t, within(&values[0], m.Bytes()), "list values point into the mapped file")
			ids := recs[0].Column(3).(*array.LargeList)
			assert.True(t, within(&ids.Offsets()[0], m.Bytes()), "large_list offsets too")
		})
	}
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// TestTensorColumnAcrossBatches writes a tensor in several batches with a string and a list
// column before it, and reads every chunk as a view of the mapped file.
func TestTensorColumnAcrossBatches(t *testing.T) {
	d := ndarray.New[float64](5, 2, 3)
	for i := range d.Data() {
		d.Data()[i] = float64(i)
	}
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "t", d, []string{"a", "b"}, 2)
	require.NoError(t, err)
	var withOthers []arrow.Record
	for _, r := range recs {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32)
		for i := range r.NumRows() {
			sb.Append(string(rune('a' + i)))
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{int32(i), 7}, nil)
		}
		sa, la := sb.NewArray(), lb.NewArray()
		sb.Release()
		lb.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: sa.DataType()}, {Name: "l", Type: la.DataType()}, r.Schema().Field(0)}, nil)
		withOthers = append(withOthers, array.NewRecord(schema, []arrow.Array{sa, la, r.Column(0)}, r.NumRows()))
		sa.Release()
		la.Release()
		r.Release()
	}
	path := filepath.Join(t.TempDir(), "x.arrows")
	require.NoError(t, os.WriteFile(path, writeRecords(t, false, withOthers), 0o644))
	m, err := mmap.Open(path)
	require.NoError(t, err)
	defer m.Release()

	r, err := NewBatchReader(m.Bytes(), BatchOptions{})
	require.NoError(t, err)
	defer r.Release()
	var got []float64
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		part, err := arrowtensor.ToDense[float64](rec.Column(2).(*arrowtensor.FixedShapeTensorArray))
		require.NoError(t, err)
		assert.True(t, within(&part.Data()[0], m.Bytes()))
		got = append(got, slices.Collect(part.Values())...)
		rec.Release()
	}
	assert.Equal(t, d.Data(), got)
	assert.Equal(t, []string{"a", "b"}, r.Schema().Field(2).Type.(*arrowtensor.FixedShapeTensorType).DimNames())
	_, err = r.Next()
	assert.ErrorIs(t, err, io.EOF, "the end stays the end")
}

func TestReadSchema(t *testing.T) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		require.NoError(t, err)
		schema, err := ReadSchema(b, BatchOptions{})
		require.NoError(t, err)
		assert.Equal(t, 5, schema.NumFields())
		_, ok := schema.Field(0).Type.(*arrowtensor.FixedShapeTensorType)
		assert.True(t, ok)
	}
	_, err := ReadSchema([]byte("nope"), BatchOptions{})
	assert.ErrorIs(t, err, ErrLimit, "four ASCII letters read as a huge metadata length")
}

// TestSchemaOnlyStreamHasNoBatches: a stream of a schema and the end-of-stream marker (what a
// writer closed before any batch writes) reads as no records, not an error.
func TestSchemaOnlyStreamHasNoBatches(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)}}, nil)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	require.NoError(t, w.Close())
	got, recs, err := ReadRecordBatches(buf.Bytes(), BatchOptions{})
	require.NoError(t, err)
	assert.Empty(t, recs)
	assert.True(t, got.Equal(schema))
}

func TestBadInputGivesSentinels(t *testing.T) {
	good := stream(t, ndarray.New[float32](5, 3))
	var bodyOfBatch mutate.Field
	for _, f := range mutate.Scan(good).Fields {
		if strings.HasSuffix(f.Name, "Message.bodyLength") {
			bodyOfBatch = f // the last one: a record batch's
		}
	}
	file := writeRecords(t, true, []arrow.Record{record(t, "x", arrow.PrimitiveTypes.Int32, "[1, 2, 3]")})
	for name, tc := range map[string]struct {
		input []byte
		err   error
		text  string
	}{
		"garbage":              {[]byte("definitely not arrow"), ErrLimit, "metadata length"},
		"truncated":            {good[:len(good)/2], io.ErrUnexpectedEOF, "input ends inside"},
		"body claiming 1 GiB":  {mutate.Set(good, bodyOfBatch, 1<<30), io.ErrUnexpectedEOF, "body"},
		"file magic then junk": {[]byte("ARROW1\x00\x00junkjunkjunkARROW1"), ErrInvalid, "footer length"},
		"file magic alone":     {[]byte("ARROW1"), io.ErrUnexpectedEOF, "does not end with its footer"},
		"file cut short":       {file[:len(file)-3], io.ErrUnexpectedEOF, "does not end with its footer"},
		"empty":                {nil, io.ErrUnexpectedEOF, "empty input"},
		"end-of-stream only":   {[]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, ErrInvalid, "before its schema"},
		"tensor messages":      {mustRead(t, filepath.Join(goldenDir, "dense_float_rank3.tensor")), ErrInvalid, "starts with a schema"},
	} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema, recs, err := ReadRecordBatches(tc.input, BatchOptions{Allocator: mem})
			assert.Nil(t, schema)
			assert.Nil(t, recs)
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.text)
		})
	}
}

func mustRead(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestFieldChecks changes one field of valid input at a time — the hostile peer —
// and checks that the decoder names what is wrong before arrow-go sees it.
func TestFieldChecks(t *testing.T) {
	list := writeRecords(t, false, []arrow.Record{record(t, "l", arrow.ListOf(arrow.PrimitiveTypes.Int16), `[[1, 2], null, [3], []]`)})
	dict := dictionaryStream(t)
	dictFile := dictionaryFile(t)
	for _, tc := range []struct {
		name  string
		input []byte
		field string
		value int64
		err   error
		text  string
	}{
		{"a list length near MaxInt64", list, "RecordBatch.nodes[0].length", math.MaxInt64, ErrLimit, "length 9223372036854775807"},
		{"a batch length near MaxInt64", list, "RecordBatch.length", math.MaxInt64 - 1, ErrLimit, "rows"},
		{"a negative child length", list, "RecordBatch.nodes[1].length", -1, ErrInvalid, "length -1"},
		{"a null count above the length", list, "RecordBatch.nodes[0].null_count", 5, ErrInvalid, "null count 5 for length 4"},
		{"a null count the bitmap does not have", list, "RecordBatch.nodes[0].null_count", 2, ErrInvalid, "validity bitmap has 1 nulls"},
		{"a validity bitmap too short", list, "RecordBatch.buffers[0].length", 0, ErrInvalid, "validity bitmap of 0 bytes for 4 values"},
		{"a buffer past the body", list, "RecordBatch.buffers[1].offset", 1 << 31, ErrInvalid, "lies outside a body"},
		{"a buffer length overflowing", list, "RecordBatch.buffers[1].length", math.MaxInt64, ErrInvalid, "lies outside a body"},
		{"offsets too short", list, "RecordBatch.buffers[1].length", 8, ErrInvalid, "offsets buffer of 8 bytes for 5 values"},
		{"a child shorter than its offsets", list, "RecordBatch.nodes[1].length", 2, ErrInvalid, "past the 2 child values"},
		{"a batch longer than its columns", list, "RecordBatch.length", 3, ErrInvalid, "has 4 values in a batch of 3 rows"},
		{"a dictionary index out of range", dict, "DictionaryBatch.data.nodes[0].length", 1, ErrInvalid, "outside dictionary"},
		{"an unknown dictionary id", dictFile, "DictionaryBatch.id", 99, ErrInvalid, "dictionary 99, which no field uses"},
		{"a footer block past the footer", dictFile, "footer.recordBatches[0].bodyLength", 1 << 31, ErrInvalid, "outside bytes"},
		{"a footer block at a negative offset", dictFile, "footer.recordBatches[0].offset", -1, ErrInvalid, "outside bytes"},
		{"a footer block whose metadata length lies", dictFile, "footer.recordBatches[0].metaDataLength", 8, ErrInvalid, "cuts its message short"},
		{"a dictionary block past the file", dictFile, "footer.dictionaries[0].bodyLength", math.MaxInt64, ErrInvalid, "outside bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := mutate.Scan(tc.input).Find(tc.field)
			require.True(t, ok, "no field %s", tc.field)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, recs, err := ReadRecordBatches(mutate.Set(tc.input, f, tc.value), BatchOptions{Allocator: mem})
			assert.Nil(t, recs)
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.text)
		})
	}
}

// dictionaryStream writes a dictionary-encoded string column (dictionary id 0) in a stream of
// two batches, the second adding a value by a delta.
func dictionaryStream(t testing.TB) []byte {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	b := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	var recs []arrow.Record
	for _, batch := range [][]string{{"a", "b", "a"}, {"b", "c", ""}} {
		for _, s := range batch {
			if s == "" {
				b.AppendNull()
			} else {
				require.NoError(t, b.AppendString(s))
			}
		}
		arr := b.NewArray()
		schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
		recs = append(recs, array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len())))
		arr.Release()
	}
	return writeRecords(t, false, recs, arrowipc.WithDictionaryDeltas(true))
}

// dictionaryFile writes a file of one batch of two dictionary-encoded columns, dictionaries 0
// (strings) and 1 (more strings).
func dictionaryFile(t testing.TB) []byte {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	var cols []arrow.Array
	for _, values := range [][]string{{"a", "b", "a"}, {"x", "x", "y"}} {
		b := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.BinaryDictionaryBuilder)
		for _, v := range values {
			require.NoError(t, b.AppendString(v))
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}, {Name: "e", Type: dt, Nullable: true}}, nil)
	rec := array.NewRecord(schema, cols, 3)
	for _, c := range cols {
		c.Release()
	}
	return writeRecords(t, true, []arrow.Record{rec})
}

func TestDictionaries(t *testing.T) {
	for name, tc := range map[string]struct {
		input []byte
		want  []string
	}{
		"a stream with a delta": {dictionaryStream(t), []string{"a", "b", "a", "b", "c", "(null)"}},
		"a file":                {dictionaryFile(t), []string{"a", "b", "a", "x", "x", "y"}},
	} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, recs, err := ReadRecordBatches(tc.input, BatchOptions{Allocator: mem})
			require.NoError(t, err)
			defer releaseAll(recs)
			var got []string
			for _, r := range recs {
				for _, col := range r.Columns() {
					for i := range col.Len() {
						got = append(got, col.ValueStr(i))
					}
				}
			}
			assert.Equal(t, tc.want, got)
			_, theirs := arrowGoRecords(t, tc.input)
			defer releaseAll(theirs)
			for i := range recs {
				assert.True(t, array.RecordEqual(recs[i], theirs[i]))
			}
		})
	}

	// A stream may replace a dictionary; a file may not: its batches share one. Give the
	// file's second dictionary (id 1; id 0 is the flatbuffer default, not written) the first's.
	file := dictionaryFile(t)
	id, ok := mutate.Scan(file).Find("DictionaryBatch.id")
	require.True(t, ok)
	_, _, err := ReadRecordBatches(mutate.Set(file, id, 0), BatchOptions{})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "replaced in a file")
}

// TestDictionaryReplacement: a non-delta dictionary batch replaces the dictionary in a
// stream, so the batches after it decode with the new values.
func TestDictionaryReplacement(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Float64}
	var recs []arrow.Record
	for _, values := range [][]float64{{1, 2}, {30, 40}} {
		b := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.Float64DictionaryBuilder)
		for _, v := range values {
			require.NoError(t, b.Append(v))
		}
		arr := b.NewArray()
		b.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
		recs = append(recs, array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len())))
		arr.Release()
	}
	b := writeRecords(t, false, recs)
	_, got, err := ReadRecordBatches(b, BatchOptions{})
	require.NoError(t, err)
	defer releaseAll(got)
	require.Len(t, got, 2)
	assert.Equal(t, "40", got[1].Column(0).ValueStr(1))
}

// TestCompressedBodies reads LZ4 and ZSTD bodies that arrow-go writes, checks the copies come
// from the options' allocator and are released, and that a declared length the codec cannot
// reach, or beyond the limits, is refused before anything is allocated.
func TestCompressedBodies(t *testing.T) {
	d := ndarray.New[float32](64, 4, 4) // zeros compress well
	for _, codec := range []struct {
		name string
		opt  arrowipc.Option
	}{{"lz4", arrowipc.WithLZ4()}, {"zstd", arrowipc.WithZstd()}} {
		t.Run(codec.name, func(t *testing.T) {
			recs, err := arrowtensor.Records(memory.DefaultAllocator, "x", d, nil, 32)
			require.NoError(t, err)
			b := writeRecords(t, false, recs, codec.opt)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, got, err := ReadRecordBatches(b, BatchOptions{Allocator: mem})
			require.NoError(t, err)
			require.Len(t, got, 2)
			assert.Positive(t, mem.CurrentAlloc(), "decompressed buffers are allocated")
			for _, r := range got {
				v, err := arrowtensor.ToDense[float32](r.Column(0).(*arrowtensor.FixedShapeTensorArray))
				require.NoError(t, err)
				assert.Equal(t, ndarray.Shape{32, 4, 4}, v.Shape())
			}
			releaseAll(got)

			_, _, err = ReadRecordBatches(b, BatchOptions{Allocator: mem, Limits: Limits{MaxCopySize: 1000}})
			assert.ErrorIs(t, err, ErrLimit, "the copies count against MaxCopySize")

			// Claim a huge uncompressed length in the first compressed buffer of a batch.
			huge := bytes.Clone(b)
			at := firstCompressedBuffer(t, huge)
			binary.LittleEndian.PutUint64(huge[at:], 1<<40)
			_, _, err = ReadRecordBatches(huge, BatchOptions{Allocator: mem})
			assert.ErrorIs(t, err, ErrLimit)
			binary.LittleEndian.PutUint64(huge[at:], 1<<33)
			_, _, err = ReadRecordBatches(huge, BatchOptions{Allocator: mem})
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, "compressed bytes cannot hold")
		})
	}
}

// firstCompressedBuffer returns where, in stream b, the uncompressed-length prefix of the
// first buffer of the first record batch that holds more than the prefix is.
func firstCompressedBuffer(t *testing.T, b []byte) int {
	for pos := int64(0); ; {
		m, n, err := parseMessage(b[pos:], pos, DefaultLimits())
		require.NoError(t, err)
		bodyStart := int(pos + n - int64(len(m.body)))
		pos += n
		if m.meta.HeaderType() != arrowfb.MessageHeaderRecordBatch {
			continue
		}
		var tbl flatbuffers.Table
		m.meta.Header(&tbl)
		var rb arrowfb.RecordBatch
		rb.Init(tbl.Bytes, tbl.Pos)
		var buf arrowfb.Buffer
		for i := range rb.BuffersLength() {
			rb.Buffers(&buf, i)
			if buf.Length() > 8 {
				return bodyStart + int(buf.Offset())
			}
		}
		t.Fatal("no compressed buffer")
	}
}

// TestMisalignedBuffersAreCopied: a record batch whose input starts one byte past an 8-byte
// boundary gives the same values, in copies (arrow-go reads values through typed pointers,
// which must be aligned).
func TestMisalignedBuffersAreCopied(t *testing.T) {
	good := writeRecords(t, false, []arrow.Record{record(t, "x", arrow.PrimitiveTypes.Float64, "[1.5, 2.5, 3.5]")})
	shifted := make([]byte, len(good)+1)
	copy(shifted[1:], good)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, recs, err := ReadRecordBatches(shifted[1:], BatchOptions{Allocator: mem})
	require.NoError(t, err)
	defer releaseAll(recs)
	values := recs[0].Column(0).(*array.Float64).Float64Values()
	assert.Equal(t, []float64{1.5, 2.5, 3.5}, values)
	assert.Zero(t, uintptr(unsafe.Pointer(&values[0]))%8, "the copy is aligned")
	assert.False(t, within(&values[0], shifted))
}

// TestUnsupportedColumns: a column of a type the decoder builds no arrays for is refused with
// ErrUnsupported naming it, or skipped with SkipUnsupported while the others are read.
func TestUnsupportedColumns(t *testing.T) {
	ree := arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32)
	b := array.NewRunEndEncodedBuilder(memory.DefaultAllocator, ree.RunEnds(), ree.Encoded())
	b.Append(3)
	b.ValueBuilder().(*array.Float32Builder).Append(7)
	runs := b.NewArray()
	b.Release()
	ints, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int8, strings.NewReader("[1, 2, 3]"))
	require.NoError(t, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "runs", Type: ree}, {Name: "i", Type: arrow.PrimitiveTypes.Int8}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{runs, ints}, 3)
	runs.Release()
	ints.Release()
	input := writeRecords(t, false, []arrow.Record{rec})

	_, _, err = ReadRecordBatches(input, BatchOptions{})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, `column "runs": run-end encoded`)

	got, recs, err := ReadRecordBatches(input, BatchOptions{SkipUnsupported: true})
	require.NoError(t, err)
	defer releaseAll(recs)
	assert.Equal(t, []string{"i"}, fieldNames(got))
	assert.Equal(t, "[1 2 3]", recs[0].Column(0).String())
}

// TestBatchDecoderReadsFlightData decodes messages as Flight carries them: metadata and body
// apart, the body views the bytes given.
func TestBatchDecoderReadsFlightData(t *testing.T) {
	d := ndarray.New[float32](4, 3)
	for i := range d.Data() {
		d.Data()[i] = float32(i)
	}
	b := streamRows(t, d, 2)
	var metas, bodies [][]byte
	for pos := int64(0); ; {
		m, n, err := parseMessage(b[pos:], pos, DefaultLimits())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		metas = append(metas, m.meta.Table().Bytes)
		bodies = append(bodies, m.body)
		pos += n
	}
	require.Len(t, metas, 3)
	dec, err := NewBatchDecoder(metas[0], BatchOptions{})
	require.NoError(t, err)
	defer dec.Release()
	var got []float32
	for i := 1; i < len(metas); i++ {
		rec, err := dec.Decode(metas[i], bodies[i])
		require.NoError(t, err)
		part, err := arrowtensor.ToDense[float32](rec.Column(0).(*arrowtensor.FixedShapeTensorArray))
		require.NoError(t, err)
		assert.True(t, within(&part.Data()[0], bodies[i]), "values view the body given")
		got = append(got, slices.Collect(part.Values())...)
		rec.Release()
	}
	assert.Equal(t, d.Data(), got)

	_, err = dec.Decode(metas[1], bodies[1][:8])
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "came")
	_, err = NewBatchDecoder(metas[1], BatchOptions{})
	assert.ErrorIs(t, err, ErrInvalid, "a decoder starts with a schema")
	_, err = dec.Decode(metas[0], nil)
	assert.ErrorContains(t, err, "a second schema")
}

func TestTensorReaderRefusesRecordBatches(t *testing.T) {
	_, err := NewBytesReader(stream(t, ndarray.New[float32](2, 2)), Limits{}).Next()
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "a Schema message is not a tensor")
}

// TestDeeplyNestedSchemaIsRefused builds a stream whose one column is a list nested 100 deep,
// which arrow-go writes happily; a reader would recurse as deep, so the verifier stops it.
func TestDeeplyNestedSchemaIsRefused(t *testing.T) {
	var typ arrow.DataType = arrow.PrimitiveTypes.Int8
	for range 100 {
		typ = arrow.ListOf(typ)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "deep", Type: typ, Nullable: true}}, nil)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	require.NoError(t, w.Close())
	_, _, err := ReadRecordBatches(buf.Bytes(), BatchOptions{})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "fields nested more than 64 deep")
}

// TestSentinelText: the sentinels read as one phrase each, and still match arrow's.
func TestSentinelText(t *testing.T) {
	assert.Equal(t, "invalid Arrow IPC input", ErrInvalid.Error())
	assert.ErrorIs(t, ErrInvalid, arrow.ErrInvalid)
	assert.Equal(t, "Arrow IPC input exceeds a limit", ErrLimit.Error())
}

// FuzzRecordBatches reads arbitrary bytes as record batches, with and without skipping
// unsupported columns: no panic escapes, every error wraps a sentinel, nothing leaks, and
// every value of an accepted record is readable and survives a round trip through
// arrow-go's writer.
func FuzzRecordBatches(f *testing.F) {
	for _, name := range []string{"batch_tensors.arrow", "batch_tensors.arrows"} {
		f.Add(mustRead(f, filepath.Join(goldenDir, name)))
	}
	f.Add(stream(f, ndarray.New[float32](5, 3)))
	f.Add(dictionaryStream(f))
	f.Add(dictionaryFile(f))
	f.Add([]byte("ARROW1\x00\x00junkjunkjunkARROW1"))
	for _, path := range append(integrationSeeds(f), crashFiles(f)...) {
		f.Add(mustRead(f, path))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		lim := Limits{MaxElements: 1 << 20, MaxCopySize: 64 << 20}
		for _, skip := range []bool{false, true} {
			_, recs, err := ReadRecordBatches(b, BatchOptions{Allocator: mem, Limits: lim, SkipUnsupported: skip})
			if err != nil {
				assertSentinel(t, err)
				continue
			}
			for _, r := range recs {
				readRecord(t, r)
				readTensorColumns(t, r)
			}
			releaseAll(recs)
		}
	})
}

// integrationSeeds returns a few integration files of every kind, for fuzz seeds.
func integrationSeeds(t testing.TB) []string {
	var out []string
	for _, path := range integrationFiles(t) {
		if strings.HasSuffix(path, ".stream") && !strings.Contains(path, "decimal") {
			out = append(out, path)
		}
	}
	return out
}

// readTensorColumns views every fixed_shape_tensor column of rec as a Dense and reads it.
func readTensorColumns(t *testing.T, rec arrow.Record) {
	for _, col := range rec.Columns() {
		c, ok := col.(*arrowtensor.FixedShapeTensorArray)
		if !ok {
			continue
		}
		var err error
		switch c.ExtensionType().(*arrowtensor.FixedShapeTensorType).ValueType().ID() {
		case arrow.FLOAT32:
			err = readAll[float32](c)
		case arrow.FLOAT64:
			err = readAll[float64](c)
		case arrow.FLOAT16:
			err = readAll[float16.Num](c)
		case arrow.INT64:
			err = readAll[int64](c)
		case arrow.INT32:
			err = readAll[int32](c)
		}
		if err != nil && !errors.Is(err, arrowtensor.ErrUnsupported) && !errors.Is(err, arrowtensor.ErrNull) {
			t.Fatalf("reading a tensor column: %v", err)
		}
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

// TestVariadicCountsAreBounded: a view column is walked past by its buffer layout, and its
// variadic buffer count may not claim more buffers than the batch has.
func TestVariadicCountsAreBounded(t *testing.T) {
	b := mustRead(t, filepath.Join(corpusDir, "arrow-ipc-stream/integration/cpp-21.0.0/generated_binary_view.stream"))
	_, recs, err := ReadRecordBatches(b, BatchOptions{SkipUnsupported: true})
	require.NoError(t, err, "the view columns are skipped")
	releaseAll(recs)
	f, ok := mutate.Scan(b).Find("RecordBatch.variadicBufferCounts[0]")
	require.True(t, ok)
	for _, v := range []int64{-1, 1 << 31, math.MaxInt64} {
		_, _, err := ReadRecordBatches(mutate.Set(b, f, v), BatchOptions{SkipUnsupported: true})
		assert.ErrorIs(t, err, ErrInvalid, "count %d", v)
		assert.ErrorContains(t, err, "variadic buffers where")
	}
}

// TestReadMessageHead walks Arrow C++'s stream message by message, reading each body apart, as
// a receiver that reads bodies into place does: the heads and bodies are the stream's, the
// end-of-stream marker is io.EOF, and a stream that stops early or lies about its metadata
// length is an error before anything is read past it.
func TestReadMessageHead(t *testing.T) {
	b, err := os.ReadFile("testdata/arrow-cpp-17/batch_tensors.arrows")
	require.NoError(t, err)
	r := bytes.NewReader(b)
	messages := 0
	for {
		meta, bodyLen, err := ReadMessageHead(r, int64(len(b)-r.Len()), Limits{})
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.NotEmpty(t, meta)
		_, err = io.CopyN(io.Discard, r, bodyLen)
		require.NoError(t, err)
		messages++
	}
	require.Zero(t, r.Len(), "the marker ends the stream")
	require.Greater(t, messages, 1)

	for name, tc := range map[string]struct {
		in   []byte
		want error
	}{
		"empty":             {nil, io.ErrUnexpectedEOF},
		"prefix cut":        {b[:6], io.ErrUnexpectedEOF},
		"metadata cut":      {b[:20], io.ErrUnexpectedEOF},
		"metadata too long": {[]byte{0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f}, ErrLimit},
		"negative length":   {[]byte{0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0xff}, ErrInvalid},
		"not a flatbuffer":  {append([]byte{0xff, 0xff, 0xff, 0xff, 16, 0, 0, 0}, bytes.Repeat([]byte{0xee}, 16)...), ErrInvalid},
	} {
		_, _, err := ReadMessageHead(bytes.NewReader(tc.in), 0, Limits{})
		require.ErrorIs(t, err, tc.want, name)
	}
}
