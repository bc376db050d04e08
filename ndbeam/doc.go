// Package ndbeam is ndarrow's readers and writers as Apache Beam IO, for pipelines larger than
// one machine: Read gives a table — files, a directory of parts or an object-store prefix, in
// any format ndarrow reads — as a PCollection of record batches, split into the table's
// fragments and rows within them so that a runner shares the work out and splits it further
// as it runs; Write writes a PCollection of record batches as part files by Beam's file-sink
// protocol; Sample reads a random sample of a table's rows.
//
// It is a module of its own (github.com/ndarrow/ndarrow/ndbeam), so that ndarrow's core keeps
// its dependencies: Beam's Go SDK brings some six hundred packages.
package ndbeam
