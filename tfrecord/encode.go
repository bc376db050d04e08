package tfrecord

import (
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// ExampleEncoder turns the rows of a table of columns into serialized tf.train.Examples.
type ExampleEncoder struct {
	rows    int64
	sources []rowSource
	example *tfpb.Example
	buf     []byte
}

// rowSource fills the features of one column for one row.
type rowSource interface {
	fill(row int64) error
}

// NewExampleEncoder returns an encoder of the rows of cols, which must all have the same
// number of rows and give distinct feature names. Integers become int64_list (a uint64 above
// 2^63-1 is an error when its row is encoded), float16, float32 and float64 float_list (float64
// rounded to the nearest float32), strings bytes_list, bool int64_list of 0 and 1.
func NewExampleEncoder(cols []Column) (*ExampleEncoder, error) {
	e := &ExampleEncoder{rows: -1, example: &tfpb.Example{Features: &tfpb.Features{Feature: map[string]*tfpb.Feature{}}}}
	features := e.example.Features.Feature
	feature := func(name string) (*tfpb.Feature, error) {
		if _, dup := features[name]; dup {
			return nil, fmt.Errorf("tfrecord: feature %q named twice", name)
		}
		f := &tfpb.Feature{}
		features[name] = f
		return f, nil
	}
	for _, c := range cols {
		if err := c.check(); err != nil {
			return nil, err
		}
		switch rows := c.Rows(); {
		case e.rows < 0:
			e.rows = rows
		case rows != e.rows:
			return nil, fmt.Errorf("tfrecord: column %q has %d rows, column %q %d: one Example per row needs equal row counts", c.Name, rows, cols[0].Name, e.rows)
		}
		newSource, ok := encoders[c.DType()]
		if !ok {
			return nil, fmt.Errorf("tfrecord: column %q: dtype %v: %w", c.Name, c.DType(), ErrUnsupported)
		}
		src, err := newSource(c, feature)
		if err != nil {
			return nil, err
		}
		e.sources = append(e.sources, src)
	}
	e.rows = max(e.rows, 0)
	return e, nil
}

// Rows returns the number of Examples the encoder makes.
func (e *ExampleEncoder) Rows() int64 { return e.rows }

// Example returns the Example of row i, reusing one message (and views of the columns'
// float32 and int64 values) from call to call: it is valid until the next call.
func (e *ExampleEncoder) Example(i int64) (*tfpb.Example, error) {
	if i < 0 || i >= e.rows {
		return nil, fmt.Errorf("tfrecord: row %d of %d", i, e.rows)
	}
	for _, s := range e.sources {
		if err := s.fill(i); err != nil {
			return nil, err
		}
	}
	return e.example, nil
}

// Encode returns row i serialized, in a buffer reused from call to call (map keys sorted,
// so the bytes are the same on every run).
func (e *ExampleEncoder) Encode(i int64) ([]byte, error) {
	ex, err := e.Example(i)
	if err != nil {
		return nil, err
	}
	e.buf, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(e.buf[:0], ex)
	if err != nil {
		return nil, fmt.Errorf("tfrecord: row %d: %w", i, err)
	}
	return e.buf, nil
}

// WriteExamples writes one Example per row of cols to w (see NewExampleEncoder) and returns
// the number written.
func WriteExamples(w *Writer, cols []Column) (int64, error) {
	e, err := NewExampleEncoder(cols)
	if err != nil {
		return 0, err
	}
	for i := range e.rows {
		b, err := e.Encode(i)
		if err != nil {
			return i, err
		}
		if err := w.WriteRecord(b); err != nil {
			return i, err
		}
	}
	return e.rows, nil
}

// encoders is the one table of per-dtype row sources.
var encoders = map[ndarray.DType]func(Column, func(string) (*tfpb.Feature, error)) (rowSource, error){
	ndarray.Int8: newSource[int8], ndarray.Int16: newSource[int16], ndarray.Int32: newSource[int32],
	ndarray.Int64: newSource[int64], ndarray.Uint8: newSource[uint8], ndarray.Uint16: newSource[uint16],
	ndarray.Uint32: newSource[uint32], ndarray.Uint64: newSource[uint64], ndarray.Float16: newSource[float16.Num],
	ndarray.Float32: newSource[float32], ndarray.Float64: newSource[float64], ndarray.Bool: newSource[bool],
	ndarray.String: newSource[string],
}

// newSource returns the row source of a column of element type T.
func newSource[T ndarray.Element](c Column, feature func(string) (*tfpb.Feature, error)) (rowSource, error) {
	switch {
	case c.Dense != nil:
		d, ok := c.Dense.(*ndarray.Dense[T])
		if !ok {
			return nil, fmt.Errorf("tfrecord: column %q: %T is not a dense array", c.Name, c.Dense)
		}
		f, err := feature(c.Name)
		if err != nil {
			return nil, err
		}
		flat := d.Ravel()
		width := int64(0)
		if rows := d.Shape()[0]; rows > 0 {
			width = int64(len(flat)) / rows
		}
		return &denseSource[T]{list: newList[T](f), flat: flat, width: width}, nil
	case c.Ragged != nil:
		r, ok := c.Ragged.(*ragged.Array[T])
		if !ok {
			return nil, fmt.Errorf("tfrecord: column %q: %T is not a ragged array", c.Name, c.Ragged)
		}
		f, err := feature(c.Name)
		if err != nil {
			return nil, err
		}
		return &raggedSource[T]{list: newList[T](f), r: r}, nil
	}
	a, err := c.Sparse.Convert(sparse.FormatCOO)
	if err != nil {
		return nil, fmt.Errorf("tfrecord: column %q: %w", c.Name, err)
	}
	coo, ok := a.(*sparse.COO[T])
	if !ok {
		return nil, fmt.Errorf("tfrecord: column %q: %T is not a sparse array", c.Name, c.Sparse)
	}
	tf := coo.TFSparse()
	s := &sparseSource[T]{tf: tf, rank: len(tf.DenseShape)}
	if s.values, err = feature(c.Name + "/values"); err != nil {
		return nil, err
	}
	for k := 1; k < s.rank; k++ {
		f, err := feature(fmt.Sprintf("%s/index/%d", c.Name, k))
		if err != nil {
			return nil, err
		}
		s.index = append(s.index, f)
	}
	s.list = newList[T](s.values)
	return s, nil
}

// denseSource gives row i as width elements of a row-major flat slice.
type denseSource[T ndarray.Element] struct {
	list  *valueList[T]
	flat  []T
	width int64
}

func (s *denseSource[T]) fill(i int64) error {
	return s.list.set(s.flat[i*s.width : (i+1)*s.width])
}

// raggedSource gives row i as its flat values.
type raggedSource[T ndarray.Element] struct {
	list *valueList[T]
	r    *ragged.Array[T]
}

func (s *raggedSource[T]) fill(i int64) error { return s.list.set(s.r.RowValues(i)) }

// sparseSource gives row i as the entries of a canonical COO whose first coordinate is i.
type sparseSource[T ndarray.Element] struct {
	tf     sparse.TFSparse[T]
	rank   int
	next   int // the first entry not yet given
	values *tfpb.Feature
	index  []*tfpb.Feature
	list   *valueList[T]
	coords [][]int64
}

func (s *sparseSource[T]) fill(i int64) error {
	n := len(s.tf.Values)
	// Rows asked for in order (as WriteExamples asks) continue where the last one ended.
	if inOrder := (s.next == n || s.tf.Indices[s.next*s.rank] >= i) &&
		(s.next == 0 || s.tf.Indices[(s.next-1)*s.rank] < i); !inOrder {
		s.next = s.firstOf(i)
	}
	end := s.next
	for end < n && s.tf.Indices[end*s.rank] == i {
		end++
	}
	if s.coords == nil {
		s.coords = make([][]int64, s.rank-1)
	}
	for k := range s.index {
		c := s.coords[k][:0]
		for e := s.next; e < end; e++ {
			c = append(c, s.tf.Indices[e*s.rank+1+k])
		}
		s.coords[k] = c
		s.index[k].Kind = &tfpb.Feature_Int64List{Int64List: &tfpb.Int64List{Value: c}}
	}
	err := s.list.set(s.tf.Values[s.next:end])
	s.next = end
	return err
}

// firstOf returns the first entry whose first coordinate is at least i (entries are sorted).
func (s *sparseSource[T]) firstOf(i int64) int {
	lo, hi := 0, len(s.tf.Values)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.tf.Indices[m*s.rank] < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// valueList sets one feature to a row's values, converted to the list kind of T, reusing its
// buffers from row to row.
type valueList[T ndarray.Element] struct {
	ints   *tfpb.Int64List
	floats *tfpb.FloatList
	bytes  *tfpb.BytesList
}

// FeatureDType returns the dtype a feature written from values of dtype d reads back as: the
// dtype of its list kind — float32 for floats (float_list), string for strings (bytes_list),
// int64 for integers and bools (int64_list).
func FeatureDType(d ndarray.DType) ndarray.DType {
	switch d.Family() {
	case ndarray.FamilyFloat:
		return ndarray.Float32
	case ndarray.FamilyString:
		return ndarray.String
	}
	return ndarray.Int64
}

// newList gives f the list kind of T and returns the setter of its values.
func newList[T ndarray.Element](f *tfpb.Feature) *valueList[T] {
	l := &valueList[T]{}
	switch FeatureDType(ndarray.DTypeOf[T]()) {
	case ndarray.Float32:
		l.floats = &tfpb.FloatList{}
		f.Kind = &tfpb.Feature_FloatList{FloatList: l.floats}
	case ndarray.String:
		l.bytes = &tfpb.BytesList{}
		f.Kind = &tfpb.Feature_BytesList{BytesList: l.bytes}
	default:
		l.ints = &tfpb.Int64List{}
		f.Kind = &tfpb.Feature_Int64List{Int64List: l.ints}
	}
	return l
}

// set makes the feature hold v: a view of v for float32 and int64, a converted copy into the
// list's own buffer otherwise.
func (l *valueList[T]) set(v []T) error {
	switch v := any(v).(type) {
	case []float32:
		l.floats.Value = v
	case []int64:
		l.ints.Value = v
	case []float64:
		l.floats.Value = convertInto(l.floats.Value, v, func(x float64) float32 { return float32(x) })
	case []float16.Num:
		l.floats.Value = convertInto(l.floats.Value, v, func(x float16.Num) float32 { return float32(ndarray.HalfToFloat64(x)) })
	case []int8:
		l.ints.Value = convertInto(l.ints.Value, v, func(x int8) int64 { return int64(x) })
	case []int16:
		l.ints.Value = convertInto(l.ints.Value, v, func(x int16) int64 { return int64(x) })
	case []int32:
		l.ints.Value = convertInto(l.ints.Value, v, func(x int32) int64 { return int64(x) })
	case []uint8:
		l.ints.Value = convertInto(l.ints.Value, v, func(x uint8) int64 { return int64(x) })
	case []uint16:
		l.ints.Value = convertInto(l.ints.Value, v, func(x uint16) int64 { return int64(x) })
	case []uint32:
		l.ints.Value = convertInto(l.ints.Value, v, func(x uint32) int64 { return int64(x) })
	case []uint64:
		for _, x := range v {
			if x > math.MaxInt64 {
				return fmt.Errorf("tfrecord: uint64 value %d does not fit an int64_list", x)
			}
		}
		l.ints.Value = convertInto(l.ints.Value, v, func(x uint64) int64 { return int64(x) })
	case []bool:
		l.ints.Value = convertInto(l.ints.Value, v, func(x bool) int64 {
			if x {
				return 1
			}
			return 0
		})
	case []string:
		l.bytes.Value = l.bytes.Value[:0]
		for _, s := range v {
			l.bytes.Value = append(l.bytes.Value, []byte(s))
		}
	}
	return nil
}

// convertInto converts src into dst's memory (grown when short) and returns it.
func convertInto[S, D any](dst []D, src []S, f func(S) D) []D {
	dst = slices.Grow(dst[:0], len(src))[:len(src)]
	for i, x := range src {
		dst[i] = f(x)
	}
	return dst
}
