package flight

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrNotFound is returned for a name that is not served.
	ErrNotFound = errors.New("flight: no such tensor")
	// ErrName is returned for a name a tensor cannot have.
	ErrName = errors.New("flight: invalid tensor name")
)

// Store is a catalogue of named tensors, safe for concurrent use. A tensor replaced or deleted
// while a DoGet sends it stays alive until that stream ends.
type Store struct {
	mem     memory.Allocator
	mu      sync.RWMutex
	entries map[string]*entry
}

// entry is one tensor ready to send: either a tensor and its record batch, which views the
// tensor's memory (or a copy allocated from the store's allocator where Arrow needs another
// layout), or a dataset.Source whose chunks are read and sent one at a time at each DoGet
// (the Parquet columns and joined tables of a directory), with the Source's files retained.
type entry struct {
	meta   tensorMetadata
	schema *arrow.Schema
	rows   int64
	bytes  int64 // what the record batches hold; -1 when unknown before they are read
	tensor dataset.Tensor
	record arrow.Record    // nil for a Source
	source *dataset.Source // nil for a tensor added whole
	refs   atomic.Int64
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
}

// NewStore returns an empty store whose record batches that cannot view a tensor's memory are
// allocated from mem (memory.DefaultAllocator when nil). Close it to release every tensor.
func NewStore(mem memory.Allocator) *Store {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Store{mem: mem, entries: map[string]*entry{}}
}

// CheckName returns an error wrapping ErrName unless name can name a tensor: 1 to 255 bytes of
// printable ASCII other than '/' and '\\', not starting with '.'.
func CheckName(name string) error {
	if name == "" || len(name) > 255 || name[0] == '.' {
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
// a tensor Flight cannot carry (a scalar, or a bool or string dense tensor).
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
func (s *Store) sourceEntry(src *dataset.Source) (*entry, error) {
	if t, ok := src.Resident(); ok {
		e, err := s.newEntry(src.Name, t)
		if err != nil {
			return nil, err
		}
		src.Retain()
		e.source = src // its files stay mapped while the record views them
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
	e := &entry{meta: meta, schema: schema, rows: src.Rows(), bytes: src.Bytes(), source: src}
	e.refs.Store(1)
	return e, nil
}

// put stores e under name and releases the entry it replaces.
func (s *Store) put(name string, e *entry) {
	s.mu.Lock()
	old := s.entries[name]
	s.entries[name] = e
	s.mu.Unlock()
	if old != nil {
		old.release()
	}
}

// AddDir adds the tensors of every tensor file under dir (Parquet, Arrow IPC, .npy/.npz and
// TFRecord; subdirectories are tables whose parts are joined), memory-mapped, as
// dataset.ScanDir finds them and under the names it gives, and returns the names added. A
// tensor of one file other than Parquet is served from its mapping; a Parquet column, and a
// tensor joined from several files, is read chunk by chunk (a row group, a file) within lim
// at each DoGet, so serving it takes memory for one chunk per stream, not the whole tensor.
// Files that cannot be opened, parts that do not join and tensors Flight cannot carry are
// reported in the returned error (errors.Join of one per problem) after the others are added.
func (s *Store) AddDir(dir string, lim limits.Limits) ([]string, error) {
	d, err := dataset.ScanDir(dir, lim)
	if err != nil {
		return nil, fmt.Errorf("flight: %w", err)
	}
	defer d.Release() // each entry retains its own Source
	errs := d.Skipped
	var added []string
	for _, src := range d.Sources {
		e, err := s.sourceEntry(src)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src.Name, err))
			continue
		}
		s.put(src.Name, e)
		added = append(added, src.Name)
	}
	slices.Sort(added)
	return added, errors.Join(errs...)
}

// get returns the entry named name with a reference the caller must release.
func (s *Store) get(name string) (*entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.entries[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	e.acquire()
	return e, nil
}

// Get returns the tensor named name. A tensor added whole views the store's memory (a mapped
// file's bytes, say): it must not be used after the tensor is deleted or replaced, or the
// store closed. One AddDir reads chunk by chunk (a Parquet column, a joined table) is read
// whole at each call, into a copy, within the limits AddDir was given.
func (s *Store) Get(name string) (dataset.Tensor, error) {
	e, err := s.get(name)
	if err != nil {
		return dataset.Tensor{}, err
	}
	defer e.release()
	if e.record == nil {
		t, err := e.source.Read()
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
	names := make([]string, 0, len(s.entries))
	for n := range s.entries {
		names = append(names, n)
	}
	s.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Delete removes the tensor named name; a stream sending it finishes first.
func (s *Store) Delete(name string) error {
	s.mu.Lock()
	e, ok := s.entries[name]
	delete(s.entries, name)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	e.release()
	return nil
}

// Close deletes every tensor, unmapping the files once the streams sending them end.
func (s *Store) Close() {
	s.mu.Lock()
	entries := s.entries
	s.entries = map[string]*entry{}
	s.mu.Unlock()
	for _, e := range entries {
		e.release()
	}
}
