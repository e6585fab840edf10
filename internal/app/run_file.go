package app

import (
	"path/filepath"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
)

// WriteRunFile replaces the file name in h's palace directory with data,
// atomically: the record of the running manager (run.pid), written before
// the home is opened.
func WriteRunFile(h home.Home, name string, data []byte) error {
	return atomicio.WriteFile(filepath.Join(h.PalaceDir(), name), data, 0o644)
}
