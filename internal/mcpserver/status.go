package mcpserver

import (
	"context"

	"github.com/hivemem/hivemem/internal/app"
)

// StatusOutput is memory_status's result: the app's status, the same
// object (and names) as `hivemem status --json` reports, with the
// identity of the server answering.
type StatusOutput struct {
	app.Status
	Agent string `json:"agent,omitempty" jsonschema:"the agent this server acts for"`
	Scope string `json:"scope" jsonschema:"own: this server reads only its agent's memory; all: every agent's"`
}

func (s *server) status(ctx context.Context, _ StatusInput) (StatusOutput, string, error) {
	st, err := s.d.App.Status(ctx, app.StatusRequest{Scope: s.scope()})
	if err != nil {
		return StatusOutput{}, "", err
	}
	return StatusOutput{Status: st, Agent: s.d.Agent, Scope: s.d.Scope}, "", nil
}
