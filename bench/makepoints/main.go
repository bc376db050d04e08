// Command makepoints writes the point clouds of issue 40's nested-read benchmark
// (bench/points.sh): an Arrow IPC file of one column
//
//	points  list<fixed_size_list<float32, 3>>: -rows rows (16384) of 1 to -most (2048) xyz
//	        points each, the count and the coordinates random from a fixed seed
//
// — about 200 MB of values — as DIR/points.arrow (record batches of 1024 rows), for Arrow
// C++'s parquet_bench to write as Parquet, and the same rows as Parquet by ndarrow's writer,
// DIR/points_ndarrow.parquet (uncompressed) and DIR/points_ndarrow_zstd.parquet.
//
//	go run ./bench/makepoints -dir /tmp/points
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/parquet"
)

func main() {
	dir := flag.String("dir", ".", "directory to write the files into")
	rows := flag.Int("rows", 16384, "rows (point clouds)")
	most := flag.Int("most", 2048, "the most points of a row")
	seed := flag.Uint64("seed", 40, "seed of the counts and coordinates")
	flag.Parse()
	if *rows <= 0 || *most <= 0 {
		fail(fmt.Errorf("-rows and -most must be positive"))
	}
	if err := os.MkdirAll(*dir, 0o777); err != nil {
		fail(err)
	}
	typ := arrow.ListOf(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32))
	schema := arrow.NewSchema([]arrow.Field{{Name: "points", Type: typ, Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	var recs []arrow.Record
	for lo := 0; lo < *rows; lo += 1024 {
		b := array.NewListBuilder(memory.DefaultAllocator, typ.Elem())
		cells := b.ValueBuilder().(*array.FixedSizeListBuilder)
		xyz := cells.ValueBuilder().(*array.Float32Builder)
		for range min(1024, *rows-lo) {
			b.Append(true)
			for range 1 + r.IntN(*most) {
				cells.Append(true)
				xyz.AppendValues([]float32{r.Float32(), r.Float32(), r.Float32()}, nil)
			}
		}
		col := b.NewArray()
		recs = append(recs, array.NewRecord(schema, []arrow.Array{col}, int64(col.Len())))
		col.Release()
		b.Release()
	}
	writeAll(filepath.Join(*dir, "points.arrow"), recs, func(w *os.File) (recordWriter, error) {
		return arrowipc.NewFileWriter(w, arrowipc.WithSchema(schema))
	})
	for name, c := range map[string]parquet.Compression{"points_ndarrow.parquet": parquet.Uncompressed, "points_ndarrow_zstd.parquet": parquet.Zstd} {
		writeAll(filepath.Join(*dir, name), recs, func(w *os.File) (recordWriter, error) {
			return parquet.NewWriter(w, schema, parquet.WriterOptions{Compression: c})
		})
	}
	for _, rec := range recs {
		rec.Release()
	}
}

// recordWriter writes record batches into a file, whole once closed.
type recordWriter interface {
	Write(arrow.Record) error
	Close() error
}

// writeAll writes recs into a new file at path through the writer open makes of it.
func writeAll(path string, recs []arrow.Record, open func(*os.File) (recordWriter, error)) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	w, err := open(f)
	if err != nil {
		fail(err)
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			fail(err)
		}
	}
	if err := w.Close(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "makepoints:", err)
	os.Exit(1)
}
