package manager

import (
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// TestShutdownMinesChangesStillSettling: a change made just before the
// manager stops, still waiting out its debounce, is mined during the
// shutdown instead of being dropped with the pending set (the index then
// lagged the file until the next start).
func TestShutdownMinesChangesStillSettling(t *testing.T) {
	a := openHome(t, "[manager]\ndebounce = \"1h\"\nscan_interval = \"1h\"\n[reflector]\ninterval = \"0s\"\n",
		map[string]string{"ann": "# Memory\n\n## 2026-11-01 — a\nannfirst\n"})
	m, stop := running(t, a)
	waitUntil(t, 10*time.Second, "the start's scan", func() (bool, string) { return searchableCount(t, a, "annfirst") == 1, "" })
	p, _ := a.Home().MemoryPath("ann")
	filetest.Append(t, p, "## 2026-11-02 — b\nwrittenbeforestop\n")
	waitUntil(t, 10*time.Second, "the change to wait out its debounce", func() (bool, string) {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.pendingN == 1, "" // Status's Pending counts the start's scan too
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := searchableCount(t, a, "writtenbeforestop"); n != 1 {
		t.Errorf("after shutdown the change is searchable %d times, want once: the pending change was dropped", n)
	}
}

// TestPendingSetDebounces: a change is due a debounce after the last one,
// but never later than MaxDelay (or the debounce, when longer) after the
// first; a retry makes an agent due at its time unless it is due sooner.
func TestPendingSetDebounces(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name     string
		touches  []time.Duration // after t0
		debounce time.Duration
		retry    time.Duration // after t0, 0: none
		wantDue  time.Duration
	}{
		{"one change", []time.Duration{0}, ms(300), 0, ms(300)},
		{"a burst settles", []time.Duration{0, ms(100), ms(200)}, ms(300), 0, ms(500)},
		{"a busy file waits at most MaxDelay", []time.Duration{0, ms(500), ms(1000), ms(1400)}, ms(300), 0, MaxDelay},
		{"a long debounce is its own bound", []time.Duration{0, ms(1000), ms(2000)}, 2 * time.Second, 0, 2 * time.Second},
		{"a negative debounce is none", []time.Duration{ms(10)}, -time.Second, 0, ms(10)},
		{"a later retry keeps the sooner due", []time.Duration{0}, ms(300), time.Second, ms(300)},
		{"a sooner retry wins", []time.Duration{0}, ms(300), ms(100), ms(100)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := pendingSet{}
			for _, d := range tc.touches {
				ps.touch("ann", t0.Add(d), tc.debounce)
			}
			if tc.retry > 0 {
				ps.retryAt("ann", t0.Add(tc.retry))
			}
			due, ok := ps.next()
			if !ok || !due.Equal(t0.Add(tc.wantDue)) {
				t.Fatalf("due %v (%v), want %v", due.Sub(t0), ok, tc.wantDue)
			}
			if got := ps.takeDue(due.Add(-time.Nanosecond)); len(got) != 0 {
				t.Errorf("taken before it was due: %v", got)
			}
			if got := ps.takeDue(due); len(got) != 1 || len(ps) != 0 {
				t.Errorf("at its time: took %v, %d left", got, len(ps))
			}
		})
	}
}
