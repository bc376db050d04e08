// Command maketable writes the table of issue 36's random-row benchmark (bench/take.sh) with
// ndarrow's own writers: 262144 rows of
//
//	emb    arrow.fixed_shape_tensor<float32, [256]> (fixed_size_list<float32, 256> storage),
//	       random values in [0, 1) from a fixed seed
//	label  int64, the row's index, so that a take's result can be checked
//
// into DIR (default "."):
//
//	table.arrow          Arrow IPC file, record batches of --batch rows (16384: what Arrow C++
//	                     and pyarrow writers of a chunked table give)
//	table_1batch.arrow   Arrow IPC file, one record batch of every row
//	table.parquet        Parquet, uncompressed (ndarrow's writer, default row groups and pages:
//	                     3 row groups of 126144, 126144 and 9856 rows; emb pages of 1024 rows,
//	                     1 MiB; label one page per row group)
//	table_zstd.parquet   Parquet, ZSTD (the same otherwise)
//	rows_N.txt           N distinct random row indices (for N in --takes), one per line, in
//	                     random order, from a fixed seed: what bench/take_lance.mjs and
//	                     ndarrow take --rows @rows_N.txt both take
//
// With -parts N it writes instead only the table as N Parquet parts of rows/N rows each
// (issue 37's mini-batch benchmark, bench/batches.sh), a directory per codec:
//
//	parts/part-K.parquet       uncompressed, K = 0 … N-1, label K·rows/N … onward
//	parts_zstd/part-K.parquet  ZSTD
//
// It prints one JSON line per file: its name, size, batches or row groups and the seconds it took.
//
//	go run ./bench/maketable -dir /tmp/take
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
)

func main() {
	dir := flag.String("dir", ".", "directory to write the files into")
	rows := flag.Int64("rows", 262144, "rows of the table")
	width := flag.Int64("width", 256, "float32 values per emb row")
	batch := flag.Int64("batch", 16384, "rows per record batch of table.arrow")
	seed := flag.Uint64("seed", 36, "seed of the random emb values and row indices")
	takes := flag.String("takes", "5120,256,1", "comma-separated row counts of the rows_N.txt files")
	parts := flag.Int64("parts", 0, "write only parts/ and parts_zstd/: the table as this many Parquet parts")
	flag.Parse()
	if *rows <= 0 || *width <= 0 || *batch <= 0 {
		fail(fmt.Errorf("-rows, -width and -batch must be positive"))
	}
	if err := os.MkdirAll(*dir, 0o777); err != nil {
		fail(err)
	}

	start := time.Now()
	emb := make([]float32, *rows**width)
	r := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	for i := range emb {
		emb[i] = r.Float32()
	}
	label := make([]int64, *rows)
	for i := range label {
		label[i] = int64(i)
	}
	report(map[string]any{"what": "generate", "rows": *rows, "width": *width, "seconds": since(start)})

	// batches returns the table as record batches of n rows (the last one shorter), each viewing
	// emb and label (dataset.Batch copies nothing for a contiguous float32 or int64 tensor).
	batches := func(n int64) []arrow.Record {
		var recs []arrow.Record
		for lo := int64(0); lo < *rows; lo += n {
			hi := min(lo+n, *rows)
			e, err := ndarray.FromSlice(emb[lo**width:hi**width], hi-lo, *width)
			if err != nil {
				fail(err)
			}
			l, err := ndarray.FromSlice(label[lo:hi], hi-lo)
			if err != nil {
				fail(err)
			}
			rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{
				{Name: "emb", Column: "emb", Dense: e},
				{Name: "label", Column: "label", Dense: l},
			})
			if err != nil {
				fail(err)
			}
			recs = append(recs, rec)
		}
		return recs
	}
	release := func(recs []arrow.Record) {
		for _, r := range recs {
			r.Release()
		}
	}

	if *parts > 0 {
		n := (*rows + *parts - 1) / *parts
		recs := batches(n)
		defer release(recs)
		for sub, c := range map[string]parquet.Compression{"parts": parquet.Uncompressed, "parts_zstd": parquet.Zstd} {
			if err := os.MkdirAll(filepath.Join(*dir, sub), 0o777); err != nil {
				fail(err)
			}
			for k, rec := range recs {
				writeParquet(filepath.Join(*dir, sub, fmt.Sprintf("part-%d.parquet", k)), []arrow.Record{rec}, c)
			}
		}
		return
	}

	r = rand.New(rand.NewPCG(*seed+1, 0x36))
	for _, f := range strings.Split(*takes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || int64(n) > *rows {
			fail(fmt.Errorf("-takes: %q is not a row count within 1..%d", f, *rows))
		}
		writeRows(filepath.Join(*dir, fmt.Sprintf("rows_%d.txt", n)), sample(r, *rows, n))
	}

	chunked := batches(*batch)
	whole := batches(*rows)
	defer release(chunked)
	defer release(whole)

	writeArrow(filepath.Join(*dir, "table.arrow"), chunked)
	writeArrow(filepath.Join(*dir, "table_1batch.arrow"), whole)
	// The Parquet files get the whole table in one Write, as ndarrow convert writes them: the
	// same row groups and emb pages as batch by batch, but label in one page per row group
	// (written batch by batch, a label page would end with each batch).
	writeParquet(filepath.Join(*dir, "table.parquet"), whole, parquet.Uncompressed)
	writeParquet(filepath.Join(*dir, "table_zstd.parquet"), whole, parquet.Zstd)
}

// writeArrow writes recs as an Arrow IPC file at path, a record batch each.
func writeArrow(path string, recs []arrow.Record) {
	start := time.Now()
	write(path, func(f *os.File) error {
		fw, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(recs[0].Schema()))
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fw.Write(r); err != nil {
				return err
			}
		}
		return fw.Close()
	})
	report(map[string]any{"what": "write", "file": filepath.Base(path), "bytes": size(path), "batches": len(recs), "seconds": since(start)})
}

// writeParquet writes recs as one Parquet file at path with ndarrow's writer: default row
// groups (parquet.DefaultRowGroupBytes of Arrow data) and pages, codec c.
func writeParquet(path string, recs []arrow.Record, c parquet.Compression) {
	start := time.Now()
	write(path, func(f *os.File) error {
		pw, err := parquet.NewWriter(f, recs[0].Schema(), parquet.WriterOptions{Compression: c})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := pw.Write(r); err != nil {
				return err
			}
		}
		return pw.Close()
	})
	report(map[string]any{"what": "write", "file": filepath.Base(path), "bytes": size(path), "compression": c.String(), "seconds": since(start)})
}

// sample returns n distinct indices in [0, rows), in random order (a partial Fisher–Yates
// shuffle kept in a map, so that it costs O(n)).
func sample(r *rand.Rand, rows int64, n int) []int64 {
	moved := map[int64]int64{}
	at := func(i int64) int64 {
		if v, ok := moved[i]; ok {
			return v
		}
		return i
	}
	out := make([]int64, n)
	for i := range out {
		j := int64(i) + r.Int64N(rows-int64(i))
		out[i] = at(j)
		moved[j] = at(int64(i))
	}
	return out
}

// writeRows writes idx to path, one per line.
func writeRows(path string, idx []int64) {
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(strconv.FormatInt(i, 10))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o666); err != nil {
		fail(err)
	}
	report(map[string]any{"what": "write", "file": filepath.Base(path), "rows": len(idx)})
}

// write creates path and fills it with fill, closing it after.
func write(path string, fill func(*os.File) error) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	if err := fill(f); err != nil {
		f.Close()
		fail(fmt.Errorf("%s: %w", path, err))
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		fail(err)
	}
	return st.Size()
}

func since(t time.Time) float64 { return float64(time.Since(t).Milliseconds()) / 1000 }

func report(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(b))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "maketable:", err)
	os.Exit(1)
}
