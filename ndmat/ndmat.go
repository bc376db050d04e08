// Package ndmat shares memory between ndarray's float64 arrays and gonum's mat matrices and
// vectors: a Dense[float64] matrix or vector is handed to gonum as a *mat.Dense or
// *mat.VecDense, and a gonum matrix or vector comes back as a Dense, without a copy either
// way. It is a package of its own so that ndarray does not depend on gonum.
//
// gonum views a matrix as rows that are evenly spaced runs of a slice (column stride 1) and a
// vector as evenly spaced elements (a positive stride): row-major arrays, their row and column
// ranges and their rows and columns qualify; transposes, column-major arrays, flipped and
// broadcast views do not, and fail with ndarray.ErrLayout — Clone them into a row-major copy
// first. gonum has no empty matrices and no read-only ones: those fail too (Clone a read-only
// one, a mapped file's values, into a writable copy).
package ndmat

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/ndarrow/ndarrow/ndarray"
)

// ErrReadOnly is returned for a read-only array, which gonum could write through (a write to
// a read-only memory mapping would crash the program): Clone it first. The error returned
// names the array's shape and says so.
var ErrReadOnly = errors.New("ndmat: gonum cannot hold a read-only array")

// Matrix returns the rank-2 array d as a *mat.Dense that views its memory: writes through
// either are seen by both. d's rows must be evenly spaced runs of its backing (column stride
// 1, row stride at least the columns); other layouts fail with ndarray.ErrLayout, another rank
// or an empty matrix with ndarray.ErrShape, a read-only array with ErrReadOnly. Nothing needs
// releasing: the matrix is garbage-collected memory d already holds.
func Matrix(d *ndarray.Dense[float64]) (*mat.Dense, error) {
	if err := check("Matrix", d, 2); err != nil {
		return nil, err
	}
	l := d.Layout()
	rows, cols := l.Shape[0], l.Shape[1]
	rowStride, colStride := l.Strides[0], l.Strides[1]
	if cols == 1 {
		colStride = 1 // one column: its stride is never used
	}
	if rows == 1 {
		rowStride = cols // one row: likewise
	}
	if colStride != 1 || rowStride < cols {
		return nil, fmt.Errorf("ndmat: Matrix: strides %v of shape %v: gonum needs rows that are runs of the backing, evenly spaced (Clone first): %w", l.Strides, l.Shape, ndarray.ErrLayout)
	}
	data := d.Data()[l.Offset : l.Offset+(rows-1)*rowStride+cols]
	var m mat.Dense
	m.SetRawMatrix(blas64.General{Rows: int(rows), Cols: int(cols), Stride: int(rowStride), Data: data})
	return &m, nil
}

// Vector returns the rank-1 array d as a *mat.VecDense that views its memory: writes through
// either are seen by both. d's elements must be evenly spaced forward (a positive stride);
// other layouts fail with ndarray.ErrLayout, another rank or an empty vector with
// ndarray.ErrShape, a read-only array with ErrReadOnly.
func Vector(d *ndarray.Dense[float64]) (*mat.VecDense, error) {
	if err := check("Vector", d, 1); err != nil {
		return nil, err
	}
	l := d.Layout()
	n, inc := l.Shape[0], l.Strides[0]
	if n == 1 {
		inc = 1
	}
	if inc < 1 {
		return nil, fmt.Errorf("ndmat: Vector: stride %d: gonum needs evenly spaced elements, forward (Clone first): %w", inc, ndarray.ErrLayout)
	}
	data := d.Data()[l.Offset : l.Offset+(n-1)*inc+1]
	var v mat.VecDense
	v.SetRawVector(blas64.Vector{N: int(n), Inc: int(inc), Data: data})
	return &v, nil
}

// check returns an error unless d is a writable, non-empty array of the given rank, for the
// function fn.
func check(fn string, d *ndarray.Dense[float64], rank int) error {
	switch {
	case d.Rank() != rank:
		return fmt.Errorf("ndmat: shape %v is not of rank %d: %w", d.Shape(), rank, ndarray.ErrShape)
	case d.Size() == 0:
		return fmt.Errorf("ndmat: shape %v: gonum has no empty matrices or vectors: %w", d.Shape(), ndarray.ErrShape)
	case d.ReadOnly():
		return fmt.Errorf("ndmat: %s: a read-only array of shape %v (a mapped file's values, or AsReadOnly), which gonum could write through: Clone it into a writable copy first: %w", fn, d.Shape(), ErrReadOnly)
	}
	return nil
}

// FromMatrix returns the matrix m — a *mat.Dense, or anything else that exposes its
// blas64.General — as a [rows, cols] array that views its memory: writes through either are
// seen by both. It fails with ndarray.ErrLayout when m's description does not fit its data.
func FromMatrix(m mat.RawMatrixer) (*ndarray.Dense[float64], error) {
	g := m.RawMatrix()
	l := ndarray.Layout{Shape: ndarray.Shape{int64(g.Rows), int64(g.Cols)}, Strides: []int64{int64(g.Stride), 1}}
	d, err := ndarray.FromLayout(g.Data, l)
	if err != nil {
		return nil, fmt.Errorf("ndmat: FromMatrix: %w", err)
	}
	return d, nil
}

// FromVector returns the vector v — a *mat.VecDense, or anything else that exposes its
// blas64.Vector — as an [n] array that views its memory: writes through either are seen by
// both. It fails with ndarray.ErrLayout when v's description does not fit its data.
func FromVector(v mat.RawVectorer) (*ndarray.Dense[float64], error) {
	r := v.RawVector()
	l := ndarray.Layout{Shape: ndarray.Shape{int64(r.N)}, Strides: []int64{int64(r.Inc)}}
	d, err := ndarray.FromLayout(r.Data, l)
	if err != nil {
		return nil, fmt.Errorf("ndmat: FromVector: %w", err)
	}
	return d, nil
}
