package app

import (
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/reflector"
)

// CondenseDue reports whether a memory file of size bytes with sections
// ordinary sections is over the condensation triggers of rc (at least
// min_bytes, and over the byte or the section trigger): the next pass
// condenses it.
func CondenseDue(rc config.Reflector, size int64, sections int) bool {
	ok, _, _ := reflector.Triggered(rc, size, sections)
	return ok
}
