// Package dataset reads the tensors of a file in any format ndarrow knows and names them
// the way the ndarrow command and its Flight server do.
//
// A file is recognized from its first bytes: a stream of Arrow Tensor and SparseTensor
// messages, a NumPy .npy file or .npz archive, or an Arrow IPC file or stream or a Parquet
// file of record batches whose columns are tensors (arrow.fixed_shape_tensor and plain
// fixed_size_list columns are dense, list, large_list and arrow.variable_shape_tensor columns
// are ragged, and a sparse record batch, see arrowtensor.SparseRecord, is one sparse tensor). Each tensor is
// named after the file's base name without extension: NAME for a file of one tensor, NAME.0,
// NAME.1, … for a stream of several, NAME.COLUMN for the columns of record batches and
// NAME.MEMBER for the arrays of an .npz archive.
//
// A TensorFlow TFRecord file (a name ending in .tfrecord or .tfrecords, with .gz for GZIP, or
// any file whose first record's CRCs verify) of tf.train.Example or SequenceExample records
// gives a tensor per feature, NAME.FEATURE; one of serialized TensorProto records a tensor per
// record, NAME.N (see ReadTFRecord).
//
// Dense tensors, fixed_shape_tensor columns of one batch and aligned stored .npz members are
// views of the file's bytes; Open maps the file into memory, so reading a large tensor costs
// no copy. Parquet columns are decoded into memory (see parquet.Reader).
//
// OpenDir reads a directory, recursively, as one dataset: a subdirectory is a table whose
// parts (Hive-style key=value folders or not) are joined column by column. ScanDir finds the
// same tensors without reading them: each is a Source whose chunks (a file's tensor, a row
// group of a Parquet column) are read one at a time on demand, so a table larger than memory
// can be sent, as the Flight server's DoGet sends it, in memory for one chunk. Dir.Rescan
// gives the directory as it is now, reading again only the files that changed.
//
// A mapping is only as stable as its file: if the file shrinks, reading the pages past its
// new end faults, and an unguarded fault ends the process. The package reads files under
// Guard; read the views it returns under Guard too, which turns such a fault into a
// *FileError wrapping ErrFileChanged that names the file.
package dataset
