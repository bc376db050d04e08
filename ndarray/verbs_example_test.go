package ndarray_test

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
)

// NumPy's everyday verbs: constructors, reductions along an axis, arithmetic with
// broadcasting, a tolerance check and a checked cast.
func ExampleSumAxis() {
	x := ndarray.Must(ndarray.Must(ndarray.Arange(0.0, 6, 1)).Reshape(2, 3)) // [[0 1 2] [3 4 5]]
	cols, _ := ndarray.SumAxis(x, 0)
	rows, _ := ndarray.MeanAxis(x, -1)
	best, _ := ndarray.ArgMaxAxis(x, 1)
	fmt.Println(cols, rows, best, ndarray.Sum(x))

	centered, _ := ndarray.Sub(x, cols) // (2, 3) - (3,): broadcast along the rows
	scaled := ndarray.MulScalar(centered, 2)
	_ = ndarray.AddInPlace(scaled, ndarray.Ones[float64](3))
	fmt.Println(scaled)

	grid, _ := ndarray.Linspace(0.0, 1.0, 5, true)
	ok, _ := ndarray.AllClose(grid, ndarray.Must(ndarray.Arange(0.0, 1.25, 0.25)), 1e-5, 1e-8)
	fmt.Println(grid, ok, ndarray.Eye[int32](2))

	_, err := ndarray.AsTypeChecked[int8](ndarray.Full(1e10, 1))
	fmt.Println(err)
	// Output:
	// [3. 5. 7.] [1. 4.] [2 2] 15
	// [[-5. -7. -9.]
	//  [ 1. -1. -3.]]
	// [0.   0.25 0.5  0.75 1.  ] true [[1 0]
	//  [0 1]]
	// ndarray: AsTypeChecked float64 to int8: element 0 (1e+10) does not fit: unsupported dtype
}

// Variances and matrix products, as numpy.var/std (ddof) and numpy.matmul.
func ExampleMatMul() {
	x := ndarray.Must(ndarray.Must(ndarray.Arange(0.0, 6, 1)).Reshape(2, 3)) // [[0 1 2] [3 4 5]]
	w := ndarray.Must(ndarray.Must(ndarray.Arange(0.0, 3, 1)).Reshape(3, 1)) // a column
	y, _ := ndarray.MatMul(x, w)                                             // (2, 3) @ (3, 1)
	gram, _ := ndarray.MatMul(x, x.Transpose())                              // a view read in place
	fmt.Println(y, gram)

	sd, _ := ndarray.StdAxis(x, 0, 1) // each column's sample standard deviation
	fmt.Println(ndarray.Var(x, 0), sd)
	// Output:
	// [[ 5.]
	//  [14.]] [[ 5. 14.]
	//  [14. 50.]]
	// 2.9166666666666665 [2.12132034 2.12132034 2.12132034]
}
