package atomicio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofrs/flock"
)

// Where lock files live.
//
// A file inside a hivemem home (a directory holding hive/agents/) is
// locked through a file under <home>/palace/locks/, named for the file's
// path relative to the home: the hive keeps only what agents and people
// wrote, so a hive kept in git stays clean. A file in no home (a bare
// directory: tests, a tool's own files) is locked through the sidecar
// "<path>.lock" beside it, as before. Mining never locks what it reads, so
// the directories the MemPalace drop-in mines by path get no lock files
// either way.
//
// Earlier versions always used the sidecar. A process of such a version
// (a `run` left running across an upgrade, a hook bound to an old binary)
// still locks there, so Lock takes the sidecar too whenever it exists:
// a file an earlier version ever locked has one, and it stays until
// RemoveLegacyLocks finds it unused (an earlier version that locks the
// file again makes it again). One window is left: a file no earlier
// version has locked yet, which one starts to lock while this version
// holds the file's new lock — it makes the sidecar after Lock looked for
// it. That takes both versions writing the same file for the first time
// within the same moment; an earlier version's `run` cannot run beside
// this one's (palace/run.lock is the same), and Lock never creates the
// sidecar, or the hive would never be clean.

// LocksDir is the directory, inside a home's palace directory, that holds
// the lock files of the home's files.
const LocksDir = "locks"

// maxLockName bounds a lock file's name: most file systems allow 255
// bytes, and a name longer than this is cut and completed by a hash.
const maxLockName = 200

// LockPath is the lock file that Lock takes for path (see "Where lock
// files live" above): under <home>/palace/locks/ for a file inside a home,
// else path's sidecar "<path>.lock". It is a pure function of the path's
// real location and of where homes are, so every process agrees on it.
func LockPath(path string) string {
	real := realPath(path)
	root, ok := homeOf(real)
	if !ok {
		return legacyLockPath(path)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || !locksDirInside(root) {
		return legacyLockPath(path)
	}
	return filepath.Join(root, "palace", LocksDir, lockName(filepath.ToSlash(rel)))
}

// locksDirInside says whether the home's palace/locks/ (as far as it
// exists) stays inside the home: a palace that links out of the home is
// refused by every writer, and its lock files must not be made there
// either, so such a home keeps the sidecar lock files of earlier versions.
func locksDirInside(root string) bool {
	for _, p := range []string{filepath.Join(root, "palace"), filepath.Join(root, "palace", LocksDir)} {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return true // not there (yet): made inside the home
		}
		if rel, err := filepath.Rel(root, r); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return false
		}
	}
	return true
}

// legacyLockPath is the sidecar earlier versions locked: the path with
// its symlinks resolved when it exists, plus LockSuffix.
func legacyLockPath(path string) string {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	return path + LockSuffix
}

// realPath is path with its symlinks resolved: the file's own when it
// exists, else its directory's (a lock on a name no file has yet, such as
// a per-directory lock), so a lock does not move when the file appears.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return absOr(r)
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(absOr(r), filepath.Base(path))
	}
	return absOr(path)
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// homeOf finds the home a file (real, absolute) lies in: its nearest
// ancestor directory that holds hive/agents/. Only hive/ is required, not
// palace/, so that deleting the index (it is rebuilt from the hive) never
// moves a lock.
func homeOf(real string) (string, bool) {
	for dir := filepath.Dir(real); ; {
		if st, err := os.Stat(filepath.Join(dir, "hive", "agents")); err == nil && st.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// lockName turns a home-relative slash path into one file name: "%" and
// "/" are escaped, so two paths never share a name, and a name too long
// for a file system keeps a readable head and ends in a hash of the path.
func lockName(rel string) string {
	name := strings.NewReplacer("%", "%25", "/", "%2F").Replace(rel)
	if len(name)+len(LockSuffix) <= maxLockName {
		return name + LockSuffix
	}
	sum := sha256.Sum256([]byte(rel))
	head := name[:maxLockName/2]
	for !utf8.ValidString(head) { // never cut inside a character
		head = head[:len(head)-1]
	}
	return head + "-" + hex.EncodeToString(sum[:16]) + LockSuffix
}

// lockOne waits for an exclusive flock on lockPath until ctx ends (the
// error then wraps ErrLocked and names path). With create false a missing
// lock file is not made: ok is false and nothing is held.
func lockOne(ctx context.Context, path, lockPath string, create bool) (unlock func() error, ok bool, err error) {
	opts := []flock.Option{flock.SetPermissions(0o644)}
	if !create {
		opts = append(opts, flock.SetFlag(os.O_RDONLY))
	} else if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		return nil, false, fmt.Errorf("atomicio: lock %s: %w", path, err)
	}
	fl := flock.New(lockPath, opts...)
	delay := 2 * time.Millisecond
	const maxDelay = 100 * time.Millisecond
	for {
		got, err := fl.TryLock()
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("atomicio: lock %s: %w", lockPath, err)
		}
		if got {
			if !create && !lockStillAt(fl, lockPath) {
				// Removed (RemoveLegacyLocks) between our open and our
				// flock: an earlier version would lock a new file there,
				// so look again.
				_ = fl.Close()
				fl = flock.New(lockPath, opts...)
				continue
			}
			return fl.Unlock, true, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			_ = fl.Close()
			return nil, false, fmt.Errorf("atomicio: %s is %w (lock file %s): %w", path, ErrLocked, lockPath, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(delay*2, maxDelay)
	}
}

// lockStillAt reports whether the file fl holds open is still the one at
// path.
func lockStillAt(fl *flock.Flock, path string) bool {
	held, err := fl.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && os.SameFile(held, now)
}

// RemoveLegacyLocks removes, under dir (a hive), the lock files earlier
// versions left beside the files they locked, once nobody uses them: each
// "<file>.lock" that is empty, whose file's lock (LockPath) and the
// sidecar itself are free at once, and that no other process has open
// (where the system tells: Linux's /proc, looked through once for them
// all). An earlier version holds its sidecar open only while it tries or
// holds the lock, and opens it anew on each try (making it again if it is
// gone, which Lock then takes too), so only one caught between its open
// and its flock at the instant of the removal could go on to lock the
// removed file. Symbolic links are not followed. It returns how many it
// removed.
func RemoveLegacyLocks(ctx context.Context, dir string) (int, error) {
	var candidates []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), LockSuffix) && len(d.Name()) > len(LockSuffix) {
			candidates = append(candidates, p)
		}
		return ctx.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("atomicio: find old lock files in %s: %w", dir, err)
	}
	// One look through /proc for them all: one per file costs a scan of
	// every process's descriptors each.
	open, err := openElsewhere(candidates)
	if err != nil {
		return 0, fmt.Errorf("atomicio: find old lock files in use: %w", err)
	}
	removed := 0
	var errs []error
	for _, side := range candidates {
		if open[side] {
			continue
		}
		ok, err := removeLegacyLock(ctx, side)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed++
		}
	}
	return removed, errors.Join(errs...)
}

// RemoveLegacyLockOf removes the lock file an earlier version left beside
// file (a home's config.toml), on RemoveLegacyLocks's terms, and reports
// whether it did.
func RemoveLegacyLockOf(ctx context.Context, file string) (bool, error) {
	side := file + LockSuffix
	open, err := openElsewhere([]string{side})
	if err != nil || open[side] {
		return false, err
	}
	return removeLegacyLock(ctx, side)
}

// removeLegacyLock removes one sidecar that no other process has open if
// it is unused (see RemoveLegacyLocks); busy or in doubt, it is kept.
func removeLegacyLock(ctx context.Context, side string) (bool, error) {
	if st, err := os.Lstat(side); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		return false, nil // gone, or not a lock file (locks are empty)
	}
	file := strings.TrimSuffix(side, LockSuffix)
	primary := LockPath(file)
	if primary == side {
		return false, nil // in no home: the sidecar is the lock itself
	}
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	unlockPrimary, _, err := lockOne(tctx, file, primary, true)
	if err != nil {
		return false, nil // busy: a later run removes it
	}
	defer func() { _ = unlockPrimary() }()
	fl := flock.New(side, flock.SetFlag(os.O_RDONLY))
	got, err := fl.TryLock()
	if err != nil || !got {
		_ = fl.Close()
		return false, nil
	}
	defer func() { _ = fl.Unlock() }()
	if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("atomicio: remove old lock file: %w", err)
	}
	return true, nil
}
