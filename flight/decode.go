package flight

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/bounded"
	"github.com/ndarrow/ndarrow/internal/memcopy"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
)

// streamDecoder decodes the FlightData of one stream — a schema message, then dictionary and
// record batch messages — through ipc's one verified decoder, and turns the records into the
// tensors the stream carries. Both a Server's DoPut and a Client's Get use it.
//
// A stream of one dense tensor column is stacked as it comes: each record batch is copied
// into the result (allocated once for capRows rows when given, growing otherwise) and
// dropped, so the stream is held once, in the result. Any other stream's records are kept
// until the end and viewed by its tensors.
type streamDecoder struct {
	name     string
	lim      limits.Limits
	capRows  int64 // the rows a stacked result is allocated for up front (0: grow)
	capBytes int64 // at most this many bytes of them
	dec      *ipc.BatchDecoder
	records  []arrow.Record
	stacked  bool // one dense tensor column: stack the batches as they come
	direct   bool // and its cells are row-major in the body: copied from where they arrive
	scratch  []byte
	stack    *dataset.Stacker
	block    *dataset.Stacker // where the rows go when given: this stream's block of a whole

	// reserver, when set, is asked for everything the decoder allocates before it does (a
	// Server's upload, within its memory budget): the bodies it gathers, the copies ipc's
	// decoder makes, the stacked result as it grows. What it lets go is given back: a stacked
	// stream's copies once each message is stacked, its scratch body at release. What the
	// tensors keep stays reserved.
	reserver  dataset.Reserver
	msgCopies int64            // the copies reserved for the message being decoded
	mapped    *dataset.Stacker // the stack, when its storage is mapped (a reserver's): released with the decoder unless kept

	left []dataset.LeftOut // the stream's columns that have no tensor form, known from its schema
}

// leftOut returns the columns of the stream's schema that have no tensor form (ipc's
// decoder skips some types, dataset.FromRecords leaves out others), named NAME.COLUMN.
func (s *streamDecoder) leftOut() []dataset.LeftOut { return s.left }

// skippedColumns names the columns ipc's decoder skipped (ipc.BatchOptions.SkipUnsupported)
// as dataset names the columns it leaves out.
func skippedColumns(skipped []ipc.SkippedColumn, base string) []dataset.LeftOut {
	out := make([]dataset.LeftOut, len(skipped))
	for i, c := range skipped {
		out[i] = dataset.LeftOut{Name: base + "." + c.Name, Column: c.Name, Type: c.Type, Why: "ndarrow reads no arrays of this type"}
	}
	return out
}

// keepStorage hands the storage of the tensors the decoder made to the caller, who calls the
// returned function once nothing views them: release no longer frees it.
func (s *streamDecoder) keepStorage() (free func()) {
	m := s.mapped
	s.mapped = nil
	if m == nil {
		return func() {}
	}
	return m.Release
}

// maxPreallocation bounds what a result is allocated for before its rows arrive, whatever a
// peer announces (a peer that lies must not make a client allocate what it cannot hold):
// past it, the result grows as rows come, by doubling.
const maxPreallocation = 1 << 30

// add decodes one FlightData's metadata and body. A message of application metadata only
// (no metadata header) adds nothing.
func (s *streamDecoder) add(header, body []byte) error {
	if len(header) == 0 {
		if len(body) != 0 {
			return fmt.Errorf("a body of %d bytes without metadata: %w", len(body), ipc.ErrInvalid)
		}
		return nil
	}
	if s.dec == nil {
		// Copies (decompressed, byte-swapped, aligned) come from Go memory, which the garbage
		// collector reclaims once no tensor views it: tensors outlive the records. A stacked
		// stream releases each record once copied, and its next copies reuse that memory.
		opts := ipc.BatchOptions{Limits: s.lim, Allocator: &reusingAllocator{}, SkipUnsupported: true}
		if s.reserver != nil {
			// Each copy is reserved, and given back once nothing views it: Go memory that
			// the collector reclaims, not reused behind the reserver's back.
			opts.Allocator, opts.Reserve = memory.NewGoAllocator(), s.reserveCopy
		}
		dec, err := ipc.NewBatchDecoder(header, opts)
		if err != nil {
			return err
		}
		s.dec = dec
		ts, left, err := dataset.FromRecords(dec.Schema(), nil, s.name)
		s.left = append(skippedColumns(dec.Skipped(), s.name), left...)
		// Strings are never stacked: their values are not bytes to copy, and their headers
		// must stay where the collector sees them.
		if err == nil && len(ts) == 1 && ts[0].Dense != nil && ts[0].Dense.Rank() > 0 && ts[0].DType() != ndarray.String {
			s.stacked = true
			s.direct = ts[0].DType() != ndarray.Bool && cellsRowMajor(ts[0].Dense.Layout())
			if cell := ts[0].Shape()[1:].Size() * int64(max(ts[0].DType().Size(), 1)); cell > 0 {
				s.capRows = min(s.capRows, min(s.capBytes, maxPreallocation)/cell)
			}
		}
		switch {
		case s.block != nil && !s.stacked:
			return fmt.Errorf("a stream of %v for a block of a dense tensor: %w", dec.Schema(), ipc.ErrInvalid)
		case s.block != nil:
			s.stack = s.block
		case s.stacked && s.reserver != nil:
			s.stack, err = dataset.NewMappedStacker(ts[0], s.reserver)
			s.mapped = s.stack
		case s.stacked:
			s.stack, err = dataset.NewStacker(ts[0], s.capRows)
		}
		return err
	}
	rec, err := s.dec.Decode(header, body)
	if err != nil || rec == nil {
		return err
	}
	if !s.stacked {
		s.records = append(s.records, rec)
		return nil
	}
	defer s.releaseCopies() // after the record, which views them
	defer rec.Release()
	ts, _, err := dataset.FromRecords(s.dec.Schema(), []arrow.Record{rec}, s.name)
	if err != nil {
		return err
	}
	return s.stack.Add(ts[0])
}

// reserveCopy reserves n bytes of a copy ipc's decoder is about to make.
func (s *streamDecoder) reserveCopy(n int64) error {
	if err := s.reserver.Reserve(n); err != nil {
		return err
	}
	s.msgCopies += n
	return nil
}

// releaseCopies gives back the copies of a stacked message, which no record views any more.
func (s *streamDecoder) releaseCopies() {
	if s.reserver != nil {
		s.reserver.Release(s.msgCopies)
	}
	s.msgCopies = 0
}

// alloc returns n bytes of memory, reserved first when the decoder has a reserver.
func (s *streamDecoder) alloc(n int64) ([]byte, error) {
	if s.reserver != nil {
		if err := s.reserver.Reserve(n); err != nil {
			return nil, err
		}
	}
	return make([]byte, n), nil
}

// scratchOf returns the stacked stream's scratch body grown to n bytes; the memory it
// replaces is given back.
func (s *streamDecoder) scratchOf(n int64) ([]byte, error) {
	if int64(cap(s.scratch)) < n {
		b, err := s.alloc(n)
		if err != nil {
			return nil, err
		}
		if s.reserver != nil {
			s.reserver.Release(int64(cap(s.scratch)))
		}
		s.scratch = b
	}
	return s.scratch[:n], nil
}

// addParts decodes one FlightData whose body arrived in parts (the frames gRPC read it into,
// which the caller gets back when addParts returns). A record batch of a stacked stream whose
// values lie row-major in the body (ipc.BatchDecoder.ValuesSpan) has them copied from the
// parts straight into the result; any other message is gathered into one body first: a
// stacked stream's into memory reused message after message (its records are dropped once
// copied), any other's into memory of its own, which its records keep viewing.
func (s *streamDecoder) addParts(header []byte, parts [][]byte) error {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if s.direct && len(header) > 0 {
		rows, off, n, ok, err := s.dec.ValuesSpan(header, int64(size))
		if err != nil {
			return err
		}
		if ok {
			return s.stack.AddBytes(rows, sliceParts(parts, off, n))
		}
	}
	var body []byte
	var err error
	if s.stacked {
		body, err = s.scratchOf(int64(size))
	} else {
		body, err = s.alloc(int64(size))
	}
	if err != nil {
		return err
	}
	at := body
	for _, p := range parts {
		at = at[memcopy.Copy(at, p):]
	}
	return s.add(header, body)
}

// addFrom decodes one message whose metadata is header and whose body, bodyLen bytes, comes
// next in r (an Arrow IPC stream fetched over HTTP): a record batch of a stacked stream whose
// values lie row-major in the body is read with its values straight into the result's
// storage when it has room (see dataset.Stacker.ReadRows); any other body is read into memory
// that grows as bytes arrive, reused message after message for a stacked stream.
func (s *streamDecoder) addFrom(header []byte, bodyLen int64, r io.Reader) error {
	if s.direct {
		rows, off, n, ok, err := s.dec.ValuesSpan(header, bodyLen)
		if err != nil {
			return err
		}
		if ok {
			if err := discard(r, off); err != nil {
				return err
			}
			read, err := s.stack.ReadRows(rows, n, r)
			if err != nil {
				return err
			}
			if !read {
				values, err := bounded.ReadFull(r, n)
				if err != nil {
					return err
				}
				if err := s.stack.AddBytes(rows, [][]byte{values}); err != nil {
					return err
				}
			}
			return discard(r, bodyLen-off-n)
		}
	}
	var body []byte
	var err error
	if s.stacked && int64(cap(s.scratch)) >= bodyLen {
		body = s.scratch[:bodyLen]
		_, err = io.ReadFull(r, body)
	} else {
		body, err = bounded.ReadFull(r, bodyLen)
		if s.stacked {
			s.scratch = body
		}
	}
	if err != nil {
		return err
	}
	return s.add(header, body)
}

// discard reads and drops n bytes of r.
func discard(r io.Reader, n int64) error {
	if n <= 0 {
		return nil
	}
	_, err := io.CopyN(io.Discard, r, n)
	return err
}

// cellsRowMajor reports whether a tensor of layout l, rows of cells, lays each cell out in
// row-major order (a fixed_shape_tensor's permutation would not), whatever its number of rows.
func cellsRowMajor(l ndarray.Layout) bool {
	want := int64(1)
	for i := len(l.Shape) - 1; i > 0; i-- {
		if l.Shape[i] != 1 && l.Strides[i] != want {
			return false
		}
		want *= l.Shape[i]
	}
	return true
}

// sliceParts returns the n bytes at offset off of the concatenation of parts, as views.
func sliceParts(parts [][]byte, off, n int64) [][]byte {
	var out [][]byte
	for _, p := range parts {
		if n == 0 {
			break
		}
		if off >= int64(len(p)) {
			off -= int64(len(p))
			continue
		}
		k := min(int64(len(p))-off, n)
		out = append(out, p[off:off+k])
		off, n = 0, n-k
	}
	return out
}

// schema returns the stream's schema, nil before its first message.
func (s *streamDecoder) schema() *arrow.Schema {
	if s.dec == nil {
		return nil
	}
	return s.dec.Schema()
}

// tensors returns the tensors the stream's records hold, named as dataset names them after
// the stream's name: the stacked result, or views of the bodies received.
func (s *streamDecoder) tensors() ([]dataset.Tensor, error) {
	if s.dec == nil {
		return nil, fmt.Errorf("a stream without a schema: %w", ipc.ErrInvalid)
	}
	if s.stack != nil {
		return []dataset.Tensor{s.stack.Tensor()}, nil
	}
	if s.reserver != nil { // what reading the records copies (strings, bools, batches joined) is reserved first
		if err := s.reserver.Reserve(fromRecordsCopies(s.records)); err != nil {
			return nil, err
		}
	}
	tensors, _, err := dataset.FromRecords(s.dec.Schema(), s.records, s.name)
	if err != nil {
		return nil, err
	}
	if len(tensors) == 0 {
		return nil, fmt.Errorf("a stream of no tensor columns (%v): %w", s.dec.Schema(), dataset.ErrNotTensors)
	}
	return tensors, nil
}

// release releases the records and the decoder; tensors made stay valid.
func (s *streamDecoder) release() {
	for _, r := range s.records {
		r.Release()
	}
	s.records = nil
	if s.dec != nil {
		s.dec.Release()
	}
	if s.reserver != nil {
		s.reserver.Release(int64(cap(s.scratch)))
	}
	if s.mapped != nil {
		s.mapped.Release()
		s.mapped = nil
	}
	s.stack, s.block, s.scratch = nil, nil, nil
}

// reusingAllocator allocates Go memory, handing out again what was freed to it: the copies
// ipc's decoder makes of a stacked stream's bodies (decompressed, or aligned when a codec
// could not align them) take the same few buffers message after message, instead of new
// zeroed memory that becomes garbage at once. Memory of a record still held is never handed
// out: only what its release freed.
type reusingAllocator struct {
	mu   sync.Mutex
	free [][]byte
}

// maxFreeBuffers bounds the buffers a reusingAllocator keeps: the copies of one message.
const maxFreeBuffers = 4

// Allocate returns n bytes, not zeroed when reused: the decoder writes every byte it reads.
func (a *reusingAllocator) Allocate(n int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, b := range a.free {
		if cap(b) >= n {
			a.free = slices.Delete(a.free, i, i+1)
			return b[:n]
		}
	}
	return make([]byte, n)
}

// Reallocate returns b grown to n bytes, its contents kept.
func (a *reusingAllocator) Reallocate(n int, b []byte) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	grown := a.Allocate(n)
	copy(grown, b)
	a.Free(b)
	return grown
}

// Free keeps b for a later Allocate.
func (a *reusingAllocator) Free(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cap(b) > 0 && len(a.free) < maxFreeBuffers {
		a.free = append(a.free, b[:cap(b)])
	}
}
