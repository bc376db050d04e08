package tfrecord

import (
	"fmt"
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// RecordType is the message type the records of a file hold, as Classify tells it.
type RecordType int

// The record types ndarrow tells apart.
const (
	TypeUnknown         RecordType = iota // none ndarrow maps: raw bytes, tensorflow.Event, …
	TypeExample                           // tf.train.Example
	TypeSequenceExample                   // tf.train.SequenceExample with feature lists
	TypeTensorProto                       // tensorflow.TensorProto
)

// String returns the message type's name.
func (t RecordType) String() string {
	switch t {
	case TypeExample:
		return "tf.train.Example"
	case TypeSequenceExample:
		return "tf.train.SequenceExample"
	case TypeTensorProto:
		return "tensorflow.TensorProto"
	}
	return "unknown"
}

// Classify tells what message type a record holds. Protocol buffer bytes do not name their
// type, so it decides as a person would: a record is an Example (or, with feature lists, a
// SequenceExample) when it parses as one with no field the message does not declare, no field
// of the wrong wire type, and feature names that are non-empty printable UTF-8 text; else a
// TensorProto when it parses as one likewise, with a known dtype and a shape of known rank and
// sizes; else TypeUnknown. An empty record is an (empty) Example.
func Classify(record []byte) RecordType {
	var se tfpb.SequenceExample
	if proto.Unmarshal(record, &se) == nil && checkSequenceExample(&se) == nil && printableNames(&se) {
		if se.FeatureLists != nil {
			return TypeSequenceExample
		}
		return TypeExample
	}
	var tp tfpb.TensorProto
	if proto.Unmarshal(record, &tp) == nil && checkTensorProto(&tp) == nil {
		return TypeTensorProto
	}
	return TypeUnknown
}

// ClassifyFile tells the record type of a file by its first non-empty record (TypeExample when
// every record is empty, TypeUnknown when there are none).
func ClassifyFile(records [][]byte) RecordType {
	if len(records) == 0 {
		return TypeUnknown
	}
	for _, r := range records {
		if len(r) > 0 {
			return Classify(r)
		}
	}
	return TypeExample
}

// printableNames reports whether every feature and feature-list name is printable text.
func printableNames(se *tfpb.SequenceExample) bool {
	for name := range se.GetContext().GetFeature() {
		if !printable(name) {
			return false
		}
	}
	for name := range se.GetFeatureLists().GetFeatureList() {
		if !printable(name) {
			return false
		}
	}
	return true
}

// printable reports whether s is non-empty UTF-8 of printable characters and spaces.
func printable(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// checkSequenceExample returns an error when any message of se holds a field it does not
// declare, or a declared field with the wrong wire type (protobuf keeps both as unknown).
func checkSequenceExample(se *tfpb.SequenceExample) error {
	if unknown(se) || unknown(se.Context) || unknown(se.FeatureLists) {
		return errUnknownFields
	}
	for _, f := range se.GetContext().GetFeature() {
		if err := checkFeature(f); err != nil {
			return err
		}
	}
	for _, l := range se.GetFeatureLists().GetFeatureList() {
		if unknown(l) {
			return errUnknownFields
		}
		for _, f := range l.GetFeature() {
			if err := checkFeature(f); err != nil {
				return err
			}
		}
	}
	return nil
}

var errUnknownFields = fmt.Errorf("fields an Example does not declare, or of the wrong wire type: %w", ErrInvalid)

func checkFeature(f *tfpb.Feature) error {
	if f == nil {
		return nil
	}
	if unknown(f) || unknown(f.GetBytesList()) || unknown(f.GetFloatList()) || unknown(f.GetInt64List()) {
		return errUnknownFields
	}
	return nil
}

// unknown reports whether m (nil allowed) parsed with unknown fields.
func unknown(m proto.Message) bool {
	if m == nil {
		return false
	}
	r := m.ProtoReflect()
	return r.IsValid() && len(r.GetUnknown()) > 0
}

// listKind is the kind of a Feature's list.
type listKind uint8

const (
	kindNone listKind = iota
	kindBytes
	kindFloat
	kindInt64
)

func (k listKind) String() string {
	return [...]string{"no list", "bytes_list", "float_list", "int64_list"}[k]
}

func kindOf(f *tfpb.Feature) listKind {
	switch f.GetKind().(type) {
	case *tfpb.Feature_BytesList:
		return kindBytes
	case *tfpb.Feature_FloatList:
		return kindFloat
	case *tfpb.Feature_Int64List:
		return kindInt64
	}
	return kindNone
}

// accumulator gathers one feature's values over the records.
type accumulator struct {
	name  string
	list  bool // a SequenceExample feature list
	kind  listKind
	since int // the record the kind was first seen in
	// The values, as the slices protobuf decoded (kept, not copied, until column joins them
	// once: appending to one slice would copy them again at every doubling).
	ints   [][]int64
	floats [][]float32
	strs   []string
	n      int64   // values so far
	splits []int64 // records → values (or → steps for a feature list)
	steps  []int64 // a feature list's steps → values
}

func (a *accumulator) values() int64 { return a.n }

// add appends the values of f, found in record r.
func (a *accumulator) add(f *tfpb.Feature, r int) error {
	k := kindOf(f)
	switch {
	case k == kindNone:
		return nil
	case a.kind == kindNone:
		a.kind, a.since = k, r
	case a.kind != k:
		return fmt.Errorf("tfrecord: record %d: feature %q is a %v, in record %d a %v: %w", r, a.name, k, a.since, a.kind, ErrInvalid)
	}
	switch k {
	case kindBytes:
		for _, b := range f.GetBytesList().GetValue() {
			a.strs = append(a.strs, string(b))
		}
		a.n += int64(len(f.GetBytesList().GetValue()))
	case kindFloat:
		if v := f.GetFloatList().GetValue(); len(v) > 0 {
			a.floats = append(a.floats, v)
			a.n += int64(len(v))
		}
	case kindInt64:
		if v := f.GetInt64List().GetValue(); len(v) > 0 {
			a.ints = append(a.ints, v)
			a.n += int64(len(v))
		}
	}
	return nil
}

// table gathers the features of a sequence of Examples or SequenceExamples.
type table struct {
	lim      limits.Limits
	records  int
	features map[string]*accumulator
	splits   int64 // row splits held by all accumulators
}

// accumulator returns the accumulator of a feature (or feature list), made with empty rows for
// the records before this one.
func (t *table) accumulator(name string, list bool) (*accumulator, error) {
	a, ok := t.features[name]
	if ok {
		if a.list != list {
			return nil, fmt.Errorf("tfrecord: record %d: %q names both a context feature and a feature list: %w", t.records, name, ErrUnsupported)
		}
		return a, nil
	}
	// Every feature holds a row split per record: features × records must stay bounded, or
	// many records of distinct names would make a quadratic table.
	if need := (int64(len(t.features)) + 1) * int64(t.records+1); need > t.lim.MaxDenseElements {
		return nil, fmt.Errorf("tfrecord: record %d: %d features over %d records need %d row splits, more than the limit of %d: %w",
			t.records, len(t.features)+1, t.records+1, need, t.lim.MaxDenseElements, limits.ErrExceeded)
	}
	a = &accumulator{name: name, list: list, splits: make([]int64, t.records+1)}
	if list {
		a.steps = []int64{0}
	}
	t.features[name] = a
	return a, nil
}

// DecodeExamples decodes records of tf.train.Example or tf.train.SequenceExample into one
// column per feature, sorted by name, as tf.io.parse_example would with every feature
// declared: a feature whose every record holds exactly one value is a Dense [records] (a
// label, a score, an id: FixedLenFeature([], dtype)); one whose every record holds the same
// number n ≠ 1 of values a Dense [records, n] (FixedLenFeature([n], dtype)); any other a
// Ragged [records, -1] (a record without the feature is an empty row); a SequenceExample's
// feature list a Ragged [records, -1, -1] (records → steps → values). An Example records no
// shape: a spec (ParseExamples) gives a feature the shape [records, 1] or any other. int64_list gives int64, float_list float32, bytes_list strings; a feature no record
// gives a list kind is float32. The columns are copies; records may be released.
func DecodeExamples(records [][]byte, lim limits.Limits) ([]Column, error) {
	t := &table{lim: lim.WithDefaults(), features: map[string]*accumulator{}}
	var se tfpb.SequenceExample
	for r, rec := range records {
		t.records = r
		if err := proto.Unmarshal(rec, &se); err != nil {
			return nil, fmt.Errorf("tfrecord: record %d: not an Example: %v: %w", r, err, ErrInvalid)
		}
		if err := checkSequenceExample(&se); err != nil {
			return nil, fmt.Errorf("tfrecord: record %d: %w", r, err)
		}
		if err := t.add(&se); err != nil {
			return nil, err
		}
		for _, a := range t.features {
			if len(a.splits) == r+1 { // absent from this record: an empty row
				a.splits = append(a.splits, a.splits[r])
			}
		}
	}
	return t.columns(len(records))
}

// add appends the features of one record.
func (t *table) add(se *tfpb.SequenceExample) error {
	r := t.records
	for name, f := range se.GetContext().GetFeature() {
		a, err := t.accumulator(name, false)
		if err != nil {
			return err
		}
		if err := a.add(f, r); err != nil {
			return err
		}
		a.splits = append(a.splits, a.values())
	}
	for name, l := range se.GetFeatureLists().GetFeatureList() {
		a, err := t.accumulator(name, true)
		if err != nil {
			return err
		}
		for _, f := range l.GetFeature() {
			if err := a.add(f, r); err != nil {
				return err
			}
			a.steps = append(a.steps, a.values())
		}
		a.splits = append(a.splits, int64(len(a.steps)-1))
	}
	return nil
}

// columns turns the accumulators into columns sorted by name.
func (t *table) columns(records int) ([]Column, error) {
	names := make([]string, 0, len(t.features))
	for name := range t.features {
		names = append(names, name)
	}
	sort.Strings(names)
	cols := make([]Column, 0, len(names))
	for _, name := range names {
		c, err := t.features[name].column(records)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func (a *accumulator) column(records int) (Column, error) {
	switch a.kind {
	case kindBytes:
		return column(a, a.strs, records)
	case kindInt64:
		return column(a, slices.Concat(a.ints...), records)
	}
	return column(a, slices.Concat(a.floats...), records)
}

// column makes a feature's Dense or Ragged.
func column[T ndarray.Element](a *accumulator, values []T, records int) (Column, error) {
	if values == nil {
		values = []T{}
	}
	c := Column{Name: a.name}
	var err error
	if a.list {
		c.Ragged, err = ragged.Make(values, nil, ragged.RowSplits(a.splits), ragged.RowSplits(a.steps))
	} else if n, ok := uniform(a.splits); ok && n == 1 {
		c.Dense, err = ndarray.FromSlice(values, int64(records)) // one value a record: [records]
	} else if ok && records > 0 {
		c.Dense, err = ndarray.FromSlice(values, int64(records), n)
	} else {
		c.Ragged, err = ragged.Make(values, nil, ragged.RowSplits(a.splits))
	}
	if err != nil {
		return Column{}, fmt.Errorf("tfrecord: feature %q: %w", a.name, err)
	}
	return c, nil
}

// uniform returns the common row length of row splits, if every row has the same.
func uniform(splits []int64) (int64, bool) {
	if len(splits) < 2 {
		return 0, false
	}
	n := splits[1] - splits[0]
	for i := 2; i < len(splits); i++ {
		if splits[i]-splits[i-1] != n {
			return 0, false
		}
	}
	return n, true
}
