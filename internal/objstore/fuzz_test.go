package objstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	f.Add(206, "bytes 0-0/10", "bytes 3-6/10", `"e"`, []byte("3456"))   // another range
	f.Add(206, "bytes 0-0/10", "bytes 2-5/*", `"e"`, []byte("2345"))    // no size
	f.Add(206, "bytes 0-0/10", "bytes 2-5/10", `"e"`, []byte("234567")) // a longer body
	f.Add(200, "bytes 0-0/4", "", `"e"`, []byte("0123"))                // the whole object
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

// FuzzContentRange: parseContentRange accepts only what it can give back: a range within the
// size, or no range and a size, that formats back to a header parsing to the same values.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-0/1", "bytes 2-5/10", "bytes */0", "bytes 0-9/*", "bytes 5-4/10", "bytes 0-10/10",
		"bytes -1-2/3", "bytes 0-1/ 2", "bytes=0-1/2", "bytes 01-2/3", "bytes 0-9223372036854775807/*", "bytes */*", "bytes 1-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cr, ok := parseContentRange(s)
		if !ok {
			return
		}
		total := "*"
		if cr.total >= 0 {
			total = strconv.FormatInt(cr.total, 10)
		}
		var again string
		switch {
		case cr.first < 0:
			if cr.last != -1 || cr.total < 0 {
				t.Fatalf("%q: no range, %+v", s, cr)
			}
			again = "bytes */" + total
		case cr.last < cr.first || (cr.total >= 0 && cr.last >= cr.total):
			t.Fatalf("%q: %+v is no range of the size", s, cr)
		default:
			again = "bytes " + strconv.FormatInt(cr.first, 10) + "-" + strconv.FormatInt(cr.last, 10) + "/" + total
		}
		if back, ok := parseContentRange(again); !ok || back != cr {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, cr, again, back, ok)
		}
	})
}
