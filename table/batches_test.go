package table

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/dataset"
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

// TestCursorText: a cursor's text reads back as the cursor; what is not a cursor is refused,
// and so is a cursor of an earlier ndarrow (c1), saying so.
func TestCursorText(t *testing.T) {
	c := Cursor{Version: "0123456789abcdef", Shuffle: true, Seed: 1<<64 - 1, Epoch: 3, Size: 256, Shard: 1, Shards: 4, DropLast: true, Next: 17}
	got, err := ParseCursor(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Equal(t, "c2.0123456789abcdef.1.18446744073709551615.3.256.1.4.1.17", c.String())
	c.Files = "ab27zzqqrabcdefghi"
	got, err = ParseCursor(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Equal(t, "c2.0123456789abcdef.1.18446744073709551615.3.256.1.4.1.17.ab27zzqqrabcdefghi", c.String())
	for _, bad := range []string{"", "c2", "c3.0123456789abcdef.1.1.3.256.1.4.1.17", "c2.0123456789abcdeg.1.1.3.256.1.4.1.17",
		"c2.0123456789abcdef.2.1.3.256.1.4.1.17", "c2.0123456789abcdef.1.1.-3.256.1.4.1.17", "c2.0123456789abcdef.1.1.3.256.1.4.1.x",
		"c2.0123456789abcdef.1.1.3.256.1.4.1.17.", "c2.0123456789abcdef.1.1.3.256.1.4.1.17.ab27zzqq", "c2.0123456789abcdef.1.1.3.256.1.4.1.17.AB27ZZQQR",
		"c2.0123456789abcdef.1.1.3.256.1.4.1.17.ab27zzqq1", "c2.0123456789abcdef.1.1.3.256.1.4.1.17.ab27zzqqr.abcdefghi",
		"c2.0123456789abcdef.1.1.3.256.1.4.1.17." + strings.Repeat("abcdefghi", maxFingerprints+1)} {
		_, err := ParseCursor(bad)
		require.ErrorIs(t, err, ErrCursor, bad)
	}
	_, err = ParseCursor("c1.0123456789abcdef.1.1.3.256.1.4.1.17.ab27")
	require.ErrorIs(t, err, ErrCursor)
	assert.Contains(t, err.Error(), "a cursor of an earlier ndarrow (c1), which this one does not resume: start the epoch again")
}

// TestCursorErrorsSayWhatIsWrong: a cursor's text refused names the part that is wrong and
// what it should be.
func TestCursorErrorsSayWhatIsWrong(t *testing.T) {
	const head = "c2.0123456789abcdef.1.1.3.256.1.4.1"
	for _, tc := range []struct {
		text, says string
	}{
		{head + ".-1", "field 9, NEXT, is \"-1\", not a whole number from 0 to 9223372036854775807"},
		{"c2.0123456789abcdef.1.x.3.256.1.4.1.17", "field 3, SEED, is \"x\", not a whole number from 0 to 18446744073709551615"},
		{"c2.0123456789abcdef.2.1.3.256.1.4.1.17", "field 2, SHUFFLE, is 2, not 0 or 1"},
		{"c2.0123456789abcdef.1.1.3.256.1.4.3.17", "field 8, DROPLAST, is 3, not 0 or 1"},
		{"c2.0123456789abcdef.1.1.3.256.4.4.1.17", "fields 6 and 7, SHARD and SHARDS: "},
		{"c2.0123456789abcdef.1.1.3.256.0.4294967296.1.17", "field 7, SHARDS, is 4294967296, more than 2147483648"},
		{"c2.0123456789abcdeg.1.1.3.256.1.4.1.17", "its table version \"0123456789abcdeg\" is not 16 hexadecimal digits"},
		{head + ".17.xzm", "its files \"xzm\" are not a cursor's: up to 32 fingerprints of 9 characters of a-z and 2-7 (paste the cursor whole, as it was written)"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			_, err := ParseCursor(tc.text)
			require.ErrorIs(t, err, ErrCursor)
			assert.ErrorContains(t, err, fmt.Sprintf("%q: %s", tc.text, tc.says))
		})
	}
}

// TestChangedSince: a cursor's fingerprints are matched to the table's files by name, and
// each file that differs is named with what differs in it; a file new since is named, and one
// gone by its path when the directory still holds it, else by its place among the cursor's
// files; a cursor none of whose files the table has is another table's, one whose files are
// all as they are names no change.
func TestChangedSince(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	inode := uint64(100)
	file := func(path string) dataset.Identity {
		inode++
		return dataset.Identity{Path: path, Device: 2049, Inode: inode, Size: 1000, Modified: at, Changed: at}
	}
	a, b, c := file("train/a.parquet"), file("train/b.parquet"), file("train/c.parquet")
	fp := func(fs ...dataset.Identity) string {
		out := ""
		for _, f := range fs {
			out += fingerprint(f)
		}
		return out
	}
	with := func(f dataset.Identity, change func(*dataset.Identity)) dataset.Identity {
		change(&f)
		return f
	}
	touched := with(b, func(id *dataset.Identity) { id.Changed = at.Add(time.Nanosecond) })
	written := with(b, func(id *dataset.Identity) {
		id.Size, id.Modified, id.Changed = 999, at.Add(time.Second), at.Add(time.Second)
	})
	replaced := with(b, func(id *dataset.Identity) { id.Inode += 3 }) // a new file's number, near the old one's
	moved := func(f dataset.Identity) dataset.Identity {
		return with(f, func(id *dataset.Identity) { id.Path = "/data/" + id.Path })
	}
	object := func(etag string) dataset.Identity {
		return dataset.Identity{Path: "s3://bucket/train/a.parquet", Object: true, Version: etag, Size: 10}
	}
	for _, tc := range []struct {
		name    string
		now     []dataset.Identity
		present []string
		then    string
		want    staleness
		says    string
	}{
		{"its change time", []dataset.Identity{a, touched, c}, nil, fp(a, b, c), filesChanged,
			"train/b.parquet: its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename)"},
		{"written to", []dataset.Identity{a, written, c}, nil, fp(a, b, c), filesChanged,
			"train/b.parquet: its size, modification time and change time differ (written to: truncated, rewritten or appended to)"},
		{"replaced", []dataset.Identity{a, replaced, c}, nil, fp(a, b, c), filesChanged,
			"train/b.parquet: its path names another file now (another device or inode: replaced)"},
		{"new", []dataset.Identity{a, b, c}, nil, fp(a, b), filesChanged, "train/c.parquet new since the cursor"},
		{"gone between two", []dataset.Identity{a, c}, nil, fp(a, b, c), filesChanged,
			"the file between train/a.parquet and train/c.parquet is gone (the 2nd of the 3 files the cursor was made on)"},
		{"gone last", []dataset.Identity{a, b}, nil, fp(a, b, c), filesChanged,
			"the file after train/b.parquet is gone (the 3rd of the 3 files the cursor was made on)"},
		{"gone first", []dataset.Identity{b, c}, nil, fp(a, b, c), filesChanged,
			"the file before train/b.parquet is gone (the 1st of the 3 files the cursor was made on)"},
		{"no longer read", []dataset.Identity{a, c}, []string{"train/a.parquet", "train/b.parquet", "train/c.parquet"}, fp(a, b, c), filesChanged,
			"train/b.parquet is no longer one of its files (it could not be read, or holds no tensors now)"},
		{"several", []dataset.Identity{touched, c}, nil, fp(a, b), filesChanged,
			"train/b.parquet: its change time differs (a write that kept its size and modification time, as rsync --inplace -t leaves it, or a chmod, chown, touch or rename); " +
				"train/c.parquet new since the cursor; the file before train/b.parquet is gone (the 1st of the 2 files the cursor was made on)"},
		{"opened by another path", []dataset.Identity{moved(a)}, nil, fp(a), otherFiles,
			"the file it was made on is not one of the table's files (/data/train/a.parquet): use it with the table it was made on, opened by the path it was made with"},
		{"another version of an object", []dataset.Identity{object(`"2"`)}, nil, fp(object(`"1"`)), filesChanged,
			"s3://bucket/train/a.parquet: another version of the object (its ETag or generation differs)"},
		{"another table", []dataset.Identity{a, b, c}, nil, fp(file("test/x.parquet"), file("test/y.parquet")), otherFiles,
			"none of the 2 files it was made on is one of the table's files (train/a.parquet, train/b.parquet, train/c.parquet): use it with the table it was made on, opened by the path it was made with"},
		{"the files as they are", []dataset.Identity{a, b, c}, nil, fp(a, b, c), sameFiles, ""},
		{"no fingerprints", []dataset.Identity{a, b, c}, nil, "", unnamed,
			"one or more of its files changed, or the cursor is another table's (a cursor names the files only of tables of up to 32)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, says := changedSince(tc.now, tc.present, tc.then)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.says, says)
		})
	}
}
