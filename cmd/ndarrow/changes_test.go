package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
)

// TestInputShrinksWhileRead: inspect and convert, run as real processes, whose input file is
// truncated once it is mapped, read its values past the new end: each exits with status 1 and
// one line naming the file — no fatal fault, no stack — and leaves no output behind.
func TestInputShrinksWhileRead(t *testing.T) {
	src := t.TempDir()
	var buf bytes.Buffer
	_, err := npy.Write(&buf, ndarray.Full[float32](1.5, 1024, 1024)) // 4 MiB
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "x.npy"), buf.Bytes(), 0o644))
	code, _, stderr := runCLI("convert", filepath.Join(src, "x.npy"), filepath.Join(src, "x.arrow"))
	require.Equal(t, exitOK, code, stderr)

	for _, tc := range []struct {
		name string
		args func(in, out string) []string
	}{
		{"inspect npy", func(in, _ string) []string { return []string{"inspect", in} }},
		{"inspect --json arrow", func(in, _ string) []string { return []string{"inspect", "--json", in} }},
		{"convert npy to arrow", func(in, out string) []string { return []string{"convert", in, out + ".arrow"} }},
		{"convert arrow to npy", func(in, out string) []string { return []string{"convert", in, out + ".npy"} }},
		{"convert npy to parquet", func(in, out string) []string { return []string{"convert", in, out + ".parquet"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ext := ".npy"
			if strings.Contains(tc.name, " arrow") {
				ext = ".arrow"
			}
			in := filepath.Join(dir, "in"+ext)
			b, err := os.ReadFile(filepath.Join(src, "x"+ext))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(in, b, 0o644))

			cmd := exec.Command(os.Args[0], tc.args(in, filepath.Join(dir, "out"))...)
			cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1", "NDARROW_SHRINK_INPUTS_TO=4096")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v: %s", err, stderr.String())
			assert.Equal(t, exitFail, exit.ExitCode(), stderr.String())
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %s", stderr.String())
			assert.Contains(t, stderr.String(), in+": file changed while being read")
			assert.Equal(t, 1, strings.Count(stderr.String(), in), "the file named once")
			assert.NotContains(t, stderr.String(), "goroutine")
			assert.NotContains(t, stderr.String(), "fatal")
			assertOnly(t, dir, "in"+ext)
		})
	}
}
