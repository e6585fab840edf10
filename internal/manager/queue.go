package manager

// Queueing: the debounce of changed agents and the work queue from the
// event loop to the mining worker.

import (
	"maps"
	"sort"
	"sync"
	"time"
)

// retry is the worker's request to mine an agent again at a later time.
type retry struct {
	agent string
	at    time.Time
}

// pend is an agent waiting to be mined: due when its writes have settled.
type pend struct{ first, due time.Time }

// pendingSet is the agents whose files changed and that wait out their
// debounce (or a retry time) before they go to the work queue. The event
// loop owns it.
type pendingSet map[string]pend

// touch records a change to id's file at now: it is due once no change
// came for debounce, and at most max(MaxDelay, debounce) after the first.
func (ps pendingSet) touch(id string, now time.Time, debounce time.Duration) {
	debounce = max(debounce, 0)
	p, ok := ps[id]
	if !ok {
		p.first = now
	}
	p.due = now.Add(debounce)
	if limit := p.first.Add(max(MaxDelay, debounce)); p.due.After(limit) {
		p.due = limit
	}
	ps[id] = p
}

// retryAt makes id due at at, unless it is pending and due sooner.
func (ps pendingSet) retryAt(id string, at time.Time) {
	if p, ok := ps[id]; !ok || p.due.After(at) {
		ps[id] = pend{first: at, due: at}
	}
}

// takeDue removes the agents due by now and returns each with its first
// change.
func (ps pendingSet) takeDue(now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for id, p := range ps {
		if !p.due.After(now) {
			out[id] = p.first
			delete(ps, id)
		}
	}
	return out
}

// next is when the earliest agent is due; false when none is pending.
func (ps pendingSet) next() (time.Time, bool) {
	var first time.Time
	for _, p := range ps {
		if first.IsZero() || p.due.Before(first) {
			first = p.due
		}
	}
	return first, len(ps) > 0
}

// oldest is the first change among the pending agents (zero when none).
func (ps pendingSet) oldest() time.Time {
	var t time.Time
	for _, p := range ps {
		if t.IsZero() || p.first.Before(t) {
			t = p.first
		}
	}
	return t
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
