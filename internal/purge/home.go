package purge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
)

// Place is one file of the home that held a purged text.
type Place struct {
	Path  string `json:"path" jsonschema:"relative to the hivemem home"`
	Kind  string `json:"kind" jsonschema:"memory, session, archive, forgotten, backup, event log, set-aside index, leftover or other"`
	Agent string `json:"agent,omitempty"`
	Found int    `json:"found" jsonschema:"how many times the text stood there"`
	// Removed: the whole file went (a set-aside damaged index).
	Removed bool `json:"removed,omitempty"`
	// Renamed: the file's name held the text (a session named after its
	// first words); Path is its new name.
	Renamed bool `json:"renamed,omitempty"`
}

// Report is what a scrub of the home's files found and changed.
type Report struct {
	Places []Place `json:"places"`
	// Left are files that hold a text and that a purge does not change
	// (config.toml): the caller says so.
	Left []string `json:"left,omitempty"`
}

// Agents is the agents whose files held a text, sorted.
func (r Report) Agents() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range r.Places {
		if p.Agent != "" && !seen[p.Agent] {
			seen[p.Agent] = true
			out = append(out, p.Agent)
		}
	}
	sort.Strings(out)
	return out
}

// liveIndex are the files of the SQLite index in use, which the store
// scrubs (its own files cannot be edited as bytes).
var liveIndex = map[string]bool{"palace/palace.db": true, "palace/palace.db-wal": true, "palace/palace.db-shm": true}

// ScrubHome takes every text m finds out of every file of the home h
// except the index in use: memory files, sessions, archives, forgotten
// text, backups, the event log, leftovers of interrupted writes, and any
// other file. A set-aside damaged index that holds one is removed (it
// cannot be edited, and the index is rebuilt from the markdown anyway).
// With dryRun nothing changes and the report says where it would.
func ScrubHome(ctx context.Context, h home.Home, m *Matcher, dryRun bool) (Report, error) {
	var rep Report
	if m.Empty() {
		return rep, nil
	}
	var files []string
	err := filepath.WalkDir(h.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("purge: walk %s: %w", h.Root, err)
	}
	var errs []error
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rel := h.Rel(p)
		if liveIndex[rel] || strings.HasPrefix(rel, "palace/"+StateFile) {
			continue
		}
		pl, err := scrubFile(ctx, h, p, rel, m, dryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case pl == nil:
		case pl.Kind == "config":
			rep.Left = append(rep.Left, rel)
		default:
			rep.Places = append(rep.Places, *pl)
		}
	}
	// Names, after the contents: a lock file made beside a file while it
	// was scrubbed is named after it.
	for _, p := range files {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		rel := h.Rel(p)
		if liveIndex[rel] || rel == "config.toml" {
			continue
		}
		// Its lock file, wherever this version or an earlier one keeps
		// it, is named after it too (the path is computed before the
		// rename, from the name the lock was taken under).
		locks := []string{atomicio.LockPath(p), p + atomicio.LockSuffix}
		renamed, err := scrubName(h, p, m, dryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if renamed == "" || strings.HasSuffix(p, atomicio.LockSuffix) {
			continue // a lock file is no copy of anything
		}
		for _, lock := range locks {
			if dryRun {
				break
			}
			if _, err := os.Lstat(lock); err == nil {
				if _, err := scrubName(h, lock, m, false); err != nil {
					errs = append(errs, err)
				}
			}
		}
		i := slices.IndexFunc(rep.Places, func(pl Place) bool { return pl.Path == rel })
		if i < 0 {
			kind, agent := classify(rel)
			rep.Places = append(rep.Places, Place{Kind: kind, Agent: agent})
			i = len(rep.Places) - 1
		}
		rep.Places[i].Path, rep.Places[i].Renamed = h.Rel(renamed), true
		rep.Places[i].Found++
	}
	return rep, errors.Join(errs...)
}

// scrubFile scrubs one file; nil when it holds nothing.
func scrubFile(ctx context.Context, h home.Home, p, rel string, m *Matcher, dryRun bool) (*Place, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // removed meanwhile (a leftover cleared, a rename)
	}
	if err != nil {
		return nil, fmt.Errorf("purge: read %s: %w", rel, err)
	}
	jsonl := strings.HasSuffix(p, ".jsonl")
	spans := m.Find(data)
	found := len(spans)
	if jsonl {
		_, found = ScrubJSONLines(data, m) // finds a text the JSON escapes too
	}
	if found == 0 {
		return nil, nil
	}
	kind, agent := classify(rel)
	pl := &Place{Path: rel, Kind: kind, Agent: agent, Found: found}
	if dryRun || kind == "config" {
		return pl, nil
	}
	switch kind {
	case "set-aside index":
		pl.Removed = true
		base := strings.TrimSuffix(strings.TrimSuffix(p, "-wal"), "-shm")
		for _, s := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(base + s); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("purge: remove %s: %w", h.Rel(base+s), err)
			}
		}
		return pl, nil
	case "leftover":
		// A temp file may belong to a write in progress, a kept file is
		// read by offset: overwrite the text in place, same length.
		return pl, overwrite(p, spans)
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	scrub := ScrubText
	if jsonl {
		scrub = ScrubJSONLines
	}
	lctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	err = atomicio.Update(lctx, p, st.Mode().Perm(), func(old []byte) ([]byte, error) {
		out, _ := scrub(old, m)
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("purge %s: %w", rel, err)
	}
	return pl, nil
}

// lockWait bounds the wait for one file's lock.
const lockWait = 30 * time.Second

// overwrite replaces spans of the file at p with '*', in place.
func overwrite(p string, spans []Span) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	var errs []error
	for _, s := range spans {
		_, err := f.WriteAt(bytes.Repeat([]byte{'*'}, s.End-s.Start), int64(s.Start))
		errs = append(errs, err)
	}
	errs = append(errs, f.Sync(), f.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("purge: overwrite %s: %w", p, err)
	}
	return nil
}

// classify names what kind of copy a file of the home is, and whose.
func classify(rel string) (kind, agent string) {
	parts := strings.Split(rel, "/")
	base := parts[len(parts)-1]
	switch {
	case atomicio.IsTempName(base) || atomicio.IsKeptName(base):
		kind = "leftover"
	case rel == "config.toml":
		return "config", ""
	case rel == "hive/log.jsonl":
		return "event log", ""
	case strings.HasPrefix(rel, "palace/palace.db.damaged-"):
		return "set-aside index", ""
	}
	if len(parts) >= 3 && parts[0] == "hive" {
		switch parts[1] {
		case "agents":
			agent = parts[2]
			if kind == "" {
				kind = "memory"
				if len(parts) > 3 && parts[3] == "sessions" {
					kind = "session"
				}
			}
		case "archive", "forgotten":
			agent = parts[2]
			if kind == "" {
				kind = parts[1]
			}
		case "backups":
			if len(parts) >= 4 {
				agent = parts[3]
			}
			if kind == "" {
				kind = "backup"
			}
		}
	}
	if home.ValidateAgentID(agent) != nil {
		agent = ""
	}
	if kind == "" {
		kind = "other"
	}
	return kind, agent
}

// scrubName renames a file whose name holds a text (the text becomes
// "purged"), and returns its new path ("" when the name holds none). Only
// the file's own name is looked at: directories are named by agent ids
// and dates.
func scrubName(h home.Home, p string, m *Matcher, dryRun bool) (string, error) {
	dir, base := filepath.Split(p)
	out, n := redactBytes([]byte(base), m)
	if n == 0 {
		return "", nil
	}
	name := strings.ReplaceAll(string(out), Marker, "purged")
	dest := filepath.Join(dir, name)
	if dryRun {
		return dest, nil
	}
	if _, err := os.Lstat(dest); err == nil {
		return "", fmt.Errorf("purge: rename a file to %s: it exists", h.Rel(dest))
	}
	if err := os.Rename(p, dest); err != nil {
		return "", fmt.Errorf("purge: rename a file to %s: %w", h.Rel(dest), errors.Unwrap(err))
	}
	return dest, nil
}
