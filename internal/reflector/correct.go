package reflector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// Correct edits agent's memory file for a correction (forget, unpin, a
// replaced pinned fact): under the reflector's per-agent lock (so that no
// condensation of the agent runs meanwhile) and the file's lock, the file
// as it is is backed up first, then fn's result is swapped in atomically.
// An error from fn leaves the file untouched and removes the backup. A
// missing memory file is an error: there is nothing to correct.
func (r *Reflector) Correct(ctx context.Context, agent string, fn func(old []byte) ([]byte, error)) (Backup, error) {
	if err := home.ValidateAgentID(agent); err != nil {
		return Backup{}, err
	}
	path, err := r.home.MemoryPath(agent)
	if err != nil {
		return Backup{}, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return Backup{}, fmt.Errorf("agent %s has no memory file", agent)
	}
	if _, err := r.home.Contain(path); err != nil {
		return Backup{}, err
	}
	release, err := r.acquire(ctx, agent)
	if err != nil {
		return Backup{}, err
	}
	defer release()
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	defer cancel()
	var b Backup
	err = atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		if b.Name != "" { // a second attempt (the file was replaced meanwhile)
			_ = removeBackupDir(r.home, b.Name, agent)
			b = Backup{}
		}
		if old == nil {
			return nil, fmt.Errorf("agent %s has no memory file", agent)
		}
		out, err := fn(old)
		if err != nil || bytes.Equal(out, old) {
			return out, err
		}
		if b, err = writeBackup(r.home, agent, old, r.now()); err != nil {
			return nil, err
		}
		return out, nil
	})
	if err != nil {
		if b.Name != "" {
			_ = removeBackupDir(r.home, b.Name, agent)
		}
		return Backup{}, err
	}
	if b.Name != "" {
		if _, err := pruneBackups(r.home, agent, r.settings().Reflector.Retention); err != nil {
			r.log.Warn("reflector: prune backups", "agent", agent, "err", err)
		}
	}
	return b, nil
}

// Archive appends sections verbatim to agent's archive (as condensation
// does: under the archive lock, idempotent) and returns the files written.
func (r *Reflector) Archive(ctx context.Context, agent string, sections []memfile.Section) ([]string, error) {
	if err := home.ValidateAgentID(agent); err != nil {
		return nil, err
	}
	written, _, err := r.appendArchive(ctx, agent, sections, r.settings().Palace.MaxFileBytes)
	return written, err
}

// ForgottenEntry is what forget keeps of a text it took out of a memory
// file: the text, verbatim, and a comment line before it that says when,
// why and from where.
type ForgottenEntry struct {
	Reason string // "forgotten"
	Source string // the memory file, relative to the home
	Lines  string // "12-14" or "13"
	Text   string // the section or line, verbatim
}

// KeepForgotten appends e to agent's forgotten text
// (hive/forgotten/<agent>/<YYYY-MM>.md), under a lock and atomically. That
// directory is never mined: search no longer finds the text, a person can
// still read it and put it back. It returns the file written.
func (r *Reflector) KeepForgotten(ctx context.Context, agent string, e ForgottenEntry) (string, error) {
	dir, err := r.home.ForgottenDir(agent)
	if err != nil {
		return "", err
	}
	if err := r.home.MkdirAll(dir); err != nil {
		return "", fmt.Errorf("keep forgotten text: %w", err)
	}
	path := filepath.Join(dir, r.now().UTC().Format("2006-01")+".md")
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	defer cancel()
	err = atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		var b bytes.Buffer
		if len(old) == 0 {
			b.WriteString("# Forgotten — " + agent + "\n\nText taken out of the memory file by `hivemem forget`, kept verbatim; never indexed.\n\n")
		} else {
			b.Write(old)
			if !bytes.HasSuffix(old, []byte("\n")) {
				b.WriteByte('\n')
			}
		}
		fmt.Fprintf(&b, "<!-- hivemem: %s %s from %s lines %s -->\n", e.Reason, r.now().UTC().Format(time.RFC3339), e.Source, e.Lines)
		b.WriteString(e.Text)
		if !strings.HasSuffix(e.Text, "\n") {
			b.WriteByte('\n')
		}
		return b.Bytes(), nil
	})
	if err != nil {
		return "", fmt.Errorf("keep forgotten text: %w", err)
	}
	return path, nil
}
