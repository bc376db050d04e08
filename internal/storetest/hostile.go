package storetest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is how a Hostile store lies in its answer to a read of an object.
type Fault int

// The faults of a Hostile store's answers to ranged reads.
const (
	Honest           Fault = iota // the range asked for, as asked
	EndlessErrorBody              // 500 Internal Server Error, an S3 error's XML that never ends
	HugeErrorBody                 // 500 Internal Server Error, 64 MiB of an S3 error's XML
	RangeElsewhere                // 206, the Content-Range and bytes of the range one byte later
	WrongTotal                    // 206, a Content-Range whose size is one more than the object's
	WrongLength                   // 206, a Content-Length (and bytes) one more than the range's
	LongerBody                    // 206, no Content-Length, the range and then more bytes
	ShorterBody                   // 206, the range's Content-Length, half of it, then the connection closed
	OtherVersion                  // 206 of another version: conditions ignored, another ETag, generation and bytes
	Drip                          // 206 of the range, one byte every DripInterval
	WholeObject                   // 200 OK, the whole object, the Range ignored
)

// HostileObject is an object of a Hostile store and how the store answers reads of it.
type HostileObject struct {
	Data       []byte
	ETag       string // `"v1"` when empty
	Generation int64  // 1 when 0
	Fault      Fault
	// FaultMin is the least bytes a read asks for that the fault is in the answer to; 0 is
	// every read but of bytes=0-0 (an http(s) client's opening probe, answered honestly).
	FaultMin int64
}

// Hostile is an object store on 127.0.0.1 that answers as its objects' faults say: enough of
// S3's API (path-style HeadObject, ranged GetObject, ListObjectsV2), of Google Cloud Storage's
// JSON API (an object's description, a ranged media download, a listing) and of an http(s)
// server of byte ranges (GET /BUCKET/KEY) for the stores' clients. It counts, per object,
// the faulty answers it began and those whose client went away before it was done.
type Hostile struct {
	URL          string        // http://127.0.0.1:PORT
	DripInterval time.Duration // between the bytes of a Drip answer; 20 ms unless set before use

	mu        sync.Mutex
	objects   map[string]*HostileObject // by BUCKET/KEY
	started   map[string]int
	abandoned map[string]int
	events    []string
}

// StartHostile starts a Hostile store for the test, closed when it ends.
func StartHostile(t testing.TB) *Hostile {
	t.Helper()
	h := &Hostile{DripInterval: 20 * time.Millisecond, objects: map[string]*HostileObject{}, started: map[string]int{}, abandoned: map[string]int{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	h.URL = srv.URL
	return h
}

// UseS3 points the process's S3 clients at the store for the test (t.Setenv), with
// credentials of its own.
func (h *Hostile) UseS3(t testing.TB) {
	dir := t.TempDir()
	t.Setenv("AWS_ENDPOINT_URL_S3", h.URL)
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "hostile")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hostile-secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, ".no-aws-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, ".no-aws-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// UseGCS points the process's Google Cloud Storage clients at the store for the test.
func (h *Hostile) UseGCS(t testing.TB) { t.Setenv("STORAGE_EMULATOR_HOST", h.URL) }

// Put sets the object at bucket/key.
func (h *Hostile) Put(bucket, key string, o HostileObject) {
	if o.ETag == "" {
		o.ETag = `"v1"`
	}
	if o.Generation == 0 {
		o.Generation = 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.objects[bucket+"/"+key] = &o
}

// Started returns how many faulty answers to reads of bucket/key the store began.
func (h *Hostile) Started(bucket, key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started[bucket+"/"+key]
}

// Abandoned returns how many answers about bucket/key the store was still sending when their
// client went away (a cancelled request, a closed connection).
func (h *Hostile) Abandoned(bucket, key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.abandoned[bucket+"/"+key]
}

// Events returns what the store did, in order: "served BUCKET/KEY" for each honest answer to
// a ranged read sent whole, "abandoned BUCKET/KEY" for each answer whose client went away.
func (h *Hostile) Events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// modTime is every object's modification time.
var modTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func (h *Hostile) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/storage/v1/b/"); ok {
		h.serveGCS(w, r, rest)
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if key == "" && r.URL.Query().Get("list-type") == "2" {
		h.listS3(w, bucket, r.URL.Query().Get("prefix"))
		return
	}
	o := h.object(bucket, key)
	if o == nil {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>`)
		return
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Length", strconv.Itoa(len(o.Data)))
		w.Header().Set("ETag", o.ETag)
		w.Header().Set("Last-Modified", modTime.Format(http.TimeFormat))
		return
	}
	if match := r.Header.Get("If-Match"); match != "" && match != o.ETag && o.Fault != OtherVersion {
		w.WriteHeader(http.StatusPreconditionFailed)
		return
	}
	h.read(w, r, bucket+"/"+key, o)
}

// object returns the object at bucket/key, or nil.
func (h *Hostile) object(bucket, key string) *HostileObject {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.objects[bucket+"/"+key]
}

// listed returns the keys of the objects of bucket under prefix, in order.
func (h *Hostile) listed(bucket, prefix string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var keys []string
	for name := range h.objects {
		b, key, _ := strings.Cut(name, "/")
		if b == bucket && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

func (h *Hostile) listS3(w http.ResponseWriter, bucket, prefix string) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>`)
	xml.EscapeText(&b, []byte(bucket))
	b.WriteString(`</Name><IsTruncated>false</IsTruncated>`)
	for _, key := range h.listed(bucket, prefix) {
		o := h.object(bucket, key)
		b.WriteString("<Contents><Key>")
		xml.EscapeText(&b, []byte(key))
		fmt.Fprintf(&b, "</Key><LastModified>%s</LastModified><ETag>", modTime.Format("2006-01-02T15:04:05.000Z"))
		xml.EscapeText(&b, []byte(o.ETag))
		fmt.Fprintf(&b, "</ETag><Size>%d</Size></Contents>", len(o.Data))
	}
	b.WriteString("</ListBucketResult>")
	w.Header().Set("Content-Type", "application/xml")
	w.Write(b.Bytes())
}

// gcsObject is what GCS's JSON API says of an object.
type gcsObject struct {
	Name       string `json:"name"`
	Size       string `json:"size"`
	Generation string `json:"generation"`
	Updated    string `json:"updated"`
}

func (h *Hostile) serveGCS(w http.ResponseWriter, r *http.Request, rest string) {
	bucket, after, _ := strings.Cut(rest, "/")
	if after == "o" { // a listing
		var page struct {
			Items []gcsObject `json:"items"`
		}
		for _, key := range h.listed(bucket, r.URL.Query().Get("prefix")) {
			o := h.object(bucket, key)
			page.Items = append(page.Items, gcsObject{key, strconv.Itoa(len(o.Data)), strconv.FormatInt(o.Generation, 10), modTime.Format(time.RFC3339)})
		}
		json.NewEncoder(w).Encode(page)
		return
	}
	key := strings.TrimPrefix(after, "o/")
	o := h.object(bucket, key)
	if o == nil {
		http.Error(w, `{"error":{"code":404,"message":"No such object"}}`, http.StatusNotFound)
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		json.NewEncoder(w).Encode(gcsObject{key, strconv.Itoa(len(o.Data)), strconv.FormatInt(o.Generation, 10), modTime.Format(time.RFC3339)})
		return
	}
	if match := r.URL.Query().Get("ifGenerationMatch"); match != "" && match != strconv.FormatInt(o.Generation, 10) && o.Fault != OtherVersion {
		w.WriteHeader(http.StatusPreconditionFailed)
		return
	}
	h.read(w, r, bucket+"/"+key, o)
}

// read answers a GET of the object o, named name, as its fault says.
func (h *Hostile) read(w http.ResponseWriter, r *http.Request, name string, o *HostileObject) {
	size := int64(len(o.Data))
	first, last, ranged := rangeOf(r.Header.Get("Range"))
	if ranged && first >= size {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return
	}
	last = min(last, size-1)
	data, etag, gen := o.Data, o.ETag, o.Generation
	fault := o.Fault
	if !ranged || (first == 0 && last == 0 && o.FaultMin == 0) || last-first+1 < o.FaultMin {
		fault = Honest
	}
	if fault != Honest {
		h.mu.Lock()
		h.started[name]++
		h.mu.Unlock()
	}
	if fault == OtherVersion {
		data = bytes.Clone(data)
		for i := range data {
			data[i] ^= 0xff
		}
		etag, gen = `"other"`, gen+1
	}
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("X-Goog-Generation", strconv.FormatInt(gen, 10))
	hd.Set("Last-Modified", modTime.Format(http.TimeFormat))
	if !ranged {
		hd.Set("Content-Length", strconv.FormatInt(size, 10))
		w.Write(data)
		return
	}
	body := data[first : last+1]
	contentRange := fmt.Sprintf("bytes %d-%d/%d", first, last, size)
	switch fault {
	case EndlessErrorBody, HugeErrorBody:
		for _, k := range []string{"ETag", "X-Goog-Generation", "Last-Modified"} {
			hd.Del(k)
		}
		hd.Set("Content-Type", "application/xml")
		fillers := 64 << 20 / len(filler) // 64 MiB, or forever
		if fault == HugeErrorBody {
			hd.Set("Content-Length", strconv.Itoa(len(errorStart)+fillers*len(filler)+len(errorEnd)))
		}
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(errorStart))
		for i := 0; fault == EndlessErrorBody || i < fillers; i++ {
			if _, err := w.Write(filler); err != nil {
				h.gone(name)
				return
			}
		}
		w.Write([]byte(errorEnd))
		return
	case RangeElsewhere:
		switch {
		case last+1 < size:
			first, last = first+1, last+1
		case first > 0:
			first, last = first-1, last-1
		default: // the whole object, no room to move it: the answer starts a byte later
			first++
		}
		body = data[first : last+1]
		contentRange = fmt.Sprintf("bytes %d-%d/%d", first, last, size)
	case WrongTotal:
		contentRange = fmt.Sprintf("bytes %d-%d/%d", first, last, size+1)
	case WrongLength:
		body = append(bytes.Clone(body), 0)
	case WholeObject:
		hd.Set("Content-Length", strconv.FormatInt(size, 10))
		w.Write(data)
		return
	}
	hd.Set("Content-Range", contentRange)
	switch fault {
	case LongerBody:
		w.WriteHeader(http.StatusPartialContent)
		w.Write(body)
		w.Write(bytes.Repeat([]byte{0}, 1024))
		return
	case ShorterBody:
		hd.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection closed mid-body
	case Drip:
		hd.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusPartialContent)
		tick := time.NewTicker(h.DripInterval)
		defer tick.Stop()
		for i := range body {
			if _, err := w.Write(body[i : i+1]); err != nil {
				h.gone(name)
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-tick.C:
			case <-r.Context().Done():
				h.gone(name)
				return
			}
		}
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusPartialContent)
	if _, err := w.Write(body); err == nil && fault == Honest {
		h.mu.Lock()
		h.events = append(h.events, "served "+name)
		h.mu.Unlock()
	}
}

// gone counts an answer about name whose client went away.
func (h *Hostile) gone(name string) {
	h.mu.Lock()
	h.abandoned[name]++
	h.events = append(h.events, "abandoned "+name)
	h.mu.Unlock()
}

// An S3 error's XML, its message a filler repeated.
const (
	errorStart = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>`
	errorEnd   = `</Message></Error>`
)

var filler = bytes.Repeat([]byte("We encountered an internal error. Please try again. "), 1260) // 64 KB

// rangeOf returns the range of a Range header "bytes=A-B".
func rangeOf(h string) (first, last int64, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	if !found || !strings.HasPrefix(h, "bytes=") {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	return first, last, err1 == nil && err2 == nil && first <= last
}
