package app

import (
	"errors"
	"fmt"

	"github.com/hivemem/hivemem/internal/palace"
)

// The kinds of a refused request, besides bad input (palace.ErrBadQuery,
// which the HTTP API answers with 400): every front end maps them in one
// place (the API onto HTTP statuses).
var (
	// ErrNotFound: the request names an agent, backup or path the home
	// does not have (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request cannot be served in the home's present
	// state (mining switched off, a file changed since its preview): 409.
	ErrConflict = errors.New("conflict")
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
	return palace.BadQuery(fmt.Errorf(format, a...))
}
