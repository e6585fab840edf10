package manager

// Reflector scheduling: a pass every reflector.interval.

import (
	"context"
	"time"
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
	err := m.app.ScheduledPass(ctx)
	m.mu.Lock()
	m.lastPass = time.Now().UTC()
	m.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		m.problem("reflector", err)
		m.log.Error("reflector pass failed", "err", err)
	}
}
