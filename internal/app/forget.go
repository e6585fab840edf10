package app

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
)

// ForgetRequest takes a section, or one line, out of an agent's memory
// file. Name the section by drawer id (Drawer) or heading (Heading); Line
// alone names the one line of the file that contains it, Line with a
// section the one line of that section. Purge is for a secret pasted by
// mistake: the text leaves every copy hivemem keeps (see Forget), and
// Confirm must repeat the agent id.
type ForgetRequest struct {
	Agent   string `json:"agent,omitempty"` // "": the caller's (Scope.Caller)
	Drawer  string `json:"drawer,omitempty"`
	Heading string `json:"heading,omitempty"`
	Line    string `json:"line,omitempty"`
	Purge   bool   `json:"purge,omitempty"`
	Confirm string `json:"confirm,omitempty"`
	// LockWait bounds the wait for the palace write lock (0: DefaultLockWait).
	LockWait time.Duration `json:"-"`
	// Scope: a caller forgets only in its own memory.
	Scope Scope `json:"-"`
}

// Validate checks the request without touching anything; every error
// is ErrInvalid.
func (r ForgetRequest) Validate() error {
	agent, err := r.Scope.writeAgent(r.Agent)
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	switch {
	case r.Drawer != "" && r.Heading != "":
		return invalid(errors.New("forget: give a drawer id or a heading, not both"))
	case r.Drawer == "" && r.Heading == "" && r.Line == "":
		return invalid(errors.New("forget: name what to forget: a drawer id, a heading, or a line"))
	}
	for _, f := range []struct{ name, v string }{{"drawer", r.Drawer}, {"heading", r.Heading}, {"line", r.Line}} {
		if f.v != "" {
			if err := checkRef(f.name, f.v); err != nil {
				return fmt.Errorf("forget: %w", err)
			}
		}
	}
	if r.Purge && r.Confirm != agent {
		return invalid(fmt.Errorf("forget: a purge removes the text from every copy and cannot be undone: confirm it with the agent id %q", agent))
	}
	return nil
}

// ForgetResult says what Forget took out and where it went: the same
// object from `hivemem forget --json`, the API and MCP memory_forget.
type ForgetResult struct {
	Agent   string       `json:"agent"`
	Source  string       `json:"source" jsonschema:"the memory file, relative to the hivemem home"`
	Section *SectionInfo `json:"section,omitempty" jsonschema:"the section removed"`
	Line    *LineInfo    `json:"line,omitempty" jsonschema:"the line removed"`
	// Backup is the backup of the file as it was (purged of the text too).
	Backup string `json:"backup"`
	// Kept is where the text was kept (hive/forgotten/..., never indexed);
	// "" for a purge.
	Kept string `json:"kept,omitempty" jsonschema:"file keeping the forgotten text, never indexed; empty for a purge"`
	// Purged lists the files the text was removed from (a purge).
	Purged []string `json:"purged,omitempty"`
	// Purge is the purge's whole report (where, how many agents' files).
	Purge          *PurgeResult `json:"purge,omitempty"`
	DrawersRemoved int          `json:"drawers_removed"`
	MineError      string       `json:"mine_error,omitempty" jsonschema:"the text is out of the file, but updating the index failed: the next mine drops its drawers"`
}

// Forget removes a section or a line from the agent's memory file: locked,
// atomic, the file backed up first; the text is kept in
// hive/forgotten/<agent>/ (reason "forgotten", never indexed) and the
// file's drawers follow at once. With Purge the text is not kept: it is
// purged from the whole home (see Purge) — the memory file, every copy of
// it anywhere in the home, whichever agent's, and the index — and no
// backup holding it is made. Purge also takes a drawer id of a section
// that already left the memory file (the agent's archive, sessions).
func (a *App) Forget(ctx context.Context, r ForgetRequest) (ForgetResult, error) {
	if err := r.Validate(); err != nil {
		return ForgetResult{}, err
	}
	agent, _ := r.Scope.writeAgent(r.Agent)
	path, _ := a.home.MemoryPath(agent)
	out := ForgetResult{Agent: agent, Source: a.home.Rel(path)}
	// The file is backed up first: no secret an agent appended by hand
	// may go into that backup.
	if err := a.redactMemoryFiles(ctx, agent); err != nil {
		return out, fmt.Errorf("forget: %w", err)
	}
	refl, err := a.reflectorFor(ctx)
	if err != nil {
		return out, fmt.Errorf("forget: %w", err)
	}
	if r.Purge {
		return a.forgetPurge(ctx, r, agent, out)
	}
	ref := r.Heading
	if r.Drawer != "" {
		if ref, err = a.sectionRef(ctx, agent, r.Drawer); err != nil {
			return out, fmt.Errorf("forget: %w", err)
		}
	}
	var removed memfile.Section
	var line memfile.Line
	b, err := refl.Correct(ctx, agent, func(old []byte) ([]byte, error) {
		if r.Line != "" {
			res, l, err := memfile.RemoveLine(old, ref, r.Line)
			line = l
			return res, err
		}
		res, s, err := memfile.RemoveSection(old, ref)
		removed = s
		return res, err
	})
	if err != nil {
		return out, fmt.Errorf("forget: %w", badInput(err))
	}
	out.Backup = b.Name
	var text, lines string
	if r.Line != "" {
		li := lineInfoOf(line)
		out.Line = &li
		text, lines = line.Text+"\n", fmt.Sprint(line.Number)
	} else {
		si := sectionOf(removed)
		out.Section = &si
		text, lines = removed.Raw, fmt.Sprintf("%d-%d", removed.StartLine, removed.EndLine)
	}

	kept, err := refl.KeepForgotten(ctx, agent, reflector.ForgottenEntry{Reason: "forgotten", Source: out.Source, Lines: lines, Text: text})
	if err != nil {
		return out, fmt.Errorf("forget: the text is out of the memory file but could not be kept (it is in backup %s): %w", b.Name, err)
	}
	out.Kept = a.home.Rel(kept)
	n, err := a.reindexAgent(ctx, agent, false, r.LockWait)
	out.DrawersRemoved = n
	if err != nil {
		out.MineError = err.Error()
	}
	data := map[string]any{"source": out.Source, "lines": lines, "kept": out.Kept, "backup": b.Name}
	if out.Section != nil {
		data["heading"] = out.Section.Heading
	}
	a.event("forget", agent, data)
	return out, nil
}

// badInput marks the errors of a correction that name a problem with the
// request (no such section, an ambiguous heading) as bad requests, and an
// agent without a memory file as not found, as a read of it is.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range []string{"no section", "sections are headed", "no line", "lines contain", "forget the section instead", "not a pinned fact", "has no memory file", "not a one-line fact", "is empty", "give the text"} {
		if strings.Contains(msg, s) {
			// The innermost error that says it, without the layers of the
			// write it failed in (atomicio's, with the file's absolute
			// path on the server), which tell the caller nothing.
			for u := errors.Unwrap(err); u != nil && strings.Contains(u.Error(), s); u = errors.Unwrap(u) {
				err = u
			}
			if s == "has no memory file" {
				return kindError{ErrNotFound, err}
			}
			return invalid(err)
		}
	}
	return err
}

// reindexAgent mines the agent's memory file (and with archive its archive
// too) under the palace write lock, and reports how many drawers went.
func (a *App) reindexAgent(ctx context.Context, agent string, archive bool, wait time.Duration) (int, error) {
	if err := a.index(ctx); err != nil {
		return 0, err
	}
	release, err := a.LockFor(ctx, "forget", wait)
	if err != nil {
		return 0, err
	}
	defer release()
	mem, _ := a.home.MemoryPath(agent)
	rep, err := a.mine(ctx, mem, palace.MineOptions{})
	removed := rep.Removed
	if err != nil || !archive {
		return removed, err
	}
	arch, _ := a.home.ArchiveDir(agent)
	rep, err = a.mine(ctx, arch, palace.MineOptions{})
	return removed + rep.Removed, err
}

// UnpinRequest takes a fact out of an agent's pinned facts.
type UnpinRequest struct {
	Agent string `json:"agent,omitempty"` // "": the caller's (Scope.Caller)
	Fact  string `json:"fact"`
	// LockWait bounds the wait for the palace write lock (0: DefaultLockWait).
	LockWait time.Duration `json:"-"`
	// Now is the day the fact stopped being true (zero: today).
	Now time.Time `json:"-"`
	// Scope: a caller unpins only in its own memory.
	Scope Scope `json:"-"`
}

// Validate checks the request; every error is ErrInvalid.
func (r UnpinRequest) Validate() error {
	if _, err := r.Scope.writeAgent(r.Agent); err != nil {
		return fmt.Errorf("unpin: %w", err)
	}
	if err := memory.CheckFact(r.Fact); err != nil {
		return invalid(fmt.Errorf("unpin: %w", errors.Unwrap(err)))
	}
	return nil
}

// UnpinResult says which fact left the pinned region and where it was
// archived: `hivemem unpin --json`, the API and MCP memory_unpin.
type UnpinResult struct {
	Agent      string `json:"agent"`
	Source     string `json:"source"`
	Fact       string `json:"fact" jsonschema:"the fact as it stood in the file"`
	ReplacedBy string `json:"replaced_by,omitempty" jsonschema:"the fact pinned in its place (pin --replaces)"`
	Backup     string `json:"backup"`
	Archive    string `json:"archive,omitempty" jsonschema:"archive file the fact went to, dated the day it stopped being true"`
	Pinned     int    `json:"pinned" jsonschema:"pinned facts in the file right after this write"`
	MineError  string `json:"mine_error,omitempty"`
}

// Unpin removes a pinned fact (matched as pin matches: list markers, 📌
// and spacing ignored) under the file lock, the file backed up first, and
// files it in the agent's archive with the day it stopped being true.
func (a *App) Unpin(ctx context.Context, r UnpinRequest) (UnpinResult, error) {
	if err := r.Validate(); err != nil {
		return UnpinResult{}, err
	}
	agent, _ := r.Scope.writeAgent(r.Agent)
	return a.changePinned(ctx, agent, r.Fact, "", r.Now, r.LockWait)
}

// changePinned unpins fact, or replaces it with with, and archives it.
func (a *App) changePinned(ctx context.Context, agent, fact, with string, now time.Time, wait time.Duration) (UnpinResult, error) {
	path, _ := a.home.MemoryPath(agent)
	out := UnpinResult{Agent: agent, Source: a.home.Rel(path), ReplacedBy: with}
	op := "unpin"
	// The file is backed up first: no secret an agent appended by hand
	// may go into that backup.
	if err := a.redactMemoryFiles(ctx, agent); err != nil {
		return out, fmt.Errorf("%s: %w", op, err)
	}
	if with != "" {
		op = "pin --replaces"
	}
	if now.IsZero() {
		now = time.Now()
	}
	refl, err := a.reflectorFor(ctx)
	if err != nil {
		return out, fmt.Errorf("%s: %w", op, err)
	}
	b, err := refl.Correct(ctx, agent, func(old []byte) ([]byte, error) {
		var res []byte
		var was string
		var err error
		if with != "" {
			res, was, err = memfile.ReplacePinned(old, fact, strings.TrimSpace(with))
		} else {
			res, was, err = memfile.RemovePinned(old, fact)
		}
		if err != nil {
			return nil, err
		}
		out.Fact = was
		out.Pinned, err = memfile.CountPinned(res) // under the file's lock
		return res, err
	})
	if errors.Is(err, memfile.ErrNotPinned) { // the file it is not in, by name
		return out, invalid(fmt.Errorf("%s: %q is %w of %s", op, fact, memfile.ErrNotPinned, out.Source))
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w", op, badInput(err))
	}
	out.Backup = b.Name
	if out.Archive, err = a.archiveFact(ctx, refl, agent, out.Fact, with, now); err != nil {
		return out, fmt.Errorf("%s: the fact is changed in the memory file, but archiving the old one failed (it is in backup %s): %w", op, b.Name, err)
	}
	if _, err := a.mineWritten(ctx, path, op, wait); err != nil {
		out.MineError = err.Error()
	}
	if out.Archive != "" {
		if err := a.mineArchive(ctx, out.Archive, wait); err != nil && out.MineError == "" {
			out.MineError = err.Error()
		}
	}
	typ := "unpin"
	data := map[string]any{"source": out.Source, "fact": out.Fact, "archive": out.Archive, "backup": b.Name}
	if with != "" {
		typ, data["replaced_by"] = "pin-replace", with
	}
	a.event(typ, agent, data)
	return out, nil
}

// mineArchive mines an archive file (relative to the home) under the
// palace write lock.
func (a *App) mineArchive(ctx context.Context, rel string, wait time.Duration) error {
	_, err := a.mineWritten(ctx, a.home.Abs(path.Clean(rel)), "archive", wait)
	return err
}
