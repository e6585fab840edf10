package manager

// The real manager (fsnotify, its worker, its scans) and a
// real SQLite palace, against agent directories that come and go, editor
// saves, renames, a recreated hive/agents, FIFOs and writes the watcher
// cannot see. The reference is a fresh mine of the same files into a new
// index: once the manager is idle its index must equal it.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/wiring"
)

// freshDump mines a's hive into a new index and dumps it.
func freshDump(t *testing.T, a *app.App) map[string]string {
	t.Helper()
	_, st := hometest.FreshPalace(t, a.Home(), nil, palace.Options{})
	defer st.Close()
	d, err := hometest.Drawers(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func indexDifferences(got, want map[string]string) []string {
	var out []string
	for k, v := range got {
		if w, ok := want[k]; !ok {
			out = append(out, "only in the manager's index: "+v)
		} else if v != w {
			out = append(out, fmt.Sprintf("differs: index %s, fresh %s", v, w))
		}
	}
	for k, v := range want {
		if _, ok := got[k]; !ok {
			out = append(out, "missing from the manager's index: "+v)
		}
	}
	sort.Strings(out)
	return out
}

// waitConverged waits until the manager's index equals a fresh mine.
func waitConverged(t *testing.T, a *app.App, within time.Duration, what string) {
	t.Helper()
	idx := apptest.Index(t, a)
	waitUntil(t, within, what, func() (bool, string) {
		got, err := hometest.Drawers(t.Context(), idx)
		if err != nil {
			return false, err.Error()
		}
		d := indexDifferences(got, freshDump(t, a))
		if len(d) == 0 {
			return true, ""
		}
		return false, fmt.Sprintf("%d differences, e.g. %s", len(d), strings.Join(d[:min(4, len(d))], "; "))
	})
}

func searchableCount(t *testing.T, a *app.App, word string) int {
	t.Helper()
	hits, err := apptest.IndexPalace(t, a).Search(t.Context(), palace.Query{Text: word, Mode: palace.ModeLexical, Results: 50})
	if err != nil {
		t.Fatalf("search %q: %v", word, err)
	}
	return len(hits)
}

// TestRandomChurnConverges: with the periodic scan out of the
// way (1 h), the watcher alone must keep up with agent directories created
// and removed again and again, files replaced by rename (temp file, and
// vim's move-away-then-write), appends, truncations, deletions and agent
// directories renamed. Once the writes stop, the manager's index equals a
// fresh mine, every live marker is searchable, and the wake-up digests
// describe the files as they are.
func TestRandomChurnConverges(t *testing.T) {
	a := openHome(t, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"1h\"\n[reflector]\ninterval = \"0s\"\n", map[string]string{
		"ann": "# Memory — ann (ann)\n\n## 2026-11-01 — first\nannseed\n",
	})
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	m.backoffMin = 50 * time.Millisecond // see TestFileVanishesBeforeMine
	_, stop := start(t, m)
	waitConverged(t, a, 10*time.Second, "the start-up scan")

	seed := uint64(42)
	if v := os.Getenv("HIVEMEM_CHURN_SEED"); v != "" { // to explore other sequences by hand
		fmt.Sscan(v, &seed)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	ids := []string{"ann", "bob", "cat", "dan"}
	content := map[string][]string{"ann": {"## 2026-11-01 — first\nannseed\n"}}
	path := func(id string) string { p, _ := a.Home().MemoryPath(id); return p }
	render := func(id string) string {
		return fmt.Sprintf("# Memory — %s (%s)\n\n", id, id) + strings.Join(content[id], "")
	}
	n := 0
	section := func(id string) string {
		n++
		return fmt.Sprintf("## 2026-11-%02d — %s note %d\nchurn%04d text\n", n%28+1, id, n, n)
	}
	for step := range 120 {
		id := ids[rng.IntN(len(ids))]
		_, exists := content[id]
		switch op := rng.IntN(8); {
		case !exists || op == 0: // (re)create the agent directory and file
			content[id] = []string{section(id)}
			filetest.Write(t, path(id), render(id))
		case op == 1: // remove the whole directory
			if err := os.RemoveAll(filepath.Dir(path(id))); err != nil {
				t.Fatal(err)
			}
			delete(content, id)
		case op == 2, op == 3: // append with O_APPEND, as agents do
			s := section(id)
			content[id] = append(content[id], s)
			filetest.Append(t, path(id), s)
		case op == 4: // editor save by rename
			if len(content[id]) > 0 {
				content[id] = content[id][1:]
			}
			content[id] = append(content[id], section(id))
			if rng.IntN(2) == 0 {
				filetest.VimSave(t, path(id), render(id))
			} else {
				filetest.EditorSave(t, path(id), render(id))
			}
		case op == 5: // truncate in place
			content[id] = content[id][:len(content[id])/2]
			if err := os.WriteFile(path(id), []byte(render(id)), 0o644); err != nil {
				t.Fatal(err)
			}
		case op == 6: // delete only the file
			if err := os.Remove(path(id)); err != nil {
				t.Fatal(err)
			}
			delete(content, id)
			_ = os.Remove(filepath.Dir(path(id)))
		case op == 7: // rename the agent directory to a free id
			var to string
			for _, c := range ids {
				if _, ok := content[c]; !ok && c != id {
					to = c
				}
			}
			if to == "" {
				continue
			}
			_ = os.RemoveAll(filepath.Dir(path(to)))
			if err := os.Rename(filepath.Dir(path(id)), filepath.Dir(path(to))); err != nil {
				t.Fatal(err)
			}
			// The file keeps its old title; only the id (directory) changes.
			content[to] = content[id]
			delete(content, id)
		}
		if step%10 == 0 {
			time.Sleep(30 * time.Millisecond) // let some bursts settle (not a sync point)
		}
	}
	waitConverged(t, a, 15*time.Second, "the manager to catch up with the churn")
	for id, secs := range content {
		for _, s := range secs {
			w := strings.Fields(strings.SplitN(s, "\n", 3)[1])[0]
			if got := searchableCount(t, a, w); got != 1 {
				t.Errorf("%s: %q found %d times, want 1", id, w, got)
			}
		}
	}
	// Wake-up: the hive lists exactly the live agents, each agent's digest
	// starts its newest sections with the file's last section.
	d, err := a.WakeUp(t.Context(), app.WakeUpRequest{Hive: true})
	if err != nil {
		t.Fatal(err)
	}
	var live, listed []string
	for id := range content {
		live = append(live, id)
	}
	for _, al := range d.Agents {
		listed = append(listed, al.Agent)
	}
	sort.Strings(live)
	if strings.Join(live, ",") != strings.Join(listed, ",") {
		t.Errorf("hive wake-up lists %v, the live agents are %v", listed, live)
	}
	for id, secs := range content {
		wd, err := a.WakeUp(t.Context(), app.WakeUpRequest{Wing: id})
		if err != nil {
			t.Errorf("wake-up %s: %v", id, err)
			continue
		}
		if len(secs) == 0 {
			continue
		}
		want := strings.TrimPrefix(strings.SplitN(secs[len(secs)-1], "\n", 2)[0], "## ")
		if len(wd.Recent) == 0 || wd.Recent[0].Heading != want {
			t.Errorf("wake-up %s: newest %+v, want %q", id, wd.Recent, want)
		}
	}
	// Under load a file can vanish between the worker's check and its mine,
	// which counts as a failure (5 s backoff): only logged here, as it
	// depends on timing; TestFileVanishesBeforeMine pins it.
	evs, err := eventlog.Open(a.Home().LogPath()).Read(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == "mine-failed" {
			t.Logf("a mine failed during the churn: %s %v", ev.Agent, ev.Data)
		}
	}
	s := m.Status(t.Context())
	if s.Watching > len(content)+2 {
		t.Errorf("watching %d directories for %d agents (+home, +hive/agents): stale watches", s.Watching, len(content))
	}
	for _, p := range s.Problems {
		t.Errorf("problem: %+v", p)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestAgentsDirRecreatedIsWatchedAgain: hive/agents removed and made again
// (a restore, `rm -rf hive/agents && mkdir hive/agents`). The watch on the
// old directory died with it; the periodic scan ("re-arm watches lost to a
// deleted and recreated directory") must watch the new one, so that an
// agent created afterwards is mined by the watcher, not an hour later by
// the next scan.
func TestAgentsDirRecreatedIsWatchedAgain(t *testing.T) {
	a := openHome(t, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"100ms\"\n[reflector]\ninterval = \"0s\"\n",
		map[string]string{"ann": "# Memory\n\n## 2026-11-01 — a\nannfirst\n"})
	m, stop := running(t, a)
	waitUntil(t, 10*time.Second, "ann to be mined", func() (bool, string) { return searchableCount(t, a, "annfirst") == 1, "" })

	if err := os.RemoveAll(a.Home().AgentsDir()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(a.Home().AgentsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	recreated := time.Now()
	waitUntil(t, 10*time.Second, "ann's drawers to go and two scans to pass", func() (bool, string) {
		s := m.Status(t.Context())
		return searchableCount(t, a, "annfirst") == 0 && s.LastScan.After(recreated.Add(250*time.Millisecond)), fmt.Sprintf("last scan %v", s.LastScan)
	})
	// From now on only the watcher can mine a new agent quickly.
	if err := os.WriteFile(a.Home().ConfigPath(), []byte("[manager]\ndebounce = \"20ms\"\nscan_interval = \"1h\"\n[reflector]\ninterval = \"0s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Reload()
	waitUntil(t, 5*time.Second, "the 1h scan interval", func() (bool, string) {
		s := m.Status(t.Context())
		return m.Config().Manager.ScanInterval.Duration == time.Hour && time.Until(s.NextScan) > 30*time.Minute, ""
	})
	p, _ := a.Home().MemoryPath("newbie")
	filetest.Write(t, p, "# Memory\n\n## 2026-11-02 — n\nnewbiearrived\n")
	waitUntil(t, 3*time.Second, "the new agent in the recreated hive/agents to be mined (by the watcher)", func() (bool, string) {
		return searchableCount(t, a, "newbiearrived") == 1, fmt.Sprintf("watching %d dirs", m.Status(t.Context()).Watching)
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestScanCatchesWatcherMiss: a write the watcher cannot see
// (through a hard link in an unwatched directory: inotify reports it to
// the link's directory only) is caught by the periodic scan, to an
// agent's memory file or to one of its session files.
func TestScanCatchesWatcherMiss(t *testing.T) {
	tests := []struct {
		name, file, content, first, more string
	}{
		{"memory file", "memory.md", "# Memory\n\n## 2026-11-01 — a\nannfirst\n", "annfirst", "## 2026-11-02 — b\nthroughthelink\n"},
		{"session file", "sessions/2026-12-01-zebra.md", sessionFile("zebrafish"), "zebrafish",
			"\n## 2026-12-01 — session zebra, later\n\n- user: throughthelink\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := openHome(t, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"300ms\"\n[reflector]\ninterval = \"0s\"\n", nil)
			dir, _ := a.Home().AgentDir("ann")
			p := filepath.Join(dir, filepath.FromSlash(tc.file))
			filetest.Write(t, p, tc.content)
			alias := filepath.Join(t.TempDir(), "alias.md")
			if err := os.Link(p, alias); err != nil {
				t.Skipf("hard link: %v", err)
			}
			_, stop := running(t, a)
			waitUntil(t, 10*time.Second, "the file to be mined", func() (bool, string) { return searchableCount(t, a, tc.first) == 1, "" })
			filetest.Append(t, alias, tc.more)
			waitUntil(t, 10*time.Second, "the scan to mine a write the watcher missed", func() (bool, string) {
				return searchableCount(t, a, "throughthelink") == 1, ""
			})
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			waitConverged(t, a, time.Second, "the final index")
		})
	}
}

// TestFIFOMemoryFileIsSkipped: one agent's memory.md is a FIFO. The
// manager must skip it (or back it off) and go on mining the others; its
// status must answer; it must stop when asked.
func TestFIFOMemoryFileIsSkipped(t *testing.T) {
	a := openHome(t, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"300ms\"\n[reflector]\ninterval = \"0s\"\n",
		map[string]string{"bob": "# Memory\n\n## 2026-11-01 — b\nbobfirst\n"})
	fifo, _ := a.Home().MemoryPath("alice")
	// Release whatever blocks on the FIFO when the test ends, so the
	// manager can be stopped and the test process exit.
	release := filetest.FIFO(t, fifo)
	m, err := New(Options{App: a, HTTP: HTTPOff, ShutdownGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := start(t, m)
	t.Cleanup(release) // runs before start's cleanup stops the manager

	bobFile, _ := a.Home().MemoryPath("bob")
	deadline := time.Now().Add(3 * time.Second)
	for searchableCount(t, a, "bobfirst") != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	filetest.Append(t, bobFile, "## 2026-11-02 — b2\nbobsecond\n")
	if searchableCount(t, a, "bobfirst") == 1 { // the worker is alive: give it the append
		deadline = time.Now().Add(4 * time.Second)
		for searchableCount(t, a, "bobsecond") != 1 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if searchableCount(t, a, "bobfirst") != 1 || searchableCount(t, a, "bobsecond") != 1 {
		t.Errorf("with a FIFO memory.md in alice's directory, bob's file is not mined (bobfirst %d, bobsecond %d hits): the worker is stuck reading the FIFO",
			searchableCount(t, a, "bobfirst"), searchableCount(t, a, "bobsecond"))
	}
	status := make(chan app.ManagerStatus, 1)
	go func() { status <- m.Status(context.Background()) }()
	select {
	case s := <-status:
		t.Logf("alice: %+v", agentStatus(s, "alice"))
	case <-time.After(1500 * time.Millisecond):
		t.Errorf("Status did not answer within 1.5s (it reads the FIFO memory file)")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("the manager did not stop within 2s of cancellation, with a 500ms shutdown grace (its worker is blocked on the FIFO)")
		release()
		<-stopped
	}
}

// TestNewHomeIDRemovesVanished: the home's id (home-id) is
// regenerated — its malformed-file error says "delete it and a new one is
// made". In a SQLite palace, which no other home shares, files mined under
// the old id are still this home's: when one is deleted its drawers must
// go, and the manager must not fail on it forever.
func TestNewHomeIDRemovesVanished(t *testing.T) {
	a1 := openHome(t, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"200ms\"\n[reflector]\ninterval = \"0s\"\n", map[string]string{
		"ann": "# Memory\n\n## 2026-11-01 — a\nannkeeps\n",
		"bob": "# Memory\n\n## 2026-11-01 — b\nbobvanishes\n",
	})
	if _, err := a1.Mine(t.Context(), app.MineRequest{Path: a1.Home().HiveDir()}); err != nil {
		t.Fatal(err)
	}
	root := a1.Home().Root
	a1.Close()
	if err := os.Remove(a1.Home().IDPath()); err != nil {
		t.Fatal(err)
	}
	a, err := wiring.Open(t.Context(), wiring.Options{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	m.backoffMin = 20 * time.Millisecond
	_, stop := start(t, m)
	p, _ := a.Home().MemoryPath("bob")
	if err := os.RemoveAll(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 3*time.Second, "bob's drawers to go", func() (bool, string) {
		n := searchableCount(t, a, "bobvanishes")
		bo := agentStatus(m.Status(t.Context()), "bob").MiningBackoff
		m.mu.Lock()
		st := m.agents["bob"]
		var why string
		if st != nil {
			why = st.lastError
		}
		m.mu.Unlock()
		return n == 0, fmt.Sprintf("%d hits for bob's text; backoff %+v; last error %q", n, bo, why)
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestFileVanishesBeforeMine: an agent's new memory.md is
// deleted after the worker took the agent (its existence checked) and
// before the mine ran — the worker may wait for the palace write lock
// behind a CLI writer for a long time, and under load the churn test above
// hits the same window by itself. A file that is gone and was never mined
// is nothing to do: it must not count as a mining failure (a false
// "mine-failed" event and a 5 s backoff that delays the agent's next
// file).
func TestFileVanishesBeforeMine(t *testing.T) {
	var bob string
	var hooked atomic.Bool
	hook := func(ctx context.Context, path string, mine func(context.Context) (app.MineResult, error)) (app.MineResult, error) {
		if path == bob && !hooked.Swap(true) {
			if err := os.Remove(bob); err != nil {
				t.Error(err)
			}
		}
		return mine(ctx)
	}
	a := openHomeHooked(t, hook, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"1h\"\n[reflector]\ninterval = \"0s\"\n",
		map[string]string{"ann": "# Memory\n\n## 2026-11-01 — a\nannfirst\n"})
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	bob, _ = a.Home().MemoryPath("bob")
	// bob's directory is there already: a new agent directory is mined
	// whole, a new memory.md in a known one alone.
	if err := os.Mkdir(filepath.Dir(bob), 0o755); err != nil {
		t.Fatal(err)
	}
	_, stop := start(t, m)
	waitUntil(t, 5*time.Second, "ann to be mined", func() (bool, string) { return searchableCount(t, a, "annfirst") == 1, "" })
	filetest.Write(t, bob, "# Memory\n\n## 2026-11-02 — b\nbobshortlived\n")
	waitUntil(t, 5*time.Second, "the worker to try bob and go idle", func() (bool, string) {
		m.mu.Lock()
		defer m.mu.Unlock()
		// The hook runs inside the worker's mine (working > 0); working
		// drops to 0 once that mine has returned and been recorded.
		return hooked.Load() && m.working == 0, fmt.Sprintf("hooked %v working %d", hooked.Load(), m.working)
	})
	m.mu.Lock()
	st := m.agents["bob"]
	var failures int
	var lastErr string
	if st != nil {
		failures, lastErr = st.failures, st.lastError
	}
	m.mu.Unlock()
	if failures != 0 {
		t.Errorf("a memory file that vanished before its first mine counts as a mining failure (%d, %q): bob now backs off", failures, lastErr)
	}
	evs, err := eventlog.Open(a.Home().LogPath()).Read(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == "mine-failed" {
			t.Errorf("event log: %s %s %v", ev.Kind, ev.Agent, ev.Data)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// sessionFile is an imported conversation holding word, as capture writes
// it into hive/agents/<id>/sessions/.
func sessionFile(word string) string {
	return "# Session\n\n## 2026-12-01 — session " + word + "\n\n- user: the " + word + " colony needs feeding twice daily\n"
}

// sessionHits searches for word and reports the rooms of its hits.
func sessionHits(t *testing.T, a *app.App, word string) []string {
	t.Helper()
	hits, err := apptest.IndexPalace(t, a).Search(t.Context(), palace.Query{Text: word, Mode: palace.ModeLexical, Results: 50})
	if err != nil {
		t.Fatalf("search %q: %v", word, err)
	}
	var rooms []string
	for _, h := range hits {
		rooms = append(rooms, h.Room)
	}
	return rooms
}

// TestWatcherMinesSessionFiles: imported conversations
// (hive/agents/<id>/sessions/<date>-<slug>.md) are mined by the watcher
// like memory.md, in room session: a sessions directory made after the
// manager started, a new session file in it, one appended to, one
// removed (its drawers go), and an agent directory moved in with its
// sessions already inside. The periodic scan is out of the way (1 h).
func TestWatcherMinesSessionFiles(t *testing.T) {
	a := openHome(t, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"1h\"\n[reflector]\ninterval = \"0s\"\n",
		map[string]string{"alice": "# Memory\n\n## 2026-11-01 — a\nalphanote\n"})
	m, stop := running(t, a)
	// From the end of the start-up scan, only the watcher mines.
	waitUntil(t, 10*time.Second, "the start-up scan", func() (bool, string) {
		return !m.Status(t.Context()).LastScan.IsZero(), ""
	})
	sessions, err := a.Home().SessionsDir("alice")
	if err != nil {
		t.Fatal(err)
	}
	zebra, yak := filepath.Join(sessions, "2026-12-01-zebra.md"), filepath.Join(sessions, "2026-12-01-yak.md")
	mined := func(what, word string, want int) {
		t.Helper()
		waitUntil(t, 5*time.Second, what, func() (bool, string) {
			rooms := sessionHits(t, a, word)
			ok := len(rooms) == want
			for _, r := range rooms {
				ok = ok && r == "session"
			}
			return ok, fmt.Sprintf("%q: %d hits in rooms %v, want %d in room session; watching %d dirs", word, len(rooms), rooms, want, m.Status(t.Context()).Watching)
		})
	}

	steps := []struct {
		name  string
		write func()
		word  string
		want  int
	}{
		{"a new session file in a sessions directory made after the start", func() {
			filetest.Write(t, zebra, sessionFile("zebrafish"))
		}, "zebrafish", 1},
		{"a second session file in the watched sessions directory", func() {
			filetest.Write(t, yak, sessionFile("yakherd"))
		}, "yakherd", 1},
		{"a session file appended to", func() {
			filetest.Append(t, zebra, "\n## 2026-12-01 — session zebra, later\n\n- assistant: the axolotl tank is next\n")
		}, "axolotl", 1},
		{"a session file removed", func() {
			if err := os.Remove(yak); err != nil {
				t.Fatal(err)
			}
		}, "yakherd", 0},
		{"a file in hive/agents named like an agent (no agent: not mined; the final check tells)", func() {
			filetest.Write(t, filepath.Join(a.Home().AgentsDir(), "stray"), "# Memory\n\n## 2026-11-01 — s\nstrayword\n")
		}, "strayword", 0},
		{"an agent directory moved in with its sessions inside", func() {
			outside := filepath.Join(t.TempDir(), "bob")
			filetest.Write(t, filepath.Join(outside, "memory.md"), "# Memory\n\n## 2026-11-01 — b\nbobnote\n")
			filetest.Write(t, filepath.Join(outside, "sessions", "2026-12-01-otter.md"), sessionFile("otterpond"))
			if err := os.Rename(outside, filepath.Join(a.Home().AgentsDir(), "bob")); err != nil {
				t.Skipf("rename into the home: %v", err) // another file system
			}
		}, "otterpond", 1},
	}
	for _, s := range steps {
		s.write()
		mined(s.name, s.word, s.want)
	}
	if n := searchableCount(t, a, "zebrafish"); n != 1 {
		t.Errorf("zebrafish: %d hits after the other file was removed, want 1", n)
	}
	waitConverged(t, a, 5*time.Second, "the manager's index to equal a fresh mine")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestWatcherMinesOnlyTheChangedSessionFile: a change to one imported
// conversation mines that file alone (the other conversations are not
// read again), a change to memory.md and a session file mines those two,
// and a conversation removed mines the agent's whole directory, so that
// its drawers go. Every mine goes through the manager's miner, whose
// reports say which path it was given and how many files it looked at.
func TestWatcherMinesOnlyTheChangedSessionFile(t *testing.T) {
	files := map[string]string{"alice": "# Memory\n\n## 2026-11-01 — a\nalphanote\n"}
	type mine struct {
		path  string
		files int
	}
	var mu sync.Mutex
	var mines []mine
	hook := func(ctx context.Context, path string, mineIt func(context.Context) (app.MineResult, error)) (app.MineResult, error) {
		res, err := mineIt(ctx)
		mu.Lock()
		mines = append(mines, mine{path, res.Report.Files})
		mu.Unlock()
		return res, err
	}
	a := openHomeHooked(t, hook, "[manager]\ndebounce = \"20ms\"\nscan_interval = \"1h\"\n[reflector]\ninterval = \"0s\"\n", files)
	sessions, err := a.Home().SessionsDir("alice")
	if err != nil {
		t.Fatal(err)
	}
	memory, _ := a.Home().MemoryPath("alice")
	dir := filepath.Dir(memory)
	conv := func(name string) string { return filepath.Join(sessions, "2026-12-01-"+name+".md") }
	for _, name := range []string{"zebra", "yak", "otter"} {
		filetest.Write(t, conv(name), sessionFile(name+"herd"))
	}
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := start(t, m)
	waitUntil(t, 10*time.Second, "the start-up scan", func() (bool, string) {
		return !m.Status(t.Context()).LastScan.IsZero() && searchableCount(t, a, "otterherd") == 1, ""
	})
	steps := []struct {
		name  string
		write func()
		word  string
		hits  int
		want  []mine
	}{
		{"one session file appended to", func() {
			filetest.Append(t, conv("zebra"), "\n## 2026-12-01 — session zebra, later\n\n- assistant: the axolotl tank is next\n")
		}, "axolotl", 1, []mine{{conv("zebra"), 1}}},
		{"memory.md and one session file changed", func() {
			filetest.Append(t, memory, "\n## 2026-11-02 — b\nbetanote\n")
			filetest.Append(t, conv("yak"), "\n## 2026-12-01 — session yak, later\n\n- user: the bison came too\n")
		}, "bison", 1, []mine{{conv("yak"), 1}, {memory, 1}}},
		{"one session file removed", func() {
			if err := os.Remove(conv("otter")); err != nil {
				t.Fatal(err)
			}
		}, "otterherd", 0, []mine{{dir, 3}}},
	}
	for _, s := range steps {
		mu.Lock()
		mines = nil
		mu.Unlock()
		s.write()
		waitUntil(t, 5*time.Second, s.name, func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			n := searchableCount(t, a, s.word)
			return n == s.hits && len(mines) >= len(s.want), fmt.Sprintf("%q: %d hits, want %d; mines %v", s.word, n, s.hits, mines)
		})
		// The debounce gathers both writes of a step into one mine; let
		// a late one show.
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		got := slices.Clone(mines)
		mu.Unlock()
		slices.SortFunc(got, func(x, y mine) int { return strings.Compare(x.path, y.path) })
		slices.SortFunc(s.want, func(x, y mine) int { return strings.Compare(x.path, y.path) })
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: mined %v, want %v", s.name, got, s.want)
		}
	}
	waitConverged(t, a, 5*time.Second, "the manager's index to equal a fresh mine")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
