package npy

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/ndarray"
)

// npzExpected is a line of an expected.jsonl of .npz archives.
type npzExpected struct {
	Archive string  `json:"archive"`
	Name    string  `json:"name"`
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	SHA256  string  `json:"sha256"`
}

// loadNpzExpected reads an expected.jsonl, grouped by archive in order.
func loadNpzExpected(t *testing.T, path string) map[string][]npzExpected {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]npzExpected{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e npzExpected
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out[e.Archive] = append(out[e.Archive], e)
	}
	require.NotEmpty(t, out)
	return out
}

// describe returns what expected.jsonl says of an array: dtype, shape, sha256 of its values
// in C order.
func describe(t *testing.T, a NamedArray) npzExpected {
	h := sha256.New()
	_, err := a.WriteValues(h)
	require.NoError(t, err)
	return npzExpected{Name: a.Name, DType: a.DType().String(), Shape: a.Shape(), SHA256: hex.EncodeToString(h.Sum(nil))}
}

// TestReadNpzFromNumPy reads what numpy.savez and numpy.savez_compressed wrote — C and
// Fortran order, big-endian, bool, float16, a scalar, an empty array, positional names — and
// compares every member with what NumPy says it holds.
func TestReadNpzFromNumPy(t *testing.T) {
	for archive, want := range loadNpzExpected(t, "testdata/numpy-npz/expected.jsonl") {
		t.Run(archive, func(t *testing.T) {
			path := filepath.Join("testdata/numpy-npz", archive)
			arrays, err := OpenNpz(path, Limits{})
			require.NoError(t, err)
			require.Len(t, arrays, len(want))
			for i, w := range want {
				got := describe(t, arrays[i])
				w.Archive = ""
				assert.Equal(t, w, got)
			}
			for _, a := range arrays {
				a.Release()
			}
		})
	}
	// go-hep's archives read; the pickled object arrays of NumPy's corpus are refused.
	arrays, err := OpenNpz(filepath.Join(corpusDir, "data_float64_corder.npz"), Limits{})
	require.NoError(t, err)
	require.Len(t, arrays, 2)
	for _, a := range arrays {
		assert.Equal(t, ndarray.Float64, a.DType())
		a.Release()
	}
	_, err = OpenNpz(filepath.Join(corpusDir, "py3-objarr.npz"), Limits{})
	assert.ErrorIs(t, err, ErrUnsupported)
}

// npzArrays are the arrays the written archives hold: every element type WriteNpz takes,
// C and Fortran order, a strided view, a scalar and an empty array.
func npzArrays() []struct {
	name string
	a    ndarray.Array
} {
	f32 := ndarray.FromFunc(func(i []int64) float32 { return float32(i[0]*10+i[1]) / 4 }, 3, 4)
	return []struct {
		name string
		a    ndarray.Array
	}{
		{"f32", f32},
		{"f32_strided", ndarray.Must(f32.Slice(ndarray.Flip(), ndarray.Step(2)))},
		{"f64_fortran", ndarray.FromFunc(func(i []int64) float64 { return float64(i[0]) - float64(i[1])/3 }, 2, 5).Transpose()},
		{"f16", ndarray.Must(ndarray.FromSlice([]float16.Num{float16.FromBits(0x3c00), float16.FromBits(0x0001)}, 2))},
		{"i8", ndarray.Must(ndarray.FromSlice([]int8{-128, 0, 127}, 3))},
		{"i16", ndarray.Full[int16](-7, 2, 2)},
		{"i32", ndarray.Must(ndarray.Arange[int32](0, 30, 3))},
		{"i64", ndarray.Scalar[int64](-1 << 62)},
		{"u8", ndarray.FromFunc(func(i []int64) uint8 { return uint8(i[0] * 50) }, 5)},
		{"u16", ndarray.Full[uint16](65535, 1, 3)},
		{"u32", ndarray.New[uint32](0, 7)},
		{"u64", ndarray.Must(ndarray.FromSlice([]uint64{1 << 63}, 1))},
		{"mask", ndarray.Must(ndarray.FromSlice([]bool{true, false, true, true}, 2, 2))},
	}
}

// writeNpz writes npzArrays as an archive.
func writeNpz(t *testing.T, compress bool) []byte {
	var buf bytes.Buffer
	w := NewNpzWriter(&buf, compress)
	for _, m := range npzArrays() {
		require.NoError(t, w.Write(m.name, m.a))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

var updateNpz = flag.Bool("update-npz", false, "rewrite testdata/ndarrow-npz/*.npz (then run check.py with NumPy)")

// TestNumPyReadsWhatWriteNpzWrites: the archives in testdata/ndarrow-npz are what NpzWriter
// writes today, byte for byte, and numpy.load read them as numpy-read.jsonl records (check.py
// wrote it): every array comes back with the same dtype, shape and values.
func TestNumPyReadsWhatWriteNpzWrites(t *testing.T) {
	for _, compress := range []bool{false, true} {
		name := map[bool]string{false: "written.npz", true: "written_compressed.npz"}[compress]
		t.Run(name, func(t *testing.T) {
			b := writeNpz(t, compress)
			path := filepath.Join("testdata/ndarrow-npz", name)
			if *updateNpz {
				require.NoError(t, os.WriteFile(path, b, 0o644))
			}
			committed, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, committed, b, "NpzWriter's bytes changed: run go test -update-npz and check.py")
			want := loadNpzExpected(t, "testdata/ndarrow-npz/numpy-read.jsonl")
			arrays, err := ReadNpz(b, Limits{})
			require.NoError(t, err)
			require.Len(t, want[name], len(npzArrays()))
			require.Len(t, arrays, len(want[name]))
			for i, w := range want[name] {
				w.Archive = ""
				assert.Equal(t, w, describe(t, arrays[i]), "what numpy.load read")
				var orig bytes.Buffer
				_, err := npzArrays()[i].a.WriteTo(&orig)
				require.NoError(t, err)
				var back bytes.Buffer
				_, err = arrays[i].WriteValues(&back)
				require.NoError(t, err)
				assert.Equal(t, orig.Bytes(), back.Bytes(), "%s: the values written", w.Name)
			}
		})
	}
}

// TestStoredMembersAreViews: the values of a stored member NpzWriter wrote are aligned, so
// reading the archive views them in place; a deflated member is a copy.
func TestStoredMembersAreViews(t *testing.T) {
	b := writeNpz(t, false)
	arrays, err := ReadNpz(b, Limits{})
	require.NoError(t, err)
	inside := func(p []byte) bool {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		at := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		return at >= start && at < start+uintptr(len(b))
	}
	for _, a := range arrays {
		if a.Array.Data() == nil || len(a.Array.Data()) == 0 {
			continue
		}
		assert.True(t, inside(a.Array.Data()), "%s: the member's bytes are a view of the archive", a.Name)
		start := uintptr(unsafe.Pointer(unsafe.SliceData(a.Array.Data()))) - uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		assert.Zero(t, start%alignment, "%s: values at a 64-byte offset of the archive", a.Name)
	}
	f32, err := AsDense[float32](arrays[0].Array)
	require.NoError(t, err)
	values, _ := f32.Contiguous()
	assert.True(t, inside(ndarray.LittleEndianBytes(values)), "the Dense views the archive")
	assert.True(t, f32.ReadOnly())

	compressed, err := ReadNpz(writeNpz(t, true), Limits{})
	require.NoError(t, err)
	assert.False(t, inside(compressed[0].Array.Data()))
}

// TestNpzErrors: broken, hostile and unsupported archives fail with the sentinel that says
// why, naming the member; the writer refuses names it cannot use.
func TestNpzErrors(t *testing.T) {
	good := writeNpz(t, false)
	corrupt := bytes.Clone(good)
	corrupt[bytes.Index(corrupt, []byte("\x93NUMPY"))+130] ^= 0xff // inside f32's values
	zipOf := func(members map[string][]byte, method uint16) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		zw.RegisterCompressor(99, func(w io.Writer) (io.WriteCloser, error) { return nopCloser{w}, nil })
		for name, data := range members {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
			require.NoError(t, err)
			_, err = w.Write(data)
			require.NoError(t, err)
		}
		require.NoError(t, zw.Close())
		return buf.Bytes()
	}
	var one bytes.Buffer
	_, err := Write(&one, ndarray.New[float64](1000, 1000))
	require.NoError(t, err)
	bomb := zipOf(map[string][]byte{"zeros.npy": one.Bytes()}, zip.Deflate) // 8 MB in a few KB
	// A claim of 4 bytes for 8 MB of deflated data.
	lying := bytes.Clone(bomb)
	central := bytes.LastIndex(lying, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(lying[central+24:], 4)

	for name, tc := range map[string]struct {
		b    []byte
		lim  Limits
		want error
		msg  string
	}{
		"not a zip":        {[]byte("not a zip archive"), Limits{}, ErrInvalid, "npz:"},
		"truncated":        {good[:len(good)/2], Limits{}, ErrInvalid, "npz:"},
		"checksum":         {corrupt, Limits{}, ErrInvalid, `member "f32.npy": checksum`},
		"not .npy":         {zipOf(map[string][]byte{"notes.txt": []byte("hi")}, zip.Store), Limits{}, ErrUnsupported, `"notes.txt" is not a .npy file`},
		"truncated npy":    {zipOf(map[string][]byte{"x.npy": []byte("\x93NUMPY\x01")}, zip.Store), Limits{}, io.ErrUnexpectedEOF, `member "x.npy"`},
		"over the limit":   {bomb, Limits{MaxCopySize: 1 << 20}, ErrLimit, "decompresses to 8000128 bytes"},
		"lying about size": {lying, Limits{}, ErrInvalid, "more than the 4 bytes"},
		"method":           {zipOf(map[string][]byte{"x.npy": one.Bytes()[:128]}, 99), Limits{}, ErrUnsupported, "compression method 99"},
	} {
		_, err := ReadNpz(tc.b, tc.lim)
		assert.ErrorIs(t, err, tc.want, name)
		assert.ErrorContains(t, err, tc.msg, name)
	}

	w := NewNpzWriter(io.Discard, false)
	require.NoError(t, w.Write("a", ndarray.New[float32](2)))
	assert.ErrorIs(t, w.Write("a", ndarray.New[float32](2)), ErrName)
	assert.ErrorIs(t, w.Write("", ndarray.New[float32](2)), ErrName)
	assert.ErrorIs(t, w.Write("x/y", ndarray.New[float32](2)), ErrName)
	require.NoError(t, w.Close())
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// FuzzReadNpz reads arbitrary archives, seeded with NumPy's, go-hep's and ndarrow's: no
// panic, and what reads gives values of the size its shape says.
func FuzzReadNpz(f *testing.F) {
	for _, pattern := range []string{"testdata/numpy-npz/*.npz", "testdata/ndarrow-npz/*.npz", filepath.Join(corpusDir, "*.npz")} {
		files, _ := filepath.Glob(pattern)
		for _, path := range files {
			b, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	// NumPy's string arrays, stored and deflated, in one archive.
	texts, _ := filepath.Glob("testdata/numpy-strings/*.npy")
	var archive bytes.Buffer
	zw := zip.NewWriter(&archive)
	for i, path := range texts {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		method := []uint16{zip.Store, zip.Deflate}[i%2]
		w, err := zw.CreateHeader(&zip.FileHeader{Name: filepath.Base(path), Method: method})
		if err != nil {
			f.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			f.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(archive.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{MaxElements: 1 << 20, MaxCopySize: 1 << 24}
		members, merr := NpzMembers(b, lim)
		arrays, err := ReadNpz(b, lim)
		if err != nil {
			return
		}
		// What ReadNpz reads, NpzMembers describes: the same members, each stored one's
		// header where it says.
		if merr != nil || len(members) != len(arrays) {
			t.Fatalf("ReadNpz read %d arrays, NpzMembers says %d (%v)", len(arrays), len(members), merr)
		}
		for i, m := range members {
			if m.Name != arrays[i].Name {
				t.Fatalf("member %d: %q, ReadNpz says %q", i, m.Name, arrays[i].Name)
			}
			if m.Stored {
				h, err := ReadHeader(b[m.DataOffset:m.DataOffset+m.Size], lim)
				if err != nil || !h.Shape.Equal(arrays[i].Shape()) || h.DType != arrays[i].DType() {
					t.Fatalf("member %q: header %+v (%v), ReadNpz read %v %v", m.Name, h, err, arrays[i].DType(), arrays[i].Shape())
				}
			}
		}
		for _, a := range arrays {
			if want := a.Shape().Size() * int64(a.item); int64(len(a.Array.Data())) != want {
				t.Fatalf("%s: %d bytes of values for shape %v", a.Name, len(a.Array.Data()), a.Shape())
			}
			if _, err := a.WriteValues(io.Discard); err != nil && a.DType() != ndarray.Bool {
				t.Fatal(err)
			}
		}
	})
}

// TestNpzMutants reads every mutant of NumPy's archives and ndarrow's — each byte of their
// structure set to 0, 0xff and its neighbours, each 2- and 4-byte word set to its largest
// values — in a child process with 1 GiB of address space, and checks that each reads or
// fails cleanly, allocating no more than deflate's ratio (1032:1) of the archive's size
// justifies. Under the race detector, which adds nothing to this one-goroutine test and slows
// it sixfold, every seventh mutant is read.
func TestNpzMutants(t *testing.T) {
	childtest.Run(t, "TestNpzMutantsChild", 1<<30)
}

// TestNpzMutantsChild is the child side of TestNpzMutants.
func TestNpzMutantsChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("the body of TestNpzMutants, run only as its child process")
	}
	every := 1
	if childtest.RaceEnabled {
		every = 7
	}
	lim := Limits{MaxCopySize: 64 << 20}
	inputs, err := filepath.Glob("testdata/*-npz/*.npz")
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	mutants := 0
	for _, path := range inputs {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		budget := uint64(1032*len(b)) + 1<<20
		try := func(m []byte, what string) {
			if mutants++; mutants%every != 0 {
				return
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			arrays, err := ReadNpz(m, lim)
			runtime.ReadMemStats(&after)
			if used := after.TotalAlloc - before.TotalAlloc; used > budget {
				t.Fatalf("%s: %s allocated %d bytes", path, what, used)
			}
			if err == nil {
				for _, a := range arrays {
					_, _ = a.Dense()
				}
			}
		}
		// The values of stored members are only checksummed: mutate the structure around
		// them (headers, directory, deflated streams, .npy headers) and not each value byte.
		values := map[int]bool{}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		for _, f := range zr.File {
			start, err := f.DataOffset()
			require.NoError(t, err)
			if f.Method == zip.Store {
				for i := start + 128; i < start+int64(f.CompressedSize64)-8; i++ {
					values[int(i)] = true
				}
			}
		}
		for i := range b {
			if values[i] {
				continue
			}
			orig := b[i]
			for _, v := range []byte{0, 0xff, orig + 1, orig - 1} {
				m := bytes.Clone(b)
				m[i] = v
				try(m, fmt.Sprintf("byte %d = %#x", i, v))
			}
			for _, width := range []int{2, 4} {
				if i+width > len(b) {
					continue
				}
				for _, v := range []uint32{0xffffffff, 0x7fffffff, 0x80000000} {
					m := bytes.Clone(b)
					if width == 2 {
						binary.LittleEndian.PutUint16(m[i:], uint16(v>>16))
					} else {
						binary.LittleEndian.PutUint32(m[i:], v)
					}
					try(m, fmt.Sprintf("%d bytes at %d = %#x", width, i, v))
				}
			}
		}
	}
	t.Logf("child: %d mutants of %d archives, every %d read", mutants, len(inputs), every)
}
