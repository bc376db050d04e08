package sparse_test

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// Build a sparse matrix by setting elements, then convert it for fast row access.
func Example() {
	m := sparse.NewCOO[float64](3, 4)
	m.Set(1.5, 0, 1)
	m.Set(2.5, 2, 3)
	m.Set(-1, 1, 0)
	fmt.Println(m.NNZ(), m.IsCanonical(), m.Get(2, 3), m.Get(2, 2))

	csr, _ := m.ToCSR()
	fmt.Println(csr.RowSplits(), csr.Indices().Int32(), csr.Data())
	d, err := csr.ToDense() // an error when the dense form would exceed the limit
	if err != nil {
		panic(err)
	}
	fmt.Println(d)
	// Output:
	// 3 false 2.5 0
	// [0 1 2 3] [1 0 3] [1.5 -1 2.5]
	// [[ 0.   1.5  0.   0. ]
	//  [-1.   0.   0.   0. ]
	//  [ 0.   0.   0.   2.5]]
}

// Slicing a COO with progressions gives a view: writes go through to the array.
func ExampleCOO_Slice() {
	m := sparse.NewCOO[int32](4, 6)
	m.Set(7, 2, 4)
	row, _ := m.Slice(ndarray.At(2), ndarray.RangeStep(0, 6, 2)) // row 2, even columns
	fmt.Println(row.Shape(), row.IsView(), row.Get(2))
	row.Set(9, 0)
	fmt.Println(m.Get(2, 0), m.NNZ())
	// Output:
	// (3,) true 7
	// 9 2
}

// TFSparse gives the canonical int64 triple tf.SparseTensor is built from.
func ExampleCOO_TFSparse() {
	m := sparse.FromDense(ndarray.Must(ndarray.FromSlice([]float32{0, 3, 0, 0, 0, 4}, 2, 3)))
	tf := m.TFSparse()
	fmt.Println(tf.Indices, tf.Values, tf.DenseShape)
	// Output: [0 1 1 2] [3 4] [2 3]
}
