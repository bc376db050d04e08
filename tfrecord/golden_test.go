package tfrecord_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// expectation is one line of testdata/expected.jsonl, written by testdata/expected.py from
// the files with Python's protobuf runtime and TensorFlow's own .proto definitions.
type expectation struct {
	File      string    `json:"file"`
	Records   int       `json:"records"`
	RawSHA256 []string  `json:"raw_sha256"`
	Name      string    `json:"name"`
	Column    string    `json:"column"`
	Kind      string    `json:"kind"`
	DType     string    `json:"dtype"`
	Shape     []int64   `json:"shape"`
	NNZ       int64     `json:"nnz"`
	SHA256    string    `json:"sha256"`
	RowSplits [][]int64 `json:"row_splits"`
}

// expected returns the lines of expected.jsonl: file lines, each followed by its features.
func expected(t *testing.T) []expectation {
	f, err := os.Open("testdata/expected.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out []expectation
	s := bufio.NewScanner(f)
	for s.Scan() {
		var e expectation
		require.NoError(t, json.Unmarshal(s.Bytes(), &e))
		out = append(out, e)
	}
	return out
}

// readGolden reads a file of testdata/tensorflow whole, both ways: Split over its bytes and the
// streaming Reader, which must agree.
func readGolden(t *testing.T, name string) [][]byte {
	b, err := os.ReadFile(filepath.Join("testdata/tensorflow", name))
	require.NoError(t, err)
	opts := tfrecord.Options{Compression: tfrecord.CompressionOf(name)}
	records, err := tfrecord.Split(b, opts)
	require.NoError(t, err)
	r, err := tfrecord.NewReader(bytes.NewReader(b), opts)
	require.NoError(t, err)
	defer r.Close()
	for i := 0; ; i++ {
		rec, err := r.Next()
		if err == io.EOF {
			assert.Equal(t, len(records), i, "records read by the streaming reader")
			break
		}
		require.NoError(t, err)
		require.Less(t, i, len(records))
		require.Equal(t, records[i], rec, "record %d", i)
	}
	return records
}

func TestGoldenFilesReadToTheirValues(t *testing.T) {
	var cols map[string]tfrecord.Column
	var file string
	for _, e := range expected(t) {
		if e.File != "" {
			file = e.File
			records := readGolden(t, e.File)
			require.Len(t, records, e.Records, e.File)
			for i, sum := range e.RawSHA256 {
				got := sha256.Sum256(records[i])
				assert.Equal(t, sum, hex.EncodeToString(got[:]), "%s record %d", e.File, i)
			}
			cols = nil
			switch typ := tfrecord.ClassifyFile(records); {
			case strings.HasPrefix(e.File, "lingvo_wmt"), strings.HasPrefix(e.File, "tfx"):
				require.Equal(t, tfrecord.TypeExample, typ, e.File)
				decoded, err := tfrecord.DecodeExamples(records, limits.Limits{})
				require.NoError(t, err)
				cols = map[string]tfrecord.Column{}
				for _, c := range decoded {
					cols[c.Name] = c
				}
			default:
				assert.Equal(t, tfrecord.TypeUnknown, typ, "%s holds neither Examples nor TensorProtos", e.File)
			}
			continue
		}
		c, ok := cols[e.Column]
		require.True(t, ok, "%s: feature %s", file, e.Column)
		h := sha256.New()
		switch e.Kind {
		case "dense":
			require.NotNil(t, c.Dense, e.Name)
			assert.Equal(t, e.Shape, []int64(c.Dense.Shape()), e.Name)
			_, err := c.Dense.WriteTo(h)
			require.NoError(t, err)
		case "ragged":
			require.NotNil(t, c.Ragged, e.Name)
			assert.Equal(t, e.RowSplits, c.Ragged.RowSplits(), e.Name)
			_, err := c.Ragged.WriteTo(h)
			require.NoError(t, err)
		}
		assert.Equal(t, e.DType, c.DType().String(), e.Name)
		assert.Equal(t, e.SHA256, hex.EncodeToString(h.Sum(nil)), e.Name)
	}
}

func TestMagentaRecordsAreItsStrings(t *testing.T) {
	records := readGolden(t, "magenta_tfrecord_iterator_test.tfrecord")
	got := make([]string, len(records))
	for i, r := range records {
		got[i] = string(r)
	}
	assert.Equal(t, []string{"hello world", "12345", "success"}, got)
}
