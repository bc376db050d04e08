package tfrecord_test

import (
	"bytes"
	"fmt"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// Write a table of tensors as one tf.train.Example per row, and read the Examples back as
// columns: what tf.data.TFRecordDataset with tf.io.parse_example reads.
func Example() {
	images := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 12, 1)).Reshape(3, 2, 2))
	tokens, err := ragged.FromRowSplits([]int64{7, 8, 9}, []int64{0, 2, 2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}

	var file bytes.Buffer
	w, _ := tfrecord.NewWriter(&file, tfrecord.GZIP)
	n, err := tfrecord.WriteExamples(w, []tfrecord.Column{
		{Name: "images", Dense: images},  // tf.io.FixedLenFeature([2, 2], tf.float32)
		{Name: "tokens", Ragged: tokens}, // tf.io.RaggedFeature(tf.int64)
	})
	if err != nil || w.Close() != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n, "Examples")

	records, err := tfrecord.Split(file.Bytes(), tfrecord.Options{Compression: tfrecord.GZIP})
	if err != nil {
		fmt.Println(err)
		return
	}
	cols, err := tfrecord.DecodeExamples(records, limits.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cols {
		if c.Dense != nil {
			fmt.Println(c.Name, "dense", c.Dense.DType(), c.Dense.Shape())
			continue
		}
		fmt.Println(c.Name, "ragged", c.Ragged.DType(), c.Ragged.RowSplits())
	}
	// Output:
	// 3 Examples
	// images dense float32 (3, 4)
	// tokens ragged int64 [[0 2 2 3]]
}

// A tensor as tf.io.serialize_tensor writes it, and back.
func ExampleEncodeTensor() {
	a := ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3))
	b, _ := tfrecord.EncodeTensor(a, []string{"batch", "feature"})
	fmt.Println(tfrecord.Classify(b))

	back, names, err := tfrecord.DecodeTensor(b, limits.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.DType(), back.Shape(), names)
	fmt.Println(back)
	// Output:
	// tensorflow.TensorProto
	// int32 (2, 3) [batch feature]
	// [[1 2 3]
	//  [4 5 6]]
}
