package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// httpStore reads objects from an HTTP server by range requests.
type httpStore struct{}

// httpClient is the client of http:// and https:// objects: no overall timeout (a large
// range takes as long as it takes; stalls are watched per request), the default transport's
// proxies and TLS.
var httpClient = boundedClient

// url returns the URL of u as the server is asked for it.
func (u URI) url() string {
	s := u.Scheme + "://" + u.Bucket + "/" + u.Key
	if u.query != "" {
		s += "?" + u.query
	}
	return s
}

// do sends a GET (or HEAD) for u with headers, under a stall watch, and returns the response
// of one of the statuses ok; the caller reads the body under g and stops g.
func (httpStore) do(ctx context.Context, method string, u URI, what string, headers map[string]string, ok ...int) (*http.Response, *stallGuard, context.Context, error) {
	ctx, g := watch(ctx)
	req, err := http.NewRequestWithContext(ctx, method, u.url(), nil)
	if err != nil {
		g.stop()
		return nil, nil, nil, named(u, fmt.Errorf("%s: %w", what, requestError(err)))
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		cause := context.Cause(ctx)
		g.stop()
		if cause != nil {
			return nil, nil, nil, named(u, fmt.Errorf("%s: %w", what, cause))
		}
		return nil, nil, nil, named(u, fmt.Errorf("%s: %w", what, requestError(err)))
	}
	for _, code := range ok {
		if resp.StatusCode == code {
			return resp, g, ctx, nil
		}
	}
	resp.Body.Close()
	g.stop()
	return nil, nil, nil, statusError(u, what, resp.StatusCode, "")
}

func (s httpStore) head(ctx context.Context, u URI) (Info, error) {
	// A GET of the first byte rather than a HEAD: presigned URLs are signed for GET, and
	// the answer says whether the server serves ranges (206) and the whole size.
	resp, g, _, err := s.do(ctx, http.MethodGet, u, "open", map[string]string{"Range": "bytes=0-0"}, http.StatusOK, http.StatusPartialContent, http.StatusRequestedRangeNotSatisfiable)
	if err != nil {
		return Info{}, err
	}
	defer g.stop()
	defer resp.Body.Close()
	info := Info{URI: u, Version: resp.Header.Get("ETag")}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.ModTime = t
	}
	cr, crOK := parseContentRange(resp.Header.Get("Content-Range"))
	switch resp.StatusCode {
	case http.StatusPartialContent:
		if !crOK || cr.first != 0 || cr.last != 0 || cr.total < 0 {
			return Info{}, named(u, fmt.Errorf("open: the server's Content-Range is %s, not bytes 0-0 of a size: %w", shown(resp.Header.Get("Content-Range")), ErrBadAnswer))
		}
		info.Size = cr.total
	case http.StatusRequestedRangeNotSatisfiable: // an empty object
		if crOK && cr.first < 0 && cr.total == 0 {
			return info, nil
		}
		return Info{}, named(u, fmt.Errorf("open: the server refused the range bytes=0-0"))
	default:
		if resp.ContentLength != 0 {
			return Info{}, named(u, fmt.Errorf("open: the server does not serve byte ranges"))
		}
	}
	if info.Version == "" && !info.ModTime.IsZero() {
		info.Version = info.ModTime.UTC().Format(http.TimeFormat)
	}
	if strings.HasPrefix(info.Version, "W/") {
		info.Version = "" // a weak ETag cannot be the condition of a range request
	}
	return info, nil
}

func (s httpStore) read(ctx context.Context, info Info, off int64, p []byte) error {
	end := off + int64(len(p)) - 1
	headers := map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", off, end)}
	a := answer{length: -1}
	switch {
	case strings.HasPrefix(info.Version, `"`):
		headers["If-Match"] = info.Version
		a.versionName = "ETag"
	case info.Version != "":
		headers["If-Unmodified-Since"] = info.Version
		a.versionName = "Last-Modified"
	}
	resp, g, rctx, err := s.do(ctx, http.MethodGet, info.URI, "read", headers, http.StatusPartialContent, http.StatusOK)
	if err != nil {
		return err
	}
	defer g.stop()
	defer resp.Body.Close()
	a.status, a.contentRange, a.length = resp.StatusCode, resp.Header.Get("Content-Range"), resp.ContentLength
	switch a.versionName {
	case "ETag":
		a.version = resp.Header.Get("ETag")
	case "Last-Modified":
		if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
			a.version = t.UTC().Format(http.TimeFormat)
		}
	}
	if err := a.check(info, off, int64(len(p))); err != nil {
		return named(info.URI, err)
	}
	if err := readFull(rctx, resp.Body, p); err != nil {
		return readError(info.URI, off, len(p), err)
	}
	return nil
}

// readError returns the error of a read of n bytes at off that failed with err.
func readError(u URI, off int64, n int, err error) error {
	if errors.Is(err, ErrStalled) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return named(u, fmt.Errorf("read of bytes [%d, +%d): %w", off, n, err))
	}
	if errors.Is(err, errUnexpectedEOF) {
		return named(u, fmt.Errorf("read of bytes [%d, +%d): %w", off, n, ErrTruncated))
	}
	return named(u, fmt.Errorf("read of bytes [%d, +%d): %w", off, n, err))
}

func (httpStore) list(_ context.Context, u URI) ([]Info, error) {
	return nil, named(u, fmt.Errorf("%w (an http(s) server lists no objects)", ErrNotListable))
}

func (httpStore) copy(_ context.Context, _ Info, u URI) error {
	return named(u, fmt.Errorf("%w (an http(s) URL is read only)", ErrNotWritable))
}

func (httpStore) remove(_ context.Context, u URI) error {
	return named(u, fmt.Errorf("%w (an http(s) URL is read only)", ErrNotWritable))
}

func (httpStore) create(_ context.Context, u URI) (upload, error) {
	return nil, named(u, fmt.Errorf("%w (an http(s) URL is read only)", ErrNotWritable))
}
