package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/writelock"
)

// DefaultLockWait bounds how long a write waits for the palace write lock
// (a request's LockWait, when 0). The manager holds it for one mine at a
// time (milliseconds to a few seconds); only a long reindex by another
// command holds it for minutes.
const DefaultLockWait = 5 * time.Minute

// writeAgent is the agent a write acts for: the one named, else the
// caller's. A caller writes only to its own memory: naming another agent
// is refused, so that a bound front end (MCP --agent) never writes
// elsewhere. Every refusal is ErrInvalid.
func (s Scope) writeAgent(agent string) (string, error) {
	if s.Caller != "" && agent != "" && agent != s.Caller {
		return "", invalid(fmt.Errorf("agent %q refused: this server writes only to agent %q's memory", agent, s.Caller))
	}
	return s.agent(agent)
}

// readAgent is the agent a read acts on: the one named, else the
// caller's; under an own scope, only the caller's. Every refusal wraps
// ErrInvalid.
func (s Scope) readAgent(agent string) (string, error) {
	agent, err := s.agent(agent)
	if err == nil && s.Own && agent != s.Caller {
		return "", s.refuse("agent", agent)
	}
	return agent, err
}

// agent is the agent named, else the caller's, as a valid agent id.
func (s Scope) agent(agent string) (string, error) {
	if agent == "" {
		agent = s.Caller
	}
	if err := home.ValidateAgentID(agent); err != nil {
		if agent == "" {
			err = fmt.Errorf("agent is required: %w", err) // and the caller is bound to none
		}
		return "", invalid(err)
	}
	return agent, nil
}

// RememberRequest appends a dated note to an agent's memory file.
type RememberRequest struct {
	Agent   string `json:"agent,omitempty"` // "": the caller's (Scope.Caller)
	Text    string `json:"text"`
	Heading string `json:"heading,omitempty"` // "": the text's first line
	// Supersedes names a section of the agent's memory file the note
	// replaces (a drawer id or a heading): it is marked superseded and
	// search leaves it out unless asked (see Supersede in correct.go).
	Supersedes string `json:"supersedes,omitempty"`
	// Force writes a note that repeats one the agent already has.
	Force bool `json:"force,omitempty"`
	// KeepSecrets writes the secrets the note holds as they are (a test
	// fixture's fake key) instead of redacting them; the result says so.
	KeepSecrets bool `json:"keep_secrets,omitempty"`
	// Now dates the section (zero: the current time).
	Now time.Time `json:"-"`
	// LockWait bounds the wait for the palace write lock before the mine
	// (0: DefaultLockWait); the note is written whatever happens then.
	LockWait time.Duration `json:"-"`
	// Scope: a caller writes only to its own memory.
	Scope Scope `json:"-"`
}

// Validate checks the request without writing; every error wraps
// ErrInvalid.
func (r RememberRequest) Validate() error {
	if _, err := r.Scope.writeAgent(r.Agent); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	if err := memory.CheckRemember(r.Heading, r.Text); err != nil {
		return invalid(err)
	}
	if r.Supersedes != "" {
		if err := checkRef("supersedes", r.Supersedes); err != nil {
			return fmt.Errorf("remember: %w", err)
		}
	}
	return nil
}

// SectionInfo locates one section of a memory file.
type SectionInfo struct {
	Heading   string `json:"heading" jsonschema:"heading text without the leading '## '"`
	Kind      string `json:"kind" jsonschema:"section, pinned, condensed or recent"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Date      string `json:"date,omitempty"`
}

// sectionOf is s's location.
func sectionOf(s memfile.Section) SectionInfo {
	return SectionInfo{Heading: s.Heading, Kind: s.Kind.String(), StartLine: s.StartLine, EndLine: s.EndLine, Date: s.Date}
}

// RememberResult says where a note went: the same object from `hivemem
// remember --json` and MCP memory_remember.
type RememberResult struct {
	Agent        string      `json:"agent"`
	Created      bool        `json:"created" jsonschema:"the agent had no memory file: this write created it"`
	Source       string      `json:"source" jsonschema:"the memory file, relative to the hivemem home"`
	Section      SectionInfo `json:"section" jsonschema:"the section appended"`
	DrawersAdded int         `json:"drawers_added" jsonschema:"new search drawers (the note is searchable at once)"`
	MineError    string      `json:"mine_error,omitempty" jsonschema:"the note is saved, but indexing it failed: it becomes searchable on the next mine; do not remember it again"`
	// Duplicate is set when nothing was written: the note repeats one the
	// agent has (force writes it anyway).
	Duplicate *Duplicate `json:"duplicate,omitempty" jsonschema:"set when nothing was written because the agent already has this note"`
	// Supersedes is the section the note replaces, now marked superseded.
	Supersedes *SectionInfo `json:"supersedes,omitempty" jsonschema:"the section this note replaces, now marked superseded"`
	// Redaction counts the secrets the note held, replaced by markers
	// before the write (or kept, as asked).
	Redaction
	// Existing: the note was in the file already (written before the
	// agent said what it replaces): Section is that section, and only
	// the supersession was written.
	Existing bool `json:"existing,omitempty" jsonschema:"the note was already written: only the mark that it replaces supersedes was added"`
	// Restates is an older note whose subject this one states again with
	// something changed: it stays current until the agent says this note
	// replaces it (supersedes).
	Restates *Restated `json:"restates,omitempty" jsonschema:"an older note on the same subject with another value: if this note replaces it, say so with supersedes (its id)"`
}

// Remember validates r, appends the note to the agent's memory file
// (locked, atomic; created from the template when missing) and mines the
// file under the palace write lock so the note is searchable at once. An
// error means nothing was written. A mine that fails after the write (no
// index, a broken model, the lock busy) is the result's MineError: the
// note stands and the next mine indexes it.
func (a *App) Remember(ctx context.Context, r RememberRequest) (RememberResult, error) {
	if err := r.Validate(); err != nil {
		return RememberResult{}, err
	}
	agent, _ := r.Scope.writeAgent(r.Agent)
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	path, _ := a.home.MemoryPath(agent)
	// Secrets out first: the duplicate check, the file, the index and the
	// embedder see only markers.
	red, err := a.writeRedactor(r.KeepSecrets)
	if err != nil {
		return RememberResult{}, err
	}
	r.Text, r.Heading = red.text(r.Text), red.text(r.Heading)
	var ref string
	if r.Supersedes != "" {
		var err error
		if ref, err = a.sectionRef(ctx, agent, r.Supersedes); err != nil {
			return RememberResult{}, fmt.Errorf("remember: --supersedes: %w", err)
		}
	}
	var restated *Restated
	if !r.Force {
		dup, re, err := a.findDuplicate(ctx, agent, r.Text, false, ref)
		if err != nil {
			return RememberResult{}, err
		}
		if dup != nil && (ref == "" || dup.Heading == "") {
			return RememberResult{Agent: agent, Source: a.home.Rel(path), Duplicate: dup, Redaction: red.res}, nil
		}
		restated = re
		if dup != nil {
			// The note was written already (remember said it restates
			// ref): mark ref replaced by it, writing nothing else.
			return a.confirmSupersedes(ctx, r, agent, path, ref, dup)
		}
	}
	if err := a.keepSecrets(ctx, red); err != nil {
		return RememberResult{}, fmt.Errorf("remember: %w", err)
	}
	var w memory.FileWrite
	if r.Supersedes != "" {
		w, err = memory.Supersede(ctx, a.home, agent, ref, r.Heading, r.Text, now)
		if err != nil {
			err = fmt.Errorf("remember: %w", badInput(err))
		}
	} else {
		w, err = memory.Remember(ctx, a.home, agent, r.Heading, r.Text, now)
	}
	if err != nil {
		return RememberResult{}, err
	}
	// The section written, as the write left the file: a later write (an
	// agent's own append, a concurrent forget) cannot make it another one.
	out := RememberResult{Agent: agent, Created: w.Created, Source: a.home.Rel(path), Section: sectionOf(w.Section), Redaction: red.res}
	a.logRedaction(agent, out.Source, "remember", red.res)
	if r.Supersedes != "" {
		old := sectionOf(w.Superseded)
		out.Supersedes = &old
	}
	rep, err := a.mineWritten(ctx, path, "remember", r.LockWait)
	if err != nil {
		a.log.Warn("remember: the note is saved, mining it failed; the next mine catches up", "agent", agent, "err", err)
		out.MineError = err.Error()
	}
	out.DrawersAdded = rep.Added
	if restated != nil {
		restated.resolve(ctx, a, path)
		out.Restates = restated
	}
	if out.Supersedes != nil {
		a.event("supersede", agent, map[string]any{"source": out.Source, "heading": out.Section.Heading, "supersedes": out.Supersedes.Heading})
	}
	return out, nil
}

// confirmSupersedes marks section ref of agent's memory file (at path)
// replaced by the later section dup, which already says what r says: the
// agent wrote the note, then said what it replaces. A dup that does not
// come after ref is a refused repeat, as without supersedes.
func (a *App) confirmSupersedes(ctx context.Context, r RememberRequest, agent, path, ref string, dup *Duplicate) (RememberResult, error) {
	w, err := memory.MarkSuperseded(ctx, a.home, agent, ref, dup.Heading)
	if err != nil {
		a.log.Debug("remember --supersedes: the repeat cannot be the replacement", "err", err)
		return RememberResult{Agent: agent, Source: a.home.Rel(path), Duplicate: dup}, nil
	}
	old := sectionOf(w.Superseded)
	out := RememberResult{Agent: agent, Source: a.home.Rel(path), Section: sectionOf(w.Section), Supersedes: &old, Existing: true}
	rep, err := a.mineWritten(ctx, path, "remember", r.LockWait)
	if err != nil {
		a.log.Warn("remember: the mark is saved, mining it failed; the next mine catches up", "agent", agent, "err", err)
		out.MineError = err.Error()
	}
	out.DrawersAdded = rep.Added
	a.event("supersede", agent, map[string]any{"source": out.Source, "heading": out.Section.Heading, "supersedes": out.Supersedes.Heading})
	return out, nil
}

// PinRequest adds a durable fact to an agent's pinned region.
type PinRequest struct {
	Agent string `json:"agent,omitempty"` // "": the caller's (Scope.Caller)
	Fact  string `json:"fact"`
	// Replaces is a pinned fact the new one takes the place of: it leaves
	// the pinned region (under the file lock, the file backed up first)
	// for the archive, dated the day it stopped being true.
	Replaces string `json:"replaces,omitempty"`
	// Force pins a fact that repeats one already pinned in other words.
	Force bool `json:"force,omitempty"`
	// KeepSecrets writes the secrets the fact holds as they are instead
	// of redacting them; the result says so.
	KeepSecrets bool `json:"keep_secrets,omitempty"`
	// LockWait bounds the wait for the palace write lock before the mine
	// (0: DefaultLockWait).
	LockWait time.Duration `json:"-"`
	// Scope: a caller writes only to its own memory.
	Scope Scope `json:"-"`
}

// Validate checks the request without writing; every error wraps
// ErrInvalid.
func (r PinRequest) Validate() error {
	if _, err := r.Scope.writeAgent(r.Agent); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if err := memory.CheckFact(r.Fact); err != nil {
		return invalid(err)
	}
	if r.Replaces != "" {
		if err := memory.CheckFact(r.Replaces); err != nil {
			return invalid(fmt.Errorf("pin --replaces: %w", errors.Unwrap(err)))
		}
	}
	return nil
}

// PinResult says whether a fact was new: the same object from `hivemem
// pin --json` and MCP memory_pin.
type PinResult struct {
	Agent     string `json:"agent"`
	Created   bool   `json:"created" jsonschema:"the agent had no memory file: this write created it"`
	Source    string `json:"source" jsonschema:"the memory file, relative to the hivemem home"`
	Fact      string `json:"fact"`
	Added     bool   `json:"added" jsonschema:"false when the same fact was already pinned"`
	Pinned    int    `json:"pinned" jsonschema:"pinned facts in the file right after this write"`
	MineError string `json:"mine_error,omitempty" jsonschema:"the fact is saved, but indexing it failed: it becomes searchable on the next mine; do not pin it again"`
	// Duplicate is set when nothing was written: the fact repeats a
	// pinned one in other words (force pins it anyway).
	Duplicate *Duplicate `json:"duplicate,omitempty" jsonschema:"set when nothing was written because a pinned fact already says this"`
	// Restates is a pinned fact whose subject this one states again with
	// something changed: it stays pinned until replaced (replaces).
	Restates *Restated `json:"restates,omitempty" jsonschema:"a pinned fact on the same subject with another value: if this fact replaces it, pin again with replaces (its text) or unpin it"`
	// Replaced is the fact the new one took the place of (replaces), and
	// Archive the archive file it went to.
	Replaced string `json:"replaced,omitempty" jsonschema:"the pinned fact this one replaced"`
	Archive  string `json:"archive,omitempty" jsonschema:"archive file the replaced fact went to"`
	Backup   string `json:"backup,omitempty" jsonschema:"backup of the file before the replacement"`
	// Redaction counts the secrets the fact held, replaced by markers
	// before the write (or kept, as asked).
	Redaction
}

// Pin validates r and adds the fact to the agent's pinned region; a fact
// already there (after normalisation) changes nothing (Added false). As
// for Remember, an error means nothing was written, and a failed mine
// after the write is the result's MineError.
func (a *App) Pin(ctx context.Context, r PinRequest) (PinResult, error) {
	if err := r.Validate(); err != nil {
		return PinResult{}, err
	}
	agent, _ := r.Scope.writeAgent(r.Agent)
	red, err := a.writeRedactor(r.KeepSecrets)
	if err != nil {
		return PinResult{}, err
	}
	// The fact replaced is redacted too (uncounted): it was, when it was
	// pinned.
	r.Fact, r.Replaces = red.text(r.Fact), red.reference(r.Replaces)
	var restated *Restated
	if !r.Force {
		dup, re, err := a.findDuplicate(ctx, agent, r.Fact, true, r.Replaces)
		if err != nil {
			return PinResult{}, err
		}
		restated = re
		// A fact pinned word for word is "already pinned", as always.
		if dup != nil && memfile.NormalizeFact(dup.Text) != memfile.NormalizeFact(r.Fact) {
			path, _ := a.home.MemoryPath(agent)
			return PinResult{Agent: agent, Source: a.home.Rel(path), Fact: r.Fact, Duplicate: dup, Redaction: red.res}, nil
		}
	}
	if err := a.keepSecrets(ctx, red); err != nil {
		return PinResult{}, fmt.Errorf("pin: %w", err)
	}
	if r.Replaces != "" {
		u, err := a.changePinned(ctx, agent, r.Replaces, r.Fact, time.Time{}, r.LockWait)
		if err != nil {
			return PinResult{}, err
		}
		a.logRedaction(agent, u.Source, "pin", red.res)
		return PinResult{Agent: agent, Source: u.Source, Fact: r.Fact, Added: true, Pinned: u.Pinned, MineError: u.MineError,
			Replaced: u.Fact, Archive: u.Archive, Backup: u.Backup, Redaction: red.res}, nil
	}
	w, err := memory.Pin(ctx, a.home, agent, r.Fact)
	if err != nil {
		return PinResult{}, err
	}
	path, _ := a.home.MemoryPath(agent)
	out := PinResult{Agent: agent, Created: w.Created, Source: a.home.Rel(path), Fact: r.Fact, Added: w.Added, Pinned: w.Pinned, Redaction: red.res}
	if w.Added {
		a.logRedaction(agent, out.Source, "pin", red.res)
	}
	if w.Added {
		if _, err := a.mineWritten(ctx, path, "pin", r.LockWait); err != nil {
			a.log.Warn("pin: the fact is saved, mining it failed; the next mine catches up", "agent", agent, "err", err)
			out.MineError = err.Error()
		}
		if restated != nil {
			restated.resolve(ctx, a, path)
			out.Restates = restated
		}
	}
	return out, nil
}

// parseMemory reads (never blocking on a FIFO) and parses a memory file.
func (a *App) parseMemory(path string) (*memfile.File, error) {
	data, err := a.home.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return memfile.Parse(data)
}

// mineWritten mines a memory file this process just wrote, under the
// palace write lock. The error is for a warning: the write stands.
func (a *App) mineWritten(ctx context.Context, path, command string, wait time.Duration) (palace.MineReport, error) {
	if err := a.index(ctx); err != nil {
		return palace.MineReport{}, err
	}
	release, err := a.LockFor(ctx, command, wait)
	if err != nil {
		return palace.MineReport{}, err
	}
	defer release()
	return a.mine(ctx, path, palace.MineOptions{})
}

// LockFor takes the palace write lock for operation op (named in its
// error), waiting at most wait (0: DefaultLockWait) while another process
// holds it.
func (a *App) LockFor(ctx context.Context, op string, wait time.Duration) (func(), error) {
	if wait <= 0 {
		wait = DefaultLockWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	release, err := a.AcquireLock(ctx)
	if err != nil {
		if errors.Is(err, writelock.ErrBusy) && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: gave up after %s: %w", op, wait, err)
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return release, nil
}
