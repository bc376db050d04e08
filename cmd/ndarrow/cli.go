package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpText is each command's usage line (after "ndarrow NAME") and its description, as
// `ndarrow help NAME`, `ndarrow NAME -h` and `ndarrow NAME --help` print them.
// objectURIs says how objects are named, for the commands that take them.
const objectURIs = `s3://BUCKET/KEY (AWS's credentials and AWS_ENDPOINT_URL_S3 for
S3-compatible stores), gs://BUCKET/KEY (Google's Application Default Credentials), or an
http(s):// URL of a server of byte ranges (read only); a KEY ending in "/" is a prefix.`

// unreadableHelp says what the commands that read a directory do with a file that cannot be
// read.
const unreadableHelp = `A file of a directory that cannot be read (cut short, empty, a part that
does not join the others, one of two files whose names differ only in their extension) is an
error naming it; --skip-unreadable reads the rest, naming each file left out on stderr`

var helpText = map[string]struct{ args, text string }{
	"inspect": {"[--json] [--max-dense N] [--compression C] [--spec FILE] [--skip-unreadable] FILE|DIR...", `Inspect describes every tensor in each FILE, or in every tensor file of DIR (named as serve
names them): its name, kind, dtype, shape, dimension names, stored values (nnz) and the
sha256 of its values (dense, row-major, little-endian; a sparse tensor's zeros included, a
ragged tensor's flat values; a string as its 4-byte little-endian length and bytes), plus
the column, the row splits of a ragged column and the null rows of a plain column (nulls,
NULLS). Every column of a table is a tensor or is named as left out, with its Arrow type and
why (a struct, a map, a timestamp…), never an error. With --json, one JSON object per tensor
and line, then one per column left out: {"name", "column", "left_out": TYPE, "why"}. A FILE or
DIR may be an object or a prefix of objects: ` + objectURIs + ` The format is recognized from
the file's first bytes:
` + inputFormats},
	"batches": {"--batch-size N [--shuffle SEED] [--epoch E] [--shard K/N] [--drop-last] [--after CURSOR] [--cursors FILE] [--columns NAMES] [--table NAME] [--skip-unreadable] [--readahead SIZE] [--page-cache SIZE] IN OUT", `Batches writes the mini-batches of the table in IN — a file, a directory of parts, an object or a
prefix of objects — to OUT, an Arrow IPC stream (a .arrows file, or - for standard output)
whose record batches are the mini-batches in order: N rows each but a shard's last (unless
--drop-last), every column of the table (or those --columns names).

--shuffle SEED orders each epoch's rows by a pseudorandom permutation of all the table's rows
(not of its files or row groups) keyed by SEED and --epoch: the same on any machine, another
each epoch. --shard K/N gives worker K (from 0) its share of the epoch: the shards together
give every row once, their sizes within one row; with --drop-last every shard gives as many
batches. --cursors FILE writes, after each batch is written, its cursor (a printable token)
on a line of FILE; --after CURSOR resumes after that batch with the same options, giving
exactly the batches that followed it. A cursor pins the table's files: resuming after they
changed (a chmod or touch too) is an error naming each file and what differs in it. A file
that changes while batches reads it fails the command, naming it, and leaves no OUT.
` + unreadableHelp + `.

Batches are read ahead of the one being written, as many as --readahead SIZE of them holds
(default 32MiB; at least one). Pages of compressed Parquet files are decompressed once, into a
scratch file in TMPDIR of at most --page-cache SIZE (default: 16GiB, or half the free space
there if less; 0 keeps none), unnamed so that nothing is left behind: in a shuffled epoch
every batch holds rows of most pages. SIZE is bytes, or a number with KiB, MiB, GiB or TiB.`},
	"take": {"--rows LIST|@FILE [--columns NAMES] [--table NAME] [--skip-unreadable] [--to FORMAT] [--fill VALUE] IN OUT", `Take writes rows of the table in IN — a file, a directory of parts, an object or a prefix of
objects (` + objectURIs + `) — to OUT in FORMAT, which OUT's extension gives unless --to does
(OUT - is standard output, with --to). --rows gives the rows: indices separated by commas, or
@FILE with one index a line (@- reads them from standard input); in any order, repeated or
not, negative ones counting from the end as NumPy's do; a row outside the table is an error
naming it and the table's rows, before anything is read. The rows are written in the order
given, with every column of the table in its order (each column that has no tensor form named
on stderr), or the columns --columns names, in that order.

Only what the rows need is read: of an Arrow IPC file, the record batches holding them (views
of the mapped file); of a Parquet file, the pages holding them; of an object, only those
batches, pages or .npy rows are fetched. A TFRecord file has no row index: it is read
whole, and take says so. A directory's tables are named as inspect names them: --table picks
one when IN holds several. ` + unreadableHelp + `.`},
	"convert": {"[--to FORMAT] [--tensor NAME] [--fill VALUE] [--dense] [--max-dense N] [--compression C] [--spec FILE] [--skip-unreadable] IN OUT", `Convert writes the tensors of IN — a file, or every tensor file of a directory, named as serve
names them — to OUT in FORMAT, which OUT's extension gives unless --to does:` + formatList() + `

` + keeps + `
A table's columns are written in their order; each column that has no tensor form is named
on stderr ("t.s: struct<a: int32> left out: …"). arrow, arrows and parquet keep the null rows
of plain columns; the other formats refuse them unless --fill gives them a value, parsed as
each column's dtype. A format that cannot hold a tensor (strings in a .tensor file) fails
naming it, or with --skip-unsupported leaves it out, named. ` + unreadableHelp + `.
--tensor picks one tensor of an input that holds several (by the name inspect prints). OUT is
written through a temporary file renamed at the end, so a failure leaves nothing behind; an
input file that changes while it is read (its size, modification time or change time: an
rsync --inplace -t, a chmod) fails the command, naming it. IN and
OUT may be objects: ` + objectURIs + ` An object written appears only when complete.`},
	"serve": {"[--addr HOST:PORT] [--writable] [--grace D] [--watch=false] [--poll D] [--skip-unreadable] [--tls-cert F --tls-key F [--tls-client-ca F]] [--token T] [--location URI --shards URI,...] [--shard K/N] [--max-message-bytes N] [--memory-budget SIZE] [--page-cache SIZE] [--tfio ENDPOINT [--tfio-tensors NAME,...] [--tfio-batch-rows N]] DIR",
		`Serve serves every tensor file of DIR over Arrow Flight, memory-mapped, each under the name
inspect prints (NAME, NAME.N, NAME.COLUMN). Files that are not tensor files are ignored; tensor
files that cannot be served are reported.

The server is read-only: put and delete are refused (PermissionDenied) unless it is started
with --writable, which, without --token, it warns takes them from any client that reaches it.

Ctrl-C or SIGTERM shuts the server down: new calls are refused (Unavailable, "server shutting
down"), the calls under way have --grace (10s) to finish, and those still running then are cut
with Unavailable saying so, each logged with what it had sent; serve exits within a second of
the grace, with status 0.

The server follows DIR: files that appear are served, files replaced or rewritten are served
from their new contents and files removed are no longer served, within a second of the change
(change notifications; --watch=false turns them off), and at SIGHUP or the "reload" Flight
action. A file is served once it reads whole: until it does (one still being written, or cut
short in place), its table is not served — a client asking for it is told which file, ls lists
it with no rows — or, with --skip-unreadable, served without it, the file named on stderr and
in the table's FlightInfo (app_metadata "skipped"). A file removed is no such file: its table
is served without it, as a new version. A stream already running keeps the version it started with; one whose file is truncated
or rewritten in place under it fails with DataLoss, naming the file, and the others go on.

DIR may be a prefix of objects (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX), served as a
directory and listed again every --poll (10s): a Parquet object's footer is fetched when it
is listed, each row group's column chunk as a stream reaches it; an object replaced since it
was listed fails the stream with DataLoss. --shard K/N serves only the K-th (from 0) of N
contiguous shares of each tensor's objects and row groups: N servers over one prefix, each
given the N as --shards in K order, serve every tensor together.

Parquet files are decoded row group by row group as each stream reaches them; what all streams
hold decoding at once stays within --memory-budget (each row group counted at about three times
its values' size): a stream whose next row group does not fit waits its turn, and after a minute
fails with ResourceExhausted, so no number of clients can exhaust the server's memory. The pages
of compressed Parquet files that takes and mini-batches read are decompressed once, into a
scratch file in TMPDIR of at most --page-cache SIZE (default: 16GiB, or half the free space there
if less; 0 keeps none), unnamed and outside the budget: the kernel's page cache holds it.

With --tfio tcp://A.B.C.D:PORT or unix://PATH it also writes, to every connection there, one
Arrow IPC stream that tensorflow-io's ArrowStreamDataset reads: a column per tensor (all, or
--tfio-tensors; equal row counts) — scalars, or list<T> of each row's values in row-major
order (the row shapes are printed, for tf.reshape) — no nulls, extension or large types, and
the end-of-stream marker.`},
	"ls": {"[--json] [client flags] URI", `Ls lists the tensors a Flight server serves: name, kind, dtype, shape, rows and bytes. The
files of a served directory a flight is left without are named on stderr, once each: served
without them (serve --skip-unreadable), or not served (its rows -, its first dimension -1);
--json lists them in "skipped" and "unreadable".`},
	"get": {"[--to FORMAT] [--tensor COLUMN] [--rows LIST|@FILE [--columns NAMES]] [--dense] [--max-dense N] [client flags] URI NAME OUT\n" +
		"  ndarrow get --batch-size N [--shuffle SEED] [--epoch E] [--shard K/N] [--drop-last] [--after CURSOR] [--cursors FILE] [--columns NAMES] [client flags] URI TABLE OUT",
		`Get fetches the tensor NAME from the Flight server at URI (grpc://, grpc+tls://) into OUT (a file,
or an object: s3://BUCKET/KEY, gs://BUCKET/KEY), in the format OUT's extension gives unless
--to does:` + formatList() + `

--rows fetches only the rows listed, in their order — repeated, negative ones counting from the
end; @FILE lists one a line — of a table (every column, or those --columns or --tensor names) or
of a tensor (rows along its first axis): the server reads only what holds them (a Parquet
row group's pages, an Arrow record batch) and sends them as one stream. A row outside NAME is
one error line naming the row and NAME's rows.

--batch-size N writes the mini-batches of the served table TABLE to OUT, an Arrow IPC stream
(.arrows, or - for standard output) of one record batch a batch: the same stream, batch for
batch, and the same cursors as "ndarrow batches" with these flags writes of the served files
(see its help). The server reads each batch's rows and streams them, a batch's cursor with it.

` + keeps},
	"put": {"[--tensor NAME] [--name NAME] [--compression C] [--spec FILE] [--skip-unreadable] [client flags] URI FILE|DIR",
		`Put uploads the tensors of FILE, or of every tensor file of DIR, to the Flight server at URI, each
under the name inspect prints, or one of them (--tensor) under another name (--name). A
TFRecord file is read as inspect reads it (--compression, --spec). An ndarrow server takes
uploads only when started with serve --writable.`},
	"delete": {"[client flags] URI NAME", `Delete removes the tensor NAME, an upload, from the Flight server at URI (one started with
serve --writable).`},
	"demo":    {"", `Demo runs the main job end to end on a built-in example: arrays, views, files, Flight.`},
	"version": {"", `Version prints ndarrow's version, the Go version and the platform.`},
	"help":    {"[COMMAND]", `Help prints the list of commands, or a command's full help.`},
}

// keeps says what the output formats keep of a tensor.
const keeps = `What a format can hold comes through unchanged: dtype, shape, the names of every
dimension, the kind (dense stays dense, CSR stays CSR, a fixed_shape_tensor column stays one)
and the column a tensor came from. A .npy file holds one dense tensor, an .npz archive dense
tensors, and neither holds names: a sparse tensor goes in its dense form (within
--max-dense) and dimension names are dropped with a warning. --dense writes sparse tensors in
their dense form whatever the format.`

// inputFormats lists what commands read.
const inputFormats = `  Arrow Tensor and SparseTensor messages (.tensor, .coo, .csr, .csc, .csf)
  NumPy .npy files and .npz archives
  Arrow IPC files (.arrow) and streams (.arrows) of record batches, and Parquet files:
  arrow.fixed_shape_tensor, list and arrow.variable_shape_tensor columns, plain columns of
  numbers, bools, strings and bytes (dictionary-encoded or not: tensors of one value per row),
  or a sparse tensor's batch
  TensorFlow TFRecord files (.tfrecord, .tfrecords; .gz: GZIP; or any file whose first record's
  CRCs verify; --compression none|gzip|zlib overrides) of tf.train.Example or SequenceExample
  (a tensor per feature, NAME.FEATURE) or of serialized TensorProto (a tensor per record,
  NAME.N); a file of other records is reported with its record count. Without a spec an
  Example's feature is (records, values); --spec FILE reads the Examples as
  tf.io.parse_example does with the feature spec in FILE, a JSON object in the features' order:
  {"image": {"dtype": "float32", "shape": [28, 28]}, "label": {"dtype": "int64", "shape": [],
  "default": 0}, "tokens": {"dtype": "string", "ragged": true}} — each feature of its shape
  (a label [] is (records,)), its default where a record lacks it, the features the spec does
  not name left out and listed`

// formatList describes the output formats, from the table that defines them.
func formatList() string {
	var b strings.Builder
	for _, f := range outputFormats {
		fmt.Fprintf(&b, "\n  %-7s %s", f.name, f.what)
	}
	return b.String()
}

// usageLine returns "ndarrow NAME ARGS".
func usageLine(name string) string {
	return strings.TrimSpace("ndarrow " + name + " " + helpText[name].args)
}

// parseArgs parses the flags of command name from args and checks that the arguments left
// number at least min and at most max (max < 0: no bound). -h and --help print the command's
// full help on stdout: done, status 0. A usage error prints the error and the usage line on
// stderr: done, status 2. Otherwise it returns ok.
func parseArgs(fs *flag.FlagSet, name string, args []string, stdout, stderr io.Writer, min, max int) (code int, ok bool) {
	if flagsParsed != nil {
		flagsParsed(name, fs)
	}
	fs.SetOutput(io.Discard)
	err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(stdout, name, fs)
		return exitOK, false
	case err != nil:
		return usageError(stderr, name, err), false
	case fs.NArg() < min || (max >= 0 && fs.NArg() > max):
		fmt.Fprintf(stderr, "usage: %s (ndarrow help %s for more)\n", usageLine(name), name)
		return exitUsage, false
	}
	return exitOK, true
}

// flagsParsed, when set (by the test that compares README's tables of flags with them), is
// given the flags of each command that parses its arguments.
var flagsParsed func(command string, fs *flag.FlagSet)

// parseInterspersed parses args with fs, flags anywhere on the line (`inspect t.tfrecord
// --json` as `inspect --json t.tfrecord`), as GNU tools take them; after "--" every argument
// is an operand. fs.Args() then holds the operands in order ("-", standard input or output,
// among them).
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			operands = append(operands, rest...) // after "--": operands only
			break
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, operands...)) // sets no flag: fs.Args() = operands
}

// printHelp prints a command's usage line, description and flags.
func printHelp(w io.Writer, name string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", usageLine(name), helpText[name].text)
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// usageError prints err, a usage error found after parsing, with the usage line, and returns
// exitUsage.
func usageError(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "ndarrow %s: %v\nusage: %s (ndarrow help %s for more)\n", name, err, usageLine(name), name)
	return exitUsage
}

// usageErr is an error of the command line found while a command runs (an output file
// whose extension names no format): finishCommand prints it as a usage error, status 2.
type usageErr struct{ error }

func (e usageErr) Unwrap() error { return e.error }

// finishCommand prints err, if any, as one line and returns the exit status: a command a
// signal stopped says "interrupted" (or "terminated"); a usageErr is a usage error.
func finishCommand(ctx context.Context, stderr io.Writer, name string, err error) int {
	var usage usageErr
	if errors.As(err, &usage) {
		return usageError(stderr, name, usage.error)
	}
	if err != nil {
		var sig interruption
		if errors.As(context.Cause(ctx), &sig) {
			// What the command was doing when it was stopped ("context canceled") says less
			// than why it stopped.
			err = sig
		}
		fmt.Fprintf(stderr, "ndarrow %s: %v\n", name, err)
		return exitFail
	}
	return exitOK
}
