package flight

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrUnauthenticated is returned by a Client when the server refused its credentials.
var ErrUnauthenticated = errors.New("flight: unauthenticated")

// remoteError is an error a server returned: its message, the gRPC status (status.Code and
// status.FromError see it) and, where one fits, a sentinel of this package (errors.Is sees
// it).
type remoteError struct {
	sentinel error
	status   error
	msg      string
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return []error{e.sentinel, e.status} }

// GRPCStatus returns the server's status.
func (e *remoteError) GRPCStatus() *status.Status { return status.Convert(e.status) }

// fromRemote turns a gRPC error into one the sentinels of this package match.
func fromRemote(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	var sentinel error
	switch st.Code() {
	case codes.NotFound:
		sentinel = ErrNotFound
	case codes.Unauthenticated:
		sentinel = ErrUnauthenticated
	default:
		return err
	}
	return &remoteError{sentinel: sentinel, status: err, msg: st.Code().String() + ": " + st.Message()}
}
