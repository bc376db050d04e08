package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/flight"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// TestServeShutsDownWithinItsGrace is SIGTERM to `ndarrow serve --grace 2s` (a process of its
// own) while two slow clients fetch a 24 MiB tensor: serve says it is shutting down and for how
// long, refuses a new call (ls: one line saying the server is shutting down), lets the stream
// that ends within the grace finish whole, cuts the other at its end — its client gets
// Unavailable saying the grace period (flight.ErrShuttingDown) — logs the stream it cut
// (method, flight, client, bytes sent), and exits with status 0 within a second of the grace.
func TestServeShutsDownWithinItsGrace(t *testing.T) {
	const grace = 2 * time.Second
	dir := t.TempDir()
	big := ndarray.New[uint8](3072, 8192) // more than a client's window and the sockets' buffers
	for i := range big.Data() {
		big.Data()[i] = byte(i * 5)
	}
	var buf bytes.Buffer
	_, err := npy.Write(&buf, big)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.npy"), buf.Bytes(), 0o644))
	// The race detector's runtime sleeps a second at exit unless told not to: the process's exit
	// is what is timed.
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	p := startServeProcess(t, dir, "--grace", grace.String(), "--max-message-bytes", "1048576")

	c, err := flight.Dial(p.uri, flight.ClientOptions{GRPCOnly: true})
	require.NoError(t, err)
	defer c.Close()
	started := make(chan struct{}, 2)
	finish, cut := make(chan struct{}), make(chan struct{})
	type fetched struct {
		t   dataset.Tensor
		err error
	}
	slowGet := func(gate chan struct{}, out chan<- fetched) {
		first := true
		x, err := c.Get(context.Background(), "big", flight.WithProgress(func(_, _ int64) {
			if first { // a client that takes its first message, then nothing until the gate opens
				first = false
				started <- struct{}{}
				<-gate
			}
		}))
		out <- fetched{x, err}
	}
	within, beyond := make(chan fetched, 1), make(chan fetched, 1)
	go slowGet(finish, within)
	go slowGet(cut, beyond)
	<-started
	<-started

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	signalled := time.Now()
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(p.stdout.String()), []byte("shutting down: the calls under way have 2s to finish\n"))
	}, 10*time.Second, 10*time.Millisecond)

	code, stdout, stderr := runCLI("ls", p.uri)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "ndarrow ls: flight: server shutting down: it takes no new calls; retry against another server or later\n", stderr)

	close(finish)
	f := <-within
	require.NoError(t, f.err, "the stream within the grace finishes")
	assert.True(t, bytes.Equal(big.Data(), f.t.Dense.(*ndarray.Dense[uint8]).Data()), "whole")

	cutLine := regexp.MustCompile(`level=WARN msg="flight: shutdown cut a stream at the end of the grace period" method=DoGet flight=big client=127\.0\.0\.1:\d+ sent_bytes=(\d+) grace=2s`)
	require.Eventually(t, func() bool { return cutLine.MatchString(p.stderr.String()) }, grace+5*time.Second, 10*time.Millisecond)
	close(cut)
	f = <-beyond
	require.ErrorIs(t, f.err, flight.ErrShuttingDown)
	assert.Equal(t, codes.Unavailable, status.Code(f.err))
	assert.ErrorContains(t, f.err, "flight: server shutting down: the stream was cut after the grace period of 2s; retry against another server or later")
	assert.NotContains(t, f.err.Error(), "Socket closed")

	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		require.NoError(t, err, "exit status 0\n%s", p.stderr.String())
	case <-time.After(grace + 5*time.Second):
		t.Fatal("serve did not exit")
	}
	assert.Less(t, time.Since(signalled), grace+time.Second, "serve exits within a second of its grace")
	assert.NotContains(t, p.stderr.String(), "goroutine")
	assert.Regexp(t, `sent_bytes=[1-9]\d{5,}`, cutLine.FindString(p.stderr.String()), "what it had sent")
}
