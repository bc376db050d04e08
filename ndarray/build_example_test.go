package ndarray_test

import (
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
)

func ExampleAsType() {
	readings := ndarray.Must(ndarray.FromSlice([]float64{-1.7, 0.5, 2.9, 300}, 4))
	bytes, _ := ndarray.AsType[uint8](readings) // truncated toward zero, saturating
	fmt.Println(bytes)
	labels, _ := ndarray.AsType[string](readings)
	fmt.Printf("%q\n", labels.Data())
	_, err := ndarray.AsType[int32](ndarray.Must(ndarray.FromSlice([]string{"7", "seven"}, 2)))
	fmt.Println(err)
	// Output:
	// [  0   0   2 255]
	// ["-1.7" "0.5" "2.9" "300"]
	// ndarray: AsType string to int32: element 1: "seven": unsupported dtype
}

func ExampleConvertTo() {
	var a ndarray.Array = ndarray.Must(ndarray.FromSlice([]int16{1, -2, 3}, 3))
	f, _ := ndarray.ConvertTo(a, ndarray.Float32) // the type known only at run time
	fmt.Println(f.DType(), f)
	// Output:
	// float32 [ 1. -2.  3.]
}

func ExampleConcat() {
	a := ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3, 4}, 2, 2))
	b := ndarray.Must(ndarray.FromSlice([]int32{5, 6}, 2, 1))
	c, _ := ndarray.Concat(1, a, b) // along the columns: numpy.concatenate([a, b], axis=1)
	fmt.Println(c)
	// Output:
	// [[1 2 5]
	//  [3 4 6]]
}

func ExampleStack() {
	red := ndarray.Full[uint8](255, 2, 2)
	green := ndarray.Full[uint8](128, 2, 2)
	blue := ndarray.New[uint8](2, 2)
	rgb, _ := ndarray.Stack(-1, red, green, blue) // channels last: shape (2, 2, 3)
	fmt.Println(rgb.Shape(), rgb.Get(1, 1, 0), rgb.Get(1, 1, 1))
	// Output:
	// (2, 2, 3) 255 128
}

func ExampleArange() {
	steps, _ := ndarray.Arange(0.0, 1, 0.25) // untyped constants: float64
	fmt.Println(steps)
	countdown, _ := ndarray.Arange[int8](5, 0, -2)
	fmt.Println(countdown)
	// Output:
	// [0.   0.25 0.5  0.75]
	// [5 3 1]
}

func ExampleFromFunc() {
	identity := ndarray.FromFunc(func(i []int64) float32 {
		if i[0] == i[1] {
			return 1
		}
		return 0
	}, 3, 3)
	fmt.Println(identity)
	// Output:
	// [[1. 0. 0.]
	//  [0. 1. 0.]
	//  [0. 0. 1.]]
}

func ExampleDense_Ravel() {
	m := ndarray.Must(ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	col := ndarray.Must(m.Slice(ndarray.All(), ndarray.At(1))) // m[:, 1], strided
	fmt.Println(len(col.Data()), col.Ravel())                  // Data is the whole backing
	row := ndarray.Must(m.Slice(ndarray.At(1)))
	values, ok := row.Contiguous() // a view of the run the row occupies
	values[0] = 40
	fmt.Println(values, ok, m.Get(1, 0))
	// Output:
	// 6 [2 5]
	// [40 5 6] true 40
}
