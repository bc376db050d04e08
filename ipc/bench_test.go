package ipc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// The read benchmarks show that reading a tensor from a memory map costs the same whatever
// its size: the values are not copied. See BENCHMARKS.md.

var benchSizes = []struct {
	name  string
	bytes int64
}{
	{"1KiB", 1 << 10},
	{"1MiB", 1 << 20},
	{"1GiB", 1 << 30},
}

// writeBenchFile writes one float32 tensor of size bytes to a file and returns its path.
func writeBenchFile(b *testing.B, size int64) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.tensor")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	d := ndarray.New[float32](size/4/256, 256)
	if _, err := WriteTensor(f, d, nil); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReadMapped opens a memory-mapped tensor file, decodes its tensor, views it as a
// Dense[float32] and reads one element, for tensors from 1 KiB to 1 GiB.
func BenchmarkReadMapped(b *testing.B) {
	for _, s := range benchSizes {
		b.Run("size="+s.name, func(b *testing.B) {
			path := writeBenchFile(b, s.bytes)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				rd, err := OpenFile(path, Limits{})
				if err != nil {
					b.Fatal(err)
				}
				t, err := rd.Next()
				if err != nil {
					b.Fatal(err)
				}
				d, err := AsDense[float32](t)
				if err != nil {
					b.Fatal(err)
				}
				_ = d.Get(d.Dim(0)-1, 255)
				t.Release()
				_ = rd.Close()
			}
		})
	}
}

// BenchmarkReadBytes decodes a tensor from bytes already in memory.
func BenchmarkReadBytes(b *testing.B) {
	for _, s := range benchSizes[:2] {
		b.Run("size="+s.name, func(b *testing.B) {
			var buf bytes.Buffer
			_, _ = WriteTensor(&buf, ndarray.New[float32](s.bytes/4/256, 256), nil)
			input := buf.Bytes()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t, err := NewBytesReader(input, Limits{}).Next()
				if err != nil {
					b.Fatal(err)
				}
				_, _ = AsDense[float32](t)
			}
		})
	}
}

// BenchmarkWriteTensor compares WriteTensor with a plain copy of the same bytes into a buffer
// of the same size (the floor for any writer that must deliver them).
func BenchmarkWriteTensor(b *testing.B) {
	for _, s := range []int64{1 << 20, 64 << 20} {
		d := ndarray.New[float32](s/4/256, 256)
		name := fmt.Sprintf("size=%dMiB", s>>20)
		sink := bytes.NewBuffer(make([]byte, 0, s+4096))
		b.Run(name+"/WriteTensor", func(b *testing.B) {
			b.SetBytes(s)
			for range b.N {
				sink.Reset()
				_, _ = WriteTensor(sink, d, nil)
			}
		})
		b.Run(name+"/copy", func(b *testing.B) {
			b.SetBytes(s)
			raw := ndarray.LittleEndianBytes(d.Data())
			dst := make([]byte, s)
			for range b.N {
				copy(dst, raw)
			}
		})
		b.Run(name+"/WriteTensor-discard", func(b *testing.B) {
			b.SetBytes(s)
			b.ReportAllocs()
			for range b.N {
				_, _ = WriteTensor(io.Discard, d, nil)
			}
		})
	}
}

// BenchmarkTensorColumns reads a fixed_shape_tensor column from an IPC stream in memory (in
// batches of 1 MiB), with BatchReader (views of the input) against arrow-go's reader (which
// copies each body), for 1 MiB and 64 MiB of values: per batch the first costs the same
// whatever its size, the second copies it.
func BenchmarkTensorColumns(b *testing.B) {
	for _, size := range []int64{1 << 20, 64 << 20} {
		input := streamRows(b, ndarray.New[float32](size/4/256, 256), 1024)
		name := fmt.Sprintf("size=%dMiB", size>>20)
		b.Run(name+"/ndarrow", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				_, recs, err := ReadRecordBatches(input, BatchOptions{})
				if err != nil {
					b.Fatal(err)
				}
				releaseAll(recs)
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(name+"/arrow-go", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r, err := arrowipc.NewReader(bytes.NewReader(input))
				if err != nil {
					b.Fatal(err)
				}
				for r.Next() {
				}
				r.Release()
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// listFile writes a file of one list<float32> column of 4096 rows holding size bytes of
// values in all, and returns its path.
func listFile(b *testing.B, size int64) string {
	rows := int64(4096)
	per := size / 4 / rows
	values := make([]float32, per*rows)
	offsets := make([]int32, rows+1)
	for i := range rows + 1 {
		offsets[i] = int32(i * per)
	}
	child := array.NewData(arrow.PrimitiveTypes.Float32, len(values), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(values))}, nil, 0, 0)
	defer child.Release()
	data := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Float32), int(rows), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{child}, 0, 0)
	defer data.Release()
	col := array.MakeFromData(data)
	schema := arrow.NewSchema([]arrow.Field{{Name: "tokens", Type: col.DataType()}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, rows)
	col.Release()
	path := filepath.Join(b.TempDir(), "list.arrows")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := arrowipc.NewWriter(f, arrowipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		b.Fatal(err)
	}
	rec.Release()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkListColumn reads a list<float32> column of 4096 rows from a memory-mapped file
// into a ragged array and reads its last value, for 1 MiB and 1 GiB of values: with the
// decoder the time is that of checking 4097 offsets whatever the size; arrow-go's reader
// copies the body.
func BenchmarkListColumn(b *testing.B) {
	for _, s := range []struct {
		name  string
		bytes int64
	}{{"1MiB", 1 << 20}, {"1GiB", 1 << 30}} {
		path := listFile(b, s.bytes)
		m, err := mmap.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("size="+s.name+"/ndarrow", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				_, recs, err := ReadRecordBatches(m.Bytes(), BatchOptions{})
				if err != nil {
					b.Fatal(err)
				}
				a, err := arrowtensor.RaggedFromList[float32](recs[0].Column(0))
				if err != nil {
					b.Fatal(err)
				}
				_ = a.FlatValues()[len(a.FlatValues())-1]
				releaseAll(recs)
			}
			b.ReportMetric(float64(s.bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run("size="+s.name+"/arrow-go", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r, err := arrowipc.NewReader(bytes.NewReader(m.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				for r.Next() {
					a, err := arrowtensor.RaggedFromList[float32](r.Record().Column(0))
					if err != nil {
						b.Fatal(err)
					}
					_ = a.FlatValues()[len(a.FlatValues())-1]
				}
				r.Release()
			}
			b.ReportMetric(float64(s.bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		m.Release()
	}
}

// BenchmarkReadSparse reads a CSR matrix (float32 values, int32 indices) from bytes: the
// values and indices are views, and the time goes into checking every index (RELIABILITY.md).
// The baseline copies the same message bytes once, which a reader that copied would do.
func BenchmarkReadSparse(b *testing.B) {
	for _, nnz := range []int{1 << 10, 1 << 20, 1 << 24} {
		rows := int64(nnz / 64)
		coo := sparse.NewCOO[float32](rows, 1024)
		for i := range nnz {
			coo.Set(1, int64(i/64), int64(i%64)*16)
		}
		csr, err := coo.ToCSR()
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := WriteSparse[float32](&buf, csr, nil); err != nil {
			b.Fatal(err)
		}
		msg := buf.Bytes()
		b.Run(fmt.Sprintf("nnz=%d/ndarrow", nnz), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for range b.N {
				if _, err := NewBytesReader(msg, Limits{}).NextSparse(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("nnz=%d/copy", nnz), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			dst := make([]byte, len(msg))
			for range b.N {
				copy(dst, msg)
			}
		})
	}
}
