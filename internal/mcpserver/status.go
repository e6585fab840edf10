package mcpserver

import (
	"context"
	"fmt"
	"github.com/hivemem/hivemem/internal/store"

	"github.com/hivemem/hivemem/internal/app"
)

// StatusOutput is memory_status's result. Field names follow
// `hivemem status --json`.
type StatusOutput struct {
	Home     string            `json:"home"`
	Backend  string            `json:"backend"`
	Search   string            `json:"search_mode" jsonschema:"hybrid, or lexical when no embedding model is installed"`
	Embedder app.EmbedderInfo  `json:"embedder"`
	Index    store.Stats       `json:"index" jsonschema:"the palace; under scope own, wings lists only the agent's wing (totals stay hive-wide: counts, not content)"`
	Agents   []app.AgentStatus `json:"agents" jsonschema:"each agent's memory file against its budget, as in hivemem status --json"`
	// The identity of the server answering.
	Agent string `json:"agent,omitempty" jsonschema:"the agent this server acts for"`
	Scope string `json:"scope" jsonschema:"own: this server reads only its agent's memory; all: every agent's"`
}

func (s *server) status(ctx context.Context, _ StatusInput) (StatusOutput, string, error) {
	a := s.d.App
	st, err := a.Store.Stats(ctx)
	if err != nil {
		return StatusOutput{}, "", fmt.Errorf("status: %w", err)
	}
	out := StatusOutput{
		Home: a.Home.Root, Backend: a.Store.Backend(), Search: a.Palace.Mode(), Embedder: a.Embedder,
		Index:  st,
		Agents: []app.AgentStatus{}, Agent: s.d.Agent, Scope: s.d.Scope,
	}
	wingDrawers := map[string]int{}
	out.Index.Wings = []store.WingStats{}
	for _, w := range st.Wings {
		wingDrawers[w.Wing] = w.Drawers
		if s.d.Scope == ScopeOwn && w.Wing != s.d.Agent {
			continue
		}
		out.Index.Wings = append(out.Index.Wings, w)
	}
	agents, err := a.CollectAgents(ctx, a.Settings(), st, app.LastCondensed(a.Home.LogPath()))
	if err != nil {
		return StatusOutput{}, "", err
	}
	for _, as := range agents {
		if s.d.Scope == ScopeOwn && as.Agent != s.d.Agent {
			continue
		}
		out.Agents = append(out.Agents, as)
	}
	return out, "", nil
}
