package tfrecord_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// rowFloats is the width of the benchmarks' rows: 256 float32, 1 KiB per Example.
const rowFloats = 256

// benchSizes are the float32 payloads written and read: 64 MiB, and 1 GiB unless -short.
func benchSizes(b *testing.B) []int64 {
	if testing.Short() {
		return []int64{64 << 20}
	}
	return []int64{64 << 20, 1 << 30}
}

func sizeName(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%dGiB", n>>30)
	}
	return fmt.Sprintf("%dMiB", n>>20)
}

// floatTable returns a [rows, 256] float32 column of n bytes.
func floatTable(n int64) *ndarray.Dense[float32] {
	rows := n / (4 * rowFloats)
	d := ndarray.New[float32](rows, rowFloats)
	for i := range d.Ravel() {
		d.Ravel()[i] = float32(i % 1000)
	}
	return d
}

// BenchmarkWriteExamples writes a [rows, 256] float32 column as one Example per row (1 KiB
// rows) through TFRecord framing into memory, against copying the same float32 bytes into
// memory; GB/s counts the float32 payload.
func BenchmarkWriteExamples(b *testing.B) {
	for _, n := range benchSizes(b) {
		col := floatTable(n)
		payload := ndarray.LittleEndianBytes(col.Ravel())
		out := bytes.NewBuffer(make([]byte, 0, n+n/8))
		b.Run(sizeName(n)+"/examples", func(b *testing.B) {
			b.SetBytes(n)
			for range b.N {
				out.Reset()
				w, _ := tfrecord.NewWriter(out, tfrecord.None)
				if _, err := tfrecord.WriteExamples(w, []tfrecord.Column{{Name: "x", Dense: col}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(sizeName(n)+"/copy", func(b *testing.B) {
			b.SetBytes(n)
			for range b.N {
				out.Reset()
				out.Write(payload)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkReadExamples reads a TFRecord file of such Examples from memory into a dense
// [rows, 256] float32 column (Split, CRCs verified, then DecodeExamples), against copying
// the float32 bytes.
func BenchmarkReadExamples(b *testing.B) {
	for _, n := range benchSizes(b) {
		col := floatTable(n)
		var file bytes.Buffer
		w, _ := tfrecord.NewWriter(&file, tfrecord.None)
		if _, err := tfrecord.WriteExamples(w, []tfrecord.Column{{Name: "x", Dense: col}}); err != nil {
			b.Fatal(err)
		}
		payload := ndarray.LittleEndianBytes(col.Ravel())
		b.Run(sizeName(n)+"/examples", func(b *testing.B) {
			b.SetBytes(n)
			for range b.N {
				records, err := tfrecord.Split(file.Bytes(), tfrecord.Options{})
				if err != nil {
					b.Fatal(err)
				}
				cols, err := tfrecord.DecodeExamples(records, limits.Limits{})
				if err != nil || cols[0].Dense == nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(sizeName(n)+"/copy", func(b *testing.B) {
			b.SetBytes(n)
			dst := make([]byte, n)
			for range b.N {
				copy(dst, payload)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(sizeName(n)+"/framing-only", func(b *testing.B) {
			b.SetBytes(n)
			for range b.N {
				r, _ := tfrecord.NewReader(bytes.NewReader(file.Bytes()), tfrecord.Options{})
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkCRC32C measures the masked CRC-32C every record's data goes through.
func BenchmarkCRC32C(b *testing.B) {
	for _, n := range []int{1 << 10, 64 << 20} {
		data := bytes.Repeat([]byte{0xa5}, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				tfrecord.MaskedCRC(data)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkExampleRecord encodes and decodes one 1 KiB Example (256 float32).
func BenchmarkExampleRecord(b *testing.B) {
	col := floatTable(64 << 10)
	e, err := tfrecord.NewExampleEncoder([]tfrecord.Column{{Name: "x", Dense: col}})
	if err != nil {
		b.Fatal(err)
	}
	rec, _ := e.Encode(0)
	rec = bytes.Clone(rec)
	b.Run("encode", func(b *testing.B) {
		for i := range b.N {
			if _, err := e.Encode(int64(i) % e.Rows()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		var ex tfpb.Example
		for range b.N {
			if err := proto.Unmarshal(rec, &ex); err != nil {
				b.Fatal(err)
			}
		}
	})
}
