package ndmat_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ndmat"
)

// A least-squares fit with gonum over a batch of features held in an ndarray, with no copy
// into or out of gonum.
func Example() {
	// Rows of [1, x] and the observed y = 2 + 3x.
	xy := ndarray.Must(ndarray.FromSlice([]float64{
		1, 0, 2,
		1, 1, 5,
		1, 2, 8,
		1, 3, 11,
	}, 4, 3))
	features, _ := ndmat.Matrix(ndarray.Must(xy.Slice(ndarray.All(), ndarray.Range(0, 2))))
	targets, _ := ndmat.Vector(ndarray.Must(xy.Slice(ndarray.All(), ndarray.At(2))))

	coef := ndarray.New[float64](2)
	solution, _ := ndmat.Vector(coef)
	if err := solution.SolveVec(features, targets); err != nil {
		panic(err)
	}
	fmt.Printf("%.3f\n", coef) // gonum wrote into the ndarray

	var product mat.Dense
	product.Mul(features.T(), features)
	gram, _ := ndmat.FromMatrix(&product) // and its result is an ndarray, viewed
	fmt.Println(gram.Shape(), gram)
	// Output:
	// [2.000 3.000]
	// (2, 2) [[ 4.  6.]
	//  [ 6. 14.]]
}
