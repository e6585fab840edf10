// Package memory writes agents' memory files: every change the tools
// make to a memory.md (a remembered note, a pinned fact, a supersession,
// a new agent's file from the template) goes through here, under the
// file's lock and swapped in atomically (atomicio.Update), so that no
// concurrent writer — another hivemem process, the agent's own append —
// loses a line. memfile says what the bytes become; this package puts
// them on disk. The index (palace) only reads what is written here.
package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// MaxRememberBytes caps one remembered note.
const MaxRememberBytes = memfile.MaxNoteBytes

// MaxFactBytes caps one pinned fact.
const MaxFactBytes = memfile.MaxFactBytes

// LockTimeout bounds how long a write waits for another writer of the same file.
const LockTimeout = 30 * time.Second

// FileWrite is what a locked write to a memory file did, taken from the
// bytes written under the file's lock: another writer (an agent's own
// append, a concurrent forget) changing the file right after cannot make
// it report someone else's section.
type FileWrite struct {
	// Created is true when the agent had no memory file: the write made
	// it from the template.
	Created bool
	// Section is the section Remember or Supersede appended, as the file
	// stood right after the write (heading, lines, date).
	Section memfile.Section
	// Superseded is the section Supersede marked as replaced.
	Superseded memfile.Section
	// Added is false for a Pin whose fact was pinned already (nothing
	// written).
	Added bool
	// Pinned is the number of pinned facts after a Pin.
	Pinned int
}

// Remember validates the note and appends it to the agent's memory file
// as a dated section (locked, atomic; the file created from the template
// when missing). It writes no index: the caller mines the file after, and
// a failed mine leaves the note saved for the next mine to index. It
// reports the section appended and whether the agent had no memory file
// before.
func Remember(ctx context.Context, h home.Home, agent, heading, text string, now time.Time) (FileWrite, error) {
	if err := CheckRemember(heading, text); err != nil {
		return FileWrite{}, err
	}
	// A blank heading is no heading: the note's first line stands in.
	full := sectionHeading(heading, text, now)
	var w FileWrite
	created, err := update(ctx, h, agent, agent, func(old []byte) ([]byte, error) {
		out, sec, err := memfile.AppendNewSection(old, full, text)
		w.Section = sec
		return out, err
	})
	if err != nil {
		return FileWrite{}, fmt.Errorf("remember: %w", err)
	}
	w.Created, w.Added = created, true
	return w, nil
}

// Pin adds a durable fact to the agent's pinned region (locked, atomic);
// pinning a fact that is already there (after normalisation) writes
// nothing and reports Added false. It reports whether the agent had no
// memory file before and how many facts are pinned after the write.
func Pin(ctx context.Context, h home.Home, agent, fact string) (FileWrite, error) {
	if err := CheckFact(fact); err != nil {
		return FileWrite{}, err
	}
	var w FileWrite
	created, err := update(ctx, h, agent, agent, func(old []byte) ([]byte, error) {
		out, ok, err := memfile.AddPinned(old, strings.TrimSpace(fact))
		if err != nil {
			return nil, err
		}
		w.Added = ok
		w.Pinned, err = memfile.CountPinned(out)
		return out, err
	})
	if err != nil {
		return FileWrite{}, fmt.Errorf("pin: %w", err)
	}
	w.Created = created
	return w, nil
}

// CheckRemember checks a note and its heading as Remember does, without
// writing.
func CheckRemember(heading, text string) error {
	if err := memfile.CheckText("text", text, MaxRememberBytes); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		return errors.New("remember: text is empty")
	}
	if err := memfile.CheckText("heading", heading, memfile.MaxNameBytes); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	if strings.ContainsAny(heading, "\r\n") {
		return errors.New("remember: heading must be one line")
	}
	return nil
}

// CheckFact checks a fact as Pin does, without writing.
func CheckFact(fact string) error {
	if err := memfile.CheckText("fact", fact, MaxFactBytes); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if strings.ContainsAny(fact, "\r\n") {
		return errors.New("pin: a fact must be one line")
	}
	if strings.TrimSpace(fact) == "" {
		return errors.New("pin: fact is empty")
	}
	return nil
}

// update runs fn on an agent's memory file under its lock and swaps the
// result in atomically. A missing file starts from the template, name the
// display name in its header; created says so.
func update(ctx context.Context, h home.Home, agent, name string, fn func([]byte) ([]byte, error)) (created bool, err error) {
	path, err := h.MemoryPath(agent)
	if err != nil {
		return false, err
	}
	// Never write through a link out of the home (the agent's directory
	// or memory.md a symlink to a file elsewhere).
	if _, err := h.Contain(path); err != nil {
		return false, err
	}
	dir, _ := h.AgentDir(agent)
	if err := h.MkdirAll(dir); err != nil {
		return false, fmt.Errorf("create agent dir: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, LockTimeout)
	defer cancel()
	err = atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		created = old == nil
		if created {
			old = memfile.Template(agent, name)
		}
		return fn(old)
	})
	return created && err == nil, err
}
