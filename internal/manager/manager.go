// Package manager is `hivemem run`, the always-on memory manager: it keeps
// the palace in step with the agents' memory files and keeps those files
// bounded, for as long as it runs.
//
// It watches hive/agents/*/memory.md (fsnotify, with a watch per agent
// directory added as agents appear) and mines a changed file once its burst
// of writes settles; a periodic scan catches anything the watcher missed.
// It runs the reflector on its schedule, serves a small HTTP API (and
// whatever the caller mounts: MCP, the web UI) behind httpguard, and is the
// one writer to the palace while it runs: every mine takes the palace write
// lock (package writelock), which CLI writers wait on.
//
// Failures stay local: an agent whose file cannot be mined backs off
// exponentially while the others go on; a missing or broken model leaves
// search lexical-only; errors show in the log and in Status.
package manager

import (
	"context"
	"errors"
	"fmt"
	backoffpkg "github.com/hivemem/hivemem/internal/backoff"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/writelock"
)

// Options configures a Manager.
type Options struct {
	// App is the open home. Required. The manager uses it for its whole
	// run and closes nothing of it; it may replace App.Palace (and
	// App.Embedder) with a lexical-only palace when the local model fails
	// to load, before anything is mounted.
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
	// Logger receives the manager's log; nil uses App.Log.
	Logger *slog.Logger
	// Version is recorded in the pid file and the status.
	Version string
	// ShutdownGrace is how long an in-flight mine may go on after shutdown
	// begins before it is cancelled (default 3 s). A cancelled mine rolls
	// back; the next start catches up.
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

// MineBackoff is the wait after n consecutive mining failures.
func MineBackoff(n int) time.Duration { return backoff(MineBackoffMin, n) }

// backoff doubles first for each failure after the first, up to
// MineBackoffMax.
func backoff(first time.Duration, n int) time.Duration {
	return backoffpkg.Doubling(first, MineBackoffMax, n)
}

// Manager is one running `hivemem run`.
type Manager struct {
	app   *app.App
	opts  Options
	log   *slog.Logger
	lock  *writelock.Lock
	refl  *reflector.Reflector
	claim *Claim
	// mineFn mines one path; nil mines through App.Palace. Tests set it to
	// inject failures into the real palace.
	mineFn func(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error)
	// backoffMin is the first mining backoff (MineBackoffMin; tests
	// shorten it).
	backoffMin time.Duration

	reloadMu sync.Mutex // one reload at a time (the loop's, ReloadConfig's)
	cfgMu    sync.RWMutex
	cfg      config.Config
	cfgErr   error // of the last reload, nil when it loaded

	reloadCh   chan struct{} // Reload requests
	cfgChanged chan struct{} // tells the reflector loop to re-read its interval
	retryCh    chan retry    // the worker asks the loop to retry an agent later
	queue      workQueue
	condensed  app.CondensedIndex

	mu       sync.Mutex      // guards everything below
	workCtx  context.Context // set by Run: ends ShutdownGrace after shutdown starts
	agents   map[string]*agentState
	watched  map[string]bool
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
	problems   []Problem
	addr       string
	onShutdown []func()
}

// agentState is the manager's mining record of one agent.
type agentState struct {
	failures    int
	nextAttempt time.Time
	lastError   string
	lastFailure time.Time
	skipped     string
}

type retry struct {
	agent string
	at    time.Time
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
		lg = opts.App.Log
	}
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	m := &Manager{
		app: opts.App, opts: opts, log: lg, claim: opts.Claim, cfg: opts.App.Config,
		lock:       opts.App.Lock,
		reloadCh:   make(chan struct{}, 1),
		cfgChanged: make(chan struct{}, 1),
		retryCh:    make(chan retry, 64),
		queue:      workQueue{agents: map[string]time.Time{}, wake: make(chan struct{}, 1)},
		agents:     map[string]*agentState{},
		watched:    map[string]bool{},
		backoffMin: MineBackoffMin,
	}
	// The app's reflector reads the manager's live settings and mines
	// through the manager (see swapMiner).
	m.refl = m.app.Reflector
	m.app.UseSettings(m.Config)
	m.app.UseReflectorMiner(swapMiner{m, writelock.LockedMiner(m.lock, palaceMiner{m}, nil)})
	return m, nil
}

// App is the open home the manager serves.
func (m *Manager) App() *app.App { return m.app }

// Config is the live configuration: config.toml as of the last reload.
func (m *Manager) Config() config.Config {
	m.cfgMu.RLock()
	defer m.cfgMu.RUnlock()
	return m.cfg
}

// Addr is the address the HTTP server listens on ("" before Run has
// started it, or when HTTP is off).
func (m *Manager) Addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

// ConfigError is the error of the last reload of config.toml, nil when
// it loaded: while it is set, the previous settings are in force.
func (m *Manager) ConfigError() error {
	m.cfgMu.RLock()
	defer m.cfgMu.RUnlock()
	return m.cfgErr
}

// ReloadConfig re-reads config.toml now, as Reload does, and returns when
// the new settings are in force, with the error of the read (the previous
// settings then stay). The web settings handler calls it after saving, so
// that its answer and what follows see the saved values. It works before
// Run too.
func (m *Manager) ReloadConfig() error { return m.reload() }

// Reload asks the running manager to re-read config.toml (what SIGHUP
// does). It does not wait for the reload.
func (m *Manager) Reload() {
	select {
	case m.reloadCh <- struct{}{}:
	default:
	}
}

// OnShutdown registers fn to run when shutdown begins, before the HTTP
// server stops: mounted handlers with long-lived streams close them here.
func (m *Manager) OnShutdown(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onShutdown = append(m.onShutdown, fn)
}

// palaceMiner mines through the manager's current palace (or the test
// hook), without the write lock.
type palaceMiner struct{ m *Manager }

func (pm palaceMiner) Mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	if pm.m.mineFn != nil {
		return pm.m.mineFn(ctx, path, opts)
	}
	return pm.m.app.Palace.Mine(ctx, path, opts)
}

// swapMiner is the reflector's miner. The mine that follows a swap is an
// in-flight mine of a file that has changed, not part of the condensation:
// it goes on when its caller's context ends (a pass cancelled by the
// shutdown, a web request gone) and, while Run is up, ends only with the
// work context, after ShutdownGrace. Cancelled with the pass, it left the
// index describing the file as it was before the swap until the next
// start.
type swapMiner struct {
	m    *Manager
	next reflector.Miner
}

func (sm swapMiner) Mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	sm.m.mu.Lock()
	work := sm.m.workCtx
	sm.m.mu.Unlock()
	if work == nil {
		return sm.next.Mine(ctx, path, opts)
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(work, cancel)()
	return sm.next.Mine(mctx, path, opts)
}

// Run claims the home (unless Options.Claim did), loads the model, starts
// watching and serving, and keeps the palace up to date until ctx ends. It
// then shuts down in a few seconds: the HTTP server stops, an in-flight
// mine gets ShutdownGrace to finish, a condensation in progress is
// cancelled (which leaves its file as it was) unless it has swapped the
// file already: then the mine that follows gets the grace too. A clean shutdown returns nil.
func (m *Manager) Run(ctx context.Context) (err error) {
	if m.claim == nil {
		c, err := NewClaim(m.app.Home, m.opts.Version)
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

	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	m.mu.Lock()
	m.workCtx = workCtx
	m.mu.Unlock()
	stopWork := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { m.worker(workCtx, stopWork) })
	wg.Go(func() { m.reflectLoop(ctx, inst.Started) })
	if srv != nil {
		wg.Go(func() { srv.serve(m.log) })
	}
	m.queue.addScan()
	agents, _ := m.app.Home.Agents()
	m.log.Info("hivemem run started", "pid", inst.PID, "home", m.app.Home.Root, "agents", len(agents),
		"http", m.Addr(), "search", m.app.Palace.Mode())
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
	m.mu.Lock()
	m.workCtx = nil // mines through Reflector() after Run follow their caller's context again
	m.mu.Unlock()
	m.log.Info("hivemem run stopped")
	return loopErr
}

// warmUp loads the embedding model now, so the first mine does not pay
// for it and the process's memory use is known from the start. A local
// model that fails to load leaves the manager lexical-only rather than
// failing every mine; a remote embedder is kept (it may come back), and
// mines back off while it is down.
func (m *Manager) warmUp(ctx context.Context) {
	emb := m.app.Palace.Embedder()
	if emb == nil {
		if m.app.Embedder.Note != "" {
			m.log.Warn("search is lexical-only", "why", m.app.Embedder.Note)
		}
		return
	}
	start := time.Now()
	if _, err := emb.Embed(ctx, []string{"hivemem warm-up"}); err != nil {
		if m.app.Embedder.Provider != "minilm" {
			m.problem("embedder", err)
			m.log.Warn("embedder probe failed; mines will retry", "provider", m.app.Embedder.Provider, "err", err)
			return
		}
		cfg := m.Config()
		p, perr := palace.New(ctx, m.app.Home, m.app.Store, nil, palace.Options{
			MaxFileBytes: cfg.Palace.MaxFileBytes, RRFK: cfg.Search.RRFK, CandidatePool: cfg.Search.CandidatePool,
			VectorWeight: cfg.Search.VectorWeight, Fusion: cfg.Search.Fusion, Logger: m.log,
		})
		if perr != nil {
			m.problem("embedder", errors.Join(err, perr))
			return
		}
		m.app.Palace = p
		m.app.Embedder = app.EmbedderInfo{Provider: "none", ModelDir: m.app.Embedder.ModelDir,
			Note: "the MiniLM model failed to load (" + err.Error() + "): run `hivemem model fetch`"}
		m.problem("embedder", err)
		m.log.Warn("embedding model failed to load; search is lexical-only", "err", err)
		return
	}
	// The model's load left garbage behind; hand it back now so the
	// resident size reflects what the manager keeps.
	debug.FreeOSMemory()
	m.log.Info("embedding model loaded", "model", emb.ModelID(), "seconds", time.Since(start).Seconds())
}

// problem records a manager-level error for Status.
func (m *Manager) problem(what string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, Problem{Time: time.Now().UTC(), What: what, Error: err.Error()})
	if len(m.problems) > maxProblems {
		m.problems = append([]Problem(nil), m.problems[len(m.problems)-maxProblems:]...)
	}
}

// pend is an agent waiting to be mined: due when its writes have settled.
type pend struct{ first, due time.Time }

// loop is the manager's event loop: it owns the watcher and the pending
// set, and hands due agents and scans to the worker.
func (m *Manager) loop(ctx context.Context, w *fsnotify.Watcher) error {
	pending := map[string]pend{}
	scanT := time.NewTimer(m.scanInterval())
	defer scanT.Stop()
	m.setNextScan(time.Now().Add(m.scanInterval()))
	dueT := time.NewTimer(time.Hour)
	dueT.Stop()
	defer dueT.Stop()
	reloadT := time.NewTimer(time.Hour)
	reloadT.Stop()
	defer reloadT.Stop()
	for {
		m.armDue(dueT, pending)
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("manager: file watcher stopped")
			}
			if m.handleEvent(w, ev, pending) {
				reloadT.Reset(reloadDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("manager: file watcher stopped")
			}
			m.problem("watcher", err)
			m.log.Warn("file watcher error; scanning everything", "err", err)
			m.queue.addScan()
		case <-dueT.C:
			now := time.Now()
			for id, p := range pending {
				if !p.due.After(now) {
					m.queue.add(id, p.first)
					delete(pending, id)
				}
			}
		case r := <-m.retryCh:
			if p, ok := pending[r.agent]; !ok || p.due.After(r.at) {
				pending[r.agent] = pend{first: r.at, due: r.at}
			}
		case <-scanT.C:
			m.watchAll(w) // re-arm watches lost to a deleted and recreated directory
			m.queue.addScan()
			iv := m.scanInterval()
			scanT.Reset(iv)
			m.setNextScan(time.Now().Add(iv))
		case <-m.reloadCh:
			m.reload()
			scanT.Reset(m.scanInterval())
			m.setNextScan(time.Now().Add(m.scanInterval()))
		case <-reloadT.C:
			m.reload()
		}
		var oldest time.Time
		for _, p := range pending {
			if oldest.IsZero() || p.first.Before(oldest) {
				oldest = p.first
			}
		}
		m.mu.Lock()
		m.pendingN = len(pending)
		m.pendingSince = oldest
		m.mu.Unlock()
	}
}

func (m *Manager) scanInterval() time.Duration {
	if d := m.Config().Manager.ScanInterval.Duration; d > 0 {
		return d
	}
	return config.Default().Manager.ScanInterval.Duration
}

func (m *Manager) setNextScan(t time.Time) {
	m.mu.Lock()
	m.nextScan = t
	m.mu.Unlock()
}

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

// handleEvent routes one file system event and reports whether it asks
// for a config reload. Only three things matter: config.toml in the home,
// agent directories appearing or going in hive/agents, and memory.md in an
// agent directory. Temp files of atomic saves (".memory.md.*.tmp"), lock
// files and editors' backups are other names and are ignored; an atomic
// save shows as a create of memory.md when its temp file is renamed over it.
func (m *Manager) handleEvent(w *fsnotify.Watcher, ev fsnotify.Event, pending map[string]pend) bool {
	h := m.app.Home
	path := filepath.Clean(ev.Name)
	dir, name := filepath.Dir(path), filepath.Base(path)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched directory itself went away (an agent's, or hive/agents
		// removed and made again): forget its watch, which a renamed
		// directory would keep, so the next scan sets one on whatever is
		// there then.
		m.mu.Lock()
		gone := m.watched[path]
		delete(m.watched, path)
		m.mu.Unlock()
		if gone {
			_ = w.Remove(path)
		}
	}
	switch {
	case dir == h.Root:
		return name == "config.toml"
	case dir == h.AgentsDir():
		if home.ValidateAgentID(name) != nil {
			return false
		}
		if ev.Has(fsnotify.Create) {
			if st, err := os.Stat(path); err == nil && st.IsDir() {
				m.addWatch(w, path)
			}
		}
		m.touch(pending, name)
	case filepath.Dir(dir) == h.AgentsDir():
		id := filepath.Base(dir)
		if name != "memory.md" || home.ValidateAgentID(id) != nil {
			return false
		}
		m.log.Debug("memory file changed", "agent", id, "op", ev.Op.String())
		m.touch(pending, id)
	}
	return false
}

// watchAll watches the home (for config.toml), hive/agents (for new
// agents) and every agent directory. Watching an already watched directory
// again is skipped.
func (m *Manager) watchAll(w *fsnotify.Watcher) {
	h := m.app.Home
	m.addWatch(w, h.Root)
	m.addWatch(w, h.AgentsDir())
	for _, dir := range m.agentDirs() {
		m.addWatch(w, dir)
	}
}

func (m *Manager) addWatch(w *fsnotify.Watcher, dir string) {
	m.mu.Lock()
	done := m.watched[dir]
	m.mu.Unlock()
	if done {
		return
	}
	if err := w.Add(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.problem("watch "+dir, err)
			m.log.Warn("cannot watch directory; the periodic scan covers it", "dir", dir, "err", err)
		}
		return
	}
	m.mu.Lock()
	m.watched[dir] = true
	m.mu.Unlock()
}

// agentDirs lists the directories in hive/agents whose names are valid
// agent ids, with or without a memory file yet.
func (m *Manager) agentDirs() []string {
	h := m.app.Home
	ents, err := os.ReadDir(h.AgentsDir())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.problem("list agents", err)
		}
		return nil
	}
	var out []string
	for _, e := range ents {
		if home.IsDir(h.AgentsDir(), e) && home.ValidateAgentID(e.Name()) == nil {
			out = append(out, filepath.Join(h.AgentsDir(), e.Name()))
		}
	}
	return out
}

// reload re-reads config.toml. A file that does not load leaves the
// previous settings in force. Settings read live (reflector, scan
// interval, debounce) apply at once; the rest needs a restart, and the log
// says which.
func (m *Manager) reload() error {
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	cfg, err := config.Load(m.app.Home.ConfigPath())
	if err != nil {
		m.cfgMu.Lock()
		m.cfgErr = err
		m.cfgMu.Unlock()
		m.problem("config reload", err)
		m.log.Error("config reload failed; keeping the previous settings", "err", err)
		return err
	}
	old := m.Config()
	var restart []string
	if old.Palace != cfg.Palace {
		restart = append(restart, "palace")
	}
	if old.Embedder != cfg.Embedder {
		restart = append(restart, "embedder")
	}
	if old.Search != cfg.Search {
		restart = append(restart, "search")
	}
	if old.Manager.HTTP != cfg.Manager.HTTP || old.Manager.Token != cfg.Manager.Token {
		restart = append(restart, "manager.http/manager.token")
	}
	m.cfgMu.Lock()
	m.cfg, m.cfgErr = cfg, nil
	m.cfgMu.Unlock()
	if old.Manager.Mining != cfg.Manager.Mining {
		m.log.Info("mining switched", "on", cfg.Manager.Mining)
		if cfg.Manager.Mining {
			m.queue.addScan() // catch up with what changed while it was off
		}
	}
	select {
	case m.cfgChanged <- struct{}{}:
	default:
	}
	m.log.Info("config reloaded", "reflector_interval", cfg.Reflector.Interval.String(),
		"scan_interval", cfg.Manager.ScanInterval.String(), "debounce", cfg.Manager.Debounce.String())
	if len(restart) > 0 {
		m.log.Warn("changed settings take effect when hivemem run restarts", "sections", restart)
	}
	return nil
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

// worker does every mine the manager starts, one at a time. It stops
// between two mines once stop is closed; ctx (cancelled after the shutdown
// grace) interrupts a mine in progress.
func (m *Manager) worker(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
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
				return
			}
			m.setWorking(len(agents) - i)
			m.setMiningSince(since[id])
			m.mineAgent(ctx, id, since[id])
		}
		m.setMiningSince(time.Time{})
		m.setWorking(0)
	}
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

// scan is the safety net: every agent's file is mined (an unchanged one
// costs a hash), files of agents that vanished lose their drawers, and the
// archives are brought in step.
func (m *Manager) scan(ctx context.Context, stop <-chan struct{}) {
	if !m.Config().Manager.Mining {
		return
	}
	h := m.app.Home
	start := time.Now()
	seen := map[string]bool{}
	for _, dir := range m.agentDirs() {
		if stopped(stop) {
			return
		}
		id := filepath.Base(dir)
		seen[id] = true
		m.mineAgent(ctx, id, time.Time{})
	}
	if files, err := m.app.Store.Files(ctx, "hive/agents/"); err != nil {
		m.problem("scan", err)
	} else {
		for _, f := range files {
			id, archive, ok := h.AgentFromPath(h.Abs(f.Source))
			if ok && !archive && !seen[id] && !stopped(stop) {
				seen[id] = true
				m.mineAgent(ctx, id, time.Time{})
			}
		}
	}
	if stopped(stop) {
		return
	}
	if err := m.mineArchives(ctx); err != nil && ctx.Err() == nil {
		m.problem("scan archives", err)
		m.log.Warn("mining the archives failed; the next scan retries", "err", err)
	}
	m.mu.Lock()
	m.lastScan = time.Now().UTC()
	m.mu.Unlock()
	m.log.Debug("scan done", "agents", len(seen), "seconds", time.Since(start).Seconds())
}

func (m *Manager) mineArchives(ctx context.Context) error {
	root := m.app.Home.ArchiveRoot()
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	release, err := m.lock.Acquire(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	_, err = palaceMiner{m}.Mine(ctx, root, palace.MineOptions{})
	return err
}

// mineAgent brings one agent's drawers in step with its memory file,
// honouring the agent's backoff; since is the file's first change this
// mine catches up with (zero for a scan), for the mine lag in Status.
func (m *Manager) mineAgent(ctx context.Context, id string, since time.Time) {
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
	path, err := m.app.Home.MemoryPath(id)
	if err != nil {
		return
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// Nothing to mine; drawers of a deleted file are removed below.
		files, ferr := m.app.Store.Files(ctx, m.app.Home.Rel(path))
		if ferr == nil && len(files) == 0 {
			m.mu.Lock()
			delete(m.agents, id)
			m.mu.Unlock()
			return
		}
	}
	release, err := m.lock.Acquire(ctx, nil)
	if err != nil {
		if ctx.Err() == nil {
			m.mineFailed(id, err)
		}
		return
	}
	rep, err := palaceMiner{m}.Mine(ctx, path, palace.MineOptions{})
	release()
	if err != nil {
		if ctx.Err() == nil {
			m.mineFailed(id, err)
		}
		return
	}
	m.mined(id, rep, since)
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
func (m *Manager) mined(id string, rep palace.MineReport, since time.Time) {
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
	m.event(eventlog.Event{Type: "mine", Agent: id, Data: map[string]any{
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
		m.event(eventlog.Event{Type: "mine-failed", Agent: id, Reason: "error", Data: map[string]any{"error": err.Error()}})
	}
	m.requestRetry(id, next)
}

func (m *Manager) event(ev eventlog.Event) {
	if m.app.Events == nil {
		return
	}
	if err := m.app.Events.Append(ev); err != nil {
		m.problem("event log", err)
		m.log.Warn("cannot write the event log", "type", ev.Type, "err", err)
	}
}

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

// Status reports the manager, the index and every agent. Errors reading
// the index become problems in the report rather than a failed request.
func (m *Manager) Status(ctx context.Context) Status {
	inst := Instance{Home: m.app.Home.Root}
	if m.claim != nil {
		inst = m.claim.Instance()
	}
	s := Status{Instance: inst, Backend: m.app.Store.Backend(), SearchMode: m.app.Palace.Mode(), Embedder: m.app.Embedder,
		Mining: m.Config().Manager.Mining}
	if !inst.Started.IsZero() {
		s.UptimeSeconds = time.Since(inst.Started).Seconds()
	}
	// The manager's own state first, then the index: a scan reported done
	// (or nothing reported pending) is then always reflected in the counts.
	m.mu.Lock()
	s.HTTP = m.addr
	s.Watching = len(m.watched)
	s.Pending = m.pendingN + m.queue.len() + m.working
	s.LastScan, s.NextScan, s.LastPass, s.NextPass = m.lastScan, m.nextScan, m.lastPass, m.nextPass
	s.Problems = append([]Problem{}, m.problems...)
	s.MineLagSeconds, s.LastMineLag = m.mineLag.Seconds(), m.mineLagAt
	oldest := m.pendingSince
	for _, t := range []time.Time{m.miningSince, m.queue.oldest()} {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	m.mu.Unlock()
	if !oldest.IsZero() {
		s.UnminedAgeSeconds = max(time.Since(oldest).Seconds(), 0)
	}
	var extra []Problem
	st, err := m.app.Store.Stats(ctx)
	if err != nil {
		extra = append(extra, Problem{Time: time.Now().UTC(), What: "index stats", Error: err.Error()})
	}
	s.Index = st
	cfg := m.Config()
	agents, err := m.app.CollectAgents(ctx, cfg, st, m.condensed.Read(m.app.Home.LogPath()))
	if err != nil {
		extra = append(extra, Problem{Time: time.Now().UTC(), What: "agents", Error: err.Error()})
	}
	s.Problems = append(s.Problems, extra...)
	m.mu.Lock()
	for i := range agents {
		a := &agents[i]
		ms := m.agents[a.Agent]
		if ms == nil {
			continue
		}
		a.Skipped = ms.skipped
		if ms.failures > 0 {
			a.MiningBackoff = &app.Backoff{Failures: ms.failures, NextAttempt: ms.nextAttempt.UTC(), LastError: ms.lastError, LastFailure: ms.lastFailure}
		}
	}
	m.mu.Unlock()
	if agents == nil {
		agents = []app.AgentStatus{}
	}
	s.Agents = agents
	return s
}
