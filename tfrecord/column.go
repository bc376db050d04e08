package tfrecord

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
)

// Column is one column of a table whose rows are Examples: row i of the column is feature Name
// of the i-th Example. Exactly one of Dense, Ragged and Sparse is set.
type Column struct {
	Name string
	// Dense, of rank 1 or more, gives row i as its elements [i, ...] in row-major order: what
	// tf.io.FixedLenFeature(shape[1:]) parses back.
	Dense ndarray.Array
	// Ragged gives row i as its flat values: what tf.io.RaggedFeature or VarLenFeature
	// parses back. A SequenceExample's feature list reads as a Ragged of ragged rank 2.
	Ragged ragged.Any
	// Sparse, of rank 1 or more, gives row i as its stored entries whose first coordinate is i:
	// feature Name+"/values" holds their values and Name+"/index/K" (K from 1) their coordinate
	// on axis K, which tf.io.SparseFeature(index_key=[...], value_key=..., size=shape[1:])
	// parses back. Examples written from it read back as those ragged features.
	Sparse sparse.Array
}

// Rows returns the column's number of rows: its first dimension.
func (c Column) Rows() int64 {
	switch {
	case c.Ragged != nil:
		return c.Ragged.NumRows()
	case c.Sparse != nil:
		return c.Sparse.Shape()[0]
	case c.Dense != nil && c.Dense.Rank() > 0:
		return c.Dense.Shape()[0]
	}
	return 0
}

// DType returns the column's element type.
func (c Column) DType() ndarray.DType {
	switch {
	case c.Ragged != nil:
		return c.Ragged.DType()
	case c.Sparse != nil:
		return c.Sparse.DType()
	case c.Dense != nil:
		return c.Dense.DType()
	}
	return 0
}

// check returns an error unless exactly one array is set and it has rows.
func (c Column) check() error {
	set := 0
	for _, ok := range []bool{c.Dense != nil, c.Ragged != nil, c.Sparse != nil} {
		if ok {
			set++
		}
	}
	switch {
	case set != 1:
		return fmt.Errorf("tfrecord: column %q: %d of Dense, Ragged and Sparse set, want 1", c.Name, set)
	case c.Dense != nil && c.Dense.Rank() == 0:
		return fmt.Errorf("tfrecord: column %q: a scalar has no rows: give it shape [1]", c.Name)
	case c.Sparse != nil && c.Sparse.Rank() == 0:
		return fmt.Errorf("tfrecord: column %q: a sparse scalar has no rows", c.Name)
	}
	return nil
}
