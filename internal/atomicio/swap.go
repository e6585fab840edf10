package atomicio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrReplaced is returned by Swap when the file at the path is no longer
// the one the caller read: another program saved it by rename (as editors
// do) or created it. Writing would throw that program's bytes away, so the
// caller must read again (Update does so itself).
var ErrReplaced = errors.New("replaced by another program since it was read")

// keptSuffix ends the name of a replaced file kept until its late appends
// are carried into the new one: ".<name>.<offset>.<random>.swapped", where
// offset is how many of its bytes the new file already holds.
const keptSuffix = ".swapped"

// SwapResult says what Swap did.
type SwapResult struct {
	Swapped  bool  // the new bytes are at the path (an error may still follow)
	Salvaged int64 // late appends carried from the replaced file
}

// Swap replaces path with data for a caller that holds path's Lock and read
// the current file through old (nil when there was none), taking its first
// off bytes into data. It is WriteFile made safe against the writers that
// do not take the lock:
//
//   - an editor that saved path by rename after old was read, or an agent
//     that created a missing file meanwhile: nothing is written and the
//     error wraps ErrReplaced, since a rename would discard their bytes;
//   - an agent appending to the replaced file (it opened it before the
//     rename): its bytes are carried into the new file by salvage, and the
//     replaced file stays linked under a hidden name until no other process
//     holds it open, so that a write after salvage gives up (a long-held
//     descriptor, or this process killed) is carried by the next Recover
//     instead of landing in an unlinked inode.
//
// A non-nil error with Swapped set means data is in place but the directory
// fsync or the salvage failed (the kept file still holds any late bytes).
func Swap(path string, old *os.File, off int64, data []byte, perm os.FileMode, grace time.Duration) (SwapResult, error) {
	var res SwapResult
	target, mode, err := resolveTarget(path, perm)
	if err != nil {
		return res, err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmpName, err := writeTemp(dir, base, data, mode)
	if err != nil {
		return res, fmt.Errorf("atomicio: %s: %w", path, err)
	}
	defer os.Remove(tmpName) // gone already once the swap is done

	if old == nil {
		// There was no file: create it only if there still is none. A hard
		// link fails when the name exists, which a rename would not.
		if err := os.Link(tmpName, target); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return res, fmt.Errorf("atomicio: %s: %w", path, ErrReplaced)
			}
			if !linkUnsupported(err) {
				return res, fmt.Errorf("atomicio: create %s: %w", path, err)
			}
			if err := os.Rename(tmpName, target); err != nil {
				return res, fmt.Errorf("atomicio: rename %s over %s: %w", tmpName, target, err)
			}
		}
		res.Swapped = true
		if err := syncDir(dir); err != nil {
			return res, fmt.Errorf("atomicio: %s written but directory not synced: %w", path, err)
		}
		return res, nil
	}

	// Keep the file being replaced reachable under a name that records how
	// much of it the new file holds, before anything else: from here a crash
	// leaves it where Recover finds it.
	kept := keptName(dir, base, off)
	if err := os.Link(target, kept); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("atomicio: %s: %w", path, ErrReplaced)
		}
		if !linkUnsupported(err) {
			return res, fmt.Errorf("atomicio: keep the old %s: %w", path, err)
		}
		kept = "" // no hard links here: salvage's watch is all there is
	}
	dropKept := func() {
		if kept != "" {
			_ = os.Remove(kept)
		}
	}
	if same, err := sameFile(old, firstNonEmpty(kept, target)); err != nil || !same {
		dropKept()
		if err != nil {
			return res, fmt.Errorf("atomicio: %s: %w", path, err)
		}
		return res, fmt.Errorf("atomicio: %s: %w", path, ErrReplaced)
	}

	// Exchange rather than rename where the system can: what comes back out
	// is exactly what was replaced, so a save that lands between the check
	// above and here is noticed and put back.
	exchanged, err := exchange(tmpName, target)
	if err != nil {
		dropKept()
		return res, fmt.Errorf("atomicio: exchange %s with %s: %w", tmpName, target, err)
	}
	if exchanged {
		if same, err := sameFile(old, tmpName); err != nil || !same {
			if _, berr := exchange(tmpName, target); berr != nil {
				return res, fmt.Errorf("atomicio: %s was replaced during the swap and could not be put back (it is %s): %w", path, tmpName, berr)
			}
			dropKept()
			return res, fmt.Errorf("atomicio: %s: %w", path, ErrReplaced)
		}
	} else if err := os.Rename(tmpName, target); err != nil {
		dropKept()
		return res, fmt.Errorf("atomicio: rename %s over %s: %w", tmpName, target, err)
	}
	res.Swapped = true
	var errs []error
	if err := syncDir(dir); err != nil {
		errs = append(errs, fmt.Errorf("atomicio: %s written but directory not synced: %w", path, err))
	}
	var track func(int64) error
	if kept != "" {
		track = func(off int64) error { return renameKept(&kept, dir, base, off) }
	}
	n, held, err := salvage(old, off, target, grace, track)
	res.Salvaged = n
	if err != nil {
		// The kept file stays: its name says how much of it is carried.
		errs = append(errs, fmt.Errorf("atomicio: %s: carry late appends: %w", path, err))
	} else if kept != "" && !held {
		_ = os.Remove(kept)
	}
	return res, errors.Join(errs...)
}

// Recover carries into path the bytes that reached files it replaced after
// their last salvage (see Swap), removes each kept file once no other
// process holds it, and clears stale temp files (CleanTemp) beside it. The
// caller holds path's Lock. Update and the reflector
// call it before they read; it is cheap when there is nothing to do.
func Recover(path string) (int64, error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("atomicio: recover %s: %w", path, err)
	}
	var total int64
	var errs []error
	for _, e := range entries {
		off, ok := keptOffset(e.Name(), base)
		if !ok {
			continue
		}
		n, err := recoverOne(filepath.Join(dir, e.Name()), off, target, dir, base)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("atomicio: recover %s from %s: %w", path, e.Name(), err))
		}
	}
	// Temp files of writers killed mid-write are whole copies of the file:
	// clear the stale ones while here.
	if err := CleanTemp(dir); err != nil {
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

func recoverOne(kept string, off int64, target, dir, base string) (int64, error) {
	f, err := os.Open(kept)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// Killed between keeping it and swapping: it is still the live file.
	if same, err := sameFile(f, target); err == nil && same {
		return 0, os.Remove(kept)
	}
	n, held, err := salvage(f, off, target, 0, func(off int64) error { return renameKept(&kept, dir, base, off) })
	if err != nil || held {
		return n, err
	}
	return n, os.Remove(kept)
}

// renameKept renames a kept file to record that its bytes up to off are
// carried, right after they were: a crash between the append and this
// rename is the only way a late line can end up carried twice (never lost).
func renameKept(kept *string, dir, base string, off int64) error {
	next := keptName(dir, base, off)
	if err := os.Rename(*kept, next); err != nil {
		return fmt.Errorf("record carried bytes of %s: %w", *kept, err)
	}
	*kept = next
	return nil
}

// keptName names a kept file; see keptSuffix.
func keptName(dir, base string, off int64) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(dir, "."+base+"."+strconv.FormatInt(off, 10)+"."+hex.EncodeToString(b[:])+keptSuffix)
}

// keptOffset parses a kept file's name for base, or says it is not one.
func keptOffset(name, base string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "."+base+".")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, keptSuffix)
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, false
	}
	off, err := strconv.ParseInt(num, 10, 64)
	if err != nil || off < 0 {
		return 0, false
	}
	return off, true
}

// IsKeptName reports whether name (a base name) is a replaced file kept by
// Swap, which watchers and miners ignore like temp files.
func IsKeptName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, keptSuffix)
}

// sameFile reports whether f is the file now at path.
func sameFile(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// linkUnsupported reports a file system without hard links.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EMLINK)
}

// writeTemp writes data to a new fsynced temp file in dir and returns its name.
func writeTemp(dir, base string, data []byte, mode os.FileMode) (name string, err error) {
	tmp, err := os.CreateTemp(dir, "."+base+".*"+tempSuffix)
	if err != nil {
		return "", fmt.Errorf("create temp file: %w", err)
	}
	// Not the named result: an error return sets that to "", and the temp
	// file (0 bytes, say, on a full disk) would be left behind.
	created := tmp.Name()
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(created)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return "", fmt.Errorf("write temp file: %w", err)
	}
	// CreateTemp makes 0600 files; set the wanted mode explicitly (this is
	// not subject to the umask, which is what keeps an existing file's mode).
	if err = tmp.Chmod(mode); err != nil {
		return "", fmt.Errorf("chmod %s: %w", created, err)
	}
	if err = tmp.Sync(); err != nil {
		return "", fmt.Errorf("fsync %s: %w", created, err)
	}
	if err = tmp.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", created, err)
	}
	return created, nil
}

// OpenRegular opens path for reading, refusing anything but a regular file
// (following symlinks) without blocking: a FIFO planted at a memory path
// would otherwise hang the reader, and whoever holds the lock with it.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a regular file", path, describeType(st.Mode()))
	}
	return f, nil
}

// describeType names a file type for an error message.
func describeType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// ReadRegular reads a whole regular file; see OpenRegular.
func ReadRegular(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadForSwap reads the regular file at path (see OpenRegular) and returns
// it still open, for the Swap that replaces it: what is appended after the
// read is carried over from it. A missing file is nil, nil, nil; the caller
// closes the file.
func ReadForSwap(path string) (*os.File, []byte, error) {
	f, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, data, nil
}
