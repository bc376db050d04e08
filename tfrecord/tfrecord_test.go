package tfrecord_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// frame writes records with the given compression.
func frame(t testing.TB, c tfrecord.Compression, records ...[]byte) []byte {
	var buf bytes.Buffer
	w, err := tfrecord.NewWriter(&buf, c)
	require.NoError(t, err)
	for _, r := range records {
		require.NoError(t, w.WriteRecord(r))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readAll reads b through the streaming reader.
func readAll(b []byte, opts tfrecord.Options) ([][]byte, error) {
	r, err := tfrecord.NewReader(bytes.NewReader(b), opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, bytes.Clone(rec))
	}
}

func TestMaskedCRCIsTensorFlows(t *testing.T) {
	// magenta's file, written by TensorFlow, frames "hello world", "12345" and "success".
	want, err := os.ReadFile("testdata/tensorflow/magenta_tfrecord_iterator_test.tfrecord")
	require.NoError(t, err)
	b := frame(t, tfrecord.None, []byte("hello world"), []byte("12345"), []byte("success"))
	assert.Equal(t, want, b, "the same bytes, CRCs included")
	assert.True(t, tfrecord.Probe(b))
	assert.False(t, tfrecord.Probe([]byte("hello world, this is not a TFRecord")))
}

func TestRoundTripEveryCompression(t *testing.T) {
	records := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte{7}, 100_000), []byte("last")}
	for _, c := range []tfrecord.Compression{tfrecord.None, tfrecord.GZIP, tfrecord.ZLIB} {
		t.Run(c.String(), func(t *testing.T) {
			b := frame(t, c, records...)
			got, err := tfrecord.Split(b, tfrecord.Options{Compression: c})
			require.NoError(t, err)
			assert.Equal(t, records, got)
			got, err = readAll(b, tfrecord.Options{Compression: c})
			require.NoError(t, err)
			assert.Equal(t, records, got)
			parsed, err := tfrecord.ParseCompression(c.String())
			require.NoError(t, err)
			assert.Equal(t, c, parsed)
		})
	}
	// gzip -d reads concatenated members; so does the reader (and a member with a file name).
	var two bytes.Buffer
	for _, r := range records[:2] {
		z := gzip.NewWriter(&two)
		z.Name = "part.tfrecord"
		_, _ = z.Write(frame(t, tfrecord.None, r))
		require.NoError(t, z.Close())
	}
	got, err := tfrecord.Split(two.Bytes(), tfrecord.Options{Compression: tfrecord.GZIP})
	require.NoError(t, err)
	assert.Equal(t, records[:2], got)
}

func TestSplitViewsItsInput(t *testing.T) {
	b := frame(t, tfrecord.None, []byte("abc"), []byte("defg"))
	records, err := tfrecord.Split(b, tfrecord.Options{})
	require.NoError(t, err)
	b[12] = 'X'
	assert.Equal(t, "Xbc", string(records[0]), "a record is a view of the file's bytes")
	assert.Equal(t, 3, cap(records[0]), "an append to a record cannot overwrite the file")
}

func TestOpenMapsTheFile(t *testing.T) {
	f, err := tfrecord.Open("testdata/tensorflow/magenta_tfrecord_iterator_test.tfrecord", tfrecord.Options{})
	require.NoError(t, err)
	require.Len(t, f.Records, 3)
	assert.Equal(t, "success", string(f.Records[2]))
	f.Release()
	f, err = tfrecord.Open("testdata/tensorflow/tfx_penguin_eval.tfrecord.gz", tfrecord.Options{Compression: tfrecord.GZIP})
	require.NoError(t, err)
	assert.Len(t, f.Records, 100)
	f.Release()
	_, err = tfrecord.Open("testdata/tensorflow/tfx_penguin_eval.tfrecord.gz", tfrecord.Options{})
	assert.ErrorIs(t, err, tfrecord.ErrChecksum)
	assert.Equal(t, 1, strings.Count(err.Error(), "tfx_penguin_eval.tfrecord.gz"), "the path named once: %v", err)
	_, err = tfrecord.Open("testdata/none.tfrecord", tfrecord.Options{})
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestBadInput(t *testing.T) {
	good := frame(t, tfrecord.None, []byte("first"), []byte("second"))
	corrupt := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	hugeLength := func(n uint64) []byte {
		b := make([]byte, 12)
		binary.LittleEndian.PutUint64(b, n)
		binary.LittleEndian.PutUint32(b[8:], tfrecord.MaskedCRC(b[:8]))
		return b
	}
	gz := frame(t, tfrecord.GZIP, []byte("first"), bytes.Repeat([]byte("x"), 5000))
	bomb := frame(t, tfrecord.GZIP, make([]byte, 8<<20))
	for _, tc := range []struct {
		name   string
		input  []byte
		opts   tfrecord.Options
		target error
		msg    string
	}{
		{"bad length CRC", corrupt(func(b []byte) []byte { b[8] ^= 1; return b }), tfrecord.Options{}, tfrecord.ErrChecksum, "record 0 at byte 0: length checksum"},
		{"bad data CRC", corrupt(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), tfrecord.Options{}, tfrecord.ErrChecksum, "record 1 at byte 21: data checksum"},
		{"bad data", corrupt(func(b []byte) []byte { b[12] = 'F'; return b }), tfrecord.Options{}, tfrecord.ErrChecksum, "record 0 at byte 0: data checksum"},
		{"length past the end", corrupt(func(b []byte) []byte { return b[:len(b)-3] }), tfrecord.Options{}, io.ErrUnexpectedEOF, "record 1 at byte 21"},
		{"cut in a header", corrupt(func(b []byte) []byte { return b[:27] }), tfrecord.Options{}, io.ErrUnexpectedEOF, "record 1 at byte 21: file ends inside its header"},
		{"length 2^63", hugeLength(1 << 63), tfrecord.Options{}, limits.ErrExceeded, "length 9223372036854775808 exceeds the limit"},
		{"length above MaxRecordSize", frame(t, tfrecord.None, make([]byte, 100)), tfrecord.Options{MaxRecordSize: 99}, limits.ErrExceeded, "length 100 exceeds the limit of 99"},
		{"length 2^40, little data", append(hugeLength(1<<40), make([]byte, 100)...), tfrecord.Options{MaxRecordSize: 1 << 50}, io.ErrUnexpectedEOF, "record 0 at byte 0"},
		{"truncated gzip member", gz[:len(gz)-10], tfrecord.Options{Compression: tfrecord.GZIP}, io.ErrUnexpectedEOF, "ends"},
		{"gzip bomb", bomb, tfrecord.Options{Compression: tfrecord.GZIP, MaxDecompressedSize: 1 << 20}, limits.ErrExceeded, "more than the limit of 1048576 bytes"},
		{"not gzip", good, tfrecord.Options{Compression: tfrecord.GZIP}, tfrecord.ErrInvalid, "decompressing"},
		{"zlib of garbage", append([]byte{0x78, 0x9c}, good...), tfrecord.Options{Compression: tfrecord.ZLIB}, tfrecord.ErrInvalid, "decompressing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tfrecord.Split(tc.input, tc.opts)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.target)
			assert.Contains(t, err.Error(), tc.msg)
			_, err = readAll(tc.input, tc.opts)
			require.Error(t, err, "streaming")
			assert.ErrorIs(t, err, tc.target, "streaming")
			assert.Contains(t, err.Error(), tc.msg, "streaming")
		})
	}
	t.Run("checksums skipped", func(t *testing.T) {
		b := corrupt(func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
		got, err := tfrecord.Split(b, tfrecord.Options{SkipChecksums: true})
		require.NoError(t, err)
		assert.Equal(t, "second", string(got[1]))
	})
	t.Run("unknown compression", func(t *testing.T) {
		_, err := tfrecord.ParseCompression("lz4")
		assert.Error(t, err)
		_, err = tfrecord.NewWriter(io.Discard, tfrecord.Compression(9))
		assert.True(t, errors.Is(err, tfrecord.ErrUnsupported))
	})
}
