package ndarray

import (
	"fmt"
	"io"
	"testing"
)

// The benchmarks compare element access through Dense with the obvious baseline: a plain
// nested loop over the same []float32 with the strides written out by hand. See BENCHMARKS.md
// for results and how to run them.

const benchN = 1024 // the source is benchN × benchN float32 (4 MiB)

// benchLayouts are the views benchmarked: a contiguous array and a strided view that keeps
// every second row and drops the first and last column.
var benchLayouts = []struct {
	name                string
	indices             []Index
	rows, cols          int
	rowStride, colStart int
}{
	{"contiguous", nil, benchN, benchN, benchN, 0},
	{"strided", []Index{Step(2), Range(1, benchN-1)}, benchN / 2, benchN - 2, 2 * benchN, 1},
}

func benchSource() *Dense[float32] {
	a := New[float32](benchN, benchN)
	for i := range a.data {
		a.data[i] = float32(i % 251)
	}
	return a
}

// reportGBps reports the bytes of elements visited per second.
func reportGBps(b *testing.B, elements int) {
	b.ReportMetric(float64(elements)*4*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

var sink float32

func BenchmarkRead(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		n := l.rows * l.cols
		b.Run(l.name+"/plain-loop", func(b *testing.B) {
			b.ReportAllocs()
			data := a.data
			for range b.N {
				var s float32
				for i := 0; i < l.rows; i++ {
					row := i*l.rowStride + l.colStart
					for j := 0; j < l.cols; j++ {
						s += data[row+j]
					}
				}
				sink = s
			}
			reportGBps(b, n)
		})
		b.Run(l.name+"/Values", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				var s float32
				for x := range v.Values() {
					s += x
				}
				sink = s
			}
			reportGBps(b, n)
		})
		b.Run(l.name+"/Get", func(b *testing.B) {
			b.ReportAllocs()
			rows, cols := int64(l.rows), int64(l.cols)
			for range b.N {
				var s float32
				for i := int64(0); i < rows; i++ {
					for j := int64(0); j < cols; j++ {
						s += v.Get(i, j)
					}
				}
				sink = s
			}
			reportGBps(b, n)
		})
		b.Run(l.name+"/CopyTo", func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]float32, n)
			b.ResetTimer()
			for range b.N {
				_ = v.CopyTo(dst)
			}
			reportGBps(b, n)
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		n := l.rows * l.cols
		b.Run(l.name+"/plain-loop", func(b *testing.B) {
			b.ReportAllocs()
			data := a.data
			for range b.N {
				for i := 0; i < l.rows; i++ {
					row := i*l.rowStride + l.colStart
					for j := 0; j < l.cols; j++ {
						data[row+j] = float32(j)
					}
				}
			}
			reportGBps(b, n)
		})
		b.Run(l.name+"/Set", func(b *testing.B) {
			b.ReportAllocs()
			rows, cols := int64(l.rows), int64(l.cols)
			for range b.N {
				for i := int64(0); i < rows; i++ {
					for j := int64(0); j < cols; j++ {
						v.Set(float32(j), i, j)
					}
				}
			}
			reportGBps(b, n)
		})
		b.Run(l.name+"/CopyFrom", func(b *testing.B) {
			b.ReportAllocs()
			src := make([]float32, n)
			b.ResetTimer()
			for range b.N {
				_ = v.CopyFrom(src)
			}
			reportGBps(b, n)
		})
	}
}

// BenchmarkWriteTo measures the stream encoder against writing the same bytes with one
// io.Writer call (the zero-copy path for contiguous data).
func BenchmarkWriteTo(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		n := l.rows * l.cols
		b.Run(fmt.Sprintf("%s/WriteTo", l.name), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				_, _ = v.WriteTo(io.Discard)
			}
			reportGBps(b, n)
		})
	}
	b.Run("contiguous/one-Write", func(b *testing.B) {
		raw := asBytes(a.data)
		for range b.N {
			_, _ = io.Discard.Write(raw)
		}
		reportGBps(b, len(a.data))
	})
}
