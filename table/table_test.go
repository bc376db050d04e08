package table_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/table"
)

const testRows = 1000

// records returns the test table as record batches of batch rows: emb, fixed_size_list<float32,
// 4> (row r: 4r..4r+3); label int64 (r); name utf8 (null every 7th row); tokens list<int32>
// (r%4 values).
func records(t testing.TB, batch int) []arrow.Record {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tokens", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}, nil)
	var out []arrow.Record
	for at := 0; at < testRows; at += batch {
		b := array.NewRecordBuilder(mem, schema)
		emb := b.Field(0).(*array.FixedSizeListBuilder)
		tok := b.Field(3).(*array.ListBuilder)
		for r := at; r < min(at+batch, testRows); r++ {
			emb.Append(true)
			for k := range 4 {
				emb.ValueBuilder().(*array.Float32Builder).Append(float32(4*r + k))
			}
			b.Field(1).(*array.Int64Builder).Append(int64(r))
			if r%7 == 3 {
				b.Field(2).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("row %d", r))
			}
			tok.Append(true)
			for k := range r % 4 {
				tok.ValueBuilder().(*array.Int32Builder).Append(int32(r*10 + k))
			}
		}
		out = append(out, b.NewRecord())
		b.Release()
	}
	return out
}

// writeFiles writes the test table in every form Take reads and returns their paths by name.
func writeFiles(t testing.TB, dir string) map[string]string {
	recs := records(t, 128)
	paths := map[string]string{}
	write := func(name string, f func(w *os.File)) {
		path := filepath.Join(dir, name)
		w, err := os.Create(path)
		require.NoError(t, err)
		f(w)
		require.NoError(t, w.Close())
		paths[name] = path
	}
	write("batches.arrow", func(w *os.File) {
		fw, err := arrowipc.NewFileWriter(w, arrowipc.WithSchema(recs[0].Schema()))
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, fw.Write(r))
		}
		require.NoError(t, fw.Close())
	})
	write("stream.arrows", func(w *os.File) {
		sw := arrowipc.NewWriter(w, arrowipc.WithSchema(recs[0].Schema()))
		for _, r := range recs {
			require.NoError(t, sw.Write(r))
		}
		require.NoError(t, sw.Close())
	})
	for _, c := range []struct {
		name  string
		codec parquet.Compression
	}{{"plain.parquet", parquet.Uncompressed}, {"zstd.parquet", parquet.Zstd}} {
		write(c.name, func(w *os.File) {
			pw, err := parquet.NewWriter(w, recs[0].Schema(), parquet.WriterOptions{Compression: c.codec, RowGroupBytes: 8 << 10})
			require.NoError(t, err)
			for _, r := range recs {
				require.NoError(t, pw.Write(r))
			}
			require.NoError(t, pw.Close())
		})
	}
	return paths
}

// full reads every column of the table at path whole, as dataset does.
func full(t *testing.T, path string) *dataset.Table {
	d, err := dataset.OpenDir(path, limits.Limits{})
	require.NoError(t, err)
	t.Cleanup(d.Release)
	require.Empty(t, d.Skipped)
	tab, err := d.Table(dataset.BaseName(path))
	require.NoError(t, err)
	return tab
}

// sameRows checks that got holds the rows of want at rows, column by column.
func sameRows(t *testing.T, want *dataset.Table, rows []int64, got *dataset.Table, what string) {
	require.Equal(t, len(want.Columns), len(got.Columns), what)
	n := want.Rows
	abs := make([]int64, len(rows))
	for i, r := range rows {
		if r < 0 {
			r += n
		}
		abs[i] = r
	}
	for i, wc := range want.Columns {
		w, err := wc.TakeRows(abs)
		require.NoError(t, err)
		g := got.Columns[i]
		assert.Equal(t, wc.Column, g.Column, what)
		assert.Equal(t, w.Shape(), g.Shape(), "%s %s", what, wc.Column)
		assert.Equal(t, w.Valid, g.Valid, "%s %s validity", what, wc.Column)
		assert.Equal(t, w.Dense != nil, g.Dense != nil)
		if w.Dense != nil {
			assert.Equal(t, w.Dense.String(), g.Dense.String(), "%s %s", what, wc.Column)
		} else {
			assert.Equal(t, w.Ragged.String(), g.Ragged.String(), "%s %s", what, wc.Column)
		}
	}
}

var takes = [][]int64{
	{5},
	{0, 999, -1, 5, 5, 130, 127, 128, 129, 0},
	{999, 998, 997, 3},
	{},
	{128, 129, 130, 131, 255, 256},
}

// TestTakeFromFiles: rows in any order, repeated, counted from the end, from an Arrow IPC
// file of several batches and a stream, and Parquet of several row groups (PLAIN, ZSTD),
// equal the rows of a full read; the label column says which rows came.
func TestTakeFromFiles(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			want := full(t, path)
			tab, err := table.Open(path, table.Options{})
			require.NoError(t, err)
			defer tab.Release()
			require.Equal(t, int64(testRows), tab.NumRows())
			assert.Equal(t, []string{"emb", "label", "name", "tokens"}, tab.Columns())
			if name != "stream.arrows" {
				assert.Greater(t, tab.NumFragments(), 1, "batches or row groups")
			}
			for _, rows := range takes {
				got, err := tab.Take(t.Context(), rows, nil)
				require.NoError(t, err, "%v", rows)
				assert.Equal(t, int64(len(rows)), got.Rows)
				sameRows(t, want, rows, got, fmt.Sprintf("%s %v", name, rows))
			}
			got, err := tab.Take(t.Context(), []int64{-1, 2}, []string{"label", "emb"})
			require.NoError(t, err)
			require.Equal(t, []string{"label", "emb"}, got.Names())
			labels, err := dataset.DenseOf[int64](got.Columns[0])
			require.NoError(t, err)
			assert.Equal(t, []int64{999, 2}, labels.Ravel())
		})
	}
}

// TestTakeRefusesWhatIsNotThere: a row past either end is named with the table's rows,
// before anything is read; an unknown column is named with the columns there are.
func TestTakeRefusesWhatIsNotThere(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	tab, err := table.Open(paths["plain.parquet"], table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	for _, rows := range [][]int64{{1000}, {3, -1001}, {1 << 62}} {
		_, err := tab.Take(t.Context(), rows, nil)
		require.ErrorIs(t, err, table.ErrRowRange)
		assert.Contains(t, err.Error(), "of a table of 1000 rows")
	}
	_, err = tab.Take(t.Context(), []int64{1}, []string{"nope"})
	require.ErrorIs(t, err, table.ErrNoColumn)
	assert.Contains(t, err.Error(), "emb, label, name, tokens")
	_, err = tab.Take(t.Context(), make([]int64, 1<<20), nil)
	require.NoError(t, err, "a million copies of row 0 are within MaxCopySize")
	small, err := table.Open(paths["plain.parquet"], table.Options{Limits: limits.Limits{MaxCopySize: 1 << 10}})
	require.NoError(t, err)
	defer small.Release()
	_, err = small.Take(t.Context(), make([]int64, 1000), nil)
	require.ErrorIs(t, err, limits.ErrExceeded)
}

// TestTakeFromNpyAndParts: a .npy file is a table of one column, a TFRecord file of Examples
// a table of its features; a directory of parts in mixed formats is one table whose rows run
// across them in path order.
func TestTakeFromNpyAndParts(t *testing.T) {
	dir := t.TempDir()
	d := ndarray.New[float64](50, 3)
	for i := range d.Ravel() {
		d.Ravel()[i] = float64(i)
	}
	npy := filepath.Join(dir, "x.npy")
	require.NoError(t, dataset.Save(npy, []dataset.Tensor{{Name: "x", Kind: dataset.KindDense, Dense: d}}, dataset.WriteOptions{}))
	tab, err := table.Open(npy, table.Options{})
	require.NoError(t, err)
	defer tab.Release()
	assert.Equal(t, []string{"x"}, tab.Columns())
	got, err := tab.Take(t.Context(), []int64{49, 0, 7}, nil)
	require.NoError(t, err)
	x, err := dataset.DenseOf[float64](got.Columns[0])
	require.NoError(t, err)
	assert.Equal(t, []float64{147, 148, 149, 0, 1, 2, 21, 22, 23}, x.Ravel())

	// A TFRecord file of Examples has no row index: its rows are taken from its tensors,
	// read when the table is opened.
	src0 := writeFiles(t, t.TempDir())
	arrowTable := full(t, src0["batches.arrow"])
	tfr := filepath.Join(dir, "ex.tfrecord")
	label, err := arrowTable.Column("label")
	require.NoError(t, err)
	emb, err := arrowTable.Column("emb")
	require.NoError(t, err)
	require.NoError(t, dataset.Save(tfr, []dataset.Tensor{label, emb}, dataset.WriteOptions{}))
	ex, err := table.Open(tfr, table.Options{})
	require.NoError(t, err)
	defer ex.Release()
	wantEx := full(t, tfr)
	for _, rows := range takes {
		got, err := ex.Take(t.Context(), rows, nil)
		require.NoError(t, err)
		sameRows(t, wantEx, rows, got, fmt.Sprintf("tfrecord %v", rows))
	}

	parts := filepath.Join(t.TempDir(), "mixed")
	require.NoError(t, os.Mkdir(parts, 0o755))
	src := writeFiles(t, t.TempDir())
	copyFile(t, src["zstd.parquet"], filepath.Join(parts, "part-0.parquet"))
	copyFile(t, src["batches.arrow"], filepath.Join(parts, "part-1.arrow"))
	mixed, err := table.Open(parts, table.Options{})
	require.NoError(t, err)
	defer mixed.Release()
	require.Equal(t, "mixed", mixed.Name)
	require.Equal(t, int64(2*testRows), mixed.NumRows())
	got, err = mixed.Take(t.Context(), []int64{1999, 0, 1000, 999, -2}, []string{"label"})
	require.NoError(t, err)
	labels, err := dataset.DenseOf[int64](got.Columns[0])
	require.NoError(t, err)
	assert.Equal(t, []int64{999, 0, 0, 999, 998}, labels.Ravel())
}

// TestTakeFromObjects: the same takes from objects in S3 (the real test server) equal those
// from the local files.
func TestTakeFromObjects(t *testing.T) {
	paths := writeFiles(t, t.TempDir())
	s3 := storetest.StartS3(t, "rows")
	gcs := storetest.StartGCS(t, "rows")
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "t"), 0o755))
	for name, path := range paths {
		s3.PutFile(t, "rows", "t/"+name, path)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		gcs.Put(t, "rows", "t/"+name, b)
		require.NoError(t, os.WriteFile(filepath.Join(root, "t", name), b, 0o644))
	}
	web := httptest.NewServer(http.FileServer(http.Dir(root)))
	defer web.Close()
	for _, store := range []string{"s3://rows/t/", "gs://rows/t/", web.URL + "/t/"} {
		for name, path := range paths {
			t.Run(strings.SplitN(store, ":", 2)[0]+"/"+name, func(t *testing.T) {
				want := full(t, path)
				tab, err := table.Open(store+name, table.Options{})
				require.NoError(t, err)
				defer tab.Release()
				for _, rows := range takes {
					got, err := tab.Take(t.Context(), rows, nil)
					require.NoError(t, err, "%v", rows)
					sameRows(t, want, rows, got, fmt.Sprintf("%s%s %v", store, name, rows))
				}
			})
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, bytes.Clone(b), 0o644))
}

// TestTakeFromArrowCppParquet: rows of Parquet files Arrow C++ 17 wrote — uncompressed and
// ZSTD, 1 MiB pages without a page index (pages found by walking their headers), 8 KiB pages
// with one (pages found from its offset index) — equal those of a full read.
func TestTakeFromArrowCppParquet(t *testing.T) {
	for _, name := range []string{"cpp17-none.parquet", "cpp17-zstd.parquet", "cpp17-pageindex-none.parquet", "cpp17-pageindex-zstd.parquet"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			copyFile(t, filepath.Join("../parquet/testdata/take", name), path)
			want := full(t, path)
			tab, err := table.Open(path, table.Options{})
			require.NoError(t, err)
			defer tab.Release()
			n := tab.NumRows()
			require.Greater(t, tab.NumFragments(), 1)
			for _, rows := range [][]int64{{0}, {n - 1, 0, n / 2, n / 2, -1}, {n / 3, n/3 + 1, n/3 + 2, 2 * n / 3}} {
				got, err := tab.Take(t.Context(), rows, nil)
				require.NoError(t, err)
				sameRows(t, want, rows, got, fmt.Sprintf("%s %v", name, rows))
			}
		})
	}
}

// TestOpenSaysWhyThereIsNoTable: a file that cannot be read is its own error (naming it, and
// ErrNoTable); a directory of no tables, and a name no table has, are ErrNoTable.
func TestOpenSaysWhyThereIsNoTable(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.parquet")
	require.NoError(t, os.WriteFile(bad, []byte("PAR1garbagePAR1"), 0o644))
	_, err := table.Open(bad, table.Options{})
	require.ErrorIs(t, err, table.ErrNoTable)
	require.ErrorIs(t, err, parquet.ErrInvalid)
	assert.True(t, strings.HasPrefix(err.Error(), bad+": parquet: "), err.Error())
	_, err = table.Open(t.TempDir(), table.Options{})
	require.ErrorIs(t, err, table.ErrNoTable)
	paths := writeFiles(t, t.TempDir())
	_, err = table.Open(paths["plain.parquet"], table.Options{Table: "nope"})
	require.ErrorIs(t, err, table.ErrNoTable)
	assert.Contains(t, err.Error(), "it has plain")
}

// TestColumnsMustAlign: a directory table one of whose parts lacks a column has columns of
// different fragments: no take of its rows, but an error naming the column.
func TestColumnsMustAlign(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	a := ndarray.New[int64](10)
	b := ndarray.New[float32](10)
	require.NoError(t, dataset.Save(filepath.Join(sub, "part-0.parquet"), []dataset.Tensor{{Name: "a", Column: "a", Dense: a}, {Name: "b", Column: "b", Dense: b}}, dataset.WriteOptions{}))
	require.NoError(t, dataset.Save(filepath.Join(sub, "part-1.parquet"), []dataset.Tensor{{Name: "a", Column: "a", Dense: a}}, dataset.WriteOptions{}))
	_, err := table.Open(dir, table.Options{Table: "sub"})
	require.ErrorIs(t, err, table.ErrNotAligned)
	assert.Contains(t, err.Error(), "column b has 1 fragments, column a 2")
}

// TestTakeDecodesOnce: the rows of one row group are read by several goroutines, in pieces,
// only where reading part of it costs only that part (uncompressed fixed-size columns); a
// compressed row group, or one of strings or lists (decoded whole), is read in one piece, so
// that a take decompresses or decodes each of its pages once. The decodes are counted by a
// page cache the take keeps them in (dataset.PageCacheStats): a page or chunk a take decodes
// is kept (Pages), one it wants again — which without the cache it would decode again — is a
// hit (Hits, also when it waits for another piece decoding it). Each is decoded once: no hit
// in the take, and the same take again finds each of them once (Hits equal to Pages), decoding
// nothing more.
func TestTakeDecodesOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	recs := records(t, testRows)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	dir := t.TempDir()
	rows := make([]int64, testRows)
	for i := range rows {
		rows[i] = int64(i)
	}
	for _, c := range []struct {
		codec   parquet.Compression
		columns []string
		pieces  int
		decodes bool // pages decompressed or chunks decoded whole; else read in place
	}{
		{parquet.Uncompressed, []string{"emb", "label"}, 4, false},
		{parquet.Uncompressed, []string{"emb", "name"}, 1, true},
		{parquet.Uncompressed, []string{"tokens"}, 1, true},
		{parquet.Zstd, []string{"emb", "label"}, 1, true},
	} {
		path := filepath.Join(dir, fmt.Sprintf("t%d.parquet", c.codec))
		if _, err := os.Stat(path); err != nil {
			w, err := os.Create(path)
			require.NoError(t, err)
			pw, err := parquet.NewWriter(w, recs[0].Schema(), parquet.WriterOptions{Compression: c.codec, RowGroupBytes: 1 << 30})
			require.NoError(t, err)
			require.NoError(t, pw.Write(recs[0]))
			require.NoError(t, pw.Close())
			require.NoError(t, w.Close())
		}
		what := fmt.Sprintf("%v of %v", c.codec, c.columns)
		cache, err := dataset.NewPageCache(t.TempDir(), 64<<20)
		require.NoError(t, err)
		tab, err := table.Open(path, table.Options{PageCache: cache})
		require.NoError(t, err)
		require.Equal(t, 1, tab.NumFragments())
		pieces, err := tab.PiecesOf(rows, c.columns)
		require.NoError(t, err)
		assert.Len(t, pieces, c.pieces, "%s: %v", what, pieces)
		got, err := tab.Take(t.Context(), rows, c.columns)
		require.NoError(t, err)
		assert.Equal(t, int64(testRows), got.Columns[0].Rows())
		decoded := cache.Stats()
		assert.Zero(t, decoded.Hits, "%s: a page or chunk decoded twice in one take (%+v)", what, decoded)
		if c.decodes {
			assert.Positive(t, decoded.Pages, "%s: decoded pages kept", what)
		} else {
			assert.Zero(t, decoded.Pages, "%s: nothing decompressed: the values read in place", what)
		}
		_, err = tab.Take(t.Context(), rows, c.columns)
		require.NoError(t, err)
		again := cache.Stats()
		assert.Equal(t, decoded.Pages, again.Pages, "%s: the same take again decodes nothing", what)
		assert.Equal(t, decoded.Pages, again.Hits, "%s: and wants each page or chunk once", what)
		tab.Release()
		require.NoError(t, cache.Close())
	}
}
