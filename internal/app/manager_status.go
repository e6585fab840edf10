package app

import (
	"context"
	"time"
)

// Problem is a manager-level error (watcher, config reload, archive scan)
// kept for status pages.
type Problem struct {
	Time  time.Time `json:"time"`
	What  string    `json:"what"`
	Error string    `json:"error"`
}

// AgentMining is what the running manager knows of one agent's mining.
type AgentMining struct {
	// Skipped says why the last mine passed the file over.
	Skipped string
	// Backoff is set while mining the agent keeps failing.
	Backoff *Backoff
}

// Runtime is the part of the manager's status that only the running
// manager knows: its instance, its queue and schedules, its problems and
// each agent's mining. ManagerStatus adds the home's status to it.
type Runtime struct {
	// The instance, as recorded in palace/run.pid.
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	HTTP    string    `json:"http,omitempty"` // the address actually listened on
	Version string    `json:"version,omitempty"`
	Home    string    `json:"home"`

	UptimeSeconds float64 `json:"uptime_seconds"`
	Watching      int     `json:"watching"` // directories under watch
	Pending       int     `json:"pending"`  // agents changed and waiting to be mined
	// MineLagSeconds is the last mine's lag: from the first change to a
	// memory file it caught up with until that change was searchable
	// (debounce, queue and mining itself); LastMineLag is when it ended.
	MineLagSeconds float64   `json:"mine_lag_seconds"`
	LastMineLag    time.Time `json:"last_mine_lag,omitzero"`
	// UnminedAgeSeconds is the age of the oldest change not yet mined (0
	// when everything is mined): a growing value means mining falls
	// behind.
	UnminedAgeSeconds float64   `json:"unmined_age_seconds"`
	LastScan          time.Time `json:"last_scan,omitzero"`
	NextScan          time.Time `json:"next_scan,omitzero"`
	LastPass          time.Time `json:"last_reflector_pass,omitzero"`
	NextPass          time.Time `json:"next_reflector_pass,omitzero"`
	Problems          []Problem `json:"problems"` // recent manager-level errors, newest last
	// Mining is each agent's mining state, by agent.
	Mining map[string]AgentMining `json:"-"`
}

// ManagerStatus is what GET /api/v1/manager reports (and GET
// /api/v1/status carries as "manager"), and what `hivemem status` shows
// while a manager runs: the manager's runtime and the home's status under
// its live settings, every agent with its mining state.
type ManagerStatus struct {
	Runtime
	Backend    string       `json:"backend"`
	SearchMode string       `json:"search_mode"`
	Embedder   EmbedderInfo `json:"embedder"`
	Index      IndexStats   `json:"index"`
	// Mining is manager.mining: false stops mining and condensing.
	Mining bool          `json:"mining"`
	Agents []AgentStatus `json:"agents"`
}

// ManagerStatus reports the running manager rt, the index and every
// agent. Errors reading the index become problems in the report rather
// than a failed request.
func (a *App) ManagerStatus(ctx context.Context, rt Runtime) ManagerStatus {
	cfg := a.Settings()
	s := ManagerStatus{Runtime: rt, Backend: a.store.Backend(), SearchMode: a.palace.Mode(), Embedder: a.embedder, Mining: cfg.Manager.Mining}
	s.Problems = append([]Problem{}, rt.Problems...)
	st, err := a.store.Stats(ctx)
	if err != nil {
		s.Problems = append(s.Problems, Problem{Time: time.Now().UTC(), What: "index stats", Error: err.Error()})
	}
	s.Index = indexStatsOf(st)
	agents, err := a.collectAgents(ctx, cfg, st, a.condensed.Read(a.home.LogPath()))
	if err != nil {
		s.Problems = append(s.Problems, Problem{Time: time.Now().UTC(), What: "agents", Error: err.Error()})
	}
	withMining(agents, rt.Mining)
	if agents == nil {
		agents = []AgentStatus{}
	}
	s.Agents = agents
	return s
}

// withMining sets each agent's mining state, as the manager knows it.
func withMining(agents []AgentStatus, mining map[string]AgentMining) {
	for i := range agents {
		if am, ok := mining[agents[i].Agent]; ok {
			agents[i].Skipped, agents[i].MiningBackoff = am.Skipped, am.Backoff
		}
	}
}

// miningOf is the agents' mining state as a manager's status reports it.
func miningOf(ms *ManagerStatus) map[string]AgentMining {
	out := make(map[string]AgentMining, len(ms.Agents))
	for _, as := range ms.Agents {
		out[as.Agent] = AgentMining{Skipped: as.Skipped, Backoff: as.MiningBackoff}
	}
	return out
}
