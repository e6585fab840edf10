// Package e2e drives the hivemem dashboard in a real headless browser:
// Debian's chromium through playwright-core (both installed by
// scripts/ci-web.sh), against internal/web serving a demo home.
//
// TestDashboardBrowser skips with a message saying how to install them
// when they are missing, and fails instead when CI=true. With HIVEMEM_TEST_SCREENS set
// (a directory, from the repository's root) the browser test also saves
// the screenshots of docs/screens:
//
//	HIVEMEM_TEST_SCREENS=docs/screens bash scripts/ci-web.sh test -run TestDashboardBrowser
//
// TestServeDemo serves the demo home for a person to look at:
//
//	HIVEMEM_DEMO_ADDR=127.0.0.1:7788 go test ./tests/e2e -run TestServeDemo -timeout 0
package e2e

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/web"
	"github.com/hivemem/hivemem/internal/web/webtest"
)

// prerequisites returns the chromium and node binaries, or what is missing.
func prerequisites() (chromium, node string, missing []string) {
	chromium = os.Getenv("HIVEMEM_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, "chromium at "+chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "tests/e2e/node_modules/playwright-core")
	}
	return chromium, node, missing
}

// serve starts the dashboard over a on a loopback port, guarded like
// `hivemem run` guards it.
func serve(t *testing.T, a *app.App, token string) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	g := httpguard.Config{Addr: srv.Listener.Addr().String(), Token: token}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Deps{App: a, Guard: &g, Logger: testLogger(t), PollInterval: 200 * time.Millisecond, Version: "e2e",
		ManagerStatus: demoManager(a, time.Now())})
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close) // runs first: ends the event streams so Close does not wait on them
	return srv.URL
}

// demoManager is a running manager's status for the overview's Manager
// panel: the app's status of the demo home under a runtime such as a
// manager that started three hours before reports.
func demoManager(a *app.App, start time.Time) func(context.Context) app.ManagerStatus {
	return func(ctx context.Context) app.ManagerStatus {
		now := time.Now()
		return a.ManagerStatus(ctx, app.Runtime{
			PID: os.Getpid(), Started: start.Add(-3 * time.Hour), Version: "e2e", HTTP: "127.0.0.1:7788",
			UptimeSeconds: now.Sub(start.Add(-3 * time.Hour)).Seconds(), Watching: 6,
			MineLagSeconds: 0.8412345, LastMineLag: start.Add(-2 * time.Minute),
			LastScan: start.Add(-time.Minute), NextScan: start.Add(4 * time.Minute),
			LastPass: start.Add(-20 * time.Minute), NextPass: start.Add(10 * time.Minute),
			Problems: []app.Problem{},
		})
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestDashboardBrowser(t *testing.T) {
	chromium, node, missing := prerequisites()
	if len(missing) > 0 {
		msg := "browser tests need " + strings.Join(missing, ", ") + ": run `bash scripts/ci-web.sh` (Debian's chromium and playwright-core)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("browser tests skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	dir := t.TempDir()
	a, err := webtest.Open(ctx, filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	coderPath, _ := a.Home().MemoryPath("coder")
	coderBefore, err := os.ReadFile(coderPath)
	if err != nil {
		t.Fatal(err)
	}
	const token = "e2e-token-5f1c9a7d3b"
	url := serve(t, a, "")
	tokenURL := serve(t, a, token)

	artifacts := os.Getenv("HIVEMEM_ARTIFACTS")
	if artifacts == "" {
		artifacts = "artifacts"
	}
	artifacts, err = filepath.Abs(artifacts)
	if err != nil {
		t.Fatal(err)
	}
	// HIVEMEM_TEST_SCREENS=docs/screens (from the repository's root) asks for
	// the documentation's screenshots of the overview, an agent, search
	// and events.
	screens := os.Getenv("HIVEMEM_TEST_SCREENS")
	if screens != "" && !filepath.IsAbs(screens) {
		screens = filepath.Join("..", "..", screens)
	}
	if screens != "" {
		if screens, err = filepath.Abs(screens); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, node, "dashboard.mjs")
	cmd.Env = append(os.Environ(),
		"HIVEMEM_URL="+url, "HIVEMEM_TOKEN_URL="+tokenURL, "HIVEMEM_TOKEN="+token,
		"HIVEMEM_CHROMIUM="+chromium, "HIVEMEM_ARTIFACTS="+artifacts, "HIVEMEM_TEST_SCREENS="+screens)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	t.Logf("playwright (screenshots in %s):\n%s", artifacts, out.String())
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}

	// What the browser did, checked on disk.
	after, err := os.ReadFile(coderPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, coderBefore) {
		t.Errorf("after condense and restore, coder's memory differs from the original (%d → %d bytes)", len(coderBefore), len(after))
	}
	evs, err := eventlog.Open(a.Home().LogPath()).Read(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		if ev.Agent == "coder" {
			seen[ev.Kind] = true
		}
	}
	if !seen["condense"] || !seen["restore"] {
		t.Errorf("event log lacks the coder condense/restore the browser made: %v", seen)
	}
	raw, err := os.ReadFile(a.Home().ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(a.Home().ConfigPath())
	if err != nil {
		t.Fatalf("config.toml after the settings page saved it: %v", err)
	}
	if cfg.Reflector.RecentKeep != 5 || cfg.Reflector.Interval.Duration != 45*time.Minute {
		t.Errorf("settings not saved as set: %+v", cfg.Reflector)
	}
	for _, keep := range []string{"# hivemem demo home", `provider = "none" # lexical-only`, "# condense above half of a 48 KiB budget", "recent_keep = 5 # newest sections kept verbatim"} {
		if !strings.Contains(string(raw), keep) {
			t.Errorf("config.toml lost %q:\n%s", keep, raw)
		}
	}
	var doc struct {
		Embedder struct{ Provider string }
		Search   struct{ Results int }
	}
	if _, err := toml.Decode(string(raw), &doc); err != nil {
		t.Errorf("config.toml does not parse: %v", err)
	}
	if doc.Embedder.Provider != "none" || doc.Search.Results != 8 {
		t.Errorf("saving the reflector settings changed other tables: %+v", doc)
	}
}

// TestServeDemo serves the demo home until interrupted, for a person to
// try the dashboard; it runs only when HIVEMEM_DEMO_ADDR is set.
func TestServeDemo(t *testing.T) {
	addr := os.Getenv("HIVEMEM_DEMO_ADDR")
	if addr == "" {
		t.Skip("set HIVEMEM_DEMO_ADDR=127.0.0.1:7788 to serve the demo home")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a, err := webtest.Open(ctx, filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	g := httpguard.Config{Addr: addr, Token: os.Getenv("HIVEMEM_DEMO_TOKEN")}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Deps{App: a, Guard: &g, Logger: slog.Default(), Version: "demo", ManagerStatus: demoManager(a, time.Now())})
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		h.Close()
		_ = srv.Close()
	}()
	t.Logf("serving the demo home %s at http://%s/", a.Home().Root, addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		t.Fatal(err)
	}
}
