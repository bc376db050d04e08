package flight

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/saturate"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// A table flight is a table's columns together: one stream of record batches holding every
// column with a tensor form — tensor columns, plain columns of numbers and bools, strings —
// in the table's order, each batch the same rows of every column, as a pyarrow user's do_get
// of a table expects it. A Store serves one for every table of two columns or more: a file of
// a served directory (Parquet, Arrow IPC, TFRecord Examples), a directory's table of parts,
// a table uploaded (a DoPut of record batches of several columns). Each column stays a flight
// of its own, NAME.COLUMN. The table's FlightInfo says what it holds in its app_metadata:
//
//	{"kind": "table", "shape": [ROWS],
//	 "columns": [{"name": "t.emb", "column": "emb", "kind": "fixed_shape_tensor", "dtype": "float32", "shape": [ROWS, 4]}, ...],
//	 "left_out": [{"name": "t.meta", "column": "meta", "type": "struct<a: int32>", "why": "..."}]}

// kindTable is the kind a table flight's app_metadata says (KindTable).
const kindTable = "table"

// columnMetadata describes one column of a table flight in its app_metadata: the flight of
// the column alone (name, NAME.COLUMN), its column's name and what tensor it is.
type columnMetadata struct {
	Name     string   `json:"name"`
	Column   string   `json:"column"`
	Kind     string   `json:"kind"`
	DType    string   `json:"dtype"`
	Shape    []int64  `json:"shape"`
	DimNames []string `json:"dim_names,omitempty"`
}

// leftOutMetadata is a column of a table left out of its flight (dataset.LeftOut).
type leftOutMetadata struct {
	Name   string `json:"name"`
	Column string `json:"column"`
	Type   string `json:"type"`
	Why    string `json:"why"`
}

// tableMetadataOf returns the app_metadata of a table of rows rows and the columns described.
func tableMetadataOf(rows int64, columns []columnMetadata, left []dataset.LeftOut) tensorMetadata {
	meta := tensorMetadata{Kind: kindTable, Shape: []int64{rows}, Columns: columns}
	for _, l := range left {
		meta.LeftOut = append(meta.LeftOut, leftOutMetadata(l))
	}
	return meta
}

// columnOf describes the tensor t, the column of a table flight whose own flight is named name.
func columnOf(name string, t dataset.Tensor) columnMetadata {
	return columnMetadata{Name: name, Column: t.Column, Kind: string(t.ImpliedKind()), DType: t.DType().String(), Shape: t.Shape(), DimNames: t.DimNames}
}

// leftOutOf returns the columns a table flight's metadata names as left out.
func (m tensorMetadata) leftOutOf() []dataset.LeftOut {
	out := make([]dataset.LeftOut, len(m.LeftOut))
	for i, l := range m.LeftOut {
		out[i] = dataset.LeftOut(l)
	}
	return out
}

// isTable reports whether e is a table flight.
func (e *entry) isTable() bool { return e.meta.Kind == kindTable }

// newTableEntry returns the entry of the table named name whose columns are columns, tensors
// of as many rows each naming its Column (an upload's, a served file's read whole), and
// the entries of each column, named NAME.COLUMN: one record batch of every column
// (dataset.Batch, which views the tensors' memory where it can and allocates from the store's
// allocator what it cannot), whose arrays the columns' records share. left names the columns
// left out.
func (s *Store) newTableEntry(name string, columns []dataset.Tensor, left []dataset.LeftOut) (*entry, []*entry, error) {
	if err := CheckName(name); err != nil {
		return nil, nil, err
	}
	for i, c := range columns {
		if c.Sparse != nil {
			return nil, nil, fmt.Errorf("flight: %s: %s is a sparse tensor, which is a table of its own: %w", name, c.Name, ndarray.ErrShape)
		}
		if err := CheckName(name + "." + c.Column); err != nil {
			return nil, nil, err
		}
		columns[i].Kind = c.ImpliedKind()
	}
	rec, err := dataset.Batch(s.mem, columns)
	if err != nil {
		return nil, nil, fmt.Errorf("flight: %s: %w", name, err)
	}
	n, err := dataset.RecordBytes(rec)
	if err != nil {
		rec.Release()
		return nil, nil, fmt.Errorf("flight: %s: %w", name, err)
	}
	metas := make([]columnMetadata, len(columns))
	cols := make([]*entry, len(columns))
	for i, c := range columns {
		col := name + "." + c.Column
		metas[i] = columnOf(col, c)
		field := rec.Schema().Field(i)
		field.Name = col
		crec := array.NewRecord(arrow.NewSchema([]arrow.Field{field}, nil), []arrow.Array{rec.Column(i)}, rec.NumRows())
		cn, _ := dataset.RecordBytes(crec) // a column of rec, whose spans were measured
		c.Name = col
		cols[i] = &entry{meta: metadataOf(c), schema: crec.Schema(), rows: crec.NumRows(), bytes: cn, tensor: c, record: crec}
		cols[i].refs.Store(1)
	}
	e := &entry{meta: tableMetadataOf(rec.NumRows(), metas, left), schema: rec.Schema(), rows: rec.NumRows(), bytes: n, record: rec, tensors: columns}
	e.refs.Store(1)
	return e, cols, nil
}

// sourceTableEntry returns the entry of the table named name of a served directory whose
// columns are the Sources cols (in the table's order, their chunks aligned: dataset.Source's
// Table), retained: one record batch viewing their files when each is one chunk read with its
// file, else the Sources themselves, read chunk by chunk in lockstep at each DoGet (sendTable).
func (s *Store) sourceTableEntry(root, name string, cols []*dataset.Source, left []dataset.LeftOut) (*entry, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	rows, chunks := cols[0].Rows(), cols[0].NumChunks()
	for _, c := range cols[1:] {
		switch {
		case c.Rows() != rows:
			return nil, fmt.Errorf("%s has %d rows, %s %d: %w", c.Name, c.Rows(), cols[0].Name, rows, dataset.ErrNotTable)
		case c.NumChunks() != chunks || len(c.DecodeBytes()) != chunks:
			return nil, fmt.Errorf("%s is read in %d chunks, %s in %d: %w", c.Name, c.NumChunks(), cols[0].Name, chunks, dataset.ErrNotTable)
		}
	}
	resident := make([]dataset.Tensor, len(cols))
	whole := true
	for i, c := range cols {
		t, ok := c.Resident()
		whole = whole && ok
		t.Column = c.Column
		resident[i] = t
	}
	if whole {
		var e *entry
		err := dataset.Guard(func() error { // a record of some columns copies them
			var colEntries []*entry
			var err error
			e, colEntries, err = s.newTableEntry(name, resident, left)
			for _, c := range colEntries { // the directory's column flights are its Sources'
				c.release()
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			c.Retain()
		}
		e.columns, e.root = cols, root // their files stay mapped while the record views them
		return e, nil
	}
	var fields []arrow.Field
	metas := make([]columnMetadata, len(cols))
	bytes := int64(0)
	for i, c := range cols {
		schema, err := c.Schema(c.Column)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		fields = append(fields, schema.Fields()...)
		metas[i] = columnMetadata{Name: c.Name, Column: c.Column, Kind: string(c.Kind), DType: c.DType().String(), Shape: c.Shape(), DimNames: c.DimNames}
		if b := streamBytes(c); b < 0 || bytes < 0 {
			bytes = -1
		} else {
			bytes = saturate.Add(bytes, b)
		}
	}
	for _, c := range cols {
		c.Retain()
	}
	e := &entry{meta: tableMetadataOf(rows, metas, left), schema: arrow.NewSchema(fields, nil), rows: rows, bytes: bytes, columns: cols, root: root}
	e.refs.Store(1)
	stampFiles(e, cols...)
	return e, nil
}

// sameTable reports whether e is the table entry of the Sources cols as a Rescan found them
// unchanged.
func (e *entry) sameTable(cols []*dataset.Source) bool {
	if len(e.columns) != len(cols) {
		return false
	}
	for i, c := range cols {
		if !e.columns[i].SameAs(c) {
			return false
		}
	}
	return true
}

// sendTable writes the stream of a table entry read chunk by chunk: the chunks of its
// columns read in lockstep (a row group, a file of parts), each chunk's decoding reserved
// from the memory budget before it is read — its columns' estimates summed, as sendEntry
// reserves one column's — and, where the record batch made of it copies more than that (the
// strings of a dictionary-encoded column written out), that too before the copy; every
// column's chunk must hold the same rows. Each chunk's messages are checked against its files
// (setCheck: dataset.CheckChunks) before they are sent.
func (s *Server) sendTable(ctx context.Context, e *entry, w *arrowipc.Writer, setCheck func(func() error)) error {
	name := e.columns[0].Table
	n := e.columns[0].NumChunks()
	costs := make([]int64, n)
	nexts := make([]func() (dataset.Tensor, error, bool), len(e.columns))
	for k, c := range e.columns {
		for i, b := range c.DecodeBytes() {
			costs[i] = saturate.Add(costs[i], b)
		}
		next, stop := iter.Pull2(c.Chunks(ctx))
		defer stop()
		nexts[k] = next
	}
	for i := range n {
		setCheck(func() error { return dataset.CheckChunks(e.columns, i) })
		if err := s.sendTableChunk(ctx, e, w, name, i, costs[i], nexts); err != nil {
			return err
		}
	}
	for k, next := range nexts {
		if _, err, more := next(); more && err == nil {
			return fmt.Errorf("flight: table %s: column %s has more than the %d chunks it had: %w", name, e.columns[k].Column, n, ipc.ErrInvalid)
		} else if err != nil {
			return err
		}
	}
	return s.closeWhole(w, e)
}

// sendTableChunk reads chunk i of every column of the table entry e (nexts, in lockstep),
// within cost bytes of the memory budget and what its record copies beyond, and sends it.
func (s *Server) sendTableChunk(ctx context.Context, e *entry, w *arrowipc.Writer, name string, i int, cost int64,
	nexts []func() (dataset.Tensor, error, bool)) error {
	release, err := s.budget.acquire(ctx, name, cost)
	if err != nil {
		return err
	}
	defer release()
	chunk := make([]dataset.Tensor, len(nexts))
	copies := int64(0)
	for k, next := range nexts {
		t, err, ok := next()
		if err != nil {
			return err
		}
		col := e.columns[k]
		if !ok {
			return fmt.Errorf("flight: table %s: column %s ends after %d chunks, %s has more: %w", name, col.Column, i, e.columns[0].Column, ipc.ErrInvalid)
		}
		if k > 0 && t.Rows() != chunk[0].Rows() {
			return fmt.Errorf("flight: table %s: chunk %d: column %s has %d rows, %s %d: %w", name, i, col.Column, t.Rows(), e.columns[0].Column, chunk[0].Rows(), ipc.ErrInvalid)
		}
		t.Column = col.Column
		chunk[k] = t
		copies = saturate.Add(copies, recordCopyBound(t))
	}
	if copies > cost {
		more, err := s.budget.acquireMore(ctx, name, cost, copies-cost)
		if err != nil {
			return err
		}
		defer more()
	}
	rec, err := dataset.Batch(s.store.mem, chunk)
	if err != nil {
		return fmt.Errorf("flight: table %s: chunk %d: %w", name, i, err)
	}
	defer rec.Release()
	return s.send(ctx, w, e.schema, rec)
}

// fromRecordsCopies returns at most what dataset.FromRecords allocates reading records, the
// record batches of one stream: a column's values when they come in several batches (joined
// into one copy), and in any case bools (a byte each), strings and bytes (their bytes and a
// header each), dictionary-encoded values (a header a row), list offsets (widened) and
// validity (a byte a row).
func fromRecordsCopies(records []arrow.Record) int64 {
	total := int64(0)
	for _, rec := range records {
		for _, c := range rec.Columns() {
			total = saturate.Add(total, arrayCopies(c, len(records) > 1))
		}
	}
	return total
}

// arrayCopies is fromRecordsCopies of one array; joined says its values are copied.
func arrayCopies(arr arrow.Array, joined bool) int64 {
	n := int64(arr.Len())
	out := int64(0)
	if arr.NullN() > 0 {
		out += n
	}
	buffer := func(i int) int64 {
		if b := arr.Data().Buffers(); len(b) > i && b[i] != nil {
			return int64(b[i].Len())
		}
		return 0
	}
	switch a := arr.(type) {
	case array.ExtensionArray:
		return out + arrayCopies(a.Storage(), joined)
	case *array.Dictionary:
		return out + n*stringHeader + arrayCopies(a.Dictionary(), true)
	case *array.String, *array.LargeString, *array.Binary, *array.LargeBinary:
		return out + n*stringHeader + buffer(2)
	case *array.FixedSizeBinary:
		return out + n*stringHeader + buffer(1)
	case *array.Boolean:
		return out + n
	case *array.List:
		return out + (n+1)*8 + arrayCopies(a.ListValues(), joined)
	case *array.LargeList:
		return out + (n+1)*8 + arrayCopies(a.ListValues(), joined)
	case *array.FixedSizeList:
		return out + arrayCopies(a.ListValues(), joined)
	case *array.Struct:
		for i := range a.NumField() {
			out += arrayCopies(a.Field(i), joined)
		}
		return out
	}
	if joined {
		out += buffer(1)
	}
	return out
}

// stringHeader is what a Go string takes beside its bytes.
const stringHeader = 16

// dictionaryEntry is what one value of a dictionary being built takes beside its bytes: its
// entry in a map of string to index (a header, an index, a bucket's share) and in the list of
// values.
const dictionaryEntry = 64

// recordCopyBound returns at most what making t's column of a record batch (dataset.Batch,
// Tensor.Record) may copy: the bytes of strings and their offsets (of a dictionary-encoded
// column, its dictionary's — the strings at most, with its own values — its indices and
// the index of its values), bools as bits, the validity bitmap of null rows, the values of a
// dense tensor not laid out row-major, a sparse tensor's indices, a ragged one's row splits;
// nothing for numbers laid out row-major, which the batch views.
func recordCopyBound(t dataset.Tensor) int64 {
	n := int64(0)
	if t.Valid != nil {
		n += (int64(len(t.Valid)) + 7) / 8
	}
	width := int64(max(t.DType().Size(), 1))
	switch {
	case t.Dense != nil && t.DType() == ndarray.String && t.Dictionary != nil:
		seed := int64(0)
		for _, v := range t.Dictionary.Values {
			seed += int64(len(v))
		}
		entries := t.Dense.Size() + int64(len(t.Dictionary.Values))
		// the dictionary's bytes and offsets, an index a row, and a map entry a value
		return n + stringBytes(t) + seed + (entries+1)*8 + t.Dense.Size()*8 + entries*dictionaryEntry
	case t.Dense != nil && t.DType() == ndarray.String:
		return n + stringBytes(t) + (t.Dense.Size()+1)*8
	case t.Dense != nil && t.DType() == ndarray.Bool:
		return n + (t.Dense.Size()+7)/8
	case t.Dense != nil && t.Dense.Layout().IsRowMajor():
		return n
	case t.Dense != nil:
		return n + t.Dense.Size()*width
	case t.Sparse != nil:
		return n + t.NNZ()*width + t.NNZ()*int64(t.Sparse.Shape().Rank())*8
	}
	n += t.NNZ()*width + (t.NNZ()+t.Shape()[0]+2)*8*int64(t.Shape().Rank())
	if t.DType() == ndarray.String {
		n += stringBytes(t)
	}
	return n
}

// stringBytes returns the bytes of the strings of t (none for a tensor of no strings).
func stringBytes(t dataset.Tensor) int64 {
	total := int64(0)
	switch a := t.Dense.(type) {
	case *ndarray.Dense[string]:
		for v := range a.Values() {
			total += int64(len(v))
		}
	}
	if a, ok := t.Ragged.(*ragged.Array[string]); ok {
		for _, v := range a.FlatValues() {
			total += int64(len(v))
		}
	}
	return total
}

// tablesOf returns the tables the Sources of a directory are the columns of (dataset.Source's
// Table), each its columns in the order they come, in the order the tables first come.
func tablesOf(sources []*dataset.Source) (names []string, columns map[string][]*dataset.Source) {
	columns = map[string][]*dataset.Source{}
	for _, src := range sources {
		if src.Table == "" {
			continue
		}
		if _, seen := columns[src.Table]; !seen {
			names = append(names, src.Table)
		}
		columns[src.Table] = append(columns[src.Table], src)
	}
	return names, columns
}

// leftOutOfTable returns the columns of the table named name that left lists.
func leftOutOfTable(name string, left []dataset.LeftOut) []dataset.LeftOut {
	var out []dataset.LeftOut
	for _, l := range left {
		if l.Name == name+"."+l.Column {
			out = append(out, l)
		}
	}
	return out
}
