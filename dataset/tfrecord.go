package dataset

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// FormatTFRecord is a TensorFlow TFRecord file (Detect tells only an uncompressed one, by its
// first record's CRCs; Open also goes by the name).
const FormatTFRecord Format = "tfrecord"

// UnmappedRecordsError is the error for a TFRecord file whose records are of a message type
// ndarrow does not map to tensors (raw bytes, tensorflow.Event, …). It wraps ErrNotTensors.
type UnmappedRecordsError struct {
	Records int // the number of records the file holds
}

// Error says how many records the file holds and that their type is not one ndarrow maps.
func (e *UnmappedRecordsError) Error() string {
	return fmt.Sprintf("a TFRecord file of %d records of a type ndarrow does not map (not tf.train.Example, SequenceExample or TensorProto)", e.Records)
}

// Unwrap returns ErrNotTensors.
func (e *UnmappedRecordsError) Unwrap() error { return ErrNotTensors }

// IsTFRecordName reports whether a file name says TFRecord: it ends in .tfrecord or
// .tfrecords, optionally followed by .gz (GZIP).
func IsTFRecordName(path string) bool {
	path = strings.TrimSuffix(withoutQuery(path), ".gz")
	return strings.HasSuffix(path, ".tfrecord") || strings.HasSuffix(path, ".tfrecords")
}

// OpenTFRecord maps the file at path into memory and reads it as a TFRecord file compressed as
// c, within lim: see ReadTFRecord. Open calls it for names IsTFRecordName accepts.
func OpenTFRecord(path string, c tfrecord.Compression, lim limits.Limits) (*File, error) {
	if IsURI(path) {
		return streamedTFRecord(context.Background(), path, nil, BaseName(path), c, lim, nil)
	}
	return mapped(context.Background(), path, lim, true, func(b []byte) ([]Tensor, error) { return ReadTFRecord(b, BaseName(path), c, lim) })
}

// ReadTFRecord reads the records of a TFRecord file b, compressed as c, into tensors named
// after base. Records of tf.train.Example or SequenceExample give one tensor per feature,
// BASE.FEATURE with Column FEATURE: dense [records, n] when every record holds n values, else
// ragged [records, -1] (a SequenceExample's feature list: ragged [records, -1, -1]); see
// tfrecord.DecodeExamples. Records of TensorProto give one dense tensor each, BASE.N. Records
// of any other type are an *UnmappedRecordsError. The tensors are copies: protocol buffers
// are decoded into the heap. A compressed file decompresses within lim.MaxCopySize.
func ReadTFRecord(b []byte, base string, c tfrecord.Compression, lim limits.Limits) ([]Tensor, error) {
	lim = lim.WithDefaults()
	records, err := tfrecord.Split(b, tfrecord.Options{Compression: c, MaxDecompressedSize: lim.MaxCopySize})
	if err != nil {
		return nil, err
	}
	return recordTensors(records, base, lim)
}

// ReadExamples reads the records of tf.train.Example (or SequenceExample) of a TFRecord file
// b, compressed as c, as tfrecord.ParseExamples does with spec: one tensor per feature of the
// spec, in its order, BASE.FEATURE with Column FEATURE — a fixed-length feature dense
// [records, shape...], a ragged one ragged [records, -1] — and the features the records hold
// that the spec does not name, each a LeftOut. Records that do not fit the spec are an error
// wrapping tfrecord.ErrSpec; records of another type one saying a spec is for Examples.
func ReadExamples(b []byte, base string, c tfrecord.Compression, spec []tfrecord.Feature, lim limits.Limits) ([]Tensor, []LeftOut, error) {
	lim = lim.WithDefaults()
	records, err := tfrecord.Split(b, tfrecord.Options{Compression: c, MaxDecompressedSize: lim.MaxCopySize})
	if err != nil {
		return nil, nil, err
	}
	switch t := tfrecord.ClassifyFile(records); t {
	case tfrecord.TypeExample, tfrecord.TypeSequenceExample:
	case tfrecord.TypeTensorProto:
		return nil, nil, fmt.Errorf("records of TensorProto: a feature spec is for tf.train.Example records: %w", tfrecord.ErrSpec)
	default:
		return nil, nil, &UnmappedRecordsError{Records: len(records)}
	}
	all, err := tfrecord.DecodeExamples(records, lim)
	if err != nil {
		return nil, nil, err
	}
	cols, err := tfrecord.ParseColumns(all, len(records), spec, lim)
	if err != nil {
		return nil, nil, err
	}
	var left []LeftOut
	for _, col := range all {
		if !slices.ContainsFunc(spec, func(f tfrecord.Feature) bool { return f.Name == col.Name }) {
			left = append(left, LeftOut{Name: base + "." + col.Name, Column: col.Name, Type: "feature", Why: "the feature spec does not name it"})
		}
	}
	return examplesTensors(cols, base), left, nil
}

// OpenExamples maps the file at path (or fetches the object) and reads it with ReadExamples;
// the features the spec leaves out are the File's LeftOut.
func OpenExamples(path string, c tfrecord.Compression, spec []tfrecord.Feature, lim limits.Limits) (*File, error) {
	var left []LeftOut
	f, err := mapped(context.Background(), path, lim, true, func(b []byte) ([]Tensor, error) {
		tensors, l, err := ReadExamples(b, BaseName(path), c, spec, lim)
		left = l
		return tensors, err
	})
	if err != nil {
		return nil, err
	}
	f.LeftOut = left
	return f, nil
}

// examplesTensors returns the tensors of the columns of Examples, named after base.
func examplesTensors(cols []tfrecord.Column, base string) []Tensor {
	out := make([]Tensor, len(cols))
	for i, col := range cols {
		out[i] = Tensor{Name: base + "." + col.Name, Column: col.Name, Kind: KindDense, Dense: col.Dense}
		if col.Ragged != nil {
			out[i].Kind, out[i].Dense, out[i].Ragged = KindRagged, nil, col.Ragged
		}
		// A bytes_list holds bytes (TensorFlow has no text type): binary columns.
		out[i].Bytes = out[i].DType() == ndarray.String
	}
	return out
}

// recordTensors returns the tensors of a TFRecord file's records, as ReadTFRecord does.
func recordTensors(records [][]byte, base string, lim limits.Limits) ([]Tensor, error) {
	switch tfrecord.ClassifyFile(records) {
	case tfrecord.TypeExample, tfrecord.TypeSequenceExample:
		cols, err := tfrecord.DecodeExamples(records, lim)
		if err != nil {
			return nil, err
		}
		return examplesTensors(cols, base), nil
	case tfrecord.TypeTensorProto:
		out := make([]Tensor, len(records))
		for i, rec := range records {
			a, names, err := tfrecord.DecodeTensor(rec, lim)
			if err != nil {
				return nil, fmt.Errorf("record %d: %w", i, err)
			}
			out[i] = Tensor{Name: base + "." + strconv.Itoa(i), Kind: KindDense, DimNames: names, Dense: a}
		}
		return out, nil
	}
	return nil, &UnmappedRecordsError{Records: len(records)}
}
