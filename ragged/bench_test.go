package ragged_test

import (
	"fmt"
	"testing"

	"github.com/ndarrow/ndarrow/ragged"
)

// benchRows returns row lengths cycling 0..15 (mean 7.5) for n values in all.
func benchLengths(nvals int) []int64 {
	var lengths []int64
	for total, i := 0, 0; total < nvals; i++ {
		l := min(int64(i%16), int64(nvals-total))
		lengths = append(lengths, l)
		total += int(l)
	}
	return lengths
}

// BenchmarkBuildBySet fills a [-1, -1] float32 array element by element in row-major order,
// against appending to a plain values slice and splits slice.
func BenchmarkBuildBySet(b *testing.B) {
	const nvals = 1 << 20
	lengths := benchLengths(nvals)
	b.Run("ragged.Set", func(b *testing.B) {
		for range b.N {
			a := ragged.New[float32](-1, -1)
			for i, l := range lengths {
				if l == 0 {
					a.Set(0, int64(i), 0) // a row of one, so that empty rows exist too
					continue
				}
				for j := range l {
					a.Set(float32(j), int64(i), j)
				}
			}
		}
		b.ReportMetric(float64(nvals)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvalues/s")
	})
	b.Run("plain-append", func(b *testing.B) {
		for range b.N {
			var values []float32
			splits := []int64{0}
			for _, l := range lengths {
				if l == 0 {
					values = append(values, 0)
				}
				for j := range l {
					values = append(values, float32(j))
				}
				splits = append(splits, int64(len(values)))
			}
		}
		b.ReportMetric(float64(nvals)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvalues/s")
	})
}

// BenchmarkRows sums every value row by row: through Elements (a view per row), through
// RowValues, and with a plain loop over values and offsets.
func BenchmarkRows(b *testing.B) {
	for _, nvals := range []int{1 << 10, 1 << 20, 1 << 24} {
		lengths := benchLengths(nvals)
		splits := []int64{0}
		for _, l := range lengths {
			splits = append(splits, splits[len(splits)-1]+l)
		}
		values := make([]float32, nvals)
		for i := range values {
			values[i] = float32(i % 7)
		}
		a, err := ragged.FromRowSplits(values, splits)
		if err != nil {
			b.Fatal(err)
		}
		report := func(b *testing.B, sum float32) {
			if sum < 0 {
				b.Fatal(sum)
			}
			b.ReportMetric(float64(nvals*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		}
		size := fmt.Sprintf("%dKiB", nvals*4>>10)
		b.Run(size+"/Elements", func(b *testing.B) {
			var sum float32
			for range b.N {
				for _, row := range a.Elements() {
					for _, v := range row.FlatValues() {
						sum += v
					}
				}
			}
			report(b, sum)
		})
		b.Run(size+"/RowValues", func(b *testing.B) {
			var sum float32
			for range b.N {
				for i := range a.NumRows() {
					for _, v := range a.RowValues(i) {
						sum += v
					}
				}
			}
			report(b, sum)
		})
		b.Run(size+"/plain-loop", func(b *testing.B) {
			var sum float32
			for range b.N {
				for i := 0; i+1 < len(splits); i++ {
					for _, v := range values[splits[i]:splits[i+1]] {
						sum += v
					}
				}
			}
			report(b, sum)
		})
	}
}
