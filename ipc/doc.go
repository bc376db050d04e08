// Package ipc reads and writes Arrow IPC messages that hold tensors.
//
// # Tensor messages
//
// An Arrow Tensor message is an encapsulated IPC message — a continuation marker, the length
// of its flatbuffer metadata, the metadata, zero padding, then a body — whose metadata
// describes one dense n-dimensional array: element type, shape with optional dimension names,
// strides in bytes and where the values are in the body. Arrow C++'s ipc::WriteTensor and
// pyarrow.ipc.write_tensor write them; Arrow Go has no support for them. [WriteTensor] writes
// exactly what Arrow C++ 17 writes (the same framing, 64-byte padding and body; see
// ARROW_FORMAT_NOTES.md in the design notes), and [TensorReader] reads any number of them
// back to back.
//
// # Zero copy
//
// A [TensorReader] made with [NewBytesReader] or [OpenFile] decodes tensors whose values are
// views of its input: [AsDense] returns a read-only ndarray.Dense over those bytes, so reading
// a tensor takes the same time whatever its size. Values that are not aligned for their type
// (possible only with a []byte that starts at an odd address) are copied instead. A reader
// made with [NewReader] copies each body once from its io.Reader. Memory-mapped files stay
// mapped until the reader is closed and every tensor is released.
//
// # Untrusted input
//
// Every reader treats its input as hostile: the flatbuffer metadata is verified before any
// field is read (internal/arrowfb), and every length, offset, shape, stride and buffer is
// checked with overflow-safe arithmetic against the input and against [Limits]. Bad input
// returns an error wrapping [ErrInvalid], [ErrLimit], [ErrUnsupported] or
// io.ErrUnexpectedEOF that names the byte offset of the message, and never panics.
package ipc
