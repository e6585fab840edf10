package palace

import "github.com/hivemem/hivemem/internal/memfile"

// The limits of untrusted text, memfile's, named here for the callers that
// validate a query or a write before it reaches the palace or the memory
// package.
const (
	// MaxRememberBytes caps one remembered note (memory.Remember).
	MaxRememberBytes = memfile.MaxNoteBytes
	// MaxFactBytes caps one pinned fact (memory.Pin).
	MaxFactBytes = memfile.MaxFactBytes
	// MaxNameBytes caps a wing (or other free-form name) in a query.
	MaxNameBytes = memfile.MaxNameBytes
)

// CheckText refuses untrusted text that is not valid UTF-8, holds a NUL
// byte or exceeds limit bytes, naming the field in the error
// (memfile.CheckText).
func CheckText(what, s string, limit int) error { return memfile.CheckText(what, s, limit) }
