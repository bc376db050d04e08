package table

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/fileid"
	"github.com/ndarrow/ndarrow/internal/sentinel"
)

// ErrCursor is returned for a cursor that is not one, or that does not go with the options
// or the table it is used with.
var ErrCursor = errors.New("table: invalid cursor")

// ErrTableChanged is returned when a cursor is used on a table whose files are no longer
// those it was made on; it is dataset.ErrFileChanged too.
var ErrTableChanged = sentinel.New("table: the table changed since the cursor was made", dataset.ErrFileChanged)

// files returns the identities of the table's files, each once, in the order its columns
// name them.
func (t *Table) files() []dataset.Identity {
	var out []dataset.Identity
	seen := map[string]bool{}
	for _, src := range t.columns {
		for _, id := range src.Identities() {
			if !seen[id.Path] {
				seen[id.Path] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// CheckUnchanged returns a *dataset.FileError wrapping dataset.ErrFileChanged, naming the file
// and what differs, for the first of the table's files modified since the table was opened
// (dataset.Source.CheckUnchanged: its size, modification time or change time differs, the
// file mapped itself whatever its path names now), or nil. Take (and so each batch of
// Batches) asks the files it read itself; CheckUnchanged asks every file of the table, for a
// reader that wants to know the table is still as it was opened — before it resumes, say. An
// object's every read is of the version listed.
func (t *Table) CheckUnchanged() error {
	for _, src := range t.columns {
		if err := src.CheckUnchanged(); err != nil {
			return err
		}
	}
	return nil
}

// maxFingerprints is the most files whose fingerprints a cursor carries.
const maxFingerprints = 32

// fingerprintAlphabet writes a file's fingerprint, 5 bits a character.
const fingerprintAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// A file's fingerprint in a cursor is fingerprintLen characters, a few for each attribute of
// its identity (dataset.Identity), so that an error can say which of them differ: 15 bits of
// a SHA-256 of its path (what a fingerprint is matched to a file by), 10 bits of its inode
// (its low bits, mixed with the device's: a file put in another's place has another number,
// most often a near one, which they tell apart; an object's ETag or generation, hashed), 5
// bits of a hash of its size, 5 of its modification time and 10 of its change time, the
// attribute every change of a file stamps.
const (
	fpPath         = 0 // 3 characters
	fpInode        = 3 // 2
	fpSize         = 5
	fpModified     = 6
	fpChanged      = 7 // 2
	fingerprintLen = 9
)

// fingerprintAttrs are the attributes of a fingerprint a file is compared by once matched:
// where each is, and what a difference in it means (fileid.Change).
var fingerprintAttrs = []struct {
	at, n  int
	change fileid.Change
}{{fpInode, 2, fileid.Inode}, {fpSize, 1, fileid.Size}, {fpModified, 1, fileid.ModTime}, {fpChanged, 2, fileid.ChangeTime}}

// timeKey is t in nanoseconds since 1970, 0 for the zero time (an object's change time).
func timeKey(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

// hashChars returns n characters of the fingerprint alphabet from a SHA-256 of the
// attribute's place and value.
func hashChars(at int, value string, n int) string {
	h := sha256.Sum256(append([]byte{byte(at)}, value...))
	out := make([]byte, n)
	for i := range out {
		out[i] = fingerprintAlphabet[h[i]&31]
	}
	return string(out)
}

// fingerprint returns the characters that stand for a file's version in a cursor.
func fingerprint(id dataset.Identity) string {
	inode := hashChars(fpInode, id.Version, 2)
	if !id.Object {
		x := id.Inode ^ id.Device*0x9e3779b97f4a7c15
		inode = string([]byte{fingerprintAlphabet[x&31], fingerprintAlphabet[x>>5&31]})
	}
	return hashChars(fpPath, id.Path, 3) + inode + hashChars(fpSize, strconv.FormatInt(id.Size, 10), 1) +
		hashChars(fpModified, timeKey(id.Modified), 1) + hashChars(fpChanged, timeKey(id.Changed), 2)
}

// fingerprints returns the fingerprints of the table's files, in order, or "" for a table of
// more than maxFingerprints files.
func (t *Table) fingerprints() string {
	fs := t.files()
	if len(fs) > maxFingerprints {
		return ""
	}
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(fingerprint(f))
	}
	return b.String()
}

// staleness is what a cursor's fingerprints say of a table whose version is not the cursor's.
type staleness int

const (
	filesChanged staleness = iota // some of its files changed, are new or are gone
	otherFiles                    // none of the cursor's files is one of the table's: another table's cursor
	sameFiles                     // every file is as the cursor has it: the cursor's version is not one of these files
	unnamed                       // the cursor has no fingerprints (a table of more than maxFingerprints files)
)

// mostNamed is the most files of each kind an error names.
const mostNamed = 4

// changedSince says how the table's files now differ from those a cursor's fingerprints stand
// for: which files changed and in what (fileid.Change's words), which are new, and which are
// gone — each named: a file gone that the directory still holds (present, every path its scan
// found) by its path, one no longer there by its place among the cursor's files. The
// fingerprints are matched to the files by path, in order.
func changedSince(now []dataset.Identity, present []string, fingerprints string) (staleness, string) {
	if fingerprints == "" {
		return unnamed, fmt.Sprintf("one or more of its files changed, or the cursor is another table's (a cursor names the files only of tables of up to %d)", maxFingerprints)
	}
	then := make([]string, 0, len(fingerprints)/fingerprintLen)
	for i := 0; i+fingerprintLen <= len(fingerprints); i += fingerprintLen {
		then = append(then, fingerprints[i:i+fingerprintLen])
	}
	nowFP := make([]string, len(now))
	for i, f := range now {
		nowFP[i] = fingerprint(f)
	}
	// Match in order: both lists are in the table's order, which is the files' path order.
	match := make([]int, len(then)) // the file now each fingerprint is, or -1
	used := make([]bool, len(now))
	next := 0
	for i, fp := range then {
		match[i] = -1
		for k := next; k < len(now); k++ {
			if nowFP[k][fpPath:fpPath+3] == fp[fpPath:fpPath+3] {
				match[i], used[k], next = k, true, k+1
				break
			}
		}
	}
	var changed, added, gone []string
	matched := 0
	for i, fp := range then {
		k := match[i]
		if k < 0 {
			gone = append(gone, goneFile(now, present, then, match, i))
			continue
		}
		matched++
		var c fileid.Change
		for _, a := range fingerprintAttrs {
			if nowFP[k][a.at:a.at+a.n] != fp[a.at:a.at+a.n] {
				c |= a.change
			}
		}
		switch id := now[k]; {
		case c&fileid.Inode != 0 && id.Object:
			changed = append(changed, id.Path+": another version of the object (its ETag or generation differs)")
		case c != 0:
			changed = append(changed, id.Path+": "+c.String())
		}
	}
	for k, f := range now {
		if !used[k] {
			added = append(added, f.Path)
		}
	}
	switch {
	case matched == 0:
		made := fmt.Sprintf("none of the %d files it was made on is", len(then))
		if len(then) == 1 {
			made = "the file it was made on is not"
		}
		return otherFiles, fmt.Sprintf("%s one of the table's files (%s): use it with the table it was made on, opened by the path it was made with",
			made, listed(pathsOf(now), mostNamed))
	case len(changed) == 0 && len(added) == 0 && len(gone) == 0:
		return sameFiles, ""
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, listed(changed, mostNamed))
	}
	if len(added) > 0 {
		parts = append(parts, listed(added, mostNamed)+" new since the cursor")
	}
	if len(gone) > 0 {
		parts = append(parts, listed(gone, mostNamed))
	}
	return filesChanged, strings.Join(parts, "; ")
}

// goneFile names the file of fingerprint i that no file of the table now is: by its path when
// the directory still holds it (no longer one of the table's files), else by its place among
// the files the cursor was made on, between those still there.
func goneFile(now []dataset.Identity, present []string, then []string, match []int, i int) string {
	for _, path := range present {
		if hashChars(fpPath, path, 3) == then[i][fpPath:fpPath+3] && !slices.Contains(pathsOf(now), path) {
			return path + " is no longer one of its files (it could not be read, or holds no tensors now)"
		}
	}
	var before, after string
	for j := i - 1; j >= 0 && before == ""; j-- {
		if match[j] >= 0 {
			before = now[match[j]].Path
		}
	}
	for j := i + 1; j < len(then) && after == ""; j++ {
		if match[j] >= 0 {
			after = now[match[j]].Path
		}
	}
	place := fmt.Sprintf("the %s of the %d files the cursor was made on", ordinal(i+1), len(then))
	switch {
	case before != "" && after != "":
		return fmt.Sprintf("the file between %s and %s is gone (%s)", before, after, place)
	case before != "":
		return fmt.Sprintf("the file after %s is gone (%s)", before, place)
	case after != "":
		return fmt.Sprintf("the file before %s is gone (%s)", after, place)
	}
	return fmt.Sprintf("a file is gone (%s)", place)
}

// pathsOf returns the paths of files.
func pathsOf(files []dataset.Identity) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// listed joins the first most of items with ", ", and says how many more there are.
func listed(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

// ordinal returns n (1 or more) as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// staleCursor returns the error of a cursor whose version is not the table's now: the table's
// files changed since it was made (ErrTableChanged, naming each file and what differs, or new
// or gone); it is a cursor of another table's files; or the files are as it has them, and its
// version is no version of theirs (ErrCursor: an edited cursor).
func (t *Table) staleCursor(c Cursor) error {
	var present []string
	if t.dir != nil {
		present = t.dir.Paths()
	}
	verdict, says := changedSince(t.files(), present, c.Files)
	switch verdict {
	case otherFiles:
		return fmt.Errorf("%w: %s: the cursor is of another table: %s", ErrCursor, t.Name, says)
	case sameFiles:
		return fmt.Errorf("%w: %s: the cursor is not valid for this table: it names the table's files as they are, but its version %s is not theirs (%s): an edited cursor? Resume with one as Batches wrote it", ErrCursor, t.Name, c.Version, t.Version())
	}
	return fmt.Errorf("%s: %w: %s: start the epoch again, without the cursor (the cursor's version %s, the table's now %s)", t.Name, ErrTableChanged, says, c.Version, t.Version())
}

// Version returns what identifies the version of the table's data: 16 hexadecimal digits of
// a SHA-256 of its files' versions (dataset.File.Version: path, device and inode, size,
// modification time and change time; an object's URI, size and ETag or generation) and its
// fragments' rows, in order. A table opened again on the same files has the same Version; one
// whose files were rewritten, replaced, added or removed another — and so has one whose files
// were only made read-only or touched: what became of their bytes cannot be told.
func (t *Table) Version() string {
	h := sha256.New()
	for _, src := range t.columns {
		versions, chunks := src.Versions()
		for i, v := range versions {
			fmt.Fprintf(h, "%s\x00%d\x01", v, chunks[i])
		}
		h.Write([]byte{2})
	}
	for _, f := range t.first {
		fmt.Fprintf(h, "%d,", f)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// BatchOptions say which batches Batches gives.
type BatchOptions struct {
	Size    int64    // rows a batch (more than 0)
	Columns []string // the columns, in this order; every column when empty
	// Shuffle orders an epoch's rows by a pseudorandom permutation of all the table's rows
	// keyed by Seed and Epoch (a different one each epoch), not by fragments or a buffer;
	// without it rows come in table order.
	Shuffle bool
	Seed    uint64
	Epoch   int64 // 0 or more
	// Shard of Shards (0 ≤ Shard < Shards ≤ MaxShards; Shards 0 is 1): the shards split the
	// epoch's positions into contiguous runs, the first rows mod Shards one row longer, so
	// that together they give every row once and their sizes differ by at most one row.
	Shard, Shards int
	// DropLast leaves out each shard's last batch when it is short and evens the shards'
	// batch counts: every shard gives (rows/Shards)/Size batches of Size rows, as DDP needs.
	DropLast bool
	// After resumes after the batch the cursor was given with: the batches are those that
	// followed it. Its options must be these, and the table the one it was made on. The
	// cursor of an epoch's last batch gives no batch and no error — the epoch is finished
	// (Remaining: 0 batches); a loop resuming from it goes on with Epoch+1, without After.
	After *Cursor
	// Reserve, when set, is called with the rows of each batch before it is read (on a
	// goroutine of Batches' own), in batch order; an error from it ends the iteration with
	// that error. A caller that reserves memory for each batch gives it back once done with
	// the batch, and what was reserved for batches never given once Batches returns (it
	// returns only after its reading goroutine has ended).
	Reserve func(ctx context.Context, rows int64) error
	// Readahead is about the most bytes of batches read ahead of the one in use
	// (TakeBytes): 0 is DefaultReadahead; whatever it is, at least the next batch is read
	// while the last one given is used.
	Readahead int64
}

// MaxShards is the most shards BatchOptions.Shards may split an epoch into: as many as a
// cursor's text holds.
const MaxShards = 1 << 31

// CheckShard returns an error unless shard is one of shards: 0 ≤ shard < shards ≤ MaxShards
// (shards 0 is 1) — what Batches takes and a cursor's text holds.
func CheckShard(shard, shards int) error {
	if shards == 0 {
		shards = 1
	}
	return checkShardOf(shard, shards)
}

// checkShardOf is CheckShard where shards 0 is none.
func checkShardOf(shard, shards int) error {
	if shard < 0 || shard >= shards || shards < 1 || int64(shards) > MaxShards {
		return fmt.Errorf("table: shard %d of %d: a shard counts from 0 to one less than the shards, and the shards from 1 to %d", shard, shards, int64(MaxShards))
	}
	return nil
}

// ParseShard parses "K/N", shard K of N shards, within CheckShard's bounds (N at least 1).
func ParseShard(s string) (shard, shards int, err error) {
	k, n, ok := strings.Cut(s, "/")
	shard, err1 := strconv.Atoi(k)
	shards, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("table: shard %q is not K/N: shard K (from 0) of N", s)
	}
	return shard, shards, checkShardOf(shard, shards)
}

// DefaultReadahead is the bytes of batches Batches reads ahead when BatchOptions.Readahead
// is 0.
const DefaultReadahead = 32 << 20

// maxAhead is the most batches read ahead, however small.
const maxAhead = 1024

// ReadaheadBatches returns how many batches Batches reads ahead of the one in use with o:
// as many as o.Readahead bytes hold, as TakeBytes counts a batch of o.Size rows, at least one
// and at most 1024.
func (t *Table) ReadaheadBatches(o BatchOptions) int {
	budget := o.Readahead
	if budget <= 0 {
		budget = DefaultReadahead
	}
	per, _, err := t.TakeBytes(o.Size, o.Columns)
	if err != nil || per <= 0 {
		return 1
	}
	return int(min(max(budget/per, 1), maxAhead))
}

// Batch is one mini-batch: the table rows, in its order, their values, and the cursor that
// resumes after it.
type Batch struct {
	Index  int64          // the batch's index in its shard's epoch
	Rows   []int64        // the table rows it holds, in its order
	Values *dataset.Table // the rows' values: copies, every column asked for
	Cursor Cursor
}

// Cursor says where a shard's epoch of batches stands: its options, the table's Version and
// the index of the next batch. Its text (MarshalText) is a short printable token.
type Cursor struct {
	Version  string
	Shuffle  bool
	Seed     uint64
	Epoch    int64
	Size     int64
	Shard    int
	Shards   int
	DropLast bool
	Next     int64
	// Files stands for the table's files, 9 characters each (a fingerprint of each file's
	// path, inode, size, modification time and change time), for an error to name the files
	// that changed and what differs in each; "" for a table of more than 32.
	Files string
}

// cursorPrefix begins every cursor's text: its format's version. c1 cursors (ndarrow before
// file fingerprints named each attribute) are refused.
const cursorPrefix = "c2"

// MarshalText returns the cursor as a token of printable characters:
// c2.VERSION.SHUFFLE.SEED.EPOCH.SIZE.SHARD.SHARDS.DROPLAST.NEXT, and .FILES when it has them.
func (c Cursor) MarshalText() ([]byte, error) {
	b := fmt.Appendf(nil, "%s.%s.%d.%d.%d.%d.%d.%d.%d.%d", cursorPrefix, c.Version, b2i(c.Shuffle), c.Seed, c.Epoch, c.Size, c.Shard, c.Shards, b2i(c.DropLast), c.Next)
	if c.Files != "" {
		b = fmt.Appendf(b, ".%s", c.Files)
	}
	return b, nil
}

// String returns the cursor's text.
func (c Cursor) String() string {
	b, _ := c.MarshalText()
	return string(b)
}

// UnmarshalText reads a cursor's text, failing with an error wrapping ErrCursor for anything
// MarshalText does not write.
func (c *Cursor) UnmarshalText(b []byte) error {
	f := strings.Split(string(b), ".")
	if len(f) >= 10 && f[0] == "c1" {
		return fmt.Errorf("%w: %q is a cursor of an earlier ndarrow (c1), which this one does not resume: start the epoch again", ErrCursor, b)
	}
	if len(f) != 10 && len(f) != 11 || f[0] != cursorPrefix || len(f[1]) != 16 {
		return fmt.Errorf("%w: %q is not a cursor (%s.VERSION.…)", ErrCursor, b, cursorPrefix)
	}
	files := ""
	if len(f) == 11 {
		files, f = f[10], f[:10]
		if files == "" || len(files)%fingerprintLen != 0 || len(files) > fingerprintLen*maxFingerprints || strings.Trim(files, fingerprintAlphabet) != "" {
			return fmt.Errorf("%w: %q: its files %q are not a cursor's: up to %d fingerprints of %d characters of %s (paste the cursor whole, as it was written)",
				ErrCursor, b, files, maxFingerprints, fingerprintLen, "a-z and 2-7")
		}
	}
	if _, err := hex.DecodeString(f[1]); err != nil {
		return fmt.Errorf("%w: %q: its table version %q is not 16 hexadecimal digits", ErrCursor, b, f[1])
	}
	var n [8]int64
	for i, s := range f[2:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if i == 1 { // the seed: any uint64
			u, uerr := strconv.ParseUint(s, 10, 64)
			v, err = int64(u), uerr
		}
		if err != nil || (i != 1 && v < 0) {
			most := "9223372036854775807"
			if i == 1 {
				most = "18446744073709551615"
			}
			return fmt.Errorf("%w: %q: field %d, %s, is %q, not a whole number from 0 to %s", ErrCursor, b, i+2, cursorFields[i], s, most)
		}
		n[i] = v
	}
	for _, i := range []int{0, 6} {
		if n[i] > 1 {
			return fmt.Errorf("%w: %q: field %d, %s, is %d, not 0 or 1", ErrCursor, b, i+2, cursorFields[i], n[i])
		}
	}
	if n[5] > MaxShards {
		return fmt.Errorf("%w: %q: field 7, SHARDS, is %d, more than %d", ErrCursor, b, n[5], int64(MaxShards))
	}
	if err := CheckShard(int(n[4]), int(n[5])); err != nil {
		return fmt.Errorf("%w: %q: fields 6 and 7, SHARD and SHARDS: %v", ErrCursor, b, err)
	}
	*c = Cursor{Version: f[1], Shuffle: n[0] == 1, Seed: uint64(n[1]), Epoch: n[2], Size: n[3], Shard: int(n[4]), Shards: int(n[5]), DropLast: n[6] == 1, Next: n[7], Files: files}
	return nil
}

// cursorFields names the numbers of a cursor's text, fields 2 to 9 (see MarshalText).
var cursorFields = [8]string{"SHUFFLE", "SEED", "EPOCH", "SIZE", "SHARD", "SHARDS", "DROPLAST", "NEXT"}

// ParseCursor returns the cursor whose text is s.
func ParseCursor(s string) (Cursor, error) {
	var c Cursor
	return c, c.UnmarshalText([]byte(s))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// plan is a shard's epoch of batches: its positions [start, start+length) of the epoch's
// order, batches of size, count of them.
type plan struct {
	perm          *permutation // nil: table order
	start, length int64
	size, count   int64
	cursor        Cursor
}

// planOf checks o against the table and returns the plan of o's shard and epoch.
func (t *Table) planOf(o BatchOptions) (plan, error) {
	shards := max(o.Shards, 1)
	shardErr := CheckShard(o.Shard, o.Shards)
	switch {
	case o.Size <= 0:
		return plan{}, fmt.Errorf("table: batches of %d rows: the size must be more than 0", o.Size)
	case shardErr != nil:
		return plan{}, shardErr
	case o.Epoch < 0:
		return plan{}, fmt.Errorf("table: epoch %d: epochs count from 0", o.Epoch)
	}
	if _, err := t.pick(o.Columns); err != nil {
		return plan{}, err
	}
	n := t.NumRows()
	base, extra := n/int64(shards), n%int64(shards)
	k := int64(o.Shard)
	p := plan{start: k*base + min(k, extra), length: base, size: o.Size}
	if k < extra {
		p.length++
	}
	if o.DropLast {
		p.count = base / o.Size // the same for every shard
	} else {
		p.count = p.length/o.Size + min(p.length%o.Size, 1) // no overflow for any size
	}
	if o.Shuffle {
		p.perm = newPermutation(n, o.Seed, o.Epoch)
	}
	p.cursor = Cursor{Version: t.Version(), Shuffle: o.Shuffle, Seed: o.Seed, Epoch: o.Epoch, Size: o.Size, Shard: o.Shard, Shards: shards, DropLast: o.DropLast, Files: t.fingerprints()}
	if !o.Shuffle {
		p.cursor.Seed = 0
	}
	if c := o.After; c != nil {
		want := p.cursor
		want.Next = c.Next
		switch got := *c; {
		case got.Version != want.Version:
			return plan{}, t.staleCursor(got)
		case got.Files != want.Files:
			return plan{}, fmt.Errorf("%w: %s: the cursor is not valid for this table: its version is the table's, but not its files' fingerprints (an edited cursor?): resume with one as Batches wrote it", ErrCursor, t.Name)
		case got != want:
			return plan{}, fmt.Errorf("%w: %s is for other options than these: %s (resume with the options it was made with)", ErrCursor, got, optionsDiffer(got, want))
		}
		if c.Next > p.count {
			return plan{}, fmt.Errorf("%w: %s: batch %d of %d", ErrCursor, c, c.Next, p.count)
		}
		p.cursor.Next = c.Next
	}
	return p, nil
}

// optionsDiffer says which options of the cursor got are not those of want: "epoch 2, not 3;
// shard 0 of 2, not 1 of 2".
func optionsDiffer(got, want Cursor) string {
	var out []string
	differ := func(what string, g, w any) {
		if g != w {
			out = append(out, fmt.Sprintf("%s %v, not %v", what, g, w))
		}
	}
	differ("shuffle", got.Shuffle, want.Shuffle)
	differ("seed", got.Seed, want.Seed)
	differ("epoch", got.Epoch, want.Epoch)
	differ("batch size", got.Size, want.Size)
	differ("shard", fmt.Sprintf("%d of %d", got.Shard, got.Shards), fmt.Sprintf("%d of %d", want.Shard, want.Shards))
	differ("drop last", got.DropLast, want.DropLast)
	if len(out) == 0 { // the files' fingerprints alone
		return fmt.Sprintf("files %q, not %q", got.Files, want.Files)
	}
	return "the cursor's " + strings.Join(out, "; ")
}

// rows returns the table rows of batch b of the plan.
func (p plan) rows(b int64) []int64 {
	lo := b * p.size
	hi := min(lo+p.size, p.length)
	out := make([]int64, hi-lo)
	for i := range out {
		pos := p.start + lo + int64(i)
		if p.perm != nil {
			pos = p.perm.at(pos)
		}
		out[i] = pos
	}
	return out
}

// NumBatches returns the number of batches Batches gives with o from its start (o.After
// aside).
func (t *Table) NumBatches(o BatchOptions) (int64, error) {
	o.After = nil
	p, err := t.planOf(o)
	return p.count, err
}

// Remaining returns how many batches, and rows in them, Batches gives with o: those after
// o.After, or every one without it. Its errors are those Batches would end with at once.
func (t *Table) Remaining(o BatchOptions) (batches, rows int64, err error) {
	p, err := t.planOf(o)
	if err != nil {
		return 0, 0, err
	}
	end := p.length // the shard's rows in batches
	if o.DropLast {
		end = p.count * p.size // whole batches only: at most the shard's rows
	}
	return p.count - p.cursor.Next, end - min(p.cursor.Next*p.size, end), nil
}

// Batches returns the batches of the table's rows o asks for, in order, each Take's copy of
// its rows (every column, or o.Columns), read ahead of the one in use — as many as
// o.Readahead bytes hold (at least one), up to GOMAXPROCS of them at once. The order
// is a pure function of the table's rows, o.Shuffle, o.Seed, o.Epoch, o.Shard and o.Shards:
// the same options on the same table give the same batches, in any process. Each batch is
// rows of the version of the files the table opened, as Take checks them: a file modified
// since fails the first batch that reads it (dataset.ErrFileChanged, naming it), no batch
// before it holding a row of the new version. Options that do
// not hold, a cursor of other options or of a changed table (ErrTableChanged), and what Take
// (or o.Reserve) fails with end the iteration with that error; the cursor of the epoch's last
// batch ends it at once without one (the epoch is finished). It returns once the goroutine
// reading ahead has ended.
func (t *Table) Batches(ctx context.Context, o BatchOptions) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		p, err := t.planOf(o)
		if err != nil {
			yield(Batch{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		type read struct {
			b   Batch
			err error
		}
		// The batches read ahead, in order, each its own channel: up to ahead of them, read
		// at once by up to GOMAXPROCS goroutines (sequential batches share pages, which a
		// page cache decodes once for them all; each Take is parallel itself).
		ahead := t.ReadaheadBatches(o)
		order := make(chan chan read, ahead-1)
		readers := make(chan struct{}, min(ahead, runtime.GOMAXPROCS(0)))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // hands out the batches: reserved in order, read by the readers
			defer wg.Done()
			defer close(order)
			for b := p.cursor.Next; b < p.count; b++ {
				rows := p.rows(b)
				c := p.cursor
				c.Next = b + 1
				out := make(chan read, 1)
				var err error
				if o.Reserve != nil {
					err = o.Reserve(ctx, int64(len(rows)))
				}
				if err == nil {
					select {
					case readers <- struct{}{}:
					case <-ctx.Done():
						err = ctx.Err()
					}
				}
				if err != nil {
					out <- read{Batch{Index: b, Rows: rows, Cursor: c}, err}
				} else {
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer func() { <-readers }()
						values, err := t.Take(ctx, rows, o.Columns)
						out <- read{Batch{Index: b, Rows: rows, Values: values, Cursor: c}, err}
					}()
				}
				// Handed on in order once there is room: ahead-1 wait in order, and this one.
				select {
				case order <- out:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
		defer func() { // every goroutine reading ended before Batches returns
			cancel()
			wg.Wait()
		}()
		for out := range order {
			r := <-out
			if !yield(r.b, r.err) || r.err != nil {
				return
			}
		}
	}
}

// permutation is a keyed pseudorandom permutation of [0, n): a balanced Feistel network of
// feistelRounds rounds on the smallest even number of bits that holds n-1, cycle-walked back
// into [0, n) (the walk from a position inside ends inside: the network is a bijection of its
// domain, which holds fewer than 4n values, so a walk takes fewer than 4 steps on average).
// It needs no memory per row: position i maps to its row directly.
type permutation struct {
	n    int64
	half uint // bits of each half
	keys [feistelRounds]uint64
}

// feistelRounds is the rounds of the permutation's network (Luby and Rackoff: 4 make a
// pseudorandom permutation of a pseudorandom round function; 6 for margin).
const feistelRounds = 6

// newPermutation returns the permutation of [0, n) keyed by seed and epoch.
func newPermutation(n int64, seed uint64, epoch int64) *permutation {
	p := &permutation{n: n}
	width := uint(bits.Len64(uint64(max(n-1, 1))))
	p.half = (width + 1) / 2
	r := rand.New(rand.NewPCG(seed, uint64(epoch)^0x6e64617272_6f77)) // "ndarrow"
	for i := range p.keys {
		p.keys[i] = r.Uint64()
	}
	return p
}

// at returns the row at position pos (0 ≤ pos < n).
func (p *permutation) at(pos int64) int64 {
	x := uint64(pos)
	for {
		x = p.encrypt(x)
		if x < uint64(p.n) {
			return int64(x)
		}
	}
}

// encrypt is one pass of the network over the domain [0, 2^(2·half)).
func (p *permutation) encrypt(x uint64) uint64 {
	mask := uint64(1)<<p.half - 1
	l, r := x>>p.half, x&mask
	for _, k := range p.keys {
		l, r = r, l^(mix(r^k)&mask)
	}
	return l<<p.half | r
}

// mix is SplitMix64's finalizer: every input bit flips each output bit with probability
// about one half.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
