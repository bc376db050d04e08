package flight

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
)

// DefaultStatusInterval is how often a Server's log says what its budgets hold when
// Options.StatusInterval is 0.
const DefaultStatusInterval = time.Minute

// ActionStatus is the action whose one result is the server's ServerStatus, as JSON.
const ActionStatus = "status"

// ServerStatus is what a Server holds and serves now: the result of ActionStatus (JSON), and
// what its log says every Options.StatusInterval.
type ServerStatus struct {
	// Draining is whether the server is shutting down (Draining).
	Draining bool `json:"draining"`
	// MemoryBudget and WireBudget are what the two budgets hold of their size (BudgetUse).
	MemoryBudget BudgetUse `json:"memory_budget"`
	WireBudget   BudgetUse `json:"wire_budget"`
	// Connections are the connections open (of Options.MaxConnections).
	Connections    int64 `json:"connections"`
	MaxConnections int   `json:"max_connections"`
	// Calls are the gRPC calls under way (health checks included); DataStreams the data URLs'
	// streams under way.
	Calls       int64 `json:"calls"`
	DataStreams int64 `json:"data_streams"`
	// Flights is how many flights the store serves.
	Flights int `json:"flights"`
	// PageCache is what Options.PageCache holds, nil without one.
	PageCache *PageCacheStatus `json:"page_cache,omitempty"`
}

// PageCacheStatus is what a page cache holds (dataset.PageCacheStats).
type PageCacheStatus struct {
	Bytes     int64 `json:"bytes"`
	Cap       int64 `json:"cap"`
	Pages     int64 `json:"pages"`
	Hits      int64 `json:"hits"`
	DiskBytes int64 `json:"disk_bytes"`
}

// Status returns what the server holds and serves now.
func (s *Server) Status() ServerStatus {
	memory, wire := s.BudgetUse()
	st := ServerStatus{
		Draining:       s.Draining(),
		MemoryBudget:   memory,
		WireBudget:     wire,
		MaxConnections: s.opts.MaxConnections,
		Calls:          s.calls.Load(),
		DataStreams:    s.dataStreams.Load(),
		Flights:        len(s.store.Names()),
	}
	if l := s.admitted.Load(); l != nil {
		st.Connections = l.open.Load()
	}
	if pc := s.opts.PageCache; pc != nil {
		p := pc.Stats()
		st.PageCache = &PageCacheStatus{Bytes: p.Bytes, Cap: p.Cap, Pages: p.Pages, Hits: p.Hits, DiskBytes: p.DiskBytes}
	}
	return st
}

// statusResult is the result of ActionStatus.
func (s *Server) statusResult() *arrowflight.Result {
	b, _ := json.Marshal(s.Status())
	return &arrowflight.Result{Body: b}
}

// logStatus starts writing the server's status to its log every Options.StatusInterval, until
// it drains or the returned function is called: at info when it changed since the last record
// at info, at debug otherwise. Between records it holds a timer, not a goroutine.
func (s *Server) logStatus() (stop func()) {
	if s.opts.StatusInterval < 0 {
		return func() {}
	}
	var mu sync.Mutex
	var last ServerStatus
	stopped := false
	mu.Lock()
	defer mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(s.opts.StatusInterval, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || s.Draining() {
			return
		}
		st := s.Status()
		level := slog.LevelDebug
		if changed(last, st) {
			level, last = slog.LevelInfo, st
		}
		s.opts.Logger.LogAttrs(context.Background(), level, "flight: status", statusAttrs(st)...)
		t.Reset(s.opts.StatusInterval)
	})
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		t.Stop()
	}
}

// changed reports whether what a status record says changed from a to b (the peaks and waits
// aside, which follow what they count).
func changed(a, b ServerStatus) bool {
	a.MemoryBudget.Peak, a.MemoryBudget.Waits, a.WireBudget.Peak, a.WireBudget.Waits = 0, 0, 0, 0
	b.MemoryBudget.Peak, b.MemoryBudget.Waits, b.WireBudget.Peak, b.WireBudget.Waits = 0, 0, 0, 0
	if (a.PageCache == nil) != (b.PageCache == nil) || a.PageCache != nil && *a.PageCache != *b.PageCache {
		return true
	}
	a.PageCache, b.PageCache = nil, nil
	return a != b
}

// statusAttrs are the attributes of a status record.
func statusAttrs(st ServerStatus) []slog.Attr {
	budget := func(key string, b BudgetUse) slog.Attr {
		return slog.Group(key, slog.Int64("used", b.Used), slog.Int64("size", b.Size), slog.Int64("peak", b.Peak),
			slog.Int64("beyond", b.Beyond), slog.Int("waiting", b.Waiting), slog.Int64("waits", b.Waits))
	}
	attrs := []slog.Attr{
		budget("memory_budget", st.MemoryBudget), budget("wire_budget", st.WireBudget),
		slog.Int64("connections", st.Connections), slog.Int64("calls", st.Calls), slog.Int64("data_streams", st.DataStreams),
		slog.Int("flights", st.Flights),
	}
	if pc := st.PageCache; pc != nil {
		attrs = append(attrs, slog.Group("page_cache", slog.Int64("bytes", pc.Bytes), slog.Int64("cap", pc.Cap),
			slog.Int64("pages", pc.Pages), slog.Int64("hits", pc.Hits)))
	}
	return attrs
}
