package ipc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndarrow/ndarrow/sparse"
)

// addSeeds adds the golden tensor files and hand-made bad inputs to a fuzz corpus.
func addSeeds(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.tensor"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden files: %v", err)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	valid := validSpec()
	f.Add(valid.bytes(f))
	f.Add(valid.bytes(f)[4:]) // legacy framing
	for _, mutate := range []func(*spec){
		func(s *spec) { s.strides = nil },
		func(s *spec) { s.shape = []int64{2, -3} },
		func(s *spec) { s.strides = []int64{0, 4} },
		func(s *spec) { s.dataOffset = 4; s.dataLength = 20 },
		func(s *spec) { s.names = []string{"a", "b"} },
	} {
		s := validSpec()
		mutate(&s)
		f.Add(s.bytes(f))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	corpus, err := filepath.Glob(filepath.Join(corpusDir, "arrow-ipc-tensor-stream", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range corpus {
		if b, err := os.ReadFile(path); err == nil && !strings.HasSuffix(path, ".md") {
			f.Add(b)
		}
	}
}

// FuzzTensorStream reads arbitrary bytes as a tensor stream through the bytes and io.Reader
// readers. Neither may panic; every tensor that decodes must have all its values readable,
// and must write and read back to the same values.
func FuzzTensorStream(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxElements: 1 << 20}
		exerciseAll(t, data, lim)
		tensors, err := NewBytesReader(data, lim).ReadAll()
		if err != nil {
			return
		}
		for _, tensor := range tensors {
			var want, encoded, got bytes.Buffer
			if _, err := tensor.WriteValues(&want); err != nil {
				t.Fatal(err)
			}
			rewrite(t, &encoded, tensor)
			again, err := NewBytesReader(encoded.Bytes(), lim).Next()
			if err != nil {
				t.Fatalf("ndarrow cannot read what it wrote: %v", err)
			}
			if _, err := again.WriteValues(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want.Bytes(), got.Bytes()) || !again.Shape().Equal(tensor.Shape()) {
				t.Fatalf("round trip changed the tensor: %v → %v", tensor.Shape(), again.Shape())
			}
		}
	})
}

// FuzzFraming checks that the zero-copy parser and the streaming reader agree on every input:
// the same outcome, the same length consumed, the same body.
func FuzzFraming(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := DefaultLimits()
		m1, n1, err1 := parseMessage(data, 0, lim)
		m2, n2, err2 := readMessage(bytes.NewReader(data), 0, lim)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("parsers disagree: %v / %v", err1, err2)
		}
		if err1 != nil {
			for _, sentinel := range []error{io.EOF, io.ErrUnexpectedEOF, ErrInvalid, ErrLimit, ErrUnsupported} {
				if errors.Is(err1, sentinel) != errors.Is(err2, sentinel) {
					t.Fatalf("parsers disagree on %v: %v / %v", sentinel, err1, err2)
				}
			}
			return
		}
		if n1 != n2 || n1 > int64(len(data)) || !bytes.Equal(m1.body, m2.body) {
			t.Fatalf("parsers disagree: %d / %d bytes", n1, n2)
		}
	})
}

// FuzzSparseTensor reads arbitrary bytes as a sparse tensor through both readers. Neither may
// panic; a tensor that decodes is densified (within the limits) through WriteValues and
// ToDense, which must agree, converted to every format its rank allows with the same values,
// and written and read back to the same values.
func FuzzSparseTensor(f *testing.F) {
	addSeeds(f)
	for _, s := range []sparseSpec{validCOO(), validCSR(), validCSF()} {
		f.Add(s.bytes(f))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxElements: 1 << 16}
		s, err := NewBytesReader(data, lim).NextSparse()
		_, err2 := NewReader(bytes.NewReader(data), lim).NextSparse()
		if (err == nil) != (err2 == nil) {
			t.Fatalf("readers disagree: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		var values bytes.Buffer
		if _, err := s.WriteValues(&values); err != nil {
			t.Fatal(err)
		}
		dense := denseBytes(t, mustDense(t, s.Array()))
		if !bytes.Equal(values.Bytes(), dense) {
			t.Fatal("WriteValues and ToDense disagree")
		}
		for _, f := range []sparse.Format{sparse.FormatCOO, sparse.FormatCSR, sparse.FormatCSC, sparse.FormatCSF} {
			c, err := s.Array().Convert(f)
			if err != nil {
				if !errors.Is(err, sparse.ErrInvalid) {
					t.Fatalf("Convert to %v: %v", f, err)
				}
				continue
			}
			if !bytes.Equal(denseBytes(t, mustDense(t, c)), dense) {
				t.Fatalf("Convert to %v changed the values", f)
			}
		}
		var encoded bytes.Buffer
		if _, err := writeSparseAny(&encoded, s.Array(), s.DimNames()); err != nil {
			t.Fatal(err)
		}
		again, err := NewBytesReader(encoded.Bytes(), lim).NextSparse()
		if err != nil {
			t.Fatalf("ndarrow cannot read what it wrote: %v", err)
		}
		if !bytes.Equal(denseBytes(t, mustDense(t, again.Array())), dense) || !again.Shape().Equal(s.Shape()) {
			t.Fatal("round trip changed the tensor")
		}
	})
}
