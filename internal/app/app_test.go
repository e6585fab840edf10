package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/minilm"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// requireModel skips without the MiniLM model, except in CI, which
// installs it (make test runs `hivemem model fetch` first).
func requireModel(t testing.TB) {
	t.Helper()
	if modelInstalled(modelfetch.DefaultDir()) {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("MiniLM model not installed in %s (CI must run `hivemem model fetch`)", modelfetch.DefaultDir())
	}
	t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", modelfetch.DefaultDir())
}

// modelInstalled reports whether the MiniLM model's files are in dir.
func modelInstalled(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "model.fp16.safetensors"))
	return err == nil
}

// openAt opens (creating it) the home at root with the embedder the
// environment configures; it is closed when the test ends.
func openAt(t testing.TB, root string) *App {
	t.Helper()
	a, err := openTest(context.Background(), root, true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// openTest builds an app over the home at root (created when create) as
// internal/wiring does, which tests inside app cannot import: from
// config.toml and the environment, the SQLite or PostgreSQL backend and
// no embedder or MiniLM (lexical-only when the model is not installed).
func openTest(ctx context.Context, root string, create, later bool) (*App, error) {
	h, err := home.Resolve(root)
	if err != nil {
		return nil, err
	}
	if create {
		if err := h.Init(); err != nil {
			return nil, err
		}
	}
	cfg, err := config.Load(h.ConfigPath())
	if err != nil {
		return nil, err
	}
	return New(ctx, Options{Home: h, Config: cfg, Index: testIndex{h: h, cfg: cfg}, IndexLater: later})
}

// testIndex is Index over SQLite and the embedder cfg configures.
type testIndex struct {
	h   home.Home
	cfg config.Config
}

func (x testIndex) Open(ctx context.Context) (store.Store, palace.Embedder, EmbedderInfo, error) {
	st, err := x.openStore(ctx)
	if err != nil {
		return nil, nil, EmbedderInfo{}, err
	}
	dir := x.cfg.Embedder.ModelDir
	if dir == "" {
		dir = modelfetch.DefaultDir()
	}
	if x.cfg.Embedder.Provider == "none" || !modelInstalled(dir) {
		return st, nil, EmbedderInfo{Provider: "none", Note: "no model in the test"}, nil
	}
	m, err := minilm.Load(dir)
	if err != nil {
		st.Close()
		return nil, nil, EmbedderInfo{}, err
	}
	return st, m, EmbedderInfo{Provider: "minilm", Model: m.ModelID(), Dim: m.Dim(), ModelDir: dir}, nil
}

// openStore opens the backend cfg names: SQLite in the home, or
// PostgreSQL at palace.dsn.
func (x testIndex) openStore(ctx context.Context) (store.Store, error) {
	if x.cfg.Palace.Backend == "postgres" {
		return postgres.Open(ctx, postgres.Options{DSN: x.cfg.Palace.DSN})
	}
	if err := x.h.MkdirAll(x.h.PalaceDir()); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, filepath.Join(x.h.PalaceDir(), "palace.db"))
}

func (x testIndex) Damaged(err error) bool { return sqlite.Damaged(err) }

func (x testIndex) SetAside(now time.Time) (string, error) {
	return sqlite.SetAside(filepath.Join(x.h.PalaceDir(), "palace.db"), now)
}

// TestParaphraseFindsSection is the end-to-end check that mining and
// searching use real MiniLM vectors: a query sharing no word with its
// target section finds it, where BM25 alone cannot.
func TestParaphraseFindsSection(t *testing.T) {
	requireModel(t)
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	ctx := context.Background()
	a := openAt(t, t.TempDir())
	if a.embedder.Provider != "minilm" || a.palace.Mode() != palace.ModeHybrid {
		t.Fatalf("embedder %+v, mode %s: want MiniLM and hybrid search", a.embedder, a.palace.Mode())
	}
	memory := "# Memory — Pat (pat)\n\n" +
		"## 2026-11-01 — garden\nPlanted tomatoes and basil in the raised beds behind the house.\n\n" +
		"## 2026-11-02 — car\nThe mechanic replaced the brake pads and rotated the tyres.\n\n" +
		"## 2026-11-03 — money\nPaid the electricity bill and moved savings into an index fund.\n"
	hometest.WriteMemory(t, a.home, "pat", memory)
	rep, err := a.palace.Mine(ctx, a.home.AgentsDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embedded != 3 {
		t.Fatalf("mine embedded %d drawers, want 3", rep.Embedded)
	}
	const q = "automobile repair shop visit"
	lex, err := a.palace.Search(ctx, palace.Query{Text: q, Mode: palace.ModeLexical})
	if err != nil {
		t.Fatal(err)
	}
	if len(lex) != 0 {
		t.Fatalf("the query shares a word with the hive after all: lexical hits %+v", lex)
	}
	for _, mode := range []string{palace.ModeVector, palace.ModeHybrid} {
		hits, err := a.palace.Search(ctx, palace.Query{Text: q, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Heading != "2026-11-02 — car" {
			t.Fatalf("%s search for %q: top hit %+v, want the car section", mode, q, hits)
		}
	}
}
