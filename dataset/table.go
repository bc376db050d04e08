package dataset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/ndarray"
)

// Table is the columns of one table — a record-batch file or stream, a Parquet file, the
// Examples of a TFRecord file, a directory's table of parts — as tensors of as many rows, in
// their order, and the columns that have no tensor form, named. The tensors view what their
// File or Dir holds: use them while it is retained.
type Table struct {
	Name    string    // the table's name: a file's base name, a directory table's name
	Rows    int64     // every column's rows
	Columns []Tensor  // in the table's order, each named NAME.COLUMN with its Column
	LeftOut []LeftOut // the columns that have no tensor form
}

// ErrNotTable is returned for tensors that are not the columns of one table: a stream of
// Tensor messages, members of an .npz archive of different row counts.
var ErrNotTable = errors.New("dataset: not the columns of one table")

// TableOf returns tensors, and the columns left out beside them, as the table named name they
// are the columns of: each must name its Column and have as many rows as the first (an error
// wrapping ErrNotTable names the first that does not).
func TableOf(name string, tensors []Tensor, leftOut []LeftOut) (*Table, error) {
	t := &Table{Name: name, Columns: tensors, LeftOut: leftOut}
	for i, c := range tensors {
		switch {
		case c.Column == "":
			return nil, fmt.Errorf("%s: %s is a tensor of its own, not a column: %w", name, c.Name, ErrNotTable)
		case i == 0:
			t.Rows = c.Rows()
		case c.Rows() != t.Rows:
			return nil, fmt.Errorf("%s: column %s has %d rows, %s %d: %w", name, c.Column, c.Rows(), tensors[0].Column, t.Rows, ErrNotTable)
		}
	}
	return t, nil
}

// Table returns the file's tensors as one table (see TableOf), named after the file.
func (f *File) Table() (*Table, error) { return TableOf(BaseName(f.Path), f.Tensors, f.LeftOut) }

// Table returns the tensors of the directory's table named name (its tensors NAME.COLUMN: a
// subdirectory's, or the parts' of a directory that is one table) as one table (see TableOf).
// A table a file of which was left out (SkippedOf) fails with the error of UnreadableParts,
// naming the file: its tensors in d.Tensors hold the other parts' rows only.
func (d *Dir) Table(name string) (*Table, error) {
	if skipped := d.SkippedOf(name); len(skipped) > 0 {
		return nil, UnreadableParts(name, skipped)
	}
	var cols []Tensor
	for _, t := range d.Tensors {
		if strings.HasPrefix(t.Name, name+".") {
			cols = append(cols, t)
		}
	}
	var left []LeftOut
	for _, l := range d.LeftOut {
		if strings.HasPrefix(l.Name, name+".") {
			left = append(left, l)
		}
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%s: no table %s: %w", d.Path, name, ErrNotTable)
	}
	return TableOf(name, cols, left)
}

// Column returns the column named name — its column name, or its full name NAME.COLUMN — or an
// error wrapping ErrNoTensor that lists the columns there are.
func (t *Table) Column(name string) (Tensor, error) {
	for _, c := range t.Columns {
		if c.Column == name || c.Name == name {
			return c, nil
		}
	}
	for _, l := range t.LeftOut {
		if l.Column == name || l.Name == name {
			return Tensor{}, fmt.Errorf("%s: column %s: %s: %w", t.Name, name, l.Why, ErrNoTensor)
		}
	}
	return Tensor{}, fmt.Errorf("%s: no column %s (it has %s): %w", t.Name, name, strings.Join(t.Names(), ", "), ErrNoTensor)
}

// Names returns the names of the table's columns (their Column), in order.
func (t *Table) Names() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Column
	}
	return out
}

// Filled returns t with its null rows (Valid) given value — parsed as t's element type: a
// number (strconv's syntax), true or false, or any string — as a copy without nulls; t itself
// when it has no null row. A value that is not of the element type is an error wrapping
// ndarray.ErrDType.
func (t Tensor) Filled(value string) (Tensor, error) {
	if t.Valid == nil {
		return t, nil
	}
	var d ndarray.Array
	var err error
	switch a := t.Dense.(type) {
	case *ndarray.Dense[int8]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[int16]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[int32]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[int64]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[uint8]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[uint16]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[uint32]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[uint64]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[float16.Num]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[float32]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[float64]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[bool]:
		d, err = filled(a, t.Valid, value)
	case *ndarray.Dense[string]:
		d, err = filled(a, t.Valid, value)
	default:
		return Tensor{}, fmt.Errorf("dataset: %s: null rows in a %s tensor: %w", t.Name, t.ImpliedKind(), ndarray.ErrShape)
	}
	if err != nil {
		return Tensor{}, fmt.Errorf("dataset: %s: filling its %d null rows: %w", t.Name, t.NullCount(), err)
	}
	t.Dense, t.Valid = d, nil
	return t, nil
}

// filled returns a copy of d, of shape [rows], whose rows valid says are null hold value.
func filled[T ndarray.Element](d *ndarray.Dense[T], valid []bool, value string) (*ndarray.Dense[T], error) {
	v, err := parseValue[T](value)
	if err != nil {
		return nil, err
	}
	out := d.Clone()
	values := out.Data()
	for i, ok := range valid {
		if !ok {
			values[i] = v
		}
	}
	return out, nil
}

// parseValue parses s as a value of T.
func parseValue[T ndarray.Element](s string) (T, error) {
	var zero T
	var v any
	var err error
	switch any(zero).(type) {
	case int8, int16, int32, int64:
		var n int64
		n, err = strconv.ParseInt(s, 0, ndarray.DTypeOf[T]().Size()*8)
		v = convertInt[T](n)
	case uint8, uint16, uint32, uint64:
		var n uint64
		n, err = strconv.ParseUint(s, 0, ndarray.DTypeOf[T]().Size()*8)
		v = convertUint[T](n)
	case float16.Num:
		var f float64
		f, err = strconv.ParseFloat(s, 32)
		v = float16.New(float32(f))
	case float32:
		var f float64
		f, err = strconv.ParseFloat(s, 32)
		v = float32(f)
	case float64:
		v, err = strconv.ParseFloat(s, 64)
	case bool:
		v, err = strconv.ParseBool(s)
	case string:
		v = s
	}
	if err != nil {
		return zero, fmt.Errorf("%q is not a %v: %w", s, ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	return v.(T), nil
}

// convertInt returns n, in range for T, as a T.
func convertInt[T ndarray.Element](n int64) any {
	var zero T
	switch any(zero).(type) {
	case int8:
		return int8(n)
	case int16:
		return int16(n)
	case int32:
		return int32(n)
	}
	return n
}

// convertUint returns n, in range for T, as a T.
func convertUint[T ndarray.Element](n uint64) any {
	var zero T
	switch any(zero).(type) {
	case uint8:
		return uint8(n)
	case uint16:
		return uint16(n)
	case uint32:
		return uint32(n)
	}
	return n
}
