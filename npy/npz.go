package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow/float16"

	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/ndarray"
)

// NamedArray is one array of an .npz archive with its name: the member's file name without
// ".npy", the key numpy.load gives it.
type NamedArray struct {
	Name string
	*Array
}

// maxDeflateRatio is the most deflate expands: 258 bytes from about 2 bits.
const maxDeflateRatio = 1032

// npzSuffix ends the name of every member numpy.savez writes.
const npzSuffix = ".npy"

// ReadNpz reads the .npz archive in b — what numpy.savez and numpy.savez_compressed write: a
// ZIP archive of .npy files — and returns its arrays in the archive's order. A stored member
// is read in place, its values a view of b when they are aligned (numpy.savez does not align
// them; WriteNpz does); a deflated one is decompressed — into at most what deflate can expand
// its bytes to — and the decompressed bytes of all members together stay within
// lim.MaxCopySize. Every member's checksum is verified. A member
// that is not a .npy file fails with ErrUnsupported; a malformed archive, a duplicate name or a
// wrong checksum with ErrInvalid. The arrays need no Release (see OpenNpz for files).
func ReadNpz(b []byte, lim Limits) ([]NamedArray, error) {
	lim = lim.WithDefaults()
	files, names, err := npzFiles(b)
	if err != nil {
		return nil, err
	}
	var out []NamedArray
	budget := lim.MaxCopySize
	for i, f := range files {
		name := names[i]
		data, err := memberBytes(b, f, &budget)
		if err != nil {
			return nil, fmt.Errorf("npz: member %q: %w", f.Name, err)
		}
		a, err := ReadBytes(data, lim)
		if err != nil {
			return nil, fmt.Errorf("npz: member %q: %w", f.Name, err)
		}
		out = append(out, NamedArray{Name: name, Array: a})
	}
	return out, nil
}

// npzFiles opens the ZIP archive b and returns its members other than directories, each with
// its array's name, having checked that every one is a .npy file and no name appears twice.
func npzFiles(b []byte) ([]*zip.File, []string, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, nil, fmt.Errorf("npz: %w: %w", ErrInvalid, err)
	}
	var files []*zip.File
	var names []string
	seen := map[string]bool{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a directory
		}
		name, ok := strings.CutSuffix(f.Name, npzSuffix)
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("npz: member %q is not a .npy file: %w", f.Name, ErrUnsupported)
		case seen[name]:
			return nil, nil, fmt.Errorf("npz: member %q appears twice: %w", f.Name, ErrInvalid)
		}
		seen[name] = true
		files, names = append(files, f), append(names, name)
	}
	return files, names, nil
}

// memberBytes returns the bytes of member f of the archive b: a view of b when it is stored,
// decompressed bytes (counted against *budget) when it is deflated. Its checksum is verified.
func memberBytes(b []byte, f *zip.File, budget *int64) ([]byte, error) {
	size := f.UncompressedSize64
	switch f.Method {
	case zip.Store:
		start, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if f.CompressedSize64 != size || start < 0 || uint64(start) > uint64(len(b)) || size > uint64(len(b))-uint64(start) {
			return nil, fmt.Errorf("%d bytes stored at byte %d of a %d-byte archive: %w", size, start, len(b), ErrInvalid)
		}
		data := b[start : uint64(start)+size]
		if sum := crc32.ChecksumIEEE(data); sum != f.CRC32 {
			return nil, fmt.Errorf("checksum %08x, the archive says %08x: %w", sum, f.CRC32, ErrInvalid)
		}
		return data, nil
	case zip.Deflate:
		switch {
		case f.CompressedSize64 > uint64(len(b)):
			return nil, fmt.Errorf("%d compressed bytes in a %d-byte archive: %w", f.CompressedSize64, len(b), ErrInvalid)
		case size > f.CompressedSize64*maxDeflateRatio+maxDeflateRatio:
			return nil, fmt.Errorf("%d compressed bytes cannot decompress to the %d the archive says: %w", f.CompressedSize64, size, ErrInvalid)
		case size > uint64(*budget):
			return nil, fmt.Errorf("decompresses to %d bytes, more than the %d left of the limit: %w", size, *budget, ErrLimit)
		}
		r, err := f.Open() // verifies the checksum at the end
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		defer r.Close()
		// The size is bounded by what the compressed bytes in the archive can expand to: read
		// into one buffer of it.
		data := make([]byte, size)
		_, err = io.ReadFull(r, data)
		if err == nil {
			// The claimed size must be the whole of it: read past it to see the checksum.
			var one [1]byte
			switch n, rerr := r.Read(one[:]); {
			case n > 0 || errors.Is(rerr, zip.ErrFormat): // zip's reader stops at the size
				err = fmt.Errorf("decompresses to more than the %d bytes the archive says: %w", size, ErrInvalid)
			case rerr != nil && !errors.Is(rerr, io.EOF):
				err = rerr
			}
		}
		if err != nil {
			if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: %w", ErrInvalid, err)
			}
			return nil, err
		}
		*budget -= int64(size)
		return data, nil
	}
	return nil, fmt.Errorf("compression method %d (numpy writes stored or deflated members): %w", f.Method, ErrUnsupported)
}

// OpenNpz memory-maps the .npz file at path and reads its arrays as ReadNpz does; arrays of
// stored members view the mapping. Each array holds a reference to the mapping: Release
// every one (the mapping goes with the last). A file that shrinks while it is read is an error
// naming it that wraps dataset.ErrFileChanged; read the arrays' values inside dataset.Guard.
func OpenNpz(path string, lim Limits) ([]NamedArray, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	defer m.Release()
	arrays, err := readMapped(m, path, "npz", func(b []byte) ([]NamedArray, error) { return ReadNpz(b, lim) })
	if err != nil {
		return nil, err
	}
	for _, a := range arrays {
		m.Retain()
		a.owner = m
	}
	return arrays, nil
}

// NpzWriter writes an .npz archive that numpy.load reads, one array at a time: each array is
// a member NAME.npy, stored as numpy.savez stores it — with its values aligned to 64 bytes in
// the archive, so that ReadNpz views them in place — or deflated, as
// numpy.savez_compressed does. Close finishes the archive.
type NpzWriter struct {
	w        *countingWriter
	zw       *zip.Writer
	compress bool
	names    map[string]bool
}

// NewNpzWriter returns a writer of an .npz archive to w, deflated when compress is set.
func NewNpzWriter(w io.Writer, compress bool) *NpzWriter {
	cw := &countingWriter{w: w}
	return &NpzWriter{w: cw, zw: zip.NewWriter(cw), compress: compress, names: map[string]bool{}}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// zipalignID is the ZIP extra field that pads a stored member so its data starts aligned, as
// Android's zipalign writes it: the alignment (2 bytes) and zeros.
const zipalignID = 0xd935

// modified is the time every member carries, so that an archive's bytes depend only on its
// arrays.
var modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrName reports an .npz member name NpzWriter cannot use: empty, with a slash, or used
// before.
var ErrName = errors.New("npz: invalid member name")

// Write adds d — a *ndarray.Dense of a numeric type, bool or string — as the member name.npy,
// in .npy format as WriteArray writes it, streamed from d's memory (a stored member is read
// twice: once for its checksum, which its header carries). It fails with ErrUnsupported for
// other element types and with ErrName for an empty name, a name with a slash or a name used
// before.
func (z *NpzWriter) Write(name string, d ndarray.Array) error {
	return z.write(name, func(w io.Writer) (int64, error) { return WriteArray(w, d) })
}

// WriteStrings adds the strings d as the member name.npy, as WriteStrings writes them: bytes
// (|S) when asBytes, else text (<U).
func (z *NpzWriter) WriteStrings(name string, d *ndarray.Dense[string], asBytes bool) error {
	return z.write(name, func(w io.Writer) (int64, error) { return WriteStrings(w, d, asBytes) })
}

// write adds the member name.npy whose bytes write writes (twice, for a stored member).
func (z *NpzWriter) write(name string, write func(io.Writer) (int64, error)) error {
	switch {
	case name == "" || strings.ContainsAny(name, "/\\"):
		return fmt.Errorf("%w: %q", ErrName, name)
	case z.names[name]:
		return fmt.Errorf("%w: %q used twice", ErrName, name)
	}
	fh := &zip.FileHeader{Name: name + npzSuffix, Modified: modified}
	var w io.Writer
	var err error
	if z.compress {
		fh.Method = zip.Deflate
		w, err = z.zw.CreateHeader(fh)
	} else {
		// Stored, with the sizes and checksum in the local header and an extra field that
		// pads the header so the .npy file — and so its values — starts on a 64-byte boundary.
		sum := crc32.NewIEEE()
		var size int64
		if size, err = write(sum); err != nil {
			return fmt.Errorf("npz: member %q: %w", name, err)
		}
		if err := z.zw.Flush(); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
		const localHeader = 30
		end := z.w.n + localHeader + int64(len(fh.Name)) + 6
		pad := (alignment - end%alignment) % alignment
		extra := make([]byte, 6+pad)
		binary.LittleEndian.PutUint16(extra, zipalignID)
		binary.LittleEndian.PutUint16(extra[2:], uint16(2+pad))
		binary.LittleEndian.PutUint16(extra[4:], alignment)
		fh.Method, fh.Extra, fh.CRC32 = zip.Store, extra, sum.Sum32()
		fh.CompressedSize64, fh.UncompressedSize64 = uint64(size), uint64(size)
		w, err = z.zw.CreateRaw(fh)
	}
	if err == nil {
		_, err = write(w)
	}
	if err != nil {
		return fmt.Errorf("npz: member %q: %w", name, err)
	}
	z.names[name] = true
	return nil
}

// Close writes the archive's central directory. It does not close the underlying writer.
func (z *NpzWriter) Close() error {
	if err := z.zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// WriteArray is Write for an array whose element type is known only at run time: a
// *ndarray.Dense of a numeric type or bool, or of strings (WriteStrings: as text when every
// one is UTF-8, else as bytes). Other arrays fail with ErrUnsupported.
func WriteArray(w io.Writer, a ndarray.Array) (int64, error) {
	switch d := a.(type) {
	case *ndarray.Dense[string]:
		text := true
		for v := range d.Values() {
			text = text && utf8.ValidString(v)
		}
		return WriteStrings(w, d, !text)
	case *ndarray.Dense[bool]:
		return Write(w, d)
	case *ndarray.Dense[int8]:
		return Write(w, d)
	case *ndarray.Dense[int16]:
		return Write(w, d)
	case *ndarray.Dense[int32]:
		return Write(w, d)
	case *ndarray.Dense[int64]:
		return Write(w, d)
	case *ndarray.Dense[uint8]:
		return Write(w, d)
	case *ndarray.Dense[uint16]:
		return Write(w, d)
	case *ndarray.Dense[uint32]:
		return Write(w, d)
	case *ndarray.Dense[uint64]:
		return Write(w, d)
	case *ndarray.Dense[float16.Num]:
		return Write(w, d)
	case *ndarray.Dense[float32]:
		return Write(w, d)
	case *ndarray.Dense[float64]:
		return Write(w, d)
	}
	return 0, fmt.Errorf("npy: %T: %w", a, ErrUnsupported)
}
