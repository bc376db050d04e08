package sparse

import (
	"fmt"
	"iter"

	"github.com/ndarrow/ndarrow/ndarray"
)

// compressed is the storage CSR and CSC share: a matrix whose major axis (rows for CSR,
// columns for CSC) is compressed into pointers. The stored values of major line i are
// values[indptr[i]:indptr[i+1]], at minor positions indices[indptr[i]:indptr[i+1]].
type compressed[T ndarray.Element] struct {
	shape    ndarray.Shape
	major    int // 0: rows (CSR), 1: columns (CSC)
	indptr   Indices
	indices  Indices
	values   []T
	readOnly bool
	view     bool // a part or the transpose of another matrix, sharing its values
}

// CSR is a sparse matrix in compressed sparse row format (SciPy's csr_array, Arrow's
// SparseCSRMatrix): row i stores Data()[Indptr()[i]:Indptr()[i+1]] at the columns in
// Indices() over the same range. Columns within a row need not be sorted; a column stored
// twice in a row takes its last value, as in a COO. Its structure is fixed: build with a COO
// and convert.
type CSR[T ndarray.Element] struct{ compressed[T] }

// CSC is a sparse matrix in compressed sparse column format (SciPy's csc_array, Arrow's
// SparseCSCMatrix): CSR with the roles of rows and columns exchanged.
type CSC[T ndarray.Element] struct{ compressed[T] }

// MakeCSR returns a CSR matrix of shape [rows, cols] over indptr (rows+1 pointers), indices
// (column of each stored value) and values, which it views without copying. indptr and
// indices must have the same type. It checks them fully — indptr starts at 0, never
// decreases and ends at len(values); every column is inside [0, cols) — and fails with an
// error wrapping ErrInvalid otherwise.
func MakeCSR[T ndarray.Element](shape ndarray.Shape, indptr, indices Indices, values []T) (*CSR[T], error) {
	m, err := makeCompressed(0, shape, indptr, indices, values)
	if err != nil {
		return nil, fmt.Errorf("sparse: MakeCSR: %w", err)
	}
	return &CSR[T]{m}, nil
}

// MakeCSC returns a CSC matrix of shape [rows, cols] over indptr (cols+1 pointers), indices
// (row of each stored value) and values, checked as MakeCSR checks its parts.
func MakeCSC[T ndarray.Element](shape ndarray.Shape, indptr, indices Indices, values []T) (*CSC[T], error) {
	m, err := makeCompressed(1, shape, indptr, indices, values)
	if err != nil {
		return nil, fmt.Errorf("sparse: MakeCSC: %w", err)
	}
	return &CSC[T]{m}, nil
}

func makeCompressed[T ndarray.Element](major int, shape ndarray.Shape, indptr, indices Indices, values []T) (compressed[T], error) {
	shape = shape.Clone()
	if err := checkShape(shape); err != nil {
		return compressed[T]{}, err
	}
	if len(shape) != 2 {
		return compressed[T]{}, fmt.Errorf("shape %v: a compressed matrix has rank 2: %w", shape, ErrInvalid)
	}
	if indptr.DType() != indices.DType() {
		return compressed[T]{}, fmt.Errorf("indptr of %v and indices of %v: one type for both: %w", indptr.DType(), indices.DType(), ErrInvalid)
	}
	nnz := int64(len(values))
	if err := checkPointers("indptr", indptr, shape[major], nnz); err != nil {
		return compressed[T]{}, err
	}
	if err := checkIndexValues("indices", indices, nnz, shape[1-major]); err != nil {
		return compressed[T]{}, err
	}
	return compressed[T]{shape: shape, major: major, indptr: indptr, indices: indices, values: values}, nil
}

// checkPointers checks that p has n+1 entries, starts at 0, never decreases and ends at
// total.
func checkPointers(name string, p Indices, n, total int64) error {
	if int64(p.Len()) != n+1 {
		return fmt.Errorf("%s has %d pointers for %d lines, want %d: %w", name, p.Len(), n, n+1, ErrInvalid)
	}
	if first := p.At(0); first != 0 {
		return fmt.Errorf("%s starts at %d, not 0: %w", name, first, ErrInvalid)
	}
	i := firstDecrease(p.narrow)
	if p.is64 {
		i = firstDecrease(p.wide)
	}
	if i >= 0 {
		return fmt.Errorf("%s decreases at %d (%d after %d): %w", name, i, p.At(i), p.At(i-1), ErrInvalid)
	}
	if last := p.At(p.Len() - 1); last != total {
		return fmt.Errorf("%s ends at %d, want %d: %w", name, last, total, ErrInvalid)
	}
	return nil
}

// firstDecrease returns the first i with v[i] < v[i-1], or -1.
func firstDecrease[I int32 | int64](v []I) int {
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			return i
		}
	}
	return -1
}

// firstOutside returns the first i with v[i] outside [0, dim), or -1.
func firstOutside[I int32 | int64](v []I, dim int64) int {
	for i, x := range v {
		if int64(x) < 0 || int64(x) >= dim {
			return i
		}
	}
	return -1
}

// checkIndexValues checks that x has n entries, each in [0, dim).
func checkIndexValues(name string, x Indices, n, dim int64) error {
	if int64(x.Len()) != n {
		return fmt.Errorf("%s has %d entries, want %d: %w", name, x.Len(), n, ErrInvalid)
	}
	i := firstOutside(x.narrow, dim)
	if x.is64 {
		i = firstOutside(x.wide, dim)
	}
	if i >= 0 {
		return fmt.Errorf("%s[%d] = %d is outside [0, %d): %w", name, i, x.At(i), dim, ErrInvalid)
	}
	return nil
}

// DType returns the element type.
func (m *compressed[T]) DType() ndarray.DType { return ndarray.DTypeOf[T]() }

// Shape returns a copy of the shape.
func (m *compressed[T]) Shape() ndarray.Shape { return m.shape.Clone() }

// Rank returns 2.
func (m *compressed[T]) Rank() int { return 2 }

// Size returns the number of elements, zeros included.
func (m *compressed[T]) Size() int64 { return m.shape.Size() }

// NNZ returns the number of stored values.
func (m *compressed[T]) NNZ() int64 { return int64(len(m.values)) }

// ReadOnly reports whether writes panic.
func (m *compressed[T]) ReadOnly() bool { return m.readOnly }

// Indptr returns the pointers of the compressed axis, a view.
func (m *compressed[T]) Indptr() Indices { return m.indptr }

// Indices returns the position along the other axis of each stored value, a view.
func (m *compressed[T]) Indices() Indices { return m.indices }

// Data returns the stored values, a view.
func (m *compressed[T]) Data() []T { return m.values }

// Get returns the element at (i, j): the stored value or zero. It scans the stored values of
// one row (CSR) or column (CSC). It panics on a wrong number of indices or an index out of
// range.
func (m *compressed[T]) Get(indices ...int64) T {
	if !inShape(indices, m.shape) {
		badIndexPanic(m.kind()+".Get", indices, m.shape)
	}
	if p, ok := m.find(indices[m.major], indices[1-m.major]); ok {
		return m.values[p]
	}
	var zero T
	return zero
}

// SetStored updates the stored value at (i, j) and reports whether there was one; the
// structure of a compressed matrix does not change. It panics on a wrong number of indices,
// an index out of range or a read-only matrix.
func (m *compressed[T]) SetStored(v T, indices ...int64) bool {
	if m.readOnly {
		readOnlyPanic(m.kind() + ".SetStored")
	}
	if !inShape(indices, m.shape) {
		badIndexPanic(m.kind()+".SetStored", indices, m.shape)
	}
	p, ok := m.find(indices[m.major], indices[1-m.major])
	if ok {
		m.values[p] = v
	}
	return ok
}

// find returns the position of the last value stored at (major line, minor position).
func (m *compressed[T]) find(line, pos int64) (int, bool) {
	lo, hi := int(m.indptr.At(int(line))), int(m.indptr.At(int(line)+1))
	for p := hi - 1; p >= lo; p-- {
		if m.indices.At(p) == pos {
			return p, true
		}
	}
	return 0, false
}

func (m *compressed[T]) kind() string { return [2]string{"CSR", "CSC"}[m.major] }

// sorted returns the entries as sorted row-major keys.
func (m *compressed[T]) sorted() entries[T] {
	cols := m.shape[1]
	e := entries[T]{shape: m.shape.Clone(), keys: make([]int64, len(m.values)), values: m.values}
	for line := range m.indptr.Len() - 1 {
		for p := m.indptr.At(line); p < m.indptr.At(line+1); p++ {
			r, c := int64(line), m.indices.At(int(p))
			if m.major == 1 {
				r, c = c, r
			}
			e.keys[p] = r*cols + c
		}
	}
	e.sort()
	return e
}

// Values iterates over all elements in row-major order, zeros included.
func (m *compressed[T]) Values() iter.Seq[T] { return m.sorted().all() }

// ToDense returns a new row-major dense matrix with the elements (see Tensor).
func (m *compressed[T]) ToDense() (*ndarray.Dense[T], error) {
	d, err := denseArray[T](m, 0)
	if err != nil {
		return nil, err
	}
	return d.(*ndarray.Dense[T]), nil
}

// fill writes the elements into out, a zeroed row-major matrix of m's shape.
func (m *compressed[T]) fill(out *ndarray.Dense[T]) {
	data := out.Data()
	cols := m.shape[1]
	for line := range m.indptr.Len() - 1 {
		lo, hi := int(m.indptr.At(line)), int(m.indptr.At(line+1))
		for p := lo; p < hi; p++ {
			r, c := int64(line), m.indices.At(p)
			if m.major == 1 {
				r, c = c, r
			}
			data[r*cols+c] = m.values[p]
		}
	}
}

// ToCOO returns a new canonical COO with the same entries.
func (m *compressed[T]) ToCOO() *COO[T] {
	return m.sorted().coo(conversionType(m.indices.DType(), maxDim(m.shape)))
}

// ToCSF returns a new CSF with the same entries, its levels in axisOrder (row-major when
// empty). It fails when axisOrder is not a permutation of the two axes.
func (m *compressed[T]) ToCSF(axisOrder ...int) (*CSF[T], error) {
	return toCSF(m.sorted(), m.indices.DType(), axisOrder)
}

// Slice returns a copy of the part of the matrix that indices select, as a COO (see COO.Slice
// for the indices): not a view (CSR.Rows and CSC.Cols give views of a range of rows or
// columns).
func (m *compressed[T]) Slice(indices ...ndarray.Index) (*COO[T], error) {
	v, err := m.ToCOO().Slice(indices...)
	if err != nil {
		return nil, err
	}
	return v.Clone(), nil
}

// convert returns the entries in the other compressed layout, or in the same one (a copy).
func (m *compressed[T]) convert(major int) compressed[T] {
	t := conversionType(m.indices.DType(), max(maxDim(m.shape), int64(len(m.values))))
	out, _ := m.sorted().compressed(major, t) // rank 2 by construction
	return out
}

// Format returns FormatCSR.
func (m *CSR[T]) Format() Format { return FormatCSR }

// Format returns FormatCSC.
func (m *CSC[T]) Format() Format { return FormatCSC }

// ToCSR returns a copy of m with its columns sorted and each stored once.
func (m *CSR[T]) ToCSR() *CSR[T] { return &CSR[T]{m.convert(0)} }

// ToCSC returns a new CSC matrix with m's elements.
func (m *CSR[T]) ToCSC() *CSC[T] { return &CSC[T]{m.convert(1)} }

// ToCSR returns a new CSR matrix with m's elements.
func (m *CSC[T]) ToCSR() *CSR[T] { return &CSR[T]{m.convert(0)} }

// ToCSC returns a copy of m with its rows sorted and each stored once.
func (m *CSC[T]) ToCSC() *CSC[T] { return &CSC[T]{m.convert(1)} }

// AsReadOnly returns a read-only matrix sharing m's storage.
func (m *CSR[T]) AsReadOnly() *CSR[T] {
	r := *m
	r.readOnly = true
	return &r
}

// AsReadOnly returns a read-only matrix sharing m's storage.
func (m *CSC[T]) AsReadOnly() *CSC[T] {
	r := *m
	r.readOnly = true
	return &r
}

// RowSplits returns the row pointers as int64 — TensorFlow's RaggedTensor row splits of the
// matrix's rows, with Indices and Data as the flat values — a view when the indices are
// int64 and a copy otherwise.
func (m *CSR[T]) RowSplits() []int64 { return m.indptr.AsInt64() }

// String formats m as its dense form would be, prefixed by its layout and NNZ.
func (m *CSR[T]) String() string { return describe[T](m) }

// String formats m as its dense form would be, prefixed by its layout and NNZ.
func (m *CSC[T]) String() string { return describe[T](m) }

// CSRFromDense returns a CSR matrix holding the non-zero elements of the matrix d, with
// int32 or int64 indices as its shape and number of values need, or an error wrapping
// ErrInvalid when d is not a matrix.
func CSRFromDense[T ndarray.Element](d *ndarray.Dense[T]) (*CSR[T], error) {
	shape := d.Shape()
	if len(shape) != 2 {
		return nil, fmt.Errorf("sparse: CSRFromDense: shape %v: a compressed matrix has rank 2: %w", shape, ErrInvalid)
	}
	rows, cols := shape[0], shape[1]
	var zero T
	nnz := int64(0)
	for v := range d.Values() {
		if v != zero {
			nnz++
		}
	}
	t := indexTypeFor(max(maxDim(shape), nnz))
	m := compressed[T]{shape: shape, indptr: makeIndices(t, int(rows)+1), indices: makeIndices(t, int(nnz)), values: make([]T, nnz)}
	p, pos := 0, int64(0)
	for v := range d.Values() {
		if v != zero {
			m.indices.set(p, pos%cols)
			m.values[p] = v
			p++
		}
		pos++
		if pos%cols == 0 {
			m.indptr.set(int(pos/cols), int64(p))
		}
	}
	return &CSR[T]{m}, nil
}
