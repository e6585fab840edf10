package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// MaxMemoryRead refuses to load an absurd memory file into memory just to
// show or cut it.
const MaxMemoryRead = 64 << 20

// MemoryRequest reads one agent's memory file.
type MemoryRequest struct {
	Agent string `json:"agent,omitempty"` // "": the caller's (Scope.Caller)
	// Scope: under an own scope, only the caller's file.
	Scope Scope `json:"-"`
}

// MemoryFile is an agent's memory file as read, for a front end to show
// whole or in parts (the API's memory view, MCP memory_read).
type MemoryFile struct {
	Agent  string `json:"agent"`
	Source string `json:"source"` // relative to the home
	Path   string `json:"-"`
	Data   []byte `json:"-"`
}

// ReadMemory validates r and reads the agent's memory file the way every
// reader of the home does (home.ReadFile: links stay in the home, and a
// FIFO, device or socket at memory.md is a clear error, never a hang). An
// agent without a memory file is ErrNotFound.
func (a *App) ReadMemory(ctx context.Context, r MemoryRequest) (MemoryFile, error) {
	agent, err := r.Scope.readAgent(r.Agent)
	if err != nil {
		return MemoryFile{}, err
	}
	path, err := a.home.MemoryPath(agent)
	if err != nil {
		return MemoryFile{}, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() > MaxMemoryRead {
		return MemoryFile{}, fmt.Errorf("read %s: memory file is %d bytes, too large to read here", agent, st.Size())
	}
	data, err := a.home.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return MemoryFile{}, notFound("agent %s has no memory file", agent)
	}
	if err != nil {
		return MemoryFile{}, fmt.Errorf("read memory of %s: %w", agent, err)
	}
	if err := ctx.Err(); err != nil {
		return MemoryFile{}, err
	}
	return MemoryFile{Agent: agent, Source: a.home.Rel(path), Path: path, Data: data}, nil
}
