package objstore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndarrow/ndarrow/internal/childtest"
	"github.com/ndarrow/ndarrow/internal/storetest"
)

// shortStall sets StallTimeout to d for the test.
func shortStall(t *testing.T, d time.Duration) {
	old := StallTimeout
	StallTimeout = d
	t.Cleanup(func() { StallTimeout = old })
}

// hostileURI starts a Hostile store holding o at b/k, points the clients of scheme at it,
// and returns the URI of the object.
func hostileURI(t *testing.T, scheme string, o storetest.HostileObject) (*storetest.Hostile, string) {
	h := storetest.StartHostile(t)
	h.Put("b", "k", o)
	switch scheme {
	case "s3":
		h.UseS3(t)
		return h, "s3://b/k"
	case "gs":
		h.UseGCS(t)
		return h, "gs://b/k"
	}
	return h, h.URL + "/b/k?sig=secret"
}

// shownURI returns the URI an error names the object by: without the query.
func shownURI(uri string) string { return strings.TrimSuffix(uri, "?sig=secret") }

// TestHostileRangedReads: every store's answer to a ranged read that is not the answer to it —
// another range, size, length or version, a body longer or shorter than the range, a drip, an
// error body that never ends — is an error naming the object (without its query or the
// credentials), never data.
func TestHostileRangedReads(t *testing.T) {
	shortStall(t, 300*time.Millisecond)
	data := randomBytes(100_000)
	const off, n = 5000, 1000
	for _, tc := range []struct {
		name  string
		fault storetest.Fault
		want  error // nil: the status named
	}{
		{"an endless error body", storetest.EndlessErrorBody, nil},
		{"a huge error body", storetest.HugeErrorBody, nil},
		{"a Content-Range starting elsewhere", storetest.RangeElsewhere, ErrBadAnswer},
		{"a Content-Range of another size", storetest.WrongTotal, ErrChanged},
		{"a Content-Length other than the range's", storetest.WrongLength, ErrBadAnswer},
		{"a body longer than the range", storetest.LongerBody, ErrBadAnswer},
		{"a body shorter than the range", storetest.ShorterBody, ErrTruncated},
		{"another version, If-Match ignored", storetest.OtherVersion, ErrChanged},
		{"a drip of a byte at a time", storetest.Drip, ErrStalled},
		{"the whole object for a range", storetest.WholeObject, ErrBadAnswer},
	} {
		for _, scheme := range []string{"s3", "gs", "http"} {
			t.Run(scheme+"/"+tc.name, func(t *testing.T) {
				_, uri := hostileURI(t, scheme, storetest.HostileObject{Data: data, Fault: tc.fault})
				o, err := Open(context.Background(), uri)
				require.NoError(t, err)
				p := make([]byte, n)
				got, err := o.ReadAt(p, off)
				require.Error(t, err)
				assert.Zero(t, got)
				switch {
				case tc.want != nil:
					assert.ErrorIs(t, err, tc.want)
				case scheme == "s3": // the SDK reads the error's body: no further than 64 KiB
					assert.ErrorIs(t, err, ErrBadAnswer)
					assert.Contains(t, err.Error(), "(500 Internal Server Error) is longer than 65536 bytes")
				default:
					assert.Contains(t, err.Error(), "500 Internal Server Error")
				}
				assert.True(t, strings.HasPrefix(err.Error(), shownURI(uri)+": "), err.Error())
				assert.Equal(t, 1, strings.Count(err.Error(), shownURI(uri)), "named once: %s", err)
				assert.NotContains(t, err.Error(), "secret")
			})
		}
	}
}

// TestHostileAnswersThatAreRight: a 200 answer of the whole object to a read of all of it is
// the answer, and a store that sends its answer in bursts, at least 1 MiB in each window of
// StallTimeout, is not stalled however long the answer takes.
func TestHostileAnswersThatAreRight(t *testing.T) {
	data := randomBytes(10_000)
	for _, scheme := range []string{"s3", "gs", "http"} {
		t.Run(scheme, func(t *testing.T) {
			_, uri := hostileURI(t, scheme, storetest.HostileObject{Data: data, Fault: storetest.WholeObject})
			o, err := Open(context.Background(), uri)
			require.NoError(t, err)
			p := make([]byte, len(data))
			_, err = o.ReadAt(p, 0)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data, p))
		})
	}

	shortStall(t, time.Second)
	big := randomBytes(10 << 20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, last, _ := rangeAsked(r.Header.Get("Range"))
		w.Header().Set("ETag", `"e"`)
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/"+strconv.FormatInt(int64(len(big)), 10))
		w.Header().Set("Content-Length", strconv.FormatInt(last-first+1, 10))
		w.WriteHeader(http.StatusPartialContent)
		body := big[first : last+1]
		for len(body) > 0 { // 2 MiB every 300 ms: the answer spans windows, none stalls
			k := min(len(body), 2<<20)
			w.Write(body[:k])
			w.(http.Flusher).Flush()
			body = body[k:]
			if len(body) > 0 {
				time.Sleep(300 * time.Millisecond)
			}
		}
	}))
	defer srv.Close()
	o, err := Open(context.Background(), srv.URL+"/big")
	require.NoError(t, err)
	p := make([]byte, len(big))
	_, err = o.ReadRange(context.Background(), p, 0)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, p))
}

// TestHostileErrorBodiesUnderAMemoryLimit runs TestHostileErrorBodiesChild in a child process
// whose address space is limited: an error body that never ends, read by the S3 SDK's error
// decoder, must not take the process's memory.
func TestHostileErrorBodiesUnderAMemoryLimit(t *testing.T) {
	childtest.Run(t, "TestHostileErrorBodiesChild", 512<<20)
}

// TestHostileErrorBodiesChild reads, from every store, a range answered with an endless or a
// 64 MiB error body, each read allocating less than 4 MiB.
func TestHostileErrorBodiesChild(t *testing.T) {
	if !childtest.Child(t) {
		t.Skip("run by TestHostileErrorBodiesUnderAMemoryLimit")
	}
	data := randomBytes(100_000)
	for _, fault := range []storetest.Fault{storetest.EndlessErrorBody, storetest.HugeErrorBody} {
		for _, scheme := range []string{"s3", "gs", "http"} {
			_, uri := hostileURI(t, scheme, storetest.HostileObject{Data: data, Fault: fault})
			o, err := Open(context.Background(), uri)
			require.NoError(t, err)
			before := childtest.Allocated()
			_, err = o.ReadAt(make([]byte, 1000), 5000)
			require.Error(t, err)
			allocated := childtest.Allocated() - before
			t.Logf("child: %s, fault %d: %d KiB allocated: %v", scheme, fault, allocated>>10, err)
			assert.Less(t, allocated, uint64(4<<20), "%s: %v", scheme, err)
		}
	}
}

// TestHostileListing: a listing answered with an endless error body is an error of at most
// 64 KiB read, naming the prefix.
func TestHostileListing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>`))
		chunk := []byte(strings.Repeat("slow down ", 6554))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	h := storetest.StartHostile(t)
	h.UseS3(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	_, err := List(context.Background(), "s3://b/p")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrBadAnswer)
	assert.True(t, strings.HasPrefix(err.Error(), "s3://b/p/: list: the store's answer (503 Service Unavailable) is longer than 65536 bytes"), err.Error())
}

// TestEndpointCredentialsNotShown: an endpoint URL with user information — malformed or not —
// is refused with an error that shows neither the user nor the password.
func TestEndpointCredentialsNotShown(t *testing.T) {
	storetest.StartHostile(t).UseS3(t)
	for _, endpoint := range []string{
		"http://ak:PW@127.0.0.1:1",
		"http://ak:PW@127.0.0.1:1/a b",
		"http://ak:PW@[::1",
		"http://ak:P@W@127.0.0.1:bad",
		"ak:PW@127.0.0.1:9000",
		"http://ak:PW@%zz",
	} {
		t.Run(endpoint, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
			_, err := Open(context.Background(), "s3://b/k")
			require.Error(t, err)
			assert.ErrorIs(t, err, fs.ErrInvalid)
			assert.Contains(t, err.Error(), "AWS_ENDPOINT_URL_S3")
			assert.NotContains(t, err.Error(), "PW")
			assert.NotContains(t, err.Error(), "ak:")
		})
	}
}

// TestRedactURLs: the user information of every URL in a text is left out, and nothing else.
func TestRedactURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`parse "http://ak:PW@h:1/x y": invalid`, `parse "http://h:1/x y": invalid`},
		{`Get "https://u@h/k" and http://a:b@c@h2/`, `Get "https://h/k" and http://h2/`},
		{"no URL: user@host", "no URL: user@host"},
		{"http://h/path@not-user", "http://h/path@not-user"},
	} {
		assert.Equal(t, tc.want, redactURLs(tc.in), tc.in)
	}
	err := redacted(errors.New(`dial "http://ak:PW@h"`))
	assert.Equal(t, `dial "http://h"`, err.Error())
}
