package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/arrowtensor"
	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/saturate"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/ndarray"
	"github.com/ndarrow/ndarrow/table"
)

// A take is a request for rows of a served flight that any Flight client can make: a DoGet
// Ticket (or the command of a FlightDescriptor given to GetFlightInfo, whose one endpoint's
// ticket is then the same) whose bytes are the JSON object
//
//	{"take": {"name": "NAME", "rows": [ROW, ...], "columns": ["COLUMN", ...]}}
//
// NAME is a flight as ListFlights names it (a table, a column NAME.COLUMN, a tensor); ROW an
// index along the first axis, in any order, repeated or not, negative ones counting from the
// end; "columns" (optional) picks a table's columns, by COLUMN or NAME.COLUMN, in that order.
// The answer is one Arrow IPC stream of those rows in the order asked, with the schema a DoGet
// of NAME sends (its fields picked): a tensor of its own (.npy, a Tensor message, an upload)
// is a table of one column, its rows along axis 0. A ticket whose first byte is '{' is a take
// (no name starts with '{': CheckName); any other names a flight.

// ErrTicket is returned for a take ticket that is not one: not the JSON above, a field
// unknown, rows above the limit, a column named twice.
var ErrTicket = errors.New("flight: invalid take ticket")

// takeCommand is the JSON of a take ticket.
type takeCommand struct {
	Take *takeRequest `json:"take"`
}

// takeRequest is what a take asks for.
type takeRequest struct {
	Name    string   `json:"name"`
	Rows    []int64  `json:"rows"`
	Columns []string `json:"columns,omitempty"`
}

// TakeTicket returns the bytes of a DoGet ticket, or of the command of a FlightDescriptor for
// GetFlightInfo, that asks an ndarrow server for the given rows of the flight named name (see
// Server): every column, or those named.
func TakeTicket(name string, rows []int64, columns []string) []byte {
	if rows == nil {
		rows = []int64{}
	}
	b, _ := json.Marshal(takeCommand{Take: &takeRequest{Name: name, Rows: rows, Columns: columns}})
	return b
}

// isTake reports whether a ticket is a take's (its first byte '{', which no name has).
func isTake(ticket []byte) bool { return len(ticket) > 0 && ticket[0] == '{' }

// parseBytes bounds what decoding a take ticket holds: the rows it can list (a few megabytes
// of commas are a few million rows), twice over as the list grows, and the decoder's copy of
// the ticket.
func parseBytes(ticket []byte) int64 {
	return saturate.Add(saturate.Mul(int64(bytes.Count(ticket, []byte(",")))+1, 16), int64(len(ticket)))
}

// parseTake decodes a take ticket: one JSON object, no field unknown, a name, a list of rows
// (at most maxRows), columns each named once. Its errors wrap ErrTicket.
func parseTake(ticket []byte, maxRows int64) (takeRequest, error) {
	var cmd takeCommand
	dec := json.NewDecoder(bytes.NewReader(ticket))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cmd); err != nil {
		return takeRequest{}, fmt.Errorf(`%w: %v (a take ticket is {"take":{"name":NAME,"rows":[ROW,...],"columns":[COLUMN,...]}})`, ErrTicket, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return takeRequest{}, fmt.Errorf("%w: more after its JSON object", ErrTicket)
	}
	req := cmd.Take
	switch {
	case req == nil:
		return takeRequest{}, fmt.Errorf(`%w: no "take" object`, ErrTicket)
	case req.Name == "":
		return takeRequest{}, fmt.Errorf(`%w: no "name"`, ErrTicket)
	case req.Rows == nil:
		return takeRequest{}, fmt.Errorf(`%w: no "rows"`, ErrTicket)
	case int64(len(req.Rows)) > maxRows:
		return takeRequest{}, fmt.Errorf("%w: %d rows, more than the %d a take may ask for (Limits.MaxElements): %w", ErrTicket, len(req.Rows), maxRows, limits.ErrExceeded)
	}
	seen := make(map[string]bool, len(req.Columns))
	for _, c := range req.Columns {
		if c == "" || seen[c] {
			return takeRequest{}, fmt.Errorf("%w: column %q named twice or empty", ErrTicket, c)
		}
		seen[c] = true
	}
	return *req, nil
}

// takePlan is a take checked against the flight it asks for, nothing read yet: the rows
// (none negative, each inside), the columns picked (indices into the flight's), and what
// the answer is: its metadata, schema and an estimate of the memory taking it holds.
type takePlan struct {
	req     takeRequest
	e       *entry
	rows    []int64
	cols    []int // of a table flight; nil for a tensor of its own
	table   *table.Table
	meta    tensorMetadata
	schema  *arrow.Schema
	answer  int64 // the rows' bytes, estimated
	working int64 // what reading them holds beside, estimated
}

// planTake checks req against the entry e of the flight it names: a sparse tensor has no
// rows (ndarray.ErrShape); a row outside the flight wraps table.ErrRowRange naming it and
// the rows; a column the flight does not have table.ErrNoColumn.
func (s *Server) planTake(req takeRequest, e *entry) (*takePlan, error) {
	p := &takePlan{req: req, e: e}
	name := req.Name
	if strings.HasPrefix(e.meta.Kind, "sparse_") {
		return nil, fmt.Errorf("flight: %s is a %s tensor, whose rows are its entries: a take needs a dense, ragged or table flight: %w", name, e.meta.Kind, ndarray.ErrShape)
	}
	rows, err := normalizeRows(name, req.Rows, e.rows)
	if err != nil {
		return nil, err
	}
	p.rows = rows
	k := int64(len(rows))
	meta := e.meta
	meta.Shape = slices.Clone(meta.Shape)
	if len(meta.Shape) > 0 {
		meta.Shape[0] = k
	}
	fields := e.schema.Fields()
	if e.isTable() {
		if p.cols, err = pickColumns(name, e.meta, req.Columns); err != nil {
			return nil, err
		}
		meta.Columns = make([]columnMetadata, len(p.cols))
		picked := make([]arrow.Field, len(p.cols))
		for i, c := range p.cols {
			col := e.meta.Columns[c]
			col.Shape = slices.Clone(col.Shape)
			if len(col.Shape) > 0 {
				col.Shape[0] = k
			}
			meta.Columns[i] = col
			picked[i] = fields[c]
		}
		if len(req.Columns) > 0 {
			meta.LeftOut = nil
		}
		fields = picked
	} else {
		for _, c := range req.Columns {
			if c != name {
				return nil, fmt.Errorf("flight: %s is a tensor, not a table: it has no column %s: %w", name, c, table.ErrNoColumn)
			}
		}
	}
	p.meta = meta
	md := e.schema.Metadata()
	p.schema = arrow.NewSchema(fields, &md)
	if err := s.estimateTake(p); err != nil {
		return nil, err
	}
	return p, nil
}

// normalizeRows returns rows, each counted from the start (a negative one from the end, as
// NumPy counts), or an error wrapping table.ErrRowRange naming the first outside n rows.
func normalizeRows(name string, rows []int64, n int64) ([]int64, error) {
	out := make([]int64, len(rows))
	for i, r := range rows {
		if r < 0 {
			r += n
		}
		if r < 0 || r >= n {
			return nil, fmt.Errorf("flight: %s: row %d of a flight of %d rows: %w", name, rows[i], n, table.ErrRowRange)
		}
		out[i] = r
	}
	return out, nil
}

// pickColumns returns the indices of the columns of a table flight that names asks for (by
// COLUMN or TABLE.COLUMN), every column for none.
func pickColumns(tableName string, meta tensorMetadata, names []string) ([]int, error) {
	if len(names) == 0 {
		out := make([]int, len(meta.Columns))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	out := make([]int, len(names))
	for i, n := range names {
		k := slices.IndexFunc(meta.Columns, func(c columnMetadata) bool { return c.Column == n || c.Name == n })
		if k < 0 {
			have := make([]string, len(meta.Columns))
			for j, c := range meta.Columns {
				have[j] = c.Column
			}
			why := ""
			for _, l := range meta.LeftOut {
				if l.Column == n || l.Name == n {
					why = " (" + l.Type + " has no tensor form)"
				}
			}
			return nil, fmt.Errorf("flight: %s: no column %s%s (it has %s): %w", tableName, n, why, strings.Join(have, ", "), table.ErrNoColumn)
		}
		if slices.Contains(out[:i], k) {
			return nil, fmt.Errorf("flight: %s: column %s asked for twice: %w", tableName, n, ErrTicket)
		}
		out[i] = k
	}
	return out, nil
}

// sources returns the Sources of the columns p takes from, nil for an entry held in memory.
func (p *takePlan) sources() []*dataset.Source {
	switch {
	case p.e.columns != nil:
		out := make([]*dataset.Source, len(p.cols))
		for i, c := range p.cols {
			out[i] = p.e.columns[c]
		}
		return out
	case p.e.source != nil:
		return []*dataset.Source{p.e.source}
	}
	return nil
}

// estimateTake sets what the answer of p holds (its rows' bytes, as each column's bytes per
// row say, or, where they are not known before reading — a ragged or string Parquet column —
// as its fragments' decoding estimates do), and what reading them holds beside (the largest
// decoding estimates of the fragments read, as many as are read at once), failing with
// limits.ErrExceeded when the rows take more than the server's Limits.MaxCopySize.
func (s *Server) estimateTake(p *takePlan) error {
	k := int64(len(p.rows))
	switch srcs := p.sources(); {
	case srcs != nil:
		t, err := table.FromSources(p.req.Name, srcs, nil, s.opts.Limits)
		if err != nil {
			return err
		}
		p.table = t
		if s.opts.PageCache != nil {
			t.UsePageCache(s.opts.PageCache)
		}
		// the rows of each fragment the take reads
		perFrag := map[int]int64{}
		for _, r := range p.rows {
			f, _ := t.Locate(r)
			perFrag[f]++
		}
		var working []int64
		for _, src := range srcs {
			chunkRows, decode := src.ChunkRows(), src.DecodeBytes()
			perRow := int64(0)
			if b := src.Bytes(); b > 0 && src.Rows() > 0 {
				perRow = ceilDiv(b, src.Rows())
			}
			for f, n := range perFrag {
				cost := saturate.Mul(perRow, n)
				if f < len(decode) && f < len(chunkRows) && chunkRows[f] > 0 && (perRow == 0 || src.DType() == ndarray.String) {
					cost = max(cost, saturate.Mul(ceilDiv(decode[f], chunkRows[f]), n))
				}
				p.answer = saturate.Add(p.answer, cost)
				if f < len(decode) {
					working = append(working, decode[f])
				}
			}
		}
		slices.Sort(working)
		slices.Reverse(working)
		for _, w := range working[:min(len(working), runtime.GOMAXPROCS(0))] {
			p.working = saturate.Add(p.working, w)
		}
	case p.e.rows > 0:
		p.answer = saturate.Mul(ceilDiv(max(p.e.bytes, 0), p.e.rows), k)
	}
	if most := s.opts.Limits.MaxCopySize; p.answer > most {
		return fmt.Errorf("flight: %s: %d rows take about %d bytes, more than the server copies for one request (%d, Limits.MaxCopySize): %w",
			p.req.Name, k, p.answer, most, limits.ErrExceeded)
	}
	return nil
}

// take reads the rows of p: the columns of a flight of files through package table (only the
// fragments holding the rows read), those of one held in memory (an upload) by
// Tensor.TakeRows. The tensors are copies in Go memory, each naming its Column for a table.
func (s *Server) take(ctx context.Context, p *takePlan) ([]dataset.Tensor, error) {
	e := p.e
	if p.table != nil {
		got, err := p.table.Take(ctx, p.rows, nil)
		if err != nil {
			return nil, err
		}
		if !e.isTable() {
			t := got.Columns[0]
			t.Column = e.tensor.Column
			if e.source != nil {
				t.Column = e.source.Column
			}
			return []dataset.Tensor{t}, nil
		}
		return got.Columns, nil
	}
	if !e.isTable() {
		t, err := e.tensor.TakeRows(p.rows)
		if err != nil {
			return nil, err
		}
		return []dataset.Tensor{t}, nil
	}
	out := make([]dataset.Tensor, len(p.cols))
	for i, c := range p.cols {
		t, err := e.tensors[c].TakeRows(p.rows)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// takeEntry returns an entry holding the answer of the take ticket: the rows asked for, read
// against the version of the flight current when it starts, in one record batch of the
// flight's schema (its columns picked), and the memory budget they hold, given back when the
// entry is released. Errors are gRPC statuses.
func (s *Server) takeEntry(ctx context.Context, ticket []byte) (*entry, error) {
	p, e, releaseParse, err := s.plannedTake(ctx, ticket, "a take ticket", "DoGet")
	if err != nil {
		return nil, err
	}
	defer releaseParse()
	defer e.release()
	req := p.req
	release, err := s.reserve(ctx, req.Name, saturate.Add(saturate.Mul(p.answer, 2), p.working))
	if err != nil {
		return nil, err
	}
	var tensors []dataset.Tensor
	err = dataset.Guard(func() error {
		var err error
		tensors, err = s.take(ctx, p)
		return err
	})
	if err == nil { // read from one version of each file
		err = e.checkUnchanged()
	} else if changed := e.checkUnchanged(); changed != nil {
		err = changed
	}
	if err != nil {
		release()
		return nil, s.fileStatus(e, "DoGet", err)
	}
	copies := int64(0)
	for _, t := range tensors {
		copies = saturate.Add(copies, recordCopyBound(t))
	}
	more, err := s.reserve(ctx, req.Name, copies)
	if err != nil {
		release()
		return nil, err
	}
	out, err := s.takeRecord(p, tensors)
	if err != nil {
		more()
		release()
		return nil, s.fileStatus(e, "DoGet", err)
	}
	out.done = func() {
		more()
		release()
	}
	return out, nil
}

// takeRecord returns the entry of the rows tensors of the take p: one record batch of p's
// schema.
func (s *Server) takeRecord(p *takePlan, tensors []dataset.Tensor) (*entry, error) {
	var rec arrow.Record
	var err error
	if p.e.isTable() {
		rec, err = dataset.Batch(s.store.mem, tensors)
	} else {
		rec, err = tensors[0].Record(s.store.mem, p.req.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("flight: %s: %w", p.req.Name, err)
	}
	defer rec.Release()
	conformed, err := arrowtensor.Conform(rec, p.schema)
	if err != nil {
		return nil, err
	}
	n, err := dataset.RecordBytes(conformed)
	if err != nil {
		conformed.Release()
		return nil, fmt.Errorf("flight: %s: %w", p.req.Name, err)
	}
	e := &entry{meta: p.meta, schema: p.schema, rows: conformed.NumRows(), bytes: n, record: conformed}
	e.refs.Store(1)
	return e, nil
}

// reserve reserves n bytes of the memory budget for a request, all of them (a request larger
// than the budget fails at once), and returns what gives them back; its error is a gRPC
// status (ResourceExhausted).
func (s *Server) reserve(ctx context.Context, what string, n int64) (func(), error) {
	if s.budget == nil || n <= 0 {
		return func() {}, nil
	}
	if err := s.budget.reserve(ctx, what, n); err != nil {
		return nil, budgetStatus(ctx, err)
	}
	return func() { s.budget.release(n) }, nil
}

// plannedTake parses a take ticket or command (what: "a take ticket"), the parsing's memory
// reserved from the budget until releaseParse, finds the flight it names and plans the take
// against the flight's version now. Release the entry when done. Errors are gRPC statuses
// (method names the call in a file's).
func (s *Server) plannedTake(ctx context.Context, raw []byte, what, method string) (p *takePlan, e *entry, releaseParse func(), err error) {
	releaseParse, err = s.reserve(ctx, what, parseBytes(raw))
	if err != nil {
		return nil, nil, nil, err
	}
	req, err := parseTake(raw, s.opts.Limits.MaxElements)
	if err != nil {
		releaseParse()
		return nil, nil, nil, statusOr(err, codes.InvalidArgument)
	}
	callOf(ctx).noteFlight(req.Name, "take")
	if e, err = s.store.get(req.Name); err != nil {
		releaseParse()
		return nil, nil, nil, statusOf(err)
	}
	if p, err = s.planTake(req, e); err != nil {
		err = s.fileStatus(e, method, err)
		e.release()
		releaseParse()
		return nil, nil, nil, err
	}
	return p, e, releaseParse, nil
}

// takeInfo answers GetFlightInfo for a take command: the FlightInfo of its answer, checked
// but not read, whose one endpoint's ticket is the take (normalized: the JSON TakeTicket
// writes).
func (s *Server) takeInfo(ctx context.Context, cmd []byte) (*arrowflight.FlightInfo, error) {
	p, e, releaseParse, err := s.plannedTake(ctx, cmd, "a take command", "GetFlightInfo")
	if err != nil {
		return nil, err
	}
	defer releaseParse()
	defer e.release()
	req := p.req
	meta, _ := json.Marshal(p.meta)
	rows := int64(len(p.rows))
	epMeta, _ := json.Marshal(endpointMetadata{Rows: &rows})
	ep := &arrowflight.FlightEndpoint{Ticket: &arrowflight.Ticket{Ticket: TakeTicket(req.Name, req.Rows, req.Columns)}, AppMetadata: epMeta}
	if s.opts.Location != "" {
		ep.Location = []*arrowflight.Location{{Uri: s.opts.Location}}
	}
	fi := &arrowflight.FlightInfo{
		Schema:           arrowflight.SerializeSchema(p.schema, s.opts.Allocator),
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorCMD, Cmd: cmd},
		Endpoint:         []*arrowflight.FlightEndpoint{ep},
		TotalRecords:     rows,
		TotalBytes:       -1,
		Ordered:          true,
		AppMetadata:      meta,
	}
	if n := proto.Size(fi); n > s.opts.MaxMessageBytes { // gRPC would fail it without naming the limit
		return nil, status.Errorf(codes.ResourceExhausted, "flight: %s: a take of %d rows is a FlightInfo of %d bytes (its descriptor and its ticket each hold the rows), above the %d bytes this server sends (serve --max-message-bytes; Options.MaxMessageBytes): take fewer rows at a time, or raise the server's limit: %v",
			req.Name, rows, n, s.opts.MaxMessageBytes, limits.ErrExceeded)
	}
	return fi, nil
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 { return a/b + min(a%b, 1) }
