package objstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"

	"github.com/ndarrow/ndarrow/internal/sentinel"
)

// errEOF is io.EOF, returned by a read past the object's end.
var errEOF = io.EOF

// What a store's status means, as errors that read as one phrase.
var (
	errNoObject = sentinel.New("no such object", fs.ErrNotExist)
	errDenied   = sentinel.New("access denied", fs.ErrPermission)
)

// statusError returns the error of a store's answer of HTTP status code to a request about
// u (what: "open", "read", "list", "write"), with the store's own error code (S3's
// "NoSuchKey") when there is one, wrapping what the status means: fs.ErrNotExist,
// fs.ErrPermission, ErrChanged.
func statusError(u URI, what string, code int, storeCode string) error {
	text := fmt.Sprintf("%d %s", code, http.StatusText(code))
	if len(storeCode) > 64 { // the store's text
		storeCode = storeCode[:64] + "…"
	}
	if storeCode != "" && storeCode != http.StatusText(code) {
		text += ", " + storeCode
	}
	switch code {
	case http.StatusNotFound:
		return named(u, fmt.Errorf("%w (%s)", errNoObject, text))
	case http.StatusForbidden, http.StatusUnauthorized:
		return named(u, fmt.Errorf("%w (%s)", errDenied, text))
	case http.StatusPreconditionFailed:
		return named(u, fmt.Errorf("%w (%s to a %s of the version first seen)", ErrChanged, text, what))
	}
	return named(u, fmt.Errorf("%s: the store answered %s", what, text))
}

// errUnexpectedEOF is io.ErrUnexpectedEOF: a body that ended early.
var errUnexpectedEOF = io.ErrUnexpectedEOF

// Error is an error about one object: its text is "URI: ERR", naming the object once.
type Error struct {
	URI string // without query or credentials
	Err error
}

func (e *Error) Error() string { return e.URI + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// named returns err about the object u names as an *Error.
func named(u URI, err error) error { return &Error{URI: u.String(), Err: err} }

// userInfo matches the user information of the URLs in a text: "ak:PW@" of
// "http://ak:PW@host/…", up to the last "@" before the host.
var userInfo = regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*://)[^/?#\s"'<>]*@`)

// redactURLs returns s with the user information of every URL in it left out.
func redactURLs(s string) string { return userInfo.ReplaceAllString(s, "$1") }

// redactedError is an error whose text shows no URL's user information: a dependency's error
// that may quote a URL (an endpoint's, from the environment) whole.
type redactedError struct{ err error }

func (e redactedError) Error() string { return redactURLs(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

// redacted returns err, its text without any URL's user information; nil for nil.
func redacted(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{err}
}

// requestError returns the error of an HTTP request that could not be made or sent: err
// without the *url.Error around it, whose text repeats the URL, query included, and without
// any URL's user information.
func requestError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return redacted(err)
}
