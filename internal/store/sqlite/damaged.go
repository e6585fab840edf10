package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Damaged reports whether err says the database file is not a usable
// SQLite database (SQLITE_CORRUPT or SQLITE_NOTADB): the index is
// disposable, so such a file is set aside and rebuilt, not repaired.
func Damaged(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
			return true
		}
	}
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "database disk image is malformed") || strings.Contains(msg, "file is not a database")
}

// SetAside renames a damaged database file (and its -wal and -shm files)
// to "<path>.damaged-<time>", kept for inspection, so that the next open
// starts an empty one. It returns the new name of the main file.
func SetAside(path string, now time.Time) (string, error) {
	dest := path + ".damaged-" + now.UTC().Format("20060102T150405Z")
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(path+suffix, dest+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", fmt.Errorf("set aside damaged index %s: %w", path, err)
	}
	return dest, nil
}
