package parquet_test

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// TestPageIndexDescribesEveryPage: every file the direct writer writes — tensor columns,
// nested fixed-size lists, ragged and nested ragged lists, flat columns, nulls, NaNs, bools,
// float16, fixed-size binaries, several batches in a row group, several row groups — carries a
// page index that CheckPageIndex finds true to its pages (each page whole rows, its offset,
// size and first row; its minimum, maximum, nulls; the boundary order; placed before the
// footer), with each codec, PLAIN and BYTE_STREAM_SPLIT, the default page size and pages of
// a few rows.
func TestPageIndexDescribesEveryPage(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tables := directTables(t, mem)
	for name, rec := range nestedTables(t, mem) {
		tables["nested ragged: "+name] = []arrow.Record{rec}
	}
	tables["fixed_size_binary"] = []arrow.Record{binaryTable(t, 3000, false)}
	tables["fixed_size_binary, nulls"] = []arrow.Record{binaryTable(t, 3000, true)}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		recs := tables[name]
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
			for _, e := range []parquet.Encoding{parquet.Plain, parquet.ByteStreamSplit} {
				for _, pageBytes := range []int64{0, 700} {
					t.Run(fmt.Sprintf("%s/%v/%v/page=%d", name, c, e, pageBytes), func(t *testing.T) {
						opts := parquet.WriterOptions{Compression: c, Encoding: e, RowGroupBytes: 20 << 10, PageBytes: pageBytes}
						b, err := tryWrite(recs, opts, false)
						if e == parquet.ByteStreamSplit && errors.Is(err, parquet.ErrUnsupported) {
							return // bools, ragged: PLAIN only
						}
						require.NoError(t, err)
						sum, err := parquet.CheckPageIndex(b)
						require.NoError(t, err)
						assert.Equal(t, sum.Chunks, sum.OffsetIndexes, "an offset index per column chunk")
						assert.GreaterOrEqual(t, sum.Pages, sum.Chunks)
						if pageBytes > 0 {
							assert.Greater(t, sum.Pages, 2*sum.Chunks, "pages of a few rows")
						}
						if name != "all NaN" {
							assert.Equal(t, sum.Chunks, sum.ColumnIndexes, "a column index per column chunk")
						}
					})
				}
			}
		}
	}
	for _, recs := range tables {
		for _, r := range recs {
			r.Release()
		}
	}
}

// TestPagesForRandomAccess: a tensor column's pages are whole rows of at most
// WriterOptions.PageBytes (default 64 KiB, header and levels included), at least a row: a row
// of a [rows, 256] float32 column is one page of 63 rows, under 64 KiB, fetched by its offset
// index entry.
func TestPagesForRandomAccess(t *testing.T) {
	for _, tc := range []struct {
		name      string
		shape     []int64
		pageBytes int64
		rows      int64 // per page but the last
	}{
		{"1 KiB rows, default", []int64{1000, 256}, 0, 63},
		{"1 KiB rows, 8 KiB pages", []int64{100, 256}, 8 << 10, 7},
		{"100 KiB rows: a row a page", []int64{5, 25600}, 0, 1},
		{"scalars", []int64{100000}, 0, (64<<10 - 64) / 4},
		{"[4,4] cells: fixed-size lists of 16", []int64{20000, 4, 4}, 0, (64<<10 - 64) / (64 + 2*2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ndarray.New[float32](tc.shape...)
			for i := range d.Ravel() {
				d.Ravel()[i] = float32(i%1000) / 8
			}
			var rec arrow.Record
			if len(tc.shape) == 1 {
				col := array.NewFloat32Builder(memory.DefaultAllocator)
				col.AppendValues(d.Ravel(), nil)
				a := col.NewArray()
				col.Release()
				rec = array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "t", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
				a.Release()
			} else {
				var err error
				rec, err = dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "t", Kind: dataset.KindFixedShape, Dense: d}})
				require.NoError(t, err)
			}
			defer rec.Release()
			b := writeRecords(t, []arrow.Record{rec}, parquet.WriterOptions{Compression: parquet.Uncompressed, PageBytes: tc.pageBytes}, false)
			sum, err := parquet.CheckPageIndex(b)
			require.NoError(t, err)
			limit := tc.pageBytes
			if limit == 0 {
				limit = parquet.DefaultPageBytes
			}
			for k, n := range sum.RowsPerPage {
				if k < len(sum.RowsPerPage)-1 {
					assert.Equal(t, tc.rows, n, "page %d", k)
				}
				if tc.rows > 1 {
					assert.LessOrEqual(t, sum.PageSizes[k], limit, "page %d: header, levels and values", k)
				}
			}
		})
	}
}
