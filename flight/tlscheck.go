package flight

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"
)

// What a Server says of TLS in its log (Options.Logger):
//
//   - at Serve, a warning for each certificate of Options.TLS that clients will refuse: expired,
//     not yet valid, naming no host in a subjectAltName (a CN alone, which Go and gRPC clients
//     refuse), or not covering the host of Options.Location or the address listened on; and,
//     when it listens on every address, which names and addresses the certificate covers;
//   - a warning for each TLS handshake that fails (a connection that closes or says nothing
//     before its handshake only at debug: port probes), naming the client and, where the
//     first bytes tell, what it spoke instead ("the client speaks gRPC without TLS: it
//     should dial grpc+tls://").

// logCertificates logs what clients will refuse of the server's certificates served on addr.
func (s *Server) logCertificates(addr net.Addr) {
	warnings, notes := certificateProblems(s.opts.TLS.Certificates, addr, s.opts.Location, time.Now())
	for _, w := range warnings {
		s.opts.Logger.Warn("flight: " + w)
	}
	for _, n := range notes {
		s.opts.Logger.Info("flight: " + n)
	}
}

// certificateProblems returns, one sentence each, what clients will refuse of the leaf
// certificates certs served on addr (a listener's) and at location (a URI, "" for none), and
// what they cover when addr is every address of the machine.
func certificateProblems(certs []tls.Certificate, addr net.Addr, location string, now time.Time) (warnings, notes []string) {
	for _, cert := range certs {
		leaf := cert.Leaf
		if leaf == nil && len(cert.Certificate) > 0 {
			var err error
			if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
				warnings = append(warnings, fmt.Sprintf("the TLS certificate does not parse: %v", err))
				continue
			}
		}
		if leaf == nil {
			continue
		}
		name := "the TLS certificate " + certificateName(leaf)
		switch {
		case now.After(leaf.NotAfter):
			warnings = append(warnings, fmt.Sprintf("%s expired on %s: clients refuse it (x509: certificate has expired): renew it",
				name, leaf.NotAfter.UTC().Format(time.RFC3339)))
		case now.Before(leaf.NotBefore):
			warnings = append(warnings, fmt.Sprintf("%s is not valid until %s: clients refuse it until then (x509: certificate is not yet valid): check this machine's clock, or reissue it",
				name, leaf.NotBefore.UTC().Format(time.RFC3339)))
		}
		if len(leaf.DNSNames)+len(leaf.IPAddresses)+len(leaf.URIs) == 0 {
			warnings = append(warnings, name+" names no host in a subjectAltName, only its subject's CN: clients refuse it (x509: certificate relies on legacy Common Name field; doesn't contain any IP SANs): reissue it with subjectAltName=DNS:HOST,IP:ADDRESS (README, Running a server)")
			continue
		}
		covers := certificateCovers(leaf)
		if u, err := url.Parse(location); location != "" && err == nil && u.Hostname() != "" {
			if err := leaf.VerifyHostname(u.Hostname()); err != nil {
				warnings = append(warnings, fmt.Sprintf("%s covers %s, not %s (the host of the server's location): clients dialing %s refuse it",
					name, covers, u.Hostname(), location))
			}
		}
		tcp, ok := addr.(*net.TCPAddr)
		if !ok {
			continue
		}
		switch ip := tcp.IP; {
		case ip == nil || ip.IsUnspecified():
			notes = append(notes, fmt.Sprintf("serving TLS on every address of the machine: clients must dial a host %s covers: %s", name, covers))
		case leaf.VerifyHostname(ip.String()) != nil && len(leaf.DNSNames) == 0:
			warnings = append(warnings, fmt.Sprintf("%s covers %s, not %s, the address the server listens on: clients dialing it refuse it (doesn't contain any IP SANs)",
				name, covers, ip))
		case leaf.VerifyHostname(ip.String()) != nil:
			notes = append(notes, fmt.Sprintf("%s covers %s, not %s, the address the server listens on: clients must dial one of its names", name, covers, ip))
		}
	}
	return warnings, notes
}

// certificateName names a certificate in the log: its subject, or its serial number.
func certificateName(c *x509.Certificate) string {
	if s := c.Subject.String(); s != "" {
		return `"` + s + `"`
	}
	return "of serial number " + c.SerialNumber.String()
}

// certificateCovers lists the hosts a certificate's subjectAltNames cover, as openssl writes
// them: "DNS:a, IP:127.0.0.1".
func certificateCovers(c *x509.Certificate) string {
	var names []string
	for _, d := range c.DNSNames {
		names = append(names, "DNS:"+d)
	}
	for _, ip := range c.IPAddresses {
		names = append(names, "IP:"+ip.String())
	}
	for _, u := range c.URIs {
		names = append(names, "URI:"+u.String())
	}
	return strings.Join(names, ", ")
}

// logHandshake logs the failed TLS handshake of the connection from remote: at warn, with what
// the client spoke instead or did not accept where the error tells; at debug when the
// connection closed or said nothing before it began (a port probe, a load balancer's check).
func logHandshake(log *slog.Logger, remote net.Addr, err error) {
	client := ""
	if remote != nil {
		client = remote.String()
	}
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) && ne.Timeout() {
		log.Debug("flight: a connection ended before its TLS handshake", "client", client, "err", err.Error())
		return
	}
	attrs := []any{"client", client, "err", err.Error()}
	if hint := handshakeHint(err); hint != "" {
		attrs = append(attrs, "hint", hint)
	}
	log.Warn("flight: TLS handshake failed", attrs...)
}

// handshakeHint says what a failed server handshake's error tells of the client: what it
// spoke instead of TLS, or what it did not accept.
func handshakeHint(err error) string {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		first := string(rh.RecordHeader[:])
		switch {
		case strings.HasPrefix(first, "PRI *"):
			return "the client speaks gRPC without TLS: it should dial grpc+tls://"
		case strings.HasPrefix(first, "GET ") || strings.HasPrefix(first, "HEAD ") || strings.HasPrefix(first, "POST "):
			return "the client speaks HTTP without TLS: this server's data URLs are https://"
		}
		return "the client does not speak TLS"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "remote error: tls: bad certificate"), strings.Contains(msg, "remote error: tls: unknown certificate authority"):
		return "the client does not trust this server's certificate: it needs the CA that signed it (ndarrow --tls-ca), and to dial a host the certificate names"
	case strings.Contains(msg, "didn't provide a certificate"):
		return "mutual TLS: the client sent no certificate (ndarrow --tls-cert and --tls-key)"
	case strings.Contains(msg, "failed to verify certificate"):
		return "mutual TLS: the client's certificate is not signed by a CA this server trusts (serve --tls-client-ca)"
	}
	return ""
}

// lingerClose closes c, a connection whose TLS handshake failed, once the client has read the
// alert the server sent (certificate required, say): its writes end, what the client still
// sends is read and dropped for up to a second. Closed at once, the connection would be reset
// under the alert, and the client told only "broken pipe".
func lingerClose(c net.Conn) {
	defer c.Close()
	tcp, ok := c.(interface{ CloseWrite() error })
	if !ok || tcp.CloseWrite() != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// loggedTLS is gRPC's TLS credentials, logging the handshakes that fail (a Server with
// GRPCOnly, where gRPC terminates TLS).
type loggedTLS struct {
	credentials.TransportCredentials
	log *slog.Logger
}

func (c loggedTLS) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	lc := &lingeringConn{Conn: raw}
	conn, info, err := c.TransportCredentials.ServerHandshake(lc)
	if err != nil {
		logHandshake(c.log, raw.RemoteAddr(), err)
		return conn, info, err
	}
	lc.handshook.Store(true)
	return conn, info, nil
}

// lingeringConn is a connection whose Close, until its TLS handshake is done (handshook), is
// lingerClose's: the client reads the alert of a handshake that failed.
type lingeringConn struct {
	net.Conn
	handshook atomic.Bool
}

func (c *lingeringConn) Close() error {
	if c.handshook.Load() {
		return c.Conn.Close()
	}
	lingerClose(c.Conn)
	return nil
}

func (c loggedTLS) Clone() credentials.TransportCredentials {
	return loggedTLS{c.TransportCredentials.Clone(), c.log}
}

// handshakeLoggingListener is a tls.NewListener's listener whose connections log a failed
// handshake (a Server on a listener that is not TCP's).
type handshakeLoggingListener struct {
	net.Listener
	log *slog.Logger
}

func (l *handshakeLoggingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*tls.Conn)
	if !ok {
		return c, nil
	}
	return &handshakeLoggingConn{Conn: tc, log: l.log}, nil
}

// handshakeLoggingConn is a server's TLS connection that handshakes at its first read or
// write, logging a failure.
type handshakeLoggingConn struct {
	*tls.Conn
	log  *slog.Logger
	once sync.Once
}

func (c *handshakeLoggingConn) handshake() {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sniffTimeout)
		defer cancel()
		if err := c.Conn.HandshakeContext(ctx); err != nil {
			logHandshake(c.log, c.RemoteAddr(), err)
		}
	})
}

func (c *handshakeLoggingConn) Read(p []byte) (int, error) {
	c.handshake()
	return c.Conn.Read(p)
}

func (c *handshakeLoggingConn) Write(p []byte) (int, error) {
	c.handshake()
	return c.Conn.Write(p)
}
