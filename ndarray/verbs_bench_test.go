package ndarray

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// The verbs' benchmarks compare Sum, SumAxis and Add with a plain Go loop over the same
// []float64 and with gonum's floats package (assembly kernels), in one run:
//
//	go test ./ndarray -run '^$' -bench 'Sum|Add' -benchtime 200x
//
// GB/s counts the bytes read.

func benchFloats(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%1000) * 0.001
	}
	return x
}

func reportBytes(b *testing.B, n int) {
	b.ReportMetric(float64(n)*8*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

var sink64 float64

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 20} {
		x := benchFloats(n)
		d := Must(FromSlice(x, int64(n)))
		b.Run(fmt.Sprintf("ndarray/%d", n), func(b *testing.B) {
			for range b.N {
				sink64 += Sum(d)
			}
			reportBytes(b, n)
		})
		b.Run(fmt.Sprintf("gonum/%d", n), func(b *testing.B) {
			for range b.N {
				sink64 += floats.Sum(x)
			}
			reportBytes(b, n)
		})
		b.Run(fmt.Sprintf("loop/%d", n), func(b *testing.B) {
			for range b.N {
				s := 0.0
				for _, v := range x {
					s += v
				}
				sink64 += s
			}
			reportBytes(b, n)
		})
	}
	// A strided view: every other column of a 1024×1024 matrix, summed along axis 0.
	m := Must(FromSlice(benchFloats(1<<20), 1024, 1024))
	half := Must(m.Slice(All(), Step(2)))
	b.Run("ndarray/axis0-strided", func(b *testing.B) {
		for range b.N {
			r, _ := SumAxis(half, 0)
			sink64 += r.data[0]
		}
		reportBytes(b, 1<<19)
	})
	b.Run("loop/axis0-strided", func(b *testing.B) {
		out := make([]float64, 512)
		for range b.N {
			clear(out)
			for i := range 1024 {
				row := m.data[i*1024:]
				for j := range out {
					out[j] += row[2*j]
				}
			}
			sink64 += out[0]
		}
		reportBytes(b, 1<<19)
	})
}

func BenchmarkAdd(b *testing.B) {
	const n = 1 << 20
	x, y := benchFloats(n), benchFloats(n)
	dx, dy := Must(FromSlice(x, 1024, 1024)), Must(FromSlice(y, 1024, 1024))
	row := Must(FromSlice(y[:1024], 1024))
	b.Run("ndarray", func(b *testing.B) {
		for range b.N {
			r, _ := Add(dx, dy)
			sink64 += r.data[0]
		}
		reportBytes(b, 2*n)
	})
	b.Run("ndarray/broadcast-row", func(b *testing.B) {
		for range b.N {
			r, _ := Add(dx, row)
			sink64 += r.data[0]
		}
		reportBytes(b, n)
	})
	b.Run("gonum/AddTo", func(b *testing.B) {
		for range b.N {
			out := make([]float64, n)
			floats.AddTo(out, x, y)
			sink64 += out[0]
		}
		reportBytes(b, 2*n)
	})
	b.Run("loop", func(b *testing.B) {
		for range b.N {
			out := make([]float64, n)
			for i := range out {
				out[i] = x[i] + y[i]
			}
			sink64 += out[0]
		}
		reportBytes(b, 2*n)
	})
}
