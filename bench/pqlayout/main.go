// Command pqlayout prints the layout of Parquet files as bench/take.sh reads them: row groups,
// and per column chunk its codec, sizes and data pages (count, values, smallest and largest
// page after decompression).
//
//	go run ./bench/pqlayout DIR/table.parquet DIR/table_zstd.parquet
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow/go/v17/parquet/file"
)

func main() {
	for _, p := range os.Args[1:] {
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pqlayout:", err)
			os.Exit(1)
		}
		defer r.Close()
		md := r.MetaData()
		fmt.Printf("%s: %d rows, %d row groups, created by %s\n", p, md.NumRows, r.NumRowGroups(), md.GetCreatedBy())
		for g := 0; g < r.NumRowGroups(); g++ {
			rg := r.RowGroup(g)
			for c := 0; c < rg.NumColumns(); c++ {
				cm, _ := rg.MetaData().ColumnChunk(c)
				pr, err := rg.GetColumnPageReader(c)
				if err != nil {
					fmt.Fprintln(os.Stderr, "pqlayout:", err)
					os.Exit(1)
				}
				pages, vals, minb, maxb := 0, int64(0), int64(1<<62), int64(0)
				var runs []string // values per page, in order, run-length: 262144x123 50176x1
				last, count := int64(-1), 0
				flush := func() {
					if count > 0 {
						runs = append(runs, fmt.Sprintf("%dx%d", last, count))
					}
				}
				for pr.Next() {
					pg := pr.Page()
					if _, ok := pg.(file.DataPage); ok {
						pages++
						vals += int64(pg.NumValues())
						if v := int64(pg.NumValues()); v == last {
							count++
						} else {
							flush()
							last, count = v, 1
						}
						n := int64(len(pg.Data()))
						minb, maxb = min(minb, n), max(maxb, n)
					}
				}
				flush()
				fmt.Printf("  rg %d col %s: rows %d, %v, compressed %d, uncompressed %d, %d data pages (%d values), page bytes %d..%d, dict page %v, encodings %v\n    values per page: %s\n",
					g, cm.PathInSchema(), rg.NumRows(), cm.Compression(), cm.TotalCompressedSize(), cm.TotalUncompressedSize(), pages, vals, minb, maxb, cm.HasDictionaryPage(), cm.Encodings(), strings.Join(runs, " "))
			}
		}
	}
}
