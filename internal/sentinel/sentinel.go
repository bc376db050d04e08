// Package sentinel makes sentinel errors that read as one phrase and still match a more
// general sentinel: ipc.ErrInvalid reads "invalid Arrow IPC input" and satisfies
// errors.Is(err, arrow.ErrInvalid), where fmt.Errorf("...: %w", arrow.ErrInvalid) would
// read "...: invalid" in every message that wraps it.
package sentinel

// New returns an error whose text is msg and which wraps base (nil for none).
func New(msg string, base error) error { return &sentinel{msg, base} }

type sentinel struct {
	msg  string
	base error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.base }
