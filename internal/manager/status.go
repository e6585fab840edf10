package manager

import (
	"context"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/store"
)

// Status is what GET /api/v1/manager reports (and GET /api/v1/status
// carries as "manager"), and what `hivemem status` shows while a manager
// runs.
type Status struct {
	Instance
	UptimeSeconds float64          `json:"uptime_seconds"`
	Backend       string           `json:"backend"`
	SearchMode    string           `json:"search_mode"`
	Embedder      app.EmbedderInfo `json:"embedder"`
	Index         store.Stats      `json:"index"`
	Watching      int              `json:"watching"` // directories under watch
	Pending       int              `json:"pending"`  // agents changed and waiting to be mined
	// MineLagSeconds is the last mine's lag: from the first change to a
	// memory file it caught up with until that change was searchable
	// (debounce, queue and mining itself); LastMineLag is when it ended.
	MineLagSeconds float64   `json:"mine_lag_seconds"`
	LastMineLag    time.Time `json:"last_mine_lag,omitzero"`
	// UnminedAgeSeconds is the age of the oldest change not yet mined (0
	// when everything is mined): a growing value means mining falls
	// behind.
	UnminedAgeSeconds float64           `json:"unmined_age_seconds"`
	LastScan          time.Time         `json:"last_scan,omitzero"`
	NextScan          time.Time         `json:"next_scan,omitzero"`
	LastPass          time.Time         `json:"last_reflector_pass,omitzero"`
	NextPass          time.Time         `json:"next_reflector_pass,omitzero"`
	Problems          []Problem         `json:"problems"` // recent manager-level errors, newest last
	Mining            bool              `json:"mining"`   // manager.mining: false stops mining and condensing
	Agents            []app.AgentStatus `json:"agents"`
}

// Problem is a manager-level error (watcher, config reload, archive scan)
// kept for status pages.
type Problem struct {
	Time  time.Time `json:"time"`
	What  string    `json:"what"`
	Error string    `json:"error"`
}

// Status reports the manager, the index and every agent. Errors reading
// the index become problems in the report rather than a failed request.
func (m *Manager) Status(ctx context.Context) Status {
	inst := Instance{Home: m.app.Home.Root}
	if m.claim != nil {
		inst = m.claim.Instance()
	}
	s := Status{Instance: inst, Backend: m.app.Store.Backend(), SearchMode: m.app.Palace.Mode(), Embedder: m.app.Embedder,
		Mining: m.Config().Manager.Mining}
	if !inst.Started.IsZero() {
		s.UptimeSeconds = time.Since(inst.Started).Seconds()
	}
	// The manager's own state first, then the index: a scan reported done
	// (or nothing reported pending) is then always reflected in the counts.
	m.mu.Lock()
	s.HTTP = m.addr
	s.Watching = len(m.watched)
	s.Pending = m.pendingN + m.queue.len() + m.working
	s.LastScan, s.NextScan, s.LastPass, s.NextPass = m.lastScan, m.nextScan, m.lastPass, m.nextPass
	s.Problems = append([]Problem{}, m.problems...)
	s.MineLagSeconds, s.LastMineLag = m.mineLag.Seconds(), m.mineLagAt
	oldest := m.pendingSince
	for _, t := range []time.Time{m.miningSince, m.queue.oldest()} {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	m.mu.Unlock()
	if !oldest.IsZero() {
		s.UnminedAgeSeconds = max(time.Since(oldest).Seconds(), 0)
	}
	var extra []Problem
	st, err := m.app.Store.Stats(ctx)
	if err != nil {
		extra = append(extra, Problem{Time: time.Now().UTC(), What: "index stats", Error: err.Error()})
	}
	s.Index = st
	cfg := m.Config()
	agents, err := m.app.CollectAgents(ctx, cfg, st, m.condensed.Read(m.app.Home.LogPath()))
	if err != nil {
		extra = append(extra, Problem{Time: time.Now().UTC(), What: "agents", Error: err.Error()})
	}
	s.Problems = append(s.Problems, extra...)
	m.mu.Lock()
	for i := range agents {
		a := &agents[i]
		ms := m.agents[a.Agent]
		if ms == nil {
			continue
		}
		a.Skipped = ms.skipped
		if ms.failures > 0 {
			a.MiningBackoff = &app.Backoff{Failures: ms.failures, NextAttempt: ms.nextAttempt.UTC(), LastError: ms.lastError, LastFailure: ms.lastFailure}
		}
	}
	m.mu.Unlock()
	if agents == nil {
		agents = []app.AgentStatus{}
	}
	s.Agents = agents
	return s
}
