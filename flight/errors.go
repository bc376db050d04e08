package flight

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/limits"
	"github.com/ndarrow/ndarrow/table"
)

// tooLargeForMessage is a row or a dictionary larger than a message of the limit holds, and the
// option that raises the limit: it wraps the *dataset.TooLargeError (ErrBatchTooLarge).
type tooLargeForMessage struct {
	err    *dataset.TooLargeError
	limit  int    // the message limit, framing included
	raise  string // what raises it: "serve it with --max-message-bytes"
	option string // the option in Go: "flight.Options.MaxMessageBytes"
}

func (e *tooLargeForMessage) Error() string {
	need := (e.err.Bytes + messageHeadroom + minMessageBytes - 1) / minMessageBytes * minMessageBytes
	alone := "a row goes whole in one message"
	if e.err.Row < 0 {
		alone = "a dictionary goes whole in a message of its own"
	}
	return fmt.Sprintf("%s holds %d bytes, more than a message of the %d-byte limit holds (%d, the rest is framing; %s): %s %d or more (%s)",
		e.err.What(), e.err.Bytes, e.limit, e.limit-messageHeadroom, alone, e.raise, need, e.option)
}

// Unwrap returns the dataset's error.
func (e *tooLargeForMessage) Unwrap() error { return e.err }

// splitTooLarge returns err, an error of splitting a record into messages of limit bytes,
// saying what raises the limit (raise, and option in Go) when what did not fit is a row or a
// dictionary; err itself otherwise.
func splitTooLarge(err error, limit int, raise, option string) error {
	var tl *dataset.TooLargeError
	if errors.As(err, &tl) {
		return &tooLargeForMessage{err: tl, limit: limit, raise: raise, option: option}
	}
	return err
}

// ofFlight returns err prefixed "flight: NAME: ", unless its text begins so already (a
// server's error about the flight, passed on): the flight named once.
func ofFlight(name string, err error) error {
	if strings.HasPrefix(err.Error(), "flight: "+name+": ") {
		return err
	}
	return fmt.Errorf("flight: %s: %w", name, err)
}

// ErrUnauthenticated is returned by a Client when the server refused its credentials.
var ErrUnauthenticated = errors.New("flight: unauthenticated")

// ErrReadOnly is returned by a Client whose upload or delete a read-only server refused
// (codes.PermissionDenied): one started without serve --writable (Options.Writable).
var ErrReadOnly = errors.New("flight: the server is read-only")

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

// ErrUnreachable is returned by a Client that cannot reach a server: the connection was
// refused or timed out, or the name resolves to no address. Its text says so in words
// ("cannot reach HOST:PORT: connection refused").
var ErrUnreachable = errors.New("flight: cannot reach the server")

// ErrTLS is returned by a Client whose connection failed on TLS: the server speaks TLS and
// the client dialed grpc://, or the reverse, or the client does not accept the server's
// certificate. Its text says which scheme to dial, or what the certificate lacks, in one line
// ("127.0.0.1:8815 does not speak TLS: dial grpc://127.0.0.1:8815 (…)").
var ErrTLS = errors.New("flight: TLS failed")

// remote turns an error of a call to the server of c into one the sentinels of this package
// match.
func (c *Client) remote(err error) error {
	if e := tlsFailure(c.origin, c.opts.TLS != nil && (len(c.opts.TLS.Certificates) > 0 || c.opts.TLS.GetClientCertificate != nil), err); e != nil {
		return e
	}
	return fromRemote(c.origin.host, err)
}

// tlsFailure returns, for the error of a call to the server at o that failed connecting on
// TLS (the client presenting a certificate of its own when withCert), an error matching ErrTLS
// that says in words what to do; nil for any other error.
func tlsFailure(o origin, withCert bool, err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil || st.Code() != codes.Unavailable {
		return nil
	}
	msg, host := st.Message(), o.host
	var text string
	switch {
	case o.tls && strings.Contains(msg, "first record does not look like a TLS handshake"):
		text = fmt.Sprintf("%s does not speak TLS: dial grpc://%s, not grpc+tls:// (tls: first record does not look like a TLS handshake)", host, host)
	case o.tls && strings.Contains(msg, "authentication handshake failed: EOF"):
		text = fmt.Sprintf("%s closed the connection during the TLS handshake: if it serves plaintext, dial grpc://%s (authentication handshake failed: EOF)", host, host)
	case !o.tls && strings.Contains(msg, "error reading server preface"), !o.tls && strings.Contains(msg, "initial http2 frame from server is not a settings frame"):
		text = fmt.Sprintf("%s closed the connection before speaking gRPC: if it serves TLS, dial grpc+tls://%s (%s)", host, host, connectionError(msg))
	case o.tls && strings.Contains(msg, "certificate signed by unknown authority"):
		text = fmt.Sprintf("the certificate of %s is signed by an authority this client does not trust: give its CA (ndarrow --tls-ca; ClientOptions.TLS.RootCAs) (x509: certificate signed by unknown authority)", host)
	case o.tls && (strings.Contains(msg, "doesn't contain any IP SANs") || strings.Contains(msg, "certificate is valid for") ||
		strings.Contains(msg, "relies on legacy Common Name field") || strings.Contains(msg, "certificate is not valid for any names")):
		text = fmt.Sprintf("the certificate of %s does not name %s in a subjectAltName: dial a host it names, or reissue it with subjectAltName=DNS:…,IP:… (%s)", host, hostName(host), connectionError(msg))
	case o.tls && !withCert && (strings.Contains(msg, "remote error: tls: certificate required") || strings.Contains(msg, "remote error: tls: handshake failure")):
		text = fmt.Sprintf("%s refused the TLS handshake: if it requires a client certificate (mutual TLS), give one (ndarrow --tls-cert and --tls-key; ClientOptions.TLS.Certificates) (%s)", host, connectionError(msg))
	case o.tls && withCert && (strings.Contains(msg, "remote error: tls: certificate required") || strings.Contains(msg, "remote error: tls: handshake failure") ||
		strings.Contains(msg, "remote error: tls: bad certificate") || strings.Contains(msg, "remote error: tls: unknown certificate authority")):
		// A client sends its certificate only to a server that names the certificate's CA.
		text = fmt.Sprintf("%s refused this client's certificate: it must be signed by a CA the server trusts (serve --tls-client-ca) (%s)", host, connectionError(msg))
	case o.tls && strings.Contains(msg, "certificate has expired or is not yet valid"):
		text = fmt.Sprintf("the certificate of %s has expired or is not yet valid (%s)", host, connectionError(msg))
	default:
		return nil
	}
	return &remoteError{sentinel: ErrTLS, status: err, msg: text}
}

// connectionError returns what gRPC says of a failed connection, from the message of its
// Unavailable status ("connection error: desc = \"transport: authentication handshake failed:
// tls: …\""): the part after its prefixes.
func connectionError(msg string) string {
	msg = strings.TrimSuffix(msg, `"`)
	if _, after, ok := strings.Cut(msg, `desc = "`); ok {
		msg = after
	}
	msg = strings.TrimPrefix(msg, "transport: ")
	msg = strings.TrimPrefix(msg, "authentication handshake failed: ")
	return strings.TrimPrefix(msg, "tls: failed to verify certificate: ")
}

// hostName returns the host of host:port.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// fromRemote turns a gRPC error of a call to the server at host into one the sentinels of
// this package match.
func fromRemote(host string, err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	var sentinel error
	switch st.Code() {
	case codes.NotFound:
		sentinel = ErrNotFound
	case codes.OutOfRange: // a take's row outside the flight
		sentinel = table.ErrRowRange
	case codes.Unauthenticated:
		sentinel = ErrUnauthenticated
	case codes.PermissionDenied: // an upload or delete of a read-only server
		if !strings.HasPrefix(st.Message(), ErrReadOnly.Error()) {
			return err
		}
		return &remoteError{sentinel: ErrReadOnly, status: err, msg: st.Message()}
	case codes.FailedPrecondition: // a batches cursor of files since changed, a directory's tensor deleted, a part unreadable
		if strings.HasPrefix(st.Message(), ErrFromDirectory.Error()) {
			return &remoteError{sentinel: ErrFromDirectory, status: err, msg: st.Message()}
		}
		if strings.Contains(st.Message(), ": "+ErrUnreadable.Error()+" ") {
			return &remoteError{sentinel: ErrUnreadable, status: err, msg: st.Message()}
		}
		if !strings.Contains(st.Message(), "changed since the cursor") {
			return err
		}
		sentinel = table.ErrTableChanged
	case codes.InvalidArgument:
		if !strings.Contains(st.Message(), ErrBatches.Error()) {
			return err
		}
		sentinel = ErrBatches
		if strings.Contains(st.Message(), table.ErrCursor.Error()) {
			sentinel = errors.Join(ErrBatches, table.ErrCursor)
		}
	case codes.ResourceExhausted:
		if got, limit, ok := tooLarge(st.Message()); ok {
			return &remoteError{sentinel: limits.ErrExceeded, status: err, msg: fmt.Sprintf(
				"a message of %d bytes from %s, above the receive limit of %d bytes (ClientOptions.MaxRecvMessageBytes; --max-recv-message-bytes in the CLI)", got, host, limit)}
		}
		return err
	case codes.Unavailable:
		if strings.HasPrefix(st.Message(), ErrShuttingDown.Error()) { // refused or cut by a server's Shutdown
			return &remoteError{sentinel: ErrShuttingDown, status: err, msg: st.Message()}
		}
		if reason, ok := unreachable(st.Message()); ok {
			return &remoteError{sentinel: ErrUnreachable, status: err, msg: "cannot reach " + host + ": " + reason}
		}
		return err
	default:
		return err
	}
	return &remoteError{sentinel: sentinel, status: err, msg: st.Code().String() + ": " + st.Message()}
}

// tooLarge reads gRPC's "grpc: received message larger than max (16777393 vs. 4194304)".
func tooLarge(msg string) (got, limit int64, ok bool) {
	_, rest, found := strings.Cut(msg, "received message larger than max (")
	if !found {
		return 0, 0, false
	}
	n, err := fmt.Sscanf(rest, "%d vs. %d)", &got, &limit)
	return got, limit, err == nil && n == 2
}

// tooLargeToSend reads gRPC's "grpc: trying to send message larger than max (16777393 vs.
// 4194304)": a message above the sender's limit.
func tooLargeToSend(msg string) (got, limit int64, ok bool) {
	_, rest, found := strings.Cut(msg, "trying to send message larger than max (")
	if !found {
		return 0, 0, false
	}
	n, err := fmt.Sscanf(rest, "%d vs. %d)", &got, &limit)
	return got, limit, err == nil && n == 2
}

// unreachable returns, in words, why gRPC could not connect, from the message of its
// Unavailable status ("connection error: desc = \"transport: Error while dialing: dial tcp
// 127.0.0.1:1: connect: connection refused\""), and whether the message says it could not.
func unreachable(msg string) (string, bool) {
	msg = strings.TrimSuffix(msg, `"`)
	if strings.Contains(msg, "produced zero addresses") {
		return "the name resolves to no address", true
	}
	_, dial, ok := strings.Cut(msg, "dial tcp")
	if !ok {
		return "", false
	}
	if _, reason, ok := strings.Cut(dial, "connect: "); ok {
		return reason, true // connection refused, no route to host, …
	}
	dial = strings.TrimPrefix(dial, ":")
	if i := strings.Index(dial, ": "); i >= 0 && !strings.HasPrefix(strings.TrimSpace(dial), "lookup") {
		return dial[i+2:], true // dial tcp ADDR: i/o timeout
	}
	return strings.TrimSpace(dial), true // lookup HOST: no such host
}
