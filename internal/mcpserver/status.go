package mcpserver

import (
	"context"
	"fmt"
	"github.com/hivemem/hivemem/internal/store"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/memfile"
)

// StatusOutput is memory_status's result. Field names follow
// `hivemem status --json`.
type StatusOutput struct {
	Home     string           `json:"home"`
	Backend  string           `json:"backend"`
	Search   string           `json:"search_mode" jsonschema:"hybrid, or lexical when no embedding model is installed"`
	Embedder app.EmbedderInfo `json:"embedder"`
	Index    store.Stats      `json:"index" jsonschema:"the palace; under scope own, wings lists only the agent's wing (totals stay hive-wide: counts, not content)"`
	Agents   []AgentStatus    `json:"agents"`
	// The identity of the server answering.
	Agent string `json:"agent,omitempty" jsonschema:"the agent this server acts for"`
	Scope string `json:"scope" jsonschema:"own: this server reads only its agent's memory; all: every agent's"`
}

// AgentStatus is one agent's memory file against its budget.
type AgentStatus struct {
	Agent     string    `json:"agent"`
	Bytes     int64     `json:"bytes"`
	BudgetPct float64   `json:"budget_pct" jsonschema:"file size as a percentage of the condensation budget"`
	Sections  int       `json:"sections"`
	Pinned    int       `json:"pinned"`
	Drawers   int       `json:"drawers"`
	LastMined time.Time `json:"last_mined,omitzero"`
	Error     string    `json:"error,omitempty"`
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
		Agents: []AgentStatus{}, Agent: s.d.Agent, Scope: s.d.Scope,
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
	ids, err := a.Home.Agents()
	if err != nil {
		return StatusOutput{}, "", fmt.Errorf("status: %w", err)
	}
	budget := a.Config.Reflector.BudgetBytes
	for _, id := range ids {
		if s.d.Scope == ScopeOwn && id != s.d.Agent {
			continue
		}
		as := AgentStatus{Agent: id, Drawers: wingDrawers[id]}
		path, _ := a.Home.MemoryPath(id)
		data, err := a.Home.ReadFile(path)
		if err != nil {
			as.Error = err.Error()
			out.Agents = append(out.Agents, as)
			continue
		}
		as.Bytes = int64(len(data))
		if budget > 0 {
			as.BudgetPct = 100 * float64(as.Bytes) / float64(budget)
		}
		if mf, err := memfile.Parse(data); err != nil {
			as.Error = err.Error()
		} else {
			as.Sections, as.Pinned = len(mf.Recent()), len(mf.Pinned())
		}
		if f, err := a.Store.GetFile(ctx, a.Home.Rel(path)); err == nil {
			as.LastMined = f.MinedAt
		}
		out.Agents = append(out.Agents, as)
	}
	return out, "", nil
}
