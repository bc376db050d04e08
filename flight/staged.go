package flight

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ndarrow/ndarrow/limits"
)

// Several tensors uploaded as one: each is sent by a DoPut whose descriptor is the command
// stageCommand + {"tx": TX, "name": NAME}, checked and held aside under the transaction TX;
// the action ActionCommit (body TX) then stores them all at once, and ActionAbort (or their
// expiry) drops them. A reader never sees some of them without the others.
const stageCommand = "ndarrow.stage:"

// stageRequest is what follows stageCommand in a staged upload's descriptor.
type stageRequest struct {
	Tx   string `json:"tx"`
	Name string `json:"name"`
}

// stagedTTL is how long an uncommitted transaction is kept.
const stagedTTL = 10 * time.Minute

// The most a server stages: transactions open at once, and uploads in one transaction. Each
// staged upload also counts against the memory budget (its values and entryOverhead).
const (
	maxTransactions = 1024
	maxStagesPerTx  = 4096
)

// ErrNoTransaction is returned for a commit or abort of a transaction the server does not hold
// (never staged, committed, aborted or expired).
var ErrNoTransaction = errors.New("flight: no such upload transaction")

// staging holds the uploads of open transactions, within one budget of bytes and the counts
// above.
type staging struct {
	mu     sync.Mutex
	txs    map[string]*transaction
	order  []*transaction // the transactions in the order they started (some since taken)
	bytes  int64
	budget int64
}

type transaction struct {
	id      string
	started time.Time
	names   []string
	entries map[string]*entry
	bytes   int64
}

// add holds e under tx, replacing an upload of the same name in it. It fails when the staged
// bytes would pass the budget.
func (st *staging) add(tx, name string, e *entry) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire()
	if st.txs == nil {
		st.txs = map[string]*transaction{}
	}
	size := max(e.bytes, 0)
	if st.bytes+size > st.budget {
		return fmt.Errorf("flight: staged uploads would hold %d bytes, more than %d: %w", st.bytes+size, st.budget, limits.ErrExceeded)
	}
	t := st.txs[tx]
	if t == nil && len(st.txs) >= maxTransactions {
		return fmt.Errorf("flight: %d upload transactions are open, the most a server holds: commit or abort one: %w", len(st.txs), limits.ErrExceeded)
	}
	if t != nil && t.entries[name] == nil && len(t.names) >= maxStagesPerTx {
		return fmt.Errorf("flight: transaction %q stages %d uploads, the most one may: %w", tx, len(t.names), limits.ErrExceeded)
	}
	if t == nil {
		t = &transaction{id: tx, started: time.Now(), entries: map[string]*entry{}}
		st.txs[tx] = t
		st.order = append(st.order, t)
	}
	if old := t.entries[name]; old != nil {
		st.bytes -= max(old.bytes, 0)
		t.bytes -= max(old.bytes, 0)
		old.release()
	} else {
		t.names = append(t.names, name)
	}
	t.entries[name] = e
	t.bytes += size
	st.bytes += size
	return nil
}

// take removes tx and returns it.
func (st *staging) take(tx string) (*transaction, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire()
	t := st.txs[tx]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoTransaction, tx)
	}
	delete(st.txs, tx)
	st.bytes -= t.bytes
	return t, nil
}

// expire drops the transactions older than stagedTTL, oldest first, looking at no other; the
// caller holds mu.
func (st *staging) expire() {
	for len(st.order) > 0 {
		t := st.order[0]
		open := st.txs[t.id] == t
		if open && time.Since(t.started) <= stagedTTL {
			break
		}
		st.order = st.order[1:]
		if open {
			t.release()
			st.bytes -= t.bytes
			delete(st.txs, t.id)
		}
	}
	if len(st.order) > 2*len(st.txs)+16 { // mostly taken: compact
		st.order = slices.DeleteFunc(st.order, func(t *transaction) bool { return st.txs[t.id] != t })
	}
}

// close drops every transaction.
func (st *staging) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, t := range st.txs {
		t.release()
		delete(st.txs, id)
	}
	st.order = nil
	st.bytes = 0
}

func (t *transaction) release() {
	for _, e := range t.entries {
		e.release()
	}
}

// commit stores every upload of tx at once: a reader sees all of them or none. It returns the
// names stored, in upload order.
func (s *Store) commit(t *transaction) []string {
	entries := make([]*entry, len(t.names))
	for i, name := range t.names {
		entries[i] = t.entries[name]
	}
	s.putAll(t.names, entries)
	return slices.Clone(t.names)
}

// parseStage returns the transaction and name a staged upload's command names.
func parseStage(cmd []byte) (stageRequest, error) {
	var r stageRequest
	if err := json.Unmarshal(cmd, &r); err != nil || r.Tx == "" || len(r.Tx) > 128 {
		return stageRequest{}, fmt.Errorf("a staged upload names {\"tx\": ID, \"name\": NAME}, not %q", cmd)
	}
	return r, CheckName(r.Name)
}
