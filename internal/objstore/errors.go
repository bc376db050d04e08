package objstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"

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

// errorsAs is errors.As.
var errorsAs = errors.As
