package manager

// Queueing: the debounce of changed agents and the work queue from the
// event loop to the mining worker.

import (
	"maps"
	"sort"
	"sync"
	"time"
)

type retry struct {
	agent string
	at    time.Time
}

// pend is an agent waiting to be mined: due when its writes have settled.
type pend struct{ first, due time.Time }

// armDue sets dueT to fire when the earliest pending agent is due.
func (m *Manager) armDue(dueT *time.Timer, pending map[string]pend) {
	if len(pending) == 0 {
		dueT.Stop()
		return
	}
	var first time.Time
	for _, p := range pending {
		if first.IsZero() || p.due.Before(first) {
			first = p.due
		}
	}
	dueT.Reset(max(time.Until(first), 0))
}

// touch records a change to an agent's file: it is mined once no change
// came for manager.debounce, and at most MaxDelay after the first one.
func (m *Manager) touch(pending map[string]pend, id string) {
	now := time.Now()
	deb := m.Config().Manager.Debounce.Duration
	if deb < 0 {
		deb = 0
	}
	p, ok := pending[id]
	if !ok {
		p.first = now
	}
	p.due = now.Add(deb)
	if limit := p.first.Add(max(MaxDelay, deb)); p.due.After(limit) {
		p.due = limit
	}
	pending[id] = p
}

// workQueue hands agents (and full scans) from the loop to the worker.
type workQueue struct {
	mu sync.Mutex
	// agents maps each queued agent to its first change not yet mined.
	agents map[string]time.Time
	scan   bool
	wake   chan struct{}
}

// add queues an agent whose file first changed at since.
func (q *workQueue) add(id string, since time.Time) {
	q.mu.Lock()
	if t, ok := q.agents[id]; !ok || since.Before(t) {
		q.agents[id] = since
	}
	q.mu.Unlock()
	q.signal()
}

func (q *workQueue) addScan() {
	q.mu.Lock()
	q.scan = true
	q.mu.Unlock()
	q.signal()
}

func (q *workQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *workQueue) take() (agents []string, since map[string]time.Time, scan bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id := range q.agents {
		agents = append(agents, id)
	}
	sort.Strings(agents)
	since = maps.Clone(q.agents)
	clear(q.agents)
	scan, q.scan = q.scan, false
	return agents, since, scan
}

// oldest is the first unmined change among the queued agents (zero when
// none).
func (q *workQueue) oldest() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	var t time.Time
	for _, s := range q.agents {
		if t.IsZero() || s.Before(t) {
			t = s
		}
	}
	return t
}

func (q *workQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.agents)
}
