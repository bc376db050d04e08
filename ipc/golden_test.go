package ipc

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// expected is one line of testdata/arrow-cpp-17/expected.jsonl: what Arrow C++ 17 says the
// tensor NAME holds.
type expected struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	DType    string   `json:"dtype"`
	Shape    []int64  `json:"shape"`
	DimNames []string `json:"dim_names"`
	NNZ      int64    `json:"nnz"`
	SHA256   string   `json:"sha256"`
}

const goldenDir = "testdata/arrow-cpp-17"

func loadExpected(t *testing.T) map[string]expected {
	t.Helper()
	f, err := os.Open(filepath.Join(goldenDir, "expected.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]expected{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e expected
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out[e.Name] = e
	}
	require.NoError(t, sc.Err())
	return out
}

// goldenTensorFiles returns the dense tensor files and the expected names of their tensors.
func goldenTensorFiles(t *testing.T, want map[string]expected) map[string][]string {
	files := map[string][]string{}
	for name, e := range want {
		if e.Kind != "dense" {
			continue
		}
		file, _, _ := strings.Cut(name, ".")
		files[file] = append(files[file], name)
	}
	require.Contains(t, files, "multi_3")
	require.Len(t, files["multi_3"], 3)
	return files
}

func TestGoldenDenseTensors(t *testing.T) {
	want := loadExpected(t)
	files := goldenTensorFiles(t, want)
	readers := map[string]func(t *testing.T, path string) *TensorReader{
		"bytes": func(t *testing.T, path string) *TensorReader {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			return NewBytesReader(b, Limits{})
		},
		"io.Reader": func(t *testing.T, path string) *TensorReader {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			return NewReader(bytes.NewReader(b), Limits{})
		},
		"mmap": func(t *testing.T, path string) *TensorReader {
			rd, err := OpenFile(path, Limits{})
			require.NoError(t, err)
			return rd
		},
	}
	for file, names := range files {
		for how, open := range readers {
			t.Run(file+"/"+how, func(t *testing.T) {
				rd := open(t, filepath.Join(goldenDir, file+".tensor"))
				defer rd.Close()
				tensors, err := rd.ReadAll()
				require.NoError(t, err)
				require.Len(t, tensors, len(names))
				for i, tensor := range tensors {
					name := file
					if len(names) > 1 {
						name = file + "." + string(rune('0'+i))
					}
					e := want[name]
					assert.Equal(t, e.DType, tensor.DType().String(), name)
					assert.Equal(t, e.Shape, []int64(tensor.Shape()), name)
					if len(e.DimNames) == 0 {
						assert.Nil(t, tensor.DimNames(), name)
					} else {
						assert.Equal(t, e.DimNames, tensor.DimNames(), name)
					}
					var values bytes.Buffer
					_, err := tensor.WriteValues(&values)
					require.NoError(t, err)
					sum := sha256.Sum256(values.Bytes())
					assert.Equal(t, e.SHA256, hex.EncodeToString(sum[:]), name)
					bin, err := os.ReadFile(filepath.Join(goldenDir, name+".bin"))
					require.NoError(t, err)
					assert.True(t, bytes.Equal(bin, values.Bytes()), name)
					tensor.Release()
				}
			})
		}
	}
}
