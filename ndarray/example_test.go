package ndarray_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ndarrow/ndarrow/ndarray"
)

// The "Example of usage" of the TensorFlow Java Tensor I/O RFC, in Go.
func Example() {
	// A boolean scalar.
	scalar := ndarray.New[bool]()
	fmt.Println("scalar rank", scalar.Rank(), "size", scalar.Size())
	scalar.Set(true)

	// An integer vector: the first elements from a slice, the last one directly.
	vector := ndarray.New[int32](4)
	head, _ := vector.Slice(ndarray.Range(0, 3))
	_ = head.CopyFrom([]int32{1, 2, 3})
	vector.Set(4, 3)

	// A float matrix initialized row by row through its elements.
	matrix := ndarray.New[float32](2, 3)
	for i, row := range matrix.Elements() {
		if i == 0 {
			_ = row.CopyFrom([]float32{0, 5, 10})
			continue
		}
		for j, v := range []float32{15, 20, 25} {
			row.Set(v, int64(j))
		}
	}

	// A 3-d matrix initialized from flat data.
	matrix3d := ndarray.New[float64](2, 2, 3)
	_ = matrix3d.CopyFrom([]float64{10.0, 10.1, 10.2, 11.0, 11.1, 11.2, 20.0, 20.1, 20.2, 21.0, 21.1, 21.2})

	// Strings read from a stream (each a 4-byte little-endian length, then the bytes).
	var stream bytes.Buffer
	for _, s := range []string{"in the town", "where I was", "born"} {
		_ = binary.Write(&stream, binary.LittleEndian, uint32(len(s)))
		stream.WriteString(s)
	}
	text := ndarray.New[string](3)
	_, _ = text.ReadFrom(&stream)

	// Reading data.
	fmt.Println(scalar.Get(), vector.Get(0), matrix.Get(0, 1), matrix3d.Get(1, 1, 1), text.Get(2))
	buffer := make([]int32, vector.Size())
	_ = vector.CopyTo(buffer)
	fmt.Println(buffer, slices.Collect(matrix.Values()))
	for _, m := range matrix3d.Elements() {
		fmt.Println(slices.Collect(m.Values()))
	}
	fmt.Printf("%q\n", slices.Collect(text.Values()))

	// Working with slices.
	if _, err := scalar.Slice(ndarray.At(0)); err != nil {
		fmt.Println("scalar.Slice(At(0)):", err)
	}
	v0, _ := vector.Slice(ndarray.At(0))
	fmt.Printf("vector.Slice(At(0)): %v (rank-%d)\n", v0, v0.Rank())
	m11, _ := matrix.Slice(ndarray.At(1), ndarray.At(1))
	fmt.Printf("matrix.Slice(At(1), At(1)): %v (rank-%d)\n", m11, m11.Rank())
	for _, tc := range []struct {
		expr    string
		indices []ndarray.Index
	}{
		// The RFC prints {10.0, 10.1} for this one: a typo for the whole first row.
		{"At(0), At(0)", []ndarray.Index{ndarray.At(0), ndarray.At(0)}},
		{"All(), At(0)", []ndarray.Index{ndarray.All(), ndarray.At(0)}},
		{"All(), At(0), At(0)", []ndarray.Index{ndarray.All(), ndarray.At(0), ndarray.At(0)}},
		{"All(), At(0), Incl(0, 2)", []ndarray.Index{ndarray.All(), ndarray.At(0), ndarray.Incl(0, 2)}},
		{"All(), All(), Excl(1)", []ndarray.Index{ndarray.All(), ndarray.All(), ndarray.Excl(1)}},
	} {
		s, _ := matrix3d.Slice(tc.indices...)
		fmt.Printf("matrix3d.Slice(%s): rank-%d\n%v\n", tc.expr, s.Rank(), s)
	}
	// An array used as an index: a rank-0 index drops the dimension, like At.
	t1, _ := text.Slice(ndarray.Take(ndarray.Scalar(int64(1))))
	fmt.Printf("text.Slice(Take(Scalar(1))): %v (rank-%d)\n", t1, t1.Rank())

	// Output:
	// scalar rank 0 size 1
	// true 1 5 21.1 born
	// [1 2 3 4] [0 5 10 15 20 25]
	// [10 10.1 10.2 11 11.1 11.2]
	// [20 20.1 20.2 21 21.1 21.2]
	// ["in the town" "where I was" "born"]
	// scalar.Slice(At(0)): ndarray: Slice [At(0)] of shape (): 1 indices for rank 0: index out of range
	// vector.Slice(At(0)): 1 (rank-0)
	// matrix.Slice(At(1), At(1)): 20. (rank-0)
	// matrix3d.Slice(At(0), At(0)): rank-1
	// [10.  10.1 10.2]
	// matrix3d.Slice(All(), At(0)): rank-2
	// [[10.  10.1 10.2]
	//  [20.  20.1 20.2]]
	// matrix3d.Slice(All(), At(0), At(0)): rank-1
	// [10. 20.]
	// matrix3d.Slice(All(), At(0), Incl(0, 2)): rank-2
	// [[10.  10.2]
	//  [20.  20.2]]
	// matrix3d.Slice(All(), All(), Excl(1)): rank-3
	// [[[10.  10.2]
	//   [11.  11.2]]
	//
	//  [[20.  20.2]
	//   [21.  21.2]]]
	// text.Slice(Take(Scalar(1))): "where I was" (rank-0)
}

func ExampleFromSlice() {
	data := []float32{1, 2, 3, 4, 5, 6}
	a, err := ndarray.FromSlice(data, 2, 3)
	if err != nil {
		panic(err)
	}
	a.Set(50, 1, 1) // writes into data: FromSlice does not copy
	fmt.Println(a.Shape(), data[4])
	fmt.Println(a)
	_, err = ndarray.FromSlice(data, 4, 2)
	fmt.Println(err)
	// Output:
	// (2, 3) 50
	// [[ 1.  2.  3.]
	//  [ 4. 50.  6.]]
	// ndarray: FromSlice: 6 values for shape (4, 2) of size 8: invalid or mismatched shape
}

func ExampleDense_Slice() {
	a := ndarray.New[int64](3, 4)
	for i := range a.Data() {
		a.Data()[i] = int64(i)
	}
	col, _ := a.Slice(ndarray.All(), ndarray.At(1)) // a view: shares memory
	col.Set(-1, 2)
	fmt.Println(col, a.Get(2, 1))

	rev, _ := a.Slice(ndarray.Flip(), ndarray.Odd()) // still a view: strides -4 and 2
	fmt.Println(rev, rev.SharesMemory(a))

	picked, _ := a.Slice(ndarray.Incl(2, 0, 1), ndarray.NewAxis()) // uneven: a copy
	fmt.Println(picked.Shape(), picked.SharesMemory(a))
	// Output:
	// [ 1  5 -1] -1
	// [[-1 11]
	//  [ 5  7]
	//  [ 1  3]] true
	// (3, 1, 4) false
}

func ExampleDense_Reshape() {
	a := ndarray.Must(ndarray.FromSlice([]int32{0, 1, 2, 3, 4, 5}, 2, 3))
	r, _ := a.Reshape(3, -1) // row-major: a view
	fmt.Println(r, r.SharesMemory(a))
	t, _ := a.Transpose().Reshape(-1) // a transpose cannot be flattened in place: a copy
	fmt.Println(t, t.SharesMemory(a))
	// Output:
	// [[0 1]
	//  [2 3]
	//  [4 5]] true
	// [0 3 1 4 2 5] false
}

func ExampleDense_Elements() {
	images := ndarray.New[uint8](2, 2, 2)
	for i, img := range images.Elements() { // each image is a view, kept or not
		_ = img.CopyFrom([]uint8{uint8(i), 1, 2, 3})
	}
	fmt.Println(slices.Collect(images.Values()))
	// Output: [0 1 2 3 1 1 2 3]
}

func ExampleDense_WriteTo() {
	a := ndarray.Must(ndarray.FromSlice([]int16{1, -2, 3, -4}, 2, 2))
	var buf bytes.Buffer
	n, _ := a.Transpose().WriteTo(&buf) // row-major order of the view, little-endian
	fmt.Println(n, buf.Bytes())
	b := ndarray.New[int16](2, 2)
	_, _ = b.ReadFrom(&buf)
	fmt.Println(b)
	// Output:
	// 8 [1 0 3 0 254 255 252 255]
	// [[ 1  3]
	//  [-2 -4]]
}

func ExampleDense_AsReadOnly() {
	a := ndarray.New[float64](2)
	r := a.AsReadOnly()
	a.Set(1.5, 0)
	fmt.Println(r.Get(0), r.ReadOnly())
	defer func() { fmt.Println("recovered:", recover()) }()
	r.Set(2, 0)
	// Output:
	// 1.5 true
	// recovered: ndarray: Set on a read-only array of shape (2,)
}

func ExampleDense_Format() {
	a := ndarray.Must(ndarray.FromSlice([]float64{1, 0.25, -3, 1e-9}, 2, 2))
	fmt.Println(a)
	fmt.Printf("%.2f\n", a)
	// Output:
	// [[ 1.0e+00  2.5e-01]
	//  [-3.0e+00  1.0e-09]]
	// [[ 1.00  0.25]
	//  [-3.00  0.00]]
}
