// Package objstore reads and writes objects in object storage — Amazon S3 and the stores that
// speak its API (s3://BUCKET/KEY), Google Cloud Storage (gs://BUCKET/KEY), and any HTTP server
// that answers range requests (https://HOST/PATH, read only) — as files are read and written: an object is a size plus
// ranged reads of one version of it, and an object written becomes visible only when it is
// complete.
//
// Every read after Open is conditional on the version Open saw (S3's ETag through If-Match,
// GCS's generation through ifGenerationMatch, an HTTP server's ETag or Last-Modified), and
// every answer is checked against the question — a ranged read's status (206, or 200 for a
// read of the whole object), Content-Range (its first and last byte those asked for, its size
// the object's), Content-Length and body (the range's length exactly) and the version the
// answer says it is of (ETag, X-Goog-Generation, Last-Modified) — so an object replaced while
// it is read, or a store that ignores the condition, is an error wrapping ErrChanged naming
// it, never a mix of two versions, and any other answer is an error wrapping ErrBadAnswer,
// never data. Every answer's body is bounded before anything reads it (the range asked for;
// 64 KiB for an error; 16 MiB for anything else), and every request follows the stall rule
// (see StallTimeout). Errors name the object by its URI without query or credentials: a
// presigned https:// URL's signature, or the user information of an endpoint's URL, never
// appears in them.
//
// Buffer lays an object out in memory as the file it is — a mapping from mmap.Reserve that
// no memory backs until a range is fetched into it — so that the readers of mapped files read
// it unchanged, fetching only the ranges they name, nearby ones coalesced and large ones split
// and fetched concurrently.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ndarrow/ndarrow/internal/mmap"
)

// Errors the package's errors wrap besides fs.ErrNotExist (no such object, bucket or
// prefix) and fs.ErrPermission (the store refused the credentials).
var (
	// ErrChanged is wrapped by the error of a read of an object that changed since Open: it
	// is mmap.ErrChanged, what a file that changed under its mapping gives too.
	ErrChanged = mmap.ErrChanged
	// ErrTruncated is wrapped by the error of a read that ended before the bytes it asked
	// for, from a store that cut its answer short.
	ErrTruncated = errors.New("the object ended before the bytes asked for")
	// ErrStalled is wrapped by the error of a request the store stopped answering, as the
	// stall rule says (see StallTimeout).
	ErrStalled = errors.New("the store stopped answering")
	// ErrBadAnswer is wrapped by the error of a store's answer that is not one to the
	// request: a ranged read answered with another status, range or length, or a body past
	// its bound (the range asked for, 64 KiB for an error, 16 MiB for anything else).
	// Typically this indicates a broken or hostile store, or something posing as one.
	ErrBadAnswer = errors.New("the store's answer is not one to the request")
	// ErrNotWritable is returned by Create for a URI that names nothing writable (https://).
	ErrNotWritable = errors.New("objects cannot be written there")
	// ErrNotListable is returned by List for a URI whose store lists nothing (https://).
	ErrNotListable = errors.New("objects cannot be listed there")
)

// StallTimeout is the window of the stall rule: a request is abandoned with an error wrapping
// ErrStalled when its answer has not begun StallTimeout after it was sent, or when, once it
// began, any StallTimeout passes in which fewer than 1 MiB of the answer's body (or of the
// request's own body) moved and the answer did not end — a minimum rate, which a store that
// sends a byte at a time does not meet. Tests shorten it.
var StallTimeout = 30 * time.Second

// IsURI reports whether s names an object or a prefix of objects rather than a local path:
// it starts with s3://, gs://, http:// or https://.
func IsURI(s string) bool {
	for _, scheme := range []string{"s3://", "gs://", "http://", "https://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// URI names an object, or a prefix of objects, in a store.
type URI struct {
	Scheme string // "s3", "gs", "http" or "https"
	Bucket string // the bucket (s3, gs), or the host (http, https)
	Key    string // the key or prefix (s3, gs), or the path without its leading "/" (http, https)
	query  string // an http(s) URL's query (a presigned URL's signature): sent, never shown
}

// ParseURI parses s, which IsURI accepts.
func ParseURI(s string) (URI, error) {
	u, err := url.Parse(s)
	if err != nil {
		return URI{}, fmt.Errorf("%s: not a URI: %w", redact(s), fs.ErrInvalid)
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "s3", "gs":
		if u.Host == "" {
			return URI{}, fmt.Errorf("%s: no bucket: %w", redact(s), fs.ErrInvalid)
		}
		if u.RawQuery != "" || u.User != nil {
			return URI{}, fmt.Errorf("%s: an %s:// URI has no query or user: %w", redact(s), scheme, fs.ErrInvalid)
		}
		return URI{Scheme: scheme, Bucket: u.Host, Key: strings.TrimPrefix(u.Path, "/")}, nil
	case "http", "https":
		if u.Host == "" {
			return URI{}, fmt.Errorf("%s: no host: %w", redact(s), fs.ErrInvalid)
		}
		if u.User != nil {
			return URI{}, fmt.Errorf("%s: credentials in the URL: %w", redact(s), fs.ErrInvalid)
		}
		return URI{Scheme: scheme, Bucket: u.Host, Key: strings.TrimPrefix(u.EscapedPath(), "/"), query: u.RawQuery}, nil
	}
	return URI{}, fmt.Errorf("%s: not an s3://, gs://, http:// or https:// URI: %w", redact(s), fs.ErrInvalid)
}

// redact returns s without its query and user, for an error that must not show them.
func redact(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndex(s[i+3:], "@"); at >= 0 && !strings.Contains(s[i+3:i+3+at], "/") {
			s = s[:i+3] + s[i+4+at:]
		}
	}
	return s
}

// String returns the URI as a user writes it, without an http(s) URL's query.
func (u URI) String() string {
	if u.Key == "" {
		return u.Scheme + "://" + u.Bucket
	}
	return u.Scheme + "://" + u.Bucket + "/" + u.Key
}

// Child returns the URI of the object named key in the same bucket.
func (u URI) Child(key string) URI { return URI{Scheme: u.Scheme, Bucket: u.Bucket, Key: key} }

// Info describes one version of an object.
type Info struct {
	URI     URI
	Size    int64
	Version string    // the store's ETag (quoted as it sent it), or a Last-Modified time
	ModTime time.Time // zero when the store does not say
}

// Stats count what was fetched from an object: requests and bytes, ranged reads and Open's
// request alike.
type Stats struct {
	requests, bytes atomic.Int64
}

// Requests returns the number of requests made.
func (s *Stats) Requests() int64 { return s.requests.Load() }

// Bytes returns the number of bytes of the object fetched.
func (s *Stats) Bytes() int64 { return s.bytes.Load() }

// store is one kind of object storage.
type store interface {
	head(ctx context.Context, u URI) (Info, error)
	// read fills p with bytes [off, off+len(p)) of the object version info names.
	read(ctx context.Context, info Info, off int64, p []byte) error
	list(ctx context.Context, u URI) ([]Info, error)
	create(ctx context.Context, u URI) (upload, error)
	// copy copies the object version src names to dst, in the same store, within it.
	copy(ctx context.Context, src Info, dst URI) error
	// remove deletes the object u names.
	remove(ctx context.Context, u URI) error
}

// upload is an object being written, part by part, visible only after complete.
type upload interface {
	// part sends part number n (from 1) of the object; every part but the last holds at
	// least MinPartSize bytes.
	part(ctx context.Context, n int, p []byte) error
	complete(ctx context.Context) error
	abort(ctx context.Context) error
	// put writes the whole object, of fewer than MinPartSize bytes, in one request instead.
	put(ctx context.Context, p []byte) error
}

// storeFor returns the store of u's scheme.
func storeFor(ctx context.Context, u URI) (store, error) {
	switch u.Scheme {
	case "s3":
		return s3Store(ctx)
	case "gs":
		return gcsStore(ctx)
	case "http", "https":
		return httpStore{}, nil
	}
	return nil, named(u, fmt.Errorf("unknown scheme: %w", fs.ErrInvalid))
}

// Object is one version of an object, opened for ranged reads. It is safe for concurrent
// use.
type Object struct {
	Info
	st    store
	stats Stats
}

// Open asks the store what the object at uri is now (its size and version) and returns it
// for reading. Its errors name the object once and match fs.ErrNotExist or fs.ErrPermission
// where the store said so.
func Open(ctx context.Context, uri string) (*Object, error) {
	u, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	st, err := storeFor(ctx, u)
	if err != nil {
		return nil, err
	}
	o := &Object{st: st}
	o.stats.requests.Add(1)
	o.Info, err = st.head(ctx, u)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// openInfo returns the object info describes, listed by List, for reading without asking
// the store again.
func openInfo(st store, info Info) *Object { return &Object{Info: info, st: st} }

// Stats returns what reads of the object have fetched so far.
func (o *Object) Stats() *Stats { return &o.stats }

// ReadAt reads len(p) bytes at off of the version Open saw, as io.ReaderAt does (n < len(p)
// only at the object's end, with io.EOF), without a context: see ReadRange.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	return o.ReadRange(context.Background(), p, off)
}

// ReadRange reads bytes [off, off+len(p)) of the version Open saw into p, in one request.
// Past the object's end it reads what there is and returns io.EOF with the count.
func (o *Object) ReadRange(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, named(o.URI, fmt.Errorf("read at %d: %w", off, fs.ErrInvalid))
	}
	if off >= o.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, errEOF
	}
	n := min(int64(len(p)), o.Size-off)
	if n == 0 {
		return 0, nil
	}
	o.stats.requests.Add(1)
	if err := o.st.read(ctx, o.Info, off, p[:n]); err != nil {
		return 0, err
	}
	o.stats.bytes.Add(n)
	if n < int64(len(p)) {
		return int(n), errEOF
	}
	return int(n), nil
}

// List returns the objects whose keys start with the prefix uri names, in key order, each
// as Open would describe it. A prefix is a directory when it ends with "/" or names no
// object: List of s3://b/data lists s3://b/data/…, not s3://b/database.
func List(ctx context.Context, uri string) ([]*Object, error) {
	u, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	st, err := storeFor(ctx, u)
	if err != nil {
		return nil, err
	}
	if u.Key != "" && !strings.HasSuffix(u.Key, "/") {
		u.Key += "/"
	}
	infos, err := st.list(ctx, u)
	if err != nil {
		return nil, err
	}
	out := make([]*Object, len(infos))
	for i, info := range infos {
		out[i] = openInfo(st, info)
	}
	return out, nil
}

// Copy copies the object at src, the version its opening sees, to dst (of the same scheme)
// within the store — no byte passes through this process — replacing what dst held: the
// rename of object storage, with Remove. A source changed since it was opened is an error
// wrapping ErrChanged; http(s):// objects are ErrNotWritable.
func Copy(ctx context.Context, src, dst string) error {
	o, err := Open(ctx, src)
	if err != nil {
		return err
	}
	d, err := ParseURI(dst)
	if err != nil {
		return err
	}
	if d.Scheme != o.URI.Scheme {
		return named(d, fmt.Errorf("a copy from %s:// to %s://: %w", o.URI.Scheme, d.Scheme, fs.ErrInvalid))
	}
	return o.st.copy(ctx, o.Info, d)
}

// Remove deletes the object at uri; one that is not there is an error matching
// fs.ErrNotExist.
func Remove(ctx context.Context, uri string) error {
	u, err := ParseURI(uri)
	if err != nil {
		return err
	}
	st, err := storeFor(ctx, u)
	if err != nil {
		return err
	}
	return st.remove(ctx, u)
}
