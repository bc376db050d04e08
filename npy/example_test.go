package npy_test

import (
	"bytes"
	"fmt"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// Write an array as numpy.save would and read it back; a column-major array is written in
// Fortran order and read back as a column-major view.
func ExampleWrite() {
	a := ndarray.Must(ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)).Transpose()
	var buf bytes.Buffer
	if _, err := npy.Write(&buf, a); err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", buf.Bytes()[10:68])

	f, err := npy.ReadBytes(buf.Bytes(), npy.Limits{})
	if err != nil {
		panic(err)
	}
	back, _ := npy.AsDense[float64](f)
	fmt.Println(f.FortranOrder(), back.Shape(), back.Layout().IsColumnMajor())
	fmt.Println(back)
	// Output:
	// "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }"
	// true (3, 2) true
	// [[1. 4.]
	//  [2. 5.]
	//  [3. 6.]]
}

// Write arrays as an .npz archive, as numpy.savez does (numpy.load reads it), and read it
// back: the stored members' values are views of the archive.
func ExampleNpzWriter() {
	var buf bytes.Buffer
	z := npy.NewNpzWriter(&buf, false) // true: deflated, as numpy.savez_compressed
	features := ndarray.Must(ndarray.FromSlice([]float32{0.5, 1.5, 2.5, 3.5}, 2, 2))
	labels := ndarray.Must(ndarray.FromSlice([]int64{0, 1}, 2))
	if err := z.Write("features", features); err != nil {
		panic(err)
	}
	if err := z.Write("labels", labels); err != nil {
		panic(err)
	}
	if err := z.Close(); err != nil {
		panic(err)
	}

	arrays, err := npy.ReadNpz(buf.Bytes(), npy.Limits{})
	if err != nil {
		panic(err)
	}
	for _, a := range arrays {
		d, _ := a.Dense()
		fmt.Println(a.Name, d.DType(), d)
	}
	// Output:
	// features float32 [[0.5 1.5]
	//  [2.5 3.5]]
	// labels int64 [0 1]
}
