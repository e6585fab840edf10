// Package hometest holds the helpers tests share for whole homes: a home
// whose model does not load, and the index of a palace as a comparable
// dump, against a fresh mine of the same files.
package hometest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// BrokenModelDir is a MiniLM model directory whose files are not a model
// (what a truncated download looks like).
func BrokenModelDir(t testing.TB) string {
	t.Helper()
	model := t.TempDir()
	for _, f := range []string{"model.fp16.safetensors", "tokenizer.json", "config.json"} {
		if err := os.WriteFile(filepath.Join(model, f), []byte("not a model"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return model
}

// BrokenModelApp opens a new home whose MiniLM embedder points at a
// BrokenModelDir: the embedder loads lazily, so the home opens and the
// first embedding fails. It is closed when the test ends.
func BrokenModelApp(t testing.TB) *app.App {
	t.Helper()
	root := t.TempDir()
	cfg := fmt.Sprintf("[embedder]\nprovider = \"minilm\"\nmodel_dir = %q\n", BrokenModelDir(t))
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Options{Home: root, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// Drawers is an index as drawer id → every field a search shows of it.
func Drawers(ctx context.Context, st store.Store) (map[string]string, error) {
	ds, err := st.List(ctx, store.Filter{}, 0)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ds))
	for _, d := range ds {
		out[d.ID] = fmt.Sprintf("%s:%d-%d [%s/%s/%s] date=%q heading=%q text=%q", d.Source, d.LineStart, d.LineEnd,
			d.Wing, d.Room, d.Agent, d.Date, d.Heading, d.Text)
	}
	return out, nil
}

// FreshIndex mines dir of h into a brand-new SQLite index, the reference
// an incrementally kept index must equal. The caller closes it.
func FreshIndex(t testing.TB, h home.Home, dir string, mopts palace.MineOptions, popts palace.Options) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := palace.New(ctx, h, st, nil, popts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	if _, err := p.Mine(ctx, dir, mopts); err != nil {
		st.Close()
		t.Fatalf("fresh mine: %v", err)
	}
	return st
}
