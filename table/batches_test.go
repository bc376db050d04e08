package table

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPermutation: for any size, the permutation is a bijection of [0, n), a pure function
// of (seed, epoch), another for another epoch, and its first position is about uniform over
// the rows across seeds.
func TestPermutation(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 7, 8, 100, 1000, 4097, 65537} {
		p := newPermutation(n, 42, 0)
		seen := make([]bool, n)
		for i := range n {
			r := p.at(i)
			require.True(t, r >= 0 && r < n, "n %d: position %d gives %d", n, i, r)
			require.False(t, seen[r], "n %d: row %d twice", n, r)
			seen[r] = true
		}
		q := newPermutation(n, 42, 0)
		other := newPermutation(n, 42, 1)
		same, differ := true, false
		for i := range n {
			same = same && q.at(i) == p.at(i)
			differ = differ || other.at(i) != p.at(i)
		}
		assert.True(t, same, "n %d: deterministic", n)
		if n > 6 { // two epochs of 3 rows give one order in 6 seeds
			assert.True(t, differ, "n %d: epoch 1 gives another order", n)
		}
	}
	const n, seeds = 10, 20000
	counts := make([]int, n)
	for s := range uint64(seeds) {
		counts[newPermutation(n, s, 0).at(0)]++
	}
	for r, c := range counts {
		assert.InDelta(t, seeds/n, c, seeds/n*0.1, "row %d first %d times in %d seeds", r, c, seeds)
	}
}

// TestCursorText: a cursor's text reads back as the cursor; what is not a cursor is refused.
func TestCursorText(t *testing.T) {
	c := Cursor{Version: "0123456789abcdef", Shuffle: true, Seed: 1<<64 - 1, Epoch: 3, Size: 256, Shard: 1, Shards: 4, DropLast: true, Next: 17}
	got, err := ParseCursor(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Equal(t, "c1.0123456789abcdef.1.18446744073709551615.3.256.1.4.1.17", c.String())
	c.Files = "ab27zz"
	got, err = ParseCursor(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Equal(t, "c1.0123456789abcdef.1.18446744073709551615.3.256.1.4.1.17.ab27zz", c.String())
	for _, bad := range []string{"", "c1", "c2.0123456789abcdef.1.1.3.256.1.4.1.17", "c1.0123456789abcdeg.1.1.3.256.1.4.1.17",
		"c1.0123456789abcdef.2.1.3.256.1.4.1.17", "c1.0123456789abcdef.1.1.-3.256.1.4.1.17", "c1.0123456789abcdef.1.1.3.256.1.4.1.x",
		"c1.0123456789abcdef.1.1.3.256.1.4.1.17.", "c1.0123456789abcdef.1.1.3.256.1.4.1.17.abc", "c1.0123456789abcdef.1.1.3.256.1.4.1.17.AB",
		"c1.0123456789abcdef.1.1.3.256.1.4.1.17.a1", "c1.0123456789abcdef.1.1.3.256.1.4.1.17.ab.cd"} {
		_, err := ParseCursor(bad)
		require.ErrorIs(t, err, ErrCursor, bad)
	}
}

// TestChangedSince: the files of a table whose fingerprints a cursor lacks are named, and the
// fingerprints no file has counted.
func TestChangedSince(t *testing.T) {
	files := []tableFile{{"a.parquet", "va"}, {"b.parquet", "vb"}, {"c.parquet", "vc"}}
	fp := func(fs ...tableFile) string {
		out := ""
		for _, f := range fs {
			out += fingerprint(f.version)
		}
		return out
	}
	for _, c := range []struct {
		now         []tableFile
		then, wants string
	}{
		{files, fp(files[0], tableFile{"b.parquet", "old"}, files[2]), "b.parquet changed or new since the cursor"},
		{files, fp(files[0], files[1]), "c.parquet changed or new since the cursor"},
		{files[:2], fp(files...), "1 of the files it was made on gone"},
		{files, fp(files...), "its rows are not split as they were"},
		{files, "", "one or more of its files changed"},
	} {
		assert.Contains(t, changedSince(c.now, c.then), c.wants)
	}
}
