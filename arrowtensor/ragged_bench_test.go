package arrowtensor

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/ragged"
)

// benchList returns a float32 ragged array of about nvals values in rows of 0 to 15 values,
// as an Arrow list array of the given type.
func benchList(b *testing.B, nvals int, list arrow.Type) arrow.Array {
	splits := []int64{0}
	for i := 0; splits[len(splits)-1] < int64(nvals); i++ {
		splits = append(splits, min(splits[len(splits)-1]+int64(i%16), int64(nvals)))
	}
	values := make([]float32, nvals)
	for i := range values {
		values[i] = float32(i)
	}
	a, err := ragged.FromRowSplits(values, splits)
	if err != nil {
		b.Fatal(err)
	}
	arr, err := ListFromRagged(memory.NewGoAllocator(), a, list)
	if err != nil {
		b.Fatal(err)
	}
	return arr
}

// BenchmarkRaggedFromList converts list arrays of growing size: a large_list is viewed in
// constant time; a list widens its int32 offsets (time grows with the rows); Validate reads
// every offset; the baseline copies the values once, as a copying reader must.
func BenchmarkRaggedFromList(b *testing.B) {
	for _, nvals := range []int{1 << 8, 1 << 18, 1 << 24} {
		size := fmt.Sprintf("%dKiB", nvals*4>>10)
		large := benchList(b, nvals, arrow.LARGE_LIST)
		small := benchList(b, nvals, arrow.LIST)
		b.Run(size+"/large_list", func(b *testing.B) {
			for range b.N {
				if _, err := RaggedFromList[float32](large); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size+"/large_list+Validate", func(b *testing.B) {
			for range b.N {
				a, err := RaggedFromList[float32](large)
				if err != nil {
					b.Fatal(err)
				}
				if err := a.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size+"/list", func(b *testing.B) {
			for range b.N {
				if _, err := RaggedFromList[float32](small); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size+"/copy-values", func(b *testing.B) {
			src := large.Data().Children()[0].Buffers()[1].Bytes()
			dst := make([]byte, len(src))
			for range b.N {
				copy(dst, src)
			}
		})
		large.Release()
		small.Release()
	}
}
