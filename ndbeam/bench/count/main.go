// Command count reads a table with ndbeam.Read and counts its rows: beside bench/parquetio,
// the same read through ndarrow's readers, in BENCHMARKS.md.
//
//	go run ./bench/count --input /tmp/b37/parts --columns label --runner=prism
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/ndarrow/ndarrow/ndbeam"
)

var (
	input   = flag.String("input", "", "the table: a file, a directory of parts or a prefix of objects (required)")
	columns = flag.String("columns", "", "only these columns, separated by commas")
)

// rowsOf is a batch's rows.
func rowsOf(b ndbeam.Batch) int { return int(b.Record.NumRows()) }

// show prints the count.
func show(n int) { fmt.Printf("rows %d\n", n) }

func init() {
	register.Function1x1(rowsOf)
	register.Function1x0(show)
}

func main() {
	flag.Parse()
	beam.Init()
	o := ndbeam.ReadOptions{}
	if *columns != "" {
		o.Columns = strings.Split(*columns, ",")
	}
	p, s := beam.NewPipelineWithRoot()
	n := stats.Sum(s, beam.ParDo(s, rowsOf, ndbeam.Read(s, *input, o)))
	beam.ParDo0(s, show, n)
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(1)
	}
}
