package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ndarrow/ndarrow/dataset"
)

// inspection is one line of `ndarrow inspect --json`: the fields of the golden files'
// expected.jsonl.
type inspection struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Column   string   `json:"column,omitempty"`
	DType    string   `json:"dtype"`
	Shape    []int64  `json:"shape"`
	DimNames []string `json:"dim_names"`
	NNZ      int64    `json:"nnz"`
	SHA256   string   `json:"sha256"`
	// Nulls is the number of null rows of a plain column (dataset.Tensor.Valid); omitted
	// when there are none.
	Nulls int64 `json:"nulls,omitempty"`
	// Ragged arrays only: rows, values and (--splits) TensorFlow's nested row splits.
	NRows     *int64    `json:"nrows,omitempty"`
	NVals     *int64    `json:"nvals,omitempty"`
	RowSplits [][]int64 `json:"row_splits,omitempty"`
}

// leftOutLine is what `inspect --json` prints of a column that has no tensor form
// (dataset.LeftOut), and what `ls --json` lists of a table flight's: its name as a tensor of
// it would be named, its column, its Arrow type and why it is left out. "left_out" tells it
// from a tensor's line.
type leftOutLine struct {
	Name    string `json:"name"`
	Column  string `json:"column"`
	LeftOut string `json:"left_out"`
	Why     string `json:"why"`
}

// unmappedLine is what `inspect --json` prints of a file of records ndarrow does not map.
type unmappedLine struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Format  string `json:"format"`
	Records int    `json:"records"`
	Note    string `json:"note"`
}

// inspect describes t, hashing its values (a sparse tensor's dense form, within maxDense
// elements); ctx interrupts the hashing.
func inspect(ctx context.Context, t tensor, maxDense int64, stderr io.Writer) (inspection, error) {
	h := sha256.New()
	w, done := withProgress(interruptible(ctx, h), stderr, t.Name, valueBytes(t))
	_, err := t.WriteValues(w, maxDense)
	done()
	if err != nil {
		return inspection{}, maxDenseError(err, maxDense, "hash its dense form (inspect's sha256 is of a sparse tensor's dense values)", "")
	}
	shape := []int64(t.Shape())
	names := t.DimNames
	if names == nil {
		names = []string{}
	}
	line := inspection{
		Name: t.Name, Kind: string(t.Kind), Column: t.Column, DType: t.DType().String(),
		Shape: shape, DimNames: names, NNZ: t.NNZ(), SHA256: hex.EncodeToString(h.Sum(nil)), Nulls: t.NullCount(),
	}
	if t.Ragged != nil {
		nrows, nvals := t.Ragged.NumRows(), t.Ragged.NumValues()
		line.NRows, line.NVals, line.RowSplits = &nrows, &nvals, t.Ragged.RowSplits()
	}
	return line, nil
}

// withoutTablesOf returns tensors and leftOut without those of the tables of the files
// skipped (each a *dataset.SkippedFile naming its table): a tensor or column of table T is
// named T or T.COLUMN.
func withoutTablesOf(skipped []error, tensors []tensor, leftOut []dataset.LeftOut) ([]tensor, []dataset.LeftOut) {
	tables := map[string]bool{}
	for _, err := range skipped {
		var sf *dataset.SkippedFile
		if errors.As(err, &sf) {
			tables[sf.Table] = true
		}
	}
	of := func(name string) bool {
		for table := range tables {
			if name == table || strings.HasPrefix(name, table+".") {
				return true
			}
		}
		return false
	}
	tensors = slices.DeleteFunc(slices.Clone(tensors), func(t tensor) bool { return of(t.Name) })
	leftOut = slices.DeleteFunc(slices.Clone(leftOut), func(l dataset.LeftOut) bool { return of(l.Name) })
	return tensors, leftOut
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per tensor, and per column left out")
	splits := fs.Bool("splits", false, "with --json, print a ragged tensor's row splits whole (nrows and nvals summarize them otherwise)")
	maxDense := maxDenseFlag(fs)
	input := inputFlags(fs)
	if code, ok := parseArgs(fs, "inspect", args, stdout, stderr, 1, -1); !ok {
		return code
	}
	code := exitOK
	table := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	header := false
	var leftOut []dataset.LeftOut // told after the table, whose columns they would widen
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false) // Arrow types read as Arrow writes them: struct<a: int32>
	for _, path := range fs.Args() {
		f, err := load(path, *input)
		var unmapped *dataset.UnmappedRecordsError
		if errors.As(err, &unmapped) {
			// Not an error: the file is what it is, ndarrow just has no tensors to show of it.
			if *asJSON {
				_ = enc.Encode(unmappedLine{Name: dataset.BaseName(path), Path: path, Format: string(dataset.FormatTFRecord),
					Records: unmapped.Records, Note: unmapped.Error()})
			} else {
				fmt.Fprintf(stdout, "%s: %v\n", path, unmapped)
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "ndarrow inspect: %v\n", err)
			code = exitFail
			continue
		}
		withheld := false // tensors of a table not printed, a file of it unreadable
		if f.skipUnreadable {
			f.reportSkipped(stderr, "inspect")
		} else if len(f.skipped) > 0 {
			// Never a smaller table: without --skip-unreadable nothing of a table a file of
			// which cannot be read is printed; the directory's other tables are.
			for _, err := range f.skipped {
				fmt.Fprintf(stderr, "ndarrow inspect: %v (--skip-unreadable leaves it out)\n", err)
			}
			code = exitFail
			tensors, leftOut := withoutTablesOf(f.skipped, f.tensors, f.leftOut)
			withheld = len(tensors)+len(leftOut) < len(f.tensors)+len(f.leftOut)
			f.tensors, f.leftOut = tensors, leftOut
		}
		switch {
		case len(f.tensors) > 0:
		case withheld: // what there is of it is of the tables named above
		case len(f.leftOut) > 0: // not an error: the columns are named below
			fmt.Fprintf(stderr, "ndarrow inspect: %s: no tensors: %s\n", path, noTensorForm(f.leftOut, false))
		case f.dir && len(f.skipped) > 0: // named above
			fmt.Fprintf(stderr, "ndarrow inspect: %s: no tensors: no tensor file of it could be read\n", path)
		case f.dir:
			fmt.Fprintf(stderr, "ndarrow inspect: %s: no tensors: no tensor files\n", path)
		default:
			fmt.Fprintf(stderr, "ndarrow inspect: %s: no tensors: none of its columns is a tensor\n", path)
		}
		// What is printed of the file waits for its check: the hashes of a file that changed
		// while they were computed may be of two versions, and are not printed.
		var emit []func()
		reported := false // a change of the file, said already
		for _, t := range f.tensors {
			var line inspection
			err := dataset.Guard(func() error { // hashing reads the values: the file may shrink
				var err error
				line, err = inspect(ctx, t, *maxDense, stderr)
				if !*splits {
					line.RowSplits = nil // a million rows would make one line of megabytes
				}
				return err
			})
			var changed *dataset.FileError
			switch {
			case errors.As(err, &changed):
				fmt.Fprintf(stderr, "ndarrow inspect: %v\n", err) // it names the file
				code, reported = exitFail, true
				continue
			case err != nil:
				fmt.Fprintf(stderr, "ndarrow inspect: %s: %s: %v\n", path, t.Name, err)
				code = exitFail
				continue
			}
			if *asJSON {
				emit = append(emit, func() { _ = enc.Encode(line) })
				continue
			}
			emit = append(emit, func() {
				if !header {
					fmt.Fprintln(table, "NAME\tKIND\tDTYPE\tSHAPE\tNNZ\tNULLS\tDIM NAMES\tSHA256")
					header = true
				}
				fmt.Fprintf(table, "%s\t%s\t%s\t%v\t%d\t%d\t%s\t%.16s…\n", line.Name, line.Kind, line.DType, t.Shape(),
					line.NNZ, line.Nulls, strings.Join(line.DimNames, ","), line.SHA256)
			})
		}
		for _, l := range f.leftOut {
			if *asJSON {
				emit = append(emit, func() { _ = enc.Encode(leftOutLine{Name: l.Name, Column: l.Column, LeftOut: l.Type, Why: l.Why}) })
				continue
			}
			emit = append(emit, func() { leftOut = append(leftOut, l) })
		}
		if err := f.checked(nil); err != nil {
			if !reported {
				fmt.Fprintf(stderr, "ndarrow inspect: %v\n", err) // it names the file and what differs
			}
			code = exitFail
		} else {
			for _, e := range emit {
				e()
			}
		}
		f.Release()
	}
	table.Flush()
	for _, l := range leftOut {
		fmt.Fprintln(stdout, l)
	}
	return code
}
