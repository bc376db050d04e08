// Package flightreplay records the messages of Flight calls made to or by another Flight
// implementation (Arrow C++'s server and client) and replays them, byte for byte, so tests
// talk to that peer without running it.
//
// A recording is a zstd stream of tagged messages, each a tag byte, a little-endian uint32
// length and that many bytes: 'I' a FlightInfo protobuf (ListFlights lists them in order,
// GetFlightInfo finds one by descriptor path), 'S' a ticket that starts a DoGet stream, 'D' a
// FlightData protobuf of the current DoGet stream, 'P' a FlightData protobuf of the DoPut
// stream a client sent.
package flightreplay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Recording is the messages of a peer's Flight calls.
type Recording struct {
	Infos   []*arrowflight.FlightInfo            // what ListFlights and GetFlightInfo answered
	Tickets []string                             // the DoGet tickets, in the order recorded
	Streams map[string][]*arrowflight.FlightData // what DoGet sent, by ticket
	Put     []*arrowflight.FlightData            // what a client's DoPut sent
}

// AddStream records what DoGet of ticket sent.
func (r *Recording) AddStream(ticket string, msgs []*arrowflight.FlightData) {
	if r.Streams == nil {
		r.Streams = map[string][]*arrowflight.FlightData{}
	}
	if _, ok := r.Streams[ticket]; !ok {
		r.Tickets = append(r.Tickets, ticket)
	}
	r.Streams[ticket] = msgs
}

// Write writes r to path, zstd-compressed at the best level.
func (r *Recording) Write(path string) error {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		return err
	}
	put := func(tag byte, b []byte) {
		var h [5]byte
		h[0] = tag
		binary.LittleEndian.PutUint32(h[1:], uint32(len(b)))
		_, _ = zw.Write(h[:])
		_, _ = zw.Write(b)
	}
	for _, fi := range r.Infos {
		b, err := proto.Marshal(fi)
		if err != nil {
			return err
		}
		put('I', b)
	}
	for _, t := range r.Tickets {
		put('S', []byte(t))
		for _, fd := range r.Streams[t] {
			b, err := proto.Marshal(fd)
			if err != nil {
				return err
			}
			put('D', b)
		}
	}
	for _, fd := range r.Put {
		b, err := proto.Marshal(fd)
		if err != nil {
			return err
		}
		put('P', b)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Read reads a recording Write wrote.
func Read(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := zstd.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	r := &Recording{Streams: map[string][]*arrowflight.FlightData{}}
	ticket := ""
	for {
		var h [5]byte
		if _, err := io.ReadFull(zr, h[:]); err == io.EOF {
			return r, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b := make([]byte, binary.LittleEndian.Uint32(h[1:]))
		if _, err := io.ReadFull(zr, b); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch h[0] {
		case 'I':
			fi := &arrowflight.FlightInfo{}
			if err := proto.Unmarshal(b, fi); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			r.Infos = append(r.Infos, fi)
		case 'S':
			ticket = string(b)
			r.AddStream(ticket, nil)
		case 'D', 'P':
			fd := &arrowflight.FlightData{}
			if err := proto.Unmarshal(b, fd); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if h[0] == 'P' {
				r.Put = append(r.Put, fd)
			} else {
				r.Streams[ticket] = append(r.Streams[ticket], fd)
			}
		default:
			return nil, fmt.Errorf("%s: a message tagged %q", path, h[0])
		}
	}
}

// Server is a Flight server that answers as the recorded peer did.
type Server struct {
	arrowflight.BaseFlightServer
	rec  *Recording
	srv  *grpc.Server
	Addr string // HOST:PORT it listens on
}

// Serve serves rec on a new listener on 127.0.0.1 until Stop.
func Serve(rec *Recording) (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{rec: rec, srv: grpc.NewServer(grpc.MaxRecvMsgSize(1 << 30)), Addr: lis.Addr().String()}
	arrowflight.RegisterFlightServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// URI returns the server's grpc:// URI.
func (s *Server) URI() string { return "grpc://" + s.Addr }

// Stop stops the server.
func (s *Server) Stop() { s.srv.Stop() }

// ListFlights sends the recorded FlightInfos.
func (s *Server) ListFlights(_ *arrowflight.Criteria, stream arrowflight.FlightService_ListFlightsServer) error {
	for _, fi := range s.rec.Infos {
		if err := stream.Send(fi); err != nil {
			return err
		}
	}
	return nil
}

// GetFlightInfo sends the recorded FlightInfo of the descriptor's path, NotFound for any
// other, as Arrow C++ answers a KeyError.
func (s *Server) GetFlightInfo(_ context.Context, d *arrowflight.FlightDescriptor) (*arrowflight.FlightInfo, error) {
	for _, fi := range s.rec.Infos {
		if slices.Equal(fi.GetFlightDescriptor().GetPath(), d.GetPath()) {
			return fi, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no tensor %v", d.GetPath())
}

// DoGet sends the recorded stream of the ticket.
func (s *Server) DoGet(t *arrowflight.Ticket, stream arrowflight.FlightService_DoGetServer) error {
	msgs, ok := s.rec.Streams[string(t.GetTicket())]
	if !ok {
		return status.Errorf(codes.NotFound, "no tensor %q", t.GetTicket())
	}
	for _, fd := range msgs {
		if err := stream.Send(fd); err != nil {
			return err
		}
	}
	return nil
}

// SendPut sends the recorded DoPut stream to the Flight server at addr (HOST:PORT), as the
// recorded client did, and returns the PutResults' app metadata, or the server's error. With
// upTo ≥ 0 it sends only the first upTo messages and then cancels the call, as a client that
// fails halfway does.
func SendPut(ctx context.Context, addr string, msgs []*arrowflight.FlightData, upTo int) ([][]byte, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := arrowflight.NewFlightServiceClient(conn).DoPut(ctx)
	if err != nil {
		return nil, err
	}
	for i, fd := range msgs {
		if upTo >= 0 && i == upTo {
			cancel()
			_, err := stream.Recv()
			return nil, errors.Join(errors.New("flightreplay: the put was cancelled halfway"), err)
		}
		if err := stream.Send(fd); err != nil {
			break // the server ended the call: Recv returns its status
		}
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r.GetAppMetadata())
	}
}
