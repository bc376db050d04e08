// Command convert is a Beam pipeline that converts a table — a file, a directory of parts or
// a prefix of objects, in any format ndarrow reads — into sharded part files in a directory:
//
//	go run ./examples/convert --input s3://bucket/train/ --output /data/train-parquet \
//	    --format parquet --runner=prism
//
// Beam's own flags (--runner, --job_endpoint, --environment_type, a runner's project and
// region…) go on the same command line. The output gets PREFIX-NNNNN-of-NNNNN.FORMAT parts and
// nothing else (ndbeam.Write). Its exit status is 0 once the pipeline succeeded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ndbeam"
)

var (
	input     = flag.String("input", "", "the table to read: a file, a directory of parts or a prefix of objects (required)")
	output    = flag.String("output", "", "the directory to write the parts to (required)")
	format    = flag.String("format", "parquet", "the parts' format: parquet, arrow, arrows or tfrecord")
	columns   = flag.String("columns", "", "only these columns, in this order, separated by commas")
	batchRows = flag.Int64("batch-rows", ndbeam.DefaultBatchRows, "the most rows a batch holds")
)

func main() {
	flag.Parse()
	beam.Init()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *input == "" || *output == "" {
		return fmt.Errorf("--input and --output are required")
	}
	f, err := dataset.ParseFormat(*format)
	if err != nil {
		return err
	}
	o := ndbeam.ReadOptions{BatchRows: *batchRows}
	if *columns != "" {
		o.Columns = strings.Split(*columns, ",")
	}
	p, s := beam.NewPipelineWithRoot()
	ndbeam.Write(s, *output, ndbeam.Read(s, *input, o), ndbeam.WriteOptions{Format: f})
	return beamx.Run(ctx, p)
}
