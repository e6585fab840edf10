package app

import (
	"context"
	"fmt"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memory"
)

// CreateAgentRequest gives an agent its directory and memory file.
type CreateAgentRequest struct {
	Agent string `json:"agent"`
	// Name is the display name in a new file's header ("": the agent id).
	Name string `json:"name,omitempty"`
}

// Validate checks the request without writing; every error is bad input.
func (r CreateAgentRequest) Validate() error {
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return badRequest("create agent: %w", err)
	}
	if err := memory.CheckName(r.Name); err != nil {
		return badRequest("create agent %s: %w", r.Agent, err)
	}
	return nil
}

// CreateAgentResult is the agent's memory file after CreateAgent.
type CreateAgentResult struct {
	Agent  string `json:"agent"`
	Source string `json:"source"` // the memory file, relative to the home
	Path   string `json:"-"`
	// Created is true when the agent had no memory file: it was made from
	// the template.
	Created bool `json:"created"`
}

// CreateAgent validates r and gives the agent its memory file, made from
// the template (locked, atomic) when missing; an existing file is left as
// it is. It touches no index, so an app opened with IndexLater serves it.
func (a *App) CreateAgent(ctx context.Context, r CreateAgentRequest) (CreateAgentResult, error) {
	if err := r.Validate(); err != nil {
		return CreateAgentResult{}, err
	}
	path, created, err := memory.Create(ctx, a.home, r.Agent, r.Name)
	if err != nil {
		return CreateAgentResult{}, fmt.Errorf("create agent %s: %w", r.Agent, err)
	}
	return CreateAgentResult{Agent: r.Agent, Source: a.home.Rel(path), Path: path, Created: created}, nil
}
