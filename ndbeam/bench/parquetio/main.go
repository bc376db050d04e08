// Command parquetio reads the Parquet files a glob matches with Beam's own parquetio
// (xitongsys/parquet-go: each file read whole into memory, every row decoded into a Go
// struct) and counts their rows: the baseline of ndbeam.Read in BENCHMARKS.md. The files hold
// the benchmark table of bench/maketable: emb (256 float32 a row) and label (int64).
//
//	go run ./bench/parquetio --input '/tmp/b37/parts/*.parquet' --runner=prism
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/parquetio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
)

// Row is a row of the benchmark table as parquet-go maps it: with --emb its emb column too
// (a Parquet LIST of FLOAT), else its label alone.
type Row struct {
	Label int64 `parquet:"name=label, type=INT64"`
}

// RowEmb is Row with emb.
type RowEmb struct {
	Label int64     `parquet:"name=label, type=INT64"`
	Emb   []float32 `parquet:"name=emb, type=LIST, valuetype=FLOAT"`
}

var (
	input = flag.String("input", "", "a glob of Parquet files (required)")
	emb   = flag.Bool("emb", false, "read the emb column too")
)

var _ = local.New

func main() {
	flag.Parse()
	beam.Init()
	p, s := beam.NewPipelineWithRoot()
	var ones beam.PCollection
	if *emb {
		ones = beam.ParDo(s, func(RowEmb) int { return 1 }, parquetio.Read(s, *input, reflect.TypeOf(RowEmb{})))
	} else {
		ones = beam.ParDo(s, func(Row) int { return 1 }, parquetio.Read(s, *input, reflect.TypeOf(Row{})))
	}
	n := stats.Count(s, ones)
	beam.ParDo0(s, func(k int, c int) { fmt.Printf("rows %d\n", c) }, n)
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Fprintln(os.Stderr, "parquetio:", err)
		os.Exit(1)
	}
}
