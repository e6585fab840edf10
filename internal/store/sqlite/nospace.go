package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/dustin/go-humanize"
)

// lowSpace is the free space under which a SQLite I/O error is taken for a
// full disk: opening the palace needs 32 KiB for the WAL index alone.
const lowSpace = 1 << 20

// explainNoSpace turns an error from opening the database at path into one
// that says the disk is full when it is: SQLite reports a full disk at
// open as a bare "disk I/O error (4874)" (the WAL index could not be
// sized), which names neither the cause nor the fix. The result wraps
// syscall.ENOSPC and the original error; any other error is returned as
// it is.
func explainNoSpace(path string, err error) error {
	if err == nil {
		return nil
	}
	full := errors.Is(err, syscall.ENOSPC)
	var coded interface{ Code() int }
	if !full && errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case 13: // SQLITE_FULL
			full = true
		case 10: // SQLITE_IOERR: a full disk, or a real I/O error
			if free, ok := freeBytes(filepath.Dir(path)); ok && free < lowSpace {
				full = true
			}
		}
	}
	if !full {
		return err
	}
	where := filepath.Dir(path)
	if free, ok := freeBytes(where); ok {
		return fmt.Errorf("%w (%s free in %s; free some space and retry): %w", syscall.ENOSPC, humanize.IBytes(free), where, err)
	}
	return fmt.Errorf("%w (in %s; free some space and retry): %w", syscall.ENOSPC, where, err)
}
