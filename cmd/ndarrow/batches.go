package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/table"
)

func runBatches(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("batches", flag.ContinueOnError)
	bf := addBatchFlags(fs)
	columns := fs.String("columns", "", "only these columns, in this order: `NAMES` separated by commas")
	name := fs.String("table", "", "the table, when IN holds several")
	skipUnreadable := skipUnreadableFlag(fs)
	readahead := byteSize(table.DefaultReadahead)
	fs.Var(&readahead, "readahead", "read batches ahead of the one written, as many as `SIZE` holds (at least one)")
	pageCache := autoSize
	fs.Var(&pageCache, "page-cache", "decompress each page of compressed Parquet files once, into a scratch file in TMPDIR of at most `SIZE` (auto: 16GiB, or half its free space if less, under ulimit -v a quarter of the address space it leaves; said on stderr when smaller so, or none; 0: none)")
	if code, ok := parseArgs(fs, "batches", args, stdout, stderr, 2, 2); !ok {
		return code
	}
	o, err := bf.options(*columns)
	if err != nil {
		return usageError(stderr, "batches", err)
	}
	o.Readahead = max(int64(readahead), 1)
	out := fs.Arg(1)
	if err := checkStreamOutput(out); err != nil {
		return usageError(stderr, "batches", err)
	}
	return finishCommand(ctx, stderr, "batches", dataset.Guard(func() error {
		return batches(ctx, fs.Arg(0), out, table.Options{Table: *name, SkipUnreadable: *skipUnreadable}, *bf.cursors, o, int64(pageCache), stdout, stderr)
	}))
}

// batchFlags are the flags that say which mini-batches to write (batches, get --batch-size).
type batchFlags struct {
	size    *int64
	o       table.BatchOptions
	shard   *string
	after   *string
	cursors *string
	set     map[string]bool // the flags given, once parsed (seen)
}

// addBatchFlags defines the flags of mini-batches on fs: --batch-size, --shuffle, --epoch,
// --shard, --drop-last, --after and --cursors (not --columns, which get defines for --rows
// too).
func addBatchFlags(fs *flag.FlagSet) *batchFlags {
	f := &batchFlags{}
	f.size = fs.Int64("batch-size", 0, "rows a batch: `N` (required)")
	fs.Func("shuffle", "order each epoch's rows by a permutation of all the table's rows keyed by this `SEED` (and the epoch)", func(s string) error {
		seed, err := strconv.ParseUint(s, 10, 64)
		f.o.Shuffle, f.o.Seed = true, seed
		return err
	})
	fs.Int64Var(&f.o.Epoch, "epoch", 0, "the epoch `E` (from 0): with --shuffle, another order each epoch")
	f.shard = fs.String("shard", "", "this worker's shard: `K/N`, K from 0 to N-1")
	fs.BoolVar(&f.o.DropLast, "drop-last", false, "leave out each shard's short last batch: every shard gives as many batches of N rows")
	f.after = fs.String("after", "", "resume after the batch this `CURSOR` was written after")
	f.cursors = fs.String("cursors", "", "write the cursor after each batch to `FILE`, one line a batch, as each batch is written")
	return f
}

// seen returns the batch flags given on fs's command line other than --batch-size.
func (f *batchFlags) seen(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "shuffle", "epoch", "shard", "drop-last", "after", "cursors":
			out = append(out, "--"+fl.Name)
		}
	})
	return out
}

// options returns the BatchOptions the flags say, the columns those named in columns
// (separated by commas; every column for ""), or what is wrong with them.
func (f *batchFlags) options(columns string) (table.BatchOptions, error) {
	o := f.o
	o.Size = *f.size
	if o.Size <= 0 {
		return o, errors.New("--batch-size N is required, N more than 0")
	}
	if *f.shard != "" {
		var err error
		if o.Shard, o.Shards, err = table.ParseShard(*f.shard); err != nil {
			return o, fmt.Errorf("--shard: %w", err)
		}
	}
	if *f.after != "" {
		c, err := table.ParseCursor(*f.after)
		if err != nil {
			return o, fmt.Errorf("--after: %w", err)
		}
		o.After = &c
	}
	if columns != "" {
		o.Columns = strings.Split(columns, ",")
	}
	return o, nil
}

// checkStreamOutput checks that out can hold an Arrow IPC stream: a .arrows file, - or an
// output written in place whatever its name (writtenInPlace: /dev/null, a FIFO).
func checkStreamOutput(out string) error {
	if out != "-" && !strings.HasSuffix(out, ".arrows") && !writtenInPlace(out) {
		return fmt.Errorf("%s: OUT is an Arrow IPC stream: a .arrows file, - (standard output), or a device or FIFO", out)
	}
	return nil
}

// batches writes the mini-batches o asks for of the table in in that open names to out, an
// Arrow IPC stream of one record batch each, and each batch's cursor to the file cursors
// (when not "") as the batch is written; pageCache is the most bytes of decompressed pages
// kept (-1: the default). The files left out of the table (open.SkipUnreadable) are named on
// stderr.
func batches(ctx context.Context, in, out string, open table.Options, cursors string, o table.BatchOptions, pageCache int64, stdout, stderr io.Writer) error {
	if err := checkOutput(out); err != nil {
		return err
	}
	open.NoPageCache = pageCache == 0 // by default, Open's (dataset.NewDefaultPageCache)
	if pageCache > 0 {
		c, err := newPageCache(pageCache, "batches", stderr)
		if err != nil {
			return err
		}
		defer c.Close() // after the table's release
		open.PageCache = c
	}
	t, err := openTable(in, open, "batches", stderr)
	if err != nil {
		return err
	}
	defer t.Release()
	left, _, err := t.Remaining(o) // the options and the cursor checked before OUT is made
	if err != nil {
		return err
	}
	reportPageCache(stderr, "batches", t.PageCacheErr)
	// What is live: the batches read ahead, the one in hand, the one written, and a take's
	// copies (three batches' worth, as tuneCollector counts a take).
	tuneCollectorFor(t, int64(t.ReadaheadBatches(o)+1)*o.Size, 3*o.Size, o.Columns)
	inputLoaded(in)
	err = writeBatches(ctx, out, cursors, t.Batches(ctx, o), stdout, func() ([]dataset.Tensor, error) {
		if o.After == nil || left > 0 {
			return nil, noBatchError(in, t.NumRows(), o)
		}
		none, err := t.Take(ctx, []int64{}, o.Columns) // the columns, of no row: the stream's schema
		if err != nil {
			return nil, err
		}
		return none.Columns, nil
	}, t.CheckUnchanged)
	if err == nil && len(o.Columns) == 0 {
		for _, l := range t.LeftOut {
			fmt.Fprintf(stderr, "ndarrow batches: %s\n", l)
		}
	}
	if err == nil && o.After != nil && left == 0 {
		fmt.Fprintf(stderr, "ndarrow batches: %s\n", epochFinished(in, o))
	}
	return err
}

// epochFinished says that the cursor o resumes after is of the last batch of o's epoch, of
// the table or flight named name, and what to do: start the next epoch.
func epochFinished(name string, o table.BatchOptions) string {
	return fmt.Sprintf("%s: epoch %d is finished: the cursor is after its last batch (%d), so the stream holds no batch; the next is --epoch %d, without --after",
		name, o.Epoch, o.After.Next, o.Epoch+1)
}

// writeBatches writes the batches of seq to out (an Arrow IPC stream: a .arrows file or -,
// standard output) as one record batch each, of the first batch's schema, and each batch's
// cursor to the file cursors (when not "") as the batch is written. No batch at all writes
// the schema of the tensors none returns and no batch (a finished epoch), or fails with its
// error and writes no OUT. What seq fails with is the input's error, not the output's
// (sourceError). check, when not nil, says whether the files the batches were read from
// changed since they were opened (table.Table.CheckUnchanged): it is asked once every batch
// is written, before the stream's end marker — an error leaves no OUT, and a stream on
// standard output or a FIFO without its end — and its error stands for whatever else failed.
func writeBatches(ctx context.Context, out, cursors string, seq iter.Seq2[table.Batch, error], stdout io.Writer, none func() ([]dataset.Tensor, error), check func() error) error {
	var cw *bufio.Writer
	if cursors != "" {
		f, err := os.Create(cursors)
		if err != nil {
			return fmt.Errorf("--cursors: %w", err)
		}
		defer f.Close()
		cw = bufio.NewWriter(f)
	}
	return writeOutput(ctx, out, stdout, func(w io.Writer) error {
		var sw *arrowipc.Writer
		var schema *arrow.Schema
		mem := memory.NewGoAllocator()
		for b, err := range seq {
			if err != nil {
				return sourceError{checkedBy(check, err)}
			}
			rec, err := dataset.Batch(mem, b.Values.Columns)
			if err != nil {
				return sourceError{fmt.Errorf("batch %d: %w", b.Index, err)}
			}
			if sw == nil {
				schema = rec.Schema()
				sw = arrowipc.NewWriter(w, arrowipc.WithSchema(schema), arrowipc.WithAllocator(mem))
			}
			conformed, err := arrowtensor.Conform(rec, schema)
			rec.Release()
			if err != nil {
				return sourceError{fmt.Errorf("batch %d: %w", b.Index, err)}
			}
			err = sw.Write(conformed)
			conformed.Release()
			if err != nil {
				return checkedBy(check, err)
			}
			if cw != nil {
				fmt.Fprintln(cw, b.Cursor)
				if err := cw.Flush(); err != nil {
					return fmt.Errorf("--cursors: %w", err)
				}
			}
		}
		if sw == nil {
			tensors, err := none()
			if err != nil {
				return sourceError{err}
			}
			rec, err := dataset.Batch(mem, tensors)
			if err != nil {
				return sourceError{err}
			}
			sw = arrowipc.NewWriter(w, arrowipc.WithSchema(rec.Schema()), arrowipc.WithAllocator(mem))
			rec.Release()
		}
		if err := checkedBy(check, nil); err != nil {
			return err // no end marker: the stream is not whole
		}
		return sw.Close()
	})
}

// newPageCache returns the page cache of at most size bytes that --page-cache asks for: for
// -1 (auto, the flag's default) the default one (dataset.NewDefaultPageCache, as table.Open makes
// it), said on stderr when it is smaller than the default or missing; for 0, nil. A size asked
// for that cannot be had is an error.
func newPageCache(size int64, command string, stderr io.Writer) (*dataset.PageCache, error) {
	switch {
	case size == 0:
		return nil, nil
	case size > 0:
		c, err := dataset.NewPageCache("", size)
		if err != nil {
			return nil, fmt.Errorf("--page-cache: %w", err)
		}
		return c, nil
	}
	c, err := dataset.NewDefaultPageCache("")
	if err != nil {
		reportPageCache(stderr, command, err)
		return nil, nil
	}
	reportPageCache(stderr, command, c.Reduced())
	return c, nil
}

// reportPageCache says on stderr why the default page cache is smaller than the default, or
// why there is none (err, nil when neither).
func reportPageCache(stderr io.Writer, command string, err error) {
	switch {
	case errors.Is(err, dataset.ErrNoPageCache):
		fmt.Fprintf(stderr, "ndarrow %s: warning: %v: each compressed page is decompressed again for each read that needs it (--page-cache SIZE asks for one)\n", command, err)
	case err != nil:
		fmt.Fprintf(stderr, "ndarrow %s: warning: %v (--page-cache SIZE asks for a size)\n", command, err)
	}
}

// byteSize is a flag's size in bytes: a number, or a number followed by KiB, MiB, GiB or TiB
// (or K, M, G, T, the same).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

// autoByteSize is a byteSize flag that may also be "auto" (autoSize, -1): a size worked out
// when it is used, its default — which --help then prints as such.
type autoByteSize byteSize

// autoSize is the autoByteSize "auto".
const autoSize autoByteSize = -1

func (b *autoByteSize) String() string {
	if *b == autoSize {
		return "auto"
	}
	return (*byteSize)(b).String()
}

func (b *autoByteSize) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		*b = autoSize
		return nil
	}
	return (*byteSize)(b).Set(s)
}

func (b *byteSize) Set(s string) error {
	num, shift := s, uint(0)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"KIB", 10}, {"MIB", 20}, {"GIB", 30}, {"TIB", 40}, {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}, {"B", 0}} {
		if strings.HasSuffix(strings.ToUpper(s), u.suffix) {
			num, shift = s[:len(s)-len(u.suffix)], u.shift
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v >= 0 && v*float64(uint64(1)<<shift) < 1<<62) { // NaN too
		return fmt.Errorf("%q is not a size: bytes, or a number with KiB, MiB, GiB or TiB", s)
	}
	*b = byteSize(v * float64(uint64(1)<<shift))
	return nil
}

// budgetSize is a budget flag's size in bytes: as byteSize, or -1 for no bound.
type budgetSize struct{ v *int64 }

func (b budgetSize) String() string {
	if b.v == nil {
		return "0"
	}
	return strconv.FormatInt(*b.v, 10)
}

func (b budgetSize) Set(s string) error {
	if strings.TrimSpace(s) == "-1" {
		*b.v = -1
		return nil
	}
	var n byteSize
	if err := n.Set(s); err != nil {
		return fmt.Errorf("%q is not a size: bytes, or a number with KiB, MiB, GiB or TiB, or -1 for no bound", s)
	}
	*b.v = int64(n)
	return nil
}

// noBatchError is the error of batches, or get --batch-size, that have no batch to write of
// the table what (of rows rows; -1 when not known) as o asks: why, and what to change — an
// empty table, a shard of no row (more shards than rows), or one whose rows --drop-last
// leaves out (fewer than a batch).
func noBatchError(what string, rows int64, o table.BatchOptions) error {
	shards := int64(max(o.Shards, 1))
	shard := fmt.Sprintf("shard %d of %d", o.Shard, shards)
	switch {
	case rows < 0:
		return fmt.Errorf("%s: no batch to write (batches of %d)", what, o.Size)
	case rows == 0:
		return fmt.Errorf("%s: no batch to write: the table has no rows", what)
	case o.DropLast && rows < shards:
		return fmt.Errorf("%s: no batch to write: --drop-last evens the shards to %d rows each (%d rows among %d shards): give at most %d shards, or leave out --drop-last",
			what, rows/shards, rows, shards, rows)
	case o.DropLast && rows/shards < o.Size && shards > 1:
		return fmt.Errorf("%s: no batch to write: %s evened by --drop-last holds %d of the %d rows, fewer than a batch of %d, and --drop-last leaves a short batch out: give --batch-size %d or less, fewer shards, or leave out --drop-last",
			what, shard, rows/shards, rows, o.Size, rows/shards)
	case o.DropLast && rows < o.Size:
		return fmt.Errorf("%s: no batch to write: %d rows, fewer than a batch of %d, and --drop-last leaves a short batch out: give --batch-size %d or less, or leave out --drop-last",
			what, rows, o.Size, rows)
	case rows < shards && int64(o.Shard) >= rows%shards:
		return fmt.Errorf("%s: no batch to write: %s holds no row of the %d: give at most %d shards", what, shard, rows, rows)
	}
	return fmt.Errorf("%s: no batch to write (%d rows, batches of %d)", what, rows, o.Size)
}
