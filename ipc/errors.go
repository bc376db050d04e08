package ipc

import (
	"errors"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/ndarrow/ndarrow/internal/sentinel"
	"github.com/ndarrow/ndarrow/limits"
)

// Sentinel errors. Every error a reader returns wraps one of them (and io.ErrUnexpectedEOF
// when the input ends inside a message), and says what was wrong and at which byte offset.
var (
	// ErrInvalid reports malformed input: bad framing, metadata that is not a valid
	// flatbuffer, a tensor whose shape, strides, type or buffers contradict each other, or a
	// record batch whose lengths, offsets or buffers do not fit. Typically this indicates
	// wrong or corrupted input. It wraps arrow.ErrInvalid.
	ErrInvalid = sentinel.New("invalid Arrow IPC input", arrow.ErrInvalid)
	// ErrLimit reports input that exceeds one of the reader's Limits. It wraps
	// limits.ErrExceeded.
	ErrLimit = sentinel.New("Arrow IPC input exceeds a limit", limits.ErrExceeded)
	// ErrUnsupported reports well-formed input that this package does not decode: a record
	// batch in a tensor stream, a column of a type it has no arrays for, a metadata version
	// before V4.
	ErrUnsupported = errors.New("unsupported Arrow IPC input")
)
