package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/internal/storetest"
)

// TestHostileStoreUnderAMemoryLimit runs TestHostileStoreChild in a child process whose
// address space is limited.
func TestHostileStoreUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestHostileStoreChild", 512<<20)
}

// TestHostileStoreChild: inspect, convert and a prefix's inspect of objects whose store answers
// every ranged read with an XML error body that never ends (the S3 SDK's error decoder reads
// it) exit 1 with one error line naming the object, and never with Go's "out of memory".
func TestHostileStoreChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestHostileStoreUnderAMemoryLimit")
	}
	h := storetest.StartHostile(t)
	h.UseS3(t)
	npy, err := os.ReadFile("../../npy/testdata/numpy/i16_rank2.npy")
	require.NoError(t, err)
	h.Put("b", "k.npy", storetest.HostileObject{Data: npy, Fault: storetest.EndlessErrorBody})
	h.Put("b", "p/k.npy", storetest.HostileObject{Data: npy, Fault: storetest.EndlessErrorBody})
	for _, tc := range []struct {
		args  []string
		lines []string // the prefix of each line of stderr
	}{
		{[]string{"inspect", "s3://b/k.npy"}, []string{"ndarrow inspect: s3://b/k.npy: read: "}},
		{[]string{"convert", "s3://b/k.npy", filepath.Join(t.TempDir(), "out.npz")}, []string{"ndarrow convert: s3://b/k.npy: read: "}},
		// A prefix: a line per object skipped, then that nothing is left.
		{[]string{"inspect", "s3://b/p/"}, []string{"ndarrow inspect: s3://b/p/k.npy: read: ", "ndarrow inspect: s3://b/p/: no tensors"}},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			t.Logf("child: %v: %d %q", tc.args, code, errOut)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			require.Len(t, lines, len(tc.lines), errOut)
			for i, want := range tc.lines {
				assert.True(t, strings.HasPrefix(lines[i], want), lines[i])
			}
			assert.Contains(t, lines[0], "the store's answer (500 Internal Server Error) is longer than 65536 bytes")
			assert.NotContains(t, errOut, "hostile-secret")
		})
	}
}
