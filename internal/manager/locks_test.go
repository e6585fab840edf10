package manager

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/filetest"
)

// TestRunStartRemovesUnusedOldLockFiles: a home upgraded from a version
// that kept its locks beside the files has them in the hive; run's start
// removes those nobody holds and keeps the one an earlier version still
// holds.
func TestRunStartRemovesUnusedOldLockFiles(t *testing.T) {
	a := openHome(t, "", map[string]string{"coder": goodFile})
	h := a.Home()
	mem, err := h.MemoryPath("coder")
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(h.ArchiveRoot(), "coder", "2026-11.md")
	filetest.Write(t, archive, "## 2026-11-01 — old\nold text\n")
	unused := []string{
		mem + atomicio.LockSuffix,
		filepath.Join(filepath.Dir(mem), ".condense") + atomicio.LockSuffix,
		archive + atomicio.LockSuffix,
		h.ConfigPath() + atomicio.LockSuffix,
	}
	for _, p := range unused {
		filetest.Write(t, p, "")
	}
	held := filepath.Join(h.ArchiveRoot(), "coder", ".archive") + atomicio.LockSuffix
	f, err := os.OpenFile(held, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	_, stop := running(t, a)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range unused {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("old lock file %s is still there (%v)", h.Rel(p), err)
		}
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the old lock an earlier version holds was removed: %v", err)
	}
	var left []string
	_ = filepath.WalkDir(h.HiveDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, atomicio.LockSuffix) && p != held {
			left = append(left, h.Rel(p))
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("lock files in the hive after run: %v", left)
	}
}
