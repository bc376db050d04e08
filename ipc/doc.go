// Package ipc reads and writes Arrow IPC: Tensor and SparseTensor messages, and record-batch
// streams and files through one verified, zero-copy decoder.
//
// # Tensor messages
//
// An Arrow Tensor message is an encapsulated IPC message — a continuation marker, the length
// of its flatbuffer metadata, the metadata, zero padding, then a body — whose metadata
// describes one dense n-dimensional array: element type, shape with optional dimension names,
// strides in bytes and where the values are in the body. Arrow C++'s ipc::WriteTensor and
// pyarrow.ipc.write_tensor write them; Arrow Go has no support for them. [WriteTensor] writes
// exactly what Arrow C++ 17 writes (the same framing, 64-byte padding and body; see
// ARCHITECTURE.md), and [TensorReader] reads any number of them back to back.
// SparseTensor messages (COO, CSR, CSC, CSF) are read by the same reader ([TensorReader.NextAny],
// [TensorReader.NextSparse]) and written by [WriteSparse] as C++ 17 writes them.
//
// # Record batches
//
// [BatchReader] reads the record batches of an IPC stream or file in memory; [BatchDecoder]
// reads them one message at a time, metadata and body apart, as Arrow Flight carries them;
// [ReadRecordBatches] and [ReadSchema] are the one-call forms. All of them are the same
// decoder. It decodes the schema from its flatbuffer (for a file, from the footer, where Arrow
// JS writes it alone), then checks each batch before any arrow-go array exists — every field
// node's length and null count against the limits and the buffers its type needs, every
// buffer inside the body (overflow-checked), validity bitmaps long enough and with as many
// nulls as the node says, offsets that start at or above zero, never decrease and stay inside
// their child or data, dictionary indices inside their dictionary, variadic buffer counts
// within the buffers present, and a file's footer blocks inside the file and apart from one
// another — and then builds arrow-go array data over views of the input.
//
// Types: integers, floats (float16 included), bool, decimal128/256, dates, times, timestamps,
// durations, intervals, fixed-size binary, utf8 and binary and their large forms, list,
// large_list, fixed_size_list and map at any depth, struct, null, dictionary-encoded values
// (with deltas, and replacement in streams), and extension types registered with arrow-go
// (arrowtensor registers arrow.fixed_shape_tensor and arrow.variable_shape_tensor). Unions,
// binary and list views, run-end encoded and decimal32/64 columns are refused with
// ErrUnsupported naming the column, or, with [BatchOptions].SkipUnsupported, walked past by
// their buffer layout and left out of the schema and the records.
//
// # Zero copy, and the copies it cannot avoid
//
// Every buffer of a record is a view of the input — a []byte or a memory-mapped file, which
// must stay unchanged while the records are in use — except where that is impossible:
// LZ4 and ZSTD bodies are decompressed, big-endian input (Schema.endianness = Big) is
// byte-swapped, a buffer whose address is misaligned for its values is realigned, and
// dictionary deltas are merged. Those copies come from [BatchOptions].Allocator and count
// against Limits.MaxCopySize. A [TensorReader] made with [NewBytesReader] or [OpenFile]
// returns tensors whose values view its input in the same way; [NewReader] copies each body
// once from an io.Reader.
//
// # Untrusted input
//
// Every reader treats its input as hostile: the flatbuffer metadata is verified before any
// field is read (internal/arrowfb), and every length, offset, shape, stride and buffer is
// checked with overflow-safe arithmetic against the input and against [Limits] (defined in
// package limits, shared by every reader of ndarrow) before anything is allocated. Bad input
// returns an error wrapping [ErrInvalid], [ErrLimit], [ErrUnsupported] or io.ErrUnexpectedEOF
// that names the byte offset of the message and the column, and never panics; a recover at
// each entry point is a second net, not the validation. A compressed buffer may declare no
// more than its codec can produce from the bytes present (256 bytes per byte for LZ4, 32768
// for ZSTD), so a small input cannot make a reader allocate much. arrow-go's own IPC readers,
// which size allocations from counts in their input, are never used to read.
package ipc
