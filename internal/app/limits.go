package app

import (
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
)

// Limits every front end applies to its input, the palace's: a front end
// may ask less (MCP caps results lower), never more.
const (
	// MaxNameBytes caps a free-form name argument (wing, room, section).
	MaxNameBytes = memfile.MaxNameBytes
	// MaxResults caps the hits of one search.
	MaxResults = palace.MaxResults
	// MaxWakeUpBudget caps a wake-up digest, in estimated tokens.
	MaxWakeUpBudget = palace.MaxWakeUpBudget
)

// CheckName refuses a free-form name argument (wing, room, section) that
// is not valid UTF-8, holds a NUL byte or exceeds MaxNameBytes, naming
// the argument what in the error (ErrInvalid).
func CheckName(what, s string) error {
	if err := memfile.CheckText(what, s, MaxNameBytes); err != nil {
		return invalid(err)
	}
	return nil
}

// MaxRememberBytes caps the text of one note Remember writes, for a front
// end to read no more than that of a stream.
const MaxRememberBytes = memfile.MaxNoteBytes
