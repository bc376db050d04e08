package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/internal/objstore"
	"github.com/ndarrow/ndarrow/internal/storetest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/npy"
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

// TestHostileStoreServeUnderAMemoryLimit runs TestHostileStoreServeChild in a child process
// whose address space is limited.
func TestHostileStoreServeUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestHostileStoreServeChild", 768<<20)
}

// TestHostileStoreServeChild: every lie a store can tell in its answer to a ranged read — an
// error body that never ends or is huge, a Content-Range that starts elsewhere or names another
// size, a Content-Length or a body longer than the range, a body cut short, another version
// for If-Match, a drip, the whole object for a range — fails inspect of that object with one
// line naming it (but the whole object, which is the answer to inspect's read of all of it), and fails the get of it from `serve s3://` of their prefix with one line,
// while the server stays up and serves the honest object beside them; nothing dies of memory.
// The lies start with reads of 4 KiB or more, so that serve's scan (the .npy headers) reads
// honestly and each get meets the lie.
func TestHostileStoreServeChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestHostileStoreServeUnderAMemoryLimit")
	}
	old := objstore.StallTimeout
	objstore.StallTimeout = 500 * time.Millisecond
	defer func() { objstore.StallTimeout = old }()
	h := storetest.StartHostile(t)
	h.UseS3(t)
	values := ndarray.Must(ndarray.Arange[float32](0, 64*1024, 1))
	var buf bytes.Buffer
	_, err := npy.Write(&buf, ndarray.Must(values.Reshape(256, 256)))
	require.NoError(t, err)
	data := buf.Bytes()
	faults := map[string]storetest.Fault{
		"endless": storetest.EndlessErrorBody, "huge": storetest.HugeErrorBody,
		"elsewhere": storetest.RangeElsewhere, "total": storetest.WrongTotal,
		"length": storetest.WrongLength, "longer": storetest.LongerBody,
		"shorter": storetest.ShorterBody, "version": storetest.OtherVersion,
		"drip": storetest.Drip, "whole": storetest.WholeObject,
	}
	h.Put("b", "p/honest.npy", storetest.HostileObject{Data: data})
	for name, fault := range faults {
		h.Put("b", "p/"+name+".npy", storetest.HostileObject{Data: data, Fault: fault, FaultMin: 4096})
	}
	oneLine := func(t *testing.T, what, uri, errOut string) {
		t.Helper()
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%s: %s", what, errOut)
		assert.True(t, strings.HasPrefix(errOut, "ndarrow "+what+": "), errOut)
		assert.Contains(t, errOut, uri)
		assert.NotContains(t, errOut, "hostile-secret")
	}
	_, honest, _ := runCLI("inspect", "--json", "s3://b/p/honest.npy")
	for name := range faults {
		uri := "s3://b/p/" + name + ".npy"
		code, out, errOut := runCLI("inspect", "--json", uri)
		t.Logf("child: inspect %s: %d %q", name, code, errOut)
		if name == "whole" { // inspect reads all of it: the whole object is the answer
			assert.Equal(t, exitOK, code, errOut)
			assert.Equal(t, strings.ReplaceAll(honest, `"honest"`, `"whole"`), out)
			continue
		}
		assert.Equal(t, exitFail, code, name)
		assert.Empty(t, out, name)
		oneLine(t, "inspect", uri, errOut)
	}

	s := startServe(t, "s3://b/p/")
	code, listed, errOut := runCLI("ls", s.uri)
	require.Equal(t, exitOK, code, errOut)
	for name := range faults {
		assert.Contains(t, listed, name, "the scan reads the headers honestly")
	}
	dir := t.TempDir()
	for name := range faults {
		out := filepath.Join(dir, name+".npy")
		code, _, errOut := runCLI("get", s.uri, name, out)
		t.Logf("child: get %s: %d %q", name, code, errOut)
		assert.Equal(t, exitFail, code, name)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%s: %s", name, errOut)
		assert.True(t, strings.HasPrefix(errOut, "ndarrow get: "), errOut)
		assert.NoFileExists(t, out, "nothing half-written")
	}
	out := filepath.Join(dir, "honest.npy")
	code, _, errOut = runCLI("get", s.uri, "honest", out)
	require.Equal(t, exitOK, code, errOut)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, data, got, "the honest object, byte for byte")
	code, _, errOut = runCLI("ls", s.uri)
	assert.Equal(t, exitOK, code, "the server is still up: %s", errOut)
}
