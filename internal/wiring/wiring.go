// Package wiring is hivemem's composition root: it resolves the home,
// loads its config once, opens the configured index backend (SQLite or
// PostgreSQL) and chooses the embedder (MiniLM, an OpenAI-compatible
// endpoint or none), and hands them to app, which takes them as
// interfaces. It is the only package that imports concrete stores and
// embedders; front ends import it and app.
package wiring

import (
	"context"
	"log/slog"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// Options says how to open a home.
type Options struct {
	Home   string // --home; "" uses HIVEMEM_HOME or the default
	Logger *slog.Logger
	// Create initialises the home when it does not exist yet; otherwise a
	// missing home is an error that says to run `hivemem init`.
	Create bool
	// LongRunning marks a server process (run, mcp): it keeps a warm
	// in-memory BM25 index, which one-shot commands would only pay to build.
	LongRunning bool
	// Command names this process to other writers that wait for the
	// palace write lock ("hivemem mine"); "" says "hivemem".
	Command string
	// LockWaiting is told when a write waits for the palace write lock
	// another process holds (nil: silently).
	LockWaiting func(app.LockHolder)
	// IndexLater opens the index on the first Remember or Pin, after its
	// write (see app.Options.IndexLater).
	IndexLater bool
	// MineHook runs around every mine of the app (see
	// app.Options.MineHook): tests inject failures and delays.
	MineHook app.MineHook
}

// Open resolves the home, loads config.toml and opens the app over the
// configured index backend and embedder.
func Open(ctx context.Context, opts Options) (*app.App, error) {
	h, cfg, err := LoadHome(opts.Home, opts.Create)
	if err != nil {
		return nil, err
	}
	return OpenLoaded(ctx, h, cfg, opts)
}

// OpenLoaded is Open over a home already resolved and its config already
// loaded (LoadHome), so that a process loads config.toml once; opts.Home
// and opts.Create are not used.
func OpenLoaded(ctx context.Context, h home.Home, cfg config.Config, opts Options) (*app.App, error) {
	return app.New(ctx, app.Options{
		Home: h, Config: cfg, Logger: opts.Logger, Command: opts.Command, LockWaiting: opts.LockWaiting,
		IndexLater: opts.IndexLater, MineHook: opts.MineHook, Index: index{h: h, cfg: cfg, warm: opts.LongRunning},
	})
}

// LoadHome resolves the home dir ("" uses HIVEMEM_HOME or the default),
// creating it when create, and loads its config, without opening the
// index. A home that does not exist, without create, is app.NoHome.
func LoadHome(dir string, create bool) (home.Home, config.Config, error) {
	h, err := home.Resolve(dir)
	if err != nil {
		return home.Home{}, config.Config{}, err
	}
	if !h.Exists() {
		if !create {
			return h, config.Config{}, app.NoHome(h)
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

// index is app.Index over the backend and the embedder cfg configures.
type index struct {
	h    home.Home
	cfg  config.Config
	warm bool // keep a warm in-memory BM25 index (a server process)
}

func (x index) Open(ctx context.Context) (store.Store, palace.Embedder, app.EmbedderInfo, error) {
	st, err := OpenStore(ctx, x.h, x.cfg)
	if err != nil {
		return nil, nil, app.EmbedderInfo{}, err
	}
	if w, ok := st.(interface{ WarmLexical() }); ok && x.warm {
		w.WarmLexical()
	}
	emb, info, err := NewEmbedder(ctx, x.cfg)
	if err != nil {
		st.Close()
		return nil, nil, app.EmbedderInfo{}, err
	}
	return st, emb, info, nil
}

func (x index) Damaged(err error) bool { return IndexDamaged(err) }

func (x index) SetAside(now time.Time) (string, error) { return SetAsideIndex(x.h, now) }
