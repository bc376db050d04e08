package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// missingModules is the exit status of a Python example that lacks a module it needs (NumPy,
// PyTorch, grpcio …): it prints which on its last line.
const missingModules = 77

// TestPythonExamples runs every Python script of examples/ (a file with a __main__ block:
// examples/trainers/check.py, examples/torch/recipe.py) as `python3 SCRIPT NDARROW`, with this
// test binary as the ndarrow it starts (`serve`, `convert`, `batches`): each checks its recipe
// against the real CLI and server and exits 0, or 1 at the first check that fails — the
// test's failure, with its output. The interpreter is NDARROW_PYTHON, else /usr/bin/python3
// (Debian's, where apt-get installs python3-numpy and the rest). A script missing a module
// exits 77 naming it, and so skips — unless NDARROW_PYTHON_EXAMPLES=required, as .ci/run
// sets it, having installed them: there it fails.
func TestPythonExamples(t *testing.T) {
	required := os.Getenv("NDARROW_PYTHON_EXAMPLES") == "required"
	unavailable := func(t *testing.T, why string) {
		t.Helper()
		if required {
			t.Fatalf("%s, and NDARROW_PYTHON_EXAMPLES=required", why)
		}
		t.Skip(why)
	}
	python := os.Getenv("NDARROW_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	if _, err := exec.LookPath(python); err != nil {
		unavailable(t, "no Python interpreter: "+err.Error())
	}
	scripts, err := filepath.Glob("../../examples/*/*.py")
	require.NoError(t, err)
	ran := 0
	for _, script := range scripts {
		b, err := os.ReadFile(script)
		require.NoError(t, err)
		if !bytes.Contains(b, []byte(`if __name__ == "__main__":`)) {
			continue // a module the scripts import
		}
		ran++
		name := strings.TrimPrefix(script, "../../")
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(python, script, os.Args[0])
			cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1") // this binary is the CLI (TestMain)
			out, err := cmd.CombinedOutput()
			if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && exit.ExitCode() == missingModules {
				unavailable(t, name+": "+lastLine(string(out)))
			}
			require.NoError(t, err, "%s %s:\n%s", python, name, out)
			passed := 0
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "ok ") {
					passed++
				}
			}
			t.Logf("%s: %d checks passed", name, passed)
		})
	}
	require.NotZero(t, ran, "Python examples in examples/")
}

// lastLine returns the last line of s that is not empty.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
