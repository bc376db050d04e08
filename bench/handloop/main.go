// Command handloop is the hand-written shuffled loop issue 37 sets beside `ndarrow batches
// --shuffle` (bench/batches.sh): with ndarrow's public API only, it lists the row groups of
// every Parquet file under DIR, shuffles them, and for each one reads it (parquet.Reader
// ReadRowGroup), makes its columns tensors (dataset.FromRecords), draws a permutation of its
// rows and copies them, in that order, into mini-batches of -batch rows (a batch may span two
// row groups; the last one is short). Its shuffle is a row group's rows at a time — what
// Table.Batches' whole-table permutation is compared with — and its batches are Go slices, not
// written anywhere. It prints one JSON line: rows, batches, seconds, rows/s and a checksum of
// the labels in batch order.
//
//	go run ./bench/handloop -batch 256 -seed 1 DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/parquet"
)

func main() {
	size := flag.Int("batch", 256, "rows a mini-batch")
	seed := flag.Uint64("seed", 1, "seed of the shuffles")
	flag.Parse()
	if flag.NArg() != 1 || *size <= 0 {
		fail(fmt.Errorf("usage: handloop [-batch N] [-seed S] DIR"))
	}
	start := time.Now()

	type group struct {
		r  *parquet.Reader
		rg int
	}
	var groups []group
	err := filepath.WalkDir(flag.Arg(0), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		r, err := parquet.Open(path, parquet.ReaderOptions{Columns: []string{"emb", "label"}})
		if err != nil {
			return err
		}
		for i := range r.NumRowGroups() {
			groups = append(groups, group{r, i})
		}
		return nil
	})
	if err != nil {
		fail(err)
	}
	rng := rand.New(rand.NewPCG(*seed, 37))
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })

	var (
		width        int
		emb          []float32 // the batch being filled
		label        []int64
		rows, nbatch int64
		sum          uint64
	)
	flush := func() {
		for _, l := range label {
			sum = sum*31 + uint64(l)
		}
		nbatch++
		emb, label = emb[:0], label[:0]
	}
	for _, g := range groups {
		rec, err := g.r.ReadRowGroup(g.rg)
		if err != nil {
			fail(err)
		}
		tensors, _, err := dataset.FromRecords(rec.Schema(), []arrow.Record{rec}, "t")
		if err != nil {
			fail(err)
		}
		var e []float32
		var l []int64
		for _, t := range tensors {
			switch t.Column {
			case "emb":
				d, err := dataset.DenseOf[float32](t)
				if err != nil {
					fail(err)
				}
				sh := d.Shape()
				width = int(sh[1])
				e = d.Ravel()
			case "label":
				d, err := dataset.DenseOf[int64](t)
				if err != nil {
					fail(err)
				}
				l = d.Ravel()
			}
		}
		if emb == nil {
			emb, label = make([]float32, 0, *size*width), make([]int64, 0, *size)
		}
		for _, i := range rng.Perm(len(l)) {
			emb = append(emb, e[i*width:(i+1)*width]...)
			label = append(label, l[i])
			if len(label) == *size {
				flush()
			}
		}
		rows += int64(len(l))
		rec.Release() // the tensors view it
	}
	if len(label) > 0 {
		flush()
	}
	sec := time.Since(start).Seconds()
	b, _ := json.Marshal(map[string]any{"rows": rows, "batches": nbatch, "row_groups": len(groups), "seconds": sec, "rows_per_s": float64(rows) / sec, "checksum": sum})
	fmt.Println(string(b))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "handloop:", err)
	os.Exit(1)
}
