package mmap

import "sync"

// releaseHooks are the functions AtRelease registered, run once at the last Release.
type releaseHooks struct {
	mu   sync.Mutex
	fns  map[int]func()
	next int
	ran  bool
}

// AtRelease has fn run once, when the last reference to the mapping is released, before its
// memory is unmapped — on the goroutine of that Release: what was derived from the file's
// bytes and lives as long as they do (a page cache's pages of this version of the file) is
// given back there. On a mapping released already, fn runs at once. The function returned
// keeps fn from running, if it has not run yet; calling it again does nothing.
func (m *Mapping) AtRelease(fn func()) (cancel func()) {
	h := &m.atRelease
	h.mu.Lock()
	if h.ran {
		h.mu.Unlock()
		fn()
		return func() {}
	}
	if h.fns == nil {
		h.fns = map[int]func(){}
	}
	id := h.next
	h.next++
	h.fns[id] = fn
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.fns, id)
		h.mu.Unlock()
	}
}

// run runs the functions registered, once, outside the lock (they may cancel others).
func (h *releaseHooks) run() {
	h.mu.Lock()
	fns := h.fns
	h.fns, h.ran = nil, true
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
