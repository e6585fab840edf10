package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/home"
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
	// Transcript says Paths is the one transcript a hook was handed (its
	// transcript_path): it must be a regular file of at most
	// MaxTranscriptBytes. A directory (which an import would walk), a
	// device, a FIFO or a larger file is refused before anything is read.
	Transcript bool `json:"-"`
}

// MaxTranscriptBytes bounds the transcript a hook imports.
const MaxTranscriptBytes = capture.MaxSourceBytes

// Validate checks the format, the agent and that every path is there, in
// that order; the files' formats and contents are checked as they are
// read (capture.Import), before anything is written. It needs no home, so that a command that makes one
// for its sessions (import, hook save) can refuse such input first.
func (r ImportRequest) Validate() error {
	if err := CheckImportFormat(r.Format); err != nil {
		return err
	}
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return invalid(err)
	}
	for _, p := range r.Paths {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if r.Transcript {
			if err := checkTranscript(p, st); err != nil {
				return fmt.Errorf("import: %w", err)
			}
		}
	}
	if r.Transcript && len(r.Paths) != 1 {
		return invalid(fmt.Errorf("import: a transcript is one file, got %d paths", len(r.Paths)))
	}
	return nil
}

// checkTranscript holds a hook's transcript to a regular file within
// MaxTranscriptBytes.
func checkTranscript(path string, st os.FileInfo) error {
	switch {
	case st.IsDir():
		return fmt.Errorf("transcript %s is a directory, not a transcript file: nothing saved", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("transcript %s is not a regular file (%s): nothing saved", path, st.Mode().Type())
	case st.Size() > MaxTranscriptBytes:
		return fmt.Errorf("transcript %s is %d bytes, over the %d a hook reads: nothing saved", path, st.Size(), MaxTranscriptBytes)
	}
	return nil
}

// Import is the one import behind `hivemem import`, the capture hook and
// `mine --mode convos`: capture.Import under the palace write lock, with
// the home's settings. A failed mine after the write is the result's
// MineErr (the sessions are saved).
func (a *App) Import(ctx context.Context, r ImportRequest) (ImportResult, error) {
	if err := r.Validate(); err != nil {
		return ImportResult{}, err
	}
	release, err := a.LockFor(ctx, "import", r.LockWait)
	if err != nil {
		return ImportResult{}, err
	}
	defer release()
	cfg := a.Settings()
	red, err := a.writeRedactor(r.KeepSecrets)
	if err != nil {
		return ImportResult{}, err
	}
	// Secrets kept as asked are recorded as they are found, before
	// anything is written, so that the miner's gate keeps them too.
	redactText := func(s string) (string, error) {
		out := red.text(s)
		err := a.keepSecrets(ctx, red)
		red.kept = nil
		return out, err
	}
	res, err := capture.Import(ctx, a.home, a.palace, r.Paths, capture.Options{
		Agent: r.Agent, Format: r.Format, Events: a.events,
		MaxSessionBytes: min(cfg.Capture.SessionMaxBytes, cfg.Palace.MaxFileBytes), RetentionDays: cfg.Capture.RetentionDays,
		Redact: redactText,
	})
	res.Redacted, res.SecretsKept, res.Purged = red.res.Redacted, red.res.Kept, red.res.Purged
	if err == nil && res.TurnsAdded > 0 {
		dir, _ := a.home.SessionsDir(r.Agent)
		a.logRedaction(r.Agent, a.home.Rel(dir), "import", red.res)
	}
	return importResultOf(res), err
}
