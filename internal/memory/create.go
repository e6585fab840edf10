package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hivemem/hivemem/internal/home"
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
	created, err = update(ctx, h, agent, name, func(old []byte) ([]byte, error) { return old, nil })
	if err != nil {
		return "", false, fmt.Errorf("create memory file: %w", err)
	}
	return path, created, nil
}
