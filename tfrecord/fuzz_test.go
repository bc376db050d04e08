package tfrecord_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
	"github.com/ndarrow/ndarrow/tfrecord/tfpb"
)

// fuzzLimits keep a fuzzed input's work small.
var fuzzLimits = limits.Limits{MaxElements: 1 << 20, MaxDenseElements: 1 << 16, MaxCopySize: 16 << 20}

// seedFiles returns small TFRecord files (the golden files cut to their first records,
// framed uncompressed and GZIP) and, as inputs of other formats, NumPy's test files and
// Arrow's small IPC crash reproducers (corpora of ../shared/corpus copied into the repo).
// Large seeds make the fuzzer spend its time minimizing them.
func seedFiles(f *testing.F) [][]byte {
	var out [][]byte
	for _, name := range []string{"lingvo_wmt14_ende_wpm_32k_test.tfrecord", "tfx_penguin_eval.tfrecord.gz",
		"lingvo_events.out.tfevents.test", "magenta_tfrecord_iterator_test.tfrecord"} {
		b, err := os.ReadFile(filepath.Join("testdata/tensorflow", name))
		require.NoError(f, err)
		records, err := tfrecord.Split(b, tfrecord.Options{Compression: tfrecord.CompressionOf(name)})
		require.NoError(f, err)
		records = records[:min(2, len(records))]
		out = append(out, frame(f, tfrecord.None, records...), frame(f, tfrecord.GZIP, records...))
	}
	for _, pattern := range []string{"../npy/testdata/numpy/*.npy", "../ipc/testdata/arrow-testing/arrow-ipc-stream/clusterfuzz-*"} {
		files, err := filepath.Glob(pattern)
		require.NoError(f, err)
		for _, path := range files {
			b, err := os.ReadFile(path)
			require.NoError(f, err)
			if len(b) <= 4096 {
				out = append(out, b)
			}
		}
	}
	return out
}

// seedRecords returns records of every kind: the golden files' first records, Examples with
// every list kind, a SequenceExample and TensorProtos.
func seedRecords(f *testing.F) [][]byte {
	var out [][]byte
	for _, name := range []string{"lingvo_wmt14_ende_wpm_32k_test.tfrecord", "tfx_penguin_eval.tfrecord.gz", "lingvo_events.out.tfevents.test"} {
		b, err := os.ReadFile(filepath.Join("testdata/tensorflow", name))
		require.NoError(f, err)
		records, err := tfrecord.Split(b, tfrecord.Options{Compression: tfrecord.CompressionOf(name)})
		require.NoError(f, err)
		out = append(out, records[:3]...)
	}
	se, err := proto.Marshal(&tfpb.SequenceExample{
		Context: &tfpb.Features{Feature: map[string]*tfpb.Feature{"a": {Kind: &tfpb.Feature_BytesList{BytesList: &tfpb.BytesList{Value: [][]byte{[]byte("x")}}}}}},
		FeatureLists: &tfpb.FeatureLists{FeatureList: map[string]*tfpb.FeatureList{"l": {Feature: []*tfpb.Feature{
			{Kind: &tfpb.Feature_FloatList{FloatList: &tfpb.FloatList{Value: []float32{1, 2}}}}}}}},
	})
	require.NoError(f, err)
	out = append(out, se)
	for _, a := range []ndarray.Array{
		ndarray.Must(ndarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2)),
		ndarray.Must(ndarray.FromSlice([]string{"a", "bc"}, 2)),
		ndarray.Must(ndarray.FromSlice([]bool{true}, 1)),
	} {
		b, err := tfrecord.EncodeTensor(a, nil)
		require.NoError(f, err)
		out = append(out, b)
	}
	return out
}

// FuzzFraming reads arbitrary bytes as a TFRecord file, uncompressed or GZIP, in memory and
// streaming: both give the same records or both fail, with a sentinel.
func FuzzFraming(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b, false, false)
		f.Add(b, true, false)
	}
	f.Fuzz(func(t *testing.T, b []byte, gzip, skip bool) {
		opts := tfrecord.Options{SkipChecksums: skip, MaxRecordSize: 1 << 16, MaxDecompressedSize: 1 << 20}
		if gzip {
			opts.Compression = tfrecord.GZIP
		}
		records, err := tfrecord.Split(b, opts)
		checkSentinel(t, err)
		streamed, serr := readAll(b, opts)
		checkSentinel(t, serr)
		if (err == nil) != (serr == nil) {
			t.Fatalf("in memory: %v; streaming: %v", err, serr)
		}
		if err == nil {
			require.Equal(t, len(records), len(streamed))
			for i := range records {
				require.True(t, bytes.Equal(records[i], streamed[i]), "record %d", i)
			}
		}
	})
}

// checkSentinel fails unless err is nil or wraps one of the package's sentinels.
func checkSentinel(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range []error{tfrecord.ErrInvalid, tfrecord.ErrUnsupported, io.ErrUnexpectedEOF, limits.ErrExceeded} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("an error without a sentinel: %v", err)
}

// FuzzExamples decodes arbitrary records as Examples: no panic, a sentinel on error, and
// columns that hold a row per record and survive being written as Examples again.
func FuzzExamples(f *testing.F) {
	for _, r := range seedRecords(f) {
		f.Add(r, r)
	}
	f.Fuzz(func(t *testing.T, r0, r1 []byte) {
		records := [][]byte{r0, r1}
		_ = tfrecord.Classify(r0)
		cols, err := tfrecord.DecodeExamples(records, fuzzLimits)
		checkSentinel(t, err)
		if err != nil {
			return
		}
		var flat []tfrecord.Column
		for _, c := range cols {
			require.EqualValues(t, len(records), c.Rows(), c.Name)
			if c.Ragged == nil || c.Ragged.RaggedRank() == 1 {
				flat = append(flat, c)
			}
		}
		var buf bytes.Buffer
		w, err := tfrecord.NewWriter(&buf, tfrecord.None)
		require.NoError(t, err)
		_, err = tfrecord.WriteExamples(w, flat)
		require.NoError(t, err)
		again, err := tfrecord.Split(buf.Bytes(), tfrecord.Options{})
		require.NoError(t, err)
		back, err := tfrecord.DecodeExamples(again, fuzzLimits)
		require.NoError(t, err)
		require.Equal(t, len(flat), len(back))
		for i := range flat {
			require.Equal(t, flat[i].Name, back[i].Name)
			require.Equal(t, valuesOf(t, flat[i]), valuesOf(t, back[i]), flat[i].Name)
		}
	})
}

// valuesOf returns a column's shape and values as bytes.
func valuesOf(t *testing.T, c tfrecord.Column) []byte {
	var buf bytes.Buffer
	if c.Dense != nil {
		buf.WriteString(c.Dense.Shape().String())
		_, err := c.Dense.WriteTo(&buf)
		require.NoError(t, err)
		return buf.Bytes()
	}
	for _, s := range c.Ragged.RowSplits() {
		buf.WriteString(ndarray.Shape(s).String())
	}
	_, err := c.Ragged.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// FuzzTensorProto decodes an arbitrary record as a TensorProto: no panic, a sentinel on
// error, and a tensor that encodes back to the same values.
func FuzzTensorProto(f *testing.F) {
	for _, r := range seedRecords(f) {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, r []byte) {
		a, names, err := tfrecord.DecodeTensor(r, fuzzLimits)
		checkSentinel(t, err)
		if err != nil {
			return
		}
		b, err := tfrecord.EncodeTensor(a, names)
		require.NoError(t, err)
		back, backNames, err := tfrecord.DecodeTensor(b, fuzzLimits)
		require.NoError(t, err)
		require.Equal(t, names, backNames)
		require.Equal(t, a.Shape(), back.Shape())
		var x, y bytes.Buffer
		_, err = a.WriteTo(&x)
		require.NoError(t, err)
		_, err = back.WriteTo(&y)
		require.NoError(t, err)
		require.True(t, bytes.Equal(x.Bytes(), y.Bytes()))
	})
}
