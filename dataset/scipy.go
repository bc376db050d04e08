package dataset

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/sparse"
)

// SciPy's sparse .npz: what scipy.sparse.save_npz writes and load_npz reads — an .npz archive
// of the members format (a 0-d bytes array: csr, csc, coo, bsr or dia), shape (two
// integers), data, and indices and indptr (csr, csc) or row and col (coo). ndarrow reads such
// an archive as the one sparse matrix it holds, in its layout, and writes a sparse matrix in
// that layout.

// scipyMembers are the members of each SciPy layout ndarrow reads, as save_npz orders them.
var scipyMembers = map[string][]string{
	"csr": {"indices", "indptr", "format", "shape", "data"},
	"csc": {"indices", "indptr", "format", "shape", "data"},
	"coo": {"row", "col", "format", "shape", "data"},
}

// ErrSciPyFormat is returned for an archive of a scipy.sparse format ndarrow does not read
// (bsr, dia).
var ErrSciPyFormat = sentinel.New("dataset: a scipy.sparse format ndarrow does not read", npy.ErrUnsupported)

// ErrNotMatrix is returned for a sparse tensor of a rank other than 2 written to .npz
// without WriteOptions.Dense: SciPy's layout holds matrices. It matches ndarray.ErrShape.
var ErrNotMatrix = sentinel.New("SciPy's .npz holds matrices (rank 2)", ndarray.ErrShape)

// scipyFormat returns the format of SciPy's an .npz archive's members say they are: its
// format member a 0-d bytes or text array of csr, csc, coo, bsr or dia (what load_npz takes
// for a matrix class), or else "".
func scipyFormat(arrays []npy.NamedArray) string {
	for _, a := range arrays {
		if a.Name != "format" {
			continue
		}
		if a.DType() != ndarray.String || len(a.Shape()) != 0 {
			return ""
		}
		s, err := npy.AsStrings(a.Array)
		if err != nil {
			return ""
		}
		switch f := s.Get(); f {
		case "csr", "csc", "coo", "bsr", "dia":
			return f
		}
	}
	return ""
}

// readSciPy returns the sparse matrix of an archive of SciPy's layout (scipyFormat gave
// format), named base, checked as load_npz checks it and then fully (every pointer and index:
// sparse.MakeCSR, MakeCSC, MakeCOO), and the members that are not of the layout. Its values
// view the archive's where the member is stored aligned.
func readSciPy(arrays []npy.NamedArray, format, base string) (Tensor, []npy.NamedArray, error) {
	fail := func(err error) (Tensor, []npy.NamedArray, error) {
		return Tensor{}, nil, fmt.Errorf("npz: scipy.sparse %s matrix: %w", format, err)
	}
	want, ok := scipyMembers[format]
	if !ok {
		return fail(fmt.Errorf("%w (convert it with .tocsr() before save_npz)", ErrSciPyFormat))
	}
	members := map[string]*npy.Array{}
	var rest []npy.NamedArray
	for _, a := range arrays {
		if slices.Contains(want, a.Name) {
			members[a.Name] = a.Array
		} else {
			rest = append(rest, a)
		}
	}
	for _, m := range want {
		if members[m] == nil {
			return fail(fmt.Errorf("no member %q (it has %v): %w", m, names(arrays), ndarray.ErrShape))
		}
	}
	shape, err := matrixShape(members["shape"])
	if err != nil {
		return fail(err)
	}
	data, err := members["data"].Dense()
	if err != nil {
		return fail(fmt.Errorf("data: %w", err))
	}
	if data.Rank() != 1 {
		return fail(fmt.Errorf("data of shape %v, not a vector: %w", data.Shape(), ndarray.ErrShape))
	}
	first, second := members["indices"], members["indptr"]
	if format == "coo" {
		first, second = members["row"], members["col"]
	}
	a, err := indicesOf(first)
	if err != nil {
		return fail(err)
	}
	b, err := indicesOf(second)
	if err != nil {
		return fail(err)
	}
	ops, err := opsOf(data.DType())
	if err != nil || ops.makeSciPy == nil {
		return fail(fmt.Errorf("data of %v: %w", data.DType(), ndarray.ErrDType))
	}
	m, err := ops.makeSciPy(format, shape, a, b, data)
	if err != nil {
		return fail(err)
	}
	return sparseTensor(base, m, nil), rest, nil
}

// names lists the arrays' names.
func names(arrays []npy.NamedArray) []string {
	out := make([]string, len(arrays))
	for i, a := range arrays {
		out[i] = a.Name
	}
	return out
}

// matrixShape reads the shape member: two non-negative integers.
func matrixShape(a *npy.Array) (ndarray.Shape, error) {
	d, err := a.Dense()
	if err != nil {
		return nil, fmt.Errorf("shape: %w", err)
	}
	var v []int64
	switch s := d.(type) {
	case *ndarray.Dense[int64]:
		v = s.Clone().Data()
	case *ndarray.Dense[int32]:
		for x := range s.Values() {
			v = append(v, int64(x))
		}
	}
	if len(v) != 2 || v[0] < 0 || v[1] < 0 || d.Rank() != 1 {
		return nil, fmt.Errorf("shape %v of %v: two non-negative integers: %w", d.Shape(), a.DType(), ndarray.ErrShape)
	}
	return ndarray.Shape(v), nil
}

// indicesOf reads an index member: a vector of int32 or int64 (SciPy writes either).
func indicesOf(a *npy.Array) (sparse.Indices, error) {
	d, err := a.Dense()
	if err != nil {
		return sparse.Indices{}, err
	}
	if d.Rank() != 1 {
		return sparse.Indices{}, fmt.Errorf("indices of shape %v, not a vector: %w", d.Shape(), ndarray.ErrShape)
	}
	switch s := d.(type) {
	case *ndarray.Dense[int32]:
		return sparse.Int32Indices(s.Clone().Data()), nil
	case *ndarray.Dense[int64]:
		v, ok := s.Contiguous()
		if !ok {
			v = s.Clone().Data()
		}
		return sparse.Int64Indices(v), nil
	}
	return sparse.Indices{}, fmt.Errorf("indices of %v: SciPy's are int32 or int64: %w", d.DType(), ndarray.ErrDType)
}

// makeSciPyOf builds the matrix of format from its parts: for csr and csc a the indices and b
// the pointers, for coo a the rows and b the columns; data is a *ndarray.Dense[T] vector.
// A coordinate stored more than once holds the sum of its values, as it does in SciPy (an
// ndarrow array's later duplicate would win): such a matrix is rebuilt with them summed.
func makeSciPyOf[T ndarray.Element](format string, shape ndarray.Shape, a, b sparse.Indices, data ndarray.Array) (sparse.Array, error) {
	d := data.(*ndarray.Dense[T])
	values, ok := d.Contiguous()
	if !ok {
		values = d.Clone().Data()
	}
	// SciPy's own first checks (load_npz, then the constructor's check_format)
	if format != "coo" && a.Len() != len(values) {
		return nil, fmt.Errorf("indices (%d) and data (%d) should have the same size: %w", a.Len(), len(values), sparse.ErrInvalid)
	}
	if a.DType() != b.DType() { // SciPy takes the wider of the two
		a, b = sparse.Int64Indices(a.AsInt64()), sparse.Int64Indices(b.AsInt64())
	}
	var m sparse.Array
	var err error
	switch format {
	case "csr":
		m, err = sparse.MakeCSR(shape, b, a, values)
	case "csc":
		m, err = sparse.MakeCSC(shape, b, a, values)
	default:
		if a.Len() != len(values) || b.Len() != len(values) {
			return nil, fmt.Errorf("row (%d), col (%d) and data (%d) should have the same size: %w", a.Len(), b.Len(), len(values), sparse.ErrInvalid)
		}
		coords := makeIndices(a.DType(), 2*len(values))
		for i := range values {
			coords.set(2*i, a.At(i))
			coords.set(2*i+1, b.At(i))
		}
		m, err = sparse.MakeCOO(shape, coords.indices(), values)
	}
	if err != nil {
		return nil, err
	}
	entries, dup := duplicated[T](m)
	if !dup {
		return m, nil
	}
	return summed(format, shape, a.DType(), entries)
}

// stored is a stored value of a matrix with its coordinates, outer first: row and column of a
// CSR or a COO, column and row of a CSC.
type stored[T any] struct {
	outer, inner int64
	value        T
}

// duplicated reports whether a (a CSR, CSC or COO of T) stores a coordinate more than once,
// and then returns its entries, sorted by coordinates (stably: duplicates in storage order).
func duplicated[T ndarray.Element](a sparse.Array) ([]stored[T], bool) {
	var entries []stored[T]
	sorted := true
	switch m := a.(type) {
	case *sparse.COO[T]:
		if m.IsCanonical() {
			return nil, false
		}
		coords := m.Indices()
		for i, v := range m.Data() {
			entries = append(entries, stored[T]{coords.At(2 * i), coords.At(2*i + 1), v})
		}
		sorted = false
	case *sparse.CSR[T]:
		entries, sorted = compressedEntries(m.Indptr(), m.Indices(), m.Data())
	case *sparse.CSC[T]:
		entries, sorted = compressedEntries(m.Indptr(), m.Indices(), m.Data())
	}
	if sorted { // strictly increasing within each outer slice: nothing twice
		return nil, false
	}
	slices.SortStableFunc(entries, func(x, y stored[T]) int {
		if c := cmp.Compare(x.outer, y.outer); c != 0 {
			return c
		}
		return cmp.Compare(x.inner, y.inner)
	})
	for i := 1; i < len(entries); i++ {
		if entries[i].outer == entries[i-1].outer && entries[i].inner == entries[i-1].inner {
			return entries, true
		}
	}
	return nil, false
}

// compressedEntries returns the entries of a compressed matrix, and whether its indices
// increase strictly within every outer slice.
func compressedEntries[T any](indptr, indices sparse.Indices, values []T) ([]stored[T], bool) {
	entries := make([]stored[T], 0, len(values))
	increasing := true
	for o := 0; o+1 < indptr.Len(); o++ {
		for k := indptr.At(o); k < indptr.At(o+1); k++ {
			e := stored[T]{int64(o), indices.At(int(k)), values[k]}
			if k > indptr.At(o) && e.inner <= entries[len(entries)-1].inner {
				increasing = false
			}
			entries = append(entries, e)
		}
	}
	return entries, increasing
}

// summed builds the matrix of format from sorted entries, the values of equal coordinates
// summed as NumPy adds them (bools: or), indices of dtype index.
func summed[T ndarray.Element](format string, shape ndarray.Shape, index ndarray.DType, entries []stored[T]) (sparse.Array, error) {
	add := adder[T]()
	var out []stored[T]
	for _, e := range entries {
		if n := len(out); n > 0 && out[n-1].outer == e.outer && out[n-1].inner == e.inner {
			out[n-1].value = add(out[n-1].value, e.value)
			continue
		}
		out = append(out, e)
	}
	values := make([]T, len(out))
	for i, e := range out {
		values[i] = e.value
	}
	if format == "coo" {
		coords := makeIndices(index, 2*len(out))
		for i, e := range out {
			coords.set(2*i, e.outer)
			coords.set(2*i+1, e.inner)
		}
		return sparse.MakeCOO(shape, coords.indices(), values)
	}
	n := shape[0]
	if format == "csc" {
		n = shape[1]
	}
	indptr, indices := makeIndices(index, int(n)+1), makeIndices(index, len(out))
	for i, e := range out {
		indices.set(i, e.inner)
		indptr.set(int(e.outer)+1, indptr.at(int(e.outer)+1)+1)
	}
	for o := 1; o <= int(n); o++ {
		indptr.set(o, indptr.at(o)+indptr.at(o-1))
	}
	if format == "csc" {
		return sparse.MakeCSC(shape, indptr.indices(), indices.indices(), values)
	}
	return sparse.MakeCSR(shape, indptr.indices(), indices.indices(), values)
}

// adder returns the sum of two values of T as NumPy computes it: wrapping integers, float16
// through float32, bools or'ed.
func adder[T ndarray.Element]() func(x, y T) T {
	var zero T
	var f any
	switch any(zero).(type) {
	case bool:
		f = func(x, y bool) bool { return x || y }
	case int8:
		f = func(x, y int8) int8 { return x + y }
	case int16:
		f = func(x, y int16) int16 { return x + y }
	case int32:
		f = func(x, y int32) int32 { return x + y }
	case int64:
		f = func(x, y int64) int64 { return x + y }
	case uint8:
		f = func(x, y uint8) uint8 { return x + y }
	case uint16:
		f = func(x, y uint16) uint16 { return x + y }
	case uint32:
		f = func(x, y uint32) uint32 { return x + y }
	case uint64:
		f = func(x, y uint64) uint64 { return x + y }
	case float16.Num:
		f = func(x, y float16.Num) float16.Num { return float16.New(x.Float32() + y.Float32()) }
	case float32:
		f = func(x, y float32) float32 { return x + y }
	case float64:
		f = func(x, y float64) float64 { return x + y }
	case string:
		f = func(x, y string) string { return x + y }
	}
	return f.(func(x, y T) T)
}

// indexBuffer is a growable vector of int32 or int64 indices.
type indexBuffer struct {
	narrow []int32
	wide   []int64
	is64   bool
}

// makeIndices returns n zero indices of dtype (int32 or int64).
func makeIndices(dtype ndarray.DType, n int) *indexBuffer {
	if dtype == ndarray.Int32 {
		return &indexBuffer{narrow: make([]int32, n)}
	}
	return &indexBuffer{wide: make([]int64, n), is64: true}
}

func (b *indexBuffer) set(i int, v int64) {
	if !b.is64 {
		b.narrow[i] = int32(v)
		return
	}
	b.wide[i] = v
}

func (b *indexBuffer) at(i int) int64 {
	if !b.is64 {
		return int64(b.narrow[i])
	}
	return b.wide[i]
}

func (b *indexBuffer) append(v int64) {
	if !b.is64 {
		b.narrow = append(b.narrow, int32(v))
		return
	}
	b.wide = append(b.wide, v)
}

// array returns the buffer as a vector.
func (b *indexBuffer) array() ndarray.Array {
	if !b.is64 {
		return ndarray.Must(ndarray.FromSlice(b.narrow, int64(len(b.narrow))))
	}
	return ndarray.Must(ndarray.FromSlice(b.wide, int64(len(b.wide))))
}

// indices returns the buffer as sparse.Indices.
func (b *indexBuffer) indices() sparse.Indices {
	if !b.is64 {
		return sparse.Int32Indices(b.narrow)
	}
	return sparse.Int64Indices(b.wide)
}

// writeSciPy writes the sparse matrix of t as scipy.sparse.save_npz writes it (deflated when
// opts.Compress, as save_npz's default is): a CSR as csr, a CSC as csc, a COO (or a CSF) of
// rank 2 as coo — a CSF is told to opts.Warn. A tensor of another rank is an error naming it:
// SciPy has matrices only.
func writeSciPy(w io.Writer, t Tensor, opts WriteOptions) error {
	a := t.Sparse
	if a.Rank() != 2 {
		return fmt.Errorf("%s: a sparse tensor of rank %d: %w; write its dense form (--dense), or a .coo or .arrows file", t.Name, a.Rank(), ErrNotMatrix)
	}
	if strings.Join(t.DimNames, "") != "" {
		opts.warn(fmt.Sprintf("%s: SciPy's .npz has no place for dimension names: %s dropped", t.Name, strings.Join(t.DimNames, ",")))
	}
	if a.Format() == sparse.FormatCSF {
		opts.warn(fmt.Sprintf("%s: SciPy has no CSF: written as its coo", t.Name))
		c, err := a.Convert(sparse.FormatCOO)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		a = c
	}
	z := npy.NewNpzWriter(w, opts.Compress)
	format := map[sparse.Format]string{sparse.FormatCSR: "csr", sparse.FormatCSC: "csc", sparse.FormatCOO: "coo"}[a.Format()]
	ops, err := opsOf(a.DType())
	if err != nil || ops.sciPyParts == nil {
		return fmt.Errorf("%s: sparse values of %v: SciPy's data holds numbers and bools: %w", t.Name, a.DType(), ndarray.ErrDType)
	}
	parts, err := ops.sciPyParts(a)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	for _, name := range scipyMembers[format] {
		var err error
		switch name {
		case "format":
			err = z.WriteStrings(name, ndarray.Full(format), true)
		case "shape":
			err = z.Write(name, vector64(slices.Clone(a.Shape())))
		default:
			err = z.Write(name, parts[name])
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return z.Close()
}

// sciPyPartsOf returns the arrays of a's SciPy members other than format and shape: of a
// compressed matrix its indices, indptr and data, of a COO its row, col and data (in storage
// order, duplicates included, as SciPy keeps them).
func sciPyPartsOf[T ndarray.Element](a sparse.Array) (map[string]ndarray.Array, error) {
	indices := func(x sparse.Indices) ndarray.Array {
		return (&indexBuffer{narrow: x.Int32(), wide: x.Int64(), is64: x.DType() == ndarray.Int64}).array()
	}
	vector := func(v []T) ndarray.Array { return ndarray.Must(ndarray.FromSlice(v, int64(len(v)))) }
	switch m := a.(type) {
	case *sparse.CSR[T]:
		return map[string]ndarray.Array{"indices": indices(m.Indices()), "indptr": indices(m.Indptr()), "data": vector(m.Data())}, nil
	case *sparse.CSC[T]:
		return map[string]ndarray.Array{"indices": indices(m.Indices()), "indptr": indices(m.Indptr()), "data": vector(m.Data())}, nil
	case *sparse.COO[T]:
		index := m.Indices().DType()
		row, col := makeIndices(index, 0), makeIndices(index, 0)
		values := []T{}
		for idx, v := range m.Entries() {
			row.append(idx[0])
			col.append(idx[1])
			values = append(values, v)
		}
		return map[string]ndarray.Array{"row": row.array(), "col": col.array(), "data": vector(values)}, nil
	}
	return nil, fmt.Errorf("a %s of %v: %w", a.Format(), a.DType(), ErrFormat)
}

// vector64 returns v as a vector.
func vector64(v []int64) ndarray.Array { return ndarray.Must(ndarray.FromSlice(v, int64(len(v)))) }
