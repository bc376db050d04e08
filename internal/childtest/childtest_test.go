package childtest

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

var sink []byte

// TestChildBody is the child side of TestChild.
func TestChildBody(t *testing.T) {
	if !Child(t) {
		t.Skip("the body of TestChild, run only as its child process")
	}
	before := Allocated()
	sink = make([]byte, 64<<20)
	assert.GreaterOrEqual(t, Allocated()-before, uint64(64<<20), "Allocated counts what was allocated")
	if os.Getenv("CHILDTEST_OVER") != "" {
		sink = make([]byte, 2<<30) // beyond the limit: a fatal error, not a panic
		for i := range sink {
			sink[i] = 1
		}
	}
}

// TestChild runs TestChildBody as a child process, and shows that, without the race
// detector, the child runs under its limit (on Linux) and an allocation beyond it ends the
// child with Go's fatal out-of-memory error — which Run reports as the test's failure
// instead of ending the test run.
func TestChild(t *testing.T) {
	Run(t, "TestChildBody", 1<<30)
	if RaceEnabled {
		return // no address-space limit under the race detector
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildBody$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envVar+"="+strconv.Itoa(1<<30), "CHILDTEST_OVER=1")
	out, err := cmd.CombinedOutput()
	assert.Error(t, err)
	if runtime.GOOS == "linux" {
		assert.Contains(t, string(out), "child: address space limited to 1024 MiB", "the limit applied")
	}
	assert.Contains(t, string(out), "out of memory")
}
