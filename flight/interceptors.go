package flight

import (
	"context"
	"crypto/subtle"
	"fmt"
	"runtime/debug"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// recoverUnary turns a panic in a unary handler into codes.Internal.
func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.panicStatus(info.FullMethod, r)
		}
	}()
	return handler(ctx, req)
}

// recoverStream turns a panic in a stream handler into codes.Internal.
func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.panicStatus(info.FullMethod, r)
		}
	}()
	return handler(srv, ss)
}

// panicStatus logs a handler's panic with its stack, which stays on the server, and returns
// the status the client gets: codes.Internal naming the method only.
func (s *Server) panicStatus(method string, r any) error {
	s.opts.Logger.Error("flight: a handler panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "%s: internal error", method)
}

// authUnary refuses a unary call without the server's token, but a health check's.
func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !strings.HasPrefix(info.FullMethod, healthPrefix) {
		if err := s.authorize(ctx); err != nil {
			return nil, err
		}
	}
	return handler(ctx, req)
}

// authStream refuses a stream without the server's token before its handler reads a message,
// but a health Watch.
func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !strings.HasPrefix(info.FullMethod, healthPrefix) {
		if err := s.authorize(ss.Context()); err != nil {
			return err
		}
	}
	return handler(srv, ss)
}

// authorize checks that the call's metadata holds exactly one "authorization" value,
// "Bearer TOKEN" with the server's token, when the server has one.
func (s *Server) authorize(ctx context.Context) error {
	if s.opts.Token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get("authorization")
	if len(values) != 1 {
		return status.Errorf(codes.Unauthenticated, "a bearer token is required (%d authorization values)", len(values))
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return status.Error(codes.Unauthenticated, `the authorization value is not "Bearer TOKEN"`)
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.opts.Token)) != 1 {
		return status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return nil
}
