// Package sparse provides sparse n-dimensional arrays in the four layouts of Arrow's
// SparseTensor: COO (coordinate lists, any rank), CSR and CSC (compressed rows or columns of
// a matrix) and CSF (compressed sparse fibers, any rank).
//
// Every array implements ndarray.NdArray, the reading surface it shares with ndarray.Dense:
// Shape, Rank, Size, Get, and Values in dense row-major order, zeros included. Each converts
// to every other layout and to and from ndarray.Dense; conversions always copy.
//
// A COO is the array to build: Set and Get are O(1) expected through an index of the stored
// coordinates, and the array knows whether it is canonical — coordinates sorted in row-major
// order with no duplicates, TensorFlow's rule for tf.SparseTensor and Arrow's isCanonical.
// Slice makes views of a COO (fixed dimensions, offsets and steps, new axes) as Dense.Slice
// does for dense arrays.
//
// Duplicates. Arrow and TensorFlow allow a non-canonical COO to store one coordinate twice.
// ndarrow treats the later entry as the value at that coordinate — as if the entries had been
// Set in storage order, and as Arrow C++'s ToTensor densifies — so Get, Values, ToDense and
// every conversion agree, and Canonicalize keeps the last entry of each coordinate. (SciPy
// sums duplicates instead; sum them before handing data to ndarrow if that is what they mean.)
//
// Indices are int32 or int64 (Indices), chosen by the caller through the Make functions or
// derived from the shape: int32 when every dimension (and, for compressed layouts, the number
// of stored values) fits in it. Arrays that view memory they do not own — such as those the
// ipc package reads zero-copy — are read-only; writing to them panics.
//
// The package knows nothing of Arrow's formats: the ipc package reads and writes these arrays
// as SparseTensor messages and record batches.
package sparse
