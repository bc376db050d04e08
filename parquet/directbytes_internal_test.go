package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deltaRun encodes n values first, first+step, … as DELTA_BINARY_PACKED: blocks of 128 in
// four miniblocks, every delta the block's minimum (bit width 0); of more than 4096 values
// only the first 4096 are encoded.
func deltaRun(n, first, step int64) []byte {
	zigzag := func(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
	b := binary.AppendUvarint(nil, 128)
	b = binary.AppendUvarint(b, 4)
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, zigzag(first))
	for left := min(n, 1<<12) - 1; left > 0; left -= 128 { // a huge n: its header alone
		b = binary.AppendUvarint(b, zigzag(step))
		b = append(b, 0, 0, 0, 0)
	}
	return b
}

// readBytesDirectly reads every byte-array column of every row group of b through readDirect
// (without checkColumnChunk, which refuses DELTA_BYTE_ARRAY: b must be a trusted file) and
// through pqarrow, and requires the same values of both; it returns the columns compared.
func readBytesDirectly(t *testing.T, b []byte) int {
	r, err := NewReader(b, ReaderOptions{})
	require.NoError(t, err)
	n := 0
	for rg := range r.NumRowGroups() {
		rows := r.RowGroupRows(rg)
		for _, c := range r.cols {
			if _, _, ok := bytesTypeOf(c.field.Type); !ok {
				continue
			}
			got, err := r.readDirect(c, rg, rows)
			require.NoError(t, err, "row group %d column %s", rg, c.field.Name)
			decoded, err := r.decode(c.index, c.leaves, rg, rows)
			require.NoError(t, err)
			want, err := restore(r.mem, decoded, c.field.Type)
			require.NoError(t, err)
			assert.True(t, array.Equal(want, got), "row group %d column %s", rg, c.field.Name)
			decoded.Release()
			want.Release()
			got.Release()
			n++
		}
	}
	return n
}

// TestDeltaByteArrayDirect: DELTA_BYTE_ARRAY pages — arrow-go's (required and optional, v1 and
// v2, uncompressed and Snappy) and parquet-mr's (parquet-testing's TPC-DS columns) — decode
// to what pqarrow decodes from them. (checkColumnChunk refuses them before any decoding, so
// reading such a file still fails as unsupported.)
func TestDeltaByteArrayDirect(t *testing.T) {
	mem := memory.DefaultAllocator
	const rows = 3000
	req, opt := array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	for i := range rows {
		v := fmt.Sprintf("customer-%06d-%s", i/3, strings.Repeat("x", i%17))
		req.Append(v)
		if i%5 == 1 {
			opt.AppendNull()
		} else {
			opt.Append(v)
		}
	}
	cols := []arrow.Array{req.NewArray(), opt.NewArray()}
	schema := arrow.NewSchema([]arrow.Field{{Name: "req", Type: arrow.BinaryTypes.String}, {Name: "opt", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec := array.NewRecord(schema, cols, rows)
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
		for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
			props := pq.NewWriterProperties(pq.WithDictionaryDefault(false), pq.WithEncoding(pq.Encodings.DeltaByteArray),
				pq.WithCompression(codec), pq.WithDataPageVersion(version), pq.WithDataPageSize(2<<10), pq.WithMaxRowGroupLength(1200))
			var buf bytes.Buffer
			require.NoError(t, pqarrow.WriteTable(array.NewTableFromRecords(schema, []arrow.Record{rec}), &buf, rows, props, pqarrow.DefaultWriterProps()))
			assert.Equal(t, 6, readBytesDirectly(t, buf.Bytes()), "v%d %s", version, codec)
		}
	}
	for _, name := range []string{"delta_encoding_required_column", "delta_encoding_optional_column"} {
		b, err := os.ReadFile("testdata/parquet-testing/data/" + name + ".parquet")
		require.NoError(t, err)
		assert.Equal(t, 8, readBytesDirectly(t, b), name)
	}
}

// TestBytesHostilePages: lengths past the page, DELTA headers of huge counts or lengths,
// prefixes longer than the value before, dictionary indices past the dictionary and
// dictionaries that would expand past the limit are refused by the byte-array reader (which
// gives the row group back to pqarrow, behind its checks) without a panic or an allocation
// sized by them.
func TestBytesHostilePages(t *testing.T) {
	newReader := func(fill bool) *bytesReader[int32] {
		br := &bytesReader[int32]{rows: 8, limit: 1 << 20, mem: memory.DefaultAllocator}
		if fill {
			br.offs = make([]int32, 9)
			br.data = make([]byte, 64)
		}
		return br
	}
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

	// PLAIN
	assert.True(t, newReader(true).plain(append(u32(2), "ab"...), 1, 0))
	assert.False(t, newReader(true).plain(append(u32(0x7fffffff), "ab"...), 1, 0), "a length past the page")
	assert.False(t, newReader(true).plain(append(u32(2), "abc"...), 1, 0), "bytes after the values")
	assert.False(t, newReader(true).plain(append(u32(60), make([]byte, 60)...), 2, 0), "values cut short")
	assert.False(t, newReader(true).plain(append(u32(65), make([]byte, 65)...), 1, 0), "more than the data holds")

	// DELTA_LENGTH_BYTE_ARRAY
	assert.True(t, newReader(true).deltaLength(append(deltaRun(3, 2, 0), "aabbcc"...), 3, 0))
	assert.False(t, newReader(true).deltaLength(append(deltaRun(1<<40, 2, 0), "aa"...), 3, 0), "a huge count")
	assert.False(t, newReader(true).deltaLength(append(deltaRun(3, 1<<30, 0), "aa"...), 3, 0), "lengths past the page")
	assert.False(t, newReader(true).deltaLength(append(deltaRun(3, 2, -3), "aabbcc"...), 3, 0), "a negative length")
	assert.False(t, newReader(true).deltaLength(append(deltaRun(2, 2, 0), "aabb"...), 3, 0), "fewer lengths than values")

	// DELTA_BYTE_ARRAY
	good := append(append(deltaRun(3, 0, 1), deltaRun(3, 2, -1)...), "abc"...) // ab, ac, ac
	br := newReader(true)
	require.True(t, br.deltaBytes(good, 3, 0, true))
	assert.Equal(t, "abacac", string(br.data[:br.at]))
	assert.Equal(t, []int32{0, 2, 4, 6}, br.offs[:4])
	assert.False(t, newReader(true).deltaBytes(append(append(deltaRun(3, 1, 0), deltaRun(3, 2, 0)...), "aabbcc"...), 3, 0, true), "a prefix before any value")
	assert.False(t, newReader(false).deltaBytes(append(append(deltaRun(3, 0, 5), deltaRun(3, 1, 0)...), "abc"...), 3, 0, false), "a prefix longer than the value before")
	assert.False(t, newReader(false).deltaBytes(append(deltaRun(1<<40, 0, 0), deltaRun(3, 1, 0)...), 3, 0, false), "a huge count")
	// prefixes that would expand a few bytes past the limit: refused while sizing
	huge := append(append(deltaRun(200, 0, 1<<20), deltaRun(200, 1, 0)...), make([]byte, 200)...)
	assert.False(t, newReader(false).deltaBytes(huge, 200, 0, false), "values past the limit")

	// dictionaries and their indices
	dict := append(append(u32(3), "abc"...), append(u32(1), "z"...)...)
	h := pageHeader{numValues: 2, uncompressed: int32(len(dict))}
	br = newReader(true)
	require.True(t, br.dictionary(h, dict))
	indices := append([]byte{1}, binary.AppendUvarint(nil, 3<<1)...) // bit width 1, a run of three 1s
	indices = append(indices, 1)
	require.True(t, br.indices(indices, 3, 0, true))
	assert.Equal(t, "zzz", string(br.data[:br.at]))
	past := append([]byte{2}, binary.AppendUvarint(nil, 3<<1)...)
	past = append(past, 2) // index 2 of a dictionary of 2
	assert.False(t, br.indices(past, 3, 0, true), "an index past the dictionary")
	assert.False(t, newReader(true).indices(indices, 3, 0, true), "indices without a dictionary")
	assert.False(t, newReader(true).dictionary(pageHeader{numValues: 1 << 30}, dict), "more entries than the page holds")
	assert.False(t, newReader(true).dictionary(pageHeader{numValues: 2}, append(u32(1<<31), "abc"...)), "an entry past the page")
	// a long run of the 3-byte entry, sized past the limit before anything is allocated
	expand := append([]byte{1}, binary.AppendUvarint(nil, 1<<40)...)
	expand = append(expand, 0)
	sizing := newReader(false)
	require.True(t, sizing.dictionary(h, dict))
	assert.False(t, sizing.indices(expand, 1<<39, 0, false), "a dictionary expanding past the limit")
	allocs := testing.AllocsPerRun(10, func() { sizing.indices(expand, 1<<39, 0, false) })
	assert.Zero(t, allocs)
}
