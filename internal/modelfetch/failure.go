package modelfetch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// FailureMarker is the file beside dir that records the last failed
// fetch into it (its time and error), so that an automatic fetch is not
// tried again at once.
func FailureMarker(dir string) string {
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".fetch-failed")
}

// FailedWithin says whether a fetch into dir failed less than d ago (as
// RecordFailure recorded it).
func FailedWithin(dir string, d time.Duration) bool {
	st, err := os.Stat(FailureMarker(dir))
	return err == nil && time.Since(st.ModTime()) < d
}

// RecordFailure records that a fetch into dir failed with cause.
func RecordFailure(dir string, cause error) error {
	line := time.Now().UTC().Format(time.RFC3339) + " " + strings.Join(strings.Fields(cause.Error()), " ") + "\n"
	return atomicio.WriteFile(FailureMarker(dir), []byte(line), 0o644)
}

// ClearFailure forgets a failed fetch into dir (after one that worked).
func ClearFailure(dir string) error {
	if err := os.Remove(FailureMarker(dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
