package parquet

import (
	"bytes"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// arrow-go's page reader hands each codec a buffer of the size the page header declares, but
// its ZSTD and Snappy decoders grow past it (a ZSTD frame may expand 32768-fold, a Snappy
// header may claim 4 GiB) and its GZIP decoder reads everything when the declared size is 0.
// This package registers, for reading, decoders that write at most the declared size and fail
// (a panic the reader turns into ErrInvalid) when the page holds more. Encoding is arrow-go's.

func init() {
	for c, decode := range map[compress.Compression]func(dst, src []byte) error{
		compress.Codecs.Zstd:   decodeZstd,
		compress.Codecs.Snappy: decodeSnappy,
		compress.Codecs.Gzip:   decodeGzip,
		compress.Codecs.Brotli: decodeBrotli,
	} {
		base, err := compress.GetCodec(c)
		if err != nil {
			panic(err) // arrow-go registers all four in its init
		}
		compress.RegisterCodec(c, boundedCodec{Codec: base, decode: decode, name: c.String()})
	}
}

// boundedCodec is arrow-go's codec with a Decode that writes no more than len(dst).
type boundedCodec struct {
	compress.Codec
	decode func(dst, src []byte) error
	name   string
}

// Decode decompresses src into dst, which must come out exactly full; arrow-go's codecs
// report errors by panicking, and so does this one.
func (c boundedCodec) Decode(dst, src []byte) []byte {
	if len(dst) == 0 && len(src) == 0 {
		return dst // an empty page, which some writers leave without a codec frame
	}
	if err := c.decode(dst, src); err != nil {
		panic(fmt.Errorf("parquet: %s page of %d bytes declared %d uncompressed: %v: %w", c.name, len(src), len(dst), err, ErrInvalid))
	}
	return dst
}

var zstdDecoder *zstd.Decoder

func init() {
	var err error
	zstdDecoder, err = zstd.NewReader(nil,
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(maxZstdWindow),
		zstd.WithDecoderConcurrency(0))
	if err != nil {
		panic(err)
	}
}

// maxZstdWindow bounds the history a ZSTD frame of a page may ask for; writers compress each
// page alone, so a page's window is at most its size, well below this.
const maxZstdWindow = 256 << 20

func decodeZstd(dst, src []byte) error {
	out, err := zstdDecoder.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return err
	}
	if len(out) != len(dst) {
		return fmt.Errorf("%d bytes", len(out))
	}
	return nil
}

func decodeSnappy(dst, src []byte) error {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("snappy header says %d bytes", n)
	}
	_, err = snappy.Decode(dst, src)
	return err
}

func decodeGzip(dst, src []byte) error {
	r, err := gzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return err
	}
	return readExactly(r, dst)
}

func decodeBrotli(dst, src []byte) error {
	return readExactly(brotli.NewReader(bytes.NewReader(src)), dst)
}

// readExactly fills dst from r and checks r has nothing more.
func readExactly(r io.Reader, dst []byte) error {
	if _, err := io.ReadFull(r, dst); err != nil {
		return err
	}
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return fmt.Errorf("more than %d bytes", len(dst))
	}
	return nil
}
