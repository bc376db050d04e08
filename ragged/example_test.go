package ragged_test

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ragged"
)

// The ragged example of the TensorFlow Java Tensor I/O RFC: a 3×? array whose rows grow as
// elements are set.
func ExampleNew() {
	a := ragged.New[float32](3, -1)
	a.Set(10, 0, 0)
	a.Set(20, 0, 1)
	a.Set(30, 0, 2)
	a.Set(40, 1, 0)
	a.Set(50, 2, 0)
	a.Set(60, 2, 1)

	fmt.Println(a.Get(0, 1), a.Get(1, 0))
	for i, row := range a.Elements() {
		fmt.Println(i, row)
	}
	fmt.Println(a.Shape(), a.RowSplits())
	// Output:
	// 20 40
	// 0 [10, 20, 30]
	// 1 [40]
	// 2 [50, 60]
	// (3, -1) [[0 3 4 6]]
}

// TensorFlow's nested row splits over flat values, checked as TensorFlow checks them.
func ExampleFromRowSplits() {
	values := []int32{3, 1, 4, 1, 5, 9, 2, 6}
	a, err := ragged.FromRowSplits(values, []int64{0, 3, 3, 5}, []int64{0, 4, 4, 7, 8, 8})
	if err != nil {
		panic(err)
	}
	fmt.Println(a, a.Shape(), a.RaggedRank())

	_, err = ragged.FromRowSplits(values, []int64{0, 4, 3, 8})
	fmt.Println(err)
	// Output:
	// [[[3, 1, 4, 1], [], [5, 9, 2]], [], [[6], []]] (3, -1, -1) 2
	// ragged: level 0: row splits must not decrease: row_splits[2] = 3 after 4
}

// Padding to a dense array and back.
func ExampleArray_ToDense() {
	a, _ := ragged.FromRowSplits([]int64{1, 2, 3}, []int64{0, 2, 2, 3})
	d, _ := a.ToDense(-1)
	fmt.Println(d)
	b, _ := ragged.FromDense(d, a.RowLengths())
	fmt.Println(b)
	// Output:
	// [[ 1  2]
	//  [-1 -1]
	//  [ 3 -1]]
	// [[1, 2], [], [3]]
}
