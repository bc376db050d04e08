package ndarray

import (
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

// run benchmarks body as the sub-benchmark name, reporting allocations and GB/s over elements.
func run(b *testing.B, name string, elements int, body func()) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			body()
		}
		reportGBps(b, elements)
	})
}

func BenchmarkRead(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		n := l.rows * l.cols
		rows, cols := int64(l.rows), int64(l.cols)
		run(b, l.name+"/plain-loop", n, func() {
			var s float32
			for i := 0; i < l.rows; i++ {
				row := a.data[i*l.rowStride+l.colStart:]
				for j := 0; j < l.cols; j++ {
					s += row[j]
				}
			}
			sink = s
		})
		run(b, l.name+"/Values", n, func() {
			var s float32
			for x := range v.Values() {
				s += x
			}
			sink = s
		})
		run(b, l.name+"/Get", n, func() {
			var s float32
			for i := range rows {
				for j := range cols {
					s += v.Get(i, j)
				}
			}
			sink = s
		})
		dst := make([]float32, n)
		run(b, l.name+"/CopyTo", n, func() { _ = v.CopyTo(dst) })
	}
}

func BenchmarkWrite(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		n := l.rows * l.cols
		rows, cols := int64(l.rows), int64(l.cols)
		run(b, l.name+"/plain-loop", n, func() {
			for i := 0; i < l.rows; i++ {
				row := a.data[i*l.rowStride+l.colStart:]
				for j := 0; j < l.cols; j++ {
					row[j] = float32(j)
				}
			}
		})
		run(b, l.name+"/Set", n, func() {
			for i := range rows {
				for j := range cols {
					v.Set(float32(j), i, j)
				}
			}
		})
		src := make([]float32, n)
		run(b, l.name+"/CopyFrom", n, func() { _ = v.CopyFrom(src) })
	}
}

// BenchmarkWriteTo measures the stream encoder against writing the same bytes with one
// io.Writer call (the zero-copy path for contiguous data).
func BenchmarkWriteTo(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		run(b, l.name+"/WriteTo", l.rows*l.cols, func() { _, _ = v.WriteTo(io.Discard) })
	}
	raw := asBytes(a.data)
	run(b, "contiguous/one-Write", len(a.data), func() { _, _ = io.Discard.Write(raw) })
}

// BenchmarkAsType converts the float32 source to float64 and to int32, contiguous and as the
// strided view, against the baseline of a plain loop of Go conversions into a new slice, as
// AsType makes one (Go's float to int conversion has no defined result out of range and no
// NaN rule; AsType's saturates).
func BenchmarkAsType(b *testing.B) {
	a := benchSource()
	for _, l := range benchLayouts {
		v := Must(a.Slice(l.indices...))
		n := l.rows * l.cols
		run(b, l.name+"/float64/plain-loop", n, func() {
			out64 := make([]float64, n)
			k := 0
			for i := 0; i < l.rows; i++ {
				row := a.data[i*l.rowStride+l.colStart:]
				for j := 0; j < l.cols; j++ {
					out64[k] = float64(row[j])
					k++
				}
			}
		})
		run(b, l.name+"/float64/AsType", n, func() {
			if _, err := AsType[float64](v); err != nil {
				b.Fatal(err)
			}
		})
		run(b, l.name+"/int32/plain-loop", n, func() {
			out32 := make([]int32, n)
			k := 0
			for i := 0; i < l.rows; i++ {
				row := a.data[i*l.rowStride+l.colStart:]
				for j := 0; j < l.cols; j++ {
					out32[k] = int32(row[j])
					k++
				}
			}
		})
		run(b, l.name+"/int32/AsType", n, func() {
			if _, err := AsType[int32](v); err != nil {
				b.Fatal(err)
			}
		})
	}
}
