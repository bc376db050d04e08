package parquet_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/heappeak"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

// benchSizes are the column sizes benchmarked: 64 MiB, and 1 GiB unless -short.
func benchSizes() []int64 {
	if testing.Short() {
		return []int64{64 << 20}
	}
	return []int64{64 << 20, 1 << 30}
}

// tensorColumn returns a record batch of one float32 arrow.fixed_shape_tensor column
// [n/1024, 256] (n bytes of values, 1 KiB rows). Release it.
func tensorColumn(b *testing.B, n int64) arrow.Record {
	d := ndarray.New[float32](n/1024, 256)
	for i := range d.Ravel() {
		d.Ravel()[i] = float32(i%4096) * 0.25
	}
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "emb", Kind: dataset.KindFixedShape, Dense: d}})
	if err != nil {
		b.Fatal(err)
	}
	return rec
}

// BenchmarkWriteTensorColumn writes one float32 arrow.fixed_shape_tensor column of
// [rows, 256] (1 KiB rows) as Parquet with each codec, against the same record batch written
// as an Arrow IPC file; GB/s counts the float32 payload, peak-MiB the heap above the start.
func BenchmarkWriteTensorColumn(b *testing.B) {
	for _, n := range benchSizes() {
		rec := tensorColumn(b, n)
		name := fmt.Sprintf("%dMiB", n>>20)
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd, parquet.Snappy} {
			b.Run(name+"/parquet-"+c.String(), func(b *testing.B) {
				measureWrite(b, n, func() error {
					w, err := parquet.NewWriter(io.Discard, rec.Schema(), parquet.WriterOptions{Compression: c})
					if err != nil {
						return err
					}
					if err := w.Write(rec); err != nil {
						return err
					}
					return w.Close()
				})
			})
		}
		b.Run(name+"/arrow-ipc-file", func(b *testing.B) {
			measureWrite(b, n, func() error {
				w, err := arrowipc.NewFileWriter(&discardSeeker{}, arrowipc.WithSchema(rec.Schema()))
				if err != nil {
					return err
				}
				if err := w.Write(rec); err != nil {
					return err
				}
				return w.Close()
			})
		})
		rec.Release()
	}
}

// measureWrite runs write (or a read) b.N times and reports GB/s of n payload bytes and the peak heap.
func measureWrite(b *testing.B, n int64, write func() error) {
	b.SetBytes(n)
	var peak uint64
	for range b.N {
		stop := heappeak.Watch()
		if err := write(); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop())
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}

// discardSeeker is io.Discard for the IPC file writer, which wants an io.WriteSeeker: it
// counts the bytes and seeks nowhere.
type discardSeeker struct{ n int64 }

func (d *discardSeeker) Write(p []byte) (int, error) { d.n += int64(len(p)); return len(p), nil }

func (d *discardSeeker) Seek(offset int64, whence int) (int64, error) {
	if whence == io.SeekCurrent && offset == 0 {
		return d.n, nil
	}
	return 0, fmt.Errorf("discardSeeker: no seeking")
}

// BenchmarkReadTensorColumn reads one float32 arrow.fixed_shape_tensor column of [rows, 256]
// from a Parquet file in memory (row groups of the writer's default 128 MiB, each decoded and
// released in turn), with each codec, against the same batch read from an Arrow IPC stream
// through ndarrow's decoder (views, no copy); GB/s counts the float32 payload, peak-MiB the
// heap above the start (the files themselves are allocated before).
func BenchmarkReadTensorColumn(b *testing.B) {
	for _, n := range benchSizes() {
		rec := tensorColumn(b, n)
		name := fmt.Sprintf("%dMiB", n>>20)
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd, parquet.Snappy} {
			var buf bytes.Buffer
			w, err := parquet.NewWriter(&buf, rec.Schema(), parquet.WriterOptions{Compression: c})
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			file := buf.Bytes()
			b.Run(name+"/parquet-"+c.String(), func(b *testing.B) {
				measureWrite(b, n, func() error {
					r, err := parquet.NewReader(file, parquet.ReaderOptions{})
					if err != nil {
						return err
					}
					for i := range r.NumRowGroups() {
						rec, err := r.ReadRowGroup(i)
						if err != nil {
							return err
						}
						rec.Release()
					}
					return nil
				})
			})
		}
		var buf bytes.Buffer
		w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(rec.Schema()))
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		rec.Release()
		file := buf.Bytes()
		b.Run(name+"/arrow-ipc-stream", func(b *testing.B) {
			measureWrite(b, n, func() error {
				_, _, err := dataset.Read(file, "emb", limits.Limits{})
				return err
			})
		})
	}
}

// BenchmarkReadFile reads every row group of the Parquet files NDARROW_PARQUET_FILES names
// (comma-separated; skipped when unset), each held in memory, as Arrow C++ 17's
// `parquet_bench read FILE 0` reads one on one thread (and, /parallel, GOMAXPROCS row groups
// at once, as `parquet_bench read FILE 1` reads on its pool): for the two to be timed on the
// same files in the same run. GB/s counts the Arrow data read (its buffers' bytes).
func BenchmarkReadFile(b *testing.B) {
	files := os.Getenv("NDARROW_PARQUET_FILES")
	if files == "" {
		b.Skip("NDARROW_PARQUET_FILES names the Parquet files to read")
	}
	for _, path := range strings.Split(files, ",") {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		read := func(parallelism int) (int64, error) {
			r, err := parquet.NewReader(data, parquet.ReaderOptions{Parallelism: parallelism})
			if err != nil {
				return 0, err
			}
			size := int64(0)
			err = r.ReadRowGroups(context.Background(), 0, r.NumRowGroups(), func(_ int, rec arrow.Record) error {
				for _, c := range rec.Columns() {
					size += dataBytes(c.Data())
				}
				rec.Release()
				return nil
			})
			return size, err
		}
		size, err := read(1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(path), func(b *testing.B) {
			measureWrite(b, size, func() error { _, err := read(1); return err })
		})
		b.Run(filepath.Base(path)+"/parallel", func(b *testing.B) {
			measureWrite(b, size, func() error { _, err := read(0); return err })
		})
	}
}

// dataBytes returns the bytes of the buffers of d and its children.
func dataBytes(d arrow.ArrayData) int64 {
	n := int64(0)
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// BenchmarkWriteFile writes the record batches of the Arrow IPC files NDARROW_PARQUET_WRITE
// names (comma-separated; skipped when unset) as Parquet files in os.TempDir() with each codec,
// 128 MiB row groups, as Arrow C++ 17's `parquet_bench write IN OUT CODEC 131072` writes a
// [rows, 256] float32 column: for the two to be timed on the same input in the same run.
// NDARROW_PARQUET_ENCODING=byte_stream_split writes that encoding. GB/s counts the Arrow data.
func BenchmarkWriteFile(b *testing.B) {
	files := os.Getenv("NDARROW_PARQUET_WRITE")
	if files == "" {
		b.Skip("NDARROW_PARQUET_WRITE names the Arrow IPC files to write as Parquet")
	}
	enc, err := parquet.ParseEncoding(os.Getenv("NDARROW_PARQUET_ENCODING"))
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range strings.Split(files, ",") {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := arrowipc.NewFileReader(f)
		if err != nil {
			b.Fatal(err)
		}
		var recs []arrow.Record
		size := int64(0)
		for i := range r.NumRecords() {
			rec, err := r.Record(i)
			if err != nil {
				b.Fatal(err)
			}
			rec.Retain()
			recs = append(recs, rec)
			for _, c := range rec.Columns() {
				size += dataBytes(c.Data())
			}
		}
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd, parquet.Snappy} {
			b.Run(filepath.Base(path)+"/"+c.String(), func(b *testing.B) {
				out := filepath.Join(os.TempDir(), "ndarrow-bench-write.parquet")
				defer os.Remove(out)
				measureWrite(b, size, func() error {
					f, err := os.Create(out)
					if err != nil {
						return err
					}
					defer f.Close()
					w, err := parquet.NewWriter(f, recs[0].Schema(), parquet.WriterOptions{Compression: c, Encoding: enc})
					if err != nil {
						return err
					}
					for _, rec := range recs {
						if err := w.Write(rec); err != nil {
							return err
						}
					}
					if err := w.Close(); err != nil {
						return err
					}
					return f.Close()
				})
			})
		}
		for _, rec := range recs {
			rec.Release()
		}
		r.Close()
		f.Close()
	}
}

// nestedColumn returns a record batch of one nested ragged column of about n bytes of float32
// values: list<list<float32>> (rows of 0–7 lists of 0–31 values, a ragged array of ragged
// rank two) or list<fixed_size_list<float32, 3>> (rows of 0–63 points). Release it.
func nestedColumn(b *testing.B, n int64, typ arrow.DataType) arrow.Record {
	bld := array.NewBuilder(memory.DefaultAllocator, typ)
	defer bld.Release()
	outer := bld.(*array.ListBuilder)
	x := float32(0)
	for values := int64(0); values*4 < n; {
		outer.Append(true)
		switch inner := outer.ValueBuilder().(type) {
		case *array.ListBuilder:
			vals := inner.ValueBuilder().(*array.Float32Builder)
			for k := range values % 8 {
				inner.Append(true)
				for range (values + k) % 32 {
					vals.Append(x)
					x += 0.25
					values++
				}
			}
			values++ // an empty row still moves the pattern
		case *array.FixedSizeListBuilder:
			vals := inner.ValueBuilder().(*array.Float32Builder)
			for range values % 64 {
				inner.Append(true)
				for range 3 {
					vals.Append(x)
					x += 0.25
					values++
				}
			}
			values++
		}
	}
	col := bld.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "r", Type: typ, Nullable: true}}, nil)
	return array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
}

// BenchmarkReadNested reads nested ragged columns of 64 MiB of float32 values, written by
// pqarrow (uncompressed and ZSTD, 128 MiB row groups), through the direct path and through
// pqarrow alone (ReadGeneral); GB/s counts the values, peak-MiB the heap above the start.
func BenchmarkReadNested(b *testing.B) {
	const n = 64 << 20
	for _, typ := range []arrow.DataType{
		arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float32)),
		arrow.ListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)),
	} {
		rec := nestedColumn(b, n, typ)
		name := map[arrow.Type]string{arrow.LIST: "list-list", arrow.FIXED_SIZE_LIST: "list-fixed3"}[typ.(*arrow.ListType).Elem().ID()]
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
			var buf bytes.Buffer
			w, err := parquet.NewWriter(&buf, rec.Schema(), parquet.WriterOptions{Compression: c})
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			readBothWays(b, name+"/"+c.String(), buf.Bytes(), n, nil)
		}
		rec.Release()
	}
}

// BenchmarkWriteNested writes the nested ragged columns of BenchmarkReadNested with the direct
// writer and with pqarrow (NewGeneralWriter), into memory; GB/s counts the values.
func BenchmarkWriteNested(b *testing.B) {
	const n = 64 << 20
	for _, typ := range []arrow.DataType{
		arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float32)),
		arrow.ListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)),
	} {
		rec := nestedColumn(b, n, typ)
		name := map[arrow.Type]string{arrow.LIST: "list-list", arrow.FIXED_SIZE_LIST: "list-fixed3"}[typ.(*arrow.ListType).Elem().ID()]
		for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
			for _, general := range []bool{false, true} {
				path := map[bool]string{false: "direct", true: "pqarrow"}[general]
				b.Run(name+"/"+c.String()+"/"+path, func(b *testing.B) {
					newWriter := parquet.NewWriter
					if general {
						newWriter = parquet.NewGeneralWriter
					}
					measureWrite(b, n, func() error {
						var buf bytes.Buffer
						w, err := newWriter(&buf, rec.Schema(), parquet.WriterOptions{Compression: c})
						if err != nil {
							return err
						}
						if parquet.WritesDirectly(w) == general {
							return fmt.Errorf("direct: %v", parquet.WritesDirectly(w))
						}
						if err := w.Write(rec); err != nil {
							return err
						}
						return w.Close()
					})
				})
			}
		}
		rec.Release()
	}
}

// readBothWays runs sub-benchmarks NAME/direct and NAME/pqarrow that read every row group of
// file, of n bytes of values (GB/s and peak heap as measureWrite reports them), through the
// direct path — failing unless it read every row group — and through pqarrow alone; report,
// if not nil, reports more of each.
func readBothWays(b *testing.B, name string, file []byte, n int64, report func(b *testing.B)) {
	for _, general := range []bool{false, true} {
		path := map[bool]string{false: "direct", true: "pqarrow"}[general]
		b.Run(name+"/"+path, func(b *testing.B) {
			measureWrite(b, n, func() error {
				r, err := parquet.NewReader(file, parquet.ReaderOptions{Parallelism: 1})
				if err != nil {
					return err
				}
				if general {
					parquet.ReadGeneral(r)
				}
				for i := range r.NumRowGroups() {
					rec, err := r.ReadRowGroup(i)
					if err != nil {
						return err
					}
					rec.Release()
				}
				if !general && parquet.DirectReads(r) != r.NumRowGroups() {
					return fmt.Errorf("%d of %d row groups read directly", parquet.DirectReads(r), r.NumRowGroups())
				}
				return nil
			})
			if report != nil {
				report(b)
			}
		})
	}
}
