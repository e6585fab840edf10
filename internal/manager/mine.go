package manager

// Mining: the one worker that mines (agents, scans, the drain at
// shutdown) and the per-agent backoff after failures.

import (
	"context"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	backoffpkg "github.com/hivemem/hivemem/internal/backoff"
	"github.com/hivemem/hivemem/internal/eventlog"
)

// MineBackoff is the wait after n consecutive mining failures.
func MineBackoff(n int) time.Duration { return backoff(MineBackoffMin, n) }

// backoff doubles first for each failure after the first, up to
// MineBackoffMax.
func backoff(first time.Duration, n int) time.Duration {
	return backoffpkg.Doubling(first, MineBackoffMax, n)
}

// agentState is the manager's mining record of one agent.
type agentState struct {
	failures    int
	nextAttempt time.Time
	lastError   string
	lastFailure time.Time
	skipped     string
}

// worker does every mine the manager starts, one at a time. Once stop is
// closed it goes no further than the mine in progress, then drains the
// queue; ctx (cancelled after the shutdown grace) interrupts a mine.
func (m *Manager) worker(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			m.drain(ctx)
			return
		case <-ctx.Done():
			return
		case <-m.queue.wake:
		}
		agents, since, scan := m.queue.take()
		if scan {
			m.setWorking(1)
			m.scan(ctx, stop)
			m.setWorking(0)
			continue // the scan mined every agent, the queued ones included
		}
		for i, id := range agents {
			if stopped(stop) {
				for _, rest := range agents[i:] {
					m.queue.add(rest, since[rest]) // for the drain
				}
				break
			}
			m.setWorking(len(agents) - i)
			m.setMiningSince(since[id])
			m.mineAgent(ctx, id, since[id], false)
		}
		m.setMiningSince(time.Time{})
		m.setWorking(0)
	}
}

// drain mines, at shutdown, the agents whose changes were queued or still
// settling (a queued full scan is left to the next start). They get the
// shutdown grace, ctx; what it does not cover is logged, and the next
// start's scan mines it.
func (m *Manager) drain(ctx context.Context) {
	agents, since, _ := m.queue.take()
	for i, id := range agents {
		if ctx.Err() == nil {
			m.setWorking(len(agents) - i)
			m.setMiningSince(since[id])
			m.mineAgent(ctx, id, since[id], false)
		}
		if ctx.Err() != nil {
			m.log.Warn("shutdown: changes may be left unmined; the next start mines them", "agents", agents[i:])
			break
		}
	}
	m.setMiningSince(time.Time{})
	m.setWorking(0)
}

// setMiningSince records the first change of the agent being mined now.
func (m *Manager) setMiningSince(t time.Time) {
	m.mu.Lock()
	m.miningSince = t
	m.mu.Unlock()
}

func (m *Manager) setWorking(n int) {
	m.mu.Lock()
	m.working = n
	m.mu.Unlock()
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// mineAgent brings one agent's drawers in step with its files, honouring
// the agent's backoff; since is the first change this mine catches up with
// (zero for a scan), for the mine lag in Status. With whole (a scan), or
// when the watcher saw a session file go or a directory change
// (Manager.whole), it mines the agent's whole directory, as `hivemem mine
// --agent` does: memory.md and the imported conversations in sessions/
// (room session), files gone from it losing their drawers. Otherwise it
// mines the files the watcher saw change (Manager.files), each alone, so
// that a change to one conversation costs no hash of the others; with
// none marked, memory.md.
func (m *Manager) mineAgent(ctx context.Context, id string, since time.Time, whole bool) {
	if !m.Config().Manager.Mining {
		return // manager.mining = false; switching it on scans everything
	}
	now := time.Now()
	m.mu.Lock()
	st := m.agents[id]
	var wait time.Time
	if st != nil && st.failures > 0 && now.Before(st.nextAttempt) {
		wait = st.nextAttempt
	}
	m.mu.Unlock()
	if !wait.IsZero() {
		m.requestRetry(id, wait)
		return
	}
	marked, files := m.takeMarks(id)
	whole = marked || whole
	failed := func(err error) {
		if whole {
			m.mineWhole(id) // the retry mines the directory again
		}
		for _, f := range files {
			m.mineFile(id, f) // and these files
		}
		if ctx.Err() == nil {
			m.mineFailed(id, err)
		}
	}
	res, err := m.app.MineAgent(ctx, app.MineAgentRequest{Agent: id, Whole: whole, Files: files})
	if err != nil {
		failed(err)
		return
	}
	if res.Gone {
		m.mu.Lock()
		delete(m.agents, id)
		m.mu.Unlock()
		return
	}
	m.mined(id, res, since)
}

// requestRetry asks the loop to mine the agent again at at. It never
// blocks: when the loop is behind (or gone, during shutdown) the request is
// dropped and the next scan retries.
func (m *Manager) requestRetry(id string, at time.Time) {
	select {
	case m.retryCh <- retry{agent: id, at: at}:
	default:
	}
}

// mined records a successful mine: the backoff is cleared, and a mine that
// changed the index is logged and recorded in the event log.
func (m *Manager) mined(id string, res app.MineAgentResult, since time.Time) {
	rep := res.Report
	skipped := ""
	if len(rep.Skipped) > 0 {
		skipped = rep.Skipped[0].Reason
	}
	m.mu.Lock()
	st := m.agents[id]
	if st == nil {
		st = &agentState{}
		m.agents[id] = st
	}
	recovered := st.failures > 0
	*st = agentState{skipped: skipped}
	if !since.IsZero() && rep.Changed > 0 {
		m.mineLag = time.Since(since)
		m.mineLagAt = time.Now().UTC()
	}
	m.mu.Unlock()
	if recovered {
		m.log.Info("mining works again", "agent", id)
	}
	if rep.Changed == 0 && rep.FilesRemoved == 0 {
		return
	}
	m.log.Info("mined", "agent", id, "added", rep.Added, "removed", rep.Removed, "kept", rep.Kept,
		"embedded", rep.Embedded, "seconds", rep.Seconds)
	m.event(eventlog.Event{Kind: "mine", Agent: id, Data: map[string]any{
		"drawersAdded": rep.Added, "drawersRemoved": rep.Removed, "drawersKept": rep.Kept,
		"embedded": rep.Embedded, "filesRemoved": rep.FilesRemoved, "seconds": rep.Seconds,
	}})
}

// mineFailed backs the agent off and schedules the retry. The error goes
// to the log every time and to the event log at the start of a streak.
func (m *Manager) mineFailed(id string, err error) {
	now := time.Now()
	m.mu.Lock()
	st := m.agents[id]
	if st == nil {
		st = &agentState{}
		m.agents[id] = st
	}
	st.failures++
	st.lastError, st.lastFailure = err.Error(), now.UTC()
	st.nextAttempt = now.Add(backoff(m.backoffMin, st.failures))
	n, next := st.failures, st.nextAttempt
	m.mu.Unlock()
	m.log.Error("mining failed; will retry", "agent", id, "failures", n, "retry_in", time.Until(next).Round(time.Second).String(), "err", err)
	if n == 1 {
		m.event(eventlog.Event{Kind: "mine-failed", Agent: id, Reason: "error", Data: map[string]any{"error": err.Error()}})
	}
	m.requestRetry(id, next)
}
