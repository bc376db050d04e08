package dataset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
)

// Read a directory of files as one dataset, under the names ndarrow serve gives them.
func ExampleOpenDir() {
	dir, _ := os.MkdirTemp("", "dataset")
	defer os.RemoveAll(dir)
	for i, name := range []string{"train.npz", "test.npz"} {
		f, _ := os.Create(filepath.Join(dir, name))
		z := npy.NewNpzWriter(f, false)
		_ = z.Write("x", ndarray.Full(float32(i), 4-2*int64(i), 3))
		_ = z.Write("y", ndarray.Full(int64(i), 4-2*int64(i)))
		_ = z.Close()
		_ = f.Close()
	}
	_ = os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a tensor file\n"), 0o644)

	d, err := dataset.OpenDir(dir, limits.Limits{})
	if err != nil {
		panic(err)
	}
	defer d.Release()
	for _, t := range d.Tensors {
		fmt.Println(t.Name, t.DType(), t.Shape())
	}
	fmt.Println(len(d.Skipped), "skipped")
	// Output:
	// test.x float32 (2, 3)
	// test.y int64 (2,)
	// train.x float32 (4, 3)
	// train.y int64 (4,)
	// 0 skipped
}

// Read a partitioned Parquet table — part files in Hive-style key=value folders, as Spark,
// Ray and DuckDB write them — as one tensor per column, the parts' rows in path order.
func ExampleOpenDir_parquet() {
	dir, _ := os.MkdirTemp("", "dataset")
	defer os.RemoveAll(dir)
	for i, part := range []string{"day=1/part-0.parquet", "day=2/part-0.parquet"} {
		emb := ndarray.Full(float32(i), 3, 4) // three embeddings of 4 values
		rec, _ := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "emb", Dense: emb}})
		path := filepath.Join(dir, "embeddings", part)
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		f, _ := os.Create(path)
		w, _ := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{})
		_ = w.Write(rec)
		_ = w.Close()
		_ = f.Close()
		rec.Release()
	}
	_ = os.WriteFile(filepath.Join(dir, "embeddings", "_SUCCESS"), nil, 0o644)

	d, err := dataset.OpenDir(dir, limits.Limits{})
	if err != nil {
		panic(err)
	}
	defer d.Release()
	for _, t := range d.Tensors {
		fmt.Println(t.Name, t.Kind, t.DType(), t.Shape())
	}
	// Output:
	// embeddings.emb dense float32 (6, 4)
}

// ExampleScanDir reads a Parquet table a row group at a time: the Source is described before
// any value is read, and each chunk is decoded as the loop reaches it.
func ExampleScanDir() {
	dir, _ := os.MkdirTemp("", "dataset")
	defer os.RemoveAll(dir)
	emb := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 4000, 1)).Reshape(1000, 4))
	rec, _ := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{{Name: "emb", Kind: dataset.KindFixedShape, Dense: emb}})
	f, _ := os.Create(filepath.Join(dir, "embeddings.parquet"))
	w, _ := parquet.NewWriter(f, rec.Schema(), parquet.WriterOptions{RowGroupBytes: 4000}) // 250 rows each
	_ = w.Write(rec)
	_ = w.Close()
	_ = f.Close()
	rec.Release()

	d, err := dataset.ScanDir(dir, limits.Limits{})
	if err != nil {
		panic(err)
	}
	defer d.Release()
	src := d.Sources[0]
	fmt.Println(src.Name, src.Kind, src.DType(), src.Shape(), src.NumChunks(), "chunks")
	for chunk, err := range src.Chunks(context.Background()) {
		if err != nil {
			panic(err)
		}
		fmt.Println(chunk.Shape(), chunk.Dense.(*ndarray.Dense[float32]).Get(0, 0))
	}
	// Output:
	// embeddings.emb fixed_shape_tensor float32 (1000, 4) 4 chunks
	// (250, 4) 0
	// (250, 4) 1000
	// (250, 4) 2000
	// (250, 4) 3000
}

// Save writes tensors in the format a file name's extension names, atomically; Open reads
// them back, and DenseOf gives one typed.
func ExampleSave() {
	dir, _ := os.MkdirTemp("", "dataset")
	defer os.RemoveAll(dir)
	emb := ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 6, 1)).Reshape(3, 2))
	path := filepath.Join(dir, "features.parquet") // or .npy, .npz, .arrow, .tfrecord, …
	err := dataset.Save(path, []dataset.Tensor{{Name: "emb", Dense: emb, DimNames: []string{"row", "dim"}}}, dataset.WriteOptions{})
	if err != nil {
		panic(err)
	}
	f, err := dataset.Open(path, limits.Limits{})
	if err != nil {
		panic(err)
	}
	defer f.Release()
	t, _ := f.Tensor("features.emb")
	values, _ := dataset.DenseOf[float32](t)
	fmt.Println(t.Name, t.Shape(), t.DimNames, values.Get(2, 1))
	// Output: features.emb (3, 2) [row dim] 5
}

// Read a bucket prefix of Parquet files (a Hive-partitioned table, say) a row group at a
// time: only the footers are fetched when it is scanned, then each row group's column chunk
// as it is read. Credentials and the endpoint come from the environment, as for the AWS CLI
// (AWS_ENDPOINT_URL_S3 for an S3-compatible store); gs:// works the same way.
func ExampleScanDir_objects() {
	d, err := dataset.ScanDir("s3://my-bucket/events/", limits.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Release()
	for _, src := range d.Sources {
		for chunk, err := range src.Chunks(context.Background()) {
			if err != nil {
				fmt.Println(err) // an object replaced since it was listed, say
				break
			}
			fmt.Println(src.Name, chunk.Shape())
		}
	}
}

// Read a table's columns together — an embedding, its label and a name, row by row — with the
// label's null rows told apart from its values, then filled.
func ExampleFile_Table() {
	dir, _ := os.MkdirTemp("", "dataset")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "train.parquet")
	err := dataset.Save(path, []dataset.Tensor{
		{Name: "emb", Column: "emb", Dense: ndarray.Must(ndarray.Must(ndarray.Arange[float32](0, 6, 1)).Reshape(3, 2))},
		{Name: "label", Column: "label", Dense: ndarray.Must(ndarray.FromSlice([]int64{7, 0, 9}, 3)), Valid: []bool{true, false, true}},
		{Name: "name", Column: "name", Dense: ndarray.Must(ndarray.FromSlice([]string{"cat", "dog", "owl"}, 3))},
	}, dataset.WriteOptions{})
	if err != nil {
		panic(err)
	}

	f, err := dataset.Open(path, limits.Limits{})
	if err != nil {
		panic(err)
	}
	defer f.Release()
	table, err := f.Table()
	if err != nil {
		panic(err)
	}
	fmt.Println(table.Name, table.Rows, "rows:", table.Names(), len(table.LeftOut), "left out")
	embCol, _ := table.Column("emb")
	labelCol, _ := table.Column("label")
	nameCol, _ := table.Column("name")
	emb, _ := dataset.DenseOf[float32](embCol) // views of the mapped file
	labels, _ := dataset.DenseOf[int64](labelCol)
	names, _ := dataset.DenseOf[string](nameCol)
	for i := range table.Rows {
		row, _ := emb.Slice(ndarray.At(i), ndarray.All())
		if labelCol.Valid != nil && !labelCol.Valid[i] {
			fmt.Println(names.Get(i), row.Ravel(), "no label")
			continue
		}
		fmt.Println(names.Get(i), row.Ravel(), labels.Get(i))
	}
	filled, _ := labelCol.Filled("-1")
	fmt.Println(labelCol.NullCount(), "null label, filled:", ndarray.Must(dataset.DenseOf[int64](filled)).Data())
	// Output:
	// train 3 rows: [emb label name] 0 left out
	// cat [0 1] 7
	// dog [2 3] no label
	// owl [4 5] 9
	// 1 null label, filled: [7 -1 9]
}
