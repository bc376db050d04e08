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
	"strconv"
	"strings"
	"sync"

	"github.com/ndarrow/ndarrow/dataset"
)

// ErrCursor is returned for a cursor that is not one, or that does not go with the options
// or the table it is used with.
var ErrCursor = errors.New("table: invalid cursor")

// ErrTableChanged is returned when a cursor is used on a table whose files are no longer
// those it was made on; it is dataset.ErrFileChanged too.
var ErrTableChanged = fmt.Errorf("table: the table changed since the cursor was made: %w", dataset.ErrFileChanged)

// tableFile is one file of a table: its path and dataset.File.Version.
type tableFile struct{ path, version string }

// files returns the table's files, each once, in the order its columns name them.
func (t *Table) files() []tableFile {
	var out []tableFile
	seen := map[string]bool{}
	for _, src := range t.columns {
		versions, _ := src.Versions()
		for i, path := range src.Paths() {
			if !seen[versions[i]] {
				seen[versions[i]] = true
				out = append(out, tableFile{path, versions[i]})
			}
		}
	}
	return out
}

// maxFingerprints is the most files whose fingerprints a cursor carries.
const maxFingerprints = 32

// fingerprintAlphabet writes a file's fingerprint: two characters, 10 bits of a SHA-256 of
// its version.
const fingerprintAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// fingerprint returns the two characters that stand for a file's version in a cursor.
func fingerprint(version string) string {
	h := sha256.Sum256([]byte(version))
	return string([]byte{fingerprintAlphabet[h[0]&31], fingerprintAlphabet[h[1]&31]})
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
		b.WriteString(fingerprint(f.version))
	}
	return b.String()
}

// changedSince says which of a table's files now are not those a cursor's fingerprints stand
// for: those whose version has no fingerprint there, and how many fingerprints no file has.
func changedSince(now []tableFile, fingerprints string) string {
	if fingerprints == "" {
		return "one or more of its files changed (a cursor names the files only of tables of up to 32)"
	}
	then := map[string]int{}
	for i := 0; i+1 < len(fingerprints); i += 2 {
		then[fingerprints[i:i+2]]++
	}
	var changed []string
	for _, f := range now {
		if fp := fingerprint(f.version); then[fp] > 0 {
			then[fp]--
		} else {
			changed = append(changed, f.path)
		}
	}
	gone := 0
	for _, n := range then {
		gone += n
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, fmt.Sprintf("%s changed or new since the cursor", strings.Join(changed, ", ")))
	}
	if gone > len(changed) {
		parts = append(parts, fmt.Sprintf("%d of the files it was made on gone", gone-len(changed)))
	}
	if len(parts) == 0 {
		return "its rows are not split as they were"
	}
	return strings.Join(parts, "; ")
}

// Version returns what identifies the version of the table's data: 16 hexadecimal digits of
// a SHA-256 of its files' versions (dataset.File.Version: path, device and inode, size and
// modification time; an object's URI, size and ETag or generation) and its fragments' rows,
// in order. A table opened again on the same files has the same Version; one whose files were
// rewritten, replaced, added or removed another.
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
	// Files stands for the table's files, two characters each (a fingerprint of each file's
	// version), for an error to name those that changed; "" for a table of more than 32.
	Files string
}

// cursorPrefix begins every cursor's text: its format's version.
const cursorPrefix = "c1"

// MarshalText returns the cursor as a token of printable characters:
// c1.VERSION.SHUFFLE.SEED.EPOCH.SIZE.SHARD.SHARDS.DROPLAST.NEXT, and .FILES when it has them.
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
	if len(f) != 10 && len(f) != 11 || f[0] != cursorPrefix || len(f[1]) != 16 {
		return fmt.Errorf("%w: %q is not a cursor (c1.VERSION.…)", ErrCursor, b)
	}
	files := ""
	if len(f) == 11 {
		files, f = f[10], f[:10]
		if files == "" || len(files)%2 != 0 || len(files) > 2*maxFingerprints || strings.Trim(files, fingerprintAlphabet) != "" {
			return fmt.Errorf("%w: %q: files %q", ErrCursor, b, files)
		}
	}
	if _, err := hex.DecodeString(f[1]); err != nil {
		return fmt.Errorf("%w: %q: version %q", ErrCursor, b, f[1])
	}
	var n [8]int64
	for i, s := range f[2:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if i == 1 { // the seed: any uint64
			u, uerr := strconv.ParseUint(s, 10, 64)
			v, err = int64(u), uerr
		}
		if err != nil || (i != 1 && v < 0) {
			return fmt.Errorf("%w: %q: field %d is %q", ErrCursor, b, i+2, s)
		}
		n[i] = v
	}
	if n[0] > 1 || n[6] > 1 || n[5] > MaxShards || CheckShard(int(n[4]), int(n[5])) != nil {
		return fmt.Errorf("%w: %q: a field out of range", ErrCursor, b)
	}
	*c = Cursor{Version: f[1], Shuffle: n[0] == 1, Seed: uint64(n[1]), Epoch: n[2], Size: n[3], Shard: int(n[4]), Shards: int(n[5]), DropLast: n[6] == 1, Next: n[7], Files: files}
	return nil
}

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
		if got := *c; got.Version != want.Version {
			return plan{}, fmt.Errorf("%s: %s (the cursor's version %s, the table's now %s): %w", t.Name, changedSince(t.files(), got.Files), got.Version, want.Version, ErrTableChanged)
		} else if got != want {
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
// the same options on the same table give the same batches, in any process. Options that do
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
