package home

import (
	"fmt"
	"os"
)

// MkdirAll creates dir — a directory of the home — and the parents it
// lacks, under the home's one rule for symlinks (Contain): a directory
// whose links lead out of the home (hive/archive/<agent> or sessions/ a
// symlink to elsewhere) is refused with an error wrapping ErrOutsideHome,
// before anything is created or written through it. Every writer of the
// home makes its directories with it, as every writer of a memory file
// checks the file with Contain.
func (h Home) MkdirAll(dir string) error {
	if _, err := h.Contain(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}
