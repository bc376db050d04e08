package flight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	arrowflight "github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
)

// beforeStream is an error of a data URL's GET that came before its stream started (no
// connection, an HTTP error, not an Arrow stream): the endpoint's ticket is then redeemed by
// DoGet instead.
type beforeStream struct{ err error }

func (e *beforeStream) Error() string { return e.err.Error() }
func (e *beforeStream) Unwrap() error { return e.err }

// split returns an endpoint's locations DoGet takes and the data URL the client fetches
// instead: the first http:// or https:// location, none with GRPCOnly, and no http:// one
// when the client reached its server over TLS.
func (c *Client) split(locs []*arrowflight.Location) (grpcLocs []*arrowflight.Location, dataURL string) {
	for _, l := range locs {
		scheme, _, _ := strings.Cut(l.GetUri(), ":")
		switch strings.ToLower(scheme) {
		case "https":
		case "http":
			if c.origin.tls {
				continue
			}
		default:
			grpcLocs = append(grpcLocs, l)
			continue
		}
		if dataURL == "" && !c.opts.GRPCOnly {
			dataURL = l.GetUri()
		}
	}
	return grpcLocs, dataURL
}

// fetchURL reads the Arrow IPC stream a GET of u returns, each message decoded as it
// arrives, through the same decoder, limits and checks as a DoGet stream; a dense column's
// values are read from the socket straight into the result (streamDecoder.addFrom).
//
// A stream succeeds only when it ends as the data endpoint ends a whole one: its
// end-of-stream marker, then the end of the response (the last chunk: a connection cut
// after the marker is not an end) with no failure in statusHeader (endOfResponse). A stream
// without its marker fails, with the status of the response's trailer when it has one.
func (g *getter) fetchURL(ctx context.Context, c *Client, u string, block *dataset.Stacker, version *string) ([]dataset.Tensor, error) {
	where := redactURL(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &beforeStream{fmt.Errorf("%s: %w", where, err)}
	}
	req.Header.Set("Accept", arrowStreamType)
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, signature included
		}
		return nil, &beforeStream{fmt.Errorf("%s: %w", where, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if err := statusIn(resp.Header); err != nil {
			if code := status.Code(err); code != codes.PermissionDenied && code != codes.Unavailable {
				return nil, err // DoGet would say the same (not found, over the budget, ...)
			}
			return nil, &beforeStream{err}
		}
		return nil, &beforeStream{fmt.Errorf("%s: HTTP %s", where, resp.Status)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != arrowStreamType && mt != "application/octet-stream" {
		return nil, &beforeStream{fmt.Errorf("%s: a response of %s, not an Arrow IPC stream", where, mt)}
	}
	*version = resp.Header.Get(versionHeader)
	ts, err := g.readStream(resp.Body, int64(c.opts.MaxRecvMessageBytes), block)
	if err == nil {
		if err = endOfResponse(resp); err == nil {
			return ts, nil
		}
		if st := statusIn(resp.Trailer); st != nil {
			return nil, st
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// The server stopped the stream: its trailer says why.
		io.CopyN(io.Discard, resp.Body, 1<<20)
		if st := statusIn(resp.Trailer); st != nil {
			return nil, st
		}
	}
	var tooBig *messageTooLarge
	if errors.As(err, &tooBig) {
		return nil, &remoteError{sentinel: limits.ErrExceeded, status: status.Error(codes.ResourceExhausted, "message too large"), msg: fmt.Sprintf(
			"a message of %d bytes from %s, above the receive limit of %d bytes (ClientOptions.MaxRecvMessageBytes; --max-recv-message-bytes in the CLI)", tooBig.size, req.URL.Host, tooBig.limit)}
	}
	return nil, fmt.Errorf("%s: %w", where, err)
}

// messageTooLarge is readStream's error for a message above the receive limit.
type messageTooLarge struct{ size, limit int64 }

func (e *messageTooLarge) Error() string {
	return fmt.Sprintf("a message of %d bytes, above the receive limit of %d bytes", e.size, e.limit)
}

// readStream decodes the Arrow IPC stream r holds, up to its end-of-stream marker, each
// message checked against the limits (one message at most maxMessage bytes, the stream at
// most the getter's) before its body is read, and returns the tensors it holds (with block,
// its rows go there).
func (g *getter) readStream(r io.Reader, maxMessage int64, block *dataset.Stacker) ([]dataset.Tensor, error) {
	dec := &streamDecoder{name: g.name, lim: g.lim, capRows: g.rows, capBytes: g.limit, block: block}
	defer dec.release()
	schemaChecked := false
	for off := int64(0); ; {
		meta, bodyLen, err := ipc.ReadMessageHead(r, off, g.lim)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size := 8 + int64(len(meta)) + bodyLen
		if size > maxMessage {
			return nil, &messageTooLarge{size, maxMessage}
		}
		if err := g.count(int(size)); err != nil {
			return nil, err
		}
		if err := dec.addFrom(meta, bodyLen, r); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("ipc: message at byte %d: input ends inside the body: %w", off, io.ErrUnexpectedEOF)
			}
			return nil, err
		}
		if err := g.checkSchema(dec, &schemaChecked); err != nil {
			return nil, err
		}
		off += size
	}
	return dec.tensors()
}

// endOfResponse returns nil when the response, read up to its stream's end-of-stream marker,
// ends there: no byte after the marker, the body's end reached (for a chunked response, its
// last chunk) and no failure in its trailer. Otherwise it returns the trailer's status, or
// an error wrapping ipc.ErrInvalid (bytes after the marker) or io.ErrUnexpectedEOF (the
// response cut).
func endOfResponse(resp *http.Response) error {
	var one [1]byte
	n, err := io.ReadFull(resp.Body, one[:])
	switch {
	case n > 0:
		return fmt.Errorf("bytes after the end-of-stream marker: %w", ipc.ErrInvalid)
	case err != io.EOF:
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %v", io.ErrUnexpectedEOF, err)
		}
		return fmt.Errorf("the response ends early, after the end-of-stream marker: %w", err)
	}
	return statusIn(resp.Trailer)
}

// statusIn returns the gRPC status a data endpoint's header or trailer gives, nil when it
// gives none.
func statusIn(h http.Header) error {
	v := h.Get(statusHeader)
	code, msg, ok := strings.Cut(v, " ")
	n, err := strconv.Atoi(code)
	if !ok || err != nil || n <= 0 || n > 16 {
		return nil
	}
	return status.Error(codes.Code(n), msg)
}

// redactURL returns u without its query (a presigned URL's signature), for messages.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "a data URL"
	}
	p.RawQuery, p.Fragment, p.User = "", "", nil
	return p.String()
}

// hostOf returns the host:port of URL u.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return ""
}
