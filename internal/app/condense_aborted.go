package app

import (
	"errors"

	"github.com/hivemem/hivemem/internal/reflector"
)

// Aborted reports whether err, from Condense, is a condensation that
// aborted: Condense then also returns its result, which says why, an
// answer to show rather than a failure.
func Aborted(err error) bool {
	var ae *reflector.AbortError
	return errors.As(err, &ae)
}
