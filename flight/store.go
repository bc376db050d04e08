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

// entry is one tensor ready to send: the tensor and its record batch, which views the
// tensor's memory (or a copy allocated from the store's allocator where Arrow needs another
// layout), with the file it was mapped from, if any.
type entry struct {
	tensor dataset.Tensor
	record arrow.Record
	bytes  int64 // what the record's buffers hold
	file   *dataset.File
	refs   atomic.Int64
}

// acquire adds a reference to e.
func (e *entry) acquire() { e.refs.Add(1) }

// release drops a reference and frees the record, and the store's reference to the file, at
// the last one.
func (e *entry) release() {
	if e.refs.Add(-1) != 0 {
		return
	}
	e.record.Release()
	if e.file != nil {
		e.file.Release()
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
	e, err := s.newEntry(name, t, nil)
	if err != nil {
		return err
	}
	s.put(name, e)
	return nil
}

func (s *Store) newEntry(name string, t dataset.Tensor, f *dataset.File) (*entry, error) {
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
	e := &entry{tensor: t, record: rec, bytes: n, file: f}
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
// TFRecord; subdirectories are tables whose parts are joined), memory-mapped and read within
// lim, as dataset.OpenDir reads them and under the names it gives, and returns the names
// added. Files that cannot be read, parts that do not join and tensors Flight cannot carry are
// reported in the returned error (errors.Join of one per problem) after the others are added.
func (s *Store) AddDir(dir string, lim limits.Limits) ([]string, error) {
	d, err := dataset.OpenDir(dir, lim)
	if err != nil {
		return nil, fmt.Errorf("flight: %w", err)
	}
	defer d.Release() // each entry holds a reference to its own file
	errs := d.Skipped
	var added []string
	for _, t := range d.Tensors {
		f := d.File(t.Name)
		f.Retain()
		e, err := s.newEntry(t.Name, t, f)
		if err != nil {
			f.Release()
			errs = append(errs, fmt.Errorf("%s: %w", f.Path, err))
			continue
		}
		s.put(t.Name, e)
		added = append(added, t.Name)
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

// Get returns the tensor named name. It views the store's memory (a mapped file's bytes,
// say): it must not be used after the tensor is deleted or replaced, or the store closed.
func (s *Store) Get(name string) (dataset.Tensor, error) {
	e, err := s.get(name)
	if err != nil {
		return dataset.Tensor{}, err
	}
	defer e.release()
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
