package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/table"
)

func runTake(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("take", flag.ContinueOnError)
	rows := fs.String("rows", "", "the rows to take: `LIST` of indices separated by commas (negative ones count from the end), or @FILE with one index a line")
	to := fs.String("to", "", "output format (default: OUT's extension): "+formatNames())
	columns := fs.String("columns", "", "take only these columns, in this order: `NAMES` separated by commas")
	name := fs.String("table", "", "the table to take from, when IN holds several")
	skipUnreadable := skipUnreadableFlag(fs)
	var fill *string
	fs.Func("fill", "give the null rows of plain columns this `VALUE` (see convert)", func(s string) error {
		fill = &s
		return nil
	})
	opts := writeFlags(fs, stderr, "take")
	if code, ok := parseArgs(fs, "take", args, stdout, stderr, 2, 2); !ok {
		return code
	}
	if *to != "" {
		if err := checkFormat(*to); err != nil {
			return usageError(stderr, "take", err)
		}
	}
	if *rows == "" {
		return usageError(stderr, "take", errors.New("--rows is required"))
	}
	want, err := parseRows(*rows)
	if err != nil {
		return finishCommand(ctx, stderr, "take", err)
	}
	var cols []string
	if *columns != "" {
		cols = strings.Split(*columns, ",")
	}
	return finishCommand(ctx, stderr, "take", dataset.Guard(func() error {
		o := opts()
		o.fill = fill
		return take(ctx, fs.Arg(0), fs.Arg(1), *to, table.Options{Table: *name, SkipUnreadable: *skipUnreadable}, want, cols, o, stdout, stderr)
	}))
}

// maxRowsLine bounds a line of a --rows file: an index, or a comment.
const maxRowsLine = 4 << 10

// maxRowsListed bounds the indices --rows gives: 1 GiB of them.
const maxRowsListed = 1 << 27

// parseRows parses --rows: indices separated by commas, or @FILE (- for standard input)
// with one index a line (blank lines and lines starting with # left out), each line at most
// maxRowsLine bytes and maxRowsListed indices in all. A list that is not one is a usageErr; a
// file that cannot be read or holds what is not an index is an error naming it.
func parseRows(s string) ([]int64, error) {
	file, isFile := strings.CutPrefix(s, "@")
	if !isFile {
		var out []int64
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, usageErr{fmt.Errorf("--rows: %q is not a row index", f)}
			}
			out = append(out, n)
		}
		return out, nil
	}
	var r io.Reader = os.Stdin
	name := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--rows: %s: %w", file, errors.Unwrap(err))
		}
		defer f.Close()
		r, name = f, file
	}
	out := []int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxRowsLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--rows: %s:%d: %.40q is not a row index: a rows file holds one index a line", name, line, text)
		}
		if len(out) == maxRowsListed {
			return nil, fmt.Errorf("--rows: %s: more than %d row indices: take them in several runs, each of fewer", name, maxRowsListed)
		}
		out = append(out, n)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("--rows: %s: line %d is longer than %d bytes: a rows file holds one index a line", name, line+1, maxRowsLine)
	} else if err != nil {
		return nil, fmt.Errorf("--rows: %s: %w", name, errors.Unwrap(err))
	}
	return out, nil
}

// take writes rows of the table in in that open names (cols of it, or every column) to out
// in format to (out's extension when empty), as convert writes, and names on stderr the
// columns the table has no tensor form for, and the files left out of it
// (open.SkipUnreadable).
func take(ctx context.Context, in, out, to string, open table.Options, rows []int64, cols []string, opts writeOptions, stdout, stderr io.Writer) error {
	if err := checkOutput(out); err != nil {
		return err
	}
	format, err := outputFormat(to, out)
	if err != nil {
		return err
	}
	open.NoPageCache = true // one take decompresses each page once
	t, err := openTable(in, open, "take", stderr)
	if err != nil {
		return err
	}
	defer t.Release()
	for _, f := range t.Files() {
		if dataset.IsTFRecordName(f) {
			fmt.Fprintf(stderr, "ndarrow take: warning: %s: a TFRecord file has no row index: all its records were read to take the rows (Parquet and Arrow files are read only where the rows are: convert it once for random access)\n", displayName(f))
		}
	}
	inputLoaded(in)
	tuneCollector(t, int64(len(rows)), cols)
	got, err := t.Take(ctx, rows, cols)
	if err != nil {
		return checkedBy(t.CheckUnchanged, err)
	}
	tensors, err := filled(got.Columns, opts.fill)
	if err != nil {
		return err
	}
	err = writeOutput(ctx, out, stdout, func(w io.Writer) error {
		if !opts.skip {
			if err := checkNulls(format, tensors); err != nil {
				return err
			}
		}
		// The rows are copies, read at Take: the check is that Take's reads were of one
		// version of every file, made before OUT is renamed into place.
		return checkedBy(t.CheckUnchanged, write(format, w, tensors, opts.forOutput(out)))
	})
	if err == nil && len(cols) == 0 {
		for _, l := range t.LeftOut {
			fmt.Fprintf(stderr, "ndarrow take: %s\n", l)
		}
	}
	return err
}

// tuneCollector lets the garbage collector wait until the heap nears what a take of n rows of
// the columns cols holds — the rows read, the rows in the order asked, the output's buffers:
// three times their values, and 128 MiB — rather than collecting each time the heap doubles
// from a few MiB: a fifth of the time of a take of 5 MiB of rows (BENCHMARKS.md). It leaves
// the collector alone when GOGC or GOMEMLIMIT is set, or a column's size is not known before
// reading (a ragged Parquet column).
func tuneCollector(t *table.Table, n int64, cols []string) { tuneCollectorFor(t, 0, n, cols) }

// tuneCollectorFor is tuneCollector for a process that holds held rows besides a take of n
// rows at a time (mini-batches read ahead): the heap may near held rows' values, three
// times n rows' values, and 128 MiB.
func tuneCollectorFor(t *table.Table, held, n int64, cols []string) {
	_, gogc := os.LookupEnv("GOGC")
	_, memlimit := os.LookupEnv("GOMEMLIMIT")
	heldBytes, known1, err1 := t.TakeBytes(held, cols)
	bytes, known2, err2 := t.TakeBytes(n, cols)
	if gogc || memlimit || !known1 || !known2 || err1 != nil || err2 != nil {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(heldBytes + 3*bytes + 128<<20)
}

// displayName is how a file or object is named to the user: an object's URI without its query
// (a presigned URL's signature is never shown).
func displayName(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 && dataset.IsURI(path) {
		return path[:i]
	}
	return path
}

// skipUnreadableFlag adds --skip-unreadable to fs: read a directory's table without the files
// of it that cannot be read, each named on stderr.
func skipUnreadableFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("skip-unreadable", false, "read a directory's table without its files that cannot be read (cut short, not joining the other parts, two of one base name), each named on stderr; without it such a file is an error")
}

// openTable opens the table at in as o says (table.Open); the files left out of it
// (o.SkipUnreadable) are named on stderr, one line each, and a table with a file that cannot
// be read, without o.SkipUnreadable, is an error that says --skip-unreadable reads the rest.
func openTable(in string, o table.Options, command string, stderr io.Writer) (*table.Table, error) {
	t, err := table.Open(in, o)
	if err != nil {
		return nil, unreadableHint(err, o.SkipUnreadable)
	}
	reportSkippedFiles(stderr, command, t.Skipped())
	return t, nil
}

// unreadableHint returns err, which a read without skip gave, saying that --skip-unreadable
// reads the rest when it is a table's unreadable file and the table has others.
func unreadableHint(err error, skip bool) error {
	if !skip && errors.Is(err, dataset.ErrUnreadable) && !errors.Is(err, table.ErrNoTable) {
		return fmt.Errorf("%w (--skip-unreadable reads the rest)", err)
	}
	return err
}

// reportSkippedFiles names on stderr, one line each, the files command left out.
func reportSkippedFiles[E error](stderr io.Writer, command string, skipped []E) {
	for _, sf := range skipped {
		fmt.Fprintf(stderr, "ndarrow %s: skipped: %v\n", command, sf)
	}
}
