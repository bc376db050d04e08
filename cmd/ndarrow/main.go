// Command ndarrow inspects, converts and serves n-dimensional arrays stored as Arrow memory.
//
// Usage:
//
//	ndarrow <command> [arguments]
//
// The commands are:
//
//	inspect   describe the tensors in files (--json: one object per tensor)
//	convert   convert a tensor file: convert --to tensor|npy|arrow|arrows IN OUT
//	serve     serve the tensor files of a directory over Arrow Flight: serve [--addr HOST:PORT] DIR
//	ls        list the tensors a Flight server serves: ls URI
//	get       fetch a tensor from a Flight server: get URI NAME OUT
//	put       upload the tensors of a file to a Flight server: put URI FILE
//	demo      run the main job end to end on a built-in example
//	version   print the version
//	help      print this help
//
// Input files are recognized from their first bytes: Arrow Tensor messages (as
// pyarrow.ipc.write_tensor writes them), NumPy .npy files, and Arrow IPC files and streams
// whose arrow.fixed_shape_tensor columns are tensors.
//
// Exit status is 0 on success, 1 when a command fails (with one line on standard error per
// failure) and 2 on a usage error. Ctrl-C (SIGINT) or SIGTERM stops a command within a
// second, removes any file it was writing, and exits with 130 or 143; serve shuts down
// gracefully and exits with 0.
package main

import (
	"context"
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
		{"convert", "convert a tensor file: convert --to tensor|npy|arrow|arrows IN OUT", runConvert},
		{"serve", "serve the tensor files of a directory over Arrow Flight: serve [--addr HOST:PORT] DIR", runServe},
		{"ls", "list the tensors a Flight server serves: ls URI", runLs},
		{"get", "fetch a tensor from a Flight server: get URI NAME OUT", runGet},
		{"put", "upload the tensors of a file to a Flight server: put URI FILE", runPut},
		{"demo", "run the main job end to end on a built-in example", runDemo},
		{"version", "print the version", runVersion},
		{"help", "print this help", runHelp},
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

func runHelp(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			fmt.Fprintf(stdout, "usage: ndarrow %s\n\n%s.\n", c.name, c.summary)
			return exitOK
		}
	}
	fmt.Fprintf(stderr, "ndarrow help: unknown command %q\n", args[0])
	return exitUsage
}
