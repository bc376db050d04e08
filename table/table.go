// Package table reads the tables of a dataset by rows. A table is columns of one row count
// side by side — a Parquet or Arrow IPC file's, a TFRecord file's Examples, a directory's
// table of parts, a .npy file or .npz member (a table of one column) — over the files of a
// dataset.Dir, in fragments: a Parquet row group, an Arrow IPC record batch, a run of .npy
// rows in object storage, a file read whole. Its rows are numbered across the fragments in
// path order. Take gives any rows of it, reading only the fragments, and in them only the
// pages, batches or bytes, those rows need.
package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fanout"
	"github.com/ndarrow/ndarrow/limits"
)

// ErrRowRange is returned for a row index outside a table.
var ErrRowRange = errors.New("table: row out of range")

// ErrNoTable is returned when a path holds no table of the name asked for, or several tables
// and none was named.
var ErrNoTable = errors.New("table: no such table")

// ErrNoColumn is returned for a column name a table does not have.
var ErrNoColumn = errors.New("table: no such column")

// ErrNotAligned is returned for columns whose fragments do not hold the same rows (a part of
// a directory table that lacks a column): their rows cannot be taken side by side.
var ErrNotAligned = errors.New("table: columns of different fragments")

// minPieceRows is the fewest rows of a fragment Take reads on a goroutine of their own.
const minPieceRows = 256

// Table is one table of a dataset, read by rows. A Table is safe for concurrent use.
type Table struct {
	Name    string            // as dataset names it: a file's base name, a directory table's name
	LeftOut []dataset.LeftOut // the columns that have no tensor form, which Take leaves out
	// PageCacheErr says why the page cache Open makes by default is smaller than
	// dataset.DefaultPageCacheSize for want of address space (wrapping
	// dataset.ErrSmallPageCache), or why there is none (wrapping dataset.ErrNoPageCache: each
	// compressed page is then decompressed for each take or batch that needs it); nil when it
	// is as the default says, or when the caller gave one or none (Options).
	PageCacheErr error

	columns []*dataset.Source // in the table's order
	names   []string          // each column's name
	first   []int64           // the table row of each fragment's first row; one more: the rows
	skipped []*dataset.SkippedFile
	dir     *dataset.Dir // released with the Table when Open made it
	lim     limits.Limits
	pages   *dataset.PageCache                // the page cache Open made, closed with the Table
	used    atomic.Pointer[dataset.PageCache] // the page cache the reads use (UsePageCache)
}

// Options are what Open takes.
type Options struct {
	// Table names the table to open among several a directory holds (see dataset.ScanDir); ""
	// for the only one, or the one named after the path.
	Table string
	// Limits bound what reading takes (see limits.Limits; zero fields take the defaults).
	// Take copies at most MaxCopySize bytes of rows.
	Limits limits.Limits
	// PageCache, when set, keeps the pages of compressed Parquet files that Take and Batches
	// decompress, so that each is decompressed once (see UsePageCache): a cache shared with
	// other tables, say. It stays the caller's: close it after releasing the Table. When nil,
	// Open makes one of its own for a table of Parquet files, closed with Release: of
	// PageCacheSize bytes in os.TempDir(), or when that is 0 as dataset.NewDefaultPageCache
	// makes it (PageCacheErr says why it is smaller, or missing).
	PageCache *dataset.PageCache
	// PageCacheSize is the most bytes of the page cache Open makes (0: the default size); one
	// that cannot be made fails Open.
	PageCacheSize int64
	// NoPageCache has Open make no page cache: each compressed page is decompressed for each
	// take or batch that needs it (a table read once, or by single takes, loses nothing).
	NoPageCache bool
	// SkipUnreadable opens a table some of whose files cannot be read (or do not join, or
	// share a base name: dataset.SkippedFile) without them, its rows those of the files
	// read, each file left out named by Skipped; without it such a table is an error naming
	// the file (dataset.ErrUnreadable).
	SkipUnreadable bool
}

// Open opens the table at path: a file, a directory or a prefix of objects (s3://, gs://,
// https://), as dataset.ScanDir scans it, reading only footers and headers, and chooses it
// as FromDir does. A table a file of which could not be read — or a part that does not join,
// or two files of one base name (dataset.SkippedFile) — fails with an error naming the file
// (wrapping dataset.ErrUnreadable), unless o.SkipUnreadable opens it without them (Skipped
// names them). Release the Table when done.
func Open(path string, o Options) (*Table, error) {
	d, err := dataset.ScanDir(path, o.Limits)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) { // "lstat PATH: …": the path, named once
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	t, err := FromDir(d, o)
	if err != nil {
		d.Release()
		return nil, err
	}
	t.dir = d
	if err := t.openPageCache(o); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// openPageCache has the table use the page cache o asks for: o's own, one Open makes, or
// none.
func (t *Table) openPageCache(o Options) error {
	switch {
	case o.PageCache != nil:
		t.UsePageCache(o.PageCache)
		return nil
	case o.NoPageCache || !slices.ContainsFunc(t.columns, (*dataset.Source).ReadsPages):
		return nil
	case o.PageCacheSize != 0:
		c, err := dataset.NewPageCache("", o.PageCacheSize)
		if err != nil {
			return fmt.Errorf("table: a page cache of %d bytes: %w", o.PageCacheSize, err)
		}
		t.pages = c
	default:
		c, err := dataset.NewDefaultPageCache("")
		if err != nil {
			t.PageCacheErr = err
			return nil
		}
		t.pages, t.PageCacheErr = c, c.Reduced()
	}
	t.UsePageCache(t.pages)
	return nil
}

// UsePageCache has the table's reads keep the pages of its compressed Parquet files that
// they decompress in c (dataset.PageCache), and take them from there: a shuffled epoch, whose
// every batch holds rows of most pages, then decompresses each page once instead of once per
// batch that touches it. nil keeps none. Call it before reading; c must stay open while the
// table is read.
func (t *Table) UsePageCache(c *dataset.PageCache) {
	t.used.Store(c)
	for _, src := range t.columns {
		src.UsePageCache(c)
	}
}

// PageCache returns the page cache the table's reads use — the one Options gave, the one Open
// made (closed with Release), or UsePageCache's — nil when none.
func (t *Table) PageCache() *dataset.PageCache { return t.used.Load() }

// noTable is the error of a table none of whose files could be read: the first file's error
// (naming it), and how many more there are; it is ErrNoTable too.
type noTable struct {
	first error
	more  int
}

func (e noTable) Error() string {
	if e.more == 0 {
		return e.first.Error()
	}
	return fmt.Sprintf("%v (and %d more files that could not be read)", e.first, e.more)
}

func (e noTable) Unwrap() []error { return []error{e.first, ErrNoTable} }

// unreadable returns the error of a table whose files could not be read, for the reasons
// skipped gives (one or more).
func unreadable(skipped []*dataset.SkippedFile) error { return noTable{skipped[0], len(skipped) - 1} }

// Names returns the names of the tables of a scanned directory, in the order of their first
// columns.
func Names(d *dataset.Dir) []string {
	var out []string
	seen := map[string]bool{}
	for _, src := range d.Sources {
		if name := tableOf(src); !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// tableOf is the name of the table a Source is a column of: its Table, or its own name for a
// tensor of its own.
func tableOf(src *dataset.Source) string {
	if src.Table != "" {
		return src.Table
	}
	return src.Name
}

// FromDir returns the table of a directory ScanDir scanned that o.Table names (see Names) —
// or, when o.Table is "", the only one, or the one named after the path — within d's limits
// (o.Limits and the page cache options are Open's); d must stay retained while the Table is
// used. When no table is named, the tables of the files that could not be read count among
// those to choose from, so that an unreadable file is never passed over for another table in
// silence.
// Its columns must hold rows in the same fragments, or it fails with an error wrapping
// ErrNotAligned naming the column that does not.
//
// A table a file of which was left out (dataset.Dir.SkippedOf: it could not be read, does
// not join, or shares its base name) fails with an error naming the file and wrapping
// dataset.ErrUnreadable (dataset.UnreadableParts), unless o.SkipUnreadable: then the table
// is its other files' rows, and Skipped names the files left out — with no table named, those
// of the tables no file of which could be read as well. A table no file of which can be read
// fails either way, with the first file's error (and ErrNoTable).
func FromDir(d *dataset.Dir, o Options) (*Table, error) {
	name, err := chooseTable(d, o)
	if err != nil {
		return nil, err
	}
	var cols []*dataset.Source
	for _, src := range d.Sources {
		if tableOf(src) == name {
			cols = append(cols, src)
		}
	}
	skipped := d.SkippedOf(name)
	switch {
	case len(cols) == 0 && len(skipped) > 0:
		return nil, unreadable(skipped)
	case len(cols) == 0:
		return nil, fmt.Errorf("%s: no table %s (it has %s): %w", d.Path, name, strings.Join(Names(d), ", "), ErrNoTable)
	case len(skipped) > 0 && !o.SkipUnreadable:
		return nil, dataset.UnreadableParts(name, skipped)
	}
	if o.Table == "" { // the files of the tables none of which could be read, passed over
		names := Names(d)
		for _, err := range d.Skipped {
			var sf *dataset.SkippedFile
			if errors.As(err, &sf) && sf.Table != name && !slices.Contains(names, sf.Table) {
				skipped = append(skipped, sf)
			}
		}
	}
	var left []dataset.LeftOut
	for _, l := range d.LeftOut {
		if strings.HasPrefix(l.Name, name+".") {
			left = append(left, l)
		}
	}
	t, err := FromSources(name, cols, left, d.Limits())
	if err != nil {
		return nil, err
	}
	t.skipped = skipped
	return t, nil
}

// chooseTable returns the name of the table of d that FromDir opens, as o says.
func chooseTable(d *dataset.Dir, o Options) (string, error) {
	if o.Table != "" {
		return o.Table, nil
	}
	names := Names(d)
	tables := slices.Clone(names)
	var broken []string // the tables with files that could not be read
	for _, err := range d.Skipped {
		var sf *dataset.SkippedFile
		if !errors.As(err, &sf) || slices.Contains(broken, sf.Table) {
			continue
		}
		broken = append(broken, sf.Table)
		if !slices.Contains(tables, sf.Table) && (!o.SkipUnreadable || len(names) == 0) {
			tables = append(tables, sf.Table)
		}
	}
	switch base := dataset.BaseName(strings.TrimRight(d.Path, "/")); {
	case len(tables) == 1:
		return tables[0], nil
	case slices.Contains(tables, base):
		return base, nil
	case len(tables) == 0:
		return "", fmt.Errorf("%s: no table: %w", d.Path, ErrNoTable)
	}
	listed := make([]string, len(tables))
	for i, name := range tables {
		listed[i] = name
		if slices.Contains(broken, name) {
			listed[i] += " (with " + dataset.ErrUnreadable.Error() + "s)"
		}
	}
	return "", fmt.Errorf("%s holds the tables %s: name one: %w", d.Path, strings.Join(listed, ", "), ErrNoTable)
}

// FromSources returns the table named name whose columns are the Sources cols, in that order
// (each named by its Column, or by its Name when it is a tensor of its own), left naming its
// columns that have no tensor form; Take copies within lim. The Sources must stay retained
// while the Table is used. Their fragments must hold the same rows, or it fails with an error
// wrapping ErrNotAligned naming the column that does not; no Sources is ErrNoTable.
func FromSources(name string, cols []*dataset.Source, left []dataset.LeftOut, lim limits.Limits) (*Table, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("%s: a table of no columns: %w", name, ErrNoTable)
	}
	t := &Table{Name: name, LeftOut: left, lim: lim, columns: slices.Clone(cols)}
	for _, src := range cols {
		col := src.Column
		if src.Table == "" || col == "" {
			col = src.Name
		}
		t.names = append(t.names, col)
	}
	frags := t.columns[0].ChunkRows()
	for i, src := range t.columns[1:] {
		if got := src.ChunkRows(); !slices.Equal(got, frags) {
			k := 0
			for k < min(len(got), len(frags)) && got[k] == frags[k] {
				k++
			}
			return nil, fmt.Errorf("%s: column %s has %d fragments, column %s %d, and fragment %d differs: %w",
				name, t.names[i+1], len(got), t.names[0], len(frags), k, ErrNotAligned)
		}
	}
	t.first = make([]int64, len(frags)+1)
	for i, n := range frags {
		t.first[i+1] = t.first[i] + n
	}
	return t, nil
}

// Skipped returns the files left out of the table (Options.SkipUnreadable), each naming its
// path and why, in path order; nil when none was.
func (t *Table) Skipped() []*dataset.SkippedFile { return slices.Clone(t.skipped) }

// NumRows returns the table's rows.
func (t *Table) NumRows() int64 { return t.first[len(t.first)-1] }

// Columns returns the names of the table's columns, in order.
func (t *Table) Columns() []string { return slices.Clone(t.names) }

// Files returns the paths (or URIs) of the files the table's rows come from, in row order,
// each once.
func (t *Table) Files() []string {
	var out []string
	for _, src := range t.columns {
		for _, f := range src.Files() {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// NumFragments returns the number of the table's fragments.
func (t *Table) NumFragments() int { return len(t.first) - 1 }

// Fragment returns the table rows [start, end) of fragment i.
func (t *Table) Fragment(i int) (start, end int64) { return t.first[i], t.first[i+1] }

// Locate returns the fragment holding table row row (0 <= row < NumRows) and the row's index
// in it.
func (t *Table) Locate(row int64) (frag int, local int64) {
	frag = sort.Search(len(t.first)-1, func(i int) bool { return t.first[i+1] > row })
	return frag, row - t.first[frag]
}

// Release releases the files of a Table Open opened, and closes the page cache Open made; a
// Table from FromDir leaves its Dir alone.
func (t *Table) Release() {
	if t.dir != nil {
		t.dir.Release() // the pages kept of its files dropped with them
		t.dir = nil
	}
	if t.pages != nil {
		t.used.CompareAndSwap(t.pages, nil)
		_ = t.pages.Close() // a scratch file without a name: nothing to report
		t.pages = nil
	}
}

// Take returns the table's rows at the given indices, in that order — an index may repeat,
// and a negative one counts from the end, as NumPy's does — with the columns named (all of
// them, in the table's order, when columns is empty), as a table of tensors named
// TABLE.COLUMN: copies, in Go memory, that view no file. An index outside the table fails with
// an error wrapping ErrRowRange that names it and the table's rows, before anything is read;
// so does a take whose rows would copy more than the limits' MaxCopySize bytes (wrapping
// limits.ErrExceeded). Only the fragments holding the rows are read, GOMAXPROCS at a time,
// each file once for all the columns and only what the rows need (see dataset.ReadRowsOf).
// Each file a take read is asked, once its rows are copied, whether it was modified since the
// table was opened (one fstat a file read, of those alone): the rows are of the version the
// table opened, or the take fails with a *dataset.FileError naming the file and what differs
// (its size, modification time or change time: a rewrite that kept size and modification
// time, as rsync --inplace -t leaves it, included), wrapping dataset.ErrFileChanged — never
// rows of two versions, whether from the file or from pages a page cache kept of it. ctx ends
// the reads under way.
func (t *Table) Take(ctx context.Context, rows []int64, columns []string) (*dataset.Table, error) {
	cols, err := t.pick(columns)
	if err != nil {
		return nil, err
	}
	n := t.NumRows()
	want := make([]int64, len(rows))
	for i, r := range rows {
		if r < 0 {
			r += n
		}
		if r < 0 || r >= n {
			return nil, fmt.Errorf("%s: row %d of a table of %d rows: %w", t.Name, rows[i], n, ErrRowRange)
		}
		want[i] = r
	}
	if err := t.checkSize(cols, int64(len(rows))); err != nil {
		return nil, err
	}
	uniq := slices.Clone(want)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	pieces := t.pieces(uniq, cols)
	if len(pieces) == 0 && t.NumFragments() > 0 {
		pieces = append(pieces, piece{0, nil}) // no rows: the columns' empty form
	}
	// Read every piece, all its columns at once, GOMAXPROCS pieces at a time.
	srcs := make([]*dataset.Source, len(cols))
	for c, col := range cols {
		srcs[c] = t.columns[col]
	}
	got := make([][]dataset.Tensor, len(cols))
	for c := range got {
		got[c] = make([]dataset.Tensor, len(pieces))
	}
	if err := fanout.Each(ctx, len(pieces), runtime.GOMAXPROCS(0), func(ctx context.Context, p int) error {
		ts, err := dataset.ReadRowsOf(ctx, srcs, pieces[p].frag, pieces[p].local)
		if err != nil {
			return err
		}
		for c, tn := range ts {
			got[c][p] = tn
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]dataset.Tensor, len(cols))
	var pos []int64 // where each row asked is among uniq, unless they are the same
	if !slices.Equal(uniq, want) {
		pos = make([]int64, len(want))
		for i, r := range want {
			k, _ := slices.BinarySearch(uniq, r)
			pos[i] = int64(k)
		}
	}
	for c, col := range cols {
		var tn dataset.Tensor
		switch {
		case len(pieces) == 0: // a table of no fragments: its columns' empty form
			tn, err = t.columns[col].Read(ctx)
		case pos == nil:
			tn, err = dataset.Concat(got[c])
		default: // the rows as asked, in their order, repeated: one copy from the pieces
			tn, err = dataset.TakeRowsOf(got[c], pos)
		}
		if err != nil {
			return nil, err
		}
		tn.Column = t.names[col]
		out[c] = tn
	}
	return dataset.TableOf(t.Name, out, t.LeftOut)
}

// piece is rows of one fragment read together: their indices in it, ascending.
type piece struct {
	frag  int
	local []int64
}

// pieces splits the rows uniq (ascending, distinct) of columns cols into the reads Take makes:
// a fragment's rows in pieces of at least minPieceRows and about a GOMAXPROCS-th of all, so
// that the goroutines share a take from one fragment too — but a fragment one of whose columns
// is decoded beyond the rows read (compressed pages, strings read whole) in one piece, so
// that nothing of it is decompressed or decoded twice in a take.
func (t *Table) pieces(uniq []int64, cols []int) []piece {
	var out []piece
	most := max(minPieceRows, (len(uniq)+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0))
	for k := 0; k < len(uniq); {
		f, _ := t.Locate(uniq[k])
		limit := most
		if t.readsWhole(cols, f) {
			limit = len(uniq)
		}
		e := k
		local := []int64{}
		for e < len(uniq) && uniq[e] < t.first[f+1] && len(local) < limit {
			local = append(local, uniq[e]-t.first[f])
			e++
		}
		out = append(out, piece{f, local})
		k = e
	}
	return out
}

// readsWhole reports whether a read of rows of fragment f decodes more of one of the columns
// cols than those rows (dataset.Source.ReadsWhole).
func (t *Table) readsWhole(cols []int, f int) bool {
	for _, c := range cols {
		if t.columns[c].ReadsWhole(f) {
			return true
		}
	}
	return false
}

// pick returns the indices of the columns named, all of them for none.
func (t *Table) pick(columns []string) ([]int, error) {
	if len(columns) == 0 {
		out := make([]int, len(t.columns))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	out := make([]int, len(columns))
	for i, name := range columns {
		k := slices.Index(t.names, name)
		if k < 0 {
			for _, l := range t.LeftOut {
				if l.Column == name {
					return nil, fmt.Errorf("%s: column %s: %s: %w", t.Name, name, l.Why, ErrNoColumn)
				}
			}
			return nil, fmt.Errorf("%s: no column %s (it has %s): %w", t.Name, name, strings.Join(t.names, ", "), ErrNoColumn)
		}
		out[i] = k
	}
	return out, nil
}

// checkSize fails when rows rows of the columns cols would take more than MaxCopySize bytes,
// as each column's bytes per row (its Bytes over its rows) say.
func (t *Table) checkSize(cols []int, rows int64) error {
	total, _ := t.takeBytes(cols, rows)
	if most := t.lim.WithDefaults().MaxCopySize; total > most {
		return fmt.Errorf("%s: %d rows take about %d bytes, more than MaxCopySize %d: %w", t.Name, rows, total, most, limits.ErrExceeded)
	}
	return nil
}

// TakeBytes returns about the memory the values of n rows of the columns named (every column
// for none) take — each column's bytes per row (dataset.Source.Bytes over its rows) times n —
// and whether every column's is known before reading (not a ragged Parquet column's).
func (t *Table) TakeBytes(n int64, columns []string) (int64, bool, error) {
	cols, err := t.pick(columns)
	if err != nil {
		return 0, false, err
	}
	total, known := t.takeBytes(cols, n)
	return total, known, nil
}

// takeBytes is TakeBytes of the columns cols.
func (t *Table) takeBytes(cols []int, n int64) (int64, bool) {
	rows := t.NumRows()
	if rows == 0 {
		return 0, true
	}
	total, known := 0.0, true
	for _, c := range cols {
		b := t.columns[c].Bytes()
		if b < 0 {
			known = false
			continue
		}
		total += float64(b) / float64(rows) * float64(n)
	}
	return int64(min(total, math.MaxInt64/2)), known
}
