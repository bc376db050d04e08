// Package limits bounds what ndarrow's readers accept from input they do not control, so that
// a small or hostile input cannot make them allocate, decompress or loop more than the caller
// allows. One Limits value is taken by every reading entry point of every format package, by
// the dataset layer that opens files, and by the Flight server for uploads.
//
// A zero field takes its default, so Limits{} means "the defaults" and a caller tightens or
// raises only the fields it names:
//
//	lim := limits.Limits{MaxBodySize: 64 << 20} // everything else as Default
package limits

import (
	"errors"
	"math"
)

// ErrExceeded reports input that exceeds one of the Limits. The format packages' own limit
// errors (ipc.ErrLimit, npy.ErrLimit, sparse.ErrTooLarge) wrap it, so one errors.Is test
// tells a limit from malformed input.
var ErrExceeded = errors.New("input exceeds a limit")

// ExceededError is an error of input beyond the limit of one field of Limits: what it needs
// (Needs; -1 when more than an int64 counts) and the limit it is above, so that a caller that
// sets that field (from a flag) can say what to raise it to. Its text is Msg; it matches
// ErrExceeded and Also (a package's own sentinel), when set.
type ExceededError struct {
	Field        string // the field of Limits: "MaxDenseElements"
	Needs, Limit int64
	Msg          string
	Also         error
}

func (e *ExceededError) Error() string { return e.Msg }

func (e *ExceededError) Unwrap() []error {
	if e.Also == nil {
		return []error{ErrExceeded}
	}
	return []error{e.Also, ErrExceeded}
}

// Limits bound what one read accepts. A zero or negative field takes its default.
type Limits struct {
	// MaxMetadataSize bounds the metadata of one message or file: the flatbuffer of an Arrow
	// IPC message or file footer, the header of a .npy file. Default 16 MiB.
	MaxMetadataSize int64
	// MaxBodySize bounds the body of one Arrow IPC message, in bytes, as stored and as
	// decompressed. Default 16 GiB (the largest int on 32-bit platforms).
	MaxBodySize int64
	// MaxRank bounds the number of dimensions of a tensor. Default 64.
	MaxRank int
	// MaxElements bounds the elements of one tensor and the values of one array of a record
	// batch (a field node's length). Default 2^40.
	MaxElements int64
	// MaxCopySize bounds the bytes one reader allocates, over all the messages it reads, for
	// what it cannot view in its input: decompressed LZ4 and ZSTD bodies (which may expand a
	// thousandfold), byte-swapped big-endian buffers, realigned buffers and merged dictionary
	// deltas; for Parquet, what decoding one row group takes (a file read whole: all of
	// them), and for a directory dataset read whole (dataset.OpenDir, not ScanDir, whose
	// chunks are bounded one by one), the copy that joins a table's parts. Default 4 GiB (the
	// largest int on 32-bit platforms).
	MaxCopySize int64
	// MaxDenseElements bounds the elements a sparse tensor is expanded to when a dense form
	// is asked of it (a conversion to a dense format, a hash of its dense values): its shape
	// may claim far more than its stored values. Default 2^28 (2 GiB of float64).
	MaxDenseElements int64
}

// Default returns the limits used when none are given.
func Default() Limits {
	return Limits{
		MaxMetadataSize:  16 << 20,
		MaxBodySize:      min(16<<30, math.MaxInt),
		MaxRank:          64,
		MaxElements:      1 << 40,
		MaxCopySize:      min(4<<30, math.MaxInt),
		MaxDenseElements: 1 << 28,
	}
}

// WithDefaults returns l with every zero or negative field set to its default.
func (l Limits) WithDefaults() Limits {
	d := Default()
	if l.MaxMetadataSize <= 0 {
		l.MaxMetadataSize = d.MaxMetadataSize
	}
	if l.MaxBodySize <= 0 {
		l.MaxBodySize = d.MaxBodySize
	}
	if l.MaxRank <= 0 {
		l.MaxRank = d.MaxRank
	}
	if l.MaxElements <= 0 {
		l.MaxElements = d.MaxElements
	}
	if l.MaxCopySize <= 0 {
		l.MaxCopySize = d.MaxCopySize
	}
	if l.MaxDenseElements <= 0 {
		l.MaxDenseElements = d.MaxDenseElements
	}
	return l
}
