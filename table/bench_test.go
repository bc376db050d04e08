package table_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

// benchTable writes a rows x width float32 emb column beside an int64 label (the row's index)
// into dir as an Arrow IPC file of 16384-row batches and as Parquet, uncompressed and ZSTD,
// with ndarrow's writers, and returns the paths.
func benchTable(b *testing.B, dir string, rows, width int64) []string {
	emb := make([]float32, rows*width)
	r := rand.New(rand.NewPCG(36, 36))
	for i := range emb {
		emb[i] = r.Float32()
	}
	label := make([]int64, rows)
	for i := range label {
		label[i] = int64(i)
	}
	var recs []arrow.Record
	for lo := int64(0); lo < rows; lo += 16384 {
		hi := min(lo+16384, rows)
		e, err := ndarray.FromSlice(emb[lo*width:hi*width], hi-lo, width)
		require.NoError(b, err)
		l, err := ndarray.FromSlice(label[lo:hi], hi-lo)
		require.NoError(b, err)
		rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "emb", Column: "emb", Dense: e}, {Name: "label", Column: "label", Dense: l}})
		require.NoError(b, err)
		recs = append(recs, rec)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	create := func(name string, write func(f *os.File) error) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		require.NoError(b, err)
		require.NoError(b, write(f))
		require.NoError(b, f.Close())
		return path
	}
	paths := []string{create("table.arrow", func(f *os.File) error {
		w, err := arrowipc.NewFileWriter(f, arrowipc.WithSchema(recs[0].Schema()))
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return w.Close()
	})}
	for _, c := range []parquet.Compression{parquet.Uncompressed, parquet.Zstd} {
		paths = append(paths, create(fmt.Sprintf("table_%v.parquet", c), func(f *os.File) error {
			w, err := parquet.NewWriter(f, recs[0].Schema(), parquet.WriterOptions{Compression: c})
			if err != nil {
				return err
			}
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					return err
				}
			}
			return w.Close()
		}))
	}
	return paths
}

// BenchmarkTake: random rows of a 65536 x 256 float32 + int64 table (64 MiB), from an Arrow
// IPC file, uncompressed and ZSTD Parquet: Take (opening the table included) against the
// obvious baseline, every column read whole and the rows gathered from it. rows/s and the
// bytes of rows a second are reported.
func BenchmarkTake(b *testing.B) {
	const rows, width = 65536, 256
	paths := benchTable(b, b.TempDir(), rows, width)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{5120, 256, 1} {
		want := make([]int64, n)
		for i := range want {
			want[i] = r.Int64N(rows)
		}
		for _, path := range paths {
			name := fmt.Sprintf("%s/%d", filepath.Base(path), n)
			report := func(b *testing.B) {
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(n)*(width*4+8)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			}
			b.Run("take/"+name, func(b *testing.B) {
				for range b.N {
					t, err := table.Open(path, table.Options{})
					require.NoError(b, err)
					_, err = t.Take(context.Background(), want, nil)
					require.NoError(b, err)
					t.Release()
				}
				report(b)
			})
			b.Run("whole/"+name, func(b *testing.B) {
				for range b.N {
					d, err := dataset.ScanDir(path, limits.Limits{})
					require.NoError(b, err)
					for _, src := range d.Sources {
						whole, err := src.Read(context.Background())
						require.NoError(b, err)
						_, err = whole.TakeRows(want)
						require.NoError(b, err)
					}
					d.Release()
				}
				report(b)
			})
		}
	}
}

// BenchmarkShuffledEpoch: a shuffled epoch, batches of 256 rows, of a ZSTD Parquet table
// through table.Open and Batches with the library's defaults — the code a Go program writes,
// which now has Open's page cache — and with Options.NoPageCache (the library's default before
// issue 45), opening the table included. The table is the directory or file
// NDARROW_BENCH_TABLE names (bench/library_batches.sh: the 512 MiB parts_zstd of
// bench/batches.sh) or, without it, a 65536 x 256 float32 + int64 table (64 MiB) written as
// BenchmarkTake's. ms/epoch and rows/s are reported.
func BenchmarkShuffledEpoch(b *testing.B) {
	path := os.Getenv("NDARROW_BENCH_TABLE")
	if path == "" {
		path = benchTable(b, b.TempDir(), 65536, 256)[2] // table_zstd.parquet
	}
	for _, c := range []struct {
		name string
		o    table.Options
	}{{"default", table.Options{}}, {"no_page_cache", table.Options{NoPageCache: true}}} {
		b.Run(c.name, func(b *testing.B) {
			rows := int64(0)
			for range b.N {
				t, err := table.Open(path, c.o)
				require.NoError(b, err)
				require.NoError(b, t.PageCacheErr)
				epoch := int64(0)
				for batch, err := range t.Batches(context.Background(), table.BatchOptions{Size: 256, Shuffle: true, Seed: 1}) {
					require.NoError(b, err)
					epoch += batch.Values.Rows
				}
				require.Equal(b, t.NumRows(), epoch, "every row once")
				rows += epoch
				t.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/epoch")
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkTakeOfAnOpenTable: takes of an open table — its files asked after each take
// whether they changed (one fstat a file read) — of 1 and 256 random rows of a 65536 x 256
// float32 + int64 table in one file (an Arrow IPC file, uncompressed and ZSTD Parquet), and
// of 256 random rows of a table of 64 such parts of 1024 rows (ZSTD Parquet, each take
// touching most parts) and of 1 row of it (one part). rows/s is reported.
func BenchmarkTakeOfAnOpenTable(b *testing.B) {
	const rows, width = 65536, 256
	paths := benchTable(b, b.TempDir(), rows, width)
	parts := filepath.Join(b.TempDir(), "parts")
	require.NoError(b, os.MkdirAll(parts, 0o755))
	for k := range 64 {
		p := benchTable(b, b.TempDir(), 1024, width)[2] // table_zstd.parquet
		require.NoError(b, os.Rename(p, filepath.Join(parts, fmt.Sprintf("part-%02d.parquet", k))))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		path string
		n    int
	}{{paths[0], 1}, {paths[0], 256}, {paths[1], 1}, {paths[1], 256}, {paths[2], 1}, {paths[2], 256}, {parts, 1}, {parts, 256}} {
		b.Run(fmt.Sprintf("%s/%d", filepath.Base(c.path), c.n), func(b *testing.B) {
			t, err := table.Open(c.path, table.Options{})
			require.NoError(b, err)
			defer t.Release()
			want := make([]int64, c.n)
			for i := range want {
				want[i] = r.Int64N(t.NumRows())
			}
			_, err = t.Take(context.Background(), want, nil) // the footers read, the pages cached
			require.NoError(b, err)
			b.ResetTimer()
			for range b.N {
				_, err := t.Take(context.Background(), want, nil)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(c.n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
