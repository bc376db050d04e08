// Package childtest runs a test in a child process of the test binary, so that what would
// end the whole test run — a Go fatal error such as "out of memory", or a panic on a
// goroutine nobody recovers — fails that one test with the child's output instead. The
// child runs under an address-space limit where the runtime allows one (not under the race
// detector, whose shadow memory needs the address space), and tests in it measure what
// each step allocates.
package childtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// envVar carries the child's memory limit in bytes.
const envVar = "NDARROW_CHILD_TEST_LIMIT"

// Run runs the test named name of this test binary in a child process with memory limited to
// limit bytes beyond what the child holds when it starts, and fails t with the child's
// output unless the child's test passes.
func Run(t *testing.T, name string, limit int64) {
	t.Helper()
	cmd := Command(name, limit)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Check(t, name, out.String, cmd.Run())
}

// Command returns the command Run runs: the test named name of this test binary in a child
// process under a memory limit of limit bytes, for a test that talks to its child (its
// standard input and output) before it checks how it ended (Check).
func Command(name string, limit int64) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envVar+"="+strconv.FormatInt(limit, 10))
	return cmd
}

// Check fails t with the child's output unless the child process that ran the test named
// name (Command) ended, with err, having passed it; output returns what the child printed.
// The child's lines saying "child:" are logged.
func Check(t *testing.T, name string, output func() string, err error) {
	t.Helper()
	text := output()
	if err != nil || !strings.Contains(text, "--- PASS: "+name) {
		t.Fatalf("the child process running %s failed (%v):\n%s%s", name, err, fatalLines(text), tail(text, 60))
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "child:") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// fatalLines returns the lines of s that say why a Go process died — "fatal error: …",
// "panic: …", "runtime: …" — each followed by a newline, with a line saying so first: a
// goroutine dump puts them out of the tail's reach.
func fatalLines(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "runtime: ") {
			if b.Len() == 0 {
				b.WriteString("why it died:\n")
			}
			b.WriteString(line + "\n")
			if b.Len() > 4<<10 {
				break
			}
		}
	}
	if b.Len() > 0 {
		b.WriteString("its output's end:\n")
	}
	return b.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Child reports whether this process is a child Run started and, when it is, applies its
// memory limit — failing t where the platform has limits but this one cannot be set; under
// the race detector and where the platform has none (errNoLimits), the child runs without
// one. A child test calls it first and skips when it returns false.
func Child(t *testing.T) bool {
	v := os.Getenv(envVar)
	if v == "" {
		return false
	}
	limit, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", envVar, v, err)
	}
	if RaceEnabled {
		t.Log("child: under the race detector: no address-space limit, allocations measured")
		return true
	}
	if err := limitAddressSpace(limit); err != nil {
		if !errors.Is(err, errNoLimits) {
			// Where the limit can be set, a child that runs without it asserts nothing of what
			// its name says: a failure, not a log line.
			t.Fatalf("child: cannot limit the address space to %d MiB beyond what is mapped (ulimit -v?): %v", limit>>20, err)
		}
		t.Logf("child: no address-space limit (%v), allocations measured", err)
		return true
	}
	t.Logf("child: address space limited to %d MiB beyond what was mapped at start", limit>>20)
	return true
}

// errNoLimits is limitAddressSpace's error where the platform has no address-space limits.
var errNoLimits = errors.New("address-space limits are set on Linux only")

// Allocated returns the bytes the process has allocated so far (runtime.MemStats.TotalAlloc):
// the difference across a step is what the step allocated, freed or not.
func Allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
