// Package app is hivemem's application layer. Open, called once by the
// composition root of a process (a CLI command, `hivemem run`, `hivemem
// mcp`), builds everything a front end needs — home, config, index
// backend, embedder, palace, the one reflector, the one palace write lock
// and the event log — and the App it returns offers the product's
// operations (search, wake-up, remember, pin, mine, reindex, condense,
// backups, restore, agents, events, status, settings, import), each taking
// a request that validates itself and returning one result type with one
// set of JSON names. The CLI, the HTTP API (internal/web) and MCP
// (internal/mcpserver) only translate their transport to a request and the
// result back.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/minilm"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/openaiembed"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres"
	"github.com/hivemem/hivemem/internal/store/sqlite"
	"github.com/hivemem/hivemem/internal/summarize"
	"github.com/hivemem/hivemem/internal/writelock"
)

// Options says how to open the app.
type Options struct {
	Home   string // --home; "" uses HIVEMEM_HOME or the default
	Logger *slog.Logger
	// Create initialises the home when it does not exist yet; otherwise a
	// missing home is an error that says to run `hivemem init`.
	Create bool
	// LongRunning marks a server process (run, mcp): it keeps a warm
	// in-memory BM25 index, which one-shot commands would only pay to build.
	LongRunning bool
	// NoQueryCache embeds every query afresh (search.query_cache ignored),
	// so that a benchmark asking the same question in several modes times
	// the model in each.
	NoQueryCache bool
	// Command names this process to other writers that wait for the
	// palace write lock ("hivemem mine"); "" says "hivemem".
	Command string
	// LockWaiting is told when a write waits for the palace write lock
	// another process holds (nil: silently).
	LockWaiting func(LockHolder)
	// Extractive makes the reflector condense with the built-in
	// extractive summariser over the palace's embedder, whatever the
	// settings say (benchmarks).
	Extractive bool
	// ReflectorMinesNot leaves the mine after a condensation to the caller
	// (a benchmark that mines everything afterwards).
	ReflectorMinesNot bool
	// IndexLater is for a command that writes markdown (remember, pin):
	// Open resolves the home and loads its config, and the index, the
	// embedder and the palace are opened by the first Remember or Pin,
	// after its write. An index that cannot be opened (a full disk, a
	// damaged index) is then the write's mine error, so that it never
	// stops a note from being saved. Only Remember and Pin may be called
	// on such an App.
	IndexLater bool
	// MineHook, when set, runs every mine of the app (the manager's, the
	// reflector's after a swap, the app's own): it is given the mine's
	// context and path and mine, the palace's mine of that path, which it
	// calls or fails in place of. Tests inject failures and delays.
	MineHook MineHook
}

// MineHook runs one mine of path: it calls mine, or fails in its place.
type MineHook func(ctx context.Context, path string, mine func(context.Context) (MineResult, error)) (MineResult, error)

// App is an open hivemem home.
type App struct {
	Home     home.Home
	Config   config.Config
	Store    store.Store
	Palace   *palace.Palace
	Events   *eventlog.Log
	Log      *slog.Logger
	Embedder EmbedderInfo
	// Lock is the palace write lock: every write to the index in this
	// process takes it (AcquireLock, LockedMiner), so that one process at a
	// time writes.
	Lock *writelock.Lock
	// Reflector condenses and restores, for every front end of this
	// process: condensations of one agent are serialised in process, and
	// the mine that follows a swap takes the palace write lock.
	Reflector *reflector.Reflector

	lockWaiting func(writelock.Holder)
	later       *lazyIndex // the index of an IndexLater app
	condensed   CondensedIndex
	settings    liveSettings
	mineHook    MineHook
	skipped     skipLog
	// noQueryCache is Options.NoQueryCache, for every palace the app builds.
	noQueryCache bool
}

// EmbedderInfo describes the embedder in use, for status output.
type EmbedderInfo struct {
	Provider string `json:"provider"` // minilm, openai, none
	Model    string `json:"model,omitempty"`
	Dim      int    `json:"dim,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	ModelDir string `json:"model_dir,omitempty"`
	Note     string `json:"note,omitempty"` // why there is none, and how to get one
}

// Open resolves the home, loads config.toml and opens the palace.
func Open(ctx context.Context, opts Options) (*App, error) {
	h, cfg, err := OpenHome(opts)
	if err != nil {
		return nil, err
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	a := &App{Home: h, Config: cfg, Events: openEvents(h), Log: lg, lockWaiting: holderFunc(opts.LockWaiting), mineHook: opts.MineHook}
	command := "hivemem"
	if opts.Command != "" {
		command += " " + opts.Command
	}
	a.Lock = writelock.New(h.PalaceDir(), command)
	a.settings.set(cfg)
	if opts.IndexLater {
		a.later = &lazyIndex{opts: opts}
		a.finishPendingPurges(ctx)
		return a, nil
	}
	if err := a.openIndex(ctx, opts); err != nil {
		return nil, err
	}
	a.finishPendingPurges(ctx)
	return a, nil
}

// lazyIndex is the index of an app opened with IndexLater: opened on first
// use, once.
type lazyIndex struct {
	opts Options
	once sync.Once
	err  error
}

// index opens the index of an app opened with IndexLater, on first use;
// the error says why there is none.
func (a *App) index(ctx context.Context) error {
	if a.later == nil {
		return nil
	}
	a.later.once.Do(func() { a.later.err = a.openIndex(ctx, a.later.opts) })
	return a.later.err
}

// openIndex opens the index backend, the embedder and the palace over
// them, and the reflector.
func (a *App) openIndex(ctx context.Context, opts Options) (err error) {
	h, cfg, lg := a.Home, a.Config, a.Log
	defer func() {
		if err != nil && IndexDamaged(err) {
			err = fmt.Errorf("%w (the index is damaged; `hivemem reindex` sets it aside and rebuilds it from the markdown)", err)
		}
	}()
	st, err := OpenStore(ctx, h, cfg)
	if err != nil {
		return err
	}
	if w, ok := st.(interface{ WarmLexical() }); ok && opts.LongRunning {
		w.WarmLexical()
	}
	emb, info, err := NewEmbedder(ctx, cfg)
	if err != nil {
		st.Close()
		return err
	}
	if emb == nil && info.Note != "" {
		lg.Info("search is lexical-only", "why", info.Note)
	}
	a.noQueryCache = opts.NoQueryCache
	p, err := a.newPalace(ctx, st, emb)
	if err != nil {
		st.Close()
		return err
	}
	a.Store, a.Palace, a.Embedder = st, p, info
	var miner palace.Miner
	if !opts.ReflectorMinesNot {
		miner = swapMiner{a}
	}
	deps := reflector.Deps{Home: h, Settings: a.Settings, Events: a.Events, Miner: miner, Logger: lg, Embedder: p.Embedder()}
	if opts.Extractive {
		deps.Summarizer = summarize.Extractive{Embedder: p.Embedder()}
	}
	a.Reflector = newReflector(deps)
	return nil
}

// newPalace is the one place the app's palace is built: over the store st
// and the embedder emb (nil: lexical-only), with the settings, the query
// cache, this home's origin and the gate of config.toml.
func (a *App) newPalace(ctx context.Context, st store.Store, emb palace.Embedder) (*palace.Palace, error) {
	h, cfg, lg := a.Home, a.Config, a.Log
	// Mined files carry this home's id, so that in a shared palace each
	// machine removes only its own. A home that cannot keep an id (a
	// read-only one) still searches; it mines as "no home", which claims
	// nothing another machine mined.
	origin, err := h.ID()
	if err != nil {
		lg.Warn("no home id: files mined here are not attributed to this home", "err", err)
	}
	return palace.New(ctx, h, st, emb, palace.Options{
		MaxFileBytes: cfg.Palace.MaxFileBytes, RRFK: cfg.Search.RRFK,
		CandidatePool: cfg.Search.CandidatePool, VectorWeight: cfg.Search.VectorWeight, Fusion: cfg.Search.Fusion,
		QueryCache: queryCache(cfg.Search.QueryCache, a.noQueryCache), Origin: origin, Logger: lg,
		Gate: a.gateFile,
	})
}

// useLexicalOnly replaces the palace by one without an embedder, built as
// Open builds it, because the local model failed to load (cause): the
// manager goes on lexical-only rather than failing every mine. It is
// called before the app's palace is in use (LoadEmbedder).
func (a *App) useLexicalOnly(ctx context.Context, cause error) error {
	p, err := a.newPalace(ctx, a.Store, nil)
	if err != nil {
		return fmt.Errorf("lexical-only palace: %w", err)
	}
	a.Palace = p
	a.Embedder = EmbedderInfo{Provider: "none", ModelDir: a.Embedder.ModelDir,
		Note: "the MiniLM model failed to load (" + cause.Error() + "): run `hivemem model fetch`"}
	return nil
}

// newReflector is the one place a reflector is built.
func newReflector(d reflector.Deps) *reflector.Reflector { return reflector.New(d) }

// ScratchReflector condenses in a scratch home h that is not a's (a
// benchmark's copy), with settings cfg and the extractive summariser over
// a's embedder: it logs no events and mines nothing.
func (a *App) ScratchReflector(h home.Home, cfg config.Config) *reflector.Reflector {
	return newReflector(reflector.Deps{
		Home: h, Logger: a.Log, Summarizer: summarize.Extractive{Embedder: a.Palace.Embedder()},
		Settings: func() config.Config { return cfg }, Embedder: a.Palace.Embedder(),
	})
}

// AcquireLock takes the palace write lock, waiting (until ctx ends) while
// another process holds it.
func (a *App) AcquireLock(ctx context.Context) (release func(), err error) {
	return a.Lock.Acquire(ctx, a.lockWaiting)
}

// OpenHome is the first half of Open: it resolves the home (creating it
// when opts.Create) and loads its config, without opening the index. A
// command that writes markdown does so after OpenHome and before Open, so
// that an index that cannot be opened (a full disk) never stops a note
// from being saved.
func OpenHome(opts Options) (home.Home, config.Config, error) {
	h, err := home.Resolve(opts.Home)
	if err != nil {
		return home.Home{}, config.Config{}, err
	}
	if !h.Exists() {
		if !opts.Create {
			return h, config.Config{}, NoHome(h)
		}
		if err := h.Init(); err != nil {
			return h, config.Config{}, err
		}
	}
	cfg, err := config.Load(h.ConfigPath())
	if err != nil {
		return h, config.Config{}, err
	}
	return h, cfg, nil
}

// NoHome is the error of a command run on a home that does not exist: only
// `hivemem init` creates one, so that a mistyped --home or HIVEMEM_HOME is
// not a new, empty home. It wraps ErrNoHome.
func NoHome(h home.Home) error {
	return fmt.Errorf("%w at %s: run `hivemem init` (or set HIVEMEM_HOME / --home)", ErrNoHome, h.Root)
}

// ErrNoHome is what NoHome's errors wrap.
var ErrNoHome = errors.New("no hivemem home")

// IndexDamaged reports whether err (from Open or from using the index)
// says the SQLite index file is damaged; `hivemem reindex` then sets it
// aside and rebuilds it from the markdown.
func IndexDamaged(err error) bool { return sqlite.Damaged(err) }

// SetAsideIndex moves a damaged SQLite index out of the way (kept beside
// it as palace.db.damaged-<time>) so that the next Open starts an empty
// one. Only the SQLite backend keeps its index in the home.
func SetAsideIndex(h home.Home, now time.Time) (string, error) {
	return sqlite.SetAside(filepath.Join(h.PalaceDir(), "palace.db"), now)
}

// Close releases the index.
func (a *App) Close() error {
	if a.Store == nil {
		return nil
	}
	return a.Store.Close()
}

// OpenStore opens the configured index backend.
func OpenStore(ctx context.Context, h home.Home, cfg config.Config) (store.Store, error) {
	switch cfg.Palace.Backend {
	case "sqlite":
		// The index is the home's too: never through a link out of it.
		if err := h.MkdirAll(h.PalaceDir()); err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		db := filepath.Join(h.PalaceDir(), "palace.db")
		if _, err := h.Contain(db); err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		return sqlite.Open(ctx, db)
	case "postgres":
		return postgres.Open(ctx, PostgresOptions(cfg))
	default:
		return nil, fmt.Errorf("open palace: backend %q is not available in this build", cfg.Palace.Backend)
	}
}

// queryCache maps the config's "0 disables" onto the palace's "< 0
// disables" (where 0 means the default).
func queryCache(n int, off bool) int {
	if n == 0 || off {
		return -1
	}
	return n
}

// PostgresOptions are the postgres store's options from the config.
func PostgresOptions(cfg config.Config) postgres.Options {
	p := cfg.Palace
	return postgres.Options{DSN: p.DSN, MaxConns: p.MaxConns, StatementTimeout: p.StatementTimeout.Duration, VectorMode: p.VectorMode, EfSearch: p.HNSWEfSearch}
}

// ModelDir is where the MiniLM model is looked for.
func ModelDir(cfg config.Config) string {
	if cfg.Embedder.ModelDir != "" {
		return cfg.Embedder.ModelDir
	}
	return modelfetch.DefaultDir()
}

// ModelInstalled reports whether the MiniLM files are present in dir.
func ModelInstalled(dir string) bool {
	if dir == "" {
		return false
	}
	for _, f := range []string{"model.fp16.safetensors", "tokenizer.json", "config.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// NewEmbedder builds the configured embedder. MiniLM is loaded lazily, on
// the first text to embed, so commands that never embed pay nothing for it.
// With provider "auto" and no model installed it returns nil (lexical-only)
// and a note saying how to fetch the model.
func NewEmbedder(ctx context.Context, cfg config.Config) (palace.Embedder, EmbedderInfo, error) {
	ec := cfg.Embedder
	switch ec.Provider {
	case "none":
		return nil, EmbedderInfo{Provider: "none", Note: "disabled by embedder.provider = none"}, nil
	case "openai":
		c, err := openaiembed.New(openaiembed.Config{BaseURL: ec.BaseURL, Model: ec.Model, APIKey: ec.APIKey, Timeout: ec.Timeout.Duration})
		if err != nil {
			return nil, EmbedderInfo{}, fmt.Errorf("embedder: %w", err)
		}
		if c.Dim() == 0 {
			// Learn the dimension now: the index records it with the model id.
			if _, err := c.Embed(ctx, []string{"dimension probe"}); err != nil {
				return nil, EmbedderInfo{}, fmt.Errorf("embedder: %w", err)
			}
		}
		return c, EmbedderInfo{Provider: "openai", Model: c.ModelID(), Dim: c.Dim()}, nil
	case "auto", "minilm":
		dir := ModelDir(cfg)
		if !ModelInstalled(dir) {
			note := fmt.Sprintf("MiniLM model not installed in %s: run `hivemem model fetch`", dir)
			if ec.Provider == "minilm" {
				return nil, EmbedderInfo{}, errors.New("embedder: " + note)
			}
			return nil, EmbedderInfo{Provider: "none", ModelDir: dir, Note: note}, nil
		}
		l := &lazyMiniLM{dir: dir}
		return l, EmbedderInfo{Provider: "minilm", Model: l.ModelID(), Dim: l.Dim(), Kernel: kernel.Impl(), ModelDir: dir}, nil
	}
	return nil, EmbedderInfo{}, fmt.Errorf("embedder: unknown provider %q", ec.Provider)
}

// miniLMDim is all-MiniLM-L6-v2's vector size, known before loading.
const miniLMDim = 384

// lazyMiniLM loads the model on first use.
type lazyMiniLM struct {
	dir  string
	once sync.Once
	m    *minilm.Model
	err  error
}

func (l *lazyMiniLM) load() (*minilm.Model, error) {
	l.once.Do(func() {
		l.m, l.err = minilm.Load(l.dir)
		if l.err == nil && l.m.Dim() != miniLMDim {
			l.m, l.err = nil, fmt.Errorf("model in %s has dimension %d, want %d", l.dir, l.m.Dim(), miniLMDim)
		}
	})
	return l.m, l.err
}

func (l *lazyMiniLM) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := l.load()
	if err != nil {
		return nil, err
	}
	return m.Embed(ctx, texts)
}

// CPUBound says MiniLM runs on this machine's cores, so the palace orders
// its calls, mining first (see palace.CPUBound).
func (l *lazyMiniLM) CPUBound() bool { return true }

// Dim and ModelID are fixed for the one model hivemem ships.
func (l *lazyMiniLM) Dim() int        { return miniLMDim }
func (l *lazyMiniLM) ModelID() string { return minilm.ID }
