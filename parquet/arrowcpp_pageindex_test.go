package parquet_test

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/parquet"
)

// cppChunk is a line of Arrow C++ 17's check of a file's page index (see
// testdata/arrow-cpp-17-pageindex/README.md): a column chunk's OffsetIndex and ColumnIndex as
// Arrow C++ decoded them, the data pages its PageReader read, and its verdict.
type cppChunk struct {
	RowGroup    *int  `json:"row_group"`
	Column      int   `json:"column"`
	Rows        int64 `json:"rows"`
	NumValues   int64 `json:"num_values"`
	OffsetIndex []struct {
		Offset             int64 `json:"offset"`
		CompressedPageSize int64 `json:"compressed_page_size"`
		FirstRowIndex      int64 `json:"first_row_index"`
	} `json:"offset_index"`
	ColumnIndex *struct {
		NullPages     []bool   `json:"null_pages"`
		NullCounts    []int64  `json:"null_counts"`
		BoundaryOrder string   `json:"boundary_order"`
		Min           []string `json:"min"`
		Max           []string `json:"max"`
	} `json:"column_index"`
	Pages []struct {
		Offset    int64 `json:"offset"`
		Size      int64 `json:"size"`
		NumValues int64 `json:"num_values"`
		Rows      int64 `json:"rows"`
	} `json:"pages"`
	Check    string   `json:"check"`
	Problems []string `json:"problems"`
	// The last line sums up.
	FileChunks *int `json:"file_chunks"`
	OK         int  `json:"ok"`
	Mismatch   int  `json:"mismatch"`
	NoIndex    int  `json:"no_index"`
}

// readCppCheck parses a recorded check: the chunks' lines and the summary line.
func readCppCheck(t *testing.T, path string) (chunks []cppChunk, sum cppChunk) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c cppChunk
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c), "%s", sc.Text())
		if c.FileChunks != nil {
			sum = c
			continue
		}
		require.NotNil(t, c.RowGroup, "%s", sc.Text())
		chunks = append(chunks, c)
	}
	require.NoError(t, sc.Err())
	require.NotNil(t, sum.FileChunks, "%s: no summary line", path)
	return chunks, sum
}

// TestArrowCpp17ReadsThePageIndex: Arrow C++ 17's PageIndexReader and PageReader, run on
// files ndarrow's writer wrote (and on Arrow C++'s own), found every column chunk's
// OffsetIndex true to its pages; the OffsetIndex and ColumnIndex Arrow C++ decoded are those
// ndarrow's reader (PageLocations) and CheckPageIndex's Thrift decoder decode from the same
// committed files, and the pages Arrow C++ read are those a walk of the headers finds.
func TestArrowCpp17ReadsThePageIndex(t *testing.T) {
	orders := map[string]int64{"unordered": 0, "ascending": 1, "descending": 2}
	for _, tc := range []struct {
		record, file string
		ndarrow      bool // written by ndarrow's writer: CheckPageIndex holds too
	}{
		{"ndarrow-tensor-none.jsonl", "ndarrow-tensor-none.parquet", true},
		{"ndarrow-tensor-zstd.jsonl", "ndarrow-tensor-zstd.parquet", true},
		{"ndarrow-ragged-none.jsonl", "ndarrow-ragged-none.parquet", true},
		{"ndarrow-ragged-zstd.jsonl", "ndarrow-ragged-zstd.parquet", true},
		{"cpp17-pageindex-none.jsonl", "../take/cpp17-pageindex-none.parquet", false},
		{"cpp17-pageindex-zstd.jsonl", "../take/cpp17-pageindex-zstd.parquet", false},
	} {
		t.Run(strings.TrimSuffix(tc.record, ".jsonl"), func(t *testing.T) {
			dir := "testdata/arrow-cpp-17-pageindex"
			chunks, sum := readCppCheck(t, filepath.Join(dir, tc.record))
			b, err := os.ReadFile(filepath.Join(dir, tc.file))
			require.NoError(t, err)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{})
			require.NoError(t, err)
			n := r.NumRowGroups() * parquet.NumLeaves(r)
			assert.Equal(t, n, *sum.FileChunks)
			assert.Equal(t, n, sum.OK, "Arrow C++ found every chunk's index true")
			assert.Zero(t, sum.Mismatch)
			assert.Zero(t, sum.NoIndex)
			require.Len(t, chunks, n)
			if tc.ndarrow {
				_, err := parquet.CheckPageIndex(b)
				require.NoError(t, err)
			}
			for _, c := range chunks {
				rg, leaf := *c.RowGroup, c.Column
				assert.Equal(t, "OK", c.Check, "row group %d column %d: %v", rg, leaf, c.Problems)
				assert.Equal(t, r.RowGroupRows(rg), c.Rows)
				indexed, walked, err := parquet.PageLocations(r, rg, leaf)
				require.NoError(t, err)
				require.Len(t, indexed, len(c.OffsetIndex), "row group %d column %d: pages in the offset index", rg, leaf)
				require.Len(t, walked, len(c.Pages), "row group %d column %d: data pages", rg, leaf)
				values := int64(0)
				for k, loc := range c.OffsetIndex {
					assert.Equal(t, [4]int64{loc.Offset, loc.CompressedPageSize, loc.FirstRowIndex, c.Pages[k].Rows}, indexed[k],
						"row group %d column %d page %d: offset, size, first row, rows", rg, leaf, k)
					assert.Equal(t, [2]int64{c.Pages[k].Offset, c.Pages[k].Size}, [2]int64(walked[k][:2]),
						"row group %d column %d page %d: the page Arrow C++'s PageReader read", rg, leaf, k)
					values += c.Pages[k].NumValues
				}
				assert.Equal(t, c.NumValues, values)
				ci, err := parquet.ColumnIndexOf(r, rg, leaf)
				require.NoError(t, err)
				if c.ColumnIndex == nil {
					assert.Nil(t, ci, "row group %d column %d: Arrow C++ found no column index", rg, leaf)
					continue
				}
				require.NotNil(t, ci, "row group %d column %d: no column index", rg, leaf)
				hexes := func(vs [][]byte) []string {
					out := make([]string, len(vs))
					for i, v := range vs {
						out[i] = hex.EncodeToString(v)
					}
					return out
				}
				assert.Equal(t, c.ColumnIndex.NullPages, ci.NullPages, "row group %d column %d: null pages", rg, leaf)
				assert.Equal(t, c.ColumnIndex.NullCounts, ci.NullCounts, "row group %d column %d: null counts", rg, leaf)
				assert.Equal(t, c.ColumnIndex.Min, hexes(ci.Mins), "row group %d column %d: minima", rg, leaf)
				assert.Equal(t, c.ColumnIndex.Max, hexes(ci.Maxs), "row group %d column %d: maxima", rg, leaf)
				assert.Equal(t, orders[c.ColumnIndex.BoundaryOrder], ci.BoundaryOrder, "row group %d column %d: boundary order", rg, leaf)
			}
		})
	}
}

// TestTakeRangesUseArrowCppOffsetIndex: of the files Arrow C++ 17 wrote with a page index,
// TakeRanges of two rows reads, of the tensor column, the heads and the rows' bytes of the two
// pages holding them (uncompressed) or those two pages (ZSTD), found by Arrow C++'s offset
// index; with the index taken out, the whole chunk.
func TestTakeRangesUseArrowCppOffsetIndex(t *testing.T) {
	rows := []int64{3, 700}
	for _, tc := range []struct {
		file       string
		wholePages bool
	}{
		{"testdata/take/cpp17-pageindex-none.parquet", false},
		{"testdata/take/cpp17-pageindex-zstd.parquet", true},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			require.NoError(t, err)
			r, err := parquet.NewReader(b, parquet.ReaderOptions{Columns: []string{"emb"}})
			require.NoError(t, err)
			assert.Equal(t, []string{"emb"}, parquet.TakesDirectly(r, 0))
			require.NotEmpty(t, r.PageIndexRanges(0))
			indexed, _, err := parquet.PageLocations(r, 0, 0)
			require.NoError(t, err)
			require.Greater(t, len(indexed), 2)
			var holding []parquet.ByteRange // the pages holding rows
			for _, p := range indexed {
				for _, row := range rows {
					if row >= p[2] && row < p[2]+p[3] {
						holding = append(holding, parquet.ByteRange{Offset: p[0], Length: p[1]})
						break
					}
				}
			}
			require.Len(t, holding, 2, "rows %v on two pages", rows)
			ranges, err := r.TakeRanges(0, rows)
			require.NoError(t, err)
			chunk := r.ChunkRanges(0)
			require.Len(t, chunk, 1)
			total := int64(0)
			for _, br := range ranges {
				total += br.Length
				assert.True(t, slicesContainRange(holding, br), "%v outside the pages holding the rows %v", br, holding)
			}
			if tc.wholePages {
				assert.Equal(t, holding, ranges)
			} else {
				assert.Less(t, total, holding[0].Length+holding[1].Length, "the heads and the rows, not whole pages: %v", ranges)
				assert.GreaterOrEqual(t, total, int64(len(rows))*16*4)
			}
			assert.Less(t, total, chunk[0].Length, "not the whole chunk")

			unindexed := parquet.ReplaceOffsetIndex(t, b, 0, 0, nil)
			ru, err := parquet.NewReader(unindexed, parquet.ReaderOptions{Columns: []string{"emb"}})
			require.NoError(t, err)
			ranges, err = ru.TakeRanges(0, rows)
			require.NoError(t, err)
			assert.Equal(t, ru.ChunkRanges(0), ranges, "without an offset index, the whole chunk")
			got, err := ru.TakeRows(0, rows)
			require.NoError(t, err)
			want, err := r.TakeRows(0, rows)
			require.NoError(t, err)
			requireRows(t, want, got, seq(len(rows)))
			got.Release()
			want.Release()
		})
	}
}

// slicesContainRange reports whether br lies inside one of ranges.
func slicesContainRange(ranges []parquet.ByteRange, br parquet.ByteRange) bool {
	for _, p := range ranges {
		if br.Offset >= p.Offset && br.Offset+br.Length <= p.Offset+p.Length {
			return true
		}
	}
	return false
}
