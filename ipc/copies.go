package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Expansion bounds of the two codecs, from their formats: an LZ4 match adds at most 255
// bytes per input byte; a ZSTD RLE block turns 4 bytes into at most 128 KiB. A buffer that
// declares more than its codec can produce from its compressed bytes is malformed.
const (
	maxLZ4Ratio   = 256
	maxZSTDRatio  = 32768
	expansionSlop = 1 << 20
)

// copier makes the buffers a reader cannot view in its input — decompressed, byte-swapped or
// realigned ones — from its allocator, counting them against Limits.MaxCopySize over the
// reader's whole life.
type copier struct {
	mem     memory.Allocator
	lim     Limits
	copied  int64
	zstd    *zstd.Decoder
	reserve func(n int64) error // BatchOptions.Reserve
}

// allocate returns a buffer of n bytes, holding one reference the caller owns.
func (c *copier) allocate(n int64, what string) (*memory.Buffer, error) {
	if n > c.lim.MaxCopySize-c.copied {
		return nil, fmt.Errorf("%s: copying %d more bytes after %d exceeds the limit of %d: %w", what, n, c.copied, c.lim.MaxCopySize, ErrLimit)
	}
	if c.reserve != nil {
		if err := c.reserve(n); err != nil {
			return nil, fmt.Errorf("%s: copying %d bytes: %w", what, n, err)
		}
	}
	c.copied += n
	buf := memory.NewResizableBuffer(c.mem)
	buf.Resize(int(n))
	return buf, nil
}

// copyOf returns a buffer holding a copy of b.
func (c *copier) copyOf(b []byte, what string) (*memory.Buffer, error) {
	buf, err := c.allocate(int64(len(b)), what)
	if err != nil {
		return nil, err
	}
	copy(buf.Bytes(), b)
	return buf, nil
}

// decompress returns the buffer a compressed body holds in b: an int64 little-endian
// uncompressed length, then the codec's frame; a length of -1 means the rest is not
// compressed, and it is returned as a view (owned false). The declared length is checked
// against what the codec can produce from the bytes present and against the limits before
// anything is allocated, and the output must be exactly that long. An empty buffer is nil.
func (c *copier) decompress(codec arrowfb.CompressionType, b []byte, what string) (buf *memory.Buffer, owned bool, err error) {
	if len(b) < 8 {
		return nil, false, fmt.Errorf("%s: a compressed buffer of %d bytes has no length prefix: %w", what, len(b), ErrInvalid)
	}
	n := int64(binary.LittleEndian.Uint64(b))
	src := b[8:]
	ratio := int64(maxLZ4Ratio)
	if codec == arrowfb.CompressionTypeZSTD {
		ratio = maxZSTDRatio
	}
	switch {
	case n == -1 && len(src) == 0, n == 0:
		return nil, false, nil
	case n == -1:
		return memory.NewBufferBytes(src), false, nil
	case n < 0:
		return nil, false, fmt.Errorf("%s: uncompressed length %d: %w", what, n, ErrInvalid)
	case n > c.lim.MaxBodySize:
		return nil, false, fmt.Errorf("%s: uncompressed length %d exceeds the limit of %d bytes: %w", what, n, c.lim.MaxBodySize, ErrLimit)
	case int64(len(src)) < (n-expansionSlop)/ratio:
		return nil, false, fmt.Errorf("%s: %d compressed bytes cannot hold the %d bytes declared: %w", what, len(src), n, ErrInvalid)
	}
	out, err := c.allocate(n, what)
	if err != nil {
		return nil, false, err
	}
	switch codec {
	case arrowfb.CompressionTypeLZ4_FRAME:
		err = c.lz4(src, out.Bytes())
	case arrowfb.CompressionTypeZSTD:
		err = c.zstdAll(src, out.Bytes())
	default:
		err = fmt.Errorf("compression codec %d: %w", codec, ErrUnsupported)
	}
	if err != nil {
		out.Release()
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	return out, true, nil
}

// lz4 decompresses one LZ4 frame in src into exactly dst.
func (c *copier) lz4(src, dst []byte) error {
	r := lz4.NewReader(bytes.NewReader(src))
	if _, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("LZ4 frame gives fewer than the %d bytes declared: %w: %w", len(dst), ErrInvalid, err)
	}
	var more [1]byte
	if n, _ := r.Read(more[:]); n != 0 {
		return fmt.Errorf("LZ4 frame holds more than the %d bytes declared: %w", len(dst), ErrInvalid)
	}
	return nil
}

// zstdAll decompresses the ZSTD frames in src into exactly dst.
func (c *copier) zstdAll(src, dst []byte) error {
	if c.zstd == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(uint64(c.lim.MaxBodySize)))
		if err != nil {
			return err
		}
		c.zstd = d
	}
	out, err := c.zstd.DecodeAll(src, dst[:0])
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return fmt.Errorf("ZSTD frames hold more than the %d bytes declared: %w", len(dst), ErrInvalid)
	case err != nil:
		return fmt.Errorf("ZSTD: %w: %w", ErrInvalid, err)
	case len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]):
		return fmt.Errorf("ZSTD frames hold %d bytes, not the %d declared: %w", len(out), len(dst), ErrInvalid)
	}
	return nil
}

// close releases the ZSTD decoder.
func (c *copier) close() {
	if c.zstd != nil {
		c.zstd.Close()
		c.zstd = nil
	}
}

// swapBytes turns the big-endian values in b little-endian, in place. b holds whole values.
func swapBytes(kind swapKind, b []byte) {
	switch kind {
	case swapMonthDayNano: // int32 months, int32 days, int64 nanoseconds
		for i := 0; i+16 <= len(b); i += 16 {
			ndarray.SwapBytes(b[i:i+8], 4)
			ndarray.SwapBytes(b[i+8:i+16], 8)
		}
	case swapNone:
	default:
		ndarray.SwapBytes(b, swapWidths[kind])
	}
}

// swapWidths are the value widths of the swaps that reverse whole values.
var swapWidths = map[swapKind]int{swap16: 2, swap32: 4, swap64: 8, swap128: 16, swap256: 32}

// aligned reports whether b starts at an address that is a multiple of align.
func aligned(b []byte, align int) bool {
	return align <= 1 || len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(align) == 0
}
