package ipc

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// Sentinel errors. Every error a reader returns wraps one of them (and io.ErrUnexpectedEOF
// when the input ends inside a message), and says what was wrong and at which byte offset.
var (
	// ErrInvalid reports a malformed message: bad framing, metadata that is not a valid
	// flatbuffer, or a tensor whose shape, strides, type or buffers contradict each other.
	// Typically this indicates wrong or corrupted input. It wraps arrow.ErrInvalid.
	ErrInvalid = fmt.Errorf("invalid IPC message: %w", arrow.ErrInvalid)
	// ErrLimit reports a message that exceeds one of the reader's Limits.
	ErrLimit = errors.New("IPC message exceeds a limit")
	// ErrUnsupported reports a well-formed message that this reader does not decode, such as
	// a record batch in a tensor stream.
	ErrUnsupported = errors.New("unsupported IPC message")
)
