package objstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// gcsObjects is the store of gs:// URIs: Google Cloud Storage's JSON API over HTTPS, with
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, the metadata
// server of a Google Cloud machine) — or, when STORAGE_EMULATOR_HOST names an emulator (as
// Google's client libraries honour it), that server, without credentials. An object's
// version is its generation: every read is conditional on it (ifGenerationMatch), and an
// object is written by a resumable upload, which creates it only when its last part arrives.
type gcsObjects struct {
	base   string // https://storage.googleapis.com, or the emulator's
	client *http.Client
}

// gcsClients caches the authorized client per emulator setting.
var gcsClients struct {
	sync.Mutex
	byHost map[string]gcsObjects
}

// gcsScope is the OAuth scope of reading and writing objects.
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_write"

func gcsStore(ctx context.Context) (store, error) {
	host := os.Getenv("STORAGE_EMULATOR_HOST")
	gcsClients.Lock()
	defer gcsClients.Unlock()
	if g, ok := gcsClients.byHost[host]; ok {
		return g, nil
	}
	g := gcsObjects{base: "https://storage.googleapis.com", client: httpClient}
	if host != "" {
		g.base = strings.TrimSuffix(host, "/")
		if !strings.Contains(g.base, "://") {
			g.base = "http://" + g.base
		}
	} else {
		ts, err := google.DefaultTokenSource(context.WithoutCancel(ctx), gcsScope)
		if err != nil {
			return nil, fmt.Errorf("gs: credentials: %w", err)
		}
		g.client = &http.Client{Transport: &oauth2.Transport{Source: ts, Base: boundedTransport{http.DefaultTransport}}}
	}
	if gcsClients.byHost == nil {
		gcsClients.byHost = map[string]gcsObjects{}
	}
	gcsClients.byHost[host] = g
	return g, nil
}

// objectURL returns the JSON API's URL of the object u names, with query q.
func (g gcsObjects) objectURL(u URI, q url.Values) string {
	s := g.base + "/storage/v1/b/" + url.PathEscape(u.Bucket) + "/o/" + url.PathEscape(u.Key)
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// do sends a request for u under a stall watch and returns the response when its status is
// one of ok; the caller reads the body under g and stops g.
func (g gcsObjects) do(ctx context.Context, u URI, what, method, target string, body []byte, headers map[string]string, ok ...int) (*http.Response, *stallGuard, context.Context, error) {
	wctx, guard := watch(ctx)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(wctx, method, target, rd)
	if err != nil {
		guard.stop()
		return nil, nil, nil, named(u, fmt.Errorf("%s: %w", what, requestError(err)))
	}
	if body != nil {
		req.ContentLength = int64(len(body))
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		cause := context.Cause(wctx)
		guard.stop()
		if cause != nil {
			return nil, nil, nil, named(u, fmt.Errorf("%s: %w", what, cause))
		}
		return nil, nil, nil, named(u, fmt.Errorf("%s: %w", what, requestError(err)))
	}
	for _, code := range ok {
		if resp.StatusCode == code {
			return resp, guard, wctx, nil
		}
	}
	resp.Body.Close()
	guard.stop()
	return nil, nil, nil, statusError(u, what, resp.StatusCode, "")
}

// gcsObject is what the JSON API says of an object (sizes and generations are strings).
type gcsObject struct {
	Name       string    `json:"name"`
	Size       string    `json:"size"`
	Generation string    `json:"generation"`
	Updated    time.Time `json:"updated"`
}

// info returns the Info of o, an object of bucket u.
func (o gcsObject) info(u URI) (Info, error) {
	size, err := strconv.ParseInt(o.Size, 10, 64)
	if err != nil || size < 0 {
		return Info{}, named(u, fmt.Errorf("the store says a size of %q", o.Size))
	}
	if _, err := strconv.ParseInt(o.Generation, 10, 64); err != nil {
		return Info{}, named(u, fmt.Errorf("the store says a generation of %q", o.Generation))
	}
	return Info{URI: u, Size: size, Version: o.Generation, ModTime: o.Updated}, nil
}

// maxDescription bounds the JSON of one object's description or one page of a listing.
const maxDescription = 16 << 20

func (g gcsObjects) head(ctx context.Context, u URI) (Info, error) {
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		return Info{}, named(u, fmt.Errorf("%w (a bucket or prefix, not an object)", errNoObject))
	}
	resp, guard, _, err := g.do(ctx, u, "open", http.MethodGet, g.objectURL(u, url.Values{"fields": {"name,size,generation,updated"}}), nil, nil, http.StatusOK)
	if err != nil {
		return Info{}, err
	}
	defer guard.stop()
	defer resp.Body.Close()
	var o gcsObject
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDescription)).Decode(&o); err != nil {
		return Info{}, named(u, fmt.Errorf("open: the store's description: %w", err))
	}
	return o.info(u)
}

func (g gcsObjects) read(ctx context.Context, info Info, off int64, p []byte) error {
	end := off + int64(len(p)) - 1
	q := url.Values{"alt": {"media"}, "ifGenerationMatch": {info.Version}}
	resp, guard, wctx, err := g.do(ctx, info.URI, "read", http.MethodGet, g.objectURL(info.URI, q), nil,
		map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", off, end)}, http.StatusPartialContent, http.StatusOK)
	if err != nil {
		return err
	}
	defer guard.stop()
	defer resp.Body.Close()
	// The store answers 412 to a read of another generation; one that does not is caught by
	// the generation its answer says it sends.
	a := answer{status: resp.StatusCode, contentRange: resp.Header.Get("Content-Range"), length: resp.ContentLength,
		version: resp.Header.Get("X-Goog-Generation"), versionName: "generation"}
	if err := a.check(info, off, int64(len(p))); err != nil {
		return named(info.URI, err)
	}
	if err := readFull(wctx, resp.Body, p); err != nil {
		return readError(info.URI, off, len(p), err)
	}
	return nil
}

func (g gcsObjects) list(ctx context.Context, u URI) ([]Info, error) {
	var out []Info
	token := ""
	for {
		q := url.Values{"fields": {"items(name,size,generation,updated),nextPageToken"}}
		if u.Key != "" {
			q.Set("prefix", u.Key)
		}
		if token != "" {
			q.Set("pageToken", token)
		}
		target := g.base + "/storage/v1/b/" + url.PathEscape(u.Bucket) + "/o?" + q.Encode()
		resp, guard, _, err := g.do(ctx, u, "list", http.MethodGet, target, nil, nil, http.StatusOK)
		if err != nil {
			return nil, err
		}
		var page struct {
			Items         []gcsObject `json:"items"`
			NextPageToken string      `json:"nextPageToken"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, maxDescription)).Decode(&page)
		resp.Body.Close()
		guard.stop()
		if err != nil {
			return nil, named(u, fmt.Errorf("list: the store's answer: %w", err))
		}
		for _, o := range page.Items {
			if strings.HasSuffix(o.Name, "/") {
				continue // a folder marker
			}
			info, err := o.info(u.Child(o.Name))
			if err != nil {
				return nil, err
			}
			out = append(out, info)
		}
		if len(out) > maxListed {
			return nil, named(u, fmt.Errorf("list: more than %d objects", maxListed))
		}
		if page.NextPageToken == "" || page.NextPageToken == token {
			return out, nil
		}
		token = page.NextPageToken
	}
}

// gcsUpload is a resumable upload: parts sent in order to one session, the object created
// when the last one arrives.
type gcsUpload struct {
	g gcsObjects
	u URI

	mu      sync.Mutex
	turn    *sync.Cond // parts wait for theirs
	next    int        // the number of the part to send next
	sent    int64      // bytes sent
	session string     // the session's URI, once started
	failed  bool
	last    []byte // the part held back: the last one is sent by complete, with the total
}

func (g gcsObjects) create(_ context.Context, u URI) (upload, error) {
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		return nil, named(u, fmt.Errorf("%w (a bucket or prefix, not an object)", ErrNotWritable))
	}
	up := &gcsUpload{g: g, u: u, next: 1}
	up.turn = sync.NewCond(&up.mu)
	return up, nil
}

// start opens the upload session; called with mu held.
func (up *gcsUpload) start(ctx context.Context) error {
	if up.session != "" {
		return nil
	}
	q := url.Values{"uploadType": {"resumable"}, "name": {up.u.Key}}
	target := up.g.base + "/upload/storage/v1/b/" + url.PathEscape(up.u.Bucket) + "/o?" + q.Encode()
	// Not cancelled with the upload: a session the store opened must be known to be
	// cancelled, and a cancellation mid-request would leave it open, unnamed.
	resp, guard, _, err := up.g.do(context.WithoutCancel(ctx), up.u, "write", http.MethodPost, target, []byte{}, map[string]string{"Content-Type": "application/json"}, http.StatusOK, http.StatusCreated)
	if err != nil {
		return err
	}
	resp.Body.Close()
	guard.stop()
	up.session = resp.Header.Get("Location")
	if up.session == "" {
		return named(up.u, fmt.Errorf("write: the store opened no upload session"))
	}
	return nil
}

// send sends p at up.sent, the last part when total ≥ 0.
func (up *gcsUpload) send(ctx context.Context, p []byte, total int64) error {
	cr := "bytes */" + strconv.FormatInt(total, 10)
	if len(p) > 0 {
		end := strconv.FormatInt(up.sent+int64(len(p))-1, 10)
		t := "*"
		if total >= 0 {
			t = strconv.FormatInt(total, 10)
		}
		cr = "bytes " + strconv.FormatInt(up.sent, 10) + "-" + end + "/" + t
	}
	ok := []int{http.StatusPermanentRedirect} // "308 Resume Incomplete": more to come
	if total >= 0 {
		ok = []int{http.StatusOK, http.StatusCreated}
	}
	resp, guard, _, err := up.g.do(ctx, up.u, "write", http.MethodPut, up.session, p, map[string]string{"Content-Range": cr}, ok...)
	if err != nil {
		return err
	}
	resp.Body.Close()
	guard.stop()
	up.sent += int64(len(p))
	return nil
}

func (up *gcsUpload) part(ctx context.Context, n int, p []byte) error {
	up.mu.Lock()
	defer up.mu.Unlock()
	for up.next != n && !up.failed {
		up.turn.Wait()
	}
	if up.failed {
		return named(up.u, fmt.Errorf("write: an earlier part failed"))
	}
	err := up.start(ctx)
	if err == nil && up.last != nil { // the part before is not the last: send it
		err = up.send(ctx, up.last, -1)
	}
	up.last = p
	up.next++
	up.failed = err != nil
	up.turn.Broadcast()
	return err
}

func (up *gcsUpload) complete(ctx context.Context) error {
	up.mu.Lock()
	defer up.mu.Unlock()
	if err := up.start(ctx); err != nil {
		return err
	}
	total := up.sent + int64(len(up.last))
	return up.send(ctx, up.last, total)
}

func (up *gcsUpload) abort(ctx context.Context) error {
	up.mu.Lock()
	defer up.mu.Unlock()
	up.failed = true
	up.turn.Broadcast()
	if up.session == "" {
		return nil
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StallTimeout)
	defer cancel()
	// 499 is what the JSON API answers a cancelled session.
	resp, guard, _, err := up.g.do(actx, up.u, "abort of the upload", http.MethodDelete, up.session, nil, nil, 499, http.StatusNoContent, http.StatusOK, http.StatusNotFound)
	if err != nil {
		return err
	}
	resp.Body.Close()
	guard.stop()
	return nil
}

func (up *gcsUpload) put(ctx context.Context, p []byte) error {
	q := url.Values{"uploadType": {"media"}, "name": {up.u.Key}}
	target := up.g.base + "/upload/storage/v1/b/" + url.PathEscape(up.u.Bucket) + "/o?" + q.Encode()
	resp, guard, _, err := up.g.do(ctx, up.u, "write", http.MethodPost, target, p, map[string]string{"Content-Type": "application/octet-stream"}, http.StatusOK, http.StatusCreated)
	if err != nil {
		return err
	}
	resp.Body.Close()
	guard.stop()
	return nil
}

// maxRewrites bounds the calls of one copy: the JSON API copies a large object a piece a
// call, the rewriteToken carrying on.
const maxRewrites = 10000

func (g gcsObjects) copy(ctx context.Context, src Info, dst URI) error {
	target := g.base + "/storage/v1/b/" + url.PathEscape(src.URI.Bucket) + "/o/" + url.PathEscape(src.URI.Key) +
		"/rewriteTo/b/" + url.PathEscape(dst.Bucket) + "/o/" + url.PathEscape(dst.Key)
	q := url.Values{"ifSourceGenerationMatch": {src.Version}}
	for range maxRewrites {
		resp, guard, _, err := g.do(ctx, dst, "copy of "+src.URI.String(), http.MethodPost, target+"?"+q.Encode(), []byte("{}"),
			map[string]string{"Content-Type": "application/json"}, http.StatusOK)
		if err != nil {
			return err
		}
		var out struct {
			Done         bool   `json:"done"`
			RewriteToken string `json:"rewriteToken"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, maxDescription)).Decode(&out)
		resp.Body.Close()
		guard.stop()
		if err != nil {
			return named(dst, fmt.Errorf("copy of %s: the store's answer: %w", src.URI, err))
		}
		if out.Done {
			return nil
		}
		if out.RewriteToken == "" {
			return named(dst, fmt.Errorf("copy of %s: the store said neither done nor how to go on", src.URI))
		}
		q.Set("rewriteToken", out.RewriteToken)
	}
	return named(dst, fmt.Errorf("copy of %s: not done after %d calls", src.URI, maxRewrites))
}

func (g gcsObjects) remove(ctx context.Context, u URI) error {
	resp, guard, _, err := g.do(ctx, u, "delete", http.MethodDelete, g.objectURL(u, nil), nil, nil, http.StatusNoContent, http.StatusOK)
	if err != nil {
		return err
	}
	resp.Body.Close()
	guard.stop()
	return nil
}
