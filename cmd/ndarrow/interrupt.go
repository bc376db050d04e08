package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/objstore"
)

// interruption is the cause of a context a signal cancelled.
type interruption struct{ sig os.Signal }

// Error says what ended the command: "interrupted" (SIGINT, Ctrl-C) or "terminated" (SIGTERM).
func (i interruption) Error() string {
	if i.sig == syscall.SIGTERM {
		return "terminated"
	}
	return "interrupted"
}

// status returns the conventional exit status of a process a signal ended: 128 + its number.
func (i interruption) status() int {
	if s, ok := i.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitFail
}

// grace is how long a command that was interrupted has to return before the process exits
// without it (removing its temporary files first).
const grace = 500 * time.Millisecond

// runInterruptible runs the command line with run under a context that SIGINT and SIGTERM cancel,
// and returns the exit status: the command's, or 128 + the signal's number when a signal
// interrupted it. A command that does not return within grace of the signal is abandoned:
// the files it was writing are removed and the status is the signal's. serve, which shuts
// down gracefully on a signal, is waited for and exits with its own status. A second signal
// ends the process at once.
func runInterruptible(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int, args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	done := make(chan int, 1)
	go func() { done <- runGuarded(ctx, run, args, stdout, stderr) }()
	var sig interruption
	select {
	case code := <-done:
		return code
	case s := <-sigs:
		sig = interruption{s}
		cancel(sig)
	}
	waitsForShutdown := len(args) > 0 && args[0] == "serve"
	var timeout <-chan time.Time
	if !waitsForShutdown {
		timeout = time.After(grace)
	}
	select {
	case code := <-done:
		if waitsForShutdown {
			return code
		}
	case <-timeout:
		fmt.Fprintf(stderr, "ndarrow: %v\n", sig)
	case s := <-sigs:
		sig = interruption{s}
	}
	temporaries.removeAll()
	return sig.status()
}

// runGuarded runs the command line with run under dataset.Guard: a file that shrinks under
// its mapping while the command reads it past opening (hashing its values, writing them out)
// ends the command with one line naming the file and status 1, not with Go's fatal fault
// and every goroutine's stack; the files it was writing are removed.
func runGuarded(ctx context.Context, run func(ctx context.Context, args []string, stdout, stderr io.Writer) int, args []string, stdout, stderr io.Writer) int {
	code := exitFail
	err := dataset.Guard(func() error {
		code = run(ctx, args, stdout, stderr)
		return nil
	})
	if err != nil {
		temporaries.removeAll()
		name := "ndarrow"
		if len(args) > 0 {
			name += " " + args[0]
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitFail
	}
	return code
}

// temporaries are the files commands are writing, removed when the process is interrupted.
var temporaries = tempFiles{paths: map[string]bool{}}

type tempFiles struct {
	mu      sync.Mutex
	paths   map[string]bool
	uploads map[*objstore.Writer]bool // objects being written, aborted on interruption
}

func (t *tempFiles) addUpload(w *objstore.Writer) {
	t.mu.Lock()
	if t.uploads == nil {
		t.uploads = map[*objstore.Writer]bool{}
	}
	t.uploads[w] = true
	t.mu.Unlock()
}

func (t *tempFiles) removeUpload(w *objstore.Writer) {
	t.mu.Lock()
	delete(t.uploads, w)
	t.mu.Unlock()
}

func (t *tempFiles) add(path string) {
	t.mu.Lock()
	t.paths[path] = true
	t.mu.Unlock()
}

func (t *tempFiles) remove(path string) {
	t.mu.Lock()
	delete(t.paths, path)
	t.mu.Unlock()
}

func (t *tempFiles) removeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.paths {
		os.Remove(p)
		delete(t.paths, p)
	}
	// The parts sent are discarded, at most abortWait spent asking: the object never appears
	// either way (a store keeps an upload's parts until it is aborted or expires).
	var wg sync.WaitGroup
	for w := range t.uploads {
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Abort() }()
		delete(t.uploads, w)
	}
	aborted := make(chan struct{})
	go func() { wg.Wait(); close(aborted) }()
	select {
	case <-aborted:
	case <-time.After(abortWait):
	}
}

// abortWait is how long an interrupted command waits for the stores to abort its uploads.
const abortWait = 2 * time.Second

// interruptible returns a writer that writes to w in chunks of at most 4 MiB and fails with
// the context's cause once ctx is done, so that long writes (hashing, writing a file) stop
// soon after an interruption.
func interruptible(ctx context.Context, w io.Writer) io.Writer { return &ctxWriter{ctx, w} }

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

const writeChunk = 4 << 20

func (c *ctxWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if c.ctx.Err() != nil {
			return written, context.Cause(c.ctx)
		}
		n, err := c.w.Write(p[:min(len(p), writeChunk)])
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}
