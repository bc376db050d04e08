package npy

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndarrow/ndarrow/ndarray"
)

// BenchmarkOpen maps a .npy file and views its values, for files of 1 KiB and 64 MiB: the
// time does not depend on the size.
func BenchmarkOpen(b *testing.B) {
	for _, s := range []struct {
		name string
		n    int64
	}{{"1KiB", 1 << 8}, {"64MiB", 16 << 20}} {
		b.Run("size="+s.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "a.npy")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Write(f, ndarray.New[float32](s.n)); err != nil {
				b.Fatal(err)
			}
			f.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a, err := Open(path, Limits{})
				if err != nil {
					b.Fatal(err)
				}
				d, _ := AsDense[float32](a)
				_ = d.Get(s.n - 1)
				a.Release()
			}
		})
	}
}

// BenchmarkReadStream reads a 64 MiB .npy file from an io.Reader (one copy), against
// io.ReadFull of the same bytes into a preallocated buffer.
func BenchmarkReadStream(b *testing.B) {
	var file bytes.Buffer
	_, _ = Write(&file, ndarray.New[float32](16<<20))
	raw := file.Bytes()
	b.Run("Read", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for range b.N {
			if _, err := Read(bytes.NewReader(raw), Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("io.ReadFull", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		dst := make([]byte, len(raw))
		for range b.N {
			_, _ = io.ReadFull(bytes.NewReader(raw), dst)
		}
	})
}

// BenchmarkWrite writes a 64 MiB array as .npy against copying its bytes.
func BenchmarkWrite(b *testing.B) {
	d := ndarray.New[float32](16 << 20)
	sink := bytes.NewBuffer(make([]byte, 0, 64<<20+4096))
	b.Run("Write", func(b *testing.B) {
		b.SetBytes(64 << 20)
		for range b.N {
			sink.Reset()
			_, _ = Write(sink, d)
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(64 << 20)
		dst := make([]byte, 64<<20)
		src := ndarray.LittleEndianBytes(d.Data())
		for range b.N {
			copy(dst, src)
		}
	})
}

// BenchmarkReadNpz reads a 64 MiB float32 array from an .npz archive: stored, where the
// values are a view and the cost is the checksum pass over them, and deflated, where they are
// decompressed; against the baseline of npy.ReadBytes of the same array as a plain .npy file
// (a view, no checksum).
func BenchmarkReadNpz(b *testing.B) {
	d := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0] % 1000) }, 16<<20)
	var plain bytes.Buffer
	if _, err := Write(&plain, d); err != nil {
		b.Fatal(err)
	}
	archive := func(compress bool) []byte {
		var buf bytes.Buffer
		z := NewNpzWriter(&buf, compress)
		if err := z.Write("x", d); err != nil {
			b.Fatal(err)
		}
		if err := z.Close(); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"npy.ReadBytes", func() error { _, err := ReadBytes(plain.Bytes(), Limits{}); return err }},
		{"ReadNpz/stored", func() func() error {
			a := archive(false)
			return func() error { _, err := ReadNpz(a, Limits{}); return err }
		}()},
		{"ReadNpz/deflated", func() func() error {
			a := archive(true)
			return func() error { _, err := ReadNpz(a, Limits{}); return err }
		}()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(4 * d.Size())
			b.ReportAllocs()
			for range b.N {
				if err := c.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
