package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/internal/mutate"
)

// mutationInputs are the valid files whose mutants TestMutantsUnderAMemoryLimit reads, and
// how many bytes each input byte may cost: compressed bodies may expand up to what their
// codec allows (32768 bytes per byte for ZSTD), everything else is viewed in place.
var mutationInputs = []struct {
	path  string
	ratio int
}{
	{"../../ipc/testdata/arrow-cpp-17/batch_tensors.arrow", 64},
	{"../../ipc/testdata/arrow-cpp-17/batch_tensors.arrows", 64},
	{"../../ipc/testdata/arrow-js/tensors.arrow", 64},
	{"../../ipc/testdata/arrow-cpp-17/coo_double_4x6_i64.tensor", 64},
	{"../../ipc/testdata/arrow-cpp-17/csf_double_3x4x5_i64.tensor", 64},
	{"../../ipc/testdata/arrow-cpp-17/dense_int32_4x3_strided.tensor", 64},
	{"../../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/1.0.0-littleendian/generated_dictionary.stream", 64},
	{"../../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/1.0.0-bigendian/generated_nested.stream", 64},
	{"../../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/2.0.0-compression/generated_zstd.stream", 32768},
	{"../../ipc/testdata/arrow-testing/arrow-ipc-stream/integration/2.0.0-compression/generated_lz4.arrow_file", 256},
}

// TestMutantsUnderAMemoryLimit reads every mutant of golden and corpus files — each integer
// field (lengths, counts, offsets) set to 0, -1, 2^31 and the largest value, each metadata
// byte changed — through `ndarrow inspect`, in a child process with 2 GiB of address space:
// a fatal out-of-memory error cannot be recovered in-process, so the child dying fails this
// test, not the test run.
func TestMutantsUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestMutantsChild", 2<<30)
}

// TestMutantsChild is the child side of TestMutantsUnderAMemoryLimit: every mutant gives
// exit status 0 or 1 with one error line, and allocates no more than its size justifies.
func TestMutantsChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("the body of TestMutantsUnderAMemoryLimit, run only as its child process")
	}
	path := filepath.Join(t.TempDir(), "mutant")
	mutants, failed, worst := 0, 0, uint64(0)
	for _, in := range mutationInputs {
		b, err := os.ReadFile(in.path)
		require.NoError(t, err)
		mutate.All(b, func(m mutate.Mutant) bool {
			mutants++
			require.NoError(t, os.WriteFile(path, m.Bytes, 0o644))
			before := childtest.Allocated()
			code, _, stderr := runCLI("inspect", "--json", "--max-dense", "1048576", path)
			used := childtest.Allocated() - before
			worst = max(worst, used)
			budget := uint64(in.ratio*len(m.Bytes)) + 16<<20
			switch {
			case used > budget:
				t.Errorf("%s: %s allocated %d bytes, more than its %d bytes justify", filepath.Base(in.path), m.What, used, len(m.Bytes))
			case code != exitOK && code != exitFail:
				t.Errorf("%s: %s: exit status %d: %s", filepath.Base(in.path), m.What, code, stderr)
			case code == exitFail && strings.Count(stderr, "\n") != 1:
				t.Errorf("%s: %s: not one error line: %q", filepath.Base(in.path), m.What, stderr)
			}
			if code == exitFail {
				failed++
			}
			return !t.Failed()
		})
	}
	t.Logf("child: %d mutants read, %d refused with one error line, at most %d KiB allocated by one", mutants, failed, worst>>10)
}
