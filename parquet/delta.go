package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// arrow-go v17 decodes DELTA_BINARY_PACKED (INT32, INT64) and DELTA_LENGTH_BYTE_ARRAY
// (BYTE_ARRAY) pages, but sizes its buffers from the page's own header before checking it: a
// miniblock of 2^32 values, a block of 2^64 miniblocks, 2^64 lengths. checkDelta walks the
// encoded values first — header, then every block's minimum delta and bit widths and every
// miniblock the values need — and lets arrow-go decode only what keeps to the spec and to the
// page: blocks of at most maxDeltaBlock values, bit widths the type can hold, miniblocks
// inside the page, no more values than the page declares.

// Parquet's encoding numbers for the two.
const (
	encodingDeltaBinaryPacked    = 5
	encodingDeltaLengthByteArray = 6
)

// maxDeltaBlock bounds a block's values: writers use 128 (parquet-mr, Arrow C++, arrow-go,
// arrow-rs) or 2048 (DuckDB); arrow-go allocates a miniblock's values at once.
const maxDeltaBlock = 1 << 16

var errDelta = errors.New("DELTA_BINARY_PACKED values")

// checkDelta checks that b begins with DELTA_BINARY_PACKED values of at most maxValues values
// of bitsPerValue bits, and returns how many values it holds and the bytes they take.
func checkDelta(b []byte, maxValues int64, bitsPerValue int) (values int64, used int, err error) {
	pos := 0
	uvarint := func(what string) (uint64, error) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, fmt.Errorf("%w: the %s cut short or too long", errDelta, what)
		}
		pos += n
		return v, nil
	}
	block, err := uvarint("block size")
	if err != nil {
		return 0, 0, err
	}
	minis, err := uvarint("miniblock count")
	if err != nil {
		return 0, 0, err
	}
	total, err := uvarint("value count")
	if err != nil {
		return 0, 0, err
	}
	if _, err := uvarint("first value"); err != nil { // zigzag: any 64-bit value
		return 0, 0, err
	}
	switch {
	case block == 0 || block%128 != 0 || block > maxDeltaBlock:
		return 0, 0, fmt.Errorf("%w: blocks of %d values (a multiple of 128 up to %d)", errDelta, block, maxDeltaBlock)
	case minis == 0 || block%minis != 0 || (block/minis)%32 != 0:
		return 0, 0, fmt.Errorf("%w: %d miniblocks in a block of %d (each a multiple of 32 values)", errDelta, minis, block)
	case total > uint64(maxValues):
		return 0, 0, fmt.Errorf("%w: %d values in a page of %d", errDelta, total, maxValues)
	}
	perMini := block / minis
	for left := max(total, 1) - 1; left > 0; {
		if _, err := uvarint("minimum delta"); err != nil {
			return 0, 0, err
		}
		if uint64(len(b)-pos) < minis {
			return 0, 0, fmt.Errorf("%w: the bit widths of %d miniblocks cut short", errDelta, minis)
		}
		widths := b[pos : pos+int(minis)]
		pos += int(minis)
		for _, w := range widths {
			if left == 0 {
				break // the last block's unused miniblocks: widths only
			}
			if int(w) > bitsPerValue {
				return 0, 0, fmt.Errorf("%w: deltas of %d bits for %d-bit values", errDelta, w, bitsPerValue)
			}
			size := perMini * uint64(w) / 8
			if uint64(len(b)-pos) < size {
				return 0, 0, fmt.Errorf("%w: a miniblock of %d bytes with %d left", errDelta, size, len(b)-pos)
			}
			pos += int(size)
			left -= min(left, perMini)
		}
	}
	return int64(total), pos, nil
}

// checkDeltaPage checks the values of a data page in DELTA_BINARY_PACKED (of bitsPerValue-bit
// numbers) or DELTA_LENGTH_BYTE_ARRAY, given the page's values (its levels skipped,
// decompressed) and its declared value count, nulls included.
func checkDeltaPage(encoding int32, values []byte, numValues int64, bitsPerValue int) error {
	if encoding == encodingDeltaBinaryPacked {
		_, _, err := checkDelta(values, numValues, bitsPerValue)
		return err
	}
	// DELTA_LENGTH_BYTE_ARRAY: the lengths, then the bytes of every value.
	n, used, err := checkDelta(values, numValues, 32)
	if err != nil {
		return fmt.Errorf("the lengths: %w", err)
	}
	lengths, err := decodeDelta(values[:used], n)
	if err != nil {
		return fmt.Errorf("the lengths: %w", err)
	}
	sum := uint64(0)
	for _, l := range lengths {
		if l < 0 || l > int64(^uint32(0)>>1) {
			return fmt.Errorf("a value of %d bytes: %w", l, errDelta)
		}
		sum += uint64(l)
	}
	if sum > uint64(len(values)-used) {
		return fmt.Errorf("values of %d bytes in all with %d left in the page: %w", sum, len(values)-used, errDelta)
	}
	return nil
}

// decodeDelta decodes the n values of DELTA_BINARY_PACKED b, which checkDelta accepted (64-bit
// arithmetic wrapping, as the spec has it).
func decodeDelta(b []byte, n int64) ([]int64, error) {
	out := make([]int64, 0, n)
	pos := 0
	next := func() uint64 {
		v, k := binary.Uvarint(b[pos:])
		pos += k
		return v
	}
	block, minis, _ := next(), next(), next()
	zz := next()
	last := int64(zz>>1) ^ -int64(zz&1)
	if n > 0 {
		out = append(out, last)
	}
	perMini := int(block / minis)
	for int64(len(out)) < n {
		zz := next()
		minDelta := int64(zz>>1) ^ -int64(zz&1)
		widths := b[pos : pos+int(minis)]
		pos += int(minis)
		for _, w := range widths {
			if int64(len(out)) >= n {
				break
			}
			r := bitReader{b: b[pos : pos+perMini*int(w)/8]}
			for range perMini {
				d := r.read(int(w))
				if int64(len(out)) < n {
					last += int64(d) + minDelta
					out = append(out, last)
				}
			}
			pos += perMini * int(w) / 8
		}
	}
	return out, nil
}

// bitReader reads little-endian bit-packed values, least significant bits first.
type bitReader struct {
	b   []byte
	bit int
}

func (r *bitReader) read(width int) uint64 {
	var v uint64
	for got := 0; got < width; {
		byteAt, off := r.bit/8, r.bit%8
		take := min(8-off, width-got)
		v |= uint64(r.b[byteAt]>>off&byte(1<<take-1)) << got
		got += take
		r.bit += take
	}
	return v
}
