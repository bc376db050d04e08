// Package ndarray provides n-dimensional arrays over plain Go slices: the NdArray facade of
// ndarrow, after the TensorFlow Java "Tensor I/O" RFC.
//
// # Arrays and memory
//
// A [Dense] is a view: a backing slice, a [Shape], strides counted in elements and an offset,
// together a [Layout]. [New] allocates a zeroed row-major array; [FromSlice] and [FromLayout]
// wrap existing data without copying it. Everything that can be expressed with strides
// returns a view that shares the backing with its source, so writes through one are seen by
// the other:
//
//   - [Dense.Slice] with [At], [All], [Range], [RangeStep], [From], [To], [Step], [Flip],
//     [Even], [Odd], [Mod], [NewAxis] and [Ellipsis], and with [Incl] or [Excl] when the
//     positions they leave are evenly spaced;
//   - [Dense.Elements], [Dense.Transpose], [Dense.Permute], [Dense.AsReadOnly];
//   - [Dense.Reshape] when the layout allows it (always for a row-major array).
//
// These return copies, and say so: [Dense.Slice] with [Incl] or [Excl] on uneven positions or
// with [Take] (NumPy's advanced indexing), [Dense.Reshape] when no strides can express the new
// shape, [Dense.Clone], and the bulk copies [Dense.CopyFrom], [Dense.CopyTo] and [Copy].
// [Dense.SharesMemory] tells which case a result is.
//
// Row-major, column-major, arbitrary (also zero and negative) strides, zero-size dimensions
// and rank 0 are all valid. Iteration with [Dense.Values] is in row-major order whatever the
// layout, and Get and Set do not allocate.
//
// # Element types
//
// The element types are int8 to int64, uint8 to uint64, float16 ([float16.Num] from Arrow
// Go), float32, float64, bool and string, listed by the [Element] constraint and described at
// run time by [DType]: NumPy name, byte width, [Family] and, for numeric types, the Arrow data
// type. The package imports the root arrow package only for those data types and float16;
// the Arrow memory formats live in package arrowtensor and above.
//
// # NumPy's everyday verbs
//
// [Zeros], [Ones], [Eye], [Linspace], [Full] and [Arange] build arrays. [Sum], [Mean], [Min],
// [Max], [ArgMin] and [ArgMax] reduce every element, and [SumAxis], [MeanAxis], [MinAxis],
// [MaxAxis], [ArgMinAxis] and [ArgMaxAxis] one axis, of views of any strides, allocating only
// the result (float sums are pairwise, as NumPy's; a contiguous float64 sum runs on gonum's
// assembly kernel). [Add], [Sub], [Mul] and [Div] broadcast as NumPy does ([BroadcastShapes],
// [BroadcastTo]), with scalar forms ([AddScalar], …) and in-place ones ([AddInPlace], …);
// [Map] and [Apply] take any function; [AllClose] compares within tolerances; [AsTypeChecked]
// converts, failing on a value the target cannot hold. They take the [Real] types: convert a
// float16 array with [AsType] first.
//
// # Errors and panics
//
// Misuse panics, with a message naming the method, the indices and the shape, as Go's slice
// indexing does: an index out of range or a wrong number of indices in Get and Set, a write to
// a read-only array. Anything that may come from outside the program returns an error that
// wraps one of [ErrShape], [ErrIndex], [ErrLayout] or [ErrDType]: a shape or length that does
// not match, a layout that reaches outside its data ([Layout.Validate] checks it with
// overflow-safe arithmetic), a Slice index list, a malformed stream in [Dense.ReadFrom].
//
// # Stream format
//
// [Dense.WriteTo] and [Dense.ReadFrom] stream the elements in row-major order with no header:
// fixed-width types as little-endian bytes (bool one byte, 0 or 1), strings as a 4-byte
// little-endian length followed by the bytes. The shape travels separately.
//
// # Printing
//
// [Dense.String] prints like NumPy's str(), including alignment on the decimal point,
// exponent notation for wide-ranging floats and "..." summaries of large arrays; [Dense.Format]
// applies any fmt verb to each element.
package ndarray
