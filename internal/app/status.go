package app

import (
	"context"
	"fmt"
)

// CondenseInfo is the reflector's set-up at a glance.
type CondenseInfo struct {
	Enabled    bool   `json:"enabled"`
	Summarizer string `json:"summarizer"`
}

func (c CondenseInfo) String() string {
	if !c.Enabled {
		return "disabled (reflector.enabled = false); summariser " + c.Summarizer
	}
	return "summariser " + c.Summarizer
}

// StatusRequest asks for the home's status.
type StatusRequest struct {
	// Scope: under an own scope, the index's wings and the agents listed
	// are the caller's only (the index's totals stay hive-wide: counts,
	// not content).
	Scope Scope `json:"-"`
	// Manager is the running manager's status, when one runs: each
	// agent's mining state (skipped, backoff) and the mining switch in
	// force are its.
	Manager *ManagerStatus `json:"-"`
}

// Status is the home, its index and every agent: the part of `hivemem
// status --json` and MCP memory_status that both report, under the same
// names.
type Status struct {
	Home     string       `json:"home"`
	HomeID   string       `json:"home_id,omitempty" jsonschema:"this home's name in a shared palace (files it mined carry it)"`
	Backend  string       `json:"backend"`
	Search   string       `json:"search_mode" jsonschema:"hybrid, or lexical when no embedding model is installed"`
	Embedder EmbedderInfo `json:"embedder"`
	Index    IndexStats   `json:"index" jsonschema:"the palace; under scope own, wings lists only the agent's wing (totals stay hive-wide: counts, not content)"`
	// WithoutVectors counts the drawers that have no vector (yet): in
	// hybrid search, those written while no model was installed, which
	// search by meaning misses until the next mine (or `run`'s start)
	// embeds them; lexical-only, every drawer.
	WithoutVectors int `json:"drawers_without_vectors" jsonschema:"drawers with no vector yet: search by meaning misses them until the next mine (or run's start) embeds them"`
	// Condense says how condensation runs: enabled or not, and which
	// summariser condenses.
	Condense CondenseInfo `json:"condense"`
	// Mining is manager.mining: off, nothing is mined or condensed
	// automatically.
	Mining bool `json:"mining"`
	// Redact is the redaction of secrets on every write.
	Redact RedactInfo    `json:"redact" jsonschema:"whether secrets are replaced by markers before every write (redact.enabled)"`
	Agents []AgentStatus `json:"agents" jsonschema:"each agent's memory file against its budget"`
}

// Status reports the home under the live settings (App.Settings).
func (a *App) Status(ctx context.Context, r StatusRequest) (Status, error) {
	st, err := a.store.Stats(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	cfg := a.Settings()
	out := Status{Home: a.home.Root, Backend: a.store.Backend(), Search: a.palace.Mode(), Embedder: a.embedder, Index: indexStatsOf(st),
		Condense: CondenseInfo{Enabled: cfg.Reflector.Enabled, Summarizer: a.reflector.Summarizer()},
		Mining:   cfg.Manager.Mining, Redact: redactInfo(cfg.Redact), Agents: []AgentStatus{}}
	if id, err := a.home.ID(); err == nil {
		out.HomeID = id
	}
	out.WithoutVectors = max(st.Drawers-st.Vectors, 0)
	if out.Index.Backend == "" {
		out.Index.Backend = out.Backend
	}
	out.Index.Wings = []WingStats{}
	for _, w := range st.Wings {
		if !r.Scope.Own || w.Wing == r.Scope.Caller {
			out.Index.Wings = append(out.Index.Wings, WingStats(w))
		}
	}
	agents, err := a.collectAgents(ctx, cfg, st, a.condensed.Read(a.home.LogPath()))
	if err != nil {
		return Status{}, err
	}
	if r.Manager != nil {
		out.Mining = r.Manager.Mining
		withMining(agents, miningOf(r.Manager))
	}
	for _, as := range agents {
		if !r.Scope.Own || as.Agent == r.Scope.Caller {
			out.Agents = append(out.Agents, as)
		}
	}
	return out, nil
}
