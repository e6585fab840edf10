package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// CheckName checks an agent's display name as Create does, without
// writing: one line, no NUL byte.
func CheckName(name string) error {
	if strings.ContainsAny(name, "\r\n\x00") {
		return errors.New("name must be one line")
	}
	return nil
}

// Create gives an agent its directory and a memory file made from the
// template (name is the display name in its header; "" is the agent id),
// locked and atomic; an existing file is left as it is. It is the one
// place a new agent's file is made, for spawn, an import that brings an
// agent's sessions, and every other front end. It returns the file's path
// and whether it made it.
func Create(ctx context.Context, h home.Home, agent, name string) (path string, created bool, err error) {
	if err := home.ValidateAgentID(agent); err != nil {
		return "", false, err
	}
	if name == "" {
		name = agent
	}
	if err := CheckName(name); err != nil {
		return "", false, err
	}
	path, err = h.MemoryPath(agent)
	if err != nil {
		return "", false, err
	}
	dir, _ := h.AgentDir(agent)
	if err := h.MkdirAll(dir); err != nil {
		return "", false, fmt.Errorf("create agent dir: %w", err)
	}
	// Never write through a link out of the home (the agent's directory
	// or memory.md a symlink to a file elsewhere).
	if _, err := h.Contain(path); err != nil {
		return "", false, err
	}
	lctx, cancel := context.WithTimeout(ctx, LockTimeout)
	defer cancel()
	err = atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		created = old == nil
		if old != nil {
			return old, nil
		}
		return memfile.Template(agent, name), nil
	})
	if err != nil {
		return "", false, fmt.Errorf("create memory file: %w", err)
	}
	return path, created, nil
}
