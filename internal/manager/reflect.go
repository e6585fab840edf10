package manager

// Reflector scheduling: a pass every reflector.interval.

import (
	"context"
	"time"

	"github.com/hivemem/hivemem/internal/reflector"
)

// reflectLoop runs a reflector pass every reflector.interval (read live;
// 0 or less pauses the schedule). The first pass comes at most a minute
// after the start.
func (m *Manager) reflectLoop(ctx context.Context, started time.Time) {
	base, first := started, true
	for {
		iv := m.Config().Reflector.Interval.Duration
		var timerC <-chan time.Time
		var t *time.Timer
		if iv > 0 {
			wait := iv
			if first {
				wait = min(iv, firstPassMax)
			}
			next := base.Add(wait)
			m.mu.Lock()
			m.nextPass = next
			m.mu.Unlock()
			t = time.NewTimer(max(time.Until(next), 0))
			timerC = t.C
		} else {
			m.mu.Lock()
			m.nextPass = time.Time{}
			m.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return
		case <-m.cfgChanged:
			if t != nil {
				t.Stop()
			}
			continue
		case <-timerC:
		}
		first = false
		m.pass(ctx)
		base = time.Now()
	}
}

func (m *Manager) pass(ctx context.Context) {
	if !m.Config().Manager.Mining {
		m.log.Debug("reflector pass skipped: manager.mining is false")
		return
	}
	// No secret appended by hand since the last mine may reach an archive
	// or a backup.
	if err := m.app.RedactMemoryFiles(ctx); err != nil {
		m.log.Warn("reflector pass: redacting secrets in memory files", "err", err)
	}
	results, err := m.refl.Pass(ctx)
	m.mu.Lock()
	m.lastPass = time.Now().UTC()
	m.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			m.problem("reflector", err)
			m.log.Error("reflector pass failed", "err", err)
		}
		return
	}
	for _, r := range results {
		switch r.Status {
		case reflector.StatusCondensed:
			m.log.Info("condensed", "agent", r.Agent, "old_bytes", r.OldBytes, "new_bytes", r.NewBytes,
				"evicted", r.Evicted, "kept", r.Kept, "backup", r.Backup)
		case reflector.StatusAborted:
			if r.Reason != reflector.ReasonCanceled && !reflector.Benign(r.Reason) {
				m.log.Warn("condensation aborted", "agent", r.Agent, "reason", r.Reason, "msg", r.Message, "failures", r.Failures)
			}
		default:
			m.log.Debug("not condensed", "agent", r.Agent, "reason", r.Reason)
		}
	}
}
