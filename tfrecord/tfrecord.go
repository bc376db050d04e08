package tfrecord

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/ndarrow/ndarrow/internal/bounded"
	"github.com/ndarrow/ndarrow/internal/mmap"
	"github.com/ndarrow/ndarrow/limits"
)

// ErrInvalid is wrapped by every error about input that is not a well-formed TFRecord file or
// record.
var ErrInvalid = errors.New("invalid TFRecord input")

// ErrChecksum is wrapped, with ErrInvalid, by every error about a CRC that does not match.
var ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrInvalid)

// ErrUnsupported is wrapped by every error about a valid message ndarrow does not map (a
// TensorProto of complex numbers, say).
var ErrUnsupported = errors.New("unsupported by ndarrow")

// DefaultMaxRecordSize is the record-length limit when Options.MaxRecordSize is zero: 1 GiB.
// TensorFlow's protocol buffers cannot exceed 2 GiB.
const DefaultMaxRecordSize = 1 << 30

// headerSize and footerSize are the framing around a record's data.
const (
	headerSize = 12 // length and its CRC
	footerSize = 4  // the data's CRC
)

// Compression is how a whole TFRecord file is compressed.
type Compression int

// The compressions TensorFlow writes (tf.io.TFRecordOptions compression_type "", "GZIP" and
// "ZLIB").
const (
	None Compression = iota
	GZIP
	ZLIB
)

// String returns "none", "gzip" or "zlib".
func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case GZIP:
		return "gzip"
	case ZLIB:
		return "zlib"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// ParseCompression returns the compression named s: "none" (or ""), "gzip" or "zlib", in any
// case.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return None, nil
	case "gzip":
		return GZIP, nil
	case "zlib":
		return ZLIB, nil
	}
	return None, fmt.Errorf("tfrecord: compression %q: not none, gzip or zlib", s)
}

// CompressionOf returns the compression a file name implies: GZIP for a name ending in ".gz",
// ZLIB for ".zz" or ".zlib", None otherwise.
func CompressionOf(name string) Compression {
	switch {
	case strings.HasSuffix(name, ".gz"):
		return GZIP
	case strings.HasSuffix(name, ".zz"), strings.HasSuffix(name, ".zlib"):
		return ZLIB
	}
	return None
}

// Options says how to read records. The zero value reads an uncompressed file, verifies
// every CRC and takes the default limits.
type Options struct {
	Compression Compression
	// SkipChecksums skips verifying the CRCs (TensorFlow's readers verify them too).
	SkipChecksums bool
	// MaxRecordSize bounds the length of one record (default DefaultMaxRecordSize).
	MaxRecordSize int64
	// MaxDecompressedSize bounds the bytes a compressed file decompresses to, over all its
	// records: a GZIP or ZLIB stream may expand a thousandfold (default limits' MaxCopySize,
	// 4 GiB).
	MaxDecompressedSize int64
}

func (o Options) withDefaults() Options {
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = DefaultMaxRecordSize
	}
	if o.MaxDecompressedSize <= 0 {
		o.MaxDecompressedSize = limits.Default().MaxCopySize
	}
	return o
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaskedCRC returns the masked CRC-32C of b that TFRecord framing stores.
func MaskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// Reader reads the records of a TFRecord stream one at a time.
type Reader struct {
	r       *bufio.Reader
	src     io.Closer // the decompressor, if any
	opts    Options
	records int64 // records read
	offset  int64 // bytes of the (decompressed) stream read
	buf     []byte
}

// NewReader returns a reader of the records in r, decompressed as opts say. For GZIP, it reads
// the gzip header before returning (any number of concatenated members are read, as gzip -d
// reads them).
func NewReader(r io.Reader, opts Options) (*Reader, error) {
	opts = opts.withDefaults()
	rd := &Reader{opts: opts}
	var src io.Reader
	switch opts.Compression {
	case None:
		src = r
	case GZIP:
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, decompressError(err)
		}
		rd.src, src = z, z
	case ZLIB:
		z, err := zlib.NewReader(r)
		if err != nil {
			return nil, decompressError(err)
		}
		rd.src, src = z, z
	default:
		return nil, fmt.Errorf("tfrecord: %v: %w", opts.Compression, ErrUnsupported)
	}
	if opts.Compression != None {
		src = &capped{r: src, left: opts.MaxDecompressedSize, max: opts.MaxDecompressedSize}
	}
	rd.r = bufio.NewReaderSize(src, 64<<10)
	return rd, nil
}

// decompressError says what a gzip or zlib reader found wrong, wrapping ErrInvalid, or
// io.ErrUnexpectedEOF for a stream cut short.
func decompressError(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("tfrecord: compressed stream ends early: %w", io.ErrUnexpectedEOF)
	case errors.Is(err, limits.ErrExceeded):
		return err
	}
	return fmt.Errorf("tfrecord: decompressing: %v: %w", err, ErrInvalid)
}

// capped reads from r until left bytes have been read, then fails with limits.ErrExceeded.
type capped struct {
	r    io.Reader
	left int64
	max  int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(c.r, one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("tfrecord: the stream decompresses to more than the limit of %d bytes: %w", c.max, limits.ErrExceeded)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// Records returns the number of records read so far.
func (r *Reader) Records() int64 { return r.records }

// Offset returns the byte offset, in the decompressed stream, of the next record.
func (r *Reader) Offset() int64 { return r.offset }

// Next returns the next record's data, valid until the next call of Next; io.EOF when the
// stream ends after a whole record. A stream that ends inside a record is
// io.ErrUnexpectedEOF; a CRC that does not match is ErrChecksum naming the record and its
// byte offset; a length above the limit wraps limits.ErrExceeded.
func (r *Reader) Next() ([]byte, error) {
	var hdr [headerSize]byte
	n, err := io.ReadFull(r.r, hdr[:])
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case err != nil:
		return nil, r.cut(err, "header", n)
	}
	length, err := r.length(hdr)
	if err != nil {
		return nil, err
	}
	if int64(cap(r.buf)) >= length+footerSize {
		r.buf = r.buf[:length+footerSize]
		if n, err := io.ReadFull(r.r, r.buf); err != nil {
			return nil, r.cut(err, "data", n)
		}
	} else {
		// Grow only as bytes arrive: a length the stream does not hold costs nothing.
		r.buf, err = bounded.ReadFull(r.r, length+footerSize)
		if err != nil {
			return nil, r.cut(err, "data", len(r.buf))
		}
	}
	data := r.buf[:length]
	if !r.opts.SkipChecksums {
		if err := r.checkData(data, r.buf[length:]); err != nil {
			return nil, err
		}
	}
	r.records++
	r.offset += headerSize + length + footerSize
	return data, nil
}

// cut explains a read that stopped early.
func (r *Reader) cut(err error, part string, n int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if r.opts.Compression != None {
			return fmt.Errorf("tfrecord: record %d at byte %d: stream ends inside its %s: %w", r.records, r.offset, part, decompressError(err))
		}
		return fmt.Errorf("tfrecord: record %d at byte %d: file ends inside its %s (%d bytes there): %w", r.records, r.offset, part, n, io.ErrUnexpectedEOF)
	}
	if errors.Is(err, limits.ErrExceeded) {
		return fmt.Errorf("tfrecord: record %d at byte %d: %w", r.records, r.offset, err)
	}
	if r.opts.Compression != None {
		return fmt.Errorf("tfrecord: record %d at byte %d: %w", r.records, r.offset, decompressError(err))
	}
	return fmt.Errorf("tfrecord: record %d at byte %d: %w", r.records, r.offset, err)
}

// length decodes and checks a record header.
func (r *Reader) length(hdr [headerSize]byte) (int64, error) {
	return checkHeader(hdr[:], r.records, r.offset, r.opts)
}

func (r *Reader) checkData(data, crc []byte) error {
	return checkData(data, crc, r.records, r.offset)
}

// checkHeader returns the length a record header holds, after checking its CRC and the limit.
func checkHeader(hdr []byte, record, offset int64, opts Options) (int64, error) {
	length := binary.LittleEndian.Uint64(hdr)
	if !opts.SkipChecksums {
		if want, got := binary.LittleEndian.Uint32(hdr[8:]), MaskedCRC(hdr[:8]); want != got {
			return 0, fmt.Errorf("tfrecord: record %d at byte %d: length checksum %#08x, computed %#08x: %w", record, offset, want, got, ErrChecksum)
		}
	}
	if length > uint64(opts.MaxRecordSize) {
		return 0, fmt.Errorf("tfrecord: record %d at byte %d: length %d exceeds the limit of %d bytes: %w", record, offset, length, opts.MaxRecordSize, limits.ErrExceeded)
	}
	return int64(length), nil
}

// checkData compares the masked CRC of data with the 4 bytes stored after it.
func checkData(data, crc []byte, record, offset int64) error {
	if want, got := binary.LittleEndian.Uint32(crc), MaskedCRC(data); want != got {
		return fmt.Errorf("tfrecord: record %d at byte %d: data checksum %#08x, computed %#08x: %w", record, offset, want, got, ErrChecksum)
	}
	return nil
}

// Close releases the decompressor; it does not close the io.Reader NewReader was given.
func (r *Reader) Close() error {
	if r.src != nil {
		return r.src.Close()
	}
	return nil
}

// Split returns the records of a whole TFRecord file held in b. Uncompressed, each record is a
// view of b (b must outlive them and not change); compressed, b is first decompressed into one
// new buffer, within opts.MaxDecompressedSize, and the records view that. Errors are Next's.
func Split(b []byte, opts Options) ([][]byte, error) {
	opts = opts.withDefaults()
	if opts.Compression != None {
		r, err := NewReader(bytes.NewReader(b), opts)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		plain, err := io.ReadAll(r.r)
		if err != nil {
			return nil, decompressError(err)
		}
		opts.Compression = None
		b = plain
	}
	var records [][]byte
	for off := int64(0); off < int64(len(b)); {
		rest := b[off:]
		if len(rest) < headerSize {
			return nil, fmt.Errorf("tfrecord: record %d at byte %d: file ends inside its header (%d bytes there): %w", len(records), off, len(rest), io.ErrUnexpectedEOF)
		}
		length, err := checkHeader(rest, int64(len(records)), off, opts)
		if err != nil {
			return nil, err
		}
		if int64(len(rest)) < headerSize+length+footerSize {
			return nil, fmt.Errorf("tfrecord: record %d at byte %d: length %d runs past the end of the file (%d bytes left): %w", len(records), off, length, len(rest)-headerSize, io.ErrUnexpectedEOF)
		}
		data := rest[headerSize : headerSize+length : headerSize+length]
		if !opts.SkipChecksums {
			if err := checkData(data, rest[headerSize+length:], int64(len(records)), off); err != nil {
				return nil, err
			}
		}
		records = append(records, data)
		off += headerSize + length + footerSize
	}
	return records, nil
}

// Probe reports whether b starts with a TFRecord record: its length CRC verifies and, when b
// holds the whole first record, so does its data CRC. An empty b is not a TFRecord file.
func Probe(b []byte) bool {
	if len(b) < headerSize {
		return false
	}
	length, err := checkHeader(b, 0, 0, Options{}.withDefaults())
	if err != nil {
		return false
	}
	if end := headerSize + length + footerSize; int64(len(b)) >= end {
		return checkData(b[headerSize:headerSize+length], b[headerSize+length:], 0, 0) == nil
	}
	return true
}

// Writer writes records to a TFRecord stream, compressed as it was created with.
type Writer struct {
	w       io.Writer
	z       io.WriteCloser // the compressor, if any
	records int64
}

// NewWriter returns a writer of records to w with compression c. GZIP writes one gzip member
// with no file name, as TensorFlow does; ZLIB a zlib stream. Close must be called to finish
// the stream.
func NewWriter(w io.Writer, c Compression) (*Writer, error) {
	wr := &Writer{w: w}
	switch c {
	case None:
	case GZIP:
		wr.z = gzip.NewWriter(w)
	case ZLIB:
		wr.z = zlib.NewWriter(w)
	default:
		return nil, fmt.Errorf("tfrecord: %v: %w", c, ErrUnsupported)
	}
	if wr.z != nil {
		wr.w = wr.z
	}
	return wr, nil
}

// WriteRecord writes data as one record.
func (w *Writer) WriteRecord(data []byte) error {
	var hdr [headerSize]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(len(data)))
	binary.LittleEndian.PutUint32(hdr[8:], MaskedCRC(hdr[:8]))
	var crc [footerSize]byte
	binary.LittleEndian.PutUint32(crc[:], MaskedCRC(data))
	for _, b := range [][]byte{hdr[:], data, crc[:]} {
		if _, err := w.w.Write(b); err != nil {
			return fmt.Errorf("tfrecord: writing record %d: %w", w.records, err)
		}
	}
	w.records++
	return nil
}

// Records returns the number of records written so far.
func (w *Writer) Records() int64 { return w.records }

// Close finishes a compressed stream; it does not close the io.Writer NewWriter was given.
func (w *Writer) Close() error {
	if w.z != nil {
		return w.z.Close()
	}
	return nil
}

// File is the records of a TFRecord file mapped into memory.
type File struct {
	// Records are the file's records: views of the mapping for an uncompressed file, of one
	// decompressed buffer otherwise. They must not be used after Release.
	Records [][]byte
	mapping *mmap.Mapping
}

// Open maps the file at path into memory and splits it into records as Split does, with the
// compression opts give. Release the File when its records are no longer used.
func Open(path string, opts Options) (*File, error) {
	m, err := mmap.Open(path)
	if err != nil {
		return nil, err
	}
	records, err := Split(m.Bytes(), opts)
	if err != nil {
		m.Release()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{Records: records, mapping: m}, nil
}

// Release unmaps the file; its records must not be used afterwards.
func (f *File) Release() { f.mapping.Release() }
