package tfrecord

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Reading an uncompressed file by offset, for a reader of a byte range of it (a worker of a
// split file): a record is 8 bytes of length, the masked CRC-32C of those 8, the data, and
// the masked CRC-32C of the data.

// ReadAt reads the record that starts at byte off of an uncompressed TFRecord file of size
// bytes through r, verifying both its CRCs, and returns its data and where the next record
// starts. A record longer than maxRecord (0: DefaultMaxRecordSize), cut short by the file's
// end, or whose CRCs do not verify is an error wrapping ErrInvalid.
func ReadAt(r io.ReaderAt, off, size, maxRecord int64) (data []byte, next int64, err error) {
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecordSize
	}
	length, ok, err := headerAt(r, off, size)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, fmt.Errorf("tfrecord: record at byte %d: its length's CRC: %w", off, ErrChecksum)
	}
	if length > uint64(maxRecord) || length > uint64(size-off-16) {
		return nil, 0, fmt.Errorf("tfrecord: record at byte %d: %d bytes, with %d left in the file and at most %d a record: %w", off, length, size-off-16, maxRecord, ErrInvalid)
	}
	buf := make([]byte, length+4)
	if _, err := r.ReadAt(buf, off+12); err != nil {
		return nil, 0, fmt.Errorf("tfrecord: record at byte %d: %w", off, eofInvalid(err))
	}
	data = buf[:length]
	if MaskedCRC(data) != binary.LittleEndian.Uint32(buf[length:]) {
		return nil, 0, fmt.Errorf("tfrecord: record at byte %d: its data's CRC: %w", off, ErrChecksum)
	}
	return data, off + 16 + int64(length), nil
}

// headerAt reads the 12 header bytes at off and reports the length they hold and whether its
// CRC verifies. A header cut short by the file's end is an error wrapping ErrInvalid.
func headerAt(r io.ReaderAt, off, size int64) (length uint64, ok bool, err error) {
	if off < 0 || size-off < 16 {
		return 0, false, fmt.Errorf("tfrecord: a record at byte %d of a file of %d: %w", off, size, ErrInvalid)
	}
	var h [12]byte
	if _, err := r.ReadAt(h[:], off); err != nil {
		return 0, false, fmt.Errorf("tfrecord: record at byte %d: %w", off, eofInvalid(err))
	}
	return binary.LittleEndian.Uint64(h[:8]), MaskedCRC(h[:8]) == binary.LittleEndian.Uint32(h[8:]), nil
}

// eofInvalid makes an end of file met inside a record invalid input.
func eofInvalid(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("cut short: %w", ErrInvalid)
	}
	return err
}

// syncWindow is how many bytes Sync reads at a time.
const syncWindow = 1 << 20

// Sync returns the offset of the first record starting at or after from in an uncompressed
// TFRecord file of size bytes read through r — the first offset whose 12 bytes hold a length
// and its CRC, whose record's data then verifies too (ReadAt), and whose next syncFollowers
// records (or as many as there are before the end) verify as well — or size when none starts
// before the end. It reads the file from from on, a window at a time, until it finds one.
// Past 0, a false start needs every one of those CRCs to match by chance, or a record whose
// data holds TFRecord framing of its own (a TFRecord file in a bytes feature) of as many
// records: framing cannot tell those from the file's.
func Sync(r io.ReaderAt, from, size, maxRecord int64) (int64, error) {
	if from <= 0 {
		return 0, nil
	}
	buf := make([]byte, max(min(syncWindow+11, size-from), 0))
	for at := from; at+16 <= size; {
		n := min(int64(len(buf)), size-at)
		if _, err := r.ReadAt(buf[:n], at); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := int64(0); i+12 <= n; i++ {
			h := buf[i : i+12]
			if MaskedCRC(h[:8]) != binary.LittleEndian.Uint32(h[8:]) {
				continue
			}
			if ok, err := chainAt(r, at+i, size, maxRecord); ok {
				return at + i, nil
			} else if err != nil {
				return 0, err
			}
		}
		at += max(n-11, 1)
	}
	return size, nil
}

// syncFollowers is how many records after a candidate start Sync verifies besides it.
const syncFollowers = 2

// chainAt reports whether a record starts at off and the syncFollowers after it (or those
// before the file's end) follow it whole; an error only for a read that failed.
func chainAt(r io.ReaderAt, off, size, maxRecord int64) (bool, error) {
	for range syncFollowers + 1 {
		_, next, err := ReadAt(r, off, size, maxRecord)
		if errors.Is(err, ErrInvalid) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if next == size {
			return true, nil
		}
		off = next
	}
	return true, nil
}
