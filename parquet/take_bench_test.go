package parquet_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/parquet"
)

// BenchmarkTakeRows takes 256 and 5120 random rows of a table of a [262144, 256] float32
// tensor column (1 KiB rows, 256 MiB; [65536, 256] with -short) and an int64 column, written
// by ndarrow PLAIN uncompressed and ZSTD in 128 MiB row groups, with an offset index added
// ("+index") and without one: TakeRows row group by row group, against decoding every row
// group and gathering the rows. rows/s counts the rows taken; MiB-touched/op the bytes of
// the file read (TakeRanges and PageIndexRanges; ChunkRanges for the baseline), which is what
// a reader of object storage fetches.
func BenchmarkTakeRows(b *testing.B) {
	n := 262144
	if testing.Short() {
		n = 65536
	}
	rec := tensorTable(b, n, 256, 1)
	defer rec.Release()
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		plain := writeParquet(b, rec, parquet.WriterOptions{Compression: c})
		for _, variant := range []string{"", "+index"} {
			file := plain
			if variant != "" {
				file = withIndex(b, plain)
			}
			r, err := parquet.NewReader(file, parquet.ReaderOptions{Allocator: memory.DefaultAllocator})
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range []int{256, 5120} {
				local := pickRows(r, k, uint64(k))
				name := fmt.Sprintf("%s%s/rows=%d", c, variant, k)
				b.Run(name+"/take", func(b *testing.B) {
					for range b.N {
						for rg, rows := range local {
							if len(rows) == 0 {
								continue
							}
							out, err := r.TakeRows(rg, rows)
							if err != nil {
								b.Fatal(err)
							}
							out.Release()
						}
					}
					touched := int64(0)
					for rg, rows := range local {
						ranges, err := r.TakeRanges(rg, rows)
						if err != nil {
							b.Fatal(err)
						}
						touched += total(ranges) + total(r.PageIndexRanges(rg))
					}
					report(b, k, touched)
				})
				if variant != "" {
					continue // the baseline reads no index
				}
				b.Run(name+"/read-all-then-gather", func(b *testing.B) {
					for range b.N {
						for rg, rows := range local {
							full, err := r.ReadRowGroup(rg)
							if err != nil {
								b.Fatal(err)
							}
							for _, col := range full.Columns() {
								g := gatherRows(b, col, rows)
								g.Release()
							}
							full.Release()
						}
					}
					touched := int64(0)
					for rg := range local {
						touched += total(r.ChunkRanges(rg))
					}
					report(b, k, touched)
				})
			}
		}
	}
}

// pickRows returns k distinct random rows of r's file, seeded, as sorted row numbers local to
// each row group.
func pickRows(r *parquet.Reader, k int, seed uint64) [][]int64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	picked := map[int64]bool{}
	for len(picked) < k {
		picked[rng.Int64N(r.NumRows())] = true
	}
	global := make([]int64, 0, k)
	for row := range picked {
		global = append(global, row)
	}
	slices.Sort(global)
	local := make([][]int64, r.NumRowGroups())
	first := int64(0)
	rg := 0
	for _, row := range global {
		for row >= first+r.RowGroupRows(rg) {
			first += r.RowGroupRows(rg)
			rg++
		}
		local[rg] = append(local[rg], row-first)
	}
	return local
}

// gatherRows copies rows rows of arr.
func gatherRows(b *testing.B, arr arrow.Array, rows []int64) arrow.Array {
	slices := make([]arrow.Array, 0, len(rows))
	for _, row := range rows {
		slices = append(slices, array.NewSlice(arr, row, row+1))
	}
	if len(slices) == 0 {
		slices = append(slices, array.NewSlice(arr, 0, 0))
	}
	out, err := array.Concatenate(slices, memory.DefaultAllocator)
	for _, s := range slices {
		s.Release()
	}
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func total(ranges []parquet.ByteRange) int64 {
	n := int64(0)
	for _, br := range ranges {
		n += br.Length
	}
	return n
}

func report(b *testing.B, rows int, touched int64) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(touched)/(1<<20), "MiB-touched/op")
	b.ReportMetric(float64(touched)/float64(rows)/(1<<10), "KiB-touched/row")
}
