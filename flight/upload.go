package flight

import (
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/saturate"
)

// entryOverhead is what every stored or staged upload counts against the memory budget beyond
// its values (its schema, its metadata, its place in the store): so that uploads of nothing
// are bounded in number too.
const entryOverhead = 4 << 10

// DoPut stores an upload: the first message's descriptor names the tensor, the stream is one
// tensor's record batches (or a table's), each decoded as it arrives by the one verified
// decoder, within Options.Limits and MaxPutBytes, and checked whole before the store changes.
//
// Every byte an upload makes the server hold is reserved from the memory budget before it is
// allocated — each message's values as they are copied out of gRPC's frames (a dense
// column's straight into the result, which grows as rows come), the copies the decoder
// makes, the record batches a table keeps — and stays reserved while the tensors are staged
// or stored, until they are deleted or replaced. An upload that does not fit fails with
// ResourceExhausted naming the budget, and holds nothing after.
//
// A server that is not Options.Writable refuses every upload before reading it, with
// codes.PermissionDenied (ErrReadOnly).
func (s *Server) DoPut(stream arrowflight.FlightService_DoPutServer) error {
	if err := s.refuseWrite("an upload"); err != nil {
		return err
	}
	up := &upload{s: s, res: s.budget.newReservation(stream.Context(), "an upload"), call: callOf(stream.Context())}
	defer up.release()
	msg := &putMessage{decode: up.decode}
	for {
		err := stream.RecvMsg(msg)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err // gRPC has told the client (a message over MaxRecvMessageBytes: "larger than max")
		}
		if msg.err != nil {
			return msg.err
		}
	}
	if up.dec == nil {
		return status.Error(codes.InvalidArgument, "an upload of no message")
	}
	tensors, err := up.dec.tensors()
	if err != nil {
		return uploadStatus(err)
	}
	if len(tensors) > 0 {
		up.call.noteRowsReceived(tensors[0].Rows()) // a table's columns have as many
	}
	// One tensor is stored under the descriptor's name; a table's columns under NAME.COLUMN,
	// as serve names the columns of a file NAME.arrow, and the table, all of them together,
	// under NAME.
	names := []string{up.name}
	var entries []*entry
	if len(tensors) > 1 {
		names, entries, err = up.tableEntries(tensors)
	} else {
		entries, err = up.entries(names, tensors)
	}
	if err != nil {
		return err
	}
	if up.tx != "" {
		for i, e := range entries {
			if err := s.staged.add(up.tx, names[i], e); err != nil {
				for _, e := range entries[i:] {
					e.release()
				}
				return statusOf(err) // those staged go with the transaction
			}
		}
	} else {
		s.store.putAll(names, entries)
	}
	for i, e := range entries {
		meta := e.meta
		meta.Name = names[i]
		if len(tensors) == 1 { // the columns the stream had beside its one tensor
			for _, l := range up.dec.leftOut() {
				meta.LeftOut = append(meta.LeftOut, leftOutMetadata(l))
			}
		}
		body, _ := json.Marshal(meta)
		if err := stream.Send(&arrowflight.PutResult{AppMetadata: body}); err != nil {
			return err
		}
	}
	return nil
}

// refuseWrite returns, unless the server is Writable, the status that refuses what (an
// upload, a delete) on a read-only server: codes.PermissionDenied, one line saying what
// enables it.
func (s *Server) refuseWrite(what string) error {
	if s.opts.Writable {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "%v: %s is refused; serve --writable (flight.Options.Writable) takes uploads and deletes", ErrReadOnly, what)
}

// warnWritable warns, on a Writable server without a token, that any client that reaches it
// can change what it serves.
func (s *Server) warnWritable() {
	if s.opts.Writable && s.opts.Token == "" {
		s.opts.Logger.Warn("flight: the server takes uploads and deletes (serve --writable) from any client that reaches it: it has no token (serve --token, $NDARROW_TOKEN)")
	}
}

// putMessage is what DoPut receives each message into: serverCodec hands the FlightData, as
// the frames gRPC received it in, to decode, and keeps its error (which is a status).
type putMessage struct {
	decode  func(desc, header []byte, body [][]byte) error
	arrived func() // called when the message has arrived, before it is decoded
	err     error
}

// upload is one DoPut under way.
type upload struct {
	s        *Server
	res      *reservation // of the memory budget: everything the upload holds
	dec      *streamDecoder
	name, tx string
	call     *call // its gRPC call's, for the access record
	received int64 // the bytes of its messages so far
	handed   bool  // res belongs to the entries made
}

// decode decodes one message of the upload; the first names the tensor.
func (u *upload) decode(desc, header []byte, body [][]byte) error {
	if u.dec == nil {
		if err := u.start(desc); err != nil {
			return err
		}
	}
	size := int64(len(header))
	for _, b := range body {
		size += int64(len(b))
	}
	if u.received += size; u.received > u.s.opts.MaxPutBytes {
		return status.Errorf(codes.ResourceExhausted, "an upload over %d bytes", u.s.opts.MaxPutBytes)
	}
	if err := u.dec.addParts(header, body); err != nil {
		return uploadStatus(err)
	}
	return nil
}

// start takes the name (and the transaction) of the upload from its first message's
// descriptor.
func (u *upload) start(desc []byte) error {
	var d *arrowflight.FlightDescriptor
	if desc != nil {
		d = &arrowflight.FlightDescriptor{}
		if err := proto.Unmarshal(desc, d); err != nil {
			return status.Errorf(codes.InvalidArgument, "flight: FlightData descriptor: %v", err)
		}
	}
	name, _, err := nameOf(d)
	if d != nil && d.Type == arrowflight.DescriptorCMD && strings.HasPrefix(string(d.Cmd), stageCommand) {
		req, perr := parseStage([]byte(strings.TrimPrefix(string(d.Cmd), stageCommand)))
		if perr != nil {
			return status.Error(codes.InvalidArgument, perr.Error())
		}
		u.tx, name, err = req.Tx, req.Name, nil
	}
	if err != nil {
		return err
	}
	if err := CheckName(name); err != nil {
		return statusOf(err)
	}
	u.name = name
	kind := ""
	if u.tx != "" {
		kind = "stage"
	}
	u.call.noteFlight(name, kind)
	u.res.what = "the upload of " + name
	u.dec = &streamDecoder{name: name, lim: u.s.opts.Limits, reserver: u.res}
	return nil
}

// entries makes the store's entries of the upload's tensors, each reserving what it adds to
// them, which share the upload's reservation from then on: it is given back when the last of
// them is released.
func (u *upload) entries(names []string, tensors []dataset.Tensor) ([]*entry, error) {
	held := &sharedReservation{r: u.res, free: func() {}}
	var entries []*entry
	drop := func() {
		for _, e := range entries {
			e.release()
		}
	}
	for i, t := range tensors {
		if err := u.res.Reserve(entryOverhead + recordCopyBound(t)); err != nil {
			drop()
			return nil, statusOf(err)
		}
		e, err := u.s.store.newEntry(names[i], t)
		if err != nil {
			drop()
			return nil, uploadStatus(err)
		}
		held.refs.Add(1)
		e.held = held
		entries = append(entries, e)
	}
	// The entries view the decoder's storage: theirs from now on.
	held.free, u.handed = u.dec.keepStorage(), true
	return entries, nil
}

// tableEntries makes the store's entries of an upload of a table, tensors its columns: each
// column's, named NAME.COLUMN, and the table's, named NAME, last, whose record batch the
// columns' share; what that batch copies is reserved first (recordCopyBound). They share the
// upload's reservation from then on, as entries' do.
func (u *upload) tableEntries(tensors []dataset.Tensor) ([]string, []*entry, error) {
	need := int64(len(tensors)+1) * entryOverhead
	for _, t := range tensors { // each names its Column (dataset.FromRecords)
		need = saturate.Add(need, recordCopyBound(t))
	}
	if err := u.res.Reserve(need); err != nil {
		return nil, nil, statusOf(err)
	}
	table, columns, err := u.s.store.newTableEntry(u.name, tensors, u.dec.leftOut())
	if err != nil {
		return nil, nil, uploadStatus(err)
	}
	entries := append(columns, table)
	names := make([]string, len(entries))
	held := &sharedReservation{r: u.res, free: u.dec.keepStorage()}
	held.refs.Store(int64(len(entries)))
	for i, e := range entries {
		e.held = held
		names[i] = u.name // the table's, last
		if i < len(tensors) {
			names[i] = tensors[i].Name
		}
	}
	u.handed = true
	return names, entries, nil
}

// release lets go of the decoder, and of the reservation unless entries hold it.
func (u *upload) release() {
	if u.dec != nil {
		u.dec.release()
	}
	if !u.handed {
		u.res.Close()
	}
}

// sharedReservation is the reservation of an upload and the storage its tensors view, held by
// the entries made of it and given back when the last is released.
type sharedReservation struct {
	r    *reservation
	free func() // the storage (streamDecoder.keepStorage)
	refs atomic.Int64
}

func (h *sharedReservation) release() {
	if h.refs.Add(-1) == 0 {
		h.free()
		h.r.Close()
	}
}
