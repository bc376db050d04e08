package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// Parquet has two LZ4 codecs. LZ4_RAW (codec 7) is one LZ4 block per page. LZ4 (codec 5) was
// never specified: parquet-mr and Hadoop wrote Hadoop's framing — blocks each preceded by
// their uncompressed and compressed sizes, 32-bit big-endian — and early Arrow C++ a raw block;
// Arrow C++ reads either, trying the framing first, and so does this package. arrow-go v17
// decodes neither: this package registers both with its codec registry, for reading only.

// Parquet's codec numbers for the two.
const (
	codecLz4    = 5
	codecLz4Raw = 7
)

func init() {
	compress.RegisterCodec(compress.Compression(codecLz4), boundedCodec{Codec: lz4Codec{}, decode: decodeLz4Hadoop, name: "LZ4"})
	compress.RegisterCodec(compress.Compression(codecLz4Raw), boundedCodec{Codec: lz4Codec{}, decode: decodeLz4Raw, name: "LZ4_RAW"})
}

// decodeLz4Raw decompresses one LZ4 block into exactly dst.
func decodeLz4Raw(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("%d bytes", n)
	}
	return nil
}

// decodeLz4Hadoop decompresses Hadoop-framed LZ4 blocks, or else one raw block, into exactly dst.
func decodeLz4Hadoop(dst, src []byte) error {
	if decodeHadoopFrames(dst, src) == nil {
		return nil
	}
	return decodeLz4Raw(dst, src)
}

// decodeHadoopFrames decompresses src, a sequence of Hadoop frames — uncompressed size,
// compressed size (both 32-bit big-endian), that many bytes of LZ4 block — into exactly dst.
func decodeHadoopFrames(dst, src []byte) error {
	at := 0
	for len(src) > 0 {
		if len(src) < 8 {
			return errors.New("a Hadoop LZ4 frame header cut short")
		}
		unc, comp := binary.BigEndian.Uint32(src), binary.BigEndian.Uint32(src[4:])
		src = src[8:]
		if uint64(comp) > uint64(len(src)) || uint64(unc) > uint64(len(dst)-at) {
			return errors.New("a Hadoop LZ4 frame larger than the page")
		}
		if err := decodeLz4Raw(dst[at:at+int(unc)], src[:comp]); err != nil {
			return err
		}
		at += int(unc)
		src = src[comp:]
	}
	if at != len(dst) {
		return fmt.Errorf("%d bytes", at)
	}
	return nil
}

// lz4Codec is the rest of arrow-go's Codec interface for the LZ4 codecs: blocks encoded as
// LZ4_RAW writes them; no streams (arrow-go's page reader decodes blocks, and ndarrow's writer
// offers no LZ4).
type lz4Codec struct{}

var errLz4Stream = fmt.Errorf("parquet: LZ4 streams: %w", ErrUnsupported)

func (lz4Codec) NewReader(io.Reader) io.ReadCloser { return errReadCloser{errLz4Stream} }

func (lz4Codec) NewWriter(io.Writer) io.WriteCloser { return errWriteCloser{errLz4Stream} }

func (lz4Codec) NewWriterLevel(io.Writer, int) (io.WriteCloser, error) { return nil, errLz4Stream }

func (c lz4Codec) Encode(dst, src []byte) []byte {
	bound := lz4.CompressBlockBound(len(src))
	if cap(dst) < bound {
		dst = make([]byte, bound)
	}
	n, err := lz4.CompressBlock(src, dst[:bound], nil)
	if err != nil {
		panic(fmt.Errorf("parquet: LZ4: %w", err)) // arrow-go's codecs report by panicking
	}
	return dst[:n]
}

func (c lz4Codec) EncodeLevel(dst, src []byte, _ int) []byte { return c.Encode(dst, src) }

func (lz4Codec) CompressBound(n int64) int64 { return int64(lz4.CompressBlockBound(int(n))) }

func (lz4Codec) Decode(dst, src []byte) []byte {
	if err := decodeLz4Raw(dst, src); err != nil {
		panic(fmt.Errorf("parquet: LZ4_RAW: %v: %w", err, ErrInvalid))
	}
	return dst
}

type errReadCloser struct{ err error }

func (e errReadCloser) Read([]byte) (int, error) { return 0, e.err }
func (e errReadCloser) Close() error             { return nil }

type errWriteCloser struct{ err error }

func (e errWriteCloser) Write([]byte) (int, error) { return 0, e.err }
func (e errWriteCloser) Close() error              { return e.err }
