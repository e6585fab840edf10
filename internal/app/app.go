// Package app is hivemem's application layer. New, called once by the
// composition root of a process (internal/wiring, for a CLI command,
// `hivemem run`, `hivemem mcp`), builds over the home, its config and the
// index the root chose (an Index: the store and the embedder, taken as
// interfaces) everything a front end needs — palace, the one reflector,
// the one palace write lock and the event log — and the App it returns
// offers the product's
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
	"sync"
	"time"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/writelock"
)

// Options says how to build the app over a home the composition root
// (internal/wiring) resolved, with the config it loaded once.
type Options struct {
	Home   home.Home
	Config config.Config
	Logger *slog.Logger
	// Index opens the store and the embedder: the composition root
	// chooses them, so that app takes them as interfaces.
	Index Index
	// Command names this process to other writers that wait for the
	// palace write lock ("hivemem mine"); "" says "hivemem".
	Command string
	// LockWaiting is told when a write waits for the palace write lock
	// another process holds (nil: silently).
	LockWaiting func(LockHolder)
	// IndexLater is for a command that writes markdown (remember, pin):
	// New keeps the home and its config, and the index, the embedder and
	// the palace are opened by the first Remember or Pin, after its write.
	// An index that cannot be opened (a full disk, a damaged index) is then
	// the write's mine error, so that it never stops a note from being
	// saved. Only Remember and Pin may be called on such an App.
	IndexLater bool
	// MineHook, when set, runs every mine of the app (the manager's, the
	// reflector's after a swap, the app's own): it is given the mine's
	// context and path and mine, the palace's mine of that path, which it
	// calls or fails in place of. Tests inject failures and delays.
	MineHook MineHook
}

// MineHook runs one mine of path: it calls mine, or fails in its place.
type MineHook func(ctx context.Context, path string, mine func(context.Context) (MineResult, error)) (MineResult, error)

// Index is the home's index as the composition root opens it: the
// configured backend and embedder.
type Index interface {
	// Open opens the store and the embedder (nil: lexical-only; info.Note
	// says why).
	Open(ctx context.Context) (store.Store, palace.Embedder, EmbedderInfo, error)
	// Damaged reports whether err (from Open or from using the store) says
	// the index is damaged: `hivemem reindex` then sets it aside and
	// rebuilds it from the markdown.
	Damaged(err error) bool
	// SetAside moves a damaged index out of the way, kept beside it, so
	// that the next Open starts an empty one; it returns where it went.
	SetAside(now time.Time) (string, error)
}

// App is an open hivemem home.
//
// Its parts are its own: a front end calls its operations and reads the
// few plain values it needs through Home, Logger and EmbedderInfo.
type App struct {
	home     home.Home
	config   config.Config // as loaded at open; Settings are the live ones
	store    store.Store
	palace   *palace.Palace
	events   *eventlog.Log
	log      *slog.Logger
	embedder EmbedderInfo
	// lock is the palace write lock: every write to the index in this
	// process takes it (AcquireLock, LockedMiner), so that one process at a
	// time writes.
	lock *writelock.Lock
	// reflector condenses and restores, for every front end of this
	// process: condensations of one agent are serialised in process, and
	// the mine that follows a swap takes the palace write lock.
	reflector *reflector.Reflector

	lockWaiting func(writelock.Holder)
	later       *lazyIndex // the index of an IndexLater app
	condensed   CondensedIndex
	settings    liveSettings
	mineHook    MineHook
	skipped     skipLog
	idx         Index
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

// New builds the app over opts.Home and opts.Config and opens its index
// through opts.Index (at once, or on first use with IndexLater).
func New(ctx context.Context, opts Options) (*App, error) {
	if opts.Index == nil {
		return nil, errors.New("app: no index given")
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	h := opts.Home
	a := &App{home: h, config: opts.Config, events: openEvents(h), log: lg, lockWaiting: holderFunc(opts.LockWaiting), mineHook: opts.MineHook, idx: opts.Index}
	command := "hivemem"
	if opts.Command != "" {
		command += " " + opts.Command
	}
	a.lock = writelock.New(h.PalaceDir(), command)
	a.settings.set(opts.Config)
	if opts.IndexLater {
		a.later = &lazyIndex{}
		a.finishPendingPurges(ctx)
		return a, nil
	}
	if err := a.openIndex(ctx); err != nil {
		return nil, err
	}
	a.finishPendingPurges(ctx)
	return a, nil
}

// lazyIndex is the index of an app opened with IndexLater: opened on first
// use, once.
type lazyIndex struct {
	once sync.Once
	err  error
}

// index opens the index of an app opened with IndexLater, on first use;
// the error says why there is none.
func (a *App) index(ctx context.Context) error {
	if a.later == nil {
		return nil
	}
	a.later.once.Do(func() { a.later.err = a.openIndex(ctx) })
	return a.later.err
}

// openIndex opens the index backend, the embedder and the palace over
// them, and the reflector.
func (a *App) openIndex(ctx context.Context) (err error) {
	defer func() {
		if err != nil && a.indexDamaged(err) {
			err = fmt.Errorf("%w (the index is damaged; `hivemem reindex` sets it aside and rebuilds it from the markdown)", err)
		}
	}()
	st, emb, info, err := a.idx.Open(ctx)
	if err != nil {
		return err
	}
	if emb == nil && info.Note != "" {
		a.log.Info("search is lexical-only", "why", info.Note)
	}
	p, err := a.newPalace(ctx, st, emb)
	if err != nil {
		st.Close()
		return err
	}
	a.store, a.palace, a.embedder = st, p, info
	a.tellPalaceBuilt(p)
	a.reflector = newReflector(reflector.Deps{Home: a.home, Settings: a.Settings, Events: a.events,
		Miner: swapMiner{a}, Logger: a.log, Embedder: p.Embedder()})
	return nil
}

// newPalace is the one place the app's palace is built: over the store st
// and the embedder emb (nil: lexical-only), with the settings, the query
// cache, this home's origin and the gate of config.toml.
func (a *App) newPalace(ctx context.Context, st store.Store, emb palace.Embedder) (*palace.Palace, error) {
	h, cfg, lg := a.home, a.config, a.log
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
		QueryCache: queryCache(cfg.Search.QueryCache), Origin: origin, Logger: lg,
		Gate: a.gateFile,
	})
}

// useLexicalOnly replaces the palace by one without an embedder, built as
// Open builds it, because the local model failed to load (cause): the
// manager goes on lexical-only rather than failing every mine. It is
// called before the app's palace is in use (LoadEmbedder).
func (a *App) useLexicalOnly(ctx context.Context, cause error) error {
	p, err := a.newPalace(ctx, a.store, nil)
	if err != nil {
		return fmt.Errorf("lexical-only palace: %w", err)
	}
	a.palace = p
	a.tellPalaceBuilt(p)
	a.embedder = EmbedderInfo{Provider: "none", ModelDir: a.embedder.ModelDir,
		Note: "the MiniLM model failed to load (" + cause.Error() + "): run `hivemem model fetch`"}
	return nil
}

// newReflector is the one place the app builds a reflector (a benchmark
// builds its scratch one: locomo.ScratchCondenser).
func newReflector(d reflector.Deps) *reflector.Reflector { return reflector.New(d) }

// AcquireLock takes the palace write lock, waiting (until ctx ends) while
// another process holds it.
func (a *App) AcquireLock(ctx context.Context) (release func(), err error) {
	return a.lock.Acquire(ctx, a.lockWaiting)
}

// NoHome is the error of a command run on a home that does not exist: only
// `hivemem init` creates one, so that a mistyped --home or HIVEMEM_HOME is
// not a new, empty home. It wraps ErrNoHome.
func NoHome(h home.Home) error {
	return fmt.Errorf("%w at %s: run `hivemem init` (or set HIVEMEM_HOME / --home)", ErrNoHome, h.Root)
}

// ErrNoHome is what NoHome's errors wrap.
var ErrNoHome = errors.New("no hivemem home")

// indexDamaged reports whether err (from opening or using the index)
// says the index is damaged; `hivemem reindex` then sets it aside and
// rebuilds it from the markdown.
func (a *App) indexDamaged(err error) bool { return a.idx.Damaged(err) }

// Close releases the index.
func (a *App) Close() error {
	if a.store == nil {
		return nil
	}
	return a.store.Close()
}

// queryCache maps the config's "0 disables" onto the palace's "< 0
// disables" (where 0 means the default).
func queryCache(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
