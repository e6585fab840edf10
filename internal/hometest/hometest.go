// Package hometest holds the helpers tests share for whole homes: a home
// with memory files mined, a home whose model does not load, the index of
// a palace as a comparable dump and a fresh mine of the same files to
// compare it with, and what an agent's archive holds.
package hometest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
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

// FreshPalace mines the hive of h into a palace over a brand-new SQLite
// index, with embedder emb (nil: lexical only): the reference an
// incrementally kept index must equal. The caller closes the store.
func FreshPalace(t testing.TB, h home.Home, emb palace.Embedder, popts palace.Options) (*palace.Palace, store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := palace.New(ctx, h, st, emb, popts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	if _, err := p.Mine(ctx, h.HiveDir(), palace.MineOptions{}); err != nil {
		st.Close()
		t.Fatalf("fresh mine: %v", err)
	}
	return p, st
}

// ArchivedHeadings counts each section heading over the archive files
// (*.md, not hidden) in dir, failing on one that does not parse.
func ArchivedHeadings(t testing.TB, dir string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		f, err := memfile.Parse(data)
		if err != nil {
			t.Fatalf("archive %s does not parse: %v", e.Name(), err)
		}
		for _, s := range f.Recent() {
			n[s.Heading]++
		}
	}
	return n
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
	return a.Home.Root
}

func openMined(t testing.TB, files map[string]string, lexical bool) *app.App {
	t.Helper()
	root := t.TempDir()
	if lexical {
		if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte("[embedder]\nprovider = \"none\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: root, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	for agent, content := range files {
		path, err := a.Home.MemoryPath(agent)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(path), 0o755)
		}
		if err == nil {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
	}
	if _, err := a.Palace.Mine(ctx, a.Home.AgentsDir(), palace.MineOptions{}); err != nil {
		a.Close()
		t.Fatal(err)
	}
	return a
}
