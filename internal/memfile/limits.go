package memfile

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the untrusted text a tool writes into a memory file.
const (
	// MaxNoteBytes caps one remembered note.
	MaxNoteBytes = 64 << 10
	// MaxFactBytes caps one pinned fact.
	MaxFactBytes = 2000
	// MaxNameBytes caps a heading (or other one-line name: a wing, a
	// room in a query).
	MaxNameBytes = 200
)

// CheckText refuses untrusted text that is not valid UTF-8, holds a NUL
// byte or exceeds limit bytes, naming the field in the error.
func CheckText(what, s string, limit int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", what)
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("%s contains a NUL byte", what)
	case len(s) > limit:
		return fmt.Errorf("%s is %d bytes, at most %d allowed", what, len(s), limit)
	}
	return nil
}
