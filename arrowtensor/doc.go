// Package arrowtensor maps ndarray arrays onto Arrow Go's in-memory types, without copying
// wherever the layouts allow.
//
//   - [ToTensor] and [FromTensor] convert between ndarray.Dense and arrow/tensor.Interface for
//     every numeric type, float16 included (arrow-go's tensor package has no float16; this
//     package supplies its own implementation of the interface).
//   - [FixedShapeTensorType] is the canonical extension type arrow.fixed_shape_tensor, which
//     Arrow Go v17 lacks; importing this package registers it, so arrow-go's IPC readers and
//     Flight clients return tensor columns as [FixedShapeTensorArray]. [NewFixedShapeTensorArray]
//     and [ToDense] convert between a column of N tensors and one Dense of shape [N, ...],
//     applying the type's permutation through strides as the specification defines it, and
//     [Records] splits a large tensor along its first axis into record batches.
//   - [RaggedFromList] and [ListFromRagged] convert between ragged.Array and nested list
//     arrays (list, large_list, fixed_size_list, any depth): the offsets are the row splits, so
//     a large_list is read in place in constant time. [RaggedFromVariableShape] and
//     [VariableShapeFromRagged] do the same for arrow.variable_shape_tensor, [RaggedRecords]
//     splits a ragged array into record batches, and [CheckTensorFlowIO] says whether
//     tensorflow-io's ArrowStreamDataset can read a record batch.
//   - [COORecord], [COOFromRecord] and [SparseFromRecord] carry a sparse tensor as a record
//     batch of coordinates and values.
//   - [DTypeFromArrow] is the inverse of ndarray.DType.ArrowType.
//
// Views share memory with their source: an Arrow array made from a Dense must not outlive the
// Dense's memory, and a Dense made from an Arrow array or tensor must not be used after that
// array or tensor is released.
package arrowtensor
