// Package apptest holds the helpers tests share for opened apps: a home
// with memory files mined, a home whose model does not load, and a
// manager served until the test ends.
package apptest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/wiring"
)

// BrokenModelApp opens a new home whose MiniLM embedder points at a
// BrokenModelDir: the embedder loads lazily, so the home opens and the
// first embedding fails. It is closed when the test ends.
func BrokenModelApp(t testing.TB) *app.App {
	t.Helper()
	return ConfiguredApp(t, fmt.Sprintf("[embedder]\nprovider = \"minilm\"\nmodel_dir = %q\n", hometest.BrokenModelDir(t)))
}

// ConfiguredApp opens a new home in a temp dir whose config.toml is cfg.
// It is closed when the test ends.
func ConfiguredApp(t testing.TB, cfg string) *app.App {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := wiring.Open(context.Background(), wiring.Options{Home: root, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// MinedApp opens a new home in a temp dir with the given memory files
// (agent → content) written and mined; lexical configures no embedder, so
// results do not depend on whether the model is installed. It is closed
// when the test ends.
func MinedApp(t testing.TB, files map[string]string, lexical bool) *app.App {
	t.Helper()
	a := openMined(t, files, lexical)
	t.Cleanup(func() { a.Close() })
	return a
}

// MinedHome is MinedApp closed again at once, so that another process can
// open the home: it returns the home's root.
func MinedHome(t testing.TB, files map[string]string, lexical bool) string {
	t.Helper()
	a := openMined(t, files, lexical)
	defer a.Close()
	return a.Home().Root
}

func openMined(t testing.TB, files map[string]string, lexical bool) *app.App {
	t.Helper()
	cfg := ""
	if lexical {
		cfg = "[embedder]\nprovider = \"none\"\n"
	}
	h := hometest.NewWith(t, cfg, files)
	ctx := context.Background()
	a, err := wiring.Open(ctx, wiring.Options{Home: h.Root, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Mine(ctx, app.MineRequest{Path: a.Home().AgentsDir()}); err != nil {
		a.Close()
		t.Fatal(err)
	}
	return a
}

// MemoryPath returns the path of agent's memory file in a's home, failing
// the test on a bad agent id.
func MemoryPath(t testing.TB, a *app.App, agent string) string {
	t.Helper()
	p, err := a.Home().MemoryPath(agent)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ReadMemory returns the content of agent's memory file in a's home.
func ReadMemory(t testing.TB, a *app.App, agent string) string {
	t.Helper()
	b, err := os.ReadFile(MemoryPath(t, a, agent))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Index opens a second handle on the index of a's home (the backend a's
// settings name), for a test to inspect what the app wrote there; it is
// closed when the test ends.
func Index(t testing.TB, a *app.App) store.Store {
	t.Helper()
	st := openIndex(t, a)
	t.Cleanup(func() { st.Close() })
	return st
}

func openIndex(t testing.TB, a *app.App) store.Store {
	t.Helper()
	st, err := wiring.OpenStore(context.Background(), a.Home(), a.Settings())
	if err != nil {
		t.Fatalf("open the index of %s: %v", a.Home().Root, err)
	}
	return st
}

// IndexPalace is a lexical-only palace over a second handle on the index
// of a's home (as Index): a test searches the app's index with it as it
// is, at any depth. It is opened once per test and app, and closed when
// the test ends, so that a test may poll with it.
func IndexPalace(t testing.TB, a *app.App) *palace.Palace {
	t.Helper()
	k := indexKey{t, a}
	if p, ok := indexPalaces.Load(k); ok {
		return p.(*palace.Palace)
	}
	p := hometest.PalaceOver(t, a.Home(), openIndex(t, a), nil, palace.Options{}) // closed by PalaceOver
	indexPalaces.Store(k, p)
	t.Cleanup(func() { indexPalaces.Delete(k) })
	return p
}

// indexPalaces are the palaces IndexPalace opened, by test and app.
var indexPalaces sync.Map

type indexKey struct {
	t testing.TB
	a *app.App
}
