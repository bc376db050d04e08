package dataset

import (
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// An Arrow IPC file holds one dictionary a column for all its record batches (a replacement
// is a stream's alone), and Arrow C++'s file writer, as arrow-go's, refuses batches whose
// dictionaries differ. fileDictionaries writes such batches all the same: each batch's
// dictionary columns are unified into one dictionary a column as they come — the values of
// every batch's dictionary, each once, in the order they first come, which never reorders
// what an earlier batch was given — their indices mapped into it; the batches so remapped
// wait in a temporary Arrow IPC stream (their dictionary columns as their indices alone), and
// once the last is written the file is written of them, every batch with the one dictionary.

// fileDictionaries gathers the batches of an Arrow IPC file whose schema has dictionary
// columns, unifying their dictionaries, and writes the file at the end.
type fileDictionaries struct {
	schema  *arrow.Schema
	mem     memory.Allocator
	max     int64            // what the unified dictionaries may take (WriteOptions.MaxCopySize)
	held    int64            // what they may take so far: the sum of the distinct dictionaries unified
	columns []*unifiedColumn // one per dictionary column of schema
	spool   *os.File         // the remapped batches, an Arrow IPC stream of spooled
	spooled *arrow.Schema    // schema with each dictionary column as its indices
	stream  *arrowipc.Writer // writing spool
	release func()           // removes spool
}

// unifiedEntry is what one value of a unified dictionary takes beside its bytes: its memo
// entry (an index, a hash, a bucket's share) and its offset in the dictionary made of it.
const unifiedEntry = 48

// unifiedColumn is one dictionary column's unified dictionary being built.
type unifiedColumn struct {
	index   int // in the schema
	typ     *arrow.DictionaryType
	unifier array.DictionaryUnifier
	size    int64       // the values unified so far
	last    arrow.Array // the dictionary the last batch had, retained
	mapping []int32     // last's values' indices in the unified dictionary
}

// hasDictionaryColumns reports whether a column of schema is dictionary-encoded (not only
// inside a list or struct).
func hasDictionaryColumns(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrow.DICTIONARY {
			return true
		}
	}
	return false
}

// holdsDictionary reports whether dt is or holds a dictionary type.
func holdsDictionary(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return true
	case arrow.ExtensionType:
		return holdsDictionary(t.StorageType())
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if holdsDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}

// newFileDictionaries returns the gatherer of the batches of schema, whose unified
// dictionaries may take at most maxBytes, allocating from mem what it releases (remapped
// indices, the batches read back) and from Go's allocator the unified dictionaries; its
// temporary stream is in os.TempDir.
func newFileDictionaries(schema *arrow.Schema, mem memory.Allocator, maxBytes int64) (*fileDictionaries, error) {
	f := &fileDictionaries{schema: schema, mem: mem, max: maxBytes}
	spoolFields := make([]arrow.Field, schema.NumFields())
	for i, field := range schema.Fields() {
		spoolFields[i] = field
		d, ok := field.Type.(*arrow.DictionaryType)
		if !ok {
			continue
		}
		if _, ok := d.IndexType.(arrow.FixedWidthDataType); !ok || !arrow.IsInteger(d.IndexType.ID()) {
			f.close()
			return nil, fmt.Errorf("column %s: dictionary indices of %v: %w", field.Name, d.IndexType, ndarray.ErrDType)
		}
		// Go's memory, whatever mem is: arrow-go's file writer keeps the last dictionary it
		// wrote of each column, and never releases it.
		u, err := array.NewDictionaryUnifier(memory.DefaultAllocator, d.ValueType)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("column %s: a dictionary of %v: %w", field.Name, d.ValueType, err)
		}
		f.columns = append(f.columns, &unifiedColumn{index: i, typ: d, unifier: u})
		spoolFields[i].Type = d.IndexType
	}
	spool, err := os.CreateTemp("", "ndarrow-dictionaries-*.arrows")
	if err != nil {
		f.close()
		return nil, fmt.Errorf("an Arrow IPC file of batches of other dictionaries: its temporary file: %w", err)
	}
	f.spool = spool
	name := spool.Name()
	removed := os.Remove(name) == nil // where the platform allows, gone at once: the descriptor holds it
	f.release = func() {
		spool.Close()
		if !removed {
			os.Remove(name)
		}
	}
	md := schema.Metadata()
	f.spooled = arrow.NewSchema(spoolFields, &md)
	f.stream = arrowipc.NewWriter(spool, arrowipc.WithSchema(f.spooled), arrowipc.WithAllocator(mem))
	return f, nil
}

// add unifies the dictionaries of rec, of the gatherer's schema, and keeps its batch remapped.
func (f *fileDictionaries) add(rec arrow.Record) error {
	cols := rec.Columns()
	out := make([]arrow.Array, len(cols))
	copy(out, cols)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, c := range f.columns {
		arr, ok := cols[c.index].(*array.Dictionary)
		if !ok {
			return fmt.Errorf("column %s: %v, not a dictionary: %w", f.schema.Field(c.index).Name, cols[c.index].DataType(), ndarray.ErrDType)
		}
		indices, err := f.remap(c, arr)
		if err != nil {
			return fmt.Errorf("column %s: %w", f.schema.Field(c.index).Name, err)
		}
		made = append(made, indices)
		out[c.index] = indices
	}
	spooled := array.NewRecord(f.spooled, out, rec.NumRows())
	defer spooled.Release()
	if err := f.stream.Write(spooled); err != nil {
		return fmt.Errorf("an Arrow IPC file of batches of other dictionaries: its temporary file: %w", err)
	}
	return nil
}

// remap unifies the dictionary of arr into c's and returns arr's indices into the unified
// one, of c's index type. A dictionary equal to the last batch's is not unified again.
func (f *fileDictionaries) remap(c *unifiedColumn, arr *array.Dictionary) (arrow.Array, error) {
	dict := arr.Dictionary()
	if c.last == nil || c.last.Data() != dict.Data() && !array.Equal(c.last, dict) {
		bytes, err := byteSpan(dict, 0, int64(dict.Len()))
		if err != nil {
			return nil, err
		}
		// The unified dictionary holds at most every batch's values: what the memo of them
		// and the dictionary made of it take, with an index entry each.
		need := 2*bytes + int64(dict.Len())*unifiedEntry
		if f.held+need > f.max {
			return nil, fmt.Errorf("unifying the dictionaries of the batches of an Arrow IPC file takes more than MaxCopySize %d bytes: %w", f.max, limits.ErrExceeded)
		}
		f.held += need
		transposed, err := c.unifier.UnifyAndTranspose(dict)
		if err != nil {
			return nil, err
		}
		c.mapping = append(c.mapping[:0], arrow.Int32Traits.CastFromBytes(transposed.Bytes())[:dict.Len()]...)
		transposed.Release()
		for _, k := range c.mapping {
			c.size = max(c.size, int64(k)+1)
		}
		if c.size-1 > maxIndex(c.typ.IndexType) {
			return nil, fmt.Errorf("the batches' dictionaries hold %d values together, more than its %v indices reach, and an Arrow IPC file holds one dictionary a column (write .arrows, whose batches may replace theirs): %w",
				c.size, c.typ.IndexType, ndarray.ErrDType)
		}
		if c.last != nil {
			c.last.Release()
		}
		dict.Retain()
		c.last = dict
	}
	indices := make([]int64, arr.Len())
	var valid []bool
	if arr.NullN() > 0 {
		valid = make([]bool, arr.Len())
	}
	for i := range indices {
		if arr.IsNull(i) {
			continue
		}
		if valid != nil {
			valid[i] = true
		}
		k := arr.GetValueIndex(i)
		if k < 0 || k >= len(c.mapping) {
			return nil, fmt.Errorf("row %d: index %d outside its dictionary of %d values: %w", i, k, len(c.mapping), arrow.ErrInvalid)
		}
		indices[i] = int64(c.mapping[k])
	}
	return indexArray(f.mem, c.typ.IndexType, indices, valid)
}

// writeFile writes the file of the batches gathered to w: the schema, each column's unified
// dictionary once, every batch. It releases what the gatherer holds.
func (f *fileDictionaries) writeFile(w io.WriteSeeker) error {
	defer f.close()
	if err := f.stream.Close(); err != nil {
		return fmt.Errorf("an Arrow IPC file of batches of other dictionaries: its temporary file: %w", err)
	}
	f.stream = nil
	dicts := make([]arrow.Array, len(f.columns))
	defer func() {
		for _, d := range dicts {
			if d != nil {
				d.Release()
			}
		}
	}()
	for i, c := range f.columns {
		d, err := c.unifier.GetResultWithIndexType(c.typ.IndexType)
		if err != nil {
			return fmt.Errorf("column %s: %w", f.schema.Field(c.index).Name, err)
		}
		dicts[i] = d
	}
	if _, err := f.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r, err := arrowipc.NewReader(f.spool, arrowipc.WithAllocator(f.mem))
	if err != nil {
		return fmt.Errorf("an Arrow IPC file of batches of other dictionaries: its temporary file: %w", err)
	}
	defer r.Release()
	fw, err := arrowipc.NewFileWriter(w, arrowipc.WithSchema(f.schema), arrowipc.WithAllocator(f.mem))
	if err != nil {
		return err
	}
	for r.Next() {
		spooled := r.Record()
		cols := make([]arrow.Array, spooled.NumCols())
		copy(cols, spooled.Columns())
		var made []arrow.Array
		for i, c := range f.columns {
			d := array.NewDictionaryArray(c.typ, cols[c.index], dicts[i])
			made = append(made, d)
			cols[c.index] = d
		}
		rec := array.NewRecord(f.schema, cols, spooled.NumRows())
		err := fw.Write(rec)
		rec.Release()
		for _, a := range made {
			a.Release()
		}
		if err != nil {
			return f.explain(err)
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("an Arrow IPC file of batches of other dictionaries: its temporary file: %w", err)
	}
	return f.explain(fw.Close())
}

// explain adds to arrow-go's refusal of a dictionary that changes which column it may be: one
// inside a list or struct, which the gatherer does not unify.
func (f *fileDictionaries) explain(err error) error { return explainNested(err, f.schema) }

// explainNested adds to an error of arrow-go's file writer the columns of schema whose
// dictionaries are inside lists or structs, which are not unified: when one changes from batch
// to batch, the file cannot hold it.
func explainNested(err error, schema *arrow.Schema) error {
	if err == nil {
		return nil
	}
	var nested []string
	for _, field := range schema.Fields() {
		if field.Type.ID() != arrow.DICTIONARY && holdsDictionary(field.Type) {
			nested = append(nested, field.Name)
		}
	}
	if len(nested) == 0 {
		return err
	}
	return fmt.Errorf("%w (the dictionaries inside lists or structs of %v are not unified, and an Arrow IPC file holds one dictionary a column: write .arrows, whose batches may replace theirs)", err, nested)
}

// close releases what the gatherer holds; its temporary file goes.
func (f *fileDictionaries) close() {
	if f.stream != nil {
		_ = f.stream.Close()
		f.stream = nil
	}
	for _, c := range f.columns {
		c.unifier.Release()
		if c.last != nil {
			c.last.Release()
			c.last = nil
		}
	}
	f.columns = nil
	if f.release != nil {
		f.release()
		f.release = nil
	}
}
