package palace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// MaxRememberBytes caps one remembered note.
const MaxRememberBytes = 64 << 10

// LockTimeout bounds how long a write waits for another writer of the same file.
const LockTimeout = 30 * time.Second

// WriteResult reports a Remember or Pin whose write succeeded: a nil error
// from either means the memory file holds the note or fact, whatever
// happens after. The file is then mined so the note is searchable at once.
// When that fails, the write still stands: MineErr says why the index is
// behind, and the next mine of the file (the manager's watcher or periodic
// scan, `hivemem mine`, the next remember or pin) catches it up: a file
// whose mine failed is not recorded as mined, and drawers left without a
// vector are filled by every mine. Callers report MineErr as a warning
// (like the reflector's Result.MineError), never as a failed write: a retry
// would write the note twice.
type WriteResult struct {
	// Added is false for a Pin whose fact was already pinned (nothing
	// written, nothing mined); true otherwise.
	Added bool
	// Created is true when the agent had no memory file: the write made
	// it from the template.
	Created bool
	// Mine is what mining the file did; zero when MineErr is set.
	Mine MineReport
	// MineErr is the mining error, nil when the index is up to date.
	MineErr error
}

// Remember appends a dated section to an agent's memory file under its lock
// (creating the file from the template when missing), then mines the file
// so the note is searchable at once. An error means nothing was written; a
// failed mine after the write is reported in WriteResult.MineErr.
func (p *Palace) Remember(ctx context.Context, agent, heading, text string, now time.Time) (WriteResult, error) {
	w, err := RememberFile(ctx, p.home, agent, heading, text, now)
	if err != nil {
		return WriteResult{}, err
	}
	res := p.mineWritten(ctx, agent)
	res.Created = w.Created
	return res, nil
}

// FileWrite is what a locked write to a memory file did, taken from the
// bytes written under the file's lock: another writer (an agent's own
// append, a concurrent forget) changing the file right after cannot make
// it report someone else's section.
type FileWrite struct {
	// Created is true when the agent had no memory file: the write made
	// it from the template.
	Created bool
	// Section is the section RememberFile or SupersedeFile appended, as
	// the file stood right after the write (heading, lines, date).
	Section memfile.Section
	// Superseded is the section SupersedeFile marked as replaced.
	Superseded memfile.Section
	// Added is false for a PinFile whose fact was pinned already (nothing
	// written).
	Added bool
	// Pinned is the number of pinned facts after a PinFile.
	Pinned int
}

// RememberFile is Remember without the index: it validates the note and
// appends it to the agent's memory file (locked, atomic). It is what a
// command uses when the index cannot be opened (a full disk, a damaged
// index): the note is saved, and the next mine indexes it. It reports the
// section appended and whether the agent had no memory file before.
func RememberFile(ctx context.Context, h home.Home, agent, heading, text string, now time.Time) (FileWrite, error) {
	if err := CheckRemember(heading, text); err != nil {
		return FileWrite{}, err
	}
	// A blank heading is no heading: the note's first line stands in.
	full := sectionHeading(heading, text, now)
	var w FileWrite
	created, err := updateMemory(ctx, h, agent, func(old []byte) ([]byte, error) {
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

// Pin adds a durable fact to the agent's pinned region; pinning a fact that
// is already there (after normalisation) changes nothing and reports Added
// false. As for Remember, an error means nothing was written.
func (p *Palace) Pin(ctx context.Context, agent, fact string) (WriteResult, error) {
	w, err := PinFile(ctx, p.home, agent, fact)
	if err != nil || !w.Added {
		return WriteResult{}, err
	}
	res := p.mineWritten(ctx, agent)
	res.Created = w.Created
	return res, nil
}

// PinFile is Pin without the index (see RememberFile); it reports whether
// the fact was added (false: it was pinned already), whether the agent had
// no memory file before, and how many facts are pinned after the write.
func PinFile(ctx context.Context, h home.Home, agent, fact string) (FileWrite, error) {
	if err := CheckFact(fact); err != nil {
		return FileWrite{}, err
	}
	var w FileWrite
	created, err := updateMemory(ctx, h, agent, func(old []byte) ([]byte, error) {
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

// CheckRemember checks a note and its heading as RememberFile does,
// without writing.
func CheckRemember(heading, text string) error {
	if err := CheckText("text", text, MaxRememberBytes); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		return errors.New("remember: text is empty")
	}
	if err := CheckText("heading", heading, MaxNameBytes); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	if strings.ContainsAny(heading, "\r\n") {
		return errors.New("remember: heading must be one line")
	}
	return nil
}

// MaxFactBytes caps one pinned fact.
const MaxFactBytes = 2000

// CheckFact checks a fact as PinFile does, without writing.
func CheckFact(fact string) error {
	if err := CheckText("fact", fact, MaxFactBytes); err != nil {
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

// mineWritten mines an agent's file after a write. A failure is kept in the
// result, not returned: the write has happened.
func (p *Palace) mineWritten(ctx context.Context, agent string) WriteResult {
	rep, err := p.mineAgent(ctx, agent)
	if err != nil {
		return WriteResult{Added: true, MineErr: err}
	}
	return WriteResult{Added: true, Mine: rep}
}

// updateMemory runs fn on an agent's memory file under its lock and swaps
// the result in atomically. A missing file starts from the template; created
// says so.
func updateMemory(ctx context.Context, h home.Home, agent string, fn func([]byte) ([]byte, error)) (created bool, err error) {
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
			old = memfile.Template(agent, agent)
		}
		return fn(old)
	})
	return created && err == nil, err
}

func (p *Palace) mineAgent(ctx context.Context, agent string) (MineReport, error) {
	path, err := p.home.MemoryPath(agent)
	if err != nil {
		return MineReport{}, err
	}
	return p.Mine(ctx, path, MineOptions{})
}

// CheckText refuses untrusted text that is not valid UTF-8, holds a NUL
// byte or exceeds limit bytes, naming the field in the error.
func CheckText(what, s string, limit int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", what)
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("%s contains a NUL byte", what)
	case len(s) > limit:
		return fmt.Errorf("%s is %d bytes, at most %d allowed", what, len(s), limit)
	}
	return nil
}
