// Command ndarrow inspects, converts and serves n-dimensional arrays stored as Arrow memory.
//
// Usage:
//
//	ndarrow <command> [arguments]
//
// The commands are:
//
//	inspect   describe the tensors in files
//	convert   convert a tensor file to another format
//	take      write rows of a table, any rows in any order, to a file
//	batches   write shuffled, sharded, resumable mini-batches of a table as an Arrow stream
//	serve     serve the tensor files of a directory over Arrow Flight
//	ls        list the tensors a Flight server serves
//	get       fetch a tensor from a Flight server
//	put       upload the tensors of a file to a Flight server
//	delete    delete a tensor from a Flight server
//	demo      run the main job end to end on a built-in example
//	version   print the version
//	help      print this help, or a command's
//
// Input files are recognized from their first bytes: Arrow Tensor and SparseTensor messages
// (as pyarrow.ipc.write_tensor writes them), NumPy .npy files, and Arrow IPC files and streams
// whose arrow.fixed_shape_tensor, list and arrow.variable_shape_tensor columns are tensors.
// `ndarrow help COMMAND`, `ndarrow COMMAND -h` and `ndarrow COMMAND --help` print a command's
// full help.
//
// Exit status is 0 on success, 1 when a command fails (with one line on standard error per
// failure) and 2 on a usage error. Ctrl-C (SIGINT) or SIGTERM stops a command within a
// second, removes any file it was writing, and exits with 130 or 143; serve shuts down
// gracefully and exits with 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(runInterruptible(run, os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// command is one subcommand: its name, a one-line summary and the function that runs it.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"inspect", "describe the tensors in files (--json: one object per tensor)", runInspect},
		{"convert", "convert a tensor file to another format", runConvert},
		{"take", "write rows of a table, any rows in any order, to a file", runTake},
		{"batches", "write shuffled, sharded, resumable mini-batches of a table as an Arrow stream", runBatches},
		{"serve", "serve the tensor files of a directory over Arrow Flight", runServe},
		{"ls", "list the tensors a Flight server serves", runLs},
		{"get", "fetch a tensor from a Flight server", runGet},
		{"put", "upload the tensors of a file to a Flight server", runPut},
		{"delete", "delete a tensor from a Flight server", runDelete},
		{"demo", "run the main job end to end on a built-in example", runDemo},
		{"version", "print the version", runVersion},
		{"help", "print this help, or a command's", runHelp},
	}
}

// run executes the command line args (without the program name) and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "-version", "--version":
		return runVersion(ctx, nil, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ndarrow: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "ndarrow moves n-dimensional arrays between Go, Arrow, NumPy and TensorFlow.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "\tndarrow <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The commands are:")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "\t%-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Use "ndarrow help <command>" for more about a command.`)
}

// runHelp prints the list of commands, or the full help of one: what "COMMAND --help" prints.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	if code, ok := parseArgs(fs, "help", args, stdout, stderr, 0, 1); !ok {
		return code
	}
	if fs.NArg() == 0 {
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == fs.Arg(0) && c.name != "help" {
			return c.run(ctx, []string{"--help"}, stdout, stderr)
		}
	}
	if fs.Arg(0) == "help" {
		printHelp(stdout, "help", fs)
		return exitOK
	}
	fmt.Fprintf(stderr, "ndarrow help: unknown command %q\n", fs.Arg(0))
	return exitUsage
}
