package arrowtensor_test

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Turn a batch of 3 tensors of shape 2×2 into an arrow.fixed_shape_tensor column and back,
// without copying the values either way.
func ExampleNewFixedShapeTensorArray() {
	batch := ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 3, 2, 2))
	col, err := arrowtensor.NewFixedShapeTensorArray(memory.DefaultAllocator, batch, []string{"y", "x"})
	if err != nil {
		panic(err)
	}
	defer col.Release()
	fmt.Println(col.Len(), col.DataType())

	back, err := arrowtensor.ToDense[int32](col)
	if err != nil {
		panic(err)
	}
	fmt.Println(back.Shape(), back.SharesMemory(batch))
	// Output:
	// 3 extension<arrow.fixed_shape_tensor[int32, {"shape":[2,2],"dim_names":["y","x"]}]>
	// (3, 2, 2) true
}

// Split a tensor of 5 rows into record batches of at most 2 rows, for an IPC stream or a
// Flight DoGet.
func ExampleRecords() {
	d := ndarray.New[float32](5, 4)
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "features", d, nil, 2)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Print(r.NumRows(), " ")
		r.Release()
	}
	fmt.Println()
	// Output: 2 2 1
}

// View an ndarray as an Arrow Go tensor and back.
func ExampleToTensor() {
	d := ndarray.Must(ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	t, err := arrowtensor.ToTensor(memory.DefaultAllocator, d.Transpose(), nil)
	if err != nil {
		panic(err)
	}
	defer t.Release()
	fmt.Println(t.Shape(), t.Strides(), t.IsColMajor())
	back, _ := arrowtensor.FromTensor[float64](t)
	fmt.Println(back)
	// Output:
	// [3 2] [8 24] true
	// [[1. 4.]
	//  [2. 5.]
	//  [3. 6.]]
}
