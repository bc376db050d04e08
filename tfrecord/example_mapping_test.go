package tfrecord_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/ragged"
	"github.com/ndarrow/ndarrow/sparse"
	"github.com/ndarrow/ndarrow/tfrecord"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// examples writes cols as Examples and decodes them back.
func examples(t *testing.T, cols ...tfrecord.Column) map[string]tfrecord.Column {
	var buf bytes.Buffer
	w, err := tfrecord.NewWriter(&buf, tfrecord.None)
	require.NoError(t, err)
	n, err := tfrecord.WriteExamples(w, cols)
	require.NoError(t, err)
	records, err := tfrecord.Split(buf.Bytes(), tfrecord.Options{})
	require.NoError(t, err)
	require.Len(t, records, int(n))
	if n > 0 {
		require.Equal(t, tfrecord.TypeExample, tfrecord.ClassifyFile(records))
	}
	got, err := tfrecord.DecodeExamples(records, limits.Limits{})
	require.NoError(t, err)
	out := map[string]tfrecord.Column{}
	for _, c := range got {
		out[c.Name] = c
	}
	return out
}

// valueBytes returns what WriteTo writes of a: the values in row-major order.
func valueBytes(t *testing.T, a interface {
	WriteTo(w io.Writer) (int64, error)
}) []byte {
	var buf bytes.Buffer
	_, err := a.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

func TestDenseColumnsOfEveryDTypeRoundTrip(t *testing.T) {
	for _, d := range ndarray.DTypes() {
		t.Run(d.String(), func(t *testing.T) {
			src := ndarray.Must(ndarray.Must(ndarray.Arange[float64](0, 24, 1)).Reshape(4, 2, 3))
			a, err := ndarray.ConvertTo(src, d)
			require.NoError(t, err)
			got := examples(t, tfrecord.Column{Name: "x", Dense: a})["x"]
			require.NotNil(t, got.Dense, "every row holds 6 values: dense")
			assert.Equal(t, ndarray.Shape{4, 6}, got.Dense.Shape(), "FixedLenFeature([2, 3]) parses rows of 6 row-major values")
			assert.Equal(t, tfrecord.FeatureDType(d), got.Dense.DType())
			want, err := ndarray.ConvertTo(a, tfrecord.FeatureDType(d))
			require.NoError(t, err)
			assert.Equal(t, valueBytes(t, want), valueBytes(t, got.Dense))
		})
	}
}

func TestFloatsRoundAndWiden(t *testing.T) {
	f64 := ndarray.Must(ndarray.FromSlice([]float64{0.1, 1e300, -1e-50, math.Pi}, 4))
	got := examples(t, tfrecord.Column{Name: "x", Dense: f64})["x"].Dense.(*ndarray.Dense[float32])
	assert.Equal(t, []float32{0.1, float32(math.Inf(1)), float32(math.Copysign(0, -1)), math.Pi}, got.Ravel(), "float64 rounds to the nearest float32")
	f16 := ndarray.Must(ndarray.FromSlice([]float16.Num{float16.New(0.5), float16.New(65504), float16.FromBits(1)}, 3))
	got = examples(t, tfrecord.Column{Name: "x", Dense: f16})["x"].Dense.(*ndarray.Dense[float32])
	assert.Equal(t, []float32{0.5, 65504, 0x1p-24}, got.Ravel(), "float16 widens exactly, subnormals included")
	big := ndarray.Must(ndarray.FromSlice([]uint64{1, math.MaxInt64 + 1}, 2))
	var buf bytes.Buffer
	w, _ := tfrecord.NewWriter(&buf, tfrecord.None)
	_, err := tfrecord.WriteExamples(w, []tfrecord.Column{{Name: "u", Dense: big}})
	assert.ErrorContains(t, err, "uint64 value 9223372036854775808 does not fit an int64_list")
}

func TestRaggedAndSparseColumnsRoundTrip(t *testing.T) {
	words := ndarray.Must(ndarray.FromSlice([]string{"a", "bb", "", "dddd"}, 4))
	r, err := ragged.FromRowSplits([]int32{1, 2, 3, 4, 5, 6}, []int64{0, 3, 3, 4, 6})
	require.NoError(t, err)
	nested, err := ragged.FromRowSplits([]float32{1, 2, 3, 4, 5}, []int64{0, 2, 2, 3, 3}, []int64{0, 1, 3, 5})
	require.NoError(t, err)
	coo := sparse.NewCOO[float64](4, 3, 5)
	coo.Set(1.5, 0, 2, 4)
	coo.Set(-2, 2, 0, 0)
	coo.Set(3, 2, 1, 3)
	got := examples(t,
		tfrecord.Column{Name: "words", Dense: words},
		tfrecord.Column{Name: "ids", Ragged: r},
		tfrecord.Column{Name: "nested", Ragged: nested},
		tfrecord.Column{Name: "sp", Sparse: coo},
	)
	assert.Equal(t, []string{"a", "bb", "", "dddd"}, got["words"].Dense.(*ndarray.Dense[string]).Ravel())
	ids := got["ids"].Ragged.(*ragged.Array[int64])
	assert.Equal(t, [][]int64{{0, 3, 3, 4, 6}}, ids.RowSplits(), "a record without values is an empty row")
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, ids.FlatValues())
	n := got["nested"].Ragged.(*ragged.Array[float32])
	assert.Equal(t, [][]int64{{0, 3, 3, 5, 5}}, n.RowSplits(), "a nested ragged row gives its flat values")
	assert.Equal(t, []float32{1, 2, 3, 4, 5}, n.FlatValues())
	// tf.io.SparseFeature(index_key=["sp/index/1", "sp/index/2"], value_key="sp/values", size=[3, 5])
	assert.Equal(t, [][]int64{{0, 1, 1, 3, 3}}, got["sp/values"].Ragged.RowSplits())
	assert.Equal(t, []float32{1.5, -2, 3}, got["sp/values"].Ragged.(*ragged.Array[float32]).FlatValues())
	assert.Equal(t, []int64{2, 0, 1}, got["sp/index/1"].Ragged.(*ragged.Array[int64]).FlatValues())
	assert.Equal(t, []int64{4, 0, 3}, got["sp/index/2"].Ragged.(*ragged.Array[int64]).FlatValues())
}

// TestBytesColumnsRoundTrip: string columns — bytes as tf.train.Example producers write them
// (ids, text, encoded images: any bytes, empty ones included) — become bytes_list features of
// a row's values, whatever their shape: [rows] one value per Example, [rows, n] n values,
// [rows, 0] an empty list in every Example, ragged rows as many values as the row has; and
// read back as the same bytes, one value per Example as [rows] (a [rows, 1] too: an Example
// records no shape).
func TestBytesColumnsRoundTrip(t *testing.T) {
	image := "\x89PNG\r\n\x1a\n\x00\xff"
	for _, tc := range []struct {
		name   string
		col    tfrecord.Column
		values [][]string // each Example's
		shape  ndarray.Shape
	}{
		{"one value per row", tfrecord.Column{Dense: ndarray.Must(ndarray.FromSlice([]string{"id-1", "", image}, 3))},
			[][]string{{"id-1"}, {""}, {image}}, ndarray.Shape{3}},
		{"a cell of one", tfrecord.Column{Dense: ndarray.Must(ndarray.FromSlice([]string{"a", "\xff", ""}, 3, 1))},
			[][]string{{"a"}, {"\xff"}, {""}}, ndarray.Shape{3}},
		{"cells of two", tfrecord.Column{Dense: ndarray.Must(ndarray.FromSlice([]string{"a", "b", "c", "d"}, 2, 2))},
			[][]string{{"a", "b"}, {"c", "d"}}, ndarray.Shape{2, 2}},
		{"empty cells", tfrecord.Column{Dense: ndarray.New[string](2, 0)}, [][]string{{}, {}}, ndarray.Shape{2, 0}},
		{"ragged rows", tfrecord.Column{Ragged: must(ragged.FromRowSplits([]string{"x", image, "", "héllo"}, []int64{0, 2, 2, 4}))},
			[][]string{{"x", image}, {}, {"", "héllo"}}, ndarray.Shape{3, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.col.Name = "b"
			var buf bytes.Buffer
			w, err := tfrecord.NewWriter(&buf, tfrecord.None)
			require.NoError(t, err)
			_, err = tfrecord.WriteExamples(w, []tfrecord.Column{tc.col})
			require.NoError(t, err)
			records, err := tfrecord.Split(buf.Bytes(), tfrecord.Options{})
			require.NoError(t, err)
			require.Len(t, records, len(tc.values))
			for i, r := range records {
				var ex tfpb.Example
				require.NoError(t, proto.Unmarshal(r, &ex))
				f := ex.GetFeatures().GetFeature()["b"]
				require.NotNil(t, f.GetBytesList(), "a bytes_list, even when empty")
				got := []string{}
				for _, v := range f.GetBytesList().GetValue() {
					got = append(got, string(v))
				}
				assert.Equal(t, tc.values[i], got, "Example %d", i)
			}
			back := examples(t, tc.col)["b"]
			if back.Ragged != nil {
				assert.Equal(t, tc.shape, back.Ragged.Shape())
			} else {
				assert.Equal(t, tc.shape, back.Dense.Shape())
			}
			assert.Equal(t, ndarray.String, back.DType())
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestColumnsMustAgree(t *testing.T) {
	a := ndarray.New[float32](3, 2)
	b := ndarray.New[float32](4)
	_, err := tfrecord.NewExampleEncoder([]tfrecord.Column{{Name: "a", Dense: a}, {Name: "b", Dense: b}})
	assert.ErrorContains(t, err, `column "b" has 4 rows, column "a" 3`)
	_, err = tfrecord.NewExampleEncoder([]tfrecord.Column{{Name: "a", Dense: a}, {Name: "a", Dense: a}})
	assert.ErrorContains(t, err, `feature "a" named twice`)
	_, err = tfrecord.NewExampleEncoder([]tfrecord.Column{{Name: "s", Dense: ndarray.Scalar[float32](1)}})
	assert.ErrorContains(t, err, "a scalar has no rows")
}

func TestSequenceExamplesReadAsTwoRaggedLevels(t *testing.T) {
	floats := func(v ...float32) *tfpb.Feature {
		return &tfpb.Feature{Kind: &tfpb.Feature_FloatList{FloatList: &tfpb.FloatList{Value: v}}}
	}
	word := func(s string) *tfpb.Feature {
		return &tfpb.Feature{Kind: &tfpb.Feature_BytesList{BytesList: &tfpb.BytesList{Value: [][]byte{[]byte(s)}}}}
	}
	records := [][]byte{}
	for _, se := range []*tfpb.SequenceExample{
		{Context: &tfpb.Features{Feature: map[string]*tfpb.Feature{"age": floats(19)}},
			FeatureLists: &tfpb.FeatureLists{FeatureList: map[string]*tfpb.FeatureList{
				"ratings": {Feature: []*tfpb.Feature{floats(4.5), floats(5, 3)}},
				"movies":  {Feature: []*tfpb.Feature{word("Fight Club")}},
			}}},
		{Context: &tfpb.Features{Feature: map[string]*tfpb.Feature{"age": floats(33)}},
			FeatureLists: &tfpb.FeatureLists{FeatureList: map[string]*tfpb.FeatureList{
				"ratings": {Feature: []*tfpb.Feature{floats(), floats(1), floats(2)}},
			}}},
	} {
		b, err := proto.Marshal(se)
		require.NoError(t, err)
		records = append(records, b)
	}
	require.Equal(t, tfrecord.TypeSequenceExample, tfrecord.ClassifyFile(records))
	cols, err := tfrecord.DecodeExamples(records, limits.Limits{})
	require.NoError(t, err)
	require.Len(t, cols, 3)
	assert.Equal(t, "age", cols[0].Name)
	assert.Equal(t, []float32{19, 33}, cols[0].Dense.(*ndarray.Dense[float32]).Ravel())
	assert.Equal(t, "movies", cols[1].Name)
	assert.Equal(t, [][]int64{{0, 1, 1}, {0, 1}}, cols[1].Ragged.RowSplits(), "a missing feature list is a record of no steps")
	ratings := cols[2].Ragged.(*ragged.Array[float32])
	assert.Equal(t, 2, ratings.RaggedRank())
	assert.Equal(t, [][]int64{{0, 2, 5}, {0, 1, 3, 3, 4, 5}}, ratings.RowSplits(), "records → steps → values")
	assert.Equal(t, []float32{4.5, 5, 3, 1, 2}, ratings.FlatValues())
}

func TestDecodeExamplesRefusesWhatIsNotAnExample(t *testing.T) {
	ex := &tfpb.Example{Features: &tfpb.Features{Feature: map[string]*tfpb.Feature{
		"x": {Kind: &tfpb.Feature_Int64List{Int64List: &tfpb.Int64List{Value: []int64{1, 300, 70000}}}}}}}
	good, err := proto.Marshal(ex)
	require.NoError(t, err)
	floatX, _ := proto.Marshal(&tfpb.Example{Features: &tfpb.Features{Feature: map[string]*tfpb.Feature{
		"x": {Kind: &tfpb.Feature_FloatList{FloatList: &tfpb.FloatList{Value: []float32{1}}}}}}})
	// An Example whose features field is a varint: the right number, the wrong wire type.
	wrongWire := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 5)
	many := func(n int) [][]byte {
		var out [][]byte
		for i := range n {
			b, _ := proto.Marshal(&tfpb.Example{Features: &tfpb.Features{Feature: map[string]*tfpb.Feature{
				fmt.Sprint("f", i): {Kind: &tfpb.Feature_Int64List{Int64List: &tfpb.Int64List{Value: []int64{1}}}}}}})
			out = append(out, b)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		records [][]byte
		lim     limits.Limits
		target  error
		msg     string
	}{
		{"packed list cut mid-value", [][]byte{good, good[:len(good)-1]}, limits.Limits{}, tfrecord.ErrInvalid, "record 1: not an Example"},
		{"wrong wire type", [][]byte{wrongWire}, limits.Limits{}, tfrecord.ErrInvalid, "record 0: fields an Example does not declare"},
		{"kinds differ", [][]byte{good, floatX}, limits.Limits{}, tfrecord.ErrInvalid, `record 1: feature "x" is a float_list, in record 0 a int64_list`},
		{"features × records bounded", many(100), limits.Limits{MaxDenseElements: 1000}, limits.ErrExceeded, "row splits, more than the limit of 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tfrecord.DecodeExamples(tc.records, tc.lim)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.target)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestClassifyTellsTypesApartAsAPersonWould(t *testing.T) {
	tensor, err := tfrecord.EncodeTensor(ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3}, 3)), nil)
	require.NoError(t, err)
	// Bytes that parse as an Example only by reading binary as a feature name.
	binaryName := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType),
		protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType),
			protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{0x01, 0x02, 0x7f})))
	for _, tc := range []struct {
		name   string
		record []byte
		want   tfrecord.RecordType
	}{
		{"empty", nil, tfrecord.TypeExample},
		{"tensor", tensor, tfrecord.TypeTensorProto},
		{"text", []byte("hello world"), tfrecord.TypeUnknown},
		{"binary feature name", binaryName, tfrecord.TypeUnknown},
	} {
		assert.Equal(t, tc.want, tfrecord.Classify(tc.record), tc.name)
	}
	events := readGolden(t, "lingvo_events.out.tfevents.test")
	for i, r := range events {
		require.Equal(t, tfrecord.TypeUnknown, tfrecord.Classify(r), "tensorflow.Event record %d", i)
	}
}

func TestFeatureDTypeIsTheListKinds(t *testing.T) {
	want := map[ndarray.DType]ndarray.DType{
		ndarray.Int8: ndarray.Int64, ndarray.Int16: ndarray.Int64, ndarray.Int32: ndarray.Int64, ndarray.Int64: ndarray.Int64,
		ndarray.Uint8: ndarray.Int64, ndarray.Uint16: ndarray.Int64, ndarray.Uint32: ndarray.Int64, ndarray.Uint64: ndarray.Int64,
		ndarray.Float16: ndarray.Float32, ndarray.Float32: ndarray.Float32, ndarray.Float64: ndarray.Float32,
		ndarray.Bool: ndarray.Int64, ndarray.String: ndarray.String,
	}
	require.Len(t, want, len(ndarray.DTypes()))
	for from, to := range want {
		assert.Equal(t, to, tfrecord.FeatureDType(from), "%v", from)
	}
}
