package objstore

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// contentRange is what a Content-Range header of bytes says: bytes [first, last] of an
// object of total bytes; first and last are -1 for "bytes */TOTAL" (no range: the answer to
// a range that cannot be satisfied), total is -1 for "bytes FIRST-LAST/*" (no size said).
type contentRange struct{ first, last, total int64 }

// parseContentRange parses a Content-Range header of bytes strictly (RFC 9110 §14.4):
// "bytes FIRST-LAST/TOTAL" with FIRST ≤ LAST < TOTAL, "bytes FIRST-LAST/*" with FIRST ≤
// LAST, or "bytes */TOTAL" — decimal digits only, no sign, space or other unit.
func parseContentRange(s string) (contentRange, bool) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return contentRange{}, false
	}
	rng, size, ok := strings.Cut(rest, "/")
	if !ok {
		return contentRange{}, false
	}
	cr := contentRange{first: -1, last: -1, total: -1}
	if size != "*" {
		if cr.total, ok = decimal(size); !ok {
			return contentRange{}, false
		}
	}
	if rng == "*" {
		return cr, cr.total >= 0
	}
	a, b, ok := strings.Cut(rng, "-")
	first, ok1 := decimal(a)
	last, ok2 := decimal(b)
	if !ok || !ok1 || !ok2 || last < first || (cr.total >= 0 && last >= cr.total) {
		return contentRange{}, false
	}
	cr.first, cr.last = first, last
	return cr, true
}

// decimal parses a non-negative decimal number of digits alone.
func decimal(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// answer is what a store's answer to a read of a range says of itself.
type answer struct {
	status       int
	contentRange string // the Content-Range header; "" when not sent
	length       int64  // the Content-Length; -1 when not sent
	version      string // the version it is of (ETag, generation, Last-Modified); "" when not said
	versionName  string // what version is: "ETag", "generation", "Last-Modified"
}

// check returns nil when a is an answer to a read of bytes [off, off+n) of the version info
// names, else why it is not: an error wrapping ErrChanged when it is of another version or
// size, ErrBadAnswer when its status, range or length is not the one asked for. The answer to
// a range is 206 Partial Content with a Content-Range of exactly that range and the object's
// size; a 200 OK (the whole object) answers only a read of the whole object.
func (a answer) check(info Info, off, n int64) error {
	what := fmt.Sprintf("read of bytes [%d, +%d)", off, n)
	if info.Version != "" {
		switch {
		case a.version == "":
			return fmt.Errorf("%s: the store's answer says no %s: %w", what, a.versionName, ErrBadAnswer)
		case strings.Trim(a.version, `"`) != strings.Trim(info.Version, `"`):
			return fmt.Errorf("%w (%s %s, %s when opened)", ErrChanged, a.versionName, shown(a.version), shown(info.Version))
		}
	}
	switch a.status {
	case http.StatusPartialContent:
		cr, ok := parseContentRange(a.contentRange)
		switch {
		case !ok || cr.first < 0:
			return fmt.Errorf("%s: the store's Content-Range is %s: %w", what, shown(a.contentRange), ErrBadAnswer)
		case cr.total >= 0 && cr.total != info.Size:
			return fmt.Errorf("%w (%d bytes, %d when opened)", ErrChanged, cr.total, info.Size)
		case cr.first != off || cr.last != off+n-1:
			return fmt.Errorf("%s: the store sent bytes [%d, +%d): %w", what, cr.first, cr.last-cr.first+1, ErrBadAnswer)
		case cr.total < 0:
			return fmt.Errorf("%s: the store's Content-Range %s says no size: %w", what, shown(a.contentRange), ErrBadAnswer)
		}
	case http.StatusOK:
		if off != 0 || n != info.Size {
			return fmt.Errorf("%s: the store sent the whole object (200 OK): %w", what, ErrBadAnswer)
		}
	default:
		return fmt.Errorf("%s: the store answered %d %s: %w", what, a.status, http.StatusText(a.status), ErrBadAnswer)
	}
	if a.length >= 0 && a.length != n {
		return fmt.Errorf("%s: the store sends %d bytes: %w", what, a.length, ErrBadAnswer)
	}
	return nil
}

// shown returns a header's value for an error: as it is when it is printable ASCII, quoted
// otherwise, cut to 64 bytes either way (a store's header may be long).
func shown(s string) string {
	cut := ""
	if len(s) > 64 {
		s, cut = s[:64], "…"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return strconv.Quote(s) + cut
		}
	}
	if s == "" {
		return `""`
	}
	return s + cut
}
