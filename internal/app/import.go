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
	// KeepSecrets writes the secrets the conversations hold as they are
	// instead of redacting them; the result says so.
	KeepSecrets bool `json:"keep_secrets,omitempty"`
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
	red, err := a.writeRedactor(r.KeepSecrets)
	if err != nil {
		return capture.Result{}, err
	}
	// Secrets kept as asked are recorded as they are found, before
	// anything is written, so that the miner's gate keeps them too.
	redactText := func(s string) (string, error) {
		out := red.text(s)
		err := a.keepSecrets(ctx, red)
		red.kept = nil
		return out, err
	}
	res, err := capture.Import(ctx, a.Home, a.Palace, r.Paths, capture.Options{
		Agent: r.Agent, Format: r.Format, Events: a.Events,
		MaxSessionBytes: min(cfg.Capture.SessionMaxBytes, cfg.Palace.MaxFileBytes), RetentionDays: cfg.Capture.RetentionDays,
		Redact: redactText,
	})
	res.Redacted, res.SecretsKept = red.res.Redacted, red.res.Kept
	if err == nil && res.TurnsAdded > 0 {
		dir, _ := a.Home.SessionsDir(r.Agent)
		a.logRedaction(r.Agent, a.Home.Rel(dir), "import", red.res)
	}
	return res, err
}
