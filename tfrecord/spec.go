package tfrecord

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
)

// Feature declares one feature of a tf.train.Example to parse, as TensorFlow's feature specs
// do: tf.io.FixedLenFeature(Shape, DType, default_value=Default) when Ragged is false,
// tf.io.RaggedFeature(DType) (or VarLenFeature) when it is set.
type Feature struct {
	Name string
	// DType is int64 (int64_list), float32 (float_list) or string (bytes_list); a feature
	// whose list kind differs is an error, as in TensorFlow.
	DType ndarray.DType
	// Shape is each row's shape for a fixed-length feature: () for one value, (2, 3) for six
	// values read row-major.
	Shape ndarray.Shape
	// Default, for a fixed-length feature, fills the rows of records without the feature (or
	// with an empty list): a *ndarray.Dense of DType holding one value or Shape's size. nil
	// makes such a record an error.
	Default ndarray.Array
	// Ragged makes the feature a ragged column [records, -1]: rows of any length.
	Ragged bool
}

// ErrSpec reports a feature spec that is not one (a dtype an Example cannot hold, a default
// of the wrong size, a JSON spec that does not parse) and records that do not fit one (a
// missing feature without default, a row of another length, a list kind other than the
// declared dtype).
var ErrSpec = errors.New("tfrecord: feature spec")

// ParseExamples decodes records of tf.train.Example as tf.io.parse_example does with spec:
// one column per feature, in spec order, named as the spec names them; a fixed-length feature
// a Dense of shape [records, Shape...] (every record holding exactly Shape's size of values,
// or none and the Default), a ragged one a Ragged [records, -1] (a SequenceExample's feature
// list [records, -1, -1]). Features the spec does not name are left out. The columns are
// copies; records may be released.
func ParseExamples(records [][]byte, spec []Feature, lim limits.Limits) ([]Column, error) {
	all, err := DecodeExamples(records, lim)
	if err != nil {
		return nil, err
	}
	return ParseColumns(all, len(records), spec, lim)
}

// ParseColumns is ParseExamples of the columns DecodeExamples gave of records records, for a
// caller that also wants what the spec leaves out. A fixed-length column of more than
// lim.MaxElements values, or of more than lim.MaxCopySize bytes, defaults filled in, is an
// error wrapping limits.ErrExceeded.
func ParseColumns(all []Column, records int, spec []Feature, lim limits.Limits) ([]Column, error) {
	lim = lim.WithDefaults()
	byName := make(map[string]Column, len(all))
	for _, c := range all {
		byName[c.Name] = c
	}
	out := make([]Column, len(spec))
	for i, f := range spec {
		c, err := parseFeature(f, byName[f.Name], records, lim)
		if err != nil {
			return nil, fmt.Errorf("tfrecord: feature %q: %w", f.Name, err)
		}
		out[i] = c
	}
	return out, nil
}

// parseFeature makes the column of f from the decoded column c (zero when no record has it),
// within lim.
func parseFeature(f Feature, c Column, records int, lim limits.Limits) (Column, error) {
	switch f.DType {
	case ndarray.Int64:
		return parseTyped[int64](f, c, records, lim)
	case ndarray.Float32:
		return parseTyped[float32](f, c, records, lim)
	case ndarray.String:
		return parseTyped[string](f, c, records, lim)
	}
	return Column{}, fmt.Errorf("dtype %v: an Example holds int64, float32 or string: %w", f.DType, ErrSpec)
}

// parseTyped is parseFeature for values of T.
func parseTyped[T int64 | float32 | string](f Feature, c Column, records int, lim limits.Limits) (Column, error) {
	values, splits, err := flatRows[T](c, records)
	if err != nil {
		return Column{}, err
	}
	if f.Ragged {
		if c.Ragged != nil && c.Ragged.RaggedRank() > 1 {
			return Column{Name: f.Name, Ragged: c.Ragged}, nil // a feature list, as it is
		}
		r, err := ragged.FromRowSplits(values, splits)
		if err != nil {
			return Column{}, err
		}
		return Column{Name: f.Name, Ragged: r}, nil
	}
	if c.Ragged != nil && c.Ragged.RaggedRank() > 1 {
		return Column{}, fmt.Errorf("a feature list is no fixed-length feature: %w", ErrSpec)
	}
	if err := f.Shape.Validate(); err != nil {
		return Column{}, err
	}
	size := f.Shape.Size()
	var fill []T
	if f.Default != nil {
		d, ok := f.Default.(*ndarray.Dense[T])
		if !ok || (d.Size() != 1 && d.Size() != size) {
			return Column{}, fmt.Errorf("a default of %v %v for rows of %v %v: %w", f.Default.DType(), f.Default.Shape(), f.DType, f.Shape, ErrSpec)
		}
		fill = d.Ravel()
	}
	var zero T
	maxValues := min(lim.MaxElements, lim.MaxCopySize/int64(unsafe.Sizeof(zero)))
	if size > 0 && int64(records) > maxValues/size {
		return Column{}, fmt.Errorf("%d records of rows of shape %v: more than %d values: %w", records, f.Shape, maxValues, limits.ErrExceeded)
	}
	total := int64(records) * size
	out := make([]T, 0, total)
	for r := range records {
		n := splits[r+1] - splits[r]
		switch {
		case n == size:
			out = append(out, values[splits[r]:splits[r+1]]...)
		case n == 0 && fill != nil:
			for k := range size {
				out = append(out, fill[min(k, int64(len(fill))-1)])
			}
		case n == 0:
			return Column{}, fmt.Errorf("record %d has no value and the spec no default: %w", r, ErrSpec)
		default:
			return Column{}, fmt.Errorf("record %d has %d values, rows of shape %v have %d: %w", r, n, f.Shape, size, ErrSpec)
		}
	}
	d, err := ndarray.FromSlice(out, append(ndarray.Shape{int64(records)}, f.Shape...)...)
	if err != nil {
		return Column{}, err
	}
	return Column{Name: f.Name, Dense: d}, nil
}

// flatRows returns the values of a decoded column of T and where each record's start, from
// its Dense [records] (one value each), [records, n] or Ragged [records, -1]; a column no
// record has is empty rows.
func flatRows[T int64 | float32 | string](c Column, records int) ([]T, []int64, error) {
	switch {
	case c.Dense != nil:
		d, ok := c.Dense.(*ndarray.Dense[T])
		if !ok {
			return nil, nil, fmt.Errorf("the records hold %v values, the spec says %v: %w", c.Dense.DType(), ndarray.DTypeOf[T](), ErrSpec)
		}
		n := d.Shape()[1:].Size() // 1 for [records]
		splits := make([]int64, records+1)
		for r := range splits {
			splits[r] = int64(r) * n
		}
		return d.Ravel(), splits, nil
	case c.Ragged != nil:
		r, ok := c.Ragged.(*ragged.Array[T])
		if !ok {
			if c.Ragged.NumValues() == 0 {
				return nil, make([]int64, records+1), nil // no values: no kind to disagree
			}
			return nil, nil, fmt.Errorf("the records hold %v values, the spec says %v: %w", c.Ragged.DType(), ndarray.DTypeOf[T](), ErrSpec)
		}
		if r.RaggedRank() > 1 {
			return r.FlatValues(), nil, nil
		}
		return r.FlatValues(), r.RowSplits()[0], nil
	}
	return nil, make([]int64, records+1), nil
}
