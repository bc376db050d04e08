package dataset_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
	"github.com/ndarrow/ndarrow/parquet"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// expected is a line of a golden folder's expected.jsonl.
type expected struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	DType     string    `json:"dtype"`
	Shape     []int64   `json:"shape"`
	DimNames  []string  `json:"dim_names"`
	NNZ       int64     `json:"nnz"`
	SHA256    string    `json:"sha256"`
	NVals     int64     `json:"nvals"`
	RowSplits [][]int64 `json:"row_splits"`
}

func readExpected(t *testing.T, path string) map[string]expected {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]expected{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e expected
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out[e.Name] = e
	}
	return out
}

// TestGoldenBatchFiles opens the record-batch files Arrow C++ 17 and Arrow JS wrote and
// compares every tensor with what their writers say a correct reader recovers.
func TestGoldenBatchFiles(t *testing.T) {
	for _, dir := range []string{"../ipc/testdata/arrow-cpp-17", "../ipc/testdata/arrow-js"} {
		want := readExpected(t, filepath.Join(dir, "expected.jsonl"))
		files, err := filepath.Glob(filepath.Join(dir, "*.arrow*"))
		require.NoError(t, err)
		for _, path := range files {
			if strings.HasPrefix(filepath.Base(path), "null_") {
				continue
			}
			t.Run(filepath.Base(path), func(t *testing.T) {
				f, err := dataset.Open(path, limits.Limits{})
				require.NoError(t, err)
				defer f.Release()
				require.NotEmpty(t, f.Tensors)
				for _, x := range f.Tensors {
					w, ok := want[x.Name]
					require.True(t, ok, "%s is not in expected.jsonl", x.Name)
					assert.Equal(t, w.Kind, string(x.Kind), x.Name)
					assert.Equal(t, w.DType, x.DType().String(), x.Name)
					if w.Shape != nil { // the C++ golden lines of ragged columns give none
						assert.Equal(t, w.Shape, []int64(x.Shape()), x.Name)
					}
					h := sha256.New()
					_, err := x.WriteValues(h, 0)
					require.NoError(t, err)
					assert.Equal(t, w.SHA256, hex.EncodeToString(h.Sum(nil)), x.Name)
					if x.Ragged != nil {
						assert.Equal(t, w.RowSplits, x.Ragged.RowSplits(), x.Name)
					}
				}
			})
		}
	}
}

// stream writes records (releasing them) as an IPC stream.
func stream(t *testing.T, schema *arrow.Schema, recs ...arrow.Record) []byte {
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(schema))
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestNoBatchesGiveTensorsOfNoRows: a stream of a schema alone (what a writer closed before
// any batch writes) holds tensors of zero rows, not an error.
func TestNoBatchesGiveTensorsOfNoRows(t *testing.T) {
	d := ndarray.New[float32](3, 2, 4)
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "images", d, nil, 3)
	require.NoError(t, err)
	schema := recs[0].Schema()
	recs[0].Release()
	got, _, err := dataset.Read(stream(t, schema), "x", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, ndarray.Shape{0, 2, 4}, got[0].Shape())
	assert.Equal(t, dataset.KindFixedShape, got[0].Kind)

	ragged := arrow.NewSchema([]arrow.Field{{Name: "r", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int16))}}, nil)
	got, _, err = dataset.Read(stream(t, ragged), "x", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, int64(0), got[0].Rows())
	assert.Equal(t, ndarray.Int16, got[0].DType())

	coo := sparse.NewCOO[float64](5, 7)
	rec, err := arrowtensor.COORecord(memory.DefaultAllocator, coo, nil)
	require.NoError(t, err)
	sch := rec.Schema()
	rec.Release()
	got, _, err = dataset.Read(stream(t, sch), "x", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, ndarray.Shape{5, 7}, got[0].Shape(), "the dense shape comes from the schema")
	assert.Equal(t, int64(0), got[0].NNZ())
}

// TestNullsNameTheColumnAndRow reads the Arrow JS files whose fixed_shape_tensor column has a
// null row or a null element.
func TestNullsNameTheColumnAndRow(t *testing.T) {
	for _, name := range []string{"null_row.arrows", "null_element.arrows"} {
		_, err := dataset.Open(filepath.Join("../ipc/testdata/arrow-js", name), limits.Limits{})
		assert.ErrorIs(t, err, arrowtensor.ErrNull, name)
		assert.ErrorContains(t, err, "column masked: row 1 is null or holds a null element", name)
	}
}

// TestColumnsThatAreNotTensors: columns of types the decoder does not build (run-end encoded)
// are left out, named with their type; plain columns and tensors beside them read.
func TestColumnsThatAreNotTensors(t *testing.T) {
	mem := memory.DefaultAllocator
	ree := arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32)
	rb := array.NewRunEndEncodedBuilder(mem, ree.RunEnds(), ree.Encoded())
	rb.Append(2)
	rb.ValueBuilder().(*array.Float32Builder).Append(1)
	runs := rb.NewArray()
	rb.Release()
	ints, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader("[1, 2]"))
	require.NoError(t, err)
	lists, _, err := array.FromJSON(mem, arrow.ListOf(arrow.PrimitiveTypes.Uint8), strings.NewReader("[[1], [2, 3]]"))
	require.NoError(t, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "runs", Type: ree}, {Name: "i", Type: ints.DataType()}, {Name: "l", Type: lists.DataType()}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{runs, ints, lists}, 2)
	runs.Release()
	ints.Release()
	lists.Release()
	got, left, err := dataset.Read(stream(t, schema, rec), "x", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "x.i", got[0].Name)
	ids, err := dataset.DenseOf[int64](got[0])
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, ids.Data())
	assert.Equal(t, "x.l", got[1].Name)
	assert.Equal(t, [][]int64{{0, 1, 3}}, got[1].Ragged.RowSplits())
	require.Len(t, left, 1)
	assert.Equal(t, dataset.LeftOut{Name: "x.runs", Column: "runs", Type: "run-end encoded", Why: "ndarrow reads no arrays of this type"}, left[0])
}

// TestLimitsReachTheDecoder: the limits given to Read bound what the input may claim.
func TestLimitsReachTheDecoder(t *testing.T) {
	recs, err := arrowtensor.Records(memory.DefaultAllocator, "images", ndarray.New[float32](100, 10), nil, 100)
	require.NoError(t, err)
	b := stream(t, recs[0].Schema(), recs...)
	_, _, err = dataset.Read(b, "x", limits.Limits{MaxElements: 500})
	assert.ErrorIs(t, err, ipc.ErrLimit)
	assert.ErrorIs(t, err, limits.ErrExceeded)
	_, _, err = dataset.Read(b, "x", limits.Limits{MaxElements: 1000})
	assert.NoError(t, err)

	_, _, err = dataset.Read([]byte("neither here nor there"), "x", limits.Limits{})
	assert.True(t, errors.Is(err, dataset.ErrNotTensors))
}

// TestDenseFormOfSparseIsBounded: WriteValues and DenseArray of a sparse tensor refuse above
// the limit they are given.
func TestDenseFormOfSparseIsBounded(t *testing.T) {
	coo := sparse.NewCOO[float32](1<<20, 1<<20)
	coo.Set(1, 3, 4)
	x := dataset.Tensor{Kind: dataset.SparseKind(sparse.FormatCOO), Sparse: coo}
	_, err := x.WriteValues(&bytes.Buffer{}, 0)
	assert.ErrorIs(t, err, sparse.ErrTooLarge)
	_, err = x.DenseArray(0)
	assert.ErrorIs(t, err, sparse.ErrTooLarge)
	r, err := ragged.FromRowSplits([]int8{1, 2, 3}, []int64{0, 1, 3})
	require.NoError(t, err)
	_, err = dataset.Tensor{Kind: dataset.KindRagged, Ragged: r}.DenseArray(0)
	assert.ErrorIs(t, err, dataset.ErrRagged)
	assert.ErrorIs(t, err, ndarray.ErrShape)
}

// Read the tensors of a record-batch stream: the fixed_shape_tensor column is a dense tensor
// of shape [rows, cell...], a view of the stream's bytes.
func ExampleRead() {
	d := ndarray.Must(ndarray.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3))
	recs, _ := arrowtensor.Records(memory.DefaultAllocator, "images", d, []string{"h", "w"}, 2)
	var buf bytes.Buffer
	w := arrowipc.NewWriter(&buf, arrowipc.WithSchema(recs[0].Schema()))
	_ = w.Write(recs[0])
	_ = w.Close()
	recs[0].Release()

	tensors, _, err := dataset.Read(buf.Bytes(), "batch", limits.Limits{})
	if err != nil {
		panic(err)
	}
	for _, x := range tensors {
		fmt.Println(x.Name, x.Kind, x.DType(), x.Shape(), x.DimNames)
	}
	// Output:
	// batch.images fixed_shape_tensor float32 (2, 2, 3) [ h w]
}

// FuzzRead reads arbitrary bytes as a tensor file of any format, as the CLI and the Flight
// server do: no panic, every error wraps a sentinel, and every tensor read has every value
// readable (a sparse one's dense form within a small limit) and survives a round trip
// through the record batch the Flight server would send.
func FuzzRead(f *testing.F) {
	for _, pattern := range []string{"../ipc/testdata/arrow-cpp-17/*", "../ipc/testdata/arrow-js/*.arrow*",
		"../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/*/*.stream", "../ipc/testdata/arrow-testing/arrow-ipc-*/crash-*",
		"../npy/testdata/numpy/*.npy", "../npy/testdata/*-npz/*.npz", "../tfrecord/testdata/tensorflow/magenta*",
		"../parquet/testdata/duckdb/*.parquet", "../parquet/testdata/arrow-rs/*.parquet", "testdata/scipy-npz/*.npz",
		"testdata/scipy-npz/ndarrow/*.npz"} {
		files, err := filepath.Glob(pattern)
		require.NoError(f, err)
		for _, path := range files {
			if b, err := os.ReadFile(path); err == nil && !strings.HasSuffix(path, ".jsonl") && !strings.HasSuffix(path, ".bin") {
				f.Add(b)
			}
		}
	}
	// TFRecord files of Examples and of TensorProtos, a few records each.
	gz, err := os.ReadFile("../tfrecord/testdata/tensorflow/tfx_penguin_eval.tfrecord.gz")
	require.NoError(f, err)
	examples, err := tfrecord.Split(gz, tfrecord.Options{Compression: tfrecord.GZIP})
	require.NoError(f, err)
	tensor, err := tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]int16{1, 2, 3, 4}, 2, 2)), []string{"a", "b"})
	require.NoError(f, err)
	for _, records := range [][][]byte{examples[:3], {tensor, tensor}} {
		var buf bytes.Buffer
		w, err := tfrecord.NewWriter(&buf, tfrecord.None)
		require.NoError(f, err)
		for _, r := range records {
			require.NoError(f, w.WriteRecord(r))
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := limits.Limits{MaxElements: 1 << 20, MaxCopySize: 64 << 20, MaxDenseElements: 1 << 20}
		tensors, _, err := dataset.Read(b, "f", lim)
		if dataset.Detect(b) == dataset.FormatParquet {
			scanAgrees(t, b, lim, tensors, err)
		}
		if err != nil {
			for _, s := range []error{ipc.ErrInvalid, ipc.ErrLimit, ipc.ErrUnsupported, io.ErrUnexpectedEOF, dataset.ErrNotTensors,
				arrowtensor.ErrNull, arrowtensor.ErrUnsupported, ndarray.ErrShape, ndarray.ErrDType, ndarray.ErrIndex,
				ragged.ErrInvalid, sparse.ErrInvalid, npy.ErrUnsupported, arrow.ErrInvalid, limits.ErrExceeded,
				tfrecord.ErrInvalid, tfrecord.ErrUnsupported, parquet.ErrUnsupported} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("an error without a sentinel: %v", err)
		}
		for _, x := range tensors {
			var want bytes.Buffer
			if _, err := x.WriteValues(&want, lim.MaxDenseElements); err != nil {
				if errors.Is(err, limits.ErrExceeded) {
					continue
				}
				t.Fatalf("%s read but its values cannot be written: %v", x.Name, err)
			}
			rec, err := x.Record(memory.DefaultAllocator, "f")
			if err != nil {
				continue // a tensor no record batch can hold (a scalar, a bool dense tensor)
			}
			var enc bytes.Buffer
			w := arrowipc.NewWriter(&enc, arrowipc.WithSchema(rec.Schema()))
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())
			rec.Release()
			back, _, err := dataset.Read(enc.Bytes(), "f", lim)
			require.NoError(t, err, "%s: what the Flight server would send does not read back", x.Name)
			require.Len(t, back, 1)
			var got bytes.Buffer
			_, err = back[0].WriteValues(&got, lim.MaxDenseElements)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want.Bytes(), got.Bytes()), "%s: values differ after a round trip", x.Name)
		}
	})
}

// scanAgrees checks that ScanDir's chunk-by-chunk reading of the Parquet file b gives the
// tensors Read gave (readErr == nil), or fails where Read failed, without a panic.
func scanAgrees(t *testing.T, b []byte, lim limits.Limits, tensors []dataset.Tensor, readErr error) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.parquet"), b, 0o644))
	d, err := dataset.ScanDir(dir, lim)
	require.NoError(t, err)
	defer d.Release()
	if len(d.Skipped) > 0 {
		require.Error(t, readErr, "ScanDir refused a file Read reads: %v", d.Skipped[0])
		return
	}
	failed := false
	var values [][]byte
	for _, src := range d.Sources {
		var buf bytes.Buffer
		for c, err := range src.Chunks(t.Context()) {
			if err != nil {
				failed = true
				break
			}
			if _, err := c.WriteValues(&buf, lim.MaxDenseElements); err != nil {
				failed = true
				break
			}
		}
		values = append(values, buf.Bytes())
	}
	if readErr != nil || failed {
		return // a row group that fails lazily fails Read too; Read may fail on what chunks never reach (the total)
	}
	require.Len(t, d.Sources, len(tensors))
	for i, x := range tensors {
		var want bytes.Buffer
		if _, err := x.WriteValues(&want, lim.MaxDenseElements); err != nil {
			continue
		}
		require.Equal(t, x.Name, d.Sources[i].Name)
		require.Equal(t, x.Shape(), d.Sources[i].Shape(), x.Name)
		require.True(t, bytes.Equal(want.Bytes(), values[i]), "%s: chunks differ from Read", x.Name)
	}
}

// TestMetadataKeepsWhatTypesCannot: what Batch writes into the field metadata and
// MessageMetadata into a Tensor message reads back — every dimension's name, a dense tensor's
// kind, a column's kind and name — and metadata that does not fit its column or message
// fails with ErrMetadata.
func TestMetadataKeepsWhatTypesCannot(t *testing.T) {
	d, err := ndarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	require.NoError(t, err)
	dense := dataset.Tensor{Name: "m", Kind: dataset.KindDense, DimNames: []string{"batch", "feat"}, Dense: d}
	rec, err := dataset.Batch(memory.DefaultAllocator, []dataset.Tensor{dense})
	require.NoError(t, err)
	got, _, err := dataset.Read(stream(t, rec.Schema(), rec), "x", limits.Limits{})
	rec.Release()
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, dataset.KindDense, got[0].Kind)
	assert.Equal(t, []string{"batch", "feat"}, got[0].DimNames, "the rows' name too")
	assert.Equal(t, "m", got[0].Column)

	column := dataset.Tensor{Name: "b.images", Kind: dataset.KindFixedShape, Column: "images", Dense: d}
	var buf bytes.Buffer
	_, err = ipc.WriteTensor(&buf, d, nil, ipc.WithMetadata(column.MessageMetadata()))
	require.NoError(t, err)
	got, _, err = dataset.Read(buf.Bytes(), "x", limits.Limits{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, dataset.KindFixedShape, got[0].Kind)
	assert.Equal(t, "images", got[0].Column)
	assert.Empty(t, dense.MessageMetadata().Keys(), "a dense tensor of no column: C++'s bytes")

	for name, md := range map[string]arrow.Metadata{
		"kind on a message":  arrow.NewMetadata([]string{dataset.KindKey}, []string{"ragged"}),
		"dense on a message": arrow.NewMetadata([]string{dataset.KindKey}, []string{"dense"}),
	} {
		buf.Reset()
		_, err = ipc.WriteTensor(&buf, d, nil, ipc.WithMetadata(md))
		require.NoError(t, err)
		_, _, err = dataset.Read(buf.Bytes(), "x", limits.Limits{})
		assert.ErrorIs(t, err, dataset.ErrMetadata, name)
	}
	lists, _, err := array.FromJSON(memory.DefaultAllocator, arrow.ListOf(arrow.PrimitiveTypes.Uint8), strings.NewReader("[[1], [2, 3]]"))
	require.NoError(t, err)
	defer lists.Release()
	for name, md := range map[string]arrow.Metadata{
		"dense on a ragged column": arrow.NewMetadata([]string{dataset.KindKey}, []string{"dense"}),
		"names not JSON":           arrow.NewMetadata([]string{dataset.DimNamesKey}, []string{"a,b"}),
		"one name for rank 2":      arrow.NewMetadata([]string{dataset.DimNamesKey}, []string{`["a"]`}),
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: lists.DataType(), Metadata: md}}, nil)
		rec := array.NewRecord(schema, []arrow.Array{lists}, 2)
		_, _, err := dataset.Read(stream(t, schema, rec), "x", limits.Limits{})
		rec.Release()
		assert.ErrorIs(t, err, dataset.ErrMetadata, name)
		assert.ErrorContains(t, err, "column l", name)
	}
}

// TestNpzArchives opens NumPy's .npz archives: every member is a dense tensor named
// NAME.MEMBER whose column is the member's name, with the values NumPy says it holds.
func TestNpzArchives(t *testing.T) {
	f, err := os.Open("../npy/testdata/numpy-npz/expected.jsonl")
	require.NoError(t, err)
	defer f.Close()
	want := map[string][]expected{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			expected
			Archive string `json:"archive"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		want[e.Archive] = append(want[e.Archive], e.expected)
	}
	for archive, members := range want {
		path := filepath.Join("../npy/testdata/numpy-npz", archive)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, dataset.FormatNpz, dataset.Detect(b))
		file, err := dataset.Open(path, limits.Limits{})
		require.NoError(t, err)
		require.Len(t, file.Tensors, len(members), archive)
		for i, m := range members {
			got := file.Tensors[i]
			base := dataset.BaseName(path)
			assert.Equal(t, base+"."+m.Name, got.Name)
			assert.Equal(t, m.Name, got.Column)
			assert.Equal(t, dataset.KindDense, got.Kind)
			assert.Equal(t, m.DType, got.DType().String())
			assert.Equal(t, ndarray.Shape(m.Shape), got.Shape())
			h := sha256.New()
			_, err := got.WriteValues(h, 0)
			require.NoError(t, err)
			assert.Equal(t, m.SHA256, hex.EncodeToString(h.Sum(nil)), got.Name)
		}
		file.Release()
	}
	_, _, err = dataset.Read([]byte("PK\x03"), "x", limits.Limits{})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut inside the magic")
}

// TestOpenDir reads a directory as one dataset: tensor files in name order under their
// names, other files left alone, unreadable files and parts that do not join (a part of a
// table of another dtype) reported in Skipped, each a SkippedFile naming its file and its
// table, each tensor's file retained beyond the Dir's Release.
func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	put := func(name, src string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	put("a.npy", "../npy/testdata/numpy/i64_vector.npy")
	put("b.npz", "../npy/testdata/numpy-npz/positional.npz")
	put("c.npy", "../npy/testdata/numpy/object_refuse.npy")
	put("t/0.npy", "../npy/testdata/numpy/i64_vector.npy")
	put("t/1.tensor", "../ipc/testdata/arrow-cpp-17/dense_float_7.tensor") // a part of t too
	require.NoError(t, os.WriteFile(filepath.Join(dir, "readme.md"), []byte("# data\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "nested"), 0o755))

	d, err := dataset.OpenDir(dir, limits.Limits{})
	require.NoError(t, err)
	var names []string
	for _, x := range d.Tensors {
		names = append(names, x.Name)
	}
	assert.Equal(t, []string{"a", "b.arr_0", "b.arr_1", "t"}, names)
	require.Len(t, d.Skipped, 2, "in path order")
	assert.ErrorIs(t, d.Skipped[0], npy.ErrUnsupported)
	assert.ErrorContains(t, d.Skipped[0], "c.npy")
	assert.ErrorContains(t, d.Skipped[1], filepath.Join(dir, "t", "1.tensor")+": t does not join the part in "+filepath.Join(dir, "t", "0.npy"))
	assert.ErrorIs(t, d.Skipped[1], ndarray.ErrDType)
	var sf *dataset.SkippedFile
	require.ErrorAs(t, d.Skipped[1], &sf)
	assert.Equal(t, dataset.SkippedFile{Path: filepath.Join(dir, "t", "1.tensor"), Table: "t", Err: sf.Err}, *sf)
	for _, err := range d.Skipped {
		assert.ErrorIs(t, err, dataset.ErrUnreadable)
	}

	require.Len(t, d.Sources, 4)
	src := d.Sources[2]
	assert.Equal(t, "b.arr_1", src.Name)
	src.Retain()
	d.Release()
	kept := d.Tensors[2]
	var buf bytes.Buffer
	_, err = kept.WriteValues(&buf, 0)
	require.NoError(t, err, "the retained Source's mapping outlives the Dir")
	assert.Len(t, buf.Bytes(), 2*2*4)
	src.Release()

	_, err = dataset.OpenDir(filepath.Join(dir, "missing"), limits.Limits{})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestArrowRSParquet: Parquet files arrow-rs wrote from Arrow C++'s record-batch stream (two
// row groups, ZSTD and Snappy) read as the same tensors as the stream: the stored Arrow
// schema brings back the fixed_shape_tensor columns and the large_list.
func TestArrowRSParquet(t *testing.T) {
	want, err := os.ReadFile("../ipc/testdata/arrow-cpp-17/batch_tensors.arrows")
	require.NoError(t, err)
	wantTensors, _, err := dataset.Read(want, "batch_tensors", limits.Limits{})
	require.NoError(t, err)
	for _, name := range []string{"batch_tensors.zstd.parquet", "batch_tensors.snappy.parquet"} {
		b, err := os.ReadFile(filepath.Join("../parquet/testdata/arrow-rs", name))
		require.NoError(t, err)
		got, _, err := dataset.Read(b, "batch_tensors", limits.Limits{})
		require.NoError(t, err, name)
		require.Len(t, got, len(wantTensors), name)
		for i, w := range wantTensors {
			g := got[i]
			assert.Equal(t, w.Name, g.Name, name)
			assert.Equal(t, w.Kind, g.Kind, "%s %s", name, w.Name)
			assert.Equal(t, w.DType(), g.DType(), "%s %s", name, w.Name)
			assert.Equal(t, w.Shape(), g.Shape(), "%s %s", name, w.Name)
			assert.Equal(t, w.DimNames, g.DimNames, "%s %s", name, w.Name)
			var wb, gb bytes.Buffer
			_, err := w.WriteValues(&wb, 0)
			require.NoError(t, err)
			_, err = g.WriteValues(&gb, 0)
			require.NoError(t, err)
			assert.Equal(t, wb.Bytes(), gb.Bytes(), "%s %s", name, w.Name)
			if w.Ragged != nil {
				assert.Equal(t, w.Ragged.RowSplits(), g.Ragged.RowSplits(), "%s %s", name, w.Name)
				assert.Equal(t, w.Ragged.SplitDType(), g.Ragged.SplitDType(), "%s %s: list or large_list", name, w.Name)
			}
		}
	}
}
