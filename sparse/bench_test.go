package sparse_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// The benchmark matrix is SciPy's in bench/sparse_vs_scipy.py: 4096×4096 float64 with 1% of
// the elements non-zero at uniformly random positions (seeded).
const benchN = 4096

func benchDense() *ndarray.Dense[float64] {
	rng := rand.New(rand.NewPCG(42, 42))
	d := ndarray.New[float64](benchN, benchN)
	data := d.Data()
	for i := range data {
		if rng.Float64() < 0.01 {
			data[i] = rng.Float64() + 1
		}
	}
	return d
}

// reportDense reports the throughput over the dense matrix's bytes.
func reportDense(b *testing.B) {
	b.ReportMetric(float64(benchN*benchN*8)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func BenchmarkDenseToCSR(b *testing.B) {
	d := benchDense()
	b.ResetTimer()
	for range b.N {
		if _, err := sparse.CSRFromDense(d); err != nil {
			b.Fatal(err)
		}
	}
	reportDense(b)
}

func BenchmarkCSRToDense(b *testing.B) {
	csr, _ := sparse.CSRFromDense(benchDense())
	b.ResetTimer()
	for range b.N {
		dense(csr.ToDense())
	}
	reportDense(b)
}

// BenchmarkCOOToCSR converts a canonical COO (sorted, as FromDense and in-order Sets leave it)
// and a shuffled one (what random Sets leave).
func BenchmarkCOOToCSR(b *testing.B) {
	canonical := sparse.FromDense(benchDense())
	rng := rand.New(rand.NewPCG(1, 2))
	coords := canonical.Indices().AsInt64()
	values := canonical.Data()
	perm := rng.Perm(len(values))
	shuffledCoords := make([]int32, len(coords))
	shuffledValues := make([]float64, len(values))
	for to, from := range perm {
		shuffledCoords[2*to], shuffledCoords[2*to+1] = int32(coords[2*from]), int32(coords[2*from+1])
		shuffledValues[to] = values[from]
	}
	shuffled, err := sparse.MakeCOO(ndarray.Shape{benchN, benchN}, sparse.Int32Indices(shuffledCoords), shuffledValues)
	if err != nil {
		b.Fatal(err)
	}
	for name, c := range map[string]*sparse.COO[float64]{"canonical": canonical, "shuffled": shuffled} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if _, err := c.ToCSR(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.NNZ())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mnnz/s")
		})
	}
}

// BenchmarkCOOBuild builds a COO of the benchmark's non-zeros by Set, in row-major order and
// in random order, then reads every one back with Get; the baseline is a Go map from
// coordinates to values, the obvious hand-made structure.
func BenchmarkCOOBuild(b *testing.B) {
	canonical := sparse.FromDense(benchDense())
	coords := canonical.Indices().AsInt64()
	nnz := len(coords) / 2
	rng := rand.New(rand.NewPCG(3, 4))
	random := rng.Perm(nnz)
	inOrder := make([]int, nnz)
	for i := range inOrder {
		inOrder[i] = i
	}
	for _, order := range []struct {
		name string
		perm []int
	}{{"ordered", inOrder}, {"random", random}} {
		b.Run("Set/"+order.name, func(b *testing.B) {
			for range b.N {
				c := sparse.NewCOO[float64](benchN, benchN)
				for _, p := range order.perm {
					c.Set(1, coords[2*p], coords[2*p+1])
				}
			}
			b.ReportMetric(float64(nnz)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mset/s")
		})
		b.Run("Get/"+order.name, func(b *testing.B) {
			c := sparse.NewCOO[float64](benchN, benchN)
			for _, p := range order.perm {
				c.Set(1, coords[2*p], coords[2*p+1])
			}
			b.ResetTimer()
			for range b.N {
				for _, p := range random {
					if c.Get(coords[2*p], coords[2*p+1]) != 1 {
						b.Fatal("lost a value")
					}
				}
			}
			b.ReportMetric(float64(nnz)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mget/s")
		})
	}
	b.Run("Set/map-baseline", func(b *testing.B) {
		for range b.N {
			m := map[[2]int64]float64{}
			for _, p := range random {
				m[[2]int64{coords[2*p], coords[2*p+1]}] = 1
			}
		}
		b.ReportMetric(float64(nnz)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mset/s")
	})
}

// BenchmarkMatMul multiplies the benchmark matrix, as a CSR, a CSC and a canonical COO, by a
// vector [4096] and by a matrix [4096, 64] (SciPy's a @ b in bench/sparse_vs_scipy.py); the
// baseline is the loop a user writes over a CSR's Indptr, Indices and Data for the vector.
func BenchmarkMatMul(b *testing.B) {
	csr, err := sparse.CSRFromDense(benchDense())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	vec := ndarray.New[float64](benchN)
	for i := range vec.Data() {
		vec.Data()[i] = rng.Float64()
	}
	mat := ndarray.New[float64](benchN, 64)
	for i := range mat.Data() {
		mat.Data()[i] = rng.Float64()
	}
	for _, a := range []sparse.Array{csr, csr.ToCSC(), csr.ToCOO()} {
		for _, x := range []*ndarray.Dense[float64]{vec, mat} {
			what := map[bool]string{true: "vector", false: "matrix64"}[x == vec]
			b.Run(fmt.Sprintf("%v/%s", a.Format(), what), func(b *testing.B) {
				for range b.N {
					if _, err := sparse.MatMul(a, x); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(a.NNZ())*float64(x.Size()/benchN)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmul/s")
			})
		}
	}
	b.Run("loop-baseline/CSR/vector", func(b *testing.B) {
		indptr, indices, data, v := csr.Indptr().AsInt64(), csr.Indices().AsInt64(), csr.Data(), vec.Data()
		for range b.N {
			out := make([]float64, benchN)
			for r := range benchN {
				var s float64
				for p := indptr[r]; p < indptr[r+1]; p++ {
					s += data[p] * v[indices[p]]
				}
				out[r] = s
			}
		}
		b.ReportMetric(float64(csr.NNZ())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmul/s")
	})
	b.Run("Rows/CSR", func(b *testing.B) { // a view: no copy of the rest
		for range b.N {
			if _, err := csr.Rows(1024, 2048); err != nil {
				b.Fatal(err)
			}
		}
	})
}
