package flight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrNotFound is returned for a name that is not served.
	ErrNotFound = errors.New("flight: no such tensor")
	// ErrName is returned for a name a tensor cannot have.
	ErrName = errors.New("flight: invalid tensor name")
)

// Store is a catalogue of named tensors, safe for concurrent use: tensors added from memory
// or uploaded, and the tensors of the directories added with AddDir, which follow their files
// (Rescan, Watch). An uploaded tensor hides a directory's tensor of the same name until it is
// deleted. A tensor replaced or deleted while a DoGet sends it stays alive until that stream
// ends.
type Store struct {
	mem     memory.Allocator
	mu      sync.RWMutex
	entries map[string]*entry // added or uploaded
	fromDir map[string]*entry // the tensors of the directories, as last scanned
	dirs    []*servedDir
	gen     atomic.Uint64 // counts the changes to fromDir
	uploads atomic.Int64  // counts the puts: each stores a version of its own

	// unreadable holds, by directory, then by table, the files of the directories' tables
	// that cannot be read (dataset.SkippedFile), each "PATH: why" under its directory: a
	// flight of such a table fails (ErrUnreadable), unless SetSkipUnreadable serves it without
	// them; under mu.
	unreadable map[string]map[string][]string

	rescanMu       sync.Mutex   // one Rescan at a time
	poll           atomic.Int64 // SetPollInterval's, nanoseconds
	shareK         int          // SetShare's: this store serves share shareK of shareN of each tensor
	shareN         int
	skipUnreadable bool         // SetSkipUnreadable's
	watching       atomic.Int32 // the Watch calls following the directories
}

// servedDir is a directory AddDir added: its last scan and the problems already reported.
type servedDir struct {
	path     string
	dir      *dataset.Dir
	reported map[string]bool // the problems the last scan found, by their text
}

// entry is one flight ready to send: either a tensor and its record batch, which views the
// tensor's memory (or a copy allocated from the store's allocator where Arrow needs another
// layout), or a dataset.Source whose chunks are read and sent one at a time at each DoGet
// (the Parquet columns and joined tables of a directory), with the Source's files retained; or
// a table (see table.go): a record batch of its columns, or its columns' Sources read in
// lockstep.
type entry struct {
	meta    tensorMetadata
	schema  *arrow.Schema
	rows    int64
	bytes   int64 // what the record batches hold; -1 when unknown before they are read
	tensor  dataset.Tensor
	record  arrow.Record       // nil for a Source, or a table read chunk by chunk
	source  *dataset.Source    // nil for a tensor added whole
	columns []*dataset.Source  // a directory's table's columns (retained), whose chunks a DoGet reads in lockstep unless record holds them
	root    string             // the directory of a Source, which names its files to clients
	held    *sharedReservation // an upload's share of the memory budget, or nil
	tensors []dataset.Tensor   // a table held in memory (an upload): its columns, which record views
	done    func()             // called at the last release (a take's answer gives back its memory budget)
	refs    atomic.Int64
}

// checkUnchanged returns an error naming the file of e's Sources that was modified in place
// since it was mapped (dataset.Source.CheckUnchanged), nil when none was.
func (e *entry) checkUnchanged() error {
	if e.source != nil {
		if err := e.source.CheckUnchanged(); err != nil {
			return err
		}
	}
	for _, c := range e.columns {
		if err := c.CheckUnchanged(); err != nil {
			return err
		}
	}
	return nil
}

// acquire adds a reference to e.
func (e *entry) acquire() { e.refs.Add(1) }

// release drops a reference and frees the record, and the Source's files, at the last one.
func (e *entry) release() {
	if e.refs.Add(-1) != 0 {
		return
	}
	if e.record != nil {
		e.record.Release()
	}
	if e.source != nil {
		e.source.Release()
	}
	for _, c := range e.columns {
		c.Release()
	}
	if e.held != nil {
		e.held.release()
	}
	if e.done != nil {
		e.done()
	}
}

// NewStore returns an empty store whose record batches that cannot view a tensor's memory are
// allocated from mem (memory.DefaultAllocator when nil). Close it to release every tensor.
func NewStore(mem memory.Allocator) *Store {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Store{mem: mem, entries: map[string]*entry{}, fromDir: map[string]*entry{}, unreadable: map[string]map[string][]string{}}
}

// SetSkipUnreadable says what the store serves of a directory's table some of whose files
// cannot be read — cut short, not joining the parts before them, sharing a base name
// (dataset.SkippedFile): with skip, the table (and each of its column flights) without
// them, every file left out named in its FlightInfo's app_metadata ("skipped"); without
// (the default), nothing of it — a client asking for it gets FailedPrecondition naming the
// file (ErrUnreadable), and ListFlights lists it with no rows, the files in "unreadable".
// Call it before AddDir.
func (s *Store) SetSkipUnreadable(skip bool) {
	s.rescanMu.Lock()
	s.skipUnreadable = skip
	s.rescanMu.Unlock()
}

// SetShare makes the store serve only share k of n (0 ≤ k < n) of each directory tensor:
// a contiguous run of its chunks, whole files and Parquet row groups (dataset.Source.Share),
// so that n stores over the same directory or prefix, listed in k order as a server's Shards,
// serve every row once. Call it before AddDir.
func (s *Store) SetShare(k, n int) error {
	if n < 1 || k < 0 || k >= n {
		return fmt.Errorf("flight: share %d of %d: not 0 ≤ k < n", k, n)
	}
	s.rescanMu.Lock()
	s.shareK, s.shareN = k, n
	s.rescanMu.Unlock()
	return nil
}

// CheckName returns an error wrapping ErrName unless name can name a tensor: 1 to 255 bytes of
// printable ASCII other than '/' and '\\', not starting with '.' or '{' (a ticket starting
// with '{' is a take: see TakeTicket).
func CheckName(name string) error {
	if name == "" || len(name) > 255 || name[0] == '.' || name[0] == '{' {
		return fmt.Errorf("%w: %q", ErrName, name)
	}
	for i := range len(name) {
		if c := name[i]; c < 0x21 || c > 0x7e || c == '/' || c == '\\' {
			return fmt.Errorf("%w: %q has byte %#x at %d", ErrName, name, c, i)
		}
	}
	return nil
}

// Add stores t under name, replacing any tensor of that name. The store views t's memory,
// which must stay unchanged while it is served. Add fails for a name CheckName refuses and for
// a tensor Flight cannot carry (a scalar; null rows in a tensor of more than one dimension).
func (s *Store) Add(name string, t dataset.Tensor) error {
	e, err := s.newEntry(name, t)
	if err != nil {
		return err
	}
	s.put(name, e)
	return nil
}

func (s *Store) newEntry(name string, t dataset.Tensor) (*entry, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	t.Name, t.Kind = name, t.ImpliedKind()
	rec, err := t.Record(s.mem, name)
	if err != nil {
		return nil, fmt.Errorf("flight: %s: %w", name, err)
	}
	n, err := dataset.RecordBytes(rec)
	if err != nil {
		rec.Release()
		return nil, fmt.Errorf("flight: %s: %w", name, err)
	}
	e := &entry{meta: metadataOf(t), schema: rec.Schema(), rows: rec.NumRows(), bytes: n, tensor: t, record: rec}
	e.refs.Store(1)
	return e, nil
}

// sourceEntry returns the entry of a Source of a directory: a tensor added whole when the
// Source is one resident tensor, else the Source itself, retained, to be read at each DoGet.
func (s *Store) sourceEntry(root string, src *dataset.Source) (*entry, error) {
	if t, ok := src.Resident(); ok {
		var e *entry
		err := dataset.Guard(func() error { // a record of some kinds copies the tensor
			var err error
			e, err = s.newEntry(src.Name, t)
			return err
		})
		if err != nil {
			return nil, err
		}
		src.Retain()
		e.source, e.root = src, root // its files stay mapped while the record views them
		stampFiles(e, src)
		return e, nil
	}
	if err := CheckName(src.Name); err != nil {
		return nil, err
	}
	schema, err := src.Schema(src.Name)
	if err != nil {
		return nil, fmt.Errorf("flight: %s: %w", src.Name, err)
	}
	meta := tensorMetadata{Kind: string(src.Kind), DType: src.DType().String(), Shape: src.Shape(), DimNames: src.DimNames}
	src.Retain()
	e := &entry{meta: meta, schema: schema, rows: src.Rows(), bytes: streamBytes(src), source: src, root: root}
	e.refs.Store(1)
	stampFiles(e, src)
	return e, nil
}

// streamBytes returns what the record batches of src hold, as a FlightInfo's total_bytes
// tells it: its Bytes, but -1 (unknown) for strings, whose Bytes counts what they take in
// memory (a header a value), not the values and offsets their record batches hold.
func streamBytes(src *dataset.Source) int64 {
	if src.DType() == ndarray.String {
		return -1
	}
	return src.Bytes()
}

// stampFiles gives e the version of the files of srcs: a digest of each file's identity, size,
// modification time and change time (dataset.File.Version: for an object, its store's ETag or
// generation), so that a rewrite keeping a file's size and modification time, a chmod or a
// touch, gives another version; and the latest modification time.
func stampFiles(e *entry, srcs ...*dataset.Source) {
	h := sha256.New()
	var modified time.Time
	for _, src := range srcs {
		versions, _ := src.Versions()
		for _, v := range versions {
			h.Write([]byte(v))
			h.Write([]byte{0})
		}
		if m := src.Modified(); m.After(modified) {
			modified = m
		}
	}
	e.meta.Version = "file-" + hex.EncodeToString(h.Sum(nil))[:16]
	if !modified.IsZero() {
		e.meta.Modified = modified.UTC().Format(time.RFC3339Nano)
	}
}

// stampUpload gives the entries that have no version yet the version of one put: upload-N,
// N the store's count of puts, all of them the same (a table and its columns, a transaction),
// modified now.
func (s *Store) stampUpload(entries ...*entry) {
	version := fmt.Sprintf("upload-%d", s.uploads.Add(1))
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, e := range entries {
		if e.meta.Version == "" {
			e.meta.Version, e.meta.Modified = version, now
		}
	}
}

// put stores e under name and releases the entry it replaces.
func (s *Store) put(name string, e *entry) {
	s.stampUpload(e)
	s.mu.Lock()
	old := s.entries[name]
	s.entries[name] = e
	s.mu.Unlock()
	if old != nil {
		old.release()
	}
}

// putAll stores entries[i] under names[i], all under one lock (a reader sees all of them or
// none), and releases the entries they replace.
func (s *Store) putAll(names []string, entries []*entry) {
	s.stampUpload(entries...)
	var replaced []*entry
	s.mu.Lock()
	for i, name := range names {
		if old := s.entries[name]; old != nil {
			replaced = append(replaced, old)
		}
		s.entries[name] = entries[i]
	}
	s.mu.Unlock()
	for _, old := range replaced {
		old.release()
	}
}

// ErrFromDirectory is returned by Delete for a tensor served from a file of a directory: it
// goes when its file goes.
var ErrFromDirectory = errors.New("flight: a tensor of a served directory")

// AddDir serves the tensors of every tensor file under dir (Parquet, Arrow IPC, .npy/.npz and
// TFRecord; subdirectories are tables whose parts are joined), memory-mapped, as
// dataset.ScanDir finds them and under the names it gives, and returns the names added. A
// tensor of one file other than Parquet is served from its mapping; a Parquet column, and a
// tensor joined from several files, is read chunk by chunk (a row group, a file) within lim
// at each DoGet, so serving it takes memory for one chunk per stream, not the whole tensor.
// Files that cannot be opened, parts that do not join and tensors Flight cannot carry are
// reported in the returned error (errors.Join of one per problem, naming each file by its
// full path) after the others are added; a file that cannot be read is a dataset.SkippedFile
// (errors.Is: dataset.ErrUnreadable) whose table is not served, or served without it (see
// SetSkipUnreadable).
//
// The store follows the directory from then on at each Rescan (and while Watch runs): see
// Rescan.
func (s *Store) AddDir(dir string, lim limits.Limits) ([]string, error) {
	d, err := dataset.ScanDir(dir, lim)
	if err != nil {
		return nil, fmt.Errorf("flight: %w", err)
	}
	s.rescanMu.Lock()
	defer s.rescanMu.Unlock()
	sd := &servedDir{path: dir}
	s.dirs = append(s.dirs, sd)
	changes, errs := s.apply(sd, d)
	return changes.Added, errors.Join(errs...)
}

// Changes are what a Rescan found: the names of the directories' tensors that appeared,
// changed (a file replaced, rewritten, a part added or removed) and disappeared, sorted.
type Changes struct {
	Added, Changed, Removed []string
	// Gone are the files the tensors were made of that none is now, other than those that
	// cannot be read (which the Rescan's error names): removed or renamed away, so that a
	// table of parts is served without them, fewer rows. Paths as AddDir's walk finds them,
	// sorted.
	Gone []string
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Added)+len(c.Changed)+len(c.Removed)+len(c.Gone) == 0
}

// Rescan brings the tensors of every directory added with AddDir up to date with their files:
// a file that appeared is served, one replaced or modified is served from its new contents,
// one removed is no longer served, and only the files that changed are read again
// (dataset.Dir.Rescan). A file that does not read whole (one still being written, say) is not
// served until a later Rescan reads it whole. A stream already sending a tensor goes on with
// the version it started with: the mapping it reads keeps the old file, unless that file was
// modified in place (whatever its path names afterwards), which fails that stream with
// dataset.ErrFileChanged. Uploaded tensors are not touched.
//
// Rescan returns what changed, and the problems not reported by the Rescan before it (files
// that cannot be read, parts that do not join, tensors Flight cannot carry), joined. A file
// found unreadable (truncated in place, say) takes its table out of service, or leaves it
// served without the file (SetSkipUnreadable), as AddDir does; a file removed is not
// unreadable: its table is served without it, under another version.
func (s *Store) Rescan() (Changes, error) {
	s.rescanMu.Lock()
	defer s.rescanMu.Unlock()
	var all Changes
	var errs []error
	for _, sd := range s.dirs {
		d, err := sd.dir.Rescan()
		if err != nil {
			errs = append(errs, fmt.Errorf("flight: %w", err))
			continue
		}
		c, e := s.apply(sd, d)
		all.Added = append(all.Added, c.Added...)
		all.Changed = append(all.Changed, c.Changed...)
		all.Removed = append(all.Removed, c.Removed...)
		all.Gone = append(all.Gone, c.Gone...)
		errs = append(errs, e...)
	}
	return all, errors.Join(errs...)
}

// apply makes d the scan of sd: entries for its Sources (an unchanged Source keeps its entry),
// replacing the ones of sd's previous scan. It returns what changed and the problems not
// reported while they last (a problem is reported again once it was gone for a scan). The
// caller holds rescanMu.
func (s *Store) apply(sd *servedDir, d *dataset.Dir) (Changes, []error) {
	s.mu.RLock()
	current := maps.Clone(s.fromDir)
	s.mu.RUnlock()

	reported := map[string]bool{}
	var errs []error
	problem := func(err error) { // reported once, while it lasts
		if !sd.reported[err.Error()] {
			errs = append(errs, err)
		}
		reported[err.Error()] = true
	}
	parts := map[string][]string{} // by table: its files left out, each "PATH: why" under sd.path
	readable := map[string]bool{}  // the tables of which a file can be read
	for _, src := range d.Sources {
		readable[tableOfSource(src)] = true
	}
	for _, err := range d.Skipped {
		var sf *dataset.SkippedFile
		if !errors.As(err, &sf) {
			problem(err)
			continue
		}
		parts[sf.Table] = append(parts[sf.Table], underDir(sd.path, sf.Error()))
		switch {
		case !readable[sf.Table]: // no rest to serve, --skip-unreadable or not
			problem(fmt.Errorf("%w: the table %s is not served: no file of it can be read", err, sf.Table))
		case s.skipUnreadable:
			problem(fmt.Errorf("%w: the table %s is served without it", err, sf.Table))
		default:
			problem(fmt.Errorf("%w: the table %s is not served (serve --skip-unreadable serves the rest)", err, sf.Table))
		}
	}
	next := map[string]*entry{}
	var changes Changes
	for _, src := range d.Sources {
		if s.shareN > 1 {
			var ok bool
			if src, ok = src.Share(s.shareK, s.shareN); !ok {
				continue // another store serves all of it
			}
		}
		left := parts[tableOfSource(src)]
		old := current[src.Name]
		if old != nil && old.root != sd.path {
			problem(fmt.Errorf("%s: %s is served from %s already", sd.path, src.Name, old.root))
			continue
		}
		if old != nil && old.source != nil && old.source.SameAs(src) && old.leavesOut(left, s.skipUnreadable) {
			old.acquire()
			next[src.Name] = old
			continue
		}
		e, err := s.sourceEntry(sd.path, src)
		if err != nil {
			problem(fmt.Errorf("%s: %w", src.Name, err)) // a tensor Flight cannot carry
			continue
		}
		e.leaveOut(left, s.skipUnreadable)
		next[src.Name] = e
		if old != nil {
			changes.Changed = append(changes.Changed, src.Name)
		} else {
			changes.Added = append(changes.Added, src.Name)
		}
	}
	if s.shareN <= 1 { // a share's tables are served as their columns only
		s.applyTables(sd, d, current, next, &changes, parts, problem)
	}
	changes.Gone = goneFiles(sd.path, current, next, d.Skipped)
	if s.skipUnreadable {
		parts = nil // served without them, each entry naming its own
	}

	s.mu.Lock()
	if len(parts) > 0 {
		s.unreadable[sd.path] = parts
	} else {
		delete(s.unreadable, sd.path)
	}
	var released []*entry
	for name, e := range s.fromDir {
		if e.root != sd.path {
			continue
		}
		released = append(released, e)
		if next[name] == nil {
			delete(s.fromDir, name)
			changes.Removed = append(changes.Removed, name)
		}
	}
	for name, e := range next {
		s.fromDir[name] = e
	}
	if !changes.Empty() {
		s.gen.Add(1)
	}
	s.mu.Unlock()
	for _, e := range released {
		e.release() // the previous scan's reference; unchanged entries were acquired again
	}
	if sd.dir != nil {
		sd.dir.Release() // the entries retain their own Sources
	}
	sd.dir, sd.reported = d, reported
	slices.Sort(changes.Added)
	slices.Sort(changes.Changed)
	slices.Sort(changes.Removed)
	return changes, errs
}

// goneFiles returns the files the entries of the directory root in current were made of that
// none of next is, other than the files skipped (unreadable: named otherwise), sorted.
func goneFiles(root string, current, next map[string]*entry, skipped []error) []string {
	was, now := map[string]bool{}, map[string]bool{}
	for _, e := range current {
		if e.root == root && e.source != nil {
			for _, f := range e.source.Files() {
				was[f] = true
			}
		}
	}
	for _, e := range next {
		if e.source != nil {
			for _, f := range e.source.Files() {
				now[f] = true
			}
		}
	}
	for _, err := range skipped {
		var sf *dataset.SkippedFile
		if errors.As(err, &sf) {
			now[sf.Path] = true
		}
	}
	var gone []string
	for f := range was {
		if !now[f] {
			gone = append(gone, f)
		}
	}
	slices.Sort(gone)
	return gone
}

// applyTables adds to next, the entries of the scan d of sd, those of its tables of two
// columns or more (dataset.Source's Table) whose every column next serves, an unchanged
// table keeping its entry, and notes in changes what changed. A table that cannot be one
// flight — its name taken by a tensor, its columns' chunks not aligned — is a problem, its
// columns still served.
//
// parts names, by table, the files left out of it (see leaveOut).
func (s *Store) applyTables(sd *servedDir, d *dataset.Dir, current, next map[string]*entry, changes *Changes, parts map[string][]string, problem func(error)) {
	names, tables := tablesOf(d.Sources)
	for _, name := range names {
		cols := tables[name]
		if len(cols) < 2 {
			continue
		}
		served := true
		for _, c := range cols {
			e := next[c.Name]
			served = served && e != nil && e.source != nil && e.source.SameAs(c)
		}
		if !served {
			continue // a column Flight cannot carry, reported already: the table is not whole
		}
		if next[name] != nil {
			problem(fmt.Errorf("%s: the table %s is served as its columns only: a tensor has its name", sd.path, name))
			continue
		}
		old := current[name]
		if old != nil && old.root != sd.path {
			problem(fmt.Errorf("%s: %s is served from %s already", sd.path, name, old.root))
			continue
		}
		if old != nil && old.sameTable(cols) && old.leavesOut(parts[name], s.skipUnreadable) {
			old.acquire()
			next[name] = old
			continue
		}
		e, err := s.sourceTableEntry(sd.path, name, cols, leftOutOfTable(name, d.LeftOut))
		if err != nil {
			problem(fmt.Errorf("%s: the table %s is served as its columns only: %w", sd.path, name, err))
			continue
		}
		e.leaveOut(parts[name], s.skipUnreadable)
		next[name] = e
		if old != nil {
			changes.Changed = append(changes.Changed, name)
		} else {
			changes.Added = append(changes.Added, name)
		}
	}
}

// Tables returns the names of the table flights the store serves (see Server), sorted.
func (s *Store) Tables() []string {
	var out []string
	for _, name := range s.Names() {
		if e, err := s.lookup(name); err == nil {
			if e.isTable() {
				out = append(out, name)
			}
			e.release()
		}
	}
	return out
}

// LeftOut returns the columns of the served directories' tables that have no tensor form, as
// their last scans found them, each named TABLE.COLUMN.
func (s *Store) LeftOut() []dataset.LeftOut {
	s.rescanMu.Lock()
	defer s.rescanMu.Unlock()
	var out []dataset.LeftOut
	for _, sd := range s.dirs {
		if sd.dir != nil {
			out = append(out, sd.dir.LeftOut...)
		}
	}
	return out
}

// Generation counts the changes Rescan made to the directories' tensors: it differs from
// what it was when the directories last changed.
func (s *Store) Generation() uint64 { return s.gen.Load() }

// Dirs returns the directories AddDir added, in order.
func (s *Store) Dirs() []string {
	s.rescanMu.Lock()
	defer s.rescanMu.Unlock()
	out := make([]string, len(s.dirs))
	for i, sd := range s.dirs {
		out[i] = sd.path
	}
	return out
}

// get returns the entry named name with a reference the caller must release: an uploaded
// tensor, else a directory's. A directory's flight of a table with files that cannot be read
// (and not SetSkipUnreadable) is an error naming them, wrapping dataset.ErrUnreadable.
func (s *Store) get(name string) (*entry, error) {
	e, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	if len(e.meta.Unreadable) > 0 {
		e.release()
		return nil, unreadableFlight(name, e.meta.Unreadable, true)
	}
	return e, nil
}

// lookup is get, the flights of tables with files that cannot be read included (a listing
// names them); a name of such a table that no entry has (none of its files can be read) is
// get's error.
func (s *Store) lookup(name string) (*entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.entries[name]
	if !ok {
		e, ok = s.fromDir[name]
	}
	if !ok {
		if table, parts := s.unreadableOf(name); parts != nil {
			return nil, unreadableFlight(name, parts, s.servesOf(table))
		}
		return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	e.acquire()
	return e, nil
}

// unreadableOf returns the table the flight name is of (the table, or TABLE.COLUMN) and its
// files that cannot be read, nil when its table has none. The caller holds mu.
func (s *Store) unreadableOf(name string) (string, []string) {
	var out []string
	of, best := "", -1
	for _, tables := range s.unreadable {
		for table, parts := range tables {
			if (name == table || strings.HasPrefix(name, table+".")) && len(table) > best {
				of, out, best = table, parts, len(table)
			}
		}
	}
	return of, out
}

// servesOf reports whether a directory's entry serves the table or one of its columns: a
// file of it could be read. The caller holds mu.
func (s *Store) servesOf(table string) bool {
	if s.fromDir[table] != nil {
		return true
	}
	for name := range s.fromDir {
		if strings.HasPrefix(name, table+".") {
			return true
		}
	}
	return false
}

// unreadableTables returns the tables with files that cannot be read that no entry serves
// (none of their files can be read, so they have no columns), sorted, each with its files.
func (s *Store) unreadableTables() (names []string, parts map[string][]string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	parts = map[string][]string{}
	for _, tables := range s.unreadable {
		for table, files := range tables {
			if s.entries[table] == nil && !s.servesOf(table) {
				names, parts[table] = append(names, table), files
			}
		}
	}
	slices.Sort(names)
	return names, parts
}

// ErrUnreadable is returned (FailedPrecondition, by a server) for a flight of a served
// directory's table some of whose files cannot be read (dataset.SkippedFile), which the
// server does not serve smaller (Store.SetSkipUnreadable): its text names the files. It is
// dataset.ErrUnreadable.
var ErrUnreadable = dataset.ErrUnreadable

// unreadableFlight returns the error of the flight name, of a table whose files parts (one
// or more, "PATH: why" under the served directory) cannot be read, and which has other files
// that can (rest: serve --skip-unreadable serves them) or none.
func unreadableFlight(name string, parts []string, rest bool) error {
	more := ""
	if len(parts) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(parts)-1)
	}
	todo := "serve --skip-unreadable serves the rest"
	if !rest {
		todo = "no file of it can be read"
	}
	return fmt.Errorf("flight: %s: %w %s%s: %s", name, ErrUnreadable, parts[0], more, todo)
}

// tableOfSource returns the name of the table a Source of a directory is a column of: its
// Table, or its own name for a tensor of its own (as dataset names the table of a file).
func tableOfSource(src *dataset.Source) string {
	if src.Table != "" {
		return src.Table
	}
	return src.Name
}

// leaveOut records in e's metadata the files of its table left out of it: served without
// them (skipped), or not served (unreadable: its rows, and so its first dimension, then
// unknown, -1).
func (e *entry) leaveOut(parts []string, skip bool) {
	switch {
	case len(parts) == 0:
	case skip:
		e.meta.Skipped = parts
	default:
		e.meta.Unreadable = parts
		unknownRows := func(shape []int64, kind string) []int64 {
			if len(shape) == 0 || strings.HasPrefix(kind, "sparse_") {
				return shape
			}
			return append([]int64{-1}, shape[1:]...)
		}
		e.meta.Shape = unknownRows(e.meta.Shape, e.meta.Kind)
		columns := slices.Clone(e.meta.Columns)
		for i, c := range columns {
			columns[i].Shape = unknownRows(c.Shape, c.Kind)
		}
		e.meta.Columns = columns
	}
}

// leavesOut reports whether e's metadata records the files parts as leaveOut would.
func (e *entry) leavesOut(parts []string, skip bool) bool {
	if skip {
		return slices.Equal(e.meta.Skipped, parts) && len(e.meta.Unreadable) == 0
	}
	return slices.Equal(e.meta.Unreadable, parts) && len(e.meta.Skipped) == 0
}

// underDir returns msg with the paths of the files of the served directory root given under
// it (root/x/part-0.parquet: x/part-0.parquet): what a client may be told; msg itself for no
// root (an upload's).
func underDir(root, msg string) string {
	if root == "" {
		return msg
	}
	for _, prefix := range []string{filepath.Clean(root) + string(filepath.Separator), strings.TrimSuffix(root, "/") + "/"} {
		msg = strings.ReplaceAll(msg, prefix, "")
	}
	return msg
}

// Get returns the tensor named name. A tensor added whole views the store's memory (a mapped
// file's bytes, say): it must not be used after the tensor is deleted or replaced, or the
// store closed, and a tensor of a directory's file is read inside dataset.Guard (the file may
// shrink). One AddDir reads chunk by chunk (a Parquet column, a joined table) is read whole at
// each call, into a copy, within the limits AddDir was given.
func (s *Store) Get(name string) (dataset.Tensor, error) {
	e, err := s.get(name)
	if err != nil {
		return dataset.Tensor{}, err
	}
	defer e.release()
	if e.isTable() {
		return dataset.Tensor{}, fmt.Errorf("flight: %s is a table of %d columns: get each as %s.COLUMN: %w", name, len(e.meta.Columns), name, ErrTable)
	}
	if e.record == nil {
		t, err := e.source.Read(context.Background())
		if err != nil {
			return dataset.Tensor{}, fmt.Errorf("flight: %s: %w", name, err)
		}
		return t, nil
	}
	return e.tensor, nil
}

// Names returns the names of the stored tensors, sorted.
func (s *Store) Names() []string {
	s.mu.RLock()
	names := make([]string, 0, len(s.entries)+len(s.fromDir))
	for n := range s.entries {
		names = append(names, n)
	}
	for n := range s.fromDir {
		if s.entries[n] == nil {
			names = append(names, n)
		}
	}
	s.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Delete removes the tensor named name, added or uploaded (a directory's tensor of that name,
// if any, is served again); a stream sending it finishes first. An uploaded table goes with
// the columns uploaded with it. A directory's tensor is not deleted: ErrFromDirectory.
func (s *Store) Delete(name string) error {
	s.mu.Lock()
	e, ok := s.entries[name]
	delete(s.entries, name)
	var columns []*entry
	if ok && e.isTable() && e.held != nil {
		for _, c := range e.meta.Columns {
			if ce := s.entries[c.Name]; ce != nil && ce.held == e.held {
				delete(s.entries, c.Name)
				columns = append(columns, ce)
			}
		}
	}
	dirEntry, fromDir := s.fromDir[name]
	var files []string // those it is read from, under its directory
	if fromDir {
		for _, src := range append([]*dataset.Source{dirEntry.source}, dirEntry.columns...) {
			if src == nil {
				continue
			}
			for _, p := range src.Paths() {
				if f := relativePath(dirEntry.root, p); !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
		}
	}
	s.mu.Unlock()
	switch {
	case ok:
		e.release()
		for _, c := range columns {
			c.release()
		}
		return nil
	case fromDir:
		return fmt.Errorf("%w: %s is read from %s; remove the file to remove it", ErrFromDirectory, name, strings.Join(files, ", "))
	}
	return fmt.Errorf("%w: %q", ErrNotFound, name)
}

// Close deletes every tensor and stops following the directories, unmapping the files once
// the streams sending them end.
func (s *Store) Close() {
	s.rescanMu.Lock()
	defer s.rescanMu.Unlock()
	s.mu.Lock()
	entries, fromDir := s.entries, s.fromDir
	s.entries, s.fromDir = map[string]*entry{}, map[string]*entry{}
	dirs := s.dirs
	s.dirs = nil
	s.unreadable = map[string]map[string][]string{}
	s.mu.Unlock()
	for _, e := range entries {
		e.release()
	}
	for _, e := range fromDir {
		e.release()
	}
	for _, sd := range dirs {
		sd.dir.Release()
	}
}

// describeProblems returns the problems err joins, one line each, with the paths of the
// served directories' files given under their directory: what a client may be told.
func (s *Store) describeProblems(err error) []string {
	problems := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		problems = j.Unwrap()
	}
	dirs := s.Dirs()
	out := make([]string, len(problems))
	for i, p := range problems {
		msg := p.Error()
		for _, d := range dirs {
			msg = underDir(d, msg)
		}
		out[i] = msg
	}
	return out
}
