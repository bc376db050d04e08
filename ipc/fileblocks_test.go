package ipc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileBlocks: FileFooter and FileBlocks locate what a file's reader reads, and decoding
// each record batch block from a copy of its bytes gives the records Next gives, with the
// rows BlockRows says.
func TestFileBlocks(t *testing.T) {
	files := []string{filepath.Join(goldenDir, "batch_tensors.arrow")}
	for _, path := range integrationFiles(t) {
		if strings.HasSuffix(path, ".arrow_file") {
			files = append(files, path)
		}
	}
	require.Greater(t, len(files), 5)
	for _, path := range files {
		b := mustRead(t, path)
		off, n, err := FileFooter(b, BatchOptions{})
		require.NoError(t, err, path)
		assert.Equal(t, int64(len(b)-10), off+n)
		_, records, err := FileBlocks(b, BatchOptions{})
		require.NoError(t, err, path)
		r, err := NewBatchReader(b, BatchOptions{SkipUnsupported: true})
		if err != nil {
			continue // a file this reader refuses (an unsupported type): not this test's
		}
		assert.Equal(t, records, r.Blocks(), path)
		for i, blk := range r.Blocks() {
			want, err := r.Next()
			require.NoError(t, err, path)
			rows, err := r.BlockRows(i)
			require.NoError(t, err)
			assert.Equal(t, want.NumRows(), rows, path)
			data := append([]byte(nil), b[blk.Offset:blk.Offset+blk.MetaLen+blk.BodyLen]...)
			got, err := r.DecodeBlock(i, data)
			require.NoError(t, err, path)
			assert.True(t, array.RecordEqual(want, got), "%s: batch %d", path, i)
			want.Release()
			got.Release()
			_, err = r.DecodeBlock(i, data[:len(data)-1])
			assert.ErrorIs(t, err, ErrInvalid)
		}
		_, err = r.BlockRows(len(r.Blocks()))
		assert.Error(t, err)
		r.Release()
	}
	_, _, err := FileBlocks([]byte("ARROW1\x00\x00\xff\xff\xff\x7fARROW1"), BatchOptions{})
	assert.ErrorIs(t, err, ErrInvalid)
}

// FuzzFileBlocks: whatever the bytes, FileBlocks, BlockRows and DecodeBlock return errors
// wrapping a sentinel or records equal to what Next reads, never a panic or a leak.
func FuzzFileBlocks(f *testing.F) {
	f.Add(mustRead(f, filepath.Join(goldenDir, "batch_tensors.arrow")))
	f.Add(dictionaryFile(f))
	seeds := 0
	for _, path := range integrationFiles(f) {
		if strings.HasSuffix(path, ".arrow_file") && seeds < 12 {
			f.Add(mustRead(f, path))
			seeds++
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		opts := BatchOptions{Allocator: mem, Limits: Limits{MaxElements: 1 << 20, MaxCopySize: 64 << 20}, SkipUnsupported: true}
		if _, _, err := FileBlocks(b, opts); err != nil {
			assertSentinel(t, err)
			return
		}
		r, err := NewBatchReader(b, opts)
		if err != nil {
			assertSentinel(t, err)
			return
		}
		defer r.Release()
		for i, blk := range r.Blocks() {
			want, werr := r.Next()
			rows, rerr := r.BlockRows(i)
			got, gerr := r.DecodeBlock(i, append([]byte(nil), b[blk.Offset:blk.Offset+blk.MetaLen+blk.BodyLen]...))
			if werr != nil {
				assertSentinel(t, werr)
				if gerr == nil {
					got.Release()
					t.Fatalf("batch %d: Next refused it (%v), DecodeBlock did not", i, werr)
				}
				return
			}
			if rerr != nil || gerr != nil {
				t.Fatalf("batch %d: Next read it, BlockRows %v, DecodeBlock %v", i, rerr, gerr)
			}
			if rows != want.NumRows() || !array.RecordEqual(want, got) {
				t.Fatalf("batch %d: DecodeBlock differs from Next", i)
			}
			want.Release()
			got.Release()
		}
	})
}
