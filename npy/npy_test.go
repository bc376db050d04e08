package npy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
)

type expected struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
	SHA256 string  `json:"sha256"`
}

const goldenDir = "testdata/numpy"

func loadExpected(t *testing.T) []expected {
	f, err := os.Open(filepath.Join(goldenDir, "expected.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []expected
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e expected
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out = append(out, e)
	}
	require.NotEmpty(t, out)
	return out
}

// readers are the three ways to read a file.
var readers = map[string]func(t *testing.T, path string) (*Array, error){
	"bytes": func(t *testing.T, path string) (*Array, error) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return ReadBytes(b, Limits{})
	},
	"io.Reader": func(t *testing.T, path string) (*Array, error) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return Read(bytes.NewReader(b), Limits{})
	},
	"mmap": func(t *testing.T, path string) (*Array, error) { return Open(path, Limits{}) },
}

func TestGoldenNumPyFiles(t *testing.T) {
	for _, e := range loadExpected(t) {
		for how, read := range readers {
			t.Run(e.Name+"/"+how, func(t *testing.T) {
				a, err := read(t, filepath.Join(goldenDir, e.Name+".npy"))
				if e.Kind == "error" {
					assert.Nil(t, a)
					assert.ErrorIs(t, err, ErrUnsupported)
					assert.ErrorContains(t, err, "never unpickled")
					return
				}
				require.NoError(t, err)
				defer a.Release()
				assert.Equal(t, e.DType, a.DType().String())
				assert.Equal(t, e.Shape, []int64(a.Shape()))
				var values bytes.Buffer
				_, err = a.WriteValues(&values)
				require.NoError(t, err)
				sum := sha256.Sum256(values.Bytes())
				assert.Equal(t, e.SHA256, hex.EncodeToString(sum[:]))
			})
		}
	}
}

// rewrite reads a golden file and writes its array again with Write.
func rewrite(t *testing.T, a *Array) []byte {
	var buf bytes.Buffer
	var err error
	switch a.DType() {
	case ndarray.Bool:
		_, err = Write(&buf, ndarray.Must(AsBool(a)))
	case ndarray.Int16:
		_, err = Write(&buf, ndarray.Must(AsDense[int16](a)))
	case ndarray.Int64:
		_, err = Write(&buf, ndarray.Must(AsDense[int64](a)))
	case ndarray.Uint8:
		_, err = Write(&buf, ndarray.Must(AsDense[uint8](a)))
	case ndarray.Uint64:
		_, err = Write(&buf, ndarray.Must(AsDense[uint64](a)))
	case ndarray.Float16:
		_, err = Write(&buf, ndarray.Must(AsDense[float16.Num](a)))
	case ndarray.Float32:
		_, err = Write(&buf, ndarray.Must(AsDense[float32](a)))
	case ndarray.Float64:
		_, err = Write(&buf, ndarray.Must(AsDense[float64](a)))
	default:
		t.Fatalf("no case for %v", a.DType())
	}
	require.NoError(t, err)
	return buf.Bytes()
}

// TestWriteMatchesNumPy writes every golden array again: the bytes are numpy.save's, except
// for the two files NumPy was asked to write unusually (big-endian data, a 2.0 header), which
// ndarrow writes little-endian with a 1.0 header as numpy.save does by default.
func TestWriteMatchesNumPy(t *testing.T) {
	for _, e := range loadExpected(t) {
		if e.Kind == "error" {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join(goldenDir, e.Name+".npy"))
			require.NoError(t, err)
			a, err := ReadBytes(orig, Limits{})
			require.NoError(t, err)
			ours := rewrite(t, a)
			back, err := ReadBytes(ours, Limits{})
			require.NoError(t, err)
			assert.Equal(t, a.Shape(), back.Shape())
			assert.Equal(t, a.FortranOrder(), back.FortranOrder())
			assert.Zero(t, (len(ours)-len(back.Data()))%alignment, "the data starts 64-byte aligned")
			switch e.Name {
			case "f64_bigendian", "f32_v2header":
				assert.NotEqual(t, orig, ours)
				assert.Equal(t, a.Data(), back.Data(), "same values")
			default:
				assert.Equal(t, orig, ours, "byte for byte what numpy.save wrote")
			}
		})
	}
}

func TestFortranOrderIsAColumnMajorView(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(goldenDir, "f64_fortran.npy"))
	require.NoError(t, err)
	a, err := ReadBytes(b, Limits{})
	require.NoError(t, err)
	d, err := AsDense[float64](a)
	require.NoError(t, err)
	assert.True(t, d.Layout().IsColumnMajor())
	assert.False(t, d.IsContiguous(), "not row-major: no copy was made")
	assert.True(t, d.ReadOnly())
	start := uintptr(unsafe.Pointer(&b[0]))
	at := uintptr(unsafe.Pointer(&d.Data()[0]))
	assert.True(t, at >= start && at < start+uintptr(len(b)), "values point into the file's bytes")
}

func TestBigEndianIsConverted(t *testing.T) {
	a, err := Open(filepath.Join(goldenDir, "f64_bigendian.npy"), Limits{})
	require.NoError(t, err)
	defer a.Release()
	d, err := AsDense[float64](a)
	require.NoError(t, err)
	assert.False(t, d.ReadOnly(), "a converted copy is the caller's")
	assert.Equal(t, ndarray.Shape{3, 3}, d.Shape())
}

func TestWriteEveryLayoutAndType(t *testing.T) {
	src := ndarray.Must(ndarray.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3))
	for name, d := range map[string]*ndarray.Dense[int32]{
		"C":       src,
		"Fortran": src.Transpose(),
		"strided": ndarray.Must(src.Slice(ndarray.All(), ndarray.Step(2))),
		"scalar":  ndarray.Scalar(int32(7)),
		"empty":   ndarray.New[int32](0, 3),
	} {
		var buf bytes.Buffer
		n, err := Write(&buf, d)
		require.NoError(t, err, name)
		assert.Equal(t, int64(buf.Len()), n)
		a, err := Read(bytes.NewReader(buf.Bytes()), Limits{})
		require.NoError(t, err, name)
		got := ndarray.Must(AsDense[int32](a))
		assert.True(t, got.Equal(d), name)
		assert.Equal(t, name == "Fortran", a.FortranOrder(), name)
	}
	var buf bytes.Buffer
	_, err := Write(&buf, ndarray.Must(ndarray.FromSlice([]bool{true, false, true}, 3)))
	require.NoError(t, err)
	a, err := ReadBytes(buf.Bytes(), Limits{})
	require.NoError(t, err)
	assert.Equal(t, "[ true false  true]", ndarray.Must(AsBool(a)).String())
}

func TestLongHeaderUsesVersion2(t *testing.T) {
	shape := make([]int64, 64)
	for i := range shape {
		shape[i] = 1
	}
	h := Header(ndarray.Float32, shape, false)
	assert.Equal(t, byte(1), h[6], "64 dimensions still fit format 1.0")
	assert.Zero(t, len(h)%alignment)
}

func TestBadNpy(t *testing.T) {
	valid := func() []byte {
		var buf bytes.Buffer
		_, _ = Write(&buf, ndarray.Must(ndarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2)))
		return buf.Bytes()
	}
	withHeader := func(dict string) []byte {
		text := dict + "\n"
		b := append([]byte(magic), 1, 0, byte(len(text)), byte(len(text)>>8))
		return append(append(b, text...), make([]byte, 16)...)
	}
	for _, tc := range []struct {
		name  string
		input []byte
		lim   Limits
		err   error
		msg   string
	}{
		{"empty", nil, Limits{}, io.ErrUnexpectedEOF, "preamble"},
		{"bad magic", []byte("\x93NUMPZ\x01\x00\x00\x00"), Limits{}, ErrInvalid, "magic"},
		{"short magic", []byte("\x93NUM"), Limits{}, io.ErrUnexpectedEOF, "preamble"},
		{"bad version", append([]byte(magic), 9, 0, 0, 0, 0, 0), Limits{}, ErrInvalid, "format version 9.0"},
		{"header beyond the file", append([]byte(magic), 1, 0, 0xff, 0x0f), Limits{}, io.ErrUnexpectedEOF, "header"},
		{"header beyond the limit", valid(), Limits{MaxMetadataSize: 16}, ErrLimit, "exceeds the limit"},
		{"header not a dict", withHeader("['descr', '<f4']"), Limits{}, ErrInvalid, "expected '{'"},
		{"unknown key", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}"), Limits{}, ErrInvalid, "unexpected key"},
		{"missing shape", withHeader("{'descr': '<f4', 'fortran_order': False}"), Limits{}, ErrInvalid, `no "shape" key`},
		{"duplicate key", withHeader("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}"), Limits{}, ErrInvalid, "twice"},
		{"unknown dtype", withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}"), Limits{}, ErrUnsupported, "<c8"},
		{"complex", withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}"), Limits{}, ErrUnsupported, "<c8"},
		{"string width", withHeader("{'descr': '<U0', 'fortran_order': False, 'shape': (1,)}"), Limits{}, ErrUnsupported, "<U0"},
		{"huge strings", withHeader("{'descr': '|S99999999', 'fortran_order': False, 'shape': (1,)}"), Limits{}, ErrUnsupported, "|S99999999"},
		{"object array", withHeader("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}"), Limits{}, ErrUnsupported, "never unpickled"},
		{"negative dimension", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2)}"), Limits{}, ErrInvalid, "expected a dimension"},
		{"shape overflow", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"), Limits{MaxElements: 1 << 62}, ErrInvalid, "overflow"},
		{"too many elements", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,)}"), Limits{MaxElements: 1 << 20}, ErrLimit, "more than the limit"},
		{"one-element shape without comma", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4)}"), Limits{}, ErrInvalid, "trailing comma"},
		{"data shorter than the shape", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}"), Limits{}, io.ErrUnexpectedEOF, "needs 20 bytes"},
		{"data longer than the shape", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}"), Limits{}, ErrInvalid, "needs 12 bytes of data, the file holds 16"},
		{"text after the dict", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x"), Limits{}, ErrInvalid, "text after"},
		{"not True or False", withHeader("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}"), Limits{}, ErrInvalid, "True or False"},
		{"non-ASCII header", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}\xff"), Limits{}, ErrInvalid, "not ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ReadBytes(tc.input, tc.lim)
			assert.Nil(t, a)
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.msg)
			if tc.name == "data longer than the shape" {
				return // a stream reader stops after the data and cannot see more
			}
			a, err = Read(bytes.NewReader(tc.input), tc.lim)
			assert.Nil(t, a)
			assert.ErrorIs(t, err, tc.err, "Read agrees")
		})
	}
	t.Run("truncated at every byte", func(t *testing.T) {
		b := valid()
		for n := 1; n < len(b); n++ {
			_, err := ReadBytes(b[:n], Limits{})
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%d bytes", n)
			_, err = Read(bytes.NewReader(b[:n]), Limits{})
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%d bytes", n)
		}
	})
	t.Run("bool byte other than 0 or 1", func(t *testing.T) {
		var buf bytes.Buffer
		_, _ = Write(&buf, ndarray.New[bool](2))
		b := buf.Bytes()
		b[len(b)-1] = 2
		a, err := ReadBytes(b, Limits{})
		require.NoError(t, err)
		_, err = AsBool(a)
		assert.ErrorIs(t, err, ErrInvalid)
	})
}

// corpusDir holds NumPy's own test files and go-hep's npyio ones (see ../shared/corpus).
const corpusDir = "testdata/npy"

// TestCorpus reads every file of the third-party corpus: C and Fortran order of every dtype
// read with the shape their name says; pickled object arrays, .npz archives and anything else
// give an error wrapping a sentinel, never a panic.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.np[yz]"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	read := 0
	for _, path := range files {
		name := filepath.Base(path)
		a, err := Open(path, Limits{})
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: an error without a sentinel: %v", name, err)
			}
			if strings.HasPrefix(name, "data_") && strings.HasSuffix(name, ".npy") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		read++
		if strings.Contains(name, "_2x3_") {
			assert.Equal(t, ndarray.Shape{2, 3}, a.Shape(), name)
			assert.Equal(t, strings.Contains(name, "forder"), a.FortranOrder(), name)
		}
		if strings.Contains(name, "_scalar_") {
			assert.Equal(t, 0, a.Shape().Rank(), name)
		}
		_, err = a.WriteValues(io.Discard)
		assert.NoError(t, err, name)
		a.Release()
	}
	assert.Greater(t, read, 60, "the go-hep files of every dtype read")
}

// FuzzRead reads arbitrary bytes as a .npy file both ways: no panic, the same outcome, and
// every value of an accepted file readable and written back to the same values.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.npy"))
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.np[yz]"))
	texts, _ := filepath.Glob("testdata/numpy-strings/*.npy")
	for _, path := range append(append(files, corpus...), texts...) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{MaxElements: 1 << 20}
		a1, err1 := ReadBytes(b, lim)
		a2, err2 := Read(bytes.NewReader(b), lim)
		if err1 != nil {
			if a1 != nil {
				t.Fatal("an array with an error")
			}
			return
		}
		if err2 != nil {
			t.Fatalf("ReadBytes accepted what Read refused: %v", err2)
		}
		var v1, v2 bytes.Buffer
		_, e1 := a1.WriteValues(&v1)
		_, e2 := a2.WriteValues(&v2)
		if (e1 == nil) != (e2 == nil) || !bytes.Equal(v1.Bytes(), v2.Bytes()) {
			t.Fatalf("readers disagree: %v / %v", e1, e2)
		}
		if e1 != nil {
			return // a bool byte other than 0 or 1
		}
		if a1.DType() == ndarray.String {
			s, err := AsStrings(a1)
			if err != nil || s.Size() != a1.Shape().Size() {
				t.Fatalf("strings of %v: %v", a1.Shape(), err)
			}
		} else if int64(v1.Len()) != a1.Shape().Size()*int64(a1.DType().Size()) {
			t.Fatalf("%d bytes of values for %v", v1.Len(), a1.Shape())
		}
		// The header alone says the same, and its rows, read apart, are the same values.
		n, err := HeaderSize(b[:min(len(b), 16)], lim)
		if err != nil || n > int64(len(b)) {
			t.Fatalf("HeaderSize: %d, %v", n, err)
		}
		h, err := ReadHeader(b[:n], lim)
		if err != nil || !h.Shape.Equal(a1.Shape()) || h.DType != a1.DType() || h.DataOffset+h.DataLen != int64(len(b)) {
			t.Fatalf("ReadHeader: %+v, %v; ReadBytes read %v %v", h, err, a1.DType(), a1.Shape())
		}
		if h.Fortran || len(h.Shape) == 0 {
			return
		}
		rows, err := h.Rows(h.Shape[0], append([]byte(nil), b[h.DataOffset:]...))
		if err != nil {
			t.Fatal(err)
		}
		var v3 bytes.Buffer
		if _, err := rows.WriteValues(&v3); err != nil || !bytes.Equal(v1.Bytes(), v3.Bytes()) {
			t.Fatalf("Rows disagree with ReadBytes: %v", err)
		}
	})
}

// TestVersion3Header reads a format 3.0 file (a UTF-8 header, otherwise as 2.0), which NumPy
// writes when a structured dtype has non-Latin-1 field names.
func TestVersion3Header(t *testing.T) {
	text := "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }"
	pad := alignment - (12+len(text)+1)%alignment
	text += string(bytes.Repeat([]byte(" "), pad)) + "\n"
	b := append([]byte(magic), 3, 0, byte(len(text)), byte(len(text)>>8), 0, 0)
	b = append(append(b, text...), 1, 0, 0xff, 0xff)
	for _, read := range []func() (*Array, error){
		func() (*Array, error) { return ReadBytes(b, Limits{}) },
		func() (*Array, error) { return Read(bytes.NewReader(b), Limits{}) },
	} {
		a, err := read()
		require.NoError(t, err)
		assert.Equal(t, "[ 1 -1]", ndarray.Must(AsDense[int16](a)).String())
	}
}
