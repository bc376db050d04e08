//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/ndarray"
)

// addressSpaceEnv has a child process running main (NDARROW_RUN_MAIN) limit its address space
// to what it maps at start and this many bytes more, as ulimit -v would.
const addressSpaceEnv = "NDARROW_ADDRESS_SPACE_EXTRA"

// limitAddressSpaceForMain applies addressSpaceEnv, if set.
func limitAddressSpaceForMain() {
	v := os.Getenv(addressSpaceEnv)
	if v == "" {
		return
	}
	extra, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		panic(err)
	}
	var kb int64
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb); err != nil {
				panic(err)
			}
		}
	}
	lim := uint64(kb<<10 + extra)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		panic(err)
	}
}

// writeEmbTable writes a ZSTD Parquet table of rows rows at path (through a rename, as a file
// rewritten is): emb, float32 [rows, 64] of random values (4 KiB pages that do not compress),
// and label, the row.
func writeEmbTable(t *testing.T, path string, rows int64, seed uint64) {
	emb := ndarray.New[float32](rows, 64)
	label := ndarray.New[int64](rows)
	r := rand.New(rand.NewPCG(seed, 45))
	for i := range rows {
		label.Set(i, i)
		for k := range int64(64) {
			emb.Set(r.Float32(), i, k)
		}
	}
	require.NoError(t, dataset.Save(path, []dataset.Tensor{{Name: "emb", Column: "emb", Dense: emb}, {Name: "label", Column: "label", Dense: label}}, dataset.WriteOptions{}))
}

// scratchDiskBytes returns the bytes of disk the page cache's scratch file of process pid
// takes (its allocated blocks), found among the process's open files by its name.
func scratchDiskBytes(t *testing.T, pid int) int64 {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	for _, fd := range fds {
		link := fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())
		if target, err := os.Readlink(link); err == nil && strings.Contains(target, ".ndarrow-scratch-") {
			st, err := os.Stat(link)
			require.NoError(t, err)
			return st.Sys().(*syscall.Stat_t).Blocks * 512
		}
	}
	t.Fatalf("process %d has no scratch file open", pid)
	return 0
}

// TestServePageCacheBackDownAfterRewrites is the session: `ndarrow serve` (its default
// page cache) of a ZSTD Parquet file rewritten four times, each version read whole by shuffled
// mini-batches (get --batch-size). Once the server serves the next version the old one's
// pages are dropped — the scratch file's blocks on disk back to zero — and after each epoch
// the cache holds one version's pages, not one more each rewrite. Each epoch gives every row
// of its version once.
func TestServePageCacheBackDownAfterRewrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "z.parquet")
	const rows = 16384 // 4 MiB of emb
	writeEmbTable(t, path, rows, 0)
	p := startServeProcess(t, dir)
	pid := p.cmd.Process.Pid
	out := filepath.Join(t.TempDir(), "b.arrows")
	var one int64
	for v := range int64(5) {
		n := rows + v
		if v > 0 {
			writeEmbTable(t, path, n, uint64(v))
			requireListed(t, p.uri, "z.emb", fmt.Sprintf("[%d 64]", n))
			require.Eventually(t, func() bool { return scratchDiskBytes(t, pid) == 0 }, 10*time.Second, 10*time.Millisecond,
				"version %d's pages dropped once the next is served: %d bytes on disk", v-1, scratchDiskBytes(t, pid))
		}
		code, _, stderr := runCLI("get", "--batch-size", "256", "--shuffle", strconv.FormatInt(v, 10), p.uri, "z", out)
		require.Equal(t, exitOK, code, stderr)
		var labels []int64
		for _, b := range streamLabels(t, out) {
			labels = append(labels, b...)
		}
		slices.Sort(labels)
		require.Len(t, labels, int(n), "version %d whole", v)
		for i, l := range labels {
			require.Equal(t, int64(i), l)
		}
		disk := scratchDiskBytes(t, pid)
		t.Logf("version %d: %d bytes of page cache on disk", v, disk)
		if v == 0 {
			one = disk
			require.Greater(t, one, int64(4<<20), "the epoch's pages kept")
			continue
		}
		assert.LessOrEqual(t, disk, one+one/8, "version %d: one version's pages", v)
	}
	p.stop(t)
	assert.NotContains(t, p.stderr.String(), "page cache", "no warning: made as the default says")
}

// TestPageCacheUnderAnAddressSpaceLimit: under ulimit -v, `ndarrow batches` and `ndarrow serve`
// say on stderr, in one line, that their page cache is smaller than the default and why, or
// that there is none and why, and batches writes the stream it writes without a limit. Child
// processes (the limit is the process's); not under the race detector, whose shadow memory
// needs the address space a limit takes away.
func TestPageCacheUnderAnAddressSpaceLimit(t *testing.T) {
	if childtest.RaceEnabled {
		t.Skip("needs an address-space limit: without the race detector")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "t.parquet")
	writeLabelled(t, in, 3000)
	want := filepath.Join(dir, "want.arrows")
	code, _, stderr := runCLI("batches", "--batch-size", "50", "--shuffle", "9", in, want)
	require.Equal(t, exitOK, code, stderr)
	wantBytes, err := os.ReadFile(want)
	require.NoError(t, err)

	for _, tc := range []struct {
		extra int64
		line  string
	}{
		{2 << 30, `^ndarrow batches: warning: page cache smaller than the 16 GiB default: [0-9.]+ MiB, a quarter of the [0-9.]+ GiB the address-space limit \(ulimit -v, [0-9.]+ GiB\) leaves \(--page-cache SIZE asks for a size\)\n$`},
		{200 << 20, `^ndarrow batches: warning: no page cache: the address-space limit \(ulimit -v, [0-9.]+ GiB\) leaves [0-9]+ MiB, less than four times the 64 MiB of the least page cache: each compressed page is decompressed again for each read that needs it \(--page-cache SIZE asks for one\)\n$`},
	} {
		got := filepath.Join(dir, "got.arrows")
		cmd := exec.Command(os.Args[0], "batches", "--batch-size", "50", "--shuffle", "9", in, got)
		cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1", addressSpaceEnv+"="+strconv.FormatInt(tc.extra, 10))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%d bytes more: %s", tc.extra, stderr.String())
		assert.Regexp(t, tc.line, stderr.String())
		assert.Empty(t, stdout.String())
		b, err := os.ReadFile(got)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(wantBytes, b), "the same stream")
	}

	t.Setenv(addressSpaceEnv, strconv.FormatInt(2<<30, 10))
	p := startServeProcess(t, dir)
	p.stop(t)
	assert.Regexp(t, `(?m)^ndarrow serve: warning: page cache smaller than the 16 GiB default: [0-9.]+ MiB, a quarter of `, p.stderr.String())
}
