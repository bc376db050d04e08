package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

// ReadRecordBatches reads every record batch of the Arrow IPC file or stream in b (told apart
// by the file's ARROW1 magic) with arrow-go's own readers, and returns the schema and the
// batches, which the caller releases. Importing arrowtensor first makes tensor columns come
// back as its extension arrays.
//
// arrow-go's readers trust their input: they size allocations from lengths in it and can
// panic on malformed bytes. ReadRecordBatches first frames every message and verifies its
// flatbuffer metadata (and, for a file, the footer and that each block it lists starts a
// message), so that no vector length reaches arrow-go unchecked; then allocations go through
// a budget of twice the input plus 1 MiB, and a panic inside the readers becomes an error
// wrapping ErrInvalid (ErrLimit for an exhausted budget). No batch is returned with an error.
func ReadRecordBatches(b []byte, mem memory.Allocator) (schema *arrow.Schema, records []arrow.Record, err error) {
	if err := checkBatches(b); err != nil {
		return nil, nil, fmt.Errorf("ipc: record batches: %w", err)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	budget := &budgetAllocator{mem: mem}
	budget.left.Store(2*int64(len(b)) + 1<<20)
	defer func() {
		if r := recover(); r != nil {
			for _, rec := range records {
				rec.Release()
			}
			schema, records = nil, nil
			if e, ok := r.(error); ok && errors.Is(e, ErrLimit) {
				err = fmt.Errorf("ipc: record batches: %w", e)
				return
			}
			err = fmt.Errorf("ipc: malformed record batches: %v: %w", r, ErrInvalid)
		}
	}()
	fail := func(err error) (*arrow.Schema, []arrow.Record, error) {
		for _, rec := range records {
			rec.Release()
		}
		return nil, nil, fmt.Errorf("ipc: record batches: %w: %w", ErrInvalid, err)
	}
	if bytes.HasPrefix(b, []byte("ARROW1")) {
		r, err := arrowipc.NewFileReader(bytes.NewReader(b), arrowipc.WithAllocator(budget))
		if err != nil {
			return fail(err)
		}
		defer r.Close()
		for i := range r.NumRecords() {
			rec, err := r.Record(i)
			if err != nil {
				return fail(err)
			}
			rec.Retain()
			records = append(records, rec)
		}
		return r.Schema(), records, nil
	}
	r, err := arrowipc.NewReader(bytes.NewReader(b), arrowipc.WithAllocator(budget))
	if err != nil {
		return fail(err)
	}
	defer r.Release()
	for r.Next() {
		rec := r.Record()
		rec.Retain()
		records = append(records, rec)
	}
	if err := r.Err(); err != nil {
		return fail(err)
	}
	return r.Schema(), records, nil
}

// budgetAllocator refuses, by panicking with an error wrapping ErrLimit, allocations beyond
// its budget; ReadRecordBatches recovers the panic.
type budgetAllocator struct {
	mem  memory.Allocator
	left atomic.Int64
}

func (a *budgetAllocator) take(n int) {
	if a.left.Add(-int64(n)) < 0 {
		panic(fmt.Errorf("an allocation of %d bytes exceeds what the input can justify: %w", n, ErrLimit))
	}
}

func (a *budgetAllocator) Allocate(size int) []byte {
	a.take(size)
	return a.mem.Allocate(size)
}

func (a *budgetAllocator) Reallocate(size int, b []byte) []byte {
	a.take(size - len(b))
	return a.mem.Reallocate(size, b)
}

func (a *budgetAllocator) Free(b []byte) { a.mem.Free(b) }

// fileMagic starts and ends an Arrow IPC file.
const fileMagic = "ARROW1"

// checkBatches frames and verifies every message of an IPC stream, or of the stream inside an
// IPC file together with the file's footer.
func checkBatches(b []byte) error {
	if !bytes.HasPrefix(b, []byte(fileMagic)) {
		_, err := scanMessages(b, 0)
		return err
	}
	const head, tail = 8, 10 // magic and padding; footer length and magic
	if len(b) < head+tail || !bytes.HasSuffix(b, []byte(fileMagic)) {
		return fmt.Errorf("an Arrow IPC file of %d bytes has no footer: %w", len(b), ErrInvalid)
	}
	footerLen := int64(int32(binary.LittleEndian.Uint32(b[len(b)-tail:])))
	footerStart := int64(len(b)-tail) - footerLen
	if footerLen <= 0 || footerStart < head {
		return fmt.Errorf("footer length %d does not fit a file of %d bytes: %w", footerLen, len(b), ErrInvalid)
	}
	blocks, err := arrowfb.VerifyFooter(b[footerStart : len(b)-tail])
	if err != nil {
		return fmt.Errorf("footer at byte %d: %w: %w", footerStart, ErrInvalid, err)
	}
	starts, err := scanMessages(b[head:footerStart], head)
	if err != nil {
		return err
	}
	for _, off := range blocks {
		if !starts[off] {
			return fmt.Errorf("the footer lists a block at byte %d, where no message starts: %w", off, ErrInvalid)
		}
	}
	return nil
}

// scanMessages frames and verifies the messages of b, which starts at byte base of its input,
// up to the end-of-stream marker or the end of b, and returns where each starts.
func scanMessages(b []byte, base int64) (map[int64]bool, error) {
	starts := map[int64]bool{}
	lim := DefaultLimits()
	for pos := int64(0); ; {
		_, n, err := parseMessage(b[pos:], base+pos, lim)
		if errors.Is(err, io.EOF) {
			return starts, nil
		}
		if err != nil {
			return nil, err
		}
		starts[base+pos] = true
		pos += n
	}
}

// ReadSchema returns the schema of the Arrow IPC file or stream in b, verified as
// ReadRecordBatches verifies its input, without reading any batch.
func ReadSchema(b []byte) (schema *arrow.Schema, err error) {
	if err := checkBatches(b); err != nil {
		return nil, fmt.Errorf("ipc: record batches: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			schema, err = nil, fmt.Errorf("ipc: malformed schema: %v: %w", r, ErrInvalid)
		}
	}()
	if bytes.HasPrefix(b, []byte(fileMagic)) {
		r, err := arrowipc.NewFileReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("ipc: schema: %w: %w", ErrInvalid, err)
		}
		defer r.Close()
		return r.Schema(), nil
	}
	r, err := arrowipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("ipc: schema: %w: %w", ErrInvalid, err)
	}
	defer r.Release()
	return r.Schema(), nil
}
