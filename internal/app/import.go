package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
)

// ImportRequest turns conversation files into an agent's session files
// (hive/agents/<agent>/sessions) and mines them.
type ImportRequest struct {
	Agent  string   `json:"agent"`
	Format string   `json:"format"` // a capture format, or auto
	Paths  []string `json:"paths"`  // files, or directories whose conversation files are taken
	// LockWait bounds the wait for the palace write lock (0:
	// DefaultLockWait).
	LockWait time.Duration `json:"-"`
}

// Validate checks the agent and that every path is there; the formats
// and files are checked as they are read (capture.Import), before
// anything is written. It needs no home, so that a command that makes one
// for its sessions (import, hook save) can refuse such input first.
func (r ImportRequest) Validate() error {
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return palace.BadQuery(err)
	}
	for _, p := range r.Paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	return nil
}

// Import is the one import behind `hivemem import`, the capture hook and
// `mine --mode convos`: capture.Import under the palace write lock, with
// the home's settings. A failed mine after the write is the result's
// MineErr (the sessions are saved).
func (a *App) Import(ctx context.Context, r ImportRequest) (capture.Result, error) {
	if err := r.Validate(); err != nil {
		return capture.Result{}, err
	}
	release, err := a.LockFor(ctx, "import", r.LockWait)
	if err != nil {
		return capture.Result{}, err
	}
	defer release()
	cfg := a.Settings()
	return capture.Import(ctx, a.Home, a.Palace, r.Paths, capture.Options{
		Agent: r.Agent, Format: r.Format, Events: a.Events,
		MaxSessionBytes: min(cfg.Capture.SessionMaxBytes, cfg.Palace.MaxFileBytes), RetentionDays: cfg.Capture.RetentionDays,
		Redact: a.blocklistRedact(),
	})
}
