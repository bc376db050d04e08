package flight

import (
	"context"

	flightgen "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// A Server answers gRPC's standard health service (grpc.health.v1.Health: Check, Watch, List)
// on its port, without a token (the only calls a Server takes without one): SERVING, for the
// whole server ("") and for arrow.flight.protocol.FlightService, from NewServer on;
// NOT_SERVING once it drains (Draining). A Watch is told NOT_SERVING then ends (Unavailable),
// so that it does not hold up a graceful shutdown. Probes such as grpc_health_probe and
// Kubernetes' grpc probes use Check.

// newHealth returns the health service of a server: SERVING.
func newHealth() *health.Server {
	h := health.NewServer()
	h.SetServingStatus(flightgen.FlightService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	return h
}

// healthDraining has the health service answer NOT_SERVING, and says so in the log with what
// is under way. Shutdown calls it once the server drains (Draining), before it waits.
func (s *Server) healthDraining() {
	s.health.Shutdown()
	st := s.Status()
	s.opts.Logger.Info("flight: draining: health NOT_SERVING", "calls", st.Calls, "data_streams", st.DataStreams, "connections", st.Connections)
}

// healthService is the health service a Server registers: gRPC's, whose Watch ends once the
// server drains.
type healthService struct {
	*health.Server
	s *Server
}

// Watch sends the status of the service asked for as it changes (gRPC's Watch), and ends once
// the server drains, after telling NOT_SERVING.
func (h healthService) Watch(req *healthpb.HealthCheckRequest, stream healthgrpc.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	err := h.Server.Watch(req, &drainingWatch{Health_WatchServer: stream, ctx: ctx, cancel: cancel, s: h.s})
	if h.s.Draining() && stream.Context().Err() == nil {
		return status.Error(codes.Unavailable, "flight: the server is shutting down")
	}
	return err
}

// drainingWatch is the stream of a Watch, whose context ends once it has sent a status other
// than SERVING while the server drains.
type drainingWatch struct {
	healthgrpc.Health_WatchServer
	ctx    context.Context
	cancel context.CancelFunc
	s      *Server
}

func (w *drainingWatch) Context() context.Context { return w.ctx }

func (w *drainingWatch) Send(m *healthpb.HealthCheckResponse) error {
	err := w.Health_WatchServer.Send(m)
	if m.GetStatus() != healthpb.HealthCheckResponse_SERVING && w.s.Draining() {
		w.cancel()
	}
	return err
}
