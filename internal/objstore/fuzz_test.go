package objstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzParseURI: any string parses to an error or to a URI whose String has no query and
// parses back to itself.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"s3://b/k", "gs://b/a/b/", "https://h:1/p?q=1", "http://u:p@h/x", "s3://", "S3://B/%zz", "https://h/a%2Fb?x#y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			if strings.Contains(s, "?") && strings.Contains(err.Error(), s[strings.Index(s, "?"):]) && len(s[strings.Index(s, "?"):]) > 1 {
				t.Fatalf("the query of %q in the error %q", s, err)
			}
			return
		}
		if strings.Contains(u.String(), "?") && u.query != "" && strings.Contains(u.String(), u.query) {
			t.Fatalf("String %q shows the query", u)
		}
		v, err := ParseURI(u.String())
		if err != nil {
			t.Fatalf("%q parsed, its String %q does not: %v", s, u, err)
		}
		if v.String() != u.String() {
			t.Fatalf("%q → %q → %q", s, u, v)
		}
	})
}

// FuzzHTTPObject: whatever status, Content-Range, ETag and body a server answers, opening
// and reading an object ends in an error or in exactly the bytes asked for — never a panic
// and never a read past what the server sent.
func FuzzHTTPObject(f *testing.F) {
	f.Add(206, "bytes 0-0/10", "bytes 2-5/10", `"e"`, []byte("0123456789"))
	f.Add(206, "bytes 0-0/10", "bytes 2-5/11", `"e"`, []byte("0123"))
	f.Add(200, "", "", "", []byte{})
	f.Add(416, "bytes */0", "", "W/\"x\"", []byte("x"))
	f.Add(206, "bytes 0-0/-1", "bytes 2-5/x", "", []byte("0"))
	f.Fuzz(func(t *testing.T, status int, openRange, readRange, etag string, body []byte) {
		if status < 200 || status > 599 {
			status = 206
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cr := readRange
			if r.Header.Get("Range") == "bytes=0-0" {
				cr = openRange
			}
			if strings.ContainsAny(cr, "\r\n") || strings.ContainsAny(etag, "\r\n") {
				cr, etag = "", ""
			}
			if cr != "" {
				w.Header().Set("Content-Range", cr)
			}
			if etag != "" {
				w.Header().Set("ETag", etag)
			}
			w.WriteHeader(status)
			w.Write(body)
		}))
		defer srv.Close()
		o, err := Open(context.Background(), srv.URL+"/x")
		if err != nil {
			return
		}
		if o.Size < 0 {
			t.Fatalf("a size of %d", o.Size)
		}
		p := make([]byte, min(o.Size, 4))
		n, err := o.ReadAt(p, min(2, o.Size))
		if err == nil && n != len(p) {
			t.Fatalf("read %d of %d without an error", n, len(p))
		}
		if err == nil && len(p) > 0 && !strings.Contains(string(body), string(p)) {
			t.Fatalf("read %q, which the server never sent (%q)", p, body)
		}
	})
}
