package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/tfrecord"
)

// tfrecordMutant is one changed TFRecord file and what was changed.
type tfrecordMutant struct {
	name  string // ends in .tfrecord or .tfrecord.gz
	what  string
	bytes []byte
}

// tfrecordMutants calls yield with mutants of TFRecord files of Examples and of TensorProtos:
// each record's length set to boundary values (with its CRC made to match, so the length
// itself is what the reader meets), each payload byte of the first records changed (with the
// data CRC made to match, so the protocol buffer decoder meets it), and each of the first
// bytes of a GZIP file changed.
func tfrecordMutants(t *testing.T, yield func(tfrecordMutant)) {
	gz, err := os.ReadFile(filepath.Join(tfGolden, "tfx_penguin_eval.tfrecord.gz"))
	require.NoError(t, err)
	penguins, err := tfrecord.Split(gz, tfrecord.Options{Compression: tfrecord.GZIP})
	require.NoError(t, err)
	lingvoFile, err := os.ReadFile(filepath.Join(tfGolden, "lingvo_wmt14_ende_wpm_32k_test.tfrecord"))
	require.NoError(t, err)
	lingvo, err := tfrecord.Split(lingvoFile, tfrecord.Options{})
	require.NoError(t, err)
	var tensors [][]byte
	for _, a := range []ndarray.Array{
		ndarray.Must(ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)),
		ndarray.Must(ndarray.FromSlice([]string{"a", "bc", "def"}, 3)),
	} {
		b, err := tfrecord.EncodeTensor(a, []string{"rows", "cols"}[:a.Rank()])
		require.NoError(t, err)
		tensors = append(tensors, b)
	}
	for _, in := range []struct {
		name    string
		records [][]byte
	}{{"penguins", penguins[:4]}, {"lingvo", lingvo[:2]}, {"tensors", tensors}} {
		frame := func(records [][]byte) []byte {
			var buf bytes.Buffer
			w, _ := tfrecord.NewWriter(&buf, tfrecord.None)
			for _, r := range records {
				_ = w.WriteRecord(r)
			}
			return buf.Bytes()
		}
		file := frame(in.records)
		off := 0
		for i, r := range in.records {
			for _, n := range []uint64{0, 1, uint64(len(r)) - 1, uint64(len(r)) + 1, 1 << 31, 1 << 32, 1 << 40, 1 << 63, math.MaxUint64} {
				m := bytes.Clone(file)
				binary.LittleEndian.PutUint64(m[off:], n)
				binary.LittleEndian.PutUint32(m[off+8:], tfrecord.MaskedCRC(m[off:off+8]))
				yield(tfrecordMutant{in.name + ".tfrecord", fmt.Sprintf("record %d length %d", i, n), m})
			}
			off += 16 + len(r)
		}
		for i, r := range in.records[:min(2, len(in.records))] {
			for pos := range r {
				for _, v := range []byte{0, 0xff, 0x80, r[pos] ^ 0x55} {
					changed := bytes.Clone(r)
					changed[pos] = v
					records := append(append([][]byte{}, in.records[:i]...), changed)
					records = append(records, in.records[i+1:]...)
					yield(tfrecordMutant{in.name + ".tfrecord", fmt.Sprintf("record %d byte %d = %#x", i, pos, v), frame(records)})
				}
			}
		}
	}
	for pos := range min(len(gz), 300) {
		m := bytes.Clone(gz)
		m[pos] ^= 0xa5
		yield(tfrecordMutant{"penguins.tfrecord.gz", fmt.Sprintf("gzip byte %d", pos), m})
	}
}

// TestTFRecordMutantsUnderAMemoryLimit reads mutants of TFRecord files through `ndarrow
// inspect` in a child process with 2 GiB of address space.
func TestTFRecordMutantsUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestTFRecordMutantsChild", 2<<30)
}

// TestTFRecordMutantsChild is the child side of TestTFRecordMutantsUnderAMemoryLimit: every
// mutant gives exit status 0 or 1 with one error line, and allocates no more than its size
// justifies (a GZIP file up to deflate's 1032:1).
func TestTFRecordMutantsChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("the body of TestTFRecordMutantsUnderAMemoryLimit, run only as its child process")
	}
	dir := t.TempDir()
	mutants, failed, worst := 0, 0, uint64(0)
	tfrecordMutants(t, func(m tfrecordMutant) {
		if t.Failed() {
			return
		}
		mutants++
		path := filepath.Join(dir, m.name)
		require.NoError(t, os.WriteFile(path, m.bytes, 0o644))
		before := childtest.Allocated()
		code, _, stderr := runCLI("inspect", "--json", "--max-dense", "1048576", path)
		used := childtest.Allocated() - before
		worst = max(worst, used)
		ratio := 64
		if strings.HasSuffix(m.name, ".gz") {
			ratio = 1032 * 4
		}
		budget := uint64(ratio*len(m.bytes)) + 16<<20
		switch {
		case used > budget:
			t.Errorf("%s: %s allocated %d bytes, more than its %d bytes justify", m.name, m.what, used, len(m.bytes))
		case code != exitOK && code != exitFail:
			t.Errorf("%s: %s: exit status %d: %s", m.name, m.what, code, stderr)
		case code == exitFail && strings.Count(stderr, "\n") != 1:
			t.Errorf("%s: %s: not one error line: %q", m.name, m.what, stderr)
		}
		if code == exitFail {
			failed++
		}
	})
	t.Logf("child: %d TFRecord mutants read, %d refused with one error line, at most %d KiB allocated by one", mutants, failed, worst>>10)
}
