package ndarray

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// MatMul (which calls gonum for floats) beside gonum's Gemm called on the slices (Dgemm for
// float64, Sgemm for float32: pure Go, blocked, parallel), this package's blocked kernel (what
// integers go through) and a plain triple loop (i, p, j: the rows of b scaled into the rows of
// c) over the same slices, square matrices of n:
//
//	go test ./ndarray -run '^$' -bench MatMul -benchtime 3x
//
// GFLOP/s counts 2n³ operations.
func BenchmarkMatMul(b *testing.B) {
	for _, n := range []int{64, 256, 512} {
		b.Run(fmt.Sprintf("float64/%d", n), func(b *testing.B) { benchMatMul[float64](b, n) })
		b.Run(fmt.Sprintf("float32/%d", n), func(b *testing.B) { benchMatMul[float32](b, n) })
	}
}

func benchMatMul[T float32 | float64](b *testing.B, n int) {
	x := FromFunc(func(i []int64) T { return T((i[0]*7+i[1]*3)%11) / 4 }, int64(n), int64(n))
	y := FromFunc(func(i []int64) T { return T((i[0]*5+i[1])%13) / 8 }, int64(n), int64(n))
	flops := func(b *testing.B) {
		b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run("ndarray", func(b *testing.B) {
		for range b.N {
			if _, err := MatMul(x, y); err != nil {
				b.Fatal(err)
			}
		}
		flops(b)
	})
	c := make([]T, n*n)
	b.Run("blocked", func(b *testing.B) { // the kernel integers go through
		for range b.N {
			blockedGemm(int64(n), int64(n), int64(n), matrixAt(x, nil), matrixAt(y, nil), c)
		}
		flops(b)
	})
	b.Run("gonum", func(b *testing.B) {
		for range b.N {
			switch xs := any(x.data).(type) {
			case []float64:
				gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, xs, n, any(y.data).([]float64), n, 0, any(c).([]float64), n)
			case []float32:
				gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, xs, n, any(y.data).([]float32), n, 0, any(c).([]float32), n)
			}
		}
		flops(b)
	})
	b.Run("loop", func(b *testing.B) {
		for range b.N {
			clear(c)
			for i := range n {
				for p := range n {
					a := x.data[i*n+p]
					for j := range n {
						c[i*n+j] += a * y.data[p*n+j]
					}
				}
			}
		}
		flops(b)
	})
}
