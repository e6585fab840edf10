package app

import "github.com/hivemem/hivemem/internal/palace"

// MaxRememberBytes caps the text of one note Remember writes, for a front
// end to read no more than that of a stream.
const MaxRememberBytes = palace.MaxRememberBytes
