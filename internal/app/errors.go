package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/writelock"
)

// The kinds of a refused request, the one error vocabulary of every front
// end: each maps them once (the CLI onto exit codes, the HTTP API onto
// statuses, MCP onto tool errors). An error of an App operation is of one
// kind (errors.Is(err, ErrInvalid), ...) or of none: a failure. Kind
// tells which.
var (
	// ErrInvalid: the request itself is wrong (a bad agent id, a value
	// out of range, a malformed query or setting): asking again the same
	// way fails again (HTTP 400).
	ErrInvalid = errors.New("invalid input")
	// ErrNotFound: the request names an agent, backup, wing or path the
	// home does not have (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request cannot be served in the home's present
	// state (mining switched off, a file changed since its preview): 409.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the home cannot serve the request now (a writer
	// holds the lock past the wait, the request was cancelled or timed
	// out): the same request may succeed later (503).
	ErrUnavailable = errors.New("unavailable")
)

// kindError is an error of one kind, its message kept as it is.
type kindError struct {
	kind error
	err  error
}

func (k kindError) Error() string        { return k.err.Error() }
func (k kindError) Unwrap() error        { return k.err }
func (k kindError) Is(target error) bool { return target == k.kind }

func notFound(format string, a ...any) error {
	return kindError{ErrNotFound, fmt.Errorf(format, a...)}
}

func conflict(format string, a ...any) error {
	return kindError{ErrConflict, fmt.Errorf(format, a...)}
}

func badRequest(format string, a ...any) error {
	return invalid(fmt.Errorf(format, a...))
}

// invalid marks err as bad input (ErrInvalid), its message kept.
func invalid(err error) error { return kindError{ErrInvalid, err} }

// Kind is the kind of err: ErrInvalid, ErrNotFound, ErrConflict or
// ErrUnavailable, or nil for an error of none (a failure, HTTP 500) and
// for nil. Besides the kinds the app marks, it knows the domain's own
// errors that reach a front end through an operation (a query the palace
// refuses, an unknown wing, a lock held past the wait), so that no front
// end needs to.
func Kind(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict), errors.Is(err, ErrUnavailable):
		for _, k := range []error{ErrInvalid, ErrNotFound, ErrConflict, ErrUnavailable} {
			if errors.Is(err, k) {
				return k
			}
		}
	case errors.Is(err, palace.ErrBadQuery), errors.Is(err, palace.ErrNoWords), errors.Is(err, palace.ErrEmptyQuery),
		errors.Is(err, home.ErrInvalidAgentID):
		return ErrInvalid
	case errors.Is(err, palace.ErrUnknownWing), errors.Is(err, palace.ErrUnknownAgent), errors.Is(err, palace.ErrUnknownRoom):
		return ErrNotFound
	case errors.Is(err, atomicio.ErrReplaced):
		return ErrConflict
	case errors.Is(err, atomicio.ErrLocked), errors.Is(err, writelock.ErrBusy),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ErrUnavailable
	}
	return nil
}

// ErrEmptyQuery is the ErrInvalid of a search with no text to search
// for, for a front end that names its own parameter in the message.
var ErrEmptyQuery = palace.ErrEmptyQuery

// withKind marks err with its Kind, for an operation that returns a domain
// error as it is: errors.Is(err, ErrNotFound) then holds for an unknown
// wing as for an unknown agent file. An error of no kind, or one already
// marked, is returned as it is.
func withKind(err error) error {
	k := Kind(err)
	if k == nil || errors.Is(err, k) {
		return err
	}
	return kindError{k, err}
}
