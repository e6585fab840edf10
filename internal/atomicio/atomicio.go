// Package atomicio writes files so that a crash never leaves them half
// written, and serialises writers across processes with an advisory lock.
//
// hivemem's memory files are the only copy of what an agent wrote, so every
// write hivemem makes (remember, pin, condensation) goes through here: the new
// bytes land in a hidden temp file in the same directory, are fsynced, and are
// renamed over the target, so a reader sees either the old file or the new
// one, never a mix. Writers that read-modify-write take Lock first (or use
// Update), so two writers can never interleave a read and a write.
package atomicio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tempSuffix ends every temp file name. Temp names also start with ".", so
// nothing that looks for "*.md" (a miner, a watcher glob) ever picks one up.
const tempSuffix = ".tmp"

// LockSuffix is appended to a path to name its lock file. The lock lives in a
// sidecar because the file itself is replaced by rename on every write, and a
// lock on a replaced inode protects nothing.
const LockSuffix = ".lock"

// StaleTempAge is how old a temp file must be before CleanTemp removes it: a
// writer finishes in well under a second, so anything this old was left by a
// crash.
const StaleTempAge = time.Minute

// ErrLocked is wrapped by Lock's error when ctx ends before the lock is free.
var ErrLocked = errors.New("locked by another writer")

// WriteFile replaces path with data atomically: after a crash at any point the
// file holds either its old contents or data, never a mix. It writes a temp
// file in the same directory (".<name>.<random>.tmp"), fsyncs it, renames it
// over path and fsyncs the directory so the rename itself is durable. An
// existing file keeps its permission bits; a new one gets perm. If path is a
// symlink, the file it points to is replaced and the link is kept. On any
// error the temp file is removed and path is left as it was.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	target, mode, err := resolveTarget(path, perm)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmpName, err := writeTemp(dir, base, data, mode)
	if err != nil {
		return fmt.Errorf("atomicio: %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmpName)
		}
	}()
	if err = os.Rename(tmpName, target); err != nil {
		return fmt.Errorf("atomicio: rename %s over %s: %w", tmpName, target, err)
	}
	// From here the new contents are in place; a failed directory fsync only
	// weakens durability across a power cut, so report it but do not remove
	// anything.
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("atomicio: %s written but directory not synced: %w", path, err)
	}
	return nil
}

// resolveTarget follows a symlink at path (so the link survives the rename)
// and picks the mode for the new file: the existing file's, else perm.
func resolveTarget(path string, perm os.FileMode) (string, os.FileMode, error) {
	target := path
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", 0, fmt.Errorf("atomicio: resolve symlink %s: %w", path, err)
		}
		if err == nil {
			target = resolved
		} else if dest, rerr := os.Readlink(path); rerr == nil {
			// Dangling link: create the file it points to.
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(path), dest)
			}
			target = dest
		}
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return "", 0, fmt.Errorf("atomicio: %s is %s, not a regular file", path, describeType(fi.Mode()))
		}
		return target, fi.Mode().Perm(), nil
	case errors.Is(err, fs.ErrNotExist):
		return target, perm.Perm(), nil
	default:
		return "", 0, fmt.Errorf("atomicio: stat %s: %w", path, err)
	}
}

// syncDir fsyncs a directory so that a rename into it survives a power cut.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, serr)
	}
	if cerr != nil {
		return fmt.Errorf("close directory %s: %w", dir, cerr)
	}
	return nil
}

// Lock takes an exclusive advisory lock (flock) on path's lock file,
// creating it if needed, and returns the function that releases it. The
// lock file is LockPath(path): under the home's palace/locks/ for a file
// in a home, else the sidecar "<path>.lock"; while an earlier version's
// sidecar "<path>.lock" exists beside a file in a home, it is taken too
// (after the first, so two takers never deadlock), so that a process of an
// earlier version is never a second writer. The lock is held per open
// file, so it excludes other processes and other Lock calls in this
// process alike. While the lock is busy Lock polls with a short backoff
// until ctx is done, then fails with an error wrapping ErrLocked. The lock
// file is left in place after unlock: removing it would let two writers
// lock two different inodes.
func Lock(ctx context.Context, path string) (unlock func() error, err error) {
	// Lock the file a symlink leads to: two links to one file are one file.
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	primary := LockPath(path)
	unlockPrimary, _, err := lockOne(ctx, path, primary, true)
	if err != nil {
		return nil, err
	}
	legacy := legacyLockPath(path)
	if legacy == primary {
		return unlockPrimary, nil
	}
	unlockLegacy, held, err := lockOne(ctx, path, legacy, false)
	if err != nil {
		_ = unlockPrimary()
		return nil, err
	}
	if !held {
		return unlockPrimary, nil
	}
	return func() error { return errors.Join(unlockLegacy(), unlockPrimary()) }, nil
}

// Update is a locked read-modify-write of path: it takes Lock, reads the file
// (a missing file reads as nil), calls fn with the old bytes and writes what
// fn returns with Swap. If fn returns the old bytes unchanged nothing is
// written, so a no-op update does not wake file watchers. An error from fn
// aborts the update and leaves the file untouched. When another program
// replaced the file after it was read (an editor's save), Update reads it
// again and calls fn again, a few times before giving up.
func Update(ctx context.Context, path string, perm os.FileMode, fn func(old []byte) ([]byte, error)) (err error) {
	unlock, err := Lock(ctx, path)
	if err != nil {
		return err
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("atomicio: unlock %s: %w", path, uerr)
		}
	}()
	if _, err := Recover(path); err != nil {
		return fmt.Errorf("atomicio: update %s: %w", path, err)
	}
	const attempts = 5
	for i := 0; ; i++ {
		err := updateOnce(ctx, path, perm, fn)
		if !errors.Is(err, ErrReplaced) || i == attempts-1 {
			return err
		}
	}
}

func updateOnce(ctx context.Context, path string, perm os.FileMode, fn func(old []byte) ([]byte, error)) error {
	// Keep the old file open: agents append without the lock, and a write
	// that lands in it after we read is carried over by Swap.
	fh, old, err := ReadForSwap(path)
	if err != nil {
		return fmt.Errorf("atomicio: read %s: %w", path, err)
	}
	if fh != nil {
		defer fh.Close()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("atomicio: update %s: %w", path, err)
	}
	data, err := fn(old)
	if err != nil {
		return fmt.Errorf("atomicio: update %s: %w", path, err)
	}
	if bytes.Equal(old, data) {
		return nil
	}
	_, err = Swap(path, fh, int64(len(old)), data, perm, DefaultSalvageGrace)
	return err
}

// DefaultSalvageGrace is how long Update watches a replaced file for late appends.
const DefaultSalvageGrace = 25 * time.Millisecond

// SalvageMaxWait bounds how long Salvage keeps watching after the grace
// while another process still holds the replaced file open.
const SalvageMaxWait = 3 * time.Second

// salvage copies bytes that reached the old file after it was replaced: an
// agent that opened the file for append just before the rename writes into
// the old inode, and without this those lines would be lost. old is the
// replaced file, open for reading, of which off bytes were already taken
// into the new file at path. It checks at once and again during grace;
// then, where the system tells (Linux's /proc), it goes on watching while
// any other process still has the old file open, up to SalvageMaxWait:
// an appender descheduled between its open and its write (a loaded
// machine) can write long after any fixed grace. It returns how many bytes
// it appended to path and whether another process still held the old file
// when it stopped (so more may still arrive), and calls carried (if not
// nil) with the new offset after each append, so that a kept file's name
// follows what is already carried.
func salvage(old *os.File, off int64, path string, grace time.Duration, carried func(off int64) error) (total int64, held bool, err error) {
	check := func() error {
		st, err := old.Stat()
		if err != nil {
			return fmt.Errorf("stat old file: %w", err)
		}
		if st.Size() <= off {
			return nil
		}
		buf := make([]byte, st.Size()-off)
		n, err := old.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read old file: %w", err)
		}
		if n == 0 {
			return nil
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("open new file: %w", err)
		}
		_, werr := f.Write(buf[:n])
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			return fmt.Errorf("append late writes: %w", err)
		}
		off += int64(n)
		total += int64(n)
		if carried != nil {
			return carried(off)
		}
		return nil
	}
	if err := check(); err != nil {
		return total, false, err
	}
	start := time.Now()
	if grace > 0 {
		for _, d := range []time.Duration{grace / 5, grace - grace/5} {
			time.Sleep(d)
			if err := check(); err != nil {
				return total, false, err
			}
		}
		for time.Since(start) < SalvageMaxWait {
			if h, err := heldOpenElsewhere(old); err != nil || !h {
				break // nobody else has it (or the system cannot tell)
			}
			time.Sleep(5 * time.Millisecond)
			if err := check(); err != nil {
				return total, false, err
			}
		}
	}
	held, herr := heldOpenElsewhere(old)
	held = held && herr == nil
	// Whatever an opener wrote before closing is in the old file now.
	if err := check(); err != nil {
		return total, held, err
	}
	return total, held, nil
}

// IsTempName reports whether name (a base name) looks like a temp file left
// by WriteFile, so watchers and miners can ignore it.
func IsTempName(name string) bool {
	return len(name) > len("."+tempSuffix) && strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix)
}

// CleanTemp removes WriteFile temp files (".*.tmp") in dir that are older than
// StaleTempAge, the leftovers of a process killed mid-write. Younger ones may
// belong to a write in progress and are kept. It is safe to run at any time.
func CleanTemp(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("atomicio: clean temp files in %s: %w", dir, err)
	}
	cutoff := time.Now().Add(-StaleTempAge)
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsTempName(e.Name()) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed or removed meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("atomicio: stat %s: %w", e.Name(), err))
			continue
		}
		if info.ModTime().After(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("atomicio: remove stale temp file: %w", err))
		}
	}
	return errors.Join(errs...)
}
