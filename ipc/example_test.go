package ipc_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/sparse"
)

// Write a tensor as an Arrow Tensor message and read it back without copying its values.
func ExampleWriteTensor() {
	images := ndarray.Must(ndarray.FromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2, 2, 3))
	var buf bytes.Buffer
	n, err := ipc.WriteTensor(&buf, images, []string{"image", "row", "col"})
	if err != nil {
		panic(err)
	}
	fmt.Println("wrote", n, "bytes")

	t, err := ipc.NewBytesReader(buf.Bytes(), ipc.Limits{}).Next()
	if err != nil {
		panic(err)
	}
	back, err := ipc.AsDense[float32](t)
	if err != nil {
		panic(err)
	}
	fmt.Println(t.DType(), t.Shape(), t.DimNames(), t.Strides())
	fmt.Println(back.Get(1, 0, 2), back.ReadOnly(), back.Equal(images))
	// Output:
	// wrote 304 bytes
	// float32 (2, 2, 3) [image row col] [24 12 4]
	// 8 true true
}

// Read every tensor of a file through a memory map: the arrays view the mapping, which stays
// mapped until the reader is closed and each tensor released.
func ExampleOpenFile() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "two.tensor")
	f, _ := os.Create(path)
	_, _ = ipc.WriteTensor(f, ndarray.Must(ndarray.FromSlice([]int64{1, 2, 3, 4}, 2, 2)), nil)
	_, _ = ipc.WriteTensor(f, ndarray.Must(ndarray.FromSlice([]int64{5, 6, 7, 8}, 2, 2)).Transpose(), nil)
	f.Close()

	rd, err := ipc.OpenFile(path, ipc.Limits{})
	if err != nil {
		panic(err)
	}
	defer rd.Close()
	tensors, err := rd.ReadAll()
	if err != nil {
		panic(err)
	}
	for _, t := range tensors {
		d, _ := ipc.AsDense[int64](t)
		fmt.Printf("%v strides %v\n%v\n", t.Shape(), t.Strides(), d)
		t.Release()
	}
	// Output:
	// (2, 2) strides [16 8]
	// [[1 2]
	//  [3 4]]
	// (2, 2) strides [8 16]
	// [[5 7]
	//  [6 8]]
}

// Write a sparse matrix as an Arrow SparseTensor message (what pyarrow.ipc.read_tensor reads as
// a SparseCSRMatrix) and read it back: the values and indices view the bytes.
func ExampleWriteSparse() {
	m := sparse.NewCOO[float64](3, 4)
	m.Set(1.5, 0, 1)
	m.Set(2.5, 2, 3)
	csr, _ := m.ToCSR()
	var buf bytes.Buffer
	if _, err := ipc.WriteSparse[float64](&buf, csr, []string{"row", "col"}); err != nil {
		panic(err)
	}

	s, err := ipc.NewBytesReader(buf.Bytes(), ipc.Limits{}).NextSparse()
	if err != nil {
		panic(err)
	}
	back, err := ipc.AsSparse[float64](s)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Format(), s.Shape(), s.DimNames(), s.NNZ(), s.IndexType())
	fmt.Println(back.Get(2, 3), back.ReadOnly(), sparse.Equal[float64](m, back))
	// Output:
	// csr (3, 4) [row col] 2 int32
	// 2.5 true true
}

// Read the record batches of an IPC stream (a file reads the same way) through the one
// verified decoder: every column is checked, then viewed in place. A fixed_shape_tensor
// column comes back as its extension type, and as a Dense view of the stream's bytes.
func ExampleBatchReader() {
	images := ndarray.Must(ndarray.FromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4, 3))
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "images", images, nil, 2) // two batches of two rows
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		_ = w.Write(r)
		r.Release()
	}
	_ = w.Close()

	r, err := ipc.NewBatchReader(buf.Bytes(), ipc.BatchOptions{})
	if err != nil {
		panic(err)
	}
	defer r.Release()
	fmt.Println(r.Schema().Field(0).Type)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err) // an error wrapping ipc.ErrInvalid, ErrLimit, ErrUnsupported or io.ErrUnexpectedEOF
		}
		d, _ := arrowtensor.ToDense[float32](rec.Column(0).(*arrowtensor.FixedShapeTensorArray))
		fmt.Println(d.Shape(), d.Get(1, 2), d.ReadOnly())
		rec.Release()
	}
	// Output:
	// extension<arrow.fixed_shape_tensor[float32, {"shape":[3]}]>
	// (2, 3) 5 true
	// (2, 3) 11 true
}
