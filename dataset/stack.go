package dataset

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/ndarrow/ndarrow/internal/memcopy"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Stacker stacks dense tensors of one element type and cell shape along their first axis
// into one row-major tensor as they come, copying each in and keeping no reference to it:
// what a stream of record batches decodes to, held in the memory of the result alone.
type Stacker struct {
	first Tensor // names, kind and dimension names of the result
	stack rowStack
	valid []bool // the rows' validity once a part with null rows came (Tensor.Valid); nil before
}

// rowStack is a Stacker's storage for one element type.
type rowStack interface {
	add(a ndarray.Array) error
	addBytes(rows int64, parts [][]byte) error
	readRows(rows, n int64, r io.Reader) (bool, error)
	array() ndarray.Array
	filled() int64 // the rows added
	useRegion(r Reserver)
	release()
}

// A Reserver is asked for memory before it is allocated and told when memory is let go: a
// server's memory budget, say. Reserve returns an error (wrapping limits.ErrExceeded, say)
// when n bytes cannot be had, and then nothing is allocated; Release gives back n bytes
// reserved before.
type Reserver interface {
	Reserve(n int64) error
	Release(n int64)
}

// NewStackers returns Stackers for consecutive blocks of one tensor like first (see
// NewStacker), the i-th taking exactly rows[i] rows, all held in one allocation, and whole,
// which returns the tensor they filled once each has been given its rows (an error wrapping
// ndarray.ErrShape names a block given fewer; Add refuses more). The Stackers may be filled
// from different goroutines at once, one goroutine each: the parts of a tensor several
// servers send. The whole is allocated at once: bound rows before calling.
func NewStackers(first Tensor, rows []int64) (parts []*Stacker, whole func() (Tensor, error), err error) {
	if first.Dense == nil || first.Dense.Rank() == 0 {
		return nil, nil, fmt.Errorf("dataset: %s: only dense tensors of rank 1 or more stack: %w", first.Name, ndarray.ErrShape)
	}
	ops, err := opsOf(first.DType())
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %s: %w", first.Name, err)
	}
	cell := first.Shape()[1:]
	if err := cell.Validate(); err != nil {
		return nil, nil, fmt.Errorf("dataset: %s: %w", first.Name, err)
	}
	total := int64(0)
	for i, r := range rows {
		if r < 0 || total+r < total || (total+r)*max(cell.Size(), 1)/max(cell.Size(), 1) != total+r {
			return nil, nil, fmt.Errorf("dataset: %s: block %d of %d rows: %w", first.Name, i, r, ndarray.ErrShape)
		}
		total += r
	}
	out := first
	out.Dense = nil
	stacks, all := ops.stackParts(cell, rows)
	parts = make([]*Stacker, len(stacks))
	for i, st := range stacks {
		parts[i] = &Stacker{first: out, stack: st}
	}
	whole = func() (Tensor, error) {
		nulls := false
		for i, st := range stacks {
			if got := st.filled(); got != rows[i] {
				return Tensor{}, fmt.Errorf("dataset: %s: block %d holds %d rows of %d: %w", first.Name, i, got, rows[i], ndarray.ErrShape)
			}
			nulls = nulls || parts[i].valid != nil
		}
		t := out
		t.Dense = all()
		if nulls {
			t.Valid = make([]bool, 0, total)
			for i, p := range parts {
				t.Valid = appendValid(t.Valid, p.valid, rows[i])
			}
		}
		return t, nil
	}
	return parts, whole, nil
}

// NewStacker returns a Stacker for tensors like first (which it does not add): dense, of its
// element type and cell shape (its shape but the first dimension). capRows rows are allocated
// up front (≤ 0: none; the storage grows as rows come, doubling).
func NewStacker(first Tensor, capRows int64) (*Stacker, error) {
	if first.Dense == nil || first.Dense.Rank() == 0 {
		return nil, fmt.Errorf("dataset: %s: only dense tensors of rank 1 or more stack: %w", first.Name, ndarray.ErrShape)
	}
	ops, err := opsOf(first.DType())
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", first.Name, err)
	}
	cell := first.Shape()[1:]
	if err := cell.Validate(); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", first.Name, err)
	}
	out := first
	out.Dense = nil
	return &Stacker{first: out, stack: ops.stack(cell, max(capRows, 0))}, nil
}

// NewMappedStacker returns a Stacker like NewStacker's whose storage lies outside the Go heap
// and grows in place as rows come (mmap.Region: pages remapped, never copied), each row's
// bytes reserved from r before they are written: what a stream of unknown length decodes to is
// held once, however it grows, and within r. An Add, AddBytes or ReadRows that r refuses fails
// with r's error and adds nothing. Its Tensor views that storage: call Release once nothing
// uses it any more, which gives it back, and what was reserved to r. Strings, whose headers
// point into the Go heap where the collector would not see them, are refused
// (ndarray.ErrDType).
func NewMappedStacker(first Tensor, r Reserver) (*Stacker, error) {
	if first.Dense != nil && first.DType() == ndarray.String {
		return nil, fmt.Errorf("dataset: %s: strings in storage outside the Go heap: %w", first.Name, ndarray.ErrDType)
	}
	s, err := NewStacker(first, 0)
	if err != nil {
		return nil, err
	}
	s.stack.useRegion(r)
	return s, nil
}

// Release gives back the storage of a Stacker from NewMappedStacker, and what it reserved;
// its Tensor must not be used after. It does nothing for other Stackers, whose storage is Go
// memory.
func (s *Stacker) Release() { s.stack.release() }

// Add copies the rows of t below those added before. t must be dense, of the Stacker's
// element type and cell shape (else an error wrapping ndarray.ErrDType or ndarray.ErrShape).
func (s *Stacker) Add(t Tensor) error {
	if t.Dense == nil {
		return fmt.Errorf("dataset: %s: a %s part of a dense tensor: %w", s.first.Name, t.ImpliedKind(), ndarray.ErrShape)
	}
	before := s.stack.filled()
	if err := s.stack.add(t.Dense); err != nil {
		return fmt.Errorf("dataset: %s: %w", s.first.Name, err)
	}
	if t.Valid != nil && s.valid == nil { // the first null rows: every row before was valid
		s.valid = make([]bool, before, before+t.Rows())
		for i := range s.valid {
			s.valid[i] = true
		}
	}
	if s.valid != nil {
		s.valid = appendValid(s.valid, t.Valid, t.Rows())
	}
	return nil
}

// addedValid notes rows rows added without nulls.
func (s *Stacker) addedValid(rows int64) {
	if s.valid != nil {
		s.valid = appendValid(s.valid, nil, rows)
	}
}

// AddBytes copies rows rows whose values, in row-major order and little-endian (Arrow's
// layout), are the concatenation of parts, below those added before: what a receiver copies
// straight from the buffers its messages arrived in. The parts must hold exactly those rows
// of the Stacker's element type and cell shape (else an error wrapping ndarray.ErrShape);
// bools, which Arrow holds as bits, are refused (ndarray.ErrDType).
func (s *Stacker) AddBytes(rows int64, parts [][]byte) error {
	if err := s.stack.addBytes(rows, parts); err != nil {
		return fmt.Errorf("dataset: %s: %w", s.first.Name, err)
	}
	s.addedValid(rows)
	return nil
}

// ReadRows reads rows rows whose values, n bytes in row-major order and little-endian, come
// next in r, straight into the Stacker's storage (what a receiver reading a socket does with a
// record batch's values): when they do not fit in the storage already allocated, it reads
// nothing and returns false, and the caller reads them into memory that grows as they arrive
// and calls AddBytes, so a length a peer announces cannot make it allocate before the bytes
// come. n must be exactly those rows' bytes (else an error wrapping ndarray.ErrShape, nothing
// read); bools are refused (ndarray.ErrDType). After an error from r the rows are not added
// and r's position is unknown.
func (s *Stacker) ReadRows(rows, n int64, r io.Reader) (bool, error) {
	ok, err := s.stack.readRows(rows, n, r)
	if err != nil {
		return ok, fmt.Errorf("dataset: %s: %w", s.first.Name, err)
	}
	if ok {
		s.addedValid(rows)
	}
	return ok, nil
}

// Tensor returns the rows added so far as one tensor, named and described as the first
// tensor given to NewStacker, with the null rows of the parts added (Valid). It views the
// Stacker's storage: call it once, when done.
func (s *Stacker) Tensor() Tensor {
	t := s.first
	t.Dense = s.stack.array()
	t.Valid = s.valid
	return t
}

// denseStack is a rowStack of element type T.
type denseStack[T ndarray.Element] struct {
	cell     ndarray.Shape
	cellSize int64
	rows     int64
	data     []T
	fixed    bool // a block of a larger allocation: it does not grow

	region   *mmap.Region // the storage of a mapped stack (NewMappedStacker), or nil
	reserver Reserver     // what a mapped stack's rows are reserved from
	reserved int64        // the bytes reserved
}

func (s *denseStack[T]) useRegion(r Reserver) { s.region, s.reserver = &mmap.Region{}, r }

func (s *denseStack[T]) release() {
	if s.region == nil {
		return
	}
	s.data = nil
	s.region.Free()
	s.reserver.Release(s.reserved)
	s.reserved = 0
}

// bytes returns the bytes of n elements.
func (s *denseStack[T]) bytes(n int) int64 { return int64(n) * int64(unsafe.Sizeof(*new(T))) }

// newDenseParts returns denseStacks for consecutive blocks of rows[i] rows of one
// allocation, and the array of all of it.
func newDenseParts[T ndarray.Element](cell ndarray.Shape, rows []int64) ([]rowStack, func() ndarray.Array) {
	size := cell.Size()
	total := int64(0)
	for _, r := range rows {
		total += r
	}
	data := make([]T, total*size)
	parts := make([]rowStack, len(rows))
	at := int64(0)
	for i, r := range rows {
		parts[i] = &denseStack[T]{cell: cell, cellSize: size, data: data[at*size : at*size : (at+r)*size], fixed: true}
		at += r
	}
	return parts, func() ndarray.Array {
		d, err := ndarray.FromSlice(data, append(ndarray.Shape{total}, cell...)...)
		if err != nil { // the blocks' rows are the data's length: cannot happen
			panic(err)
		}
		return d
	}
}

func (s *denseStack[T]) filled() int64 { return s.rows }

func newDenseStack[T ndarray.Element](cell ndarray.Shape, capRows int64) rowStack {
	s := &denseStack[T]{cell: cell, cellSize: cell.Size()}
	if n := capRows * s.cellSize; n > 0 && capRows <= n/max(s.cellSize, 1) {
		s.data = make([]T, 0, n)
	}
	return s
}

func (s *denseStack[T]) add(a ndarray.Array) error {
	d, ok := a.(*ndarray.Dense[T])
	if !ok {
		return fmt.Errorf("a part of %v, not %v: %w", a.DType(), ndarray.DTypeOf[T](), ndarray.ErrDType)
	}
	if d.Rank() == 0 || !d.Shape()[1:].Equal(s.cell) {
		return fmt.Errorf("a part of shape %v below rows of cells %v: %w", d.Shape(), s.cell, ndarray.ErrShape)
	}
	at, err := s.grow(d.Dim(0))
	if err != nil {
		return err
	}
	if src, ok := d.Contiguous(); ok && d.Layout().IsRowMajor() {
		memcopy.Copy(s.data[at:], src)
	} else if err := d.CopyTo(s.data[at:]); err != nil {
		s.data = s.data[:at]
		return err
	}
	s.rows += d.Dim(0)
	return nil
}

// grow makes room for rows more rows and returns where they start in data.
func (s *denseStack[T]) grow(rows int64) (int64, error) {
	n := rows * s.cellSize
	at := int64(len(s.data))
	if at+n > int64(cap(s.data)) {
		if s.fixed {
			return 0, fmt.Errorf("%d rows more than the %d announced: %w", rows, int64(cap(s.data))/max(s.cellSize, 1), ndarray.ErrShape)
		}
		size := max(2*int64(cap(s.data)), at+n)
		if s.region != nil { // remapped in place: only the pages written take memory
			b, err := s.region.Grow(int(s.bytes(int(size))))
			if err != nil { // the address space is exhausted (a limit on it, say)
				return 0, fmt.Errorf("%d rows: mapping %d bytes for them: %w: %w", rows, s.bytes(int(size)), limits.ErrExceeded, err)
			}
			s.data = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), int64(len(b))/max(s.bytes(1), 1))[:at]
		} else {
			grown := make([]T, at, size)
			copy(grown, s.data)
			s.data = grown
		}
	}
	if s.region != nil {
		if err := s.reserver.Reserve(s.bytes(int(n))); err != nil {
			return 0, err
		}
		s.reserved += s.bytes(int(n))
	}
	s.data = s.data[:at+n]
	return at, nil
}

func (s *denseStack[T]) addBytes(rows int64, parts [][]byte) error {
	size := int64(0)
	for _, p := range parts {
		size += int64(len(p))
	}
	dst, _, err := s.place(rows, size, false)
	if err != nil {
		return err
	}
	for _, p := range parts {
		dst = dst[memcopy.Copy(dst, p):]
	}
	s.rows += rows
	return nil
}

func (s *denseStack[T]) readRows(rows, n int64, r io.Reader) (bool, error) {
	dst, at, err := s.place(rows, n, true)
	if err != nil || dst == nil {
		return false, err
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		s.data = s.data[:at]
		return true, err
	}
	s.rows += rows
	return true, nil
}

// place checks that size bytes are rows rows of the stack's cells and returns the bytes of
// storage they go to, and where they start in data; with spareOnly, nil when they do not fit
// in the storage already allocated (nothing grown).
func (s *denseStack[T]) place(rows, size int64, spareOnly bool) (dst []byte, at int64, err error) {
	var zero T
	switch any(zero).(type) {
	case bool, string:
		return nil, 0, fmt.Errorf("%T values from bytes: %w", zero, ndarray.ErrDType)
	}
	width := int64(unsafe.Sizeof(zero))
	if hi, lo := bits.Mul64(uint64(max(rows, 0)), uint64(s.cellSize*width)); rows < 0 || hi != 0 || lo != uint64(size) {
		return nil, 0, fmt.Errorf("%d bytes for %d rows of %d bytes: %w", size, rows, s.cellSize*width, ndarray.ErrShape)
	}
	if spareOnly && rows*s.cellSize > int64(cap(s.data)-len(s.data)) {
		return nil, 0, nil
	}
	at, err = s.grow(rows)
	if err != nil {
		return nil, 0, err
	}
	if size == 0 {
		return []byte{}, at, nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.data[at:]))), size), at, nil
}

// maxSlack is the storage a Stacker's result may leave unused past its rows: more, and the
// rows are moved into storage of their size (a peer announced more rows than it sent, or the
// storage doubled past the last rows), so the result holds no more than it needs.
const maxSlack = 1 << 20

func (s *denseStack[T]) array() ndarray.Array {
	shape := append(ndarray.Shape{s.rows}, s.cell...)
	unused := uintptr(cap(s.data)-len(s.data)) * unsafe.Sizeof(*new(T))
	switch {
	case s.region != nil: // the pages past the rows (address space alone) given back
		s.region.Shrink(int(s.bytes(len(s.data))))
		s.data = s.data[:len(s.data):len(s.data)] // a later row grows the region again
	case !s.fixed && unused > maxSlack && cap(s.data)-len(s.data) > len(s.data)/8:
		s.data = slices.Clone(s.data) // moved into storage of their size
	}
	d, err := ndarray.FromSlice(s.data[:len(s.data):len(s.data)], shape...)
	if err != nil { // the rows added are the data's length: cannot happen
		panic(err)
	}
	return d
}
