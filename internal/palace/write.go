package palace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/memfile"
)

// MaxRememberBytes caps one remembered note.
const MaxRememberBytes = 64 << 10

// LockTimeout bounds how long a write waits for another writer of the same file.
const LockTimeout = 30 * time.Second

// Remember appends a dated section to an agent's memory file under its lock
// (creating the file from the template when missing), then mines the file
// so the note is searchable at once.
func (p *Palace) Remember(ctx context.Context, agent, heading, text string, now time.Time) (MineReport, error) {
	if err := CheckText("text", text, MaxRememberBytes); err != nil {
		return MineReport{}, fmt.Errorf("remember: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		return MineReport{}, errors.New("remember: text is empty")
	}
	if err := CheckText("heading", heading, 200); err != nil {
		return MineReport{}, fmt.Errorf("remember: %w", err)
	}
	if strings.ContainsAny(heading, "\r\n") {
		return MineReport{}, errors.New("remember: heading must be one line")
	}
	date := now.UTC().Format("2006-01-02")
	if heading == "" {
		heading = firstLine(text)
		if utf8.RuneCountInString(heading) > 60 {
			r := []rune(heading)
			heading = string(r[:60]) + "…"
		}
	}
	full := date + " — " + heading
	err := p.updateMemory(ctx, agent, func(old []byte) ([]byte, error) {
		return memfile.AppendSection(old, full, text)
	})
	if err != nil {
		return MineReport{}, fmt.Errorf("remember: %w", err)
	}
	return p.mineAgent(ctx, agent)
}

// Pin adds a durable fact to the agent's pinned region; pinning a fact that
// is already there (after normalisation) changes nothing and reports false.
func (p *Palace) Pin(ctx context.Context, agent, fact string) (bool, error) {
	if err := CheckText("fact", fact, 2000); err != nil {
		return false, fmt.Errorf("pin: %w", err)
	}
	if strings.ContainsAny(fact, "\r\n") {
		return false, errors.New("pin: a fact must be one line")
	}
	if strings.TrimSpace(fact) == "" {
		return false, errors.New("pin: fact is empty")
	}
	added := false
	err := p.updateMemory(ctx, agent, func(old []byte) ([]byte, error) {
		out, ok, err := memfile.AddPinned(old, strings.TrimSpace(fact))
		added = ok
		return out, err
	})
	if err != nil {
		return false, fmt.Errorf("pin: %w", err)
	}
	if added {
		_, err = p.mineAgent(ctx, agent)
	}
	return added, err
}

// updateMemory runs fn on an agent's memory file under its lock and swaps
// the result in atomically. A missing file starts from the template.
func (p *Palace) updateMemory(ctx context.Context, agent string, fn func([]byte) ([]byte, error)) error {
	path, err := p.home.MemoryPath(agent)
	if err != nil {
		return err
	}
	dir, _ := p.home.AgentDir(agent)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create agent dir: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, LockTimeout)
	defer cancel()
	return atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		if old == nil {
			old = memfile.Template(agent, agent)
		}
		return fn(old)
	})
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
