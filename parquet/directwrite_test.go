package parquet_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// writeRecords writes recs as Parquet with opts, through the direct writer or (general)
// pqarrow.
func writeRecords(t testing.TB, recs []arrow.Record, opts parquet.WriterOptions, general bool) []byte {
	b, err := tryWrite(recs, opts, general)
	require.NoError(t, err)
	return b
}

// tryWrite is writeRecords returning the error.
func tryWrite(recs []arrow.Record, opts parquet.WriterOptions, general bool) ([]byte, error) {
	var buf bytes.Buffer
	newWriter := parquet.NewWriter
	if general {
		newWriter = parquet.NewGeneralWriter
	}
	w, err := newWriter(&buf, recs[0].Schema(), opts)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readGeneral reads every row group of b through pqarrow alone (the reader the direct writer must
// satisfy) and returns them; release them.
func readGeneral(t testing.TB, b []byte) []arrow.Record {
	return readRowGroups(t, b, true)
}

// readRowGroups reads every row group of b, through pqarrow alone when general; release them.
func readRowGroups(t testing.TB, b []byte, general bool) []arrow.Record {
	r, err := parquet.NewReader(b, parquet.ReaderOptions{})
	require.NoError(t, err)
	if general {
		parquet.ReadGeneral(r)
	}
	var out []arrow.Record
	for i := range r.NumRowGroups() {
		rec, err := r.ReadRowGroup(i)
		require.NoError(t, err, "row group %d", i)
		out = append(out, rec)
	}
	return out
}

// concat returns the rows of recs as one record. Release it.
func concat(t testing.TB, recs []arrow.Record) arrow.Record {
	tbl := array.NewTableFromRecords(recs[0].Schema(), recs)
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		c, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.DefaultAllocator)
		require.NoError(t, err)
		defer c.Release()
		cols[i] = c
	}
	return array.NewRecord(recs[0].Schema(), cols, tbl.NumRows())
}

// sameFile checks that direct (the direct writer's) and general (pqarrow's) files of the same
// rows have the same Parquet schema, row groups, statistics and key-value metadata.
func sameFile(t *testing.T, direct, general []byte) {
	d, g := opened(t, direct), opened(t, general)
	dm, gm := d.MetaData(), g.MetaData()
	// The root's repetition aside (arrow-go writes it repeated, Arrow C++ and ndarrow required)
	require.Equal(t, gm.Schema.Root().NumFields(), dm.Schema.Root().NumFields())
	for i := range dm.Schema.Root().NumFields() {
		require.True(t, dm.Schema.Root().Field(i).Equals(gm.Schema.Root().Field(i)),
			"Parquet schema:\n%s\npqarrow's:\n%s", dm.Schema, gm.Schema)
	}
	assert.Equal(t, gm.KeyValueMetadata().Keys(), dm.KeyValueMetadata().Keys())
	assert.Equal(t, gm.KeyValueMetadata().Values(), dm.KeyValueMetadata().Values())
	require.Equal(t, g.NumRowGroups(), d.NumRowGroups())
	require.Equal(t, gm.NumRows, dm.NumRows)
	for i := range d.NumRowGroups() {
		drg, grg := dm.RowGroup(i), gm.RowGroup(i)
		require.Equal(t, grg.NumRows(), drg.NumRows(), "row group %d", i)
		for c := range drg.NumColumns() {
			dc, err := drg.ColumnChunk(c)
			require.NoError(t, err)
			gc, err := grg.ColumnChunk(c)
			require.NoError(t, err)
			assert.Equal(t, gc.NumValues(), dc.NumValues(), "row group %d column %d values", i, c)
			assert.Equal(t, gc.Compression(), dc.Compression())
			ds, err := dc.Statistics()
			require.NoError(t, err)
			gs, err := gc.Statistics()
			require.NoError(t, err)
			require.NotNil(t, ds, "row group %d column %d has statistics", i, c)
			assert.Equal(t, gs.NullCount(), ds.NullCount(), "row group %d column %d null count", i, c)
			// arrow-go v17 writes no minimum and maximum for some list column chunks whose first
			// rows are empty, and its starting ones for a bool chunk without a value: only where
			// both have them are they compared, and ndarrow has none only for a chunk without values.
			if gs.HasMinMax() && !ds.HasMinMax() {
				assert.Equal(t, dc.NumValues(), ds.NullCount(), "row group %d column %d: no minimum and maximum, yet values", i, c)
			}
			// arrow-go v17 leaves unsigned columns' statistics at their starting values (minimum
			// 2^n-1, maximum 0): TestUnsignedStatistics checks those against the values.
			conv := dm.Schema.Column(c).ConvertedType()
			unsigned := conv == schema.ConvertedTypes.Uint64 || conv == schema.ConvertedTypes.Uint32
			// arrow-go v17 lets a NaN replace a float16 chunk's minimum and maximum when the chunk
			// has nulls (its spaced path skips no NaN): TestFloat16Statistics checks those.
			_, half := dm.Schema.Column(c).LogicalType().(schema.Float16LogicalType)
			if half && gs.NullCount() > 0 {
				continue
			}
			if gs.HasMinMax() && ds.HasMinMax() && !unsigned {
				gmin, gmax := minMaxOf(gs)
				dmin, dmax := minMaxOf(ds)
				// arrow-go v17 starts a float16 chunk's minimum at the largest finite value
				// (its maximum at the smallest) and no infinity replaces it: a chunk of +Inf
				// alone has minimum 65504 there, +Inf in ndarrow's (TestFloat16Statistics).
				if !half || !bytes.Equal(gmin, []byte{0xff, 0x7b}) {
					assert.Equal(t, gmin, dmin, "row group %d column %d min", i, c)
				}
				if !half || !bytes.Equal(gmax, []byte{0xff, 0xfb}) {
					assert.Equal(t, gmax, dmax, "row group %d column %d max", i, c)
				}
			}
		}
	}
}

// minMaxOf returns a column's statistics as encoded bytes.
func minMaxOf(s metadata.TypedStatistics) ([]byte, []byte) {
	enc, err := s.Encode()
	if err != nil {
		return nil, nil
	}
	return enc.Min, enc.Max
}

// nestedWithNulls is fixed_size_list<fixed_size_list<uint32, 3>, 2> of rows rows, with null
// rows, null inner lists and null values, where every of nullRow, nullInner, nullValue (when
// positive) says.
func nestedWithNulls(mem memory.Allocator, rows, nullRow, nullInner, nullValue int64) arrow.Array {
	b := array.NewFixedSizeListBuilder(mem, 2, arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Uint32))
	defer b.Release()
	inner := b.ValueBuilder().(*array.FixedSizeListBuilder)
	vals := inner.ValueBuilder().(*array.Uint32Builder)
	v := int64(0)
	for r := range rows {
		if nullRow > 0 && r%nullRow == 1 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for k := range int64(2) {
			if nullInner > 0 && (r*2+k)%nullInner == 3 {
				inner.AppendNull()
				continue
			}
			inner.Append(true)
			for range 3 {
				v++
				if nullValue > 0 && v%nullValue == 2 {
					vals.AppendNull()
				} else {
					vals.Append(uint32(v) * 0x0100_0001) // above 2^31 too
				}
			}
		}
	}
	return b.NewArray()
}

// flatFloat64 is rows float64 values with NaNs, signed zeros and, every nullEvery, a null.
func flatFloat64(mem memory.Allocator, rows, nullEvery int64) arrow.Array {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	for r := range rows {
		switch {
		case nullEvery > 0 && r%nullEvery == 0:
			b.AppendNull()
		case r%7 == 3:
			b.Append(math.NaN())
		case r%5 == 1:
			b.Append(math.Copysign(0, -1))
		default:
			b.Append(float64(r%100) - 20)
		}
	}
	return b.NewArray()
}

// directTables are record batches the direct writer writes, each with a name.
func directTables(t testing.TB, mem memory.Allocator) map[string][]arrow.Record {
	record := func(names []string, arrays ...arrow.Array) arrow.Record {
		fields := make([]arrow.Field, len(arrays))
		for i, a := range arrays {
			fields[i] = arrow.Field{Name: names[i], Type: a.DataType(), Nullable: true}
		}
		rec := array.NewRecord(arrow.NewSchema(fields, nil), arrays, int64(arrays[0].Len()))
		for _, a := range arrays {
			a.Release()
		}
		return rec
	}
	tensor := func(rows int64) arrow.Array {
		d := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]*6+i[1]*3+i[2]) - 100 }, rows, 2, 3)
		a, err := arrowtensor.NewFixedShapeTensorArray(mem, d, []string{"h", "w"})
		require.NoError(t, err)
		return a
	}
	ints := func(rows int64) arrow.Array {
		d := ndarray.FromFunc(func(i []int64) int64 { return i[0]*4 + i[1] - 1<<40 }, rows, 4)
		a, err := arrowtensor.NewFixedShapeTensorArray(mem, d, nil)
		require.NoError(t, err)
		return a
	}
	u64 := func(rows int64) arrow.Array {
		b := array.NewUint64Builder(mem)
		defer b.Release()
		for r := range rows {
			b.Append(uint64(r) * 0x9E37_79B9_7F4A_7C15)
		}
		return b.NewArray()
	}
	allNaN := func(rows int64) arrow.Array {
		b := array.NewFloat32Builder(mem)
		defer b.Release()
		for range rows {
			b.Append(float32(math.NaN()))
		}
		return b.NewArray()
	}
	half := func(rows int64) arrow.Array {
		d := ndarray.FromFunc(func(i []int64) float16.Num {
			switch v := i[0]*4 + i[1]; {
			case v%17 == 5:
				return float16.NaN()
			case v%13 == 2:
				return float16.FromBits(0x8000) // -0
			default:
				return float16.New(float32(v%300)/8 - 10)
			}
		}, rows, 4)
		a, err := arrowtensor.NewFixedShapeTensorArray(mem, d, nil)
		require.NoError(t, err)
		return a
	}
	mask := func(rows int64) arrow.Array { // fixed_size_list<fixed_size_list<bool, 2>, 3>
		b := array.NewFixedSizeListBuilder(mem, 3, arrow.FixedSizeListOf(2, arrow.FixedWidthTypes.Boolean))
		defer b.Release()
		inner := b.ValueBuilder().(*array.FixedSizeListBuilder)
		vals := inner.ValueBuilder().(*array.BooleanBuilder)
		for r := range rows {
			b.Append(true)
			for k := range int64(3) {
				inner.Append(true)
				for j := range int64(2) {
					vals.Append((r*6+k*2+j)%7 < 3)
				}
			}
		}
		return b.NewArray()
	}
	flags := func(rows, nullEvery int64) arrow.Array {
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		for r := range rows {
			if nullEvery > 0 && r%nullEvery == 2 {
				b.AppendNull()
			} else {
				b.Append(r%3 == 0)
			}
		}
		return b.NewArray()
	}
	// ragged: list<float32> and large_list<int64> with empty rows, list<bool>; with nulls,
	// null rows and null values too
	ragged := func(rows, nullEvery int64, typ arrow.DataType) arrow.Array {
		b := array.NewBuilder(mem, typ)
		defer b.Release()
		type appender interface {
			array.Builder
			Append(bool)
			ValueBuilder() array.Builder
		}
		lb := b.(appender)
		for r := range rows {
			if nullEvery > 0 && r%nullEvery == 3 {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			for j := range (r * 7) % 5 {
				v := r*10 + j
				switch vb := lb.ValueBuilder().(type) {
				case *array.Float32Builder:
					if nullEvery > 0 && v%nullEvery == 1 {
						vb.AppendNull()
					} else {
						vb.Append(float32(v) / 4)
					}
				case *array.Int64Builder:
					vb.Append(v - 1<<40)
				case *array.BooleanBuilder:
					vb.Append(v%3 == 0)
				}
			}
		}
		return b.NewArray()
	}
	sliced := record([]string{"t"}, tensor(5000))
	defer sliced.Release()
	return map[string][]arrow.Record{
		"tensor":         {record([]string{"t"}, tensor(3000))},
		"tensor, sliced": {sliced.NewSlice(37, 4100), sliced.NewSlice(4100, 4101)},
		"three columns":  {record([]string{"t", "i", "u"}, tensor(2500), ints(2500), u64(2500))},
		"nested":         {record([]string{"n"}, nestedWithNulls(mem, 4000, 0, 0, 0))},
		"nested, nulls":  {record([]string{"n"}, nestedWithNulls(mem, 4000, 0, 0, 11))},
		"flat":           {record([]string{"f"}, flatFloat64(mem, 9000, 0))},
		"flat, nulls":    {record([]string{"f"}, flatFloat64(mem, 9000, 4))},
		"all NaN":        {record([]string{"nan"}, allNaN(3000))},
		"float16":        {record([]string{"h"}, half(3000))},
		"bools":          {record([]string{"m", "f"}, mask(3001), flags(3001, 0))},
		"bools, nulls":   {record([]string{"f"}, flags(4000, 5))},
		"ragged": {record([]string{"f32", "i64", "b"}, ragged(3000, 0, arrow.ListOf(arrow.PrimitiveTypes.Float32)),
			ragged(3000, 0, arrow.LargeListOf(arrow.PrimitiveTypes.Int64)), ragged(3000, 0, arrow.ListOf(arrow.FixedWidthTypes.Boolean)))},
		"ragged, nulls":   {record([]string{"f32"}, ragged(3000, 6, arrow.ListOf(arrow.PrimitiveTypes.Float32)))},
		"several batches": {record([]string{"t"}, tensor(700)), record([]string{"t"}, tensor(1300)), record([]string{"t"}, tensor(1))},
	}
}

// hasBools reports whether a column of schema holds bools (in fixed-size lists or not).
func hasBools(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		t := f.Type
		for {
			if l, ok := t.(arrow.ListLikeType); ok {
				t = l.Elem()
				continue
			}
			break
		}
		if t.ID() == arrow.BOOL {
			return true
		}
	}
	return false
}

// TestDirectWriterMatchesPqarrow: the direct writer's files have pqarrow's Parquet schema,
// row groups, statistics and stored Arrow schema, and read back (through pqarrow) as the rows
// written, with every codec and encoding, in row groups of several sizes.
func TestDirectWriterMatchesPqarrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for name, recs := range directTables(t, mem) {
		w, err := parquet.NewWriter(io.Discard, recs[0].Schema(), parquet.WriterOptions{})
		require.NoError(t, err)
		require.True(t, parquet.WritesDirectly(w), "%s: written by the direct writer", name)
		require.NoError(t, w.Close())
		want := concat(t, recs)
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd, parquet.Snappy, parquet.Gzip} {
			for _, groupBytes := range []int64{0, 20 << 10} {
				opts := parquet.WriterOptions{Compression: c, RowGroupBytes: groupBytes, Allocator: mem}
				direct := writeRecords(t, recs, opts, false)
				general := writeRecords(t, recs, opts, true)
				t.Run(name+"/"+c.String(), func(t *testing.T) {
					sameFile(t, direct, general)
					got := readGeneral(t, direct)
					back := concat(t, got)
					assert.True(t, array.RecordApproxEqual(want, back, array.WithNaNsEqual(true), array.WithAbsTolerance(0)),
						"read back:\n%v\nwritten:\n%v", back, want)
					back.Release()
					for _, g := range got {
						g.Release()
					}
				})
				split := opts
				split.Encoding = parquet.ByteStreamSplit
				t.Run(name+"/"+c.String()+"/byte_stream_split", func(t *testing.T) {
					b, err := tryWrite(recs, split, false)
					if hasBools(recs[0].Schema()) || strings.HasPrefix(name, "ragged") {
						require.ErrorIs(t, err, parquet.ErrUnsupported, "BYTE_STREAM_SPLIT has no bools, and is read only in fixed-size lists")
						return
					}
					require.NoError(t, err)
					got := readRowGroups(t, b, false)
					back := concat(t, got)
					assert.True(t, array.RecordApproxEqual(want, back, array.WithNaNsEqual(true), array.WithAbsTolerance(0)))
					back.Release()
					for _, g := range got {
						g.Release()
					}
				})
			}
		}
		want.Release()
		for _, r := range recs {
			r.Release()
		}
	}
}

// TestNullListsAreRefused: a null fixed-size list (a row, or a list inside one) is refused as
// pqarrow refuses it, naming the column and row: Parquet stores it as an empty list, which
// neither Arrow C++ 17 nor arrow-go reads back as a fixed-size list.
func TestNullListsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name       string
		row, inner int64
		wantRow    string
	}{{"row", 3, 0, "row 1:"}, {"inner list", 0, 5, "row 1:"}} {
		t.Run(tc.name, func(t *testing.T) {
			a := nestedWithNulls(memory.DefaultAllocator, 10, tc.row, tc.inner, 0)
			rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "n", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, 10)
			a.Release()
			defer rec.Release()
			_, err := tryWrite([]arrow.Record{rec}, parquet.WriterOptions{}, false)
			require.ErrorIs(t, err, parquet.ErrUnsupported)
			assert.Contains(t, err.Error(), `column "n", `+tc.wantRow)
			_, err = tryWrite([]arrow.Record{rec}, parquet.WriterOptions{}, true)
			require.Error(t, err, "pqarrow refuses it too")
		})
	}
}

// TestUnsignedStatistics: uint32 and uint64 columns' statistics order values as unsigned.
func TestUnsignedStatistics(t *testing.T) {
	u64 := array.NewUint64Builder(memory.DefaultAllocator)
	u64.AppendValues([]uint64{5, 1 << 63, 3, math.MaxUint64 - 1, 4}, nil)
	u32 := array.NewUint32Builder(memory.DefaultAllocator)
	u32.AppendValues([]uint32{5, 1 << 31, 3, math.MaxUint32 - 1, 4}, nil)
	a, b := u64.NewArray(), u32.NewArray()
	defer a.Release()
	defer b.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "a", Type: a.DataType()}, {Name: "b", Type: b.DataType()}}, nil), []arrow.Array{a, b}, 5)
	defer rec.Release()
	r := opened(t, writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{}, false))
	for c, want := range [][2][]byte{
		{binary.LittleEndian.AppendUint64(nil, 3), binary.LittleEndian.AppendUint64(nil, math.MaxUint64-1)},
		{binary.LittleEndian.AppendUint32(nil, 3), binary.LittleEndian.AppendUint32(nil, math.MaxUint32-1)},
	} {
		cc, err := r.MetaData().RowGroup(0).ColumnChunk(c)
		require.NoError(t, err)
		s, err := cc.Statistics()
		require.NoError(t, err)
		lo, hi := minMaxOf(s)
		assert.Equal(t, want[0], lo, "column %d min", c)
		assert.Equal(t, want[1], hi, "column %d max", c)
	}
}

// TestFloat16Statistics: a float16 chunk's minimum and maximum pass over NaNs and nulls
// wherever they are (arrow-go v17 takes the value after a NaN as both when the chunk has
// nulls; FuzzDirectWriter found it).
func TestFloat16Statistics(t *testing.T) {
	half := func(bits ...uint16) []float16.Num {
		v := make([]float16.Num, len(bits))
		for i, b := range bits {
			v[i] = float16.FromBits(b)
		}
		return v
	}
	const nan, lo, hi, zero, negZero = 0x7e00, 0xa930, 0x3030, 0x0000, 0x8000
	for _, tc := range []struct {
		name   string
		values []float16.Num
		valid  []bool
		min    uint16
		max    uint16
	}{
		{"NaN between, a null", half(lo, nan, hi, 0), []bool{true, true, true, false}, lo, hi},
		{"NaN first, nulls", half(nan, 0, hi, lo), []bool{true, false, true, true}, lo, hi},
		{"no nulls", half(hi, nan, lo), nil, lo, hi},
		{"zeros", half(zero, negZero, 0), []bool{true, true, false}, negZero, zero},
		{"+Inf alone", half(0x7c00), nil, 0x7c00, 0x7c00},
		{"infinities", half(0xfc00, hi, 0x7c00), nil, 0xfc00, 0x7c00},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := array.NewFloat16Builder(memory.DefaultAllocator)
			defer b.Release()
			b.AppendValues(tc.values, tc.valid)
			a := b.NewArray()
			defer a.Release()
			rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "h", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
			defer rec.Release()
			r := opened(t, writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{}, false))
			cc, err := r.MetaData().RowGroup(0).ColumnChunk(0)
			require.NoError(t, err)
			s, err := cc.Statistics()
			require.NoError(t, err)
			require.True(t, s.HasMinMax())
			gotMin, gotMax := minMaxOf(s)
			assert.Equal(t, binary.LittleEndian.AppendUint16(nil, tc.min), gotMin, "min")
			assert.Equal(t, binary.LittleEndian.AppendUint16(nil, tc.max), gotMax, "max")
		})
	}
}

// TestByteStreamSplitNeedsNumbers: BYTE_STREAM_SPLIT is refused for a column it cannot encode,
// and with dictionary encoding, naming the option.
func TestByteStreamSplitNeedsNumbers(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	_, err := parquet.NewWriter(&bytes.Buffer{}, schema, parquet.WriterOptions{Encoding: parquet.ByteStreamSplit})
	require.ErrorIs(t, err, parquet.ErrUnsupported)
	assert.Contains(t, err.Error(), "byte_stream_split")
	f32 := arrow.NewSchema([]arrow.Field{{Name: "f", Type: arrow.PrimitiveTypes.Float32}}, nil)
	_, err = parquet.NewWriter(&bytes.Buffer{}, f32, parquet.WriterOptions{Encoding: parquet.ByteStreamSplit, Dictionary: true})
	require.ErrorIs(t, err, parquet.ErrUnsupported)

	for _, s := range []string{"plain", "BYTE_STREAM_SPLIT", ""} {
		_, err := parquet.ParseEncoding(s)
		require.NoError(t, err, s)
	}
	_, err = parquet.ParseEncoding("delta")
	require.ErrorIs(t, err, parquet.ErrUnsupported)
}

// leafValues returns the bytes of the values of a column without nulls: a flat column's, or
// those the fixed-size lists of a nested one cover, in row order.
func leafValues(t testing.TB, a arrow.Array) []byte {
	d := a.Data()
	start, count := int64(d.Offset()), int64(d.Len())
	for {
		typ := d.DataType()
		if ext, isExt := typ.(arrow.ExtensionType); isExt {
			typ = ext.StorageType()
		}
		var lo, hi int64
		switch typ.ID() {
		case arrow.LIST:
			o := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())
			lo, hi = int64(o[start]), int64(o[start+count])
		case arrow.LARGE_LIST:
			o := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())
			lo, hi = o[start], o[start+count]
		}
		if typ.ID() == arrow.LIST || typ.ID() == arrow.LARGE_LIST {
			d = d.Children()[0]
			start, count = int64(d.Offset())+lo, hi-lo
			continue
		}
		fsl, ok := typ.(*arrow.FixedSizeListType)
		if !ok {
			break
		}
		d = d.Children()[0]
		start, count = int64(d.Offset())+start*int64(fsl.Len()), count*int64(fsl.Len())
	}
	if d.DataType().ID() == arrow.BOOL { // a byte per value, as Arrow C++'s dumps have them
		out := make([]byte, count)
		for i := range out {
			if bitutil.BitIsSet(d.Buffers()[1].Bytes(), int(start)+i) {
				out[i] = 1
			}
		}
		return out
	}
	fw, ok := d.DataType().(arrow.FixedWidthDataType)
	require.True(t, ok, "a column of numbers: %v", d.DataType())
	w := int64(fw.BitWidth() / 8)
	return d.Buffers()[1].Bytes()[start*w : (start+count)*w]
}

// TestArrowCppReadsWhatWeWrite: Arrow C++ 17 read the values written from the files the writer
// writes (byte for byte these: testdata/arrow-cpp-17-parquet/read-ndarrow-writes.jsonl), with
// every codec and with BYTE_STREAM_SPLIT, and ndarrow reads the same values back.
func TestArrowCppReadsWhatWeWrite(t *testing.T) {
	f, err := os.Open("testdata/arrow-cpp-17-parquet/read-ndarrow-writes.jsonl")
	require.NoError(t, err)
	defer f.Close()
	type record struct {
		File       string            `json:"file"`
		FileSHA256 string            `json:"file_sha256"`
		Columns    map[string]string `json:"columns"`
	}
	recorded := map[string]record{}
	dec := json.NewDecoder(f)
	for dec.More() {
		var r record
		require.NoError(t, dec.Decode(&r))
		recorded[r.File] = r
	}
	tables := directTables(t, memory.DefaultAllocator)
	checked := 0
	for name, recs := range tables {
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd, parquet.Snappy, parquet.Gzip} {
			for _, e := range []parquet.Encoding{parquet.Plain, parquet.ByteStreamSplit} {
				file := strings.NewReplacer(", ", "-", " ", "-").Replace(name) + "." + c.String() + "." + e.String() + ".parquet"
				want, ok := recorded[file]
				if !ok {
					continue // a table with nulls or NaNs: Arrow C++'s dumps are of values without nulls
				}
				checked++
				b := writeRecords(t, recs, parquet.WriterOptions{Compression: c, Encoding: e, RowGroupBytes: 20 << 10}, false)
				sum := sha256.Sum256(b)
				require.Equal(t, want.FileSHA256, hex.EncodeToString(sum[:]), "%s: not the bytes Arrow C++ read", file)
				got := readRowGroups(t, b, false)
				for i, field := range got[0].Schema().Fields() {
					h := sha256.New()
					for _, rg := range got {
						h.Write(leafValues(t, rg.Column(i)))
					}
					assert.Equal(t, want.Columns[field.Name], hex.EncodeToString(h.Sum(nil)), "%s: column %s", file, field.Name)
				}
				for _, rg := range got {
					rg.Release()
				}
			}
		}
		for _, r := range recs {
			r.Release()
		}
	}
	assert.Equal(t, len(recorded), checked, "every recorded file written again")
}

// fuzzRecord builds a record batch of one column from b: its leaf type, list sizes (up to two
// levels), rows and values, with a null leaf wherever a byte says so; nil when b is too short.
func fuzzRecord(b []byte) arrow.Record {
	if len(b) < 4 {
		return nil
	}
	leaves := []arrow.DataType{arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64}
	leaf := leaves[int(b[0])%len(leaves)]
	variable := b[0]&0x80 != 0
	var sizes []int
	for i := range int(b[1]) % 3 {
		sizes = append(sizes, 1+int(b[2+i])%4)
	}
	b = b[4:]
	width := max(1, leaf.(arrow.FixedWidthDataType).BitWidth()/8)
	cell := 1
	for _, n := range sizes {
		cell *= n
	}
	rows := len(b) / (cell * width)
	if rows == 0 {
		return nil
	}
	mem := memory.DefaultAllocator
	values := array.NewBuilder(mem, leaf)
	defer values.Release()
	for i := range rows * cell {
		v := b[i*width : (i+1)*width]
		if v[0] == 0xA5 { // a null leaf
			values.AppendNull()
			continue
		}
		switch vb := values.(type) {
		case *array.BooleanBuilder:
			vb.Append(v[0]&1 == 1)
		case *array.Float16Builder:
			vb.Append(float16.FromLEBytes(v))
		case *array.Float32Builder:
			vb.Append(math.Float32frombits(binary.LittleEndian.Uint32(v)))
		case *array.Float64Builder:
			vb.Append(math.Float64frombits(binary.LittleEndian.Uint64(v)))
		case *array.Int32Builder:
			vb.Append(int32(binary.LittleEndian.Uint32(v)))
		case *array.Int64Builder:
			vb.Append(int64(binary.LittleEndian.Uint64(v)))
		case *array.Uint32Builder:
			vb.Append(binary.LittleEndian.Uint32(v))
		case *array.Uint64Builder:
			vb.Append(binary.LittleEndian.Uint64(v))
		}
	}
	col := values.NewArray()
	if len(sizes) == 0 && variable {
		// a variable list: row lengths 0 to 3 from the bytes, a null (empty) row where a byte
		// is 0x5A
		offsets := []int32{0}
		var valid []bool
		for k := 0; int(offsets[len(offsets)-1]) < col.Len(); k++ {
			c := b[k%len(b)]
			if k > 2*col.Len()+8 {
				c = 3 // bytes that give only empty rows: the values end in rows of 3
			}
			if c == 0x5A {
				valid = append(valid, false)
				offsets = append(offsets, offsets[len(offsets)-1])
				continue
			}
			valid = append(valid, true)
			offsets = append(offsets, min(offsets[len(offsets)-1]+int32(c%4), int32(col.Len())))
		}
		bitmap := make([]byte, (len(valid)+7)/8)
		nulls := 0
		for r, v := range valid {
			if v {
				bitutil.SetBit(bitmap, r)
			} else {
				nulls++
			}
		}
		data := array.NewData(arrow.ListOf(leaf), len(valid),
			[]*memory.Buffer{memory.NewBufferBytes(bitmap), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))},
			[]arrow.ArrayData{col.Data()}, nulls, 0)
		col.Release()
		col = array.MakeFromData(data)
		data.Release()
		rows = len(valid)
	}
	for i := len(sizes) - 1; i >= 0; i-- {
		typ := arrow.FixedSizeListOf(int32(sizes[i]), col.DataType())
		data := array.NewData(typ, col.Len()/sizes[i], []*memory.Buffer{nil}, []arrow.ArrayData{col.Data()}, 0, 0)
		col.Release()
		col = array.MakeFromData(data)
		data.Release()
	}
	defer col.Release()
	return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "x", Type: col.DataType(), Nullable: true}}, nil), []arrow.Array{col}, int64(rows))
}

// FuzzDirectWriter: whatever column of numbers, list sizes, nulls, codec, encoding, page and
// row-group size, the direct writer's file has a true page index (CheckPageIndex) and reads
// back (through pqarrow and through the direct reader) as the rows written, as pqarrow's own
// file of them does.
func FuzzDirectWriter(f *testing.F) {
	f.Add([]byte{0, 1, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}, uint8(0), uint16(0))
	f.Add([]byte{3, 2, 1, 2, 0xA5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}, uint8(7), uint16(20))
	f.Add(bytes.Repeat([]byte{5, 0, 0, 0, 0xff, 0x7f, 0xc0, 0, 0xA5, 0, 0, 0x80}, 40), uint8(5), uint16(64))
	f.Add(bytes.Repeat([]byte{0x83, 0, 0, 0, 0x5A, 3, 0xA5, 1, 2, 9, 0, 0x80}, 30), uint8(1), uint16(100))
	f.Fuzz(func(t *testing.T, b []byte, how uint8, groupBytes uint16) {
		rec := fuzzRecord(b)
		if rec == nil {
			return
		}
		defer rec.Release()
		codecs := []parquet.Compression{parquet.Uncompressed, parquet.Zstd, parquet.Snappy, parquet.Gzip}
		opts := parquet.WriterOptions{Compression: codecs[int(how)%4], RowGroupBytes: int64(groupBytes), PageBytes: int64(how>>3) * 48}
		if _, isList := rec.Column(0).(*array.List); how&4 != 0 && !hasBools(rec.Schema()) && !isList {
			opts.Encoding = parquet.ByteStreamSplit
		}
		direct := writeRecords(t, []arrow.Record{rec}, opts, false)
		_, err := parquet.CheckPageIndex(direct)
		require.NoError(t, err, "the page index")
		for _, general := range []bool{true, false} {
			if general && opts.Encoding == parquet.ByteStreamSplit {
				continue // pqarrow reads no BYTE_STREAM_SPLIT
			}
			got := readRowGroups(t, direct, general)
			back := concat(t, got)
			// row by row, equal or, NaNs aside, approximately equal with no tolerance
			// (arrow-go's approximate comparison takes +Inf and +Inf of float16 for unequal)
			requireRows(t, rec, back, seq(int(rec.NumRows())))
			back.Release()
			for _, g := range got {
				g.Release()
			}
		}
		if opts.Encoding == parquet.Plain {
			sameFile(t, direct, writeRecords(t, []arrow.Record{rec}, opts, true))
		}
	})
}

// rec0Columns is the number of columns of the first of recs.
func rec0Columns(recs []arrow.Record) int64 { return recs[0].NumCols() }

// TestRaggedReadDirectly: ragged columns (lists and large_lists of numbers and bools, empty
// rows, null rows and null values included) and columns with null values (flat, or in
// fixed-size lists) are read by the direct path to the values written.
func TestRaggedReadDirectly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tables := directTables(t, mem)
	for _, name := range []string{"ragged", "ragged, nulls", "nested, nulls", "flat, nulls", "bools, nulls"} {
		recs := tables[name]
		want := concat(t, recs)
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
			b := writeRecords(t, recs, parquet.WriterOptions{Compression: c, RowGroupBytes: 8 << 10}, false)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Allocator: mem, Parallelism: 1})
			require.NoError(t, err)
			var got []arrow.Record
			for i := range r.NumRowGroups() {
				rec, err := r.ReadRowGroup(i)
				require.NoError(t, err)
				got = append(got, rec)
			}
			back := concat(t, got)
			assert.True(t, array.RecordApproxEqual(want, back, array.WithNaNsEqual(true), array.WithAbsTolerance(0)), "%s, %v", name, c)
			columns := int(rec0Columns(recs))
			assert.Equal(t, r.NumRowGroups()*columns, parquet.DirectReads(r), "every column of every row group read directly")
			back.Release()
			for _, g := range got {
				g.Release()
			}
		}
		want.Release()
	}
	for _, recs := range tables {
		for _, r := range recs {
			r.Release()
		}
	}
}
