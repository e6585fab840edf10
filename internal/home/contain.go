package home

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// ErrOutsideHome is the error of a path that symlinks lead out of the home.
var ErrOutsideHome = errors.New("a symlink leads out of the home")

// maxLinks bounds the symlinks followed in one resolution (as the kernel's
// 40), so a loop is an error, not a hang.
const maxLinks = 40

// Contain is the home's one rule for symlinks: a symlink is followed only
// when its target stays inside the home. It resolves every symlink in path
// (which names a file or directory of the home) and returns the result
// spelled under h.Root, so that one file has one path however links lead
// to it (a home reached through a symlinked directory included). A path
// whose resolution leaves the home is refused with an error wrapping
// ErrOutsideHome that names the target; a loop is an error too. The part
// of path that does not exist yet (a file about to be created) is taken as
// written, after its existing directories are resolved.
func (h Home) Contain(path string) (string, error) {
	root, err := resolve(h.Root, 0)
	if err != nil {
		return "", fmt.Errorf("home %s: %w", h.Root, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	real, err := resolve(abs, 0)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	rel, ok := within(root, real)
	if !ok {
		return "", fmt.Errorf("%s: %w (to %s): symlinks are followed only to targets inside the home %s", path, ErrOutsideHome, real, h.Root)
	}
	return filepath.Join(h.Root, rel), nil
}

// Inside reports whether path, as written (no symlink resolved), lies in
// the home.
func (h Home) Inside(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	_, ok := within(filepath.Clean(h.Root), abs)
	return ok
}

// ReadFile reads a file of the home under the symlink rule (Contain) and
// without ever blocking on a FIFO or reading a device
// (atomicio.ReadRegular): what every reader of a memory or archive file
// uses, so that a planted link or FIFO gives a clear error, not a hang and
// not a file from elsewhere.
func (h Home) ReadFile(path string) ([]byte, error) {
	real, err := h.Contain(path)
	if err != nil {
		return nil, err
	}
	return atomicio.ReadRegular(real)
}

// Under reports whether path is root or inside it, both clean paths.
func Under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// within returns path relative to root when it is root or lies under it.
func within(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// resolve is filepath.EvalSymlinks for a path whose tail may not exist:
// the longest existing prefix is resolved and the rest appended; a
// dangling symlink is resolved through its (missing) target.
func resolve(p string, links int) (string, error) {
	if links > maxLinks {
		return "", fmt.Errorf("too many levels of symbolic links")
	}
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		to, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		return resolve(to, links+1)
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	rp, err := resolve(parent, links)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(p)), nil
}
