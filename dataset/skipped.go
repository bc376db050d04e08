package dataset

import (
	"errors"
	"strconv"
	"strings"
)

// ErrUnreadable is wrapped by every SkippedFile: a file of a directory dataset left out of its
// table — one that cannot be read (a Parquet file without its footer, an Arrow file cut
// short), a part that does not join the parts before it, two files of one base name. A reader
// of a table with such a part fails with it unless told to read the rest
// (table.Options.SkipUnreadable; --skip-unreadable in the CLI).
var ErrUnreadable = errors.New("unreadable part")

// ErrSameBaseName is wrapped by the SkippedFile of each of two files in one folder whose names
// differ only in their extension (t.parquet and t.arrow): their tensors would have the same
// names, so neither is read.
var ErrSameBaseName = errors.New("files whose names differ only in their extension")

// SkippedFile is a file (or object, or folder) of a directory dataset that ScanDir or OpenDir
// left out, and the table it belongs to: the table its tensors would have been part of
// (a subdirectory's, the directory's table of parts, or the file's own, named after it).
// It is the error Err, naming the file; errors.Is also matches ErrUnreadable.
type SkippedFile struct {
	Path  string // the file's path or URI, as the directory's walk found it
	Table string // the table it belongs to (see Dir)
	Err   error  // why it is left out
}

// Error returns Err's text, which names the file (the path is put first when it does not).
func (s *SkippedFile) Error() string {
	msg := s.Err.Error()
	if strings.HasPrefix(msg, s.Path) {
		return msg
	}
	return s.Path + ": " + msg
}

// Unwrap returns Err and ErrUnreadable.
func (s *SkippedFile) Unwrap() []error { return []error{s.Err, ErrUnreadable} }

// SkippedOf returns the files of d's table named table that were left out (d.Skipped's, in
// their order), nil when none was.
func (d *Dir) SkippedOf(table string) []*SkippedFile {
	var out []*SkippedFile
	for _, err := range d.Skipped {
		var sf *SkippedFile
		if errors.As(err, &sf) && sf.Table == table {
			out = append(out, sf)
		}
	}
	return out
}

// UnreadableParts returns the error of the table named table whose parts skipped (one or
// more) were left out: "table T: unreadable part PATH: WHY (and N more)". It wraps the first
// SkippedFile (errors.As finds it), and so ErrUnreadable.
func UnreadableParts(table string, skipped []*SkippedFile) error {
	return &partsError{table, skipped}
}

// partsError is UnreadableParts' error.
type partsError struct {
	table   string
	skipped []*SkippedFile
}

func (e *partsError) Error() string {
	msg := "table " + e.table + ": " + ErrUnreadable.Error() + " " + e.skipped[0].Error()
	if n := len(e.skipped) - 1; n > 0 {
		msg += " (and " + strconv.Itoa(n) + " more)"
	}
	return msg
}

func (e *partsError) Unwrap() error { return e.skipped[0] }
