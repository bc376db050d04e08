package npy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

// TestNumPyStrings: the string arrays NumPy 1.24 wrote (testdata/numpy-strings: bytes, text in
// both byte orders, a 0-d bytes array as SciPy stores its format, Fortran order) read to
// their values, and WriteStrings writes each of them again byte for byte as numpy.save did
// (the big-endian one as little-endian text, as numpy.save of its values gives).
func TestNumPyStrings(t *testing.T) {
	dir := "testdata/numpy-strings"
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	var expected map[string]struct {
		Descr   string   `json:"descr"`
		Shape   []int64  `json:"shape"`
		Fortran bool     `json:"fortran"`
		Values  []string `json:"values"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	require.Len(t, expected, 5)
	for name, want := range expected {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		a, err := ReadBytes(b, Limits{})
		require.NoError(t, err, name)
		assert.Equal(t, want.Descr[1] == 'S', a.IsBytes(), name)
		d, err := AsStrings(a)
		require.NoError(t, err, name)
		assert.Equal(t, ndarray.Shape(want.Shape), d.Shape(), name)
		assert.Equal(t, want.Values, d.Clone().Data(), name)
		streamed, err := Read(bytes.NewReader(b), Limits{})
		require.NoError(t, err, name)
		sd, err := AsStrings(streamed)
		require.NoError(t, err)
		assert.Equal(t, want.Values, sd.Clone().Data(), name+": read from a stream")
		if want.Descr[0] == '>' || want.Fortran {
			continue // numpy.save writes them as they are; ndarrow writes little-endian C order
		}
		var buf bytes.Buffer
		_, err = WriteStrings(&buf, d, a.IsBytes())
		require.NoError(t, err)
		assert.Equal(t, b, buf.Bytes(), "%s: written again as numpy.save wrote it", name)
	}
}

// TestStringsRefused: text that is not UTF-8 cannot be written as text, and a code point that
// is not one cannot be read.
func TestStringsRefused(t *testing.T) {
	bad := ndarray.Must(ndarray.FromSlice([]string{"ok", "\xff"}, 2))
	_, err := WriteStrings(new(bytes.Buffer), bad, false)
	require.ErrorIs(t, err, ErrInvalid)
	var buf bytes.Buffer
	_, err = WriteArray(&buf, bad) // not all text: written as bytes
	require.NoError(t, err)
	a, err := ReadBytes(buf.Bytes(), Limits{})
	require.NoError(t, err)
	assert.True(t, a.IsBytes())

	buf.Reset()
	_, err = WriteStrings(&buf, ndarray.Must(ndarray.FromSlice([]string{"a"}, 1)), false)
	require.NoError(t, err)
	b := buf.Bytes()
	copy(b[len(b)-4:], []byte{0x00, 0xd8, 0x00, 0x00}) // U+D800, a surrogate
	a, err = ReadBytes(b, Limits{})
	require.NoError(t, err)
	_, err = AsStrings(a)
	require.ErrorIs(t, err, ErrInvalid)
}
