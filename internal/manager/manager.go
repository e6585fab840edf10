// Package manager is `hivemem run`, the always-on memory manager: it keeps
// the palace in step with the agents' memory files and keeps those files
// bounded, for as long as it runs.
//
// It watches hive/agents/*/memory.md and the imported conversations in
// hive/agents/*/sessions/ (fsnotify, with a watch per agent directory and
// per sessions directory added as they appear) and mines a changed file
// once its burst of writes settles; a periodic scan catches anything the
// watcher missed.
// It runs the reflector on its schedule, serves HTTP (its own public
// /healthz, and whatever handler the caller gives it: MCP, the web UI and
// the JSON API, each applying httpguard), and is the one writer to the
// palace while it runs: every mine, an App operation, takes the palace
// write lock, which CLI writers wait on.
//
// The files follow its concerns: watch.go (fsnotify, the event loop and
// the periodic scan), queue.go (debounce and the work queue), mine.go (the
// mining worker and its backoff), reflect.go (the reflector schedule),
// config.go (live reload), status.go, http.go and instance.go (the pid
// file claim).
//
// Failures stay local: an agent whose file cannot be mined backs off
// exponentially while the others go on; a missing or broken model leaves
// search lexical-only; errors show in the log and in Status.
package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/httpguard"
)

// Options configures a Manager.
type Options struct {
	// App is the open home. Required. The manager uses it for its whole
	// run and closes nothing of it; its settings are the manager's live
	// configuration (App.ReloadSettings), and a local model that fails to
	// load makes it lexical-only (App.LoadEmbedder) before anything is
	// mounted.
	App *app.App
	// Claim makes this process the home's one manager; nil makes Run claim
	// the home itself (and release it when it returns).
	Claim *Claim
	// HTTP is the listen address; "" uses manager.http from the config,
	// "off" serves nothing. A non-loopback address needs manager.token.
	HTTP string
	// Handler, when set, builds what the HTTP server serves besides its
	// own public GET /healthz: the composition root puts the MCP endpoint,
	// the web UI and the JSON API (/api/v1, the manager's status at
	// /api/v1/manager included) behind it. The manager does not wrap it:
	// guard is the configuration the handler must apply itself
	// (web.Deps.Guard, mcpserver.HTTPHandler). Without it the server
	// answers /healthz only.
	Handler func(m *Manager, guard httpguard.Config) (http.Handler, error)
	// Logger receives the manager's log; nil uses the app's (App.Logger).
	Logger *slog.Logger
	// Version is recorded in the pid file and the status.
	Version string
	// ShutdownGrace is how long mining may go on after shutdown begins (the
	// mine in flight, then the changes still queued or settling) before it
	// is cancelled (default 3 s). A cancelled mine rolls back; the next
	// start catches up.
	ShutdownGrace time.Duration
	// Ready, when set, is called once the manager watches and serves, with
	// the address it listens on ("" when HTTP is off).
	Ready func(addr string)
}

// Timing constants. The debounce itself is manager.debounce, read live.
const (
	// MaxDelay bounds how long a file that keeps changing waits to be
	// mined after its first change: a busy agent's file is still searchable
	// within about two seconds.
	MaxDelay = 1500 * time.Millisecond
	// MineBackoffMin and MineBackoffMax bound the wait before mining a
	// file again after failures: 5 s, doubling, up to 5 min.
	MineBackoffMin = 5 * time.Second
	MineBackoffMax = 5 * time.Minute
	// firstPassMax caps the wait before the first reflector pass, so a
	// file that outgrew its budget while no manager ran is condensed soon
	// after a start, not one full interval later.
	firstPassMax = time.Minute
	// reloadDebounce lets a burst of writes to config.toml settle.
	reloadDebounce = 200 * time.Millisecond
	maxProblems    = 20
)

// Manager is one running `hivemem run`.
type Manager struct {
	app   *app.App
	home  home.Home
	opts  Options
	log   *slog.Logger
	claim *Claim
	// backoffMin is the first mining backoff (MineBackoffMin; tests
	// shorten it).
	backoffMin time.Duration

	reloadMu sync.Mutex    // one reload at a time (the loop's, ReloadConfig's)
	seen     config.Config // the settings the manager last acted on (under reloadMu)

	reloadCh   chan struct{} // Reload requests
	cfgChanged chan struct{} // tells the reflector loop to re-read its interval
	retryCh    chan retry    // the worker asks the loop to retry an agent later
	queue      workQueue

	mu      sync.Mutex // guards everything below
	agents  map[string]*agentState
	watched map[string]bool
	// whole is the agents whose next mine covers their whole directory
	// (memory.md and sessions/): a session file went (removed or renamed),
	// or the sessions directory or the agent directory itself changed.
	// files is, for the others, the files that changed (memory.md, session
	// files), which their next mine covers alone; an agent with neither
	// mark mines its memory.md.
	whole    map[string]bool
	files    map[string]map[string]bool
	pendingN int
	working  int // agents (or a scan) taken by the worker and not done yet
	// pendingSince and miningSince are the first unmined change of the
	// agents waiting out their debounce and of the one being mined; with
	// the queue's oldest, they give the age of the oldest unmined change.
	pendingSince time.Time
	miningSince  time.Time
	// mineLag is the last mine's lag, from the first change it caught up
	// with to the change being searchable; mineLagAt is when it finished.
	mineLag    time.Duration
	mineLagAt  time.Time
	lastScan   time.Time
	nextScan   time.Time
	lastPass   time.Time
	nextPass   time.Time
	problems   []app.Problem
	addr       string
	onShutdown []func()
}

// New prepares a manager; Run starts it.
func New(opts Options) (*Manager, error) {
	if opts.App == nil {
		return nil, errors.New("manager: no app (open a hivemem home first)")
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 3 * time.Second
	}
	lg := opts.Logger
	if lg == nil {
		lg = opts.App.Logger()
	}
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	m := &Manager{
		app: opts.App, home: opts.App.Home(), opts: opts, log: lg, claim: opts.Claim, seen: opts.App.Settings(),
		reloadCh:   make(chan struct{}, 1),
		cfgChanged: make(chan struct{}, 1),
		retryCh:    make(chan retry, 64),
		queue:      workQueue{agents: map[string]time.Time{}, wake: make(chan struct{}, 1)},
		agents:     map[string]*agentState{},
		watched:    map[string]bool{},
		whole:      map[string]bool{},
		files:      map[string]map[string]bool{},
		backoffMin: MineBackoffMin,
	}
	return m, nil
}

// App is the open home the manager serves.
func (m *Manager) App() *app.App { return m.app }

// Addr is the address the HTTP server listens on ("" before Run has
// started it, or when HTTP is off).
func (m *Manager) Addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

// OnShutdown registers fn to run when shutdown begins, before the HTTP
// server stops: mounted handlers with long-lived streams close them here.
func (m *Manager) OnShutdown(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onShutdown = append(m.onShutdown, fn)
}

// Run claims the home (unless Options.Claim did), loads the model, starts
// watching and serving, and keeps the palace up to date until ctx ends. It
// then shuts down in a few seconds: the HTTP server stops, an in-flight
// mine and the mines of changes still waiting out their debounce get
// ShutdownGrace to finish, a condensation in progress is cancelled (which
// leaves its file as it was) unless it has swapped the file already: then
// the mine that follows gets the grace too. A clean shutdown returns nil.
func (m *Manager) Run(ctx context.Context) (err error) {
	if m.claim == nil {
		c, err := NewClaim(m.home, m.opts.Version)
		if err != nil {
			return err
		}
		m.claim = c
		defer func() {
			if rerr := c.Release(); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	inst := m.claim.Instance()
	m.removeOldLocks(ctx)
	m.warmUp(ctx)

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("manager: start file watcher: %w", err)
	}
	defer w.Close()
	m.watchAll(w)

	srv, err := m.startHTTP()
	if err != nil {
		return err
	}

	// workCtx ends ShutdownGrace after shutdown starts: it bounds the
	// worker's mines, and the mine after a swap, which outlives the pass or
	// the request that condensed (app.KeepSwapMines).
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stopWork := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { m.worker(workCtx, stopWork) })
	wg.Go(func() { m.reflectLoop(app.KeepSwapMines(ctx, workCtx), inst.Started) })
	if srv != nil {
		srv.keepSwapMines(workCtx)
		wg.Go(func() { srv.serve(m.log) })
	}
	m.queue.addScan()
	agents, _ := m.home.Agents()
	m.log.Info("hivemem run started", "pid", inst.PID, "home", m.home.Root, "agents", len(agents),
		"http", m.Addr(), "search", m.app.SearchMode())
	if m.opts.Ready != nil {
		m.opts.Ready(m.Addr())
	}

	loopErr := m.loop(ctx, w)

	m.log.Info("hivemem run shutting down")
	close(stopWork)
	grace := time.AfterFunc(m.opts.ShutdownGrace, cancelWork)
	defer grace.Stop()
	m.mu.Lock()
	hooks := m.onShutdown
	m.mu.Unlock()
	for _, fn := range hooks {
		fn()
	}
	if srv != nil {
		srv.shutdown(m.log)
	}
	wg.Wait()
	m.log.Info("hivemem run stopped")
	return loopErr
}

// warmUp loads the embedding model now, so the first mine does not pay
// for it and the process's memory use is known from the start. A local
// model that fails to load leaves the manager lexical-only rather than
// failing every mine; a remote embedder is kept (it may come back), and
// mines back off while it is down.
func (m *Manager) warmUp(ctx context.Context) {
	ld, err := m.app.LoadEmbedder(ctx)
	switch {
	case err != nil && ld.LexicalOnly:
		m.problem("embedder", err)
		m.log.Warn("embedding model failed to load; search is lexical-only", "err", err)
	case err != nil && ld.Provider != "minilm":
		m.problem("embedder", err)
		m.log.Warn("embedder probe failed; mines will retry", "provider", ld.Provider, "err", err)
	case err != nil:
		m.problem("embedder", err)
	case ld.Model == "":
		if ld.Note != "" {
			m.log.Warn("search is lexical-only", "why", ld.Note)
		}
	default:
		// The model's load left garbage behind; hand it back now so the
		// resident size reflects what the manager keeps.
		debug.FreeOSMemory()
		m.log.Info("embedding model loaded", "model", ld.Model, "seconds", ld.Seconds)
	}
}

// problem records a manager-level error for Status.
func (m *Manager) problem(what string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, app.Problem{Time: time.Now().UTC(), What: what, Error: err.Error()})
	if len(m.problems) > maxProblems {
		m.problems = append([]app.Problem(nil), m.problems[len(m.problems)-maxProblems:]...)
	}
}

func (m *Manager) event(ev eventlog.Event) {
	if err := m.app.AppendEvent(ev); err != nil {
		m.problem("event log", err)
		m.log.Warn("cannot write the event log", "kind", ev.Kind, "err", err)
	}
}
