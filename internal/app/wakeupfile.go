package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
)

// WakeUpFileRequest writes an agent's wake-up digest to a file, for an
// agent started with it (spawn's --wake-up-file).
type WakeUpFileRequest struct {
	Agent string `json:"agent"`
	// Path is the file to write (absolute, or relative to the working
	// directory); it is replaced atomically.
	Path string `json:"-"`
}

// WakeUpFileResult is the digest written.
type WakeUpFileResult struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// WriteWakeUpFile mines the agent's memory file (so a new or changed
// file is in the index), builds its wake-up digest and writes it to
// r.Path atomically.
func (a *App) WriteWakeUpFile(ctx context.Context, r WakeUpFileRequest) (WakeUpFileResult, error) {
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return WakeUpFileResult{}, badRequest("wake-up file: %w", err)
	}
	if r.Path == "" {
		return WakeUpFileResult{}, badRequest("wake-up file: %w", errors.New("no file given"))
	}
	path, err := a.home.MemoryPath(r.Agent)
	if err != nil {
		return WakeUpFileResult{}, badRequest("wake-up file: %w", err)
	}
	if _, err := a.Mine(ctx, MineRequest{Path: path}); err != nil {
		return WakeUpFileResult{}, err
	}
	d, err := a.WakeUp(ctx, WakeUpRequest{Wing: r.Agent})
	if err != nil {
		return WakeUpFileResult{}, err
	}
	if err := atomicio.WriteFile(r.Path, []byte(d.Text), 0o644); err != nil {
		return WakeUpFileResult{}, fmt.Errorf("--wake-up-file: %w", err)
	}
	return WakeUpFileResult{Path: r.Path, Bytes: len(d.Text)}, nil
}
