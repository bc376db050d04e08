// Package ragged provides ragged arrays: n-dimensional arrays whose dimensions after the first
// may have rows of different lengths, as TensorFlow's RaggedTensor and Arrow's nested list
// arrays hold them.
//
// # Layout
//
// An Array keeps its values flat, in row-major order, and one row partition per partitioned
// dimension, outermost first: row splits for a ragged dimension (row i of the level holds
// next-level rows splits[i] to splits[i+1]) or a uniform row length. Uniform dimensions after
// the last ragged one are the inner shape of each value row. This is TensorFlow's
// RaggedTensor (nested_row_splits over flat_values, ragged_rank partitions) and, split for
// split, the offsets of Arrow's list and large_list arrays; package arrowtensor converts
// between the two without copying where it can.
//
// # Building and reading
//
// New makes an empty array from a shape with ndarray.Unknown (-1) for ragged dimensions; Set
// grows rows as it writes past their end (appending in row-major order is amortized O(1)).
// Make and FromRowSplits wrap existing values and splits after checking them exactly as
// TensorFlow does: a failed check returns a *ValidationError naming the level and the Rule.
// FromDense and ToDense convert from and to padded dense arrays.
//
// Every Array implements ndarray.NdArray: Shape (ragged dimensions Unknown), Rank, Get, and
// Values over the stored values. RowSplits, RowLengths, FlatValues, RowValues and Row read the
// structure.
//
// # Memory
//
// Make and FromRowSplits view the values and int64 splits they are given; int32 splits are
// widened into new int64 slices. Row, Elements, FlatValues, RowValues and AsReadOnly return
// views that share the array's storage; views cannot grow and are valid until the array they
// came from grows (as Go slices are after append). RowSplits returns views where the splits
// already start at 0 and rebased copies where not. Clone, Concat, FromDense and ToDense copy.
// Arrays over memory the program does not own, such as Arrow buffers, are read-only.
//
// The package knows nothing of Arrow: package arrowtensor maps ragged arrays onto list,
// large_list, fixed_size_list and arrow.variable_shape_tensor arrays.
package ragged
