package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelpAndVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no arguments prints usage to stderr", nil, exitUsage, "", "Usage:"},
		{"help", []string{"help"}, exitOK, "The commands are:", ""},
		{"--help", []string{"--help"}, exitOK, "demo", ""},
		{"help for a command", []string{"help", "demo"}, exitOK, "usage: ndarrow demo", ""},
		{"help for an unknown command", []string{"help", "nope"}, exitUsage, "", `unknown command "nope"`},
		{"version", []string{"version"}, exitOK, "ndarrow " + version, ""},
		{"--version", []string{"--version"}, exitOK, "ndarrow " + version, ""},
		{"version takes no arguments", []string{"version", "x"}, exitUsage, "", "usage: ndarrow version"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `ndarrow: unknown command "frobnicate"`},
		{"demo takes no arguments", []string{"demo", "x"}, exitUsage, "", "usage: ndarrow demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			assert.Equal(t, tc.code, code)
			if tc.stdout != "" {
				assert.Contains(t, stdout, tc.stdout)
			}
			if tc.stderr != "" {
				assert.Contains(t, stderr, tc.stderr)
			} else {
				assert.Empty(t, stderr)
			}
		})
	}
}

func TestDemo(t *testing.T) {
	code, stdout, stderr := runCLI("demo")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	for _, want := range []string{
		"batch: float32 (4, 3, 4), 48 elements",
		"image 2, a view (shares memory: true):\n[[200. 201. 202. 203.]\n [210. 211. 212. 213.]\n [220. 221. 222. 223.]]",
		"middle row of every image",
		"first rows of images 3, 0, 2 (3, 4), shares memory: false\n[[300. 301. 302. 303.]\n [  0.   1.   2.   3.]\n [200. 201. 202. 203.]]",
		"as a feature matrix (4, 12), a view: true",
		"transposed (12, 4) (strides [1 12]), a view: true",
		"wrote the strided crop as 64 little-endian bytes",
		"a write through a read-only view panics: ndarray: Set on a read-only array of shape (4, 3, 4)",
		"batch.tensor: 448 bytes, one Tensor message; memory-mapped back as float32 (4, 3, 4), dim names [image row col], zero-copy: true",
		"batch.npy: 320 bytes (data 64-byte aligned); memory-mapped back, zero-copy: true",
		"2 record batches of an arrow.fixed_shape_tensor column; memory-mapped back, 4 rows, zero-copy: true",
		"demo: ok",
	} {
		assert.Contains(t, stdout, want)
	}
}
