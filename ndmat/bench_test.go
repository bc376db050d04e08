package ndmat

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ndarrow/ndarrow/ndarray"
)

// BenchmarkMatrix hands gonum a matrix of 32 Ki and of 1 Mi float64 elements as a view (its
// time does not grow with the size) and, as the baseline, as a copy (mat.NewDense of the
// array's values).
func BenchmarkMatrix(b *testing.B) {
	for _, rows := range []int64{32, 1024} {
		d := ndarray.New[float64](rows, 1024)
		name := fmt.Sprintf("%dx%d", d.Dim(0), d.Dim(1))
		b.Run(name+"/view", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := Matrix(d); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/copy", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				mat.NewDense(int(d.Dim(0)), int(d.Dim(1)), d.Clone().Data())
			}
			b.ReportMetric(float64(8*d.Size())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
