package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	arrowipc "github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/saturate"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/table"
)

// A batches command asks for the mini-batches of a served table (table.Batches) that any
// Flight client can make: a DoGet Ticket (or the command of a FlightDescriptor given to
// GetFlightInfo, whose one endpoint's ticket is then the same) whose bytes are the JSON object
//
//	{"batches": {"name": "NAME", "batch_size": N, "shuffle": true, "seed": S, "epoch": E,
//	             "shard": K, "shards": N, "drop_last": false, "after": "CURSOR", "columns": ["COLUMN", ...]}}
//
// Only "name" and "batch_size" are required; the others are table.BatchOptions' (their zero
// values by default). The answer is one Arrow IPC stream whose record batches are the
// mini-batches in order, with the schema a DoGet of NAME sends (its fields picked); the
// FlightData of each batch's record batch carries in its app_metadata the JSON object
// {"cursor":"c2.…"}, the batch's cursor (table.Cursor's text), which "after" resumes after;
// after the cursor of an epoch's last batch the stream holds the schema and no batch (the
// epoch is finished, as table.Batches says). A batch larger than the server's message limit
// is sent as several record batches, the last one carrying the cursor.

// ErrBatches is returned for a batches command that is not one: not the JSON above, a field
// unknown, a batch size that is not more than 0, a column named twice, a cursor that is not
// one, options table.Batches refuses.
var ErrBatches = errors.New("flight: invalid batches command")

// maxBatchesCommand bounds the bytes of a batches command: a name, a cursor and a list of
// columns.
const maxBatchesCommand = 1 << 20

// batchesCommand is the JSON of a batches command.
type batchesCommand struct {
	Batches *batchesRequest `json:"batches"`
}

// batchesRequest is what a batches command asks for.
type batchesRequest struct {
	Name      string   `json:"name"`
	BatchSize int64    `json:"batch_size"`
	Shuffle   bool     `json:"shuffle,omitempty"`
	Seed      uint64   `json:"seed,omitempty"`
	Epoch     int64    `json:"epoch,omitempty"`
	Shard     int      `json:"shard,omitempty"`
	Shards    int      `json:"shards,omitempty"`
	DropLast  bool     `json:"drop_last,omitempty"`
	After     string   `json:"after,omitempty"`
	Columns   []string `json:"columns,omitempty"`
}

// batchMetadata is the app_metadata of the FlightData of each batch of a batches stream.
type batchMetadata struct {
	Cursor string `json:"cursor"`
}

// BatchesTicket returns the bytes of a DoGet ticket, or of the command of a FlightDescriptor
// for GetFlightInfo, that asks an ndarrow server for the mini-batches o asks of the table
// flight named name (o.Reserve is not sent).
func BatchesTicket(name string, o table.BatchOptions) []byte {
	req := batchesRequest{Name: name, BatchSize: o.Size, Shuffle: o.Shuffle, Seed: o.Seed, Epoch: o.Epoch,
		Shard: o.Shard, Shards: o.Shards, DropLast: o.DropLast, Columns: o.Columns}
	if !o.Shuffle {
		req.Seed = 0
	}
	if o.After != nil {
		req.After = o.After.String()
	}
	b, _ := json.Marshal(batchesCommand{Batches: &req})
	return b
}

// commandKey returns the first key of the JSON object raw begins with ("take", "batches"),
// "" when raw does not begin so: reading no further than that key.
func commandKey(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	k, _ := dec.Token()
	s, _ := k.(string)
	return s
}

// isBatches reports whether a ticket or command is a batches command: a JSON object whose
// first key is "batches" (in any case, as encoding/json matches keys).
func isBatches(raw []byte) bool { return isTake(raw) && strings.EqualFold(commandKey(raw), "batches") }

// parseBatches decodes a batches command: one JSON object, no field unknown, a name, a batch
// size more than 0, columns each named once, a cursor's text. Its errors wrap ErrBatches.
func parseBatches(raw []byte) (batchesRequest, table.BatchOptions, error) {
	const form = `{"batches":{"name":TABLE,"batch_size":N,...}}`
	if len(raw) > maxBatchesCommand {
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf("%w: %d bytes, more than %d", ErrBatches, len(raw), maxBatchesCommand)
	}
	var cmd batchesCommand
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cmd); err != nil {
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf("%w: %v (a batches command is %s)", ErrBatches, err, form)
	}
	if _, err := dec.Token(); err != io.EOF {
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf("%w: more after its JSON object", ErrBatches)
	}
	req := cmd.Batches
	switch {
	case req == nil:
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf(`%w: no "batches" object`, ErrBatches)
	case req.Name == "":
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf(`%w: no "name"`, ErrBatches)
	case req.BatchSize <= 0:
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf(`%w: "batch_size" %d: more than 0 rows a batch`, ErrBatches, req.BatchSize)
	case table.CheckShard(req.Shard, req.Shards) != nil:
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf(`%w: "shard" %d of "shards" %d: 0 <= shard < shards <= %d`, ErrBatches, req.Shard, req.Shards, int64(table.MaxShards))
	case req.Epoch < 0:
		return batchesRequest{}, table.BatchOptions{}, fmt.Errorf(`%w: "epoch" %d: epochs count from 0`, ErrBatches, req.Epoch)
	}
	seen := make(map[string]bool, len(req.Columns))
	for _, c := range req.Columns {
		if c == "" || seen[c] {
			return batchesRequest{}, table.BatchOptions{}, fmt.Errorf("%w: column %q named twice or empty", ErrBatches, c)
		}
		seen[c] = true
	}
	if !req.Shuffle {
		req.Seed = 0 // the seed keys the shuffle alone (a cursor has none without it)
	}
	o := table.BatchOptions{Size: req.BatchSize, Shuffle: req.Shuffle, Seed: req.Seed, Epoch: req.Epoch,
		Shard: req.Shard, Shards: req.Shards, DropLast: req.DropLast, Columns: req.Columns}
	if req.After != "" {
		c, err := table.ParseCursor(req.After)
		if err != nil {
			return batchesRequest{}, table.BatchOptions{}, fmt.Errorf(`%w: "after": %w`, ErrBatches, err)
		}
		o.After = &c
	}
	return *req, o, nil
}

// batchesPlan is a batches command checked against the table flight it names, nothing read.
type batchesPlan struct {
	req    batchesRequest
	o      table.BatchOptions // o.Columns the table's names of the columns picked
	e      *entry
	table  *table.Table // over every column of the flight: its Version the cursors'
	schema *arrow.Schema
	rows   int64 // what the stream gives
	// unknownPerRow is what a row of the columns picked whose bytes are not known before
	// reading (a ragged or string Parquet column) is estimated to take: their fragments'
	// decoding estimates over their rows.
	unknownPerRow int64
}

// plannedBatches parses a batches command, finds the table flight it names and checks the
// options against it as it is now. Release the entry when done. Errors are gRPC statuses:
// InvalidArgument for a command that is not one or options that do not hold, NotFound for no
// such flight, FailedPrecondition for a cursor of a changed table.
func (s *Server) plannedBatches(ctx context.Context, raw []byte, method string) (*batchesPlan, error) {
	req, o, err := parseBatches(raw)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	callOf(ctx).noteFlight(req.Name, "batches")
	e, err := s.store.get(req.Name)
	if err != nil {
		return nil, statusOf(err)
	}
	p, err := s.planBatches(req, o, e)
	if err != nil {
		err = s.batchesStatus(e, method, err)
		e.release()
		return nil, err
	}
	return p, nil
}

// batchesStatus maps what planning or streaming batches failed with to a gRPC status: a
// cursor of a changed table FailedPrecondition, a cursor of other options InvalidArgument,
// anything else as fileStatus maps it. The files a cursor's refusal names are named under the
// served directory, as fileStatus names them.
func (s *Server) batchesStatus(e *entry, method string, err error) error {
	switch {
	case errors.Is(err, table.ErrTableChanged):
		return status.Error(codes.FailedPrecondition, underDir(e.root, err.Error()))
	case errors.Is(err, table.ErrCursor), errors.Is(err, ErrBatches):
		return status.Error(codes.InvalidArgument, underDir(e.root, err.Error()))
	}
	return s.fileStatus(e, method, err)
}

// planBatches checks the options of req against the entry e: a flight of served files (an
// upload held in memory has no fragments to read by rows), its columns.
func (s *Server) planBatches(req batchesRequest, o table.BatchOptions, e *entry) (*batchesPlan, error) {
	tp := &takePlan{req: takeRequest{Name: req.Name}, e: e}
	cols, err := pickColumns(req.Name, e.meta, req.Columns)
	if !e.isTable() {
		cols, err = []int{0}, nil
		for _, c := range req.Columns {
			if c != req.Name {
				return nil, fmt.Errorf("%w: %s is a tensor, not a table: it has no column %s: %w", ErrBatches, req.Name, c, table.ErrNoColumn)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBatches, err)
	}
	all := make([]int, len(e.meta.Columns))
	for i := range all {
		all[i] = i
	}
	tp.cols = all
	srcs := tp.sources()
	if srcs == nil {
		return nil, fmt.Errorf("%w: %s is held in memory (an upload): batches are read from served files", ErrBatches, req.Name)
	}
	t, err := table.FromSources(req.Name, srcs, nil, s.opts.Limits)
	if err != nil {
		return nil, err
	}
	if s.opts.PageCache != nil {
		t.UsePageCache(s.opts.PageCache)
	}
	names := t.Columns()
	fields := e.schema.Fields()
	picked := make([]arrow.Field, len(cols))
	o.Columns = make([]string, len(cols))
	for i, c := range cols {
		picked[i] = fields[c]
		o.Columns[i] = names[min(c, len(names)-1)]
	}
	_, rows, err := t.Remaining(o)
	if err != nil {
		if errors.Is(err, table.ErrTableChanged) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrBatches, err)
	}
	unknown := int64(0)
	for _, c := range cols {
		if src := srcs[min(c, len(srcs)-1)]; src.Bytes() < 0 && src.Rows() > 0 {
			decode := int64(0)
			for _, d := range src.DecodeBytes() {
				decode = saturate.Add(decode, d)
			}
			unknown = saturate.Add(unknown, ceilDiv(decode, src.Rows()))
		}
	}
	md := e.schema.Metadata()
	return &batchesPlan{req: req, o: o, e: e, table: t, schema: arrow.NewSchema(picked, &md), rows: rows, unknownPerRow: unknown}, nil
}

// batchesInfo answers GetFlightInfo for a batches command: its schema, the rows the shard
// gives (those after "after"), one endpoint on this server whose ticket is the
// command.
func (s *Server) batchesInfo(ctx context.Context, cmd []byte) (*arrowflight.FlightInfo, error) {
	p, err := s.plannedBatches(ctx, cmd, "GetFlightInfo")
	if err != nil {
		return nil, err
	}
	defer p.e.release()
	ep := &arrowflight.FlightEndpoint{Ticket: &arrowflight.Ticket{Ticket: bytes.Clone(cmd)}}
	if s.opts.Location != "" {
		ep.Location = []*arrowflight.Location{{Uri: s.opts.Location}}
	}
	return &arrowflight.FlightInfo{
		Schema:           arrowflight.SerializeSchema(p.schema, s.opts.Allocator),
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: cmd},
		Endpoint:         []*arrowflight.FlightEndpoint{ep},
		TotalRecords:     p.rows,
		TotalBytes:       -1,
		Ordered:          true,
	}, nil
}

// doGetBatches answers DoGet of a batches ticket: the batches, read against the version of
// the flight's files current when it starts, each batch's memory (Table.TakeBytes, and for
// the columns whose bytes are not known before reading their decoding estimate) reserved
// from the budget before it is read and given back once it is sent (at most two at once: the
// one sent, the one read ahead). A file modified in place meanwhile fails the stream with
// DataLoss.
func (s *Server) doGetBatches(raw []byte, stream arrowflight.FlightService_DoGetServer) error {
	ctx := stream.Context()
	p, err := s.plannedBatches(ctx, raw, "DoGet")
	if err != nil {
		return err
	}
	e := p.e
	defer e.release()
	var mu sync.Mutex
	var held []int64 // reserved for the batches read and not yet sent, in order
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range held {
			s.budget.release(n)
		}
	}()
	o := p.o
	o.Readahead = 1 // one batch read ahead: the budget, not the stream, decides what is held
	o.Reserve = func(ctx context.Context, rows int64) error {
		n, _, err := p.table.TakeBytes(rows, o.Columns)
		n = saturate.Add(n, saturate.Mul(p.unknownPerRow, rows))
		if err != nil || s.budget == nil || n <= 0 {
			return err
		}
		if err := s.budget.reserve(ctx, p.req.Name, n); err != nil {
			return budgetStatus(ctx, err)
		}
		mu.Lock()
		held = append(held, n)
		mu.Unlock()
		return nil
	}
	sent := func() { // gives back the oldest batch's memory
		mu.Lock()
		defer mu.Unlock()
		if len(held) > 0 {
			s.budget.release(held[0])
			held = held[1:]
		}
	}
	frames.begin()
	defer frames.end()
	ps := &payloadSender{stream: stream}
	err = dataset.Guard(func() (err error) {
		gate := &abandonable{PayloadWriter: ps}
		w := arrowipc.NewWriterWithPayloadWriter(gate, arrowipc.WithSchema(p.schema), arrowipc.WithAllocator(s.opts.Allocator))
		defer func() {
			if err != nil {
				gate.abandon(w) // the dictionaries it last sent, let go
			}
		}()
		for b, err := range p.table.Batches(ctx, o) {
			if err != nil {
				return err
			}
			if err := s.sendBatch(ctx, w, ps, p, b); err != nil {
				return err
			}
			sent()
		}
		if err := e.checkUnchanged(); err != nil {
			return err
		}
		return w.Close()
	})
	if err != nil && !errors.Is(err, dataset.ErrFileChanged) {
		if changed := e.checkUnchanged(); changed != nil {
			err = changed
		}
	}
	if err != nil {
		return s.batchesStatus(e, "DoGet", err)
	}
	return nil
}

// sendBatch writes the batch b to w as record batches under the message limit, the last
// one's FlightData carrying the batch's cursor in its app_metadata.
func (s *Server) sendBatch(ctx context.Context, w *arrowipc.Writer, ps *payloadSender, p *batchesPlan, b table.Batch) error {
	rec, err := dataset.Batch(s.store.mem, b.Values.Columns)
	if err != nil {
		return fmt.Errorf("flight: %s: batch %d: %w", p.req.Name, b.Index, err)
	}
	defer rec.Release()
	meta, _ := json.Marshal(batchMetadata{Cursor: b.Cursor.String()})
	return s.sendPieces(ctx, w, p.schema, rec, func() { ps.appMetadata = meta })
}

// Batches returns the mini-batches o asks of the table flight name (see BatchesTicket; o's
// Reserve is not used), in order, as one DoGet streams them, each decoded through the
// verified decoder Get uses as its record batches arrive and its cursor read from their
// app_metadata. A batch's Values are its columns named as GetTable names them, its Index
// and Cursor the server's; its Rows are nil (the stream does not carry the table rows). After
// the cursor of an epoch's last batch there is none, and no error (the epoch is finished). What
// the server refuses ends the iteration with its error: ErrNotFound for no such flight,
// table.ErrTableChanged for a cursor of files since changed, ErrBatches for options that do
// not hold; a batch larger than ClientOptions.MaxBytes ErrTooLarge.
func (c *Client) Batches(ctx context.Context, name string, o table.BatchOptions) iter.Seq2[table.Batch, error] {
	return func(yield func(table.Batch, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		fail := func(err error) { yield(table.Batch{}, ofFlight(name, err)) }
		stream, err := c.fc.DoGet(ctx, &arrowflight.Ticket{Ticket: BatchesTicket(name, o)}, grpc.ForceCodec(flightDataCodec{}))
		if err != nil {
			fail(c.remote(err))
			return
		}
		bd := &batchDecoder{name: name, lim: c.opts.Limits, limit: c.opts.MaxBytes, next: -1}
		defer bd.release()
		for {
			fd, err := stream.Recv()
			if err == io.EOF {
				if len(bd.records) > 0 {
					fail(fmt.Errorf("%d record batches after the last cursor: %w", len(bd.records), ipc.ErrInvalid))
				} else if bd.dec == nil {
					fail(fmt.Errorf("a stream without a schema: %w", ipc.ErrInvalid))
				}
				return
			}
			if err != nil {
				fail(c.remote(err))
				return
			}
			b, ok, err := bd.add(fd)
			if err != nil {
				fail(err)
				return
			}
			if ok && !yield(b, nil) {
				return
			}
		}
	}
}

// batchDecoder decodes the FlightData of a batches stream into its batches.
type batchDecoder struct {
	name    string
	lim     limits.Limits
	limit   int64 // the bytes of one batch
	dec     *ipc.BatchDecoder
	records []arrow.Record // of the batch arriving
	bytes   int64          // its bytes so far
	next    int64          // the Next of the last cursor (-1: none yet)
}

// add decodes one FlightData, and returns the batch it ends (ok) when it carries a cursor.
func (d *batchDecoder) add(fd *arrowflight.FlightData) (table.Batch, bool, error) {
	d.bytes += int64(len(fd.DataHeader) + len(fd.DataBody) + len(fd.AppMetadata))
	if d.bytes > d.limit {
		return table.Batch{}, false, fmt.Errorf("%w: a batch of more than %d bytes", ErrTooLarge, d.limit)
	}
	switch {
	case len(fd.DataHeader) == 0:
		if len(fd.DataBody) != 0 {
			return table.Batch{}, false, fmt.Errorf("a body of %d bytes without metadata: %w", len(fd.DataBody), ipc.ErrInvalid)
		}
	case d.dec == nil:
		dec, err := ipc.NewBatchDecoder(fd.DataHeader, ipc.BatchOptions{Limits: d.lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
		if err != nil {
			return table.Batch{}, false, err
		}
		d.dec = dec
	default:
		rec, err := d.dec.Decode(fd.DataHeader, fd.DataBody)
		if err != nil {
			return table.Batch{}, false, err
		}
		if rec != nil {
			d.records = append(d.records, rec)
		}
	}
	if len(fd.AppMetadata) == 0 {
		return table.Batch{}, false, nil
	}
	var meta batchMetadata
	if err := json.Unmarshal(fd.AppMetadata, &meta); err != nil || meta.Cursor == "" {
		return table.Batch{}, false, fmt.Errorf("app_metadata %.64q is not a batch's {\"cursor\":…}: %w", fd.AppMetadata, ipc.ErrInvalid)
	}
	c, err := table.ParseCursor(meta.Cursor)
	if err != nil {
		return table.Batch{}, false, fmt.Errorf("app_metadata: %w: %w", err, ipc.ErrInvalid)
	}
	switch {
	case len(d.records) == 0:
		return table.Batch{}, false, fmt.Errorf("cursor %s without a record batch: %w", c, ipc.ErrInvalid)
	case c.Next < 1 || (d.next >= 0 && c.Next != d.next+1):
		return table.Batch{}, false, fmt.Errorf("cursor %s after batch %d: %w", c, d.next, ipc.ErrInvalid)
	}
	tensors, left, err := dataset.FromRecords(d.dec.Schema(), d.records, d.name)
	if err != nil {
		return table.Batch{}, false, err
	}
	rows := int64(0)
	for _, r := range d.records {
		rows += r.NumRows()
		r.Release() // Go memory, which the tensors keep viewing
	}
	d.records, d.bytes, d.next = nil, 0, c.Next
	left = append(skippedColumns(d.dec.Skipped(), d.name), left...)
	return table.Batch{Index: c.Next - 1, Values: &dataset.Table{Name: d.name, Rows: rows, Columns: tensors, LeftOut: left}, Cursor: c}, true, nil
}

// release releases what the decoder holds.
func (d *batchDecoder) release() {
	for _, r := range d.records {
		r.Release()
	}
	d.records = nil
	if d.dec != nil {
		d.dec.Release()
	}
}
