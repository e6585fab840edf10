package manager

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
	"github.com/hivemem/hivemem/internal/wiring"
)

// openHome initialises a lexical-only home with the given agent files and
// config.toml, and opens it.
func openHome(t *testing.T, configTOML string, files map[string]string) *app.App {
	t.Helper()
	return openHomeLogging(t, nil, configTOML, files)
}

// openHomeLogging is openHome with the app logging to lg (nil: the
// default).
func openHomeLogging(t *testing.T, lg *slog.Logger, configTOML string, files map[string]string) *app.App {
	t.Helper()
	return openHomeWith(t, wiring.Options{Logger: lg}, configTOML, files)
}

// openHomeHooked is openHome with hook run around every mine of the app
// (the manager's, the reflector's): tests inject failures into the real
// palace with it.
func openHomeHooked(t *testing.T, hook app.MineHook, configTOML string, files map[string]string) *app.App {
	t.Helper()
	return openHomeWith(t, wiring.Options{MineHook: hook}, configTOML, files)
}

func openHomeWith(t *testing.T, opts wiring.Options, configTOML string, files map[string]string) *app.App {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(dir, "no-model"))
	opts.Home = hometest.NewWith(t, configTOML, files).Root
	a, err := wiring.Open(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// start runs m until the test ends (or stop is called) and returns the
// listen address and a stop function that reports Run's result.
func start(t *testing.T, m *Manager) (addr string, stop func() error) {
	t.Helper()
	ready := make(chan string, 1)
	m.opts.Ready = func(a string) { ready <- a }
	return apptest.Serve(t, ready, m.Run)
}

// running runs a manager without HTTP on a until the test ends (or stop).
func running(t *testing.T, a *app.App) (*Manager, func() error) {
	t.Helper()
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := start(t, m)
	return m, stop
}

func waitUntil(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", within, what, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func agentStatus(s app.ManagerStatus, agent string) app.AgentStatus {
	for _, a := range s.Agents {
		if a.Agent == agent {
			return a
		}
	}
	return app.AgentStatus{}
}

const goodFile = "# Memory — good (good)\n\n## 2026-11-01 — a note\nthe good agent's note\n"

func TestMineBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 0}, {1, 5 * time.Second}, {2, 10 * time.Second}, {3, 20 * time.Second},
		{7, 5 * time.Minute}, {100, 5 * time.Minute},
	}
	for _, tc := range tests {
		if got := MineBackoff(tc.failures); got != tc.want {
			t.Errorf("MineBackoff(%d) = %s, want %s", tc.failures, got, tc.want)
		}
	}
}

// TestFailingAgentBacksOffWhileOthersGoOn injects a write failure (what a
// full disk or a read-only palace gives) into the real palace for one
// agent, and puts a binary file in another: the good agent is mined, the
// broken file is reported as skipped, the failing one backs off with its
// error in the status, and is mined once the failure clears.
func TestFailingAgentBacksOffWhileOthersGoOn(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	hook := func(ctx context.Context, path string, mine func(context.Context) (app.MineResult, error)) (app.MineResult, error) {
		if failing.Load() && strings.Contains(path, filepath.Join("agents", "bad")) {
			return app.MineResult{}, errors.New("database or disk is full (injected)")
		}
		return mine(ctx)
	}
	a := openHomeHooked(t, hook, "", map[string]string{
		"good":   goodFile,
		"bad":    "# Memory — bad (bad)\n\n## 2026-11-01 — x\nthe bad agent's note\n",
		"broken": "# Memory\x00 binary\x00",
	})
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	m.backoffMin = 50 * time.Millisecond
	_, stop := start(t, m)

	waitUntil(t, 10*time.Second, "the failure to show", func() (bool, string) {
		s := m.Status(t.Context())
		bad, good, broken := agentStatus(s, "bad"), agentStatus(s, "good"), agentStatus(s, "broken")
		ok := bad.MiningBackoff != nil && bad.MiningBackoff.Failures >= 2 &&
			strings.Contains(bad.MiningBackoff.LastError, "disk is full") &&
			good.Drawers == 1 && strings.Contains(broken.Skipped, "binary")
		return ok, fmt.Sprintf("bad %+v, good %+v, broken %+v", bad.MiningBackoff, good, broken)
	})
	failing.Store(false)
	waitUntil(t, 10*time.Second, "the failing agent to recover", func() (bool, string) {
		bad := agentStatus(m.Status(t.Context()), "bad")
		return bad.MiningBackoff == nil && bad.Drawers == 1, fmt.Sprintf("%+v", bad)
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	evs, err := eventlog.Open(a.Home().LogPath()).Read(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed, mined int
	for _, ev := range evs {
		switch {
		case ev.Kind == "mine-failed" && ev.Agent == "bad":
			failed++
		case ev.Kind == "mine" && ev.Agent == "bad":
			mined++
		}
	}
	if failed != 1 || mined != 1 {
		t.Errorf("event log has %d mine-failed and %d mine events for bad, want one each (one per failure streak)", failed, mined)
	}
}

func do(t *testing.T, method, url string) (int, string) {
	t.Helper()
	code, body := apptest.Do(t, apptest.Request{Method: method, URL: url})
	return code, string(body)
}

func TestHTTPRoutes(t *testing.T) {
	mounted := func(m *Manager, g httpguard.Config) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "mounted %s %s token=%v", r.Method, r.URL.Path, g.Token != "")
		}), nil
	}
	type check struct {
		method, path string
		code         int
		want         string
	}
	tests := []struct {
		name   string
		config string
		http   string
		mount  func(*Manager, httpguard.Config) (http.Handler, error)
		runErr string
		checks []check
	}{
		{name: "without a handler the server answers /healthz only", http: "127.0.0.1:0", checks: []check{
			{path: "/healthz", code: 200, want: `"ok": true`},
			{path: "/api/v1/status", code: 404, want: "not found"},
			{path: "/api/v1/manager", code: 404, want: "not found"},
		}},
		{name: "the handler serves everything but GET /healthz", http: "127.0.0.1:0", mount: mounted, checks: []check{
			{path: "/api/v1/status", code: 200, want: "mounted GET /api/v1/status"},
			{path: "/api/v1/manager", code: 200, want: "mounted GET /api/v1/manager"},
			{path: "/", code: 200, want: "mounted GET /"},
			{method: "POST", path: "/healthz", code: 200, want: "mounted POST /healthz"},
			{path: "/healthz", code: 200, want: `"ok": true`},
		}},
		{name: "the handler gets the guard with the token", http: "127.0.0.1:0", mount: mounted,
			config: "[manager]\ntoken = \"s3cret-manager-token\"\n", checks: []check{
				{path: "/api/v1/manager", code: 200, want: "token=true"},
				{path: "/healthz", code: 200, want: `"ok": true`},
			}},
		{name: "non-loopback without a token is refused", http: "0.0.0.0:0", runErr: "needs a token"},
		{name: "a handler error stops the start", http: "127.0.0.1:0", runErr: "build the HTTP handler: no web",
			mount: func(*Manager, httpguard.Config) (http.Handler, error) { return nil, errors.New("no web") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := openHome(t, tc.config, map[string]string{"good": goodFile})
			m, err := New(Options{App: a, HTTP: tc.http, Handler: tc.mount})
			if err != nil {
				t.Fatal(err)
			}
			if tc.runErr != "" {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				err := m.Run(ctx)
				if err == nil || !strings.Contains(err.Error(), tc.runErr) {
					t.Fatalf("Run = %v, want an error with %q", err, tc.runErr)
				}
				return
			}
			addr, _ := start(t, m)
			for _, c := range tc.checks {
				method := cmp.Or(c.method, http.MethodGet)
				code, body := do(t, method, "http://"+addr+c.path)
				if code != c.code || !strings.Contains(body, c.want) {
					t.Errorf("%s %s: %d %q, want %d with %q", method, c.path, code, body[:min(len(body), 200)], c.code, c.want)
				}
			}
		})
	}
}

func TestReloadKeepsTheLastGoodSettings(t *testing.T) {
	a := openHome(t, "", map[string]string{"good": goodFile})
	m, stop := running(t, a)
	cfgPath := a.Home().ConfigPath()
	steps := []struct {
		name, toml   string
		wantDebounce time.Duration
		wantProblem  bool
	}{
		{"a saved config.toml applies", "[manager]\ndebounce = \"50ms\"\n", 50 * time.Millisecond, false},
		{"a broken one is refused", "[manager\ndebounce = 1\n", 50 * time.Millisecond, true},
		// Problems are a history: the failed reload stays listed.
		{"a fixed one applies again", "[manager]\ndebounce = \"70ms\"\n", 70 * time.Millisecond, true},
	}
	for _, st := range steps {
		if err := os.WriteFile(cfgPath, []byte(st.toml), 0o644); err != nil {
			t.Fatal(err)
		}
		m.Reload() // the watcher reloads too; either way it must converge
		waitUntil(t, 5*time.Second, st.name, func() (bool, string) {
			s := m.Status(t.Context())
			hasProblem := false
			for _, p := range s.Problems {
				hasProblem = hasProblem || p.What == "config reload"
			}
			got := m.Config().Manager.Debounce.Duration
			return got == st.wantDebounce && hasProblem == st.wantProblem, fmt.Sprintf("debounce %s, problem %v", got, hasProblem)
		})
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestClaim(t *testing.T) {
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	// A pid file left by a killed manager (no lock held) is stale.
	pidPath := filepath.Join(h.PalaceDir(), PIDFile)
	if err := os.WriteFile(pidPath, []byte(`{"pid": 999999, "home": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, running, err := Running(h); err != nil || running {
		t.Fatalf("Running with a stale pid file = %v, %v; want not running", running, err)
	}
	c, err := NewClaim(h, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetHTTP("127.0.0.1:1234"); err != nil {
		t.Fatal(err)
	}
	inst, running, err := Running(h)
	if err != nil || !running || inst.PID != os.Getpid() || inst.HTTP != "127.0.0.1:1234" {
		t.Fatalf("Running = %+v, %v, %v", inst, running, err)
	}
	var onDisk Instance
	data, _ := os.ReadFile(pidPath)
	if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.PID != os.Getpid() {
		t.Fatalf("pid file %s not overwritten: %v", data, err)
	}
	_, err = NewClaim(h, "test")
	if !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second claim = %v, want ErrRunning naming pid %d", err, os.Getpid())
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if _, err := os.Stat(pidPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file left after release: %v", err)
	}
	if _, running, _ := Running(h); running {
		t.Error("Running after release")
	}
}

// TestMiningSwitch: manager.mining = false stops mining and condensing
// (search still answers from what is there); switching it on, live,
// catches up with a scan.
func TestMiningSwitch(t *testing.T) {
	var big strings.Builder
	big.WriteString("# Memory — big (big)\n\n")
	for i := range 60 {
		fmt.Fprintf(&big, "## 2026-10-%02d — entry %d\n%s\n\n", 1+i%28, i, strings.Repeat("a line about the build pipeline and its flaky cache. ", 8))
	}
	var mines atomic.Int32
	hook := func(ctx context.Context, path string, mine func(context.Context) (app.MineResult, error)) (app.MineResult, error) {
		mines.Add(1)
		return mine(ctx)
	}
	a := openHomeHooked(t, hook, "[manager]\nmining = false\n", map[string]string{"good": goodFile, "big": big.String()})
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := start(t, m)
	if s := m.Status(t.Context()); s.Mining {
		t.Fatal("status says mining is on")
	}
	m.scan(t.Context(), nil)
	m.pass(t.Context())
	if n := mines.Load(); n != 0 {
		t.Errorf("%d mines with mining off", n)
	}
	if evs, _ := eventlog.Open(a.Home().LogPath()).Read(0, func(ev eventlog.Event) bool { return ev.Kind == "condense" }); len(evs) != 0 {
		t.Errorf("condensed with mining off: %+v", evs)
	}

	if err := os.WriteFile(a.Home().ConfigPath(), []byte("[manager]\nmining = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Reload()
	waitUntil(t, 10*time.Second, "the catch-up mine", func() (bool, string) {
		s := m.Status(t.Context())
		good := agentStatus(s, "good")
		return s.Mining && good.Drawers == 1, fmt.Sprintf("mining %v, good %+v", s.Mining, good)
	})
	m.pass(t.Context())
	if evs, _ := eventlog.Open(a.Home().LogPath()).Read(0, func(ev eventlog.Event) bool { return ev.Kind == "condense" && ev.Agent == "big" }); len(evs) != 1 {
		t.Errorf("condense events with mining on = %+v, want one", evs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownDuringTheMineAfterASwapKeepsTheIndexTrue: the shutdown
// comes while the reflector mines the file it has just swapped. The file
// has changed, so that mine gets the shutdown grace like any in-flight
// mine, and the index the manager leaves behind is what a reindex gives.
func TestShutdownDuringTheMineAfterASwapKeepsTheIndexTrue(t *testing.T) {
	// No mine by the watcher or the scan: only the reflector's.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var fired atomic.Bool
	var mem string
	hook := func(mctx context.Context, path string, mine func(context.Context) (app.MineResult, error)) (app.MineResult, error) {
		if data, _ := os.ReadFile(path); path == mem && strings.Contains(string(data), "Condensed history") && !fired.Swap(true) {
			cancel() // SIGTERM, as the mine after the swap starts
			time.Sleep(50 * time.Millisecond)
		}
		return mine(mctx)
	}
	a := openHomeHooked(t, hook, "[reflector]\ninterval = \"100ms\"\nmin_bytes = 1\nbudget_bytes = 2000\nrecent_keep = 2\nword_budget = 40\n"+
		"[manager]\ndebounce = \"1m\"\nscan_interval = \"1h\"\n", map[string]string{"alice": goodFile})
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	mem, err = a.Home().MemoryPath("alice")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitUntil(t, 10*time.Second, "the first scan", func() (bool, string) {
		s := agentStatus(m.Status(t.Context()), "alice")
		return s.Drawers == 1, fmt.Sprintf("%+v", s)
	})
	f, err := os.OpenFile(mem, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		fmt.Fprintf(f, "## 2026-11-%02d — note %d\nnote%dword %s\n", i+2, i, i, strings.Repeat("filler text for the budget ", 20))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		evs, _ := eventlog.Open(a.Home().LogPath()).Read(0, nil)
		t.Fatalf("no condensation and shutdown within 20s: %+v; events %+v", agentStatus(m.Status(t.Context()), "alice"), evs)
	}
	if !fired.Load() {
		t.Fatal("the reflector did not mine a condensed file")
	}
	got := indexLines(t, apptest.Index(t, a))
	fresh, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	fp, err := palace.New(t.Context(), a.Home(), fresh, nil, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fp.Mine(t.Context(), a.Home().HiveDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := indexLines(t, fresh); !slices.Equal(got, want) {
		t.Errorf("the index left by the manager has %d entries, a fresh reindex %d:\n%s\nwant\n%s",
			len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// indexLines is an index as one sorted line per drawer and file record.
func indexLines(t *testing.T, st store.Store) []string {
	t.Helper()
	ds, err := st.List(t.Context(), store.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := st.Files(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("drawer %s %s:%d-%d [%s/%s] %.60q", d.ID, d.Source, d.LineStart, d.LineEnd, d.Wing, d.Room, d.Text))
	}
	for _, f := range fs {
		out = append(out, "file "+f.Source+" "+f.Hash)
	}
	slices.Sort(out)
	return out
}

// TestFilesMinedAfterTheModelFailsToLoadCarryTheHomesOrigin: when the
// model fails to load at warm-up the manager goes on lexical-only, and the
// files it mines then still carry this home's id, as every mine does (a
// shared palace removes only the files of their own origin).
func TestFilesMinedAfterTheModelFailsToLoadCarryTheHomesOrigin(t *testing.T) {
	cfg := fmt.Sprintf("[embedder]\nprovider = \"minilm\"\nmodel_dir = %q\n", hometest.BrokenModelDir(t))
	root := hometest.NewWith(t, cfg, map[string]string{"good": goodFile}).Root
	a, err := wiring.Open(t.Context(), wiring.Options{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	origin, err := a.Home().ID()
	if err != nil || origin == "" {
		t.Fatalf("home id %q, %v", origin, err)
	}
	m, _ := running(t, a)
	idx := apptest.Index(t, a)
	waitUntil(t, time.Minute, "the good agent's file to be mined", func() (bool, string) {
		fs, err := idx.Files(t.Context(), "")
		if err != nil {
			return false, err.Error()
		}
		return len(fs) > 0, fmt.Sprintf("%d files mined", len(fs))
	})
	if got := m.App().EmbedderInfo().Provider; got != "none" {
		t.Fatalf("embedder after a failed load is %q, want none (lexical-only)", got)
	}
	fs, err := idx.Files(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Origin != origin {
			t.Errorf("%s mined with origin %q, want the home's %q", f.Source, f.Origin, origin)
		}
	}
}
