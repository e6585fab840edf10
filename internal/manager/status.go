package manager

import (
	"context"
	"time"

	"github.com/hivemem/hivemem/internal/app"
)

// Status is what GET /api/v1/manager reports (and GET /api/v1/status
// carries as "manager"), and what `hivemem status` shows while a manager
// runs: the app builds it (App.ManagerStatus) from the manager's runtime,
// the index and every agent.
func (m *Manager) Status(ctx context.Context) app.ManagerStatus {
	return m.app.ManagerStatus(ctx, m.runtime())
}

// runtime is what only the manager knows of its state, taken before the
// app reads the index: a scan reported done (or nothing reported pending)
// is then always reflected in the counts.
func (m *Manager) runtime() app.Runtime {
	inst := Instance{Home: m.home.Root}
	if m.claim != nil {
		inst = m.claim.Instance()
	}
	rt := app.Runtime{PID: inst.PID, Started: inst.Started, Version: inst.Version, Home: inst.Home}
	if !inst.Started.IsZero() {
		rt.UptimeSeconds = time.Since(inst.Started).Seconds()
	}
	m.mu.Lock()
	rt.HTTP = m.addr
	rt.Watching = len(m.watched)
	rt.Pending = m.pendingN + m.queue.len() + m.working
	rt.LastScan, rt.NextScan, rt.LastPass, rt.NextPass = m.lastScan, m.nextScan, m.lastPass, m.nextPass
	rt.Problems = append([]app.Problem{}, m.problems...)
	rt.MineLagSeconds, rt.LastMineLag = m.mineLag.Seconds(), m.mineLagAt
	oldest := m.pendingSince
	for _, t := range []time.Time{m.miningSince, m.queue.oldest()} {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	rt.Mining = make(map[string]app.AgentMining, len(m.agents))
	for id, st := range m.agents {
		am := app.AgentMining{Skipped: st.skipped}
		if st.failures > 0 {
			am.Backoff = &app.Backoff{Failures: st.failures, NextAttempt: st.nextAttempt.UTC(), LastError: st.lastError, LastFailure: st.lastFailure}
		}
		rt.Mining[id] = am
	}
	m.mu.Unlock()
	if !oldest.IsZero() {
		rt.UnminedAgeSeconds = max(time.Since(oldest).Seconds(), 0)
	}
	return rt
}
