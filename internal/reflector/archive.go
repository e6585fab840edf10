package reflector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/memfile"
)

// archivePath is the month file evicted sections go to: sections are filed
// by when they were archived, so every archive file only ever grows at its
// end.
func (r *Reflector) archivePath(agent string, now time.Time) (string, error) {
	dir, err := r.home.ArchiveDir(agent)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, now.UTC().Format("2006-01")+".md"), nil
}

// readArchive returns the contents of every archive file of agent (a
// missing directory is an empty archive). Temp files are skipped.
func (r *Reflector) readArchive(agent string) ([][]byte, error) {
	dir, err := r.home.ArchiveDir(agent)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read archive %s: %w", dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	out := make([][]byte, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// archived reports whether raw stands verbatim in one of the archive files.
func archived(files [][]byte, raw string) bool {
	for _, f := range files {
		if bytes.Contains(f, []byte(raw)) {
			return true
		}
	}
	return false
}

// appendArchive appends the evicted sections, verbatim, to the agent's
// archive month file, under that file's lock and atomically. It is
// idempotent: a section already in the archive word for word (left there by
// an earlier attempt that aborted after archiving) is not appended twice,
// so retries never duplicate the archive. It returns the month file's path
// and how many sections were appended.
func (r *Reflector) appendArchive(ctx context.Context, agent string, evicted []memfile.Section) (string, int, error) {
	path, err := r.archivePath(agent, r.now())
	if err != nil {
		return "", 0, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", 0, fmt.Errorf("create archive directory: %w", err)
	}
	existing, err := r.readArchive(agent)
	if err != nil {
		return "", 0, err
	}
	var add []string
	for _, s := range evicted {
		if !archived(existing, s.Raw) {
			add = append(add, s.Raw)
		}
	}
	if len(add) == 0 {
		return path, 0, nil
	}
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	defer cancel()
	err = atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		var b bytes.Buffer
		b.Grow(len(old) + 64)
		if len(old) == 0 {
			b.WriteString("# Archive — " + agent + "\n\n")
		} else {
			b.Write(old)
			if !bytes.HasSuffix(old, []byte("\n")) {
				b.WriteByte('\n')
			}
		}
		for _, raw := range add {
			b.WriteString(raw)
			if !strings.HasSuffix(raw, "\n") {
				b.WriteByte('\n')
			}
		}
		return b.Bytes(), nil
	})
	if err != nil {
		return path, 0, fmt.Errorf("append to archive %s: %w", path, err)
	}
	return path, len(add), nil
}
